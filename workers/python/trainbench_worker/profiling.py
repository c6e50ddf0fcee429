"""The operator profile (protocol ``profile``): a few steps after
the timed part under the framework's own profiler, its trace read back in the
Chrome trace-event format both torch.profiler and jax.profiler write, and
reduced to self time per operator and per category.

Self time: on one track (a host thread, or a device stream) complete events
nest; an event's self time is its duration less its direct children's. On a
device stream kernels do not nest, so a kernel's self time is its duration.
Idle: the profiled span less the union of the chosen timeline's busy time.
"""

import re

CATEGORIES = ("matmul_conv", "attention", "norm_elementwise", "optimizer", "memory", "communication", "other")
TOP_OPS = 25
# The annotation around the profiled steps: its duration is the span.
SPAN = "trainbench.profiled_steps"

_COMM = (
    "nccl",
    "all_reduce",
    "allreduce",
    "all_gather",
    "allgather",
    "reduce_scatter",
    "reducescatter",
    "all-reduce",
    "all-gather",
    "reduce-scatter",
    "collective-permute",
    "all-to-all",
    "c10d::",
    "gloo",
    "record_param_comms",
)
_ATTENTION = ("flash", "fmha", "attention", "sdpa", "scaled_dot_product", "cudnn$fmha")
_MATMUL = (
    "gemm",
    "matmul",
    "aten::mm",
    "aten::bmm",
    "aten::addmm",
    "aten::baddbmm",
    "aten::linear",
    "cublas",
    "cutlass",
    "xmma",
    "wgmma",
    "dot_general",
    "mkldnn_matmul",
    "onednn",
    "ynn_fusion",
)
_CONV = re.compile(r"conv(olution|olve|[123]d|_fwd|_bwd|_transpose)|cudnn|implicit_gemm")
_MEMORY = (
    "memcpy",
    "memset",
    "aten::copy_",
    "aten::to",
    "aten::_to_copy",
    "aten::clone",
    "aten::contiguous",
    "copy-start",
    "copy-done",
    "dynamic-update-slice",
    "dynamic_update_slice",
)


def category_of_name(name):
    """A category from an operator's or kernel's name alone."""
    n = name.lower()
    if any(k in n for k in _COMM):
        return "communication"
    if any(k in n for k in _ATTENTION):
        return "attention"
    if any(k in n for k in _MATMUL) or _CONV.search(n):
        return "matmul_conv"
    if (
        any(n == k or n.startswith(k + " ") or n.startswith(k + "(") for k in _MEMORY)
        or "memcpy" in n
        or "memset" in n
        or n.startswith("copy")
    ):
        return "memory"
    if (
        n.startswith(("aten::", "void at::", "at::", "triton_", "cpp_fused", "fusion", "loop_", "input_", "wrapped_"))
        or "fusion" in n
        or "elementwise" in n
        or "reduce" in n
        or "norm" in n
        or "softmax" in n
        or "kernel" in n
    ):
        return "norm_elementwise"
    return "other"


def self_times(events):
    """Sets ``self`` (µs) and ``parent`` on each event (dicts with ``track``,
    ``ts``, ``dur``), nesting by time containment within a track."""
    tracks = {}
    for e in events:
        tracks.setdefault(e["track"], []).append(e)
    for evs in tracks.values():
        evs.sort(key=lambda e: (e["ts"], -e["dur"]))
        stack = []
        for e in evs:
            while stack and stack[-1]["ts"] + stack[-1]["dur"] <= e["ts"]:
                stack.pop()
            e["self"] = e["dur"]
            e["parent"] = stack[-1] if stack else None
            if stack:
                stack[-1]["self"] -= e["dur"]
            stack.append(e)
    for e in events:
        e["self"] = max(e["self"], 0.0)


def busy_us(events):
    """The union of the events' intervals, µs."""
    spans = sorted((e["ts"], e["ts"] + e["dur"]) for e in events)
    total, cur_start, cur_end = 0.0, None, None
    for a, b in spans:
        if cur_end is None or a > cur_end:
            if cur_end is not None:
                total += cur_end - cur_start
            cur_start, cur_end = a, b
        else:
            cur_end = max(cur_end, b)
    if cur_end is not None:
        total += cur_end - cur_start
    return total


