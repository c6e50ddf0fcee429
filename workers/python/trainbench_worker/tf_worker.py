"""The TensorFlow worker: Keras 3 models trained in a ``tf.function`` graph or
``tf.function(jit_compile=True)`` (XLA), fp32 / tf32 / Keras mixed precision,
and data parallelism with ``tf.distribute.MirroredStrategy`` in one process
(logical CPU devices on the CPU, NCCL between GPUs).

The models (tf_models.py) are the PyTorch worker's, written as Keras layers
and laid out channels-last (NHWC): timm's VisionTransformer, torchvision's ResNet
v1.5, Hugging Face's BertModel with the sequence-classification head. Parameter
counts must equal the catalogue's; :func:`count_params` builds them in a
``keras.StatelessScope`` and leaves their variables uninitialised, so even
ViT-G is counted without allocating it.
"""

import os
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import keras
import tensorflow as tf

from . import file_models, keras_models
from .harness import (
    ADAMW_BETAS,
    ADAMW_EPS,
    TOKEN_FAMILIES,
    Backend,
    check_precision,
    classification_loss_kind,
    cpu_name,
    eval_batch,
    inputs_and_targets,
    predictions_per_sample,
)
from .images import HostBatch
from .protocol import WorkerError, first_line, unsupported
from .tf_models import _count, build, count_params, keras_attention  # noqa: F401 (count_params: `count`)

# --- the backend --------------------------------------------------------------


def _per_sample_loss(logits, y, binary):
    """Softmax cross-entropy, or binary cross-entropy on one logit (the fraud
    model's head)."""
    if binary:
        return tf.nn.sigmoid_cross_entropy_with_logits(labels=tf.cast(y, tf.float32), logits=logits[..., 0])
    return tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits)


def is_oom(e):
    """Whether a framework exception means out of memory."""
    return isinstance(e, (tf.errors.ResourceExhaustedError, MemoryError))


def _gpu_name(gpu):
    return tf.config.experimental.get_device_details(gpu).get("device_name", gpu.name)


def _compute_capability(gpu):
    return tf.config.experimental.get_device_details(gpu).get("compute_capability", (0, 0))


def _build(plan):
    """The model of the plan: a person's file, a keras.applications
    architecture (``keras:NAME``) or the catalogue's."""
    family = plan.config["family"]
    if family == "file":
        return file_models.build_keras(plan)
    if family == "library":
        return keras_models.build(plan)
    return build(plan.config)


