"""What the PyTorch worker says about a run besides its timings: the
libraries and devices it saw, how it executes (compile mode, parallelism,
attention kernel, layout), how communication is timed, what it compiled, an
operator profile and the memory peaks."""

import os
import sys

import torch

from .harness import cpu_name
from .protocol import peak_rss_bytes
from .torch_models import sdpa_choice


class TorchReport:
    """The reporting half of :class:`~.torch_worker.TorchBackend`. Reads the
    backend's ``plan``, ``device``, ``dist``, ``world_size``, ``autocast``,
    ``nhwc``, ``cudnn_benchmark``, ``adamw_fused`` and ``scaler``."""

    def libraries(self):
        libs = [("python", sys.version.split()[0])]
        if torch.version.cuda:
            libs.append(("cuda (torch build)", torch.version.cuda))
        if self.plan.is_cuda:
            libs.append(("cudnn", str(torch.backends.cudnn.version())))
        if self.dist is not None:
            libs.append(("torch.distributed backend", self.dist.get_backend()))
        return libs

    def devices_visible(self):
        seen = [{"id": "cpu", "name": cpu_name()}]
        if torch.cuda.is_available():
            seen += [
                {"id": f"cuda:{i}", "name": torch.cuda.get_device_name(i)} for i in range(torch.cuda.device_count())
            ]
        return seen

    def device_info(self):
        if self.plan.is_cuda:
            return {"id": f"cuda:{self.device.index}", "name": torch.cuda.get_device_name(self.device)}
        return {"id": "cpu", "name": cpu_name()}

    def execution(self):
        mode = {
            "off": "eager",
            "on": "torch.compile (inductor, default mode)",
            "max-autotune": "torch.compile (inductor, max-autotune)",
        }[self.plan.compile]
        if self.dist is not None:
            scheme = "FSDP (fully_shard per block)" if self.plan.parallel == "fsdp" else "DDP"
            mode += (
                f"; {scheme} over {self.world_size} {'GPUs (NCCL)' if self.plan.is_cuda else 'CPU processes (gloo)'}"
            )
        attention = sdpa_choice(self.plan.traits.attention, self.device, self.autocast or torch.float32)
        if attention:
            mode += f"; {attention}"
        if self.nhwc:
            mode += "; channels-last"
        if self.plan.is_cuda:
            mode += "; cuDNN benchmark mode " + ("on" if self.cudnn_benchmark else "off")
        mode += "; AdamW fused" if self.adamw_fused else "; AdamW (PyTorch's default implementation)"
        return mode

    def communication(self):
        if self.dist is None:
            return None
        if self.plan.parallel == "fsdp":
            return (
                "FSDP all-gathers parameters inside forward and reduce-scatters gradients inside backward: "
                "communication is part of those phases and is not separated"
            )
        if self.local_backward():
            return (
                "DDP all-reduces gradients during backward; communication = backward with the all-reduce "
                "minus the same backward under no_sync (the all-reduce time backward did not hide)"
            )
        return (
            "DDP all-reduces gradients during backward (under torch.compile, no_sync is not timed): "
            "communication is inside the backward phase"
        )

    def compile_count(self):
        if self.plan.compile == "off":
            return None
        from torch._dynamo.utils import counters

        return int(counters["stats"]["unique_graphs"])

    def compile_source(self):
        return "torch._dynamo's count of unique graphs compiled"

    def profile(self, run_step, steps):
        import json
        import tempfile

        from torch.profiler import ProfilerActivity, profile, record_function

        from . import profiling

        acts = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if self.plan.is_cuda else [])
        run_step()  # one step outside the profiler: its start-up is not the model's
        self.sync()
        with profile(activities=acts) as prof, record_function(profiling.SPAN):
            for _ in range(steps):
                run_step()
            self.sync()
        with tempfile.TemporaryDirectory(prefix="trainbench-profile-") as d:
            path = os.path.join(d, "trace.json")
            prof.export_chrome_trace(path)
            with open(path) as f:
                trace = json.load(f)
        events, timeline, span_s = profiling.torch_events(trace)
        what = (
            "CUDA kernels and copies on the GPU, each named after the PyTorch operator that launched it"
            if timeline == "device"
            else "PyTorch operators on the training thread (self time: less the operators they call)"
        )
        return profiling.reduce(events, span_s, steps, f"torch.profiler (PyTorch {torch.__version__})", timeline, what)

    def loss_scale(self):
        return None if self.scaler is None else float(self.scaler.get_scale())

    def memory_events(self):
        events = []
        if self.plan.is_cuda:
            events.append(
                {
                    "device": f"cuda:{self.device.index}",
                    "source": "allocator",
                    "peak_bytes": torch.cuda.max_memory_allocated(self.device),
                    "reserved_peak_bytes": torch.cuda.max_memory_reserved(self.device),
                }
            )
        rss = peak_rss_bytes() or 0
        peaks = [rss]
        if self.dist is not None:
            gathered = [None] * self.world_size
            self.dist.all_gather_object(gathered, rss)
            peaks = gathered
            if self.plan.is_cuda:
                gathered_gpu = [None] * self.world_size
                self.dist.all_gather_object(gathered_gpu, events[0])
                events = gathered_gpu
        for r, p in enumerate(peaks):
            if p:
                events.append(
                    {
                        "device": "cpu" if len(peaks) == 1 else f"cpu (rank {r})",
                        "source": "process_rss",
                        "peak_bytes": p,
                        "reserved_peak_bytes": None,
                    }
                )
        return events