def reduce(events, span_s, steps, tool, timeline, what):
    """The protocol's ``profile`` event from events that carry ``name``,
    ``category``, ``self`` (µs): top operators and categories by self time."""
    busy = min(busy_us([e for e in events if e.get("parent") is None]) / 1e6, span_s)
    # Operators on several tracks at once (a JAX or TensorFlow process's
    # devices, TensorFlow's executor threads) sum to more self time than the
    # busy time, as does work outside the span on a timeline not cut to it:
    # each figure is scaled by busy / sum, so categories and idle add up to
    # the span as one device's (a PyTorch rank's) do, and a comparison of
    # time per sample is not inflated by the device count.
    summed = sum(e["self"] for e in events) / 1e6
    scale = busy / summed if summed > busy > 0 else 1.0
    if 1 / scale >= 1.005:
        what += f"; the operators' self times summed to {1 / scale:.2f}× the busy time (tracks at once, or work outside the profiled span), so each is scaled to it"
    ops, cats = {}, {c: 0.0 for c in CATEGORIES}
    for e in events:
        key = (e["name"], e["category"])
        o = ops.setdefault(key, [0.0, 0])
        o[0] += e["self"] * scale
        o[1] += 1
        cats[e["category"]] += e["self"] * scale
    top = sorted(ops.items(), key=lambda kv: -kv[1][0])
    listed = [
        {"name": name[:160], "category": cat, "self_s": s / 1e6, "calls": calls}
        for (name, cat), (s, calls) in top[:TOP_OPS]
        if s > 0
    ]
    rest = top[TOP_OPS:]
    return {
        "tool": tool,
        "steps": steps,
        "span_s": span_s,
        "timeline": timeline,
        "what": what,
        "ops": listed,
        "other_ops": {"count": len(rest), "self_s": sum(s for _, (s, _) in rest) / 1e6},
        "categories": [{"category": c, "self_s": cats[c] / 1e6} for c in CATEGORIES],
        "busy_s": busy,
        "idle_s": max(span_s - busy, 0.0),
    }


def complete_events(trace):
    """The complete (``ph == X``) events of a Chrome trace, as dicts with a
    ``track`` (pid, tid) key."""
    raw = trace["traceEvents"] if isinstance(trace, dict) else trace
    out = []
    for e in raw:
        if e.get("ph") != "X" or "dur" not in e:
            continue
        out.append(
            {
                "track": (e.get("pid"), e.get("tid")),
                "ts": float(e["ts"]),
                "dur": float(e["dur"]),
                "name": e.get("name", "?"),
                "cat": e.get("cat"),
                "args": e.get("args") or {},
            }
        )
    return out


# --- PyTorch (torch.profiler) ------------------------------------------------

_DEVICE_CATS = ("kernel", "gpu_memcpy", "gpu_memset")
_HOST_CATS = ("cpu_op", "user_annotation")


def _in_optimizer(e):
    while e is not None:
        if e["name"].startswith(("Optimizer.step#", "trainbench.optimizer")):
            return True
        e = e["parent"]
    return False


def torch_events(trace):
    """(events, timeline): device kernels when the trace has any (each named
    after the host operator that launched it), else host operators."""
    evs = complete_events(trace)
    host = [e for e in evs if e["cat"] in _HOST_CATS + ("cuda_runtime", "cuda_driver")]
    self_times(host)
    span = next((e for e in host if e["name"] == SPAN), None)
    if span is None:
        raise RuntimeError(f"the trace has no {SPAN} annotation")
    span_s = span["dur"] / 1e6
    host = [e for e in host if e is not span and span["ts"] <= e["ts"] <= span["ts"] + span["dur"]]
    for e in host:
        if e["parent"] is span:
            e["parent"] = None
    device = [e for e in evs if e["cat"] in _DEVICE_CATS]
    if device:
        launcher = {}
        for e in host:
            if e["cat"] in ("cuda_runtime", "cuda_driver") and "correlation" in e["args"]:
                launcher[e["args"]["correlation"]] = e["parent"]
        for e in device:
            e["self"], e["parent"] = e["dur"], None
            op = launcher.get(e["args"].get("correlation"))
            by_kernel = category_of_name(e["name"])
            if op is not None and _in_optimizer(op):
                e["category"] = "optimizer"
            elif by_kernel in ("matmul_conv", "attention", "communication", "memory"):
                e["category"] = by_kernel
            else:
                e["category"] = category_of_name(op["name"]) if op is not None else by_kernel
                if e["category"] == "other":
                    e["category"] = "norm_elementwise"
            e["name"] = f"{op['name']}: {e['name']}" if op is not None else e["name"]
        return device, "device", span_s
    ops = [e for e in host if e["cat"] in _HOST_CATS]
    in_optimizer = [_in_optimizer(e) for e in ops]  # before any renaming below
    for e, opt in zip(ops, in_optimizer):
        if opt:
            e["category"] = "optimizer"
        elif e["cat"] == "user_annotation":
            e["category"] = "other"
        else:
            e["category"] = category_of_name(e["name"])
    for e in ops:
        if e["cat"] == "user_annotation":
            # The annotation's own time: Python and framework code between operators.
            e["name"] = f"[python] {e['name']}"
    return ops, "host", span_s