class TFBackend(Backend):
    worker = "tensorflow"
    framework = "tensorflow"

    def __init__(self, plan):
        self.plan = plan
        self.framework_version = tf.__version__
        self.world_size = plan.devices * plan.nodes
        self.multi = plan.nodes > 1
        if self.multi:
            # One worker process per node (srun), a TF_CONFIG cluster of them
            # all: MultiWorkerMirroredStrategy, before any other TensorFlow op.
            import json

            workers = [w for w in os.environ.get("TRAINBENCH_TF_WORKERS", "").split(",") if w]
            if len(workers) != plan.nodes:
                raise unsupported(
                    f"nodes = {plan.nodes}: {len(workers)} worker addresses (the worker launches itself "
                    "under srun inside a Slurm allocation)",
                    "nodes",
                )
            if not plan.is_cuda and plan.devices > 1:
                raise unsupported(
                    f"devices = {plan.devices} is not allowed with nodes = {plan.nodes} on the CPU for "
                    "TensorFlow: expected 1 per node (one CPU replica per worker)",
                    "devices",
                )
            self.rank = int(os.environ.get("TRAINBENCH_NODE_RANK", os.environ.get("SLURM_PROCID", "0")))
            os.environ["TF_CONFIG"] = json.dumps(
                {"cluster": {"worker": workers}, "task": {"type": "worker", "index": self.rank}}
            )
        self._devices(plan)
        keras.utils.set_random_seed(plan.seed)
        self._precision(plan)
        self.binary = classification_loss_kind(plan.config) == "binary"
        n = plan.devices
        self.cross_device = None
        if self.multi:
            impl = (
                tf.distribute.experimental.CommunicationImplementation.NCCL
                if plan.is_cuda
                else tf.distribute.experimental.CommunicationImplementation.RING
            )
            self.strategy = tf.distribute.MultiWorkerMirroredStrategy(
                communication_options=tf.distribute.experimental.CommunicationOptions(implementation=impl)
            )
            n = self.strategy.num_replicas_in_sync
        elif n > 1:
            # One process, one replica per device; gradients all-reduced inside
            # the optimizer's update.
            self.cross_device = tf.distribute.NcclAllReduce() if plan.is_cuda else tf.distribute.ReductionToOneDevice()
            self.strategy = tf.distribute.MirroredStrategy(self.replicas, cross_device_ops=self.cross_device)
        else:
            self.strategy = tf.distribute.get_strategy()
        try:
            with self.strategy.scope():
                self.model = _build(plan)
                opt = keras.optimizers.AdamW(
                    learning_rate=plan.lr,
                    weight_decay=plan.weight_decay,
                    beta_1=ADAMW_BETAS[0],
                    beta_2=ADAMW_BETAS[1],
                    epsilon=ADAMW_EPS,
                )
                self.opt = keras.optimizers.LossScaleOptimizer(opt) if plan.precision == "amp-fp16" else opt
                self.opt.build(self.model.trainable_variables)
        except tf.errors.ResourceExhaustedError as e:
            raise WorkerError("oom", f"out of memory building {plan.model}: {first_line(e)}") from e
        self.params = _count(self.model)
        xla = plan.compile == "xla"
        # XLA compiles one device's program: with several replicas only the
        # forward and backward pass of each replica is compiled, and the
        # all-reduce and optimizer update run in the graph around it.
        self.grads = tf.function(self._loss_and_grads, jit_compile=True) if xla and n > 1 else self._loss_and_grads
        self.step_fn = tf.function(self._step, jit_compile=xla and n == 1)
        self.jit_step = xla and n == 1
        self.eval_fn = tf.function(self._eval_batch, jit_compile=xla)
        self.traced_s = None
        self.streamed = plan.data == "folder"

    def _devices(self, plan):
        """Threads, visible GPUs and logical CPUs: all before TensorFlow's
        runtime starts. ``plan.threads()`` is per replica (per process in the
        PyTorch worker); replicas in this process share one pool, so on the CPU
        it holds that many threads per replica, and replicas run side by side."""
        n = plan.devices
        cpu_replicas = 1 if plan.is_cuda else n
        tf.config.threading.set_intra_op_parallelism_threads(plan.threads() * cpu_replicas)
        tf.config.threading.set_inter_op_parallelism_threads(n)
        gpus = tf.config.list_physical_devices("GPU")
        if plan.is_cuda:
            if not gpus:
                raise unsupported(
                    f"device = {plan.device}: this TensorFlow ({tf.__version__}) sees no CUDA device", "device"
                )
            if plan.cuda_index + n > len(gpus):
                raise unsupported(
                    f"devices = {n}: TensorFlow sees {len(gpus)} GPU(s), too few from {plan.device} on", "devices"
                )
            self.gpus = gpus[plan.cuda_index : plan.cuda_index + n]
            tf.config.set_visible_devices(self.gpus, "GPU")
            for g in self.gpus:
                tf.config.experimental.set_memory_growth(g, True)
            self.replicas = [f"/gpu:{i}" for i in range(n)]
        else:
            self.gpus = []
            tf.config.set_visible_devices([], "GPU")  # a CPU run keeps TensorFlow off the GPUs
            if n > 1:
                cpu = tf.config.list_physical_devices("CPU")[0]
                tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * n)
            self.replicas = [f"/cpu:{i}" for i in range(n)]
        self.home = self.replicas[0]

    def _precision(self, plan):
        p = plan.precision
        cuda = plan.is_cuda
        # The lowest GPU of the run decides; bfloat16 by the capability (TensorFlow gives no verdict of its own).
        check_precision(p, cuda, capability_major=min(_compute_capability(g)[0] for g in self.gpus) if cuda else None)
        # TensorFlow turns TF32 on by default on Ampere and newer: fp32 means off.
        tf.config.experimental.enable_tensor_float_32_execution(p == "tf32")
        policy = "float32"
        if p == "fp32":
            self.text = "fp32 everywhere" + ("; TF32 tensor cores off" if cuda else "")
        elif p == "tf32":
            self.text = "fp32 storage; TF32 matmuls and convolutions"
        elif p == "amp-bf16":
            policy = "mixed_bfloat16"
            self.text = "Keras mixed_bfloat16 policy (bfloat16 compute); fp32 variables and loss; no loss scaling"
        else:
            policy = "mixed_float16"
            self.text = "Keras mixed_float16 policy with LossScaleOptimizer (dynamic loss scaling); fp32 variables"
        keras.mixed_precision.set_global_policy(policy)

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
            {"id": f"cuda:{i}", "name": _gpu_name(g)} for i, g in enumerate(gpus)
        ]

    def device_info(self):
        if self.plan.is_cuda:
            return {"id": f"cuda:{self.plan.cuda_index}", "name": _gpu_name(self.gpus[0])}
        return {"id": "cpu", "name": cpu_name()}

    def param_count(self):
        return self.params

    def precision_in_effect(self):
        return self.text

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
        elif self.plan.family != "resnet":
            mode += (
                "; attention: matmul, softmax and matmul ops written out (TensorFlow has no fused attention "
                "kernel; Keras's dot_product_attention composes the same ops and refuses flash_attention here)"
            )
        return mode

    def set_data(self, data):
        def images(x):  # NCHW → NHWC, once (tf.constant copies the view)
            return x if self.plan.family in TOKEN_FAMILIES else x.transpose(0, 2, 3, 1)

        if data.streamed:
            self._set_stream(data)
        with tf.device(self.home):
            if not data.streamed:
                x, y = data.train
                self.x, self.y = tf.constant(images(x)), tf.constant(y.astype("int32"))
            if data.eval is not None:
                self.ex, self.ey = tf.constant(images(data.eval[0])), tf.constant(data.eval[1].astype("int32"))

    def _set_stream(self, data):
        """An image folder through tf.data: file names in the harness's
        order, read, decoded and augmented by ``map`` with ``loader_workers``
        parallel calls (0: on the training thread, nothing ahead), batched,
        two batches prefetched. The step takes the decoded batch instead of
        gathering from arrays it holds."""
        from . import images as host

        n = int(self.plan.loader_workers)
        size = int(self.plan.config["image_size"])
        files, labels = data.train
        with tf.device("/cpu:0"):
            names = tf.constant(files)
            classes = tf.constant(labels.astype("int32"))
            mean, std = tf.constant(host.MEAN), tf.constant(host.STD)
        seed = int(self.plan.seed)

        def positions():
            for idx, epoch in data.orders():
                for i in idx:
                    yield int(i), epoch

        def load(i, epoch):
            # The sample's randomness from (seed, epoch, position), as in every loader.
            key = tf.stack([tf.constant(seed, tf.int64) * 1_000_003 + epoch, i])
            img = tf.io.decode_image(tf.io.read_file(tf.gather(names, i)), channels=3, expand_animations=False)
            begin, extent, _ = tf.image.stateless_sample_distorted_bounding_box(
                tf.shape(img),
                bounding_boxes=tf.constant([[[0.0, 0.0, 1.0, 1.0]]]),
                seed=key,
                min_object_covered=0.0,
                aspect_ratio_range=host.RATIO,
                area_range=host.SCALE,
                max_attempts=10,
                use_image_if_no_bounding_boxes=True,
            )
            img = tf.image.resize(tf.slice(img, begin, extent), [size, size], method="bilinear")
            img = tf.image.stateless_random_flip_left_right(img, seed=key + 1)
            return (img / 255.0 - mean) / std, tf.gather(classes, i)

        ds = tf.data.Dataset.from_generator(
            positions, output_signature=(tf.TensorSpec([], tf.int64), tf.TensorSpec([], tf.int64))
        )
        ds = ds.map(load, num_parallel_calls=n or None, deterministic=True)
        ds = ds.batch(self.plan.global_batch, drop_remainder=True)
        if n:
            ds = ds.prefetch(2)
        options = tf.data.Options()
        options.autotune.enabled = False
        options.threading.private_threadpool_size = max(n, 1)
        ds = ds.with_options(options)
        self.step_fn = tf.function(self._host_step, jit_compile=self.jit_step)
        where = (
            f"map with {n} parallel call{'s' if n > 1 else ''}, 2 batches prefetched"
            if n
            else "map on the training thread (no parallel calls, nothing prefetched)"
        )
        data.attach(
            _Stream(iter(ds), files),
            f"tf.data ({where}); tf.io.decode_image, stateless_sample_distorted_bounding_box crop, flip, normalise",
        )

    def _loss_and_grads(self, x, y):
        """One replica's share of the global batch: its loss (the sum over its
        samples divided by the global batch, so that the all-reduced sum of
        gradients is the gradient of the global mean) and its gradients."""
        # A decoder's loss: the mean over the global batch's next tokens.
        x, y = inputs_and_targets(self.plan, x, y)
        per_sample = predictions_per_sample(self.plan)
        with tf.GradientTape() as tape:
            logits = tf.cast(self.model(x, training=True), tf.float32)
            ce = _per_sample_loss(logits, y, self.binary)
            loss = tf.reduce_sum(ce) / (self.plan.global_batch * per_sample)
            scaled = self.opt.scale_loss(loss)  # times the dynamic loss scale under amp-fp16
        return loss, tape.gradient(scaled, self.model.trainable_variables)

    def _replica_step(self, x, y):
        loss, grads = self.grads(x, y)
        with tf.name_scope("trainbench.optimizer"):  # a label for the operator profile
            self.opt.apply_gradients(zip(grads, self.model.trainable_variables))
        return loss

    def _step(self, idx, lr):
        with tf.device(self.home):
            x, y = tf.gather(self.x, idx), tf.gather(self.y, idx)
        return self._host_step(x, y, lr)

    def _host_step(self, x, y, lr):
        self.opt.learning_rate.assign(lr)
        n = self.strategy.num_replicas_in_sync  # every worker's replicas
        with tf.device(self.home):
            xs = tf.split(x, n)
            ys = tf.split(y, n)
        x = self.strategy.experimental_distribute_values_from_function(lambda ctx: xs[ctx.replica_id_in_sync_group])
        y = self.strategy.experimental_distribute_values_from_function(lambda ctx: ys[ctx.replica_id_in_sync_group])
        losses = self.strategy.run(self._replica_step, args=(x, y))
        return self.strategy.reduce(tf.distribute.ReduceOp.SUM, losses, axis=None)

    def step(self, idx, lr):
        if isinstance(idx, HostBatch):
            args = (idx.x, idx.y, tf.constant(lr, tf.float32))
        else:
            args = (tf.constant(idx), tf.constant(lr, tf.float32))
        try:
            if self.traced_s is None:
                # Tracing the step into a graph, timed on its own; graph
                # optimisation and XLA compilation happen in step 1's run.
                start = time.perf_counter()
                self.step_fn.get_concrete_function(*args)
                self.traced_s = time.perf_counter() - start
            return self.step_fn(*args)
        except tf.errors.ResourceExhaustedError as e:
            raise WorkerError(
                "oom",
                f"out of memory in a training step of {self.plan.model} "
                f"(batch {self.plan.batch_size} per device): {first_line(e)}",
            ) from e

    def compile_s(self):
        return self.traced_s

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

    def sync(self):
        if self.multi:
            # sync_devices would wait on every worker's devices (which this
            # eager context does not reach): reading the optimizer's step
            # count waits for this worker's last update instead.
            self.opt.iterations.numpy()
            return
        tf.test.experimental.sync_devices()

    def loss_values(self, handles):
        return tf.stack(handles).numpy().astype(float).tolist()

    def _eval_batch(self, x, y):
        with tf.device(self.home):
            x, y = inputs_and_targets(self.plan, x, y)
            logits = tf.cast(self.model(x, training=False), tf.float32)
            loss = tf.reduce_sum(_per_sample_loss(logits, y, self.binary))
            if self.binary:
                predicted = tf.cast(logits[..., 0] > 0, tf.int32)
            else:
                predicted = tf.argmax(logits, -1, output_type=tf.int32)
            correct = tf.reduce_sum(tf.cast(tf.equal(predicted, y), tf.int32))
        return loss, correct

    def evaluate(self):
        """On the first device only, as the PyTorch worker's rank 0."""
        correct, total_loss, n = 0, 0.0, int(self.ey.shape[0])
        step = eval_batch(self.plan)
        for s in range(0, n, step):
            loss, right = self.eval_fn(self.ex[s : s + step], self.ey[s : s + step])
            total_loss += float(loss)
            correct += int(right)
        predictions = n * predictions_per_sample(self.plan)
        return correct / predictions, total_loss / predictions, n

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


