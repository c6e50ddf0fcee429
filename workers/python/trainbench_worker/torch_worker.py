"""The PyTorch worker: eager or ``torch.compile``, fp32 / tf32 / AMP, and data
parallelism with DDP through torchrun (NCCL on GPUs, gloo on CPU processes).

The models (torch_models.py) mirror the libtorch worker's (crates/engine-tch/src/models): timm's
VisionTransformer and torchvision's ResNet at their defaults, Hugging Face's
BertModel plus the sequence-classification head; the decoders (GPT-2, Llama)
follow Hugging Face's GPT2LMHeadModel and LlamaForCausalLM. Parameter counts must equal the
catalogue's; :func:`count_params` builds them on the meta device, so even ViT-G
is counted without allocating it.
"""

import os

import torch

from . import file_models, harness, library_models
from .harness import ADAMW_BETAS, ADAMW_EPS, check_precision, inputs_and_targets
from .protocol import WorkerError, first_line, monotonic_ns, unsupported
from .torch_feed import TorchFeed
from .torch_models import build, classification_loss, count_params  # noqa: F401 (count_params: `count`)
from .torch_report import TorchReport

# --- the backend --------------------------------------------------------------


def is_oom(e):
    """Whether a framework exception means out of memory."""
    text = str(e)
    return (
        isinstance(e, (torch.OutOfMemoryError, MemoryError))
        or "out of memory" in text.lower()
        or "can't allocate memory" in text
    )


def _sample_loss(plan):
    """The training loss of a batch ``x`` (labels 0), as ``_forward`` computes it."""

    def loss_of(model, x):
        x, y = inputs_and_targets(plan, x, torch.zeros(x.shape[0], dtype=torch.long))
        return classification_loss(model(x), y, plan.traits.binary)

    return loss_of