# --- XLA (jax.profiler) --------------------------------------------------------

_INSTR = re.compile(r"^\s*(?:ROOT\s+)?%?([\w.\-]+)\s*=\s*[^=]*?\s([a-z][\w\-]*)\((.*)$")
_CALLS = re.compile(r"calls=%?([\w.\-]+)|to_apply=%?([\w.\-]+)|custom_call_target=\"([^\"]+)\"")
_OP_NAME = re.compile(r'op_name="([^"]*)"')
# A fusion takes the highest-ranked category of what it computes: a copy fused
# with arithmetic is elementwise work, a fusion of copies alone is memory.
_RANK = {"communication": 6, "attention": 5, "matmul_conv": 4, "norm_elementwise": 2, "memory": 1, "other": 0}


def hlo_categories(hlo_text, optimizer_scope="trainbench.optimizer"):
    """{instruction name: (category, op_name)} from an optimised HLO module's
    text: a fusion takes the strongest category of what it calls (a dot or a
    convolution inside makes it matmul_conv); instructions whose metadata puts
    them under the optimizer's named scope are ``optimizer``."""
    comps, cur = {}, None
    instrs = {}
    for line in hlo_text.splitlines():
        s = line.strip()
        if s.endswith("{") and ("(" in s) and "=" not in s.split("(")[0]:
            cur = s.split()[0].lstrip("%")
            if cur == "ENTRY":
                cur = s.split()[1].lstrip("%")
            comps[cur] = []
            continue
        m = _INSTR.match(line)
        if not m or cur is None:
            continue
        name, opcode, rest = m.group(1), m.group(2), m.group(3)
        called = [g for c in _CALLS.finditer(rest) for g in c.groups()[:2] if g]
        target = next((c.group(3) for c in _CALLS.finditer(rest) if c.group(3)), "")
        op_name = (_OP_NAME.search(rest) or [None, ""])[1]
        instrs[name] = (opcode, called, target, op_name)
        comps[cur].append(name)

    memo = {}

    def own(name):
        opcode, _, target, op_name = instrs[name]
        if opcode in ("dot", "convolution"):
            return "matmul_conv"
        if opcode in (
            "all-reduce",
            "all-gather",
            "reduce-scatter",
            "collective-permute",
            "all-to-all",
            "all-reduce-start",
            "all-gather-start",
            "collective-permute-start",
        ):
            return "communication"
        if opcode == "custom-call":
            c = category_of_name(target)
            return c if c != "other" else "norm_elementwise"
        if opcode in ("copy", "copy-start", "copy-done", "dynamic-update-slice"):
            return "memory"
        if "dot_product_attention" in op_name:
            return "attention"
        if opcode in ("parameter", "constant", "get-tuple-element", "tuple", "bitcast", "fusion", "call"):
            return "other"
        return "norm_elementwise"

    def cat(name, depth=0):
        if name in memo:
            return memo[name]
        opcode, called, _, _ = instrs[name]
        best = own(name)
        if depth < 8:
            for comp in called:
                for inner in comps.get(comp, []):
                    c = cat(inner, depth + 1)
                    if _RANK[c] > _RANK[best]:
                        best = c
        memo[name] = best
        return best

    out = {}
    for name, (_, _, _, op_name) in instrs.items():
        c = cat(name)
        if c == "other" and instrs[name][0] in ("fusion", "call"):
            c = "memory"  # a fusion of bitcasts and parameters: it only moves data
        if optimizer_scope in op_name:
            c = "optimizer"
        elif "trainbench.attention" in op_name and c != "communication":
            c = "attention"
        out[name] = (c, op_name)
    return out


