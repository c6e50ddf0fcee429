"""What the TensorFlow worker says about a run besides its timings: the
libraries and devices it saw, how it executes (graph or XLA, the strategy,
attention), what it traced, an operator profile and the memory peaks."""

import os
import sys

import keras
import tensorflow as tf

from .harness import cpu_name
from .tf_models import keras_attention


def gpu_name(gpu):
    return tf.config.experimental.get_device_details(gpu).get("device_name", gpu.name)


class TFReport:
    """The reporting half of :class:`~.tf_worker.TFBackend`. Reads the
    backend's ``plan``, ``gpus``, ``multi``, ``streamed``, ``step_fn``,
    ``opt`` and ``cross_device``."""

    def libraries(self):
        libs = [("python", sys.version.split()[0]), ("keras", keras.__version__)]
        build_info = tf.sysconfig.get_build_info()
        if build_info.get("cuda_version"):
            libs.append(("cuda (tf build)", build_info["cuda_version"]))
        if self.plan.is_cuda and build_info.get("cudnn_version"):
            libs.append(("cudnn (tf build)", build_info["cudnn_version"]))
        if self.cross_device is not None:
            libs.append(("tf.distribute cross-device ops", type(self.cross_device).__name__))
        if self.multi:
            libs.append(("tf.distribute collectives", "NCCL" if self.plan.is_cuda else "RING (gRPC)"))
        return libs

    def devices_visible(self):
        gpus = tf.config.list_physical_devices("GPU")
        return [{"id": "cpu", "name": cpu_name()}] + [
            {"id": f"cuda:{i}", "name": gpu_name(g)} for i, g in enumerate(gpus)
        ]

    def device_info(self):
        if self.plan.is_cuda:
            return {"id": f"cuda:{self.plan.cuda_index}", "name": gpu_name(self.gpus[0])}
        return {"id": "cpu", "name": cpu_name()}

    def execution(self):
        n = self.plan.devices
        if self.plan.compile == "off":
            mode = "tf.function graph"
        elif n == 1:
            mode = "tf.function(jit_compile=True) (XLA)"
        else:
            mode = "tf.function graph; each replica's forward and backward in tf.function(jit_compile=True) (XLA)"
        if self.multi:
            mode += (
                f"; MultiWorkerMirroredStrategy over {self.plan.nodes} workers × {n} "
                f"{'GPU(s) (NCCL)' if self.plan.is_cuda else 'CPU replica (RING collectives over gRPC)'}"
            )
        elif n > 1:
            mode += f"; MirroredStrategy over {n} {'GPUs (NCCL)' if self.plan.is_cuda else 'logical CPU devices'}"
        if keras_attention(self.plan.config):
            mode += "; attention: Keras' layers.MultiHeadAttention"
        elif self.plan.traits.attention is not None:
            mode += (
                "; attention: matmul, softmax and matmul ops written out (TensorFlow has no fused attention "
                "kernel; Keras's dot_product_attention composes the same ops and refuses flash_attention here)"
            )
        return mode

    def fused(self):
        graph = (
            "one tf.function(jit_compile=True) XLA program" if self.plan.compile == "xla" else "one tf.function graph"
        )
        first = "forward" if self.streamed else "batch gather, forward"
        text = f"{first}, backward and optimizer update run as {graph}"
        if self.plan.devices > 1 or self.multi:
            text += ", with the strategy's gradient all-reduce inside"
        return text

    def communication(self):
        if self.plan.devices == 1 and not self.multi:
            return None
        return "MirroredStrategy all-reduces gradients inside the step's graph: communication is part of the fused step"

    def compile_count(self):
        return int(self.step_fn.experimental_get_tracing_count())

    def compile_source(self):
        return "tf.function's tracing count of the training step (a retrace builds and compiles a new graph)"

    def profile(self, run_step, steps):
        import glob
        import tempfile

        from tensorflow.tsl.profiler.protobuf import xplane_pb2

        from . import profiling

        run_step()  # one step outside the profiler
        self.sync()
        with tempfile.TemporaryDirectory(prefix="trainbench-profile-") as d:
            tf.profiler.experimental.start(d)
            try:
                with tf.profiler.experimental.Trace(profiling.SPAN):
                    for _ in range(steps):
                        run_step()
                    self.sync()
            finally:
                tf.profiler.experimental.stop()
            files = glob.glob(os.path.join(d, "**", "*.xplane.pb"), recursive=True)
            if not files:
                return {"not_measured": "the TensorFlow profiler wrote no .xplane.pb"}
            space = xplane_pb2.XSpace()
            with open(files[0], "rb") as f:
                space.ParseFromString(f.read())
        events, timeline, span_s = profiling.xplane_events(space)
        what = (
            "kernels on the GPU's streams, categorised by the TensorFlow op that launched them"
            if timeline == "device"
            else "TensorFlow graph ops on the executor's threads (they may run in parallel)"
        )
        if self.plan.compile == "xla":
            what += "; under XLA the step's ops run inside compiled clusters, shown as such"
        return profiling.reduce(
            events, span_s, steps, f"TensorFlow profiler (XPlane; TensorFlow {tf.__version__})", timeline, what
        )

    def loss_scale(self):
        if isinstance(self.opt, keras.optimizers.LossScaleOptimizer):
            return float(self.opt.dynamic_scale.numpy())
        return None

    def memory_events(self):
        events = [
            {
                "device": f"cuda:{self.plan.cuda_index + i}",
                "source": "allocator",
                "peak_bytes": tf.config.experimental.get_memory_info(f"GPU:{i}")["peak"],
                "reserved_peak_bytes": None,
            }
            for i in range(len(self.gpus))
        ]
        return events + super().memory_events()