class TorchBackend(TorchFeed, TorchReport, harness.Backend):
    worker = "pytorch"
    framework = "pytorch"

    def __init__(self, plan):
        import torch.distributed as dist

        self.plan = plan
        self.framework_version = torch.__version__.split("+")[0]
        self.world_size = int(os.environ.get("WORLD_SIZE", "1"))
        self.rank = int(os.environ.get("RANK", "0"))
        local = int(os.environ.get("LOCAL_RANK", "0"))
        if self.world_size != plan.devices * plan.nodes:
            raise WorkerError(
                "internal",
                f"started with {self.world_size} processes for devices = {plan.devices} on {plan.nodes} node(s)",
            )
        torch.set_num_threads(plan.threads())
        torch.set_num_interop_threads(1)
        if plan.is_cuda:
            if not torch.cuda.is_available():
                raise unsupported(
                    f"device = {plan.device}: this PyTorch ({torch.__version__}) sees no CUDA device", "device"
                )
            index = plan.cuda_index + local
            if index >= torch.cuda.device_count():
                raise unsupported(
                    f"devices = {plan.devices}: PyTorch sees {torch.cuda.device_count()} CUDA device(s)", "devices"
                )
            self.device = torch.device("cuda", index)
            torch.cuda.set_device(self.device)
        else:
            self.device = torch.device("cpu")
        self.dist = None
        if self.world_size > 1:
            dist.init_process_group("nccl" if plan.is_cuda else "gloo")
            self.dist = dist
        self._precision(plan)
        torch.manual_seed(plan.seed)
        try:
            if plan.config["family"] == "library":
                self.raw = library_models.build(plan, _sample_loss(plan)).to(self.device)
            elif plan.config["family"] == "file":
                self.raw = file_models.build_torch(plan, _sample_loss(plan)).to(self.device)
            else:
                self.raw = build(plan.config).to(self.device)
        except RuntimeError as e:
            if is_oom(e):
                raise WorkerError("oom", f"out of memory building {plan.model}: {e}") from e
            raise
        self.params = sum(p.numel() for p in self.raw.parameters() if p.requires_grad)
        # A convolutional network on a GPU as its users train it: NHWC
        # (channels-last) weights and inputs for the tensor cores, cuDNN's
        # benchmark mode picking each convolution's fastest algorithm for the
        # fixed input shape.
        self.nhwc = plan.is_cuda and plan.family == "resnet"
        if self.nhwc:
            self.raw = self.raw.to(memory_format=torch.channels_last)
        # The run's choice where it made one (a cuDNN benchmark A/B), else
        # on for a convolutional network on a GPU.
        asked = plan.spec.get("cudnn_benchmark")
        self.cudnn_benchmark = plan.is_cuda and (self.nhwc if asked is None else bool(asked))
        if plan.is_cuda:
            torch.backends.cudnn.benchmark = self.cudnn_benchmark
        model = self.raw
        if self.dist is not None and plan.parallel == "fsdp":
            # FSDP2: each block, then the root, shards its parameters, gradients
            # and optimizer state over the ranks (all-gathered for compute).
            from torch.distributed.fsdp import fully_shard

            blocks = {"bert": lambda m: m.layers, "encoder": lambda m: m.transformer.layers}.get(
                plan.family, lambda m: m.blocks
            )(self.raw)
            for block in blocks:
                fully_shard(block)
            fully_shard(self.raw)
        elif self.dist is not None:
            from torch.nn.parallel import DistributedDataParallel as DDP

            model = DDP(model, device_ids=[self.device.index] if plan.is_cuda else None)
        if plan.compile in ("on", "max-autotune"):
            model = torch.compile(model, mode="max-autotune" if plan.compile == "max-autotune" else None)
        self.model = model
        # On a GPU the fused AdamW (one kernel for every parameter; PyTorch's
        # documentation calls it the fastest), except over FSDP's sharded
        # parameters; on a CPU PyTorch's default.
        self.adamw_fused = plan.is_cuda and not (self.dist is not None and plan.parallel == "fsdp")
        self.opt = torch.optim.AdamW(
            self.raw.parameters(),
            lr=plan.lr,
            betas=ADAMW_BETAS,
            eps=ADAMW_EPS,
            weight_decay=plan.weight_decay,
            fused=True if self.adamw_fused else None,
        )

    def _precision(self, plan):
        p = plan.precision
        self.autocast = None
        self.scaler = None
        cuda = plan.is_cuda
        # PyTorch has its own verdict on bfloat16 (is_bf16_supported), asked only for amp-bf16.
        check_precision(
            p,
            cuda,
            capability_major=torch.cuda.get_device_capability(self.device)[0] if cuda else None,
            bf16_supported=torch.cuda.is_bf16_supported() if cuda and p == "amp-bf16" else None,
        )
        torch.backends.cuda.matmul.allow_tf32 = p == "tf32"
        torch.backends.cudnn.allow_tf32 = p == "tf32"
        if p == "fp32":
            self.text = "fp32 everywhere" + ("; TF32 tensor cores off" if cuda else "")
        elif p == "tf32":
            self.text = "fp32 storage; TF32 matmuls and convolutions"
        elif p == "amp-bf16":
            self.autocast = torch.bfloat16
            self.text = f"torch.autocast({self.device.type}, bfloat16); fp32 master weights; no loss scaling"
        else:
            self.autocast = torch.float16
            self.scaler = torch.amp.GradScaler("cuda")
            self.text = "torch.autocast(cuda, float16) with GradScaler (dynamic loss scaling)"

    def param_count(self):
        return self.params

    def precision_in_effect(self):
        return self.text

    def _forward(self, x, y):
        x, y = inputs_and_targets(self.plan, x, y)
        if self.nhwc:
            x = x.contiguous(memory_format=torch.channels_last)
        if self.autocast is not None:
            with torch.autocast(self.device.type, dtype=self.autocast):
                out = self.model(x)
        else:
            out = self.model(x)
        return classification_loss(out, y, self.plan.traits.binary)

    def _backward(self, loss):
        self.opt.zero_grad(set_to_none=True)
        (loss if self.scaler is None else self.scaler.scale(loss)).backward()

    def _update(self):
        if self.scaler is not None:
            self.scaler.step(self.opt)
            self.scaler.update()
        else:
            self.opt.step()

    def _oom(self, e):
        if is_oom(e):
            return WorkerError(
                "oom",
                f"out of memory in a training step of {self.plan.model} "
                f"(batch {self.plan.batch_size} per device): {first_line(e)}",
            )
        return None

    def step(self, idx, lr):
        x, y = self._batch(idx)
        for g in self.opt.param_groups:
            g["lr"] = lr
        try:
            loss = self._forward(x, y)
            self._backward(loss)
            self._update()
        except RuntimeError as e:
            oom = self._oom(e)
            if oom is not None:
                raise oom from e
            raise
        return loss.detach()

    def split_step(self, next_batch, lr, local=False):
        for g in self.opt.param_groups:
            g["lr"] = lr
        times = []
        mark = [monotonic_ns()]

        def lap(phase):
            self.sync()
            now = monotonic_ns()
            times.append((phase, (now - mark[0]) / 1e9))
            mark[0] = now

        try:
            x, y = self._batch(next_batch())
            lap("data")
            if local:
                # The same forward and backward without DDP's gradient
                # all-reduce; the gradients are dropped, no update is applied.
                with self.model.no_sync():
                    mark[0] = monotonic_ns()
                    loss = self._forward(x, y)
                    self.sync()
                    mark[0] = monotonic_ns()
                    self._backward(loss)
                    lap("backward_local")
                self.opt.zero_grad(set_to_none=True)
                return times[1:]
            loss = self._forward(x, y)
            lap("forward")
            self._backward(loss)
            lap("backward")
            self._update()
            lap("optimizer")
        except RuntimeError as e:
            oom = self._oom(e)
            if oom is not None:
                raise oom from e
            raise
        return times

    def local_backward(self):
        # DDP's no_sync under torch.compile would change what is compiled;
        # FSDP has no such switch.
        return self.dist is not None and self.plan.parallel == "ddp" and self.plan.compile == "off"

    def max_over_ranks(self, n):
        if self.dist is None:
            return n
        t = torch.tensor([int(n)], dtype=torch.int64, device=self.device)
        self.dist.all_reduce(t, op=self.dist.ReduceOp.MAX)
        return int(t.item())

    def sync(self):
        if self.plan.is_cuda:
            torch.cuda.synchronize(self.device)

    def loss_values(self, handles):
        t = torch.stack(handles).float()
        if self.dist is not None:  # the mean over every process's batch
            self.dist.all_reduce(t)
            t /= self.world_size
        return t.tolist()

    def finish(self):
        if self.dist is not None:
            self.dist.barrier()
            self.dist.destroy_process_group()


def info():
    gpus = (
        [torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())] if torch.cuda.is_available() else []
    )
    return {"version": torch.__version__, "gpus": gpus, "libraries": {"cuda (torch build)": torch.version.cuda}}


Backend = TorchBackend
