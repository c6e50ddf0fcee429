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
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import keras
import tensorflow as tf

from . import file_models, harness, keras_models, scratch
from .harness import (
    ADAMW_BETAS,
    ADAMW_EPS,
    check_precision,
    inputs_and_targets,
    predictions_per_sample,
)
from .images import HostBatch
from .protocol import WorkerError, first_line, unsupported
from .tf_feed import TFFeed
from .tf_models import _count, build, count_params  # noqa: F401 (count_params: `count`)
from .tf_report import TFReport, gpu_name

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


class TFBackend(TFFeed, TFReport, harness.Backend):
    worker = "tensorflow"
    framework = "tensorflow"

    def __init__(self, plan):
        self.plan = plan
        # Autograph's converted sources in this worker's own temp folder
        # (scratch), removed when the worker leaves without the interpreter's
        # teardown. Not for a person's model file: the teardown runs then
        # (their exit handlers are theirs), autograph's handlers with it, and
        # what their code puts in the temp folder stays.
        if plan.config["family"] != "file":
            scratch.take()
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
                # A library or file model's traits are set by its builder.
                self.binary = plan.traits.binary
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

    def param_count(self):
        return self.params

    def precision_in_effect(self):
        return self.text

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


def info():
    build_info = tf.sysconfig.get_build_info()
    return {
        "version": tf.__version__,
        "gpus": [gpu_name(g) for g in tf.config.list_physical_devices("GPU")],
        "libraries": {
            "keras": keras.__version__,
            "cuda (tf build)": build_info.get("cuda_version"),
            "cudnn (tf build)": build_info.get("cudnn_version"),
        },
    }


Backend = TFBackend
