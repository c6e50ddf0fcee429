"""The JAX worker: Flax (linen) models, an optax AdamW step compiled ahead of time
with ``jax.jit``, fp32 / tf32 / bf16 / fp16-with-loss-scaling, and data
parallelism inside one process by sharding the batch over a device mesh.

The models (jax_models.py) are the PyTorch worker's written for Flax: the same
layers, shapes and parameter counts, with images in NHWC. Parameter counts must
equal the catalogue's; :func:`count_params` traces the initialisation with
``jax.eval_shape``, so even ViT-G is counted without allocating it.

``jax`` is imported at the top: how many CPU devices there are and which
platforms start are set through ``jax.config`` in :class:`JaxBackend`, which
works as long as no backend has started yet (nothing here starts one earlier).
"""

import os
import time

import flax
import jax
import jax.numpy as jnp
import jaxlib
import numpy as np
import optax
from jax.sharding import Mesh, NamedSharding
from jax.sharding import PartitionSpec as P

from . import file_models, harness
from .harness import (
    ADAMW_BETAS,
    ADAMW_EPS,
    check_precision,
    inputs_and_targets,
)
from .images import HostBatch
from .jax_feed import JaxFeed
from .jax_models import _init_variables, _size, attention_choice, build, count_params  # noqa: F401 (count_params: `count`)
from .jax_report import JaxReport
from .protocol import WorkerError, first_line, unsupported

# torch.cuda.amp.GradScaler's defaults, for amp-fp16.
LOSS_SCALE_INIT = 2.0**16
LOSS_SCALE_GROWTH_INTERVAL = 2000


# --- the backend --------------------------------------------------------------


def is_oom(e):
    """Whether a framework exception means out of memory."""
    text = str(e)
    return isinstance(e, MemoryError) or "RESOURCE_EXHAUSTED" in text or "out of memory" in text.lower()


def _cross_entropy(logits, y, binary=False):
    """Per-sample loss: softmax cross-entropy, or binary cross-entropy on one
    logit (the fraud model's head)."""
    if binary:
        return optax.sigmoid_binary_cross_entropy(logits.astype(jnp.float32)[..., 0], y.astype(jnp.float32))
    return optax.softmax_cross_entropy_with_integer_labels(logits.astype(jnp.float32), y)


def _predicted(logits, binary=False):
    return (logits[..., 0] > 0).astype(jnp.int32) if binary else jnp.argmax(logits, -1)


def _start_cpu_backend(devices, cores):
    """Starts XLA's CPU backend with ``devices`` devices and ``cores`` compute threads.

    XLA's CPU client has no thread-count option: it sizes its intra-op pool
    from the cores the process may run on when the backend starts, and
    ``--xla_cpu_multi_thread_eigen=false`` no longer changes anything under
    jax 0.10's thunk runtime (measured: a jitted matmul still keeps two cores
    busy). So the affinity mask is narrowed while the backend starts, which
    sizes the pool, then widened again for every thread, so that the pool's
    threads may run on any core as PyTorch's do.
    """
    jax.config.update("jax_platforms", "cpu")
    jax.config.update("jax_num_cpu_devices", devices)
    allowed = sorted(os.sched_getaffinity(0))
    if cores >= len(allowed):
        return jax.devices("cpu")
    os.sched_setaffinity(0, allowed[:cores])
    try:
        return jax.devices("cpu")
    finally:
        for tid in os.listdir("/proc/self/task"):
            try:
                os.sched_setaffinity(int(tid), allowed)
            except OSError:  # a thread that has ended since the listing
                pass


# XLA backend compilations so far, counted by a jax.monitoring listener
# (registered once, by the first backend).
_BACKEND_COMPILES = [0]
_LISTENING = [False]


def _count_compiles():
    if _LISTENING[0]:
        return
    _LISTENING[0] = True

    def on_duration(event, duration_secs, **_):
        if event == "/jax/core/compile/backend_compile_duration":
            _BACKEND_COMPILES[0] += 1

    jax.monitoring.register_event_duration_secs_listener(on_duration)