def info():
    build_info = tf.sysconfig.get_build_info()
    return {
        "version": tf.__version__,
        "gpus": [_gpu_name(g) for g in tf.config.list_physical_devices("GPU")],
        "libraries": {
            "keras": keras.__version__,
            "cuda (tf build)": build_info.get("cuda_version"),
            "cudnn (tf build)": build_info.get("cudnn_version"),
        },
    }


class _Stream:
    def __init__(self, it, files):
        self.it, self.files = it, files

    def __iter__(self):
        return self

    def __next__(self):
        try:
            x, y = next(self.it)
        except tf.errors.InvalidArgumentError as e:
            # tf.io.decode_image does not say which file it could not decode: find it.
            from . import images

            for path in self.files:
                images.eval_image(path, 8)  # raises the WorkerError naming the file
            raise WorkerError(
                "bad_config", f"data_path: tf.data could not decode an image: {first_line(e)}", field="data_path"
            ) from e
        return HostBatch(x, y)


Backend = TFBackend


def node_launch(plan, host, port, job, peers, env):
    """Several nodes (see ``launch``): the worker itself on each, one
    MultiWorkerMirroredStrategy worker per node. Every worker's address is
    given up front (TF_CONFIG): the allocation's nodes (or this host and its
    peers) at one port, or, with TRAINBENCH_RDZV_HOST, that host at free ports."""
    from .launch import free_port

    if os.environ.get("TRAINBENCH_RDZV_HOST"):
        ports = [port]
        while len(ports) < plan.nodes:
            ports.append(free_port())
        workers = [f"{host}:{p}" for p in ports]
    elif peers:
        workers = [f"{host}:{port}"] + [f"{p['host']}:{port}" for p in peers[: plan.nodes - 1]]
    else:
        import subprocess

        names = subprocess.run(
            ["scontrol", "show", "hostnames", os.environ.get("SLURM_JOB_NODELIST", "")],
            capture_output=True,
            text=True,
        ).stdout.split()
        if len(names) != plan.nodes:
            raise WorkerError(
                "unsupported",
                f"nodes = {plan.nodes}: scontrol lists {len(names)} node(s) in Slurm job {job}",
                "nodes",
            )
        workers = [f"{n}:{port}" for n in names]
    env["TRAINBENCH_TF_WORKERS"] = ",".join(workers)
    env["TRAINBENCH_COORDINATOR"] = workers[0]
    return []