def xla_events(trace, categories):
    """(events, timeline) of a jax.profiler trace: the XLA operators (events
    carrying ``hlo_op``) on the device streams when there are any, else on the
    host's XLA threads."""
    all_events = complete_events(trace)
    span = next((e for e in all_events if e["name"] == SPAN), None)
    if span is None:
        raise RuntimeError(f"the trace has no {SPAN} annotation")
    evs = [e for e in all_events if "hlo_op" in e["args"] and not e["name"].startswith("end: ")]
    device_pids = set()
    raw = trace["traceEvents"] if isinstance(trace, dict) else trace
    for e in raw:
        if e.get("ph") == "M" and e.get("name") == "process_name" and "/device:" in str(e.get("args", {}).get("name")):
            device_pids.add(e.get("pid"))
    on_device = [e for e in evs if e["track"][0] in device_pids]
    chosen = on_device or evs
    self_times(chosen)
    for e in chosen:
        op = e["args"]["hlo_op"]
        c, op_name = categories.get(op, (None, ""))
        e["category"] = c if c is not None else category_of_name(e["name"])
        if e["category"] == "other":
            e["category"] = "norm_elementwise"
        short = op_name.rsplit("/", 2)[-2:] if op_name else []
        e["name"] = f"{op} ({'/'.join(short)})" if short else op
    return chosen, ("device" if on_device else "host"), span["dur"] / 1e6


# --- TensorFlow (XPlane) -------------------------------------------------------

_TF_MATMUL = re.compile(r"matmul|conv|einsum")
_TF_OTHER = {
    "readvariableop",
    "varhandleop",
    "identity",
    "identityn",
    "noop",
    "const",
    "assignvariableop",
    "assignaddvariableop",
    "assignsubvariableop",
    "placeholder",
    "shape",
    "reshape",
}


def tf_category(name):
    """A category from a TensorFlow op's ``scope/name:Type``."""
    scope, _, typ = name.rpartition(":")
    if "trainbench.optimizer" in scope:
        return "optimizer"
    if "trainbench.attention" in scope:
        return "attention"
    t = typ.lower()
    if any(k in t for k in ("allreduce", "collective", "nccl")):
        return "communication"
    if _TF_MATMUL.search(t):
        return "matmul_conv"
    if t in _TF_OTHER:
        return "other"
    if t in ("_send", "_recv", "memcpy", "copy", "copyhost", "_hostsend", "_hostrecv"):
        return "memory"
    return "norm_elementwise"


def xplane_events(space):
    """(events, timeline, span_s) of a TensorFlow profiler XSpace: kernels on
    the GPU planes when there are any (named and categorised by their
    ``tf_op`` stat), else the graph ops (``scope/name:Type``) on the host's
    threads inside the ``SPAN`` annotation."""
    host, device, span = [], [], None
    for p in space.planes:
        is_device = p.name.startswith("/device:GPU")
        if not is_device and p.name != "/host:CPU":
            continue
        stat_names = {k: v.name for k, v in p.stat_metadata.items()}
        for line in p.lines:
            base_ps = line.timestamp_ns * 1000
            for e in line.events:
                name = p.event_metadata[e.metadata_id].name
                ev = {
                    "track": (p.id, p.name, line.id),
                    "ts": (base_ps + e.offset_ps) / 1e6,
                    "dur": e.duration_ps / 1e6,
                    "name": name,
                }
                if not is_device and name == SPAN:
                    span = ev
                elif is_device:
                    for s in e.stats:
                        if stat_names.get(s.metadata_id) == "tf_op":
                            ev["tf_op"] = s.str_value or stat_names.get(s.ref_value, "")
                    device.append(ev)
                elif ":" in name and "::" not in name and " " not in name:  # graph ops (scope/name:Type)
                    host.append(ev)
    if span is None:
        raise RuntimeError(f"the profile has no {SPAN} annotation")
    if device:
        for e in device:
            e["self"], e["parent"] = e["dur"], None
            op = e.get("tf_op")
            e["category"] = tf_category(op) if op else category_of_name(e["name"])
            if e["category"] == "other":
                e["category"] = "norm_elementwise"
            e["name"] = f"{op}: {e['name']}" if op else e["name"]
        return device, "device", span["dur"] / 1e6
    host = [e for e in host if span["ts"] <= e["ts"] <= span["ts"] + span["dur"]]
    self_times(host)
    for e in host:
        e["category"] = tf_category(e["name"])
    return host, "host", span["dur"] / 1e6
