"""What the JAX worker says about a run besides its timings: the libraries
and devices it saw, how it executes (jit, sharding, attention), an operator
profile of the compiled step and the memory peaks."""

import os
import sys

import flax
import jax
import jaxlib
import optax

from .harness import cpu_name


class JaxReport:
    """The reporting half of :class:`~.jax_worker.JaxBackend`. Reads the
    backend's ``plan``, ``devices``, ``multi``, ``world_size``,
    ``attention_text``, ``compiled``, ``state`` and ``loss_scaling``."""

    def libraries(self):
        libs = [
            ("python", sys.version.split()[0]),
            ("jaxlib", jaxlib.__version__),
            ("flax", flax.__version__),
            ("optax", optax.__version__),
        ]
        if self.plan.is_cuda:
            libs.append(("xla platform", self.devices[0].client.platform_version))
        return libs

    def devices_visible(self):
        # A CPU run starts only the CPU backend (the GPU one would reserve most
        # of every GPU's memory), so it lists no GPUs.
        seen = [{"id": "cpu", "name": cpu_name()}]
        if self.plan.is_cuda:
            seen += [{"id": f"cuda:{d.id}", "name": d.device_kind} for d in jax.devices("gpu")]
        return seen

    def device_info(self):
        if self.plan.is_cuda:
            d = self.devices[0]
            return {"id": f"cuda:{d.id}", "name": d.device_kind}
        return {"id": "cpu", "name": cpu_name()}

    def execution(self):
        mode = "jax.jit (XLA)"
        if self.multi:
            mode += (
                f"; data parallel over {self.world_size} devices of {self.plan.nodes} processes "
                f"(jax.distributed, one per node{'' if self.plan.is_cuda else '; gloo collectives on the CPU'})"
            )
        elif self.plan.devices > 1:
            mode += f"; data parallel over {self.plan.devices} devices (NamedSharding)"
        if self.attention_text:
            mode += f"; {self.attention_text}"
        return mode

    def fused(self):
        first = "forward" if self.plan.data == "folder" else "batch gather, forward"
        text = f"{first}, backward and optimizer update run as one jax.jit XLA executable"
        if self.plan.devices > 1:
            text += ", with the gradient all-reduce across devices inside"
        return text

    def communication(self):
        if self.plan.devices == 1:
            return None
        return "XLA inserts the gradient all-reduce into the step's executable: communication is part of the fused step"

    def compile_source(self):
        return "XLA backend compilations seen by jax.monitoring while the training step ran"

    def profile(self, run_step, steps):
        import glob
        import gzip
        import json
        import tempfile

        from . import profiling

        run_step()  # one step outside the profiler
        self.sync()
        categories = profiling.hlo_categories(self.compiled.as_text())
        with tempfile.TemporaryDirectory(prefix="trainbench-profile-") as d:
            with jax.profiler.trace(d, create_perfetto_trace=True):
                with jax.profiler.TraceAnnotation(profiling.SPAN):
                    for _ in range(steps):
                        run_step()
                    self.sync()
            files = glob.glob(os.path.join(d, "**", "perfetto_trace.json.gz"), recursive=True)
            if not files:
                return {"not_measured": "jax.profiler wrote no perfetto_trace.json.gz"}
            with gzip.open(files[0]) as f:
                trace = json.load(f)
        events, timeline, span_s = profiling.xla_events(trace, categories)
        what = (
            "XLA operators on the GPU streams"
            if timeline == "device"
            else "XLA operators on the host's XLA threads (thunks of the jitted step)"
        )
        what += ", categorised from the compiled HLO (a fusion takes the strongest operation inside it)"
        return profiling.reduce(events, span_s, steps, f"jax.profiler (JAX {jax.__version__})", timeline, what)

    def loss_scale(self):
        return float(self.state["scale"]) if self.loss_scaling else None

    def memory_events(self):
        # XLA's BFC allocator: the peak in use, and the peak of the pool it holds
        # (torch's "reserved"; JAX preallocates 75 % of the GPU's memory by default).
        events = []
        for d in self.devices if self.plan.is_cuda else []:
            stats = d.memory_stats() or {}
            if "peak_bytes_in_use" in stats:
                events.append(
                    {
                        "device": f"cuda:{d.id}",
                        "source": "allocator",
                        "peak_bytes": stats["peak_bytes_in_use"],
                        "reserved_peak_bytes": stats.get("peak_pool_bytes"),
                    }
                )
        return events + super().memory_events()