class JaxBackend(JaxFeed, JaxReport, harness.Backend):
    worker = "jax"
    framework = "jax"
    framework_version = jax.__version__

    def __init__(self, plan):
        self.plan = plan
        self.world_size = plan.devices * plan.nodes
        self.multi = plan.nodes > 1
        if self.multi:
            # One process per node (srun), joined by jax.distributed; on the
            # CPU, cross-process collectives through gloo.
            coordinator = os.environ.get("TRAINBENCH_COORDINATOR")
            if not coordinator:
                raise unsupported(
                    f"nodes = {plan.nodes}: no coordinator address (the worker launches itself "
                    "under srun inside a Slurm allocation)",
                    "nodes",
                )
            if not plan.is_cuda:
                jax.config.update("jax_cpu_collectives_implementation", "gloo")
            self.rank = int(os.environ.get("TRAINBENCH_NODE_RANK", os.environ.get("SLURM_PROCID", "0")))
            if not plan.is_cuda:
                jax.config.update("jax_platforms", "cpu")
                jax.config.update("jax_num_cpu_devices", plan.devices)
            jax.distributed.initialize(coordinator_address=coordinator, num_processes=plan.nodes, process_id=self.rank)
        _count_compiles()
        if self.multi:
            # Every process's devices, in process order: the mesh spans them all.
            self.devices = jax.devices("gpu" if plan.is_cuda else "cpu")
            if len(self.devices) != self.world_size:
                raise unsupported(
                    f"nodes = {plan.nodes} × devices = {plan.devices}: JAX sees {len(self.devices)} "
                    "devices over its processes",
                    "devices",
                )
        elif plan.is_cuda:
            # On a GPU, XLA's host threads only launch work: they are left as JAX starts them.
            try:
                gpus = jax.devices("gpu")
            except RuntimeError as e:
                raise unsupported(
                    f"device = {plan.device}: this JAX ({jax.__version__}) sees no CUDA device ({e})", "device"
                ) from e
            self.devices = gpus[plan.cuda_index : plan.cuda_index + plan.devices]
            if len(self.devices) < plan.devices:
                raise unsupported(
                    f"devices = {plan.devices} from {plan.device}: JAX sees {len(gpus)} CUDA device(s)", "devices"
                )
        else:
            # One process drives every CPU device: it gets the cores that as many
            # PyTorch processes of `threads` threads each would use.
            self.devices = _start_cpu_backend(plan.devices, plan.threads() * plan.devices)[: plan.devices]
        self.mesh = Mesh(np.array(self.devices), ("data",))
        self.replicated = NamedSharding(self.mesh, P())
        self.batch_sharding = NamedSharding(self.mesh, P("data"))
        self._precision(plan)
        file = plan.config["family"] == "file"
        if file:
            # A person's module brings its own attention; its builder sets the traits.
            self.model = file_models.build_flax(plan)
            self.attention, self.attention_text = "xla", None
        else:
            self.attention, self.attention_text = attention_choice(plan.traits.attention, self.dtype, plan.is_cuda)
            self.model = build(plan.config, self.dtype, self.attention)
        self.binary = plan.traits.binary
        # AdamW as optax composes it (scale_by_adam, add_decayed_weights), the
        # step's learning rate applied last: the studio's schedule comes with
        # each step (as torch's param_groups), without inject_hyperparams'
        # extra state and copies.
        self.tx = optax.chain(
            optax.scale_by_adam(b1=ADAMW_BETAS[0], b2=ADAMW_BETAS[1], eps=ADAMW_EPS),
            optax.add_decayed_weights(plan.weight_decay),
        )
        try:
            # The key is an argument, as JAX users pass it to a jitted init: a key
            # made inside would make every initializer a compile-time constant.
            init = jax.jit(self._init_state, out_shardings=self.replicated)
            self.state = init(jax.random.PRNGKey(plan.seed))
            jax.block_until_ready(self.state)
        except Exception as e:
            if is_oom(e):
                raise WorkerError("oom", f"out of memory building {plan.model}: {first_line(e)}") from e
            raise
        self.params = _size(self.state["params"])
        if file:
            file_models.flax_flops(
                plan, self.model, {"params": self.state["params"], **self.state["model_state"]}, _cross_entropy
            )
        # The step is compiled at the first call, on the real arguments (see step()).
        self.jitted = jax.jit(
            self._train_step,
            in_shardings=(self.replicated, self.replicated, self.replicated, self.batch_sharding, self.replicated),
            out_shardings=(self.replicated, self.replicated),
            donate_argnums=0,
        )
        self.compiled = None
        self.compile_time = None
        self.loss = None

    def _precision(self, plan):
        p = plan.precision
        cuda = plan.is_cuda
        # The run's first GPU decides; bfloat16 by the capability (JAX gives no verdict of its own).
        check_precision(
            p, cuda, capability_major=int(self.devices[0].compute_capability.split(".")[0]) if cuda else None
        )
        # JAX's default precision lets XLA use TF32 for float32 matmuls and
        # convolutions on Ampere and newer GPUs: fp32 asks for full float32,
        # tf32 for TF32. The setting is for 32-bit inputs only, and under AMP
        # every matmul and convolution takes 16-bit inputs.
        if cuda and p in ("fp32", "tf32"):
            jax.config.update("jax_default_matmul_precision", "highest" if p == "fp32" else "tensorfloat32")
        self.dtype = {"amp-bf16": jnp.bfloat16, "amp-fp16": jnp.float16}.get(p, jnp.float32)
        self.loss_scaling = p == "amp-fp16"
        if p == "fp32":
            self.text = "fp32 everywhere" + ("; TF32 tensor cores off (matmul precision highest)" if cuda else "")
        elif p == "tf32":
            self.text = "fp32 storage; TF32 matmuls and convolutions (jax_default_matmul_precision=tensorfloat32)"
        elif p == "amp-bf16":
            self.text = (
                "Flax modules with dtype bfloat16 (matmuls, convolutions); fp32 master weights, "
                "normalisation statistics, softmax and loss; no loss scaling"
            )
        else:
            self.text = (
                "Flax modules with dtype float16 (matmuls, convolutions); fp32 master weights, "
                "normalisation statistics, softmax and loss; dynamic loss scaling as torch's GradScaler"
            )

    def _init_state(self, key):
        """Everything the step carries: parameters, batch-norm statistics,
        optimizer state, the step number (for dropout) and the fp16 loss scale."""
        variables = _init_variables(self.model, self.plan.config, key)
        params = variables.pop("params")
        state = {
            "params": params,
            "model_state": variables,
            "opt": self.tx.init(params),
            "step": jnp.zeros((), jnp.int32),
        }
        if self.loss_scaling:
            state["scale"] = jnp.asarray(LOSS_SCALE_INIT, jnp.float32)
            state["good_steps"] = jnp.zeros((), jnp.int32)
        return state

    def _train_step(self, state, x_all, y_all, idx, lr):
        """One AdamW step on the global batch ``idx``, gathered from the
        device-resident training set and sharded over the mesh. Batch norms see
        the whole global batch (as SyncBatchNorm would, where DDP's see each
        process's share), since a mean over the sharded axis is a mean over
        every device's samples."""
        x = jax.lax.with_sharding_constraint(jnp.take(x_all, idx, axis=0), self.batch_sharding)
        y = jax.lax.with_sharding_constraint(jnp.take(y_all, idx, axis=0), self.batch_sharding)
        return self._batch_step(state, x, y, lr)

    def _batch_step(self, state, x, y, lr):
        """One AdamW step on a global batch already sharded over the mesh
        (a streamed source's decoded batch comes here directly)."""
        x, y = inputs_and_targets(self.plan, x, y)
        step = state["step"] + 1
        rngs = {"dropout": jax.random.fold_in(jax.random.PRNGKey(self.plan.seed), step)}
        scale = state["scale"] if self.loss_scaling else 1.0

        def loss_fn(params):
            logits, updated = self.model.apply(
                {"params": params, **state["model_state"]}, x, train=True, rngs=rngs, mutable=["batch_stats"]
            )
            loss = _cross_entropy(logits, y, self.binary).mean()
            return loss * scale, (loss, updated)

        grads, (loss, model_state) = jax.grad(loss_fn, has_aux=True)(state["params"])
        opt = state["opt"]

        def apply(grads):
            # The named scope only labels the HLO (the operator profile's "optimizer").
            with jax.named_scope("trainbench.optimizer"):
                updates, new_opt = self.tx.update(grads, opt, state["params"])
                updates = jax.tree.map(lambda u: (-lr * u).astype(u.dtype), updates)
                return optax.apply_updates(state["params"], updates), new_opt

        new = {**state, "model_state": model_state, "step": step}
        if self.loss_scaling:
            # torch's GradScaler: unscale, skip the update on inf/nan and halve
            # the scale; double it after LOSS_SCALE_GROWTH_INTERVAL finite steps.
            grads = jax.tree.map(lambda g: g / scale, grads)
            finite = jnp.all(jnp.stack([jnp.all(jnp.isfinite(g)) for g in jax.tree.leaves(grads)]))
            new["params"], new["opt"] = jax.lax.cond(finite, apply, lambda _: (state["params"], opt), grads)
            good = jnp.where(finite, state["good_steps"] + 1, 0)
            grow = good == LOSS_SCALE_GROWTH_INTERVAL
            new["scale"] = jnp.where(finite, jnp.where(grow, scale * 2.0, scale), scale * 0.5)
            new["good_steps"] = jnp.where(grow, 0, good)
        else:
            new["params"], new["opt"] = apply(grads)
        return new, loss

    def _evaluate(self, variables, xs, ys, weights):
        """(correct, summed loss) over batches xs[i] (padding weighted 0)."""

        def batch(totals, b):
            x, y, w = (jax.lax.with_sharding_constraint(a, self.batch_sharding) for a in b)
            x, y = inputs_and_targets(self.plan, x, y)
            if y.ndim > w.ndim:
                # Every next-token prediction of a sequence weighs as it does (padding 0).
                w = jnp.broadcast_to(w[:, None], y.shape)
            logits = self.model.apply(variables, x, train=False).astype(jnp.float32)
            correct = jnp.sum((_predicted(logits, self.binary) == y) * w)
            return (totals[0] + correct, totals[1] + jnp.sum(_cross_entropy(logits, y, self.binary) * w)), None

        zero = jnp.zeros((), jnp.float32)
        return jax.lax.scan(batch, (zero, zero), (xs, ys, weights))[0]

    def param_count(self):
        return self.params

    def precision_in_effect(self):
        return self.text

    def step(self, idx, lr):
        lr = np.float32(lr)
        if isinstance(idx, HostBatch):
            # The decoded batch onto the mesh, each device its share of samples.
            args = (jax.device_put(idx.x, self.batch_sharding), jax.device_put(idx.y, self.batch_sharding), lr)
            shape = idx.x.shape
        else:
            idx = idx.astype(np.int32)
            args = (self.x, self.y, self._put(idx, self.batch_sharding) if self.multi else idx, lr)
            shape = idx.shape
        try:
            if self.compiled is None:
                start = time.perf_counter()
                self.compiled = self.jitted.lower(self.state, *args).compile()
                self.compile_time = time.perf_counter() - start
                self.executables = {shape: self.compiled}
            elif shape not in self.executables:
                # A new batch shape: compile for it, as jax.jit does (the
                # jax.monitoring listener counts it: the recompile badge).
                self.executables[shape] = self.jitted.lower(self.state, *args).compile()
            executable = self.executables[shape]
            self.state, self.loss = executable(self.state, *args)
        except Exception as e:
            if is_oom(e):
                raise WorkerError(
                    "oom",
                    f"out of memory in a training step of {self.plan.model} "
                    f"(batch {self.plan.batch_size} per device): {first_line(e)}",
                ) from e
            raise
        return self.loss

    def sync(self):
        jax.block_until_ready((self.state, self.loss))

    def loss_values(self, handles):
        return [float(v) for v in jax.device_get(handles)]

    def compile_s(self):
        return self.compile_time

    def compile_count(self):
        return _BACKEND_COMPILES[0]

    def max_over_ranks(self, n):
        if not self.multi:
            return n
        from jax.experimental import multihost_utils

        return int(np.max(multihost_utils.process_allgather(np.asarray(n, np.int64))))

    def finish(self):
        if self.multi:
            from jax.experimental import multihost_utils

            multihost_utils.sync_global_devices("trainbench finish")
            jax.distributed.shutdown()


def info():
    # Listing GPUs starts the GPU backend: without preallocation it takes no
    # more than a CUDA context from a run going on beside it.
    os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
    try:
        gpus = [d.device_kind for d in jax.devices("gpu")]
    except RuntimeError:
        gpus = []
    return {
        "version": jax.__version__,
        "gpus": gpus,
        "libraries": {"jaxlib": jaxlib.__version__, "flax": flax.__version__, "optax": optax.__version__},
    }


Backend = JaxBackend
