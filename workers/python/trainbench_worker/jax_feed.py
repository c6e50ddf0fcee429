"""What the JAX worker feeds its model: the in-memory split replicated on
the mesh once, an image folder through a NumPy pipeline sharded by samples,
and the held-out split padded into one compiled evaluation."""

import jax
import numpy as np
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

from .harness import eval_batch, predictions_per_sample
from .images import HostBatch
from .protocol import unsupported


class JaxFeed:
    """The data half of :class:`~.jax_worker.JaxBackend`: ``set_data`` and
    ``evaluate``. Reads the backend's ``plan``, ``multi``, ``mesh``,
    ``devices``, ``replicated``, ``batch_sharding``, ``state``,
    ``_batch_step`` and ``_evaluate``."""

    def _put(self, a, sharding):
        """A host array as a jax.Array with ``sharding``: device_put in one
        process; across processes, each gives the shards its devices hold
        (every process holds the same host data)."""
        if not self.multi:
            return jax.device_put(a, sharding)
        return jax.make_array_from_callback(a.shape, sharding, lambda index: a[index])

    def set_data(self, data):
        if data.streamed and self.multi:
            raise unsupported("data = folder with nodes > 1 is not built for JAX yet: expected 1 node", "nodes")
        if data.streamed:
            self._set_stream(data)
            return
        x, y = data.train
        if self.plan.traits.tokens:
            x = x.astype(np.int32)
        else:
            x = np.ascontiguousarray(x.transpose(0, 2, 3, 1))  # NCHW → NHWC
        # Replicated: every device gathers its share of each batch locally.
        self.x = self._put(x, self.replicated)
        self.y = self._put(y.astype(np.int32), self.replicated)
        if data.eval is not None:
            self._set_eval(*data.eval)

    def _set_stream(self, data):
        """An image folder through a NumPy pipeline: ``loader_workers``
        threads decode and augment whole global batches with Pillow (NHWC),
        two per thread ahead; each batch is put on the mesh sharded by
        samples, and the step takes it as it is."""
        from . import images

        n = int(self.plan.loader_workers)
        size = int(self.plan.config["image_size"])
        files, labels = data.train
        seed = self.plan.seed

        def make(order, epoch):
            x, y = images.train_batch(files, labels, order, size, seed, epoch, channels_last=True)
            return HostBatch(x, y.astype(np.int32))

        self.jitted = jax.jit(
            self._batch_step,
            in_shardings=(self.replicated, self.batch_sharding, self.batch_sharding, self.replicated),
            out_shardings=(self.replicated, self.replicated),
            donate_argnums=0,
        )
        where = (
            f"{n} decoding thread{'s' if n > 1 else ''}, 2 batches ahead each"
            if n
            else "decoded on the training thread, nothing ahead"
        )
        data.attach(
            images.ThreadLoader(make, data.orders(), n),
            f"NumPy pipeline ({where}); Pillow decode, RandomResizedCrop, flip, normalise; "
            "jax.device_put sharded over the mesh",
        )
        if data.eval is not None:
            self._set_eval(*data.eval)

    def _set_eval(self, x, y):
        """The held-out split in batches of EVAL_BATCH (fewer if the split is
        smaller; a multiple of the devices), padded with weight-0 samples and
        sharded over the mesh, so one compiled scan evaluates it all."""
        n = len(y)
        devices = len(self.devices)
        b = -(-min(eval_batch(self.plan), n) // devices) * devices
        batches = -(-n // b)
        pad = batches * b - n
        if not self.plan.traits.tokens:
            x = x.transpose(0, 2, 3, 1)
        x = np.concatenate([x, np.zeros((pad,) + x.shape[1:], x.dtype)])
        y = np.concatenate([y.astype(np.int32), np.zeros(pad, np.int32)])
        w = np.concatenate([np.ones(n, np.float32), np.zeros(pad, np.float32)])
        sharding = NamedSharding(self.mesh, P(None, "data"))
        self.eval_n = n

        self.ex, self.ey, self.ew = (self._put(a.reshape((batches, b) + a.shape[1:]), sharding) for a in (x, y, w))
        self.eval_fn = jax.jit(
            self._evaluate, in_shardings=(self.replicated, sharding, sharding, sharding), out_shardings=self.replicated
        )

    def evaluate(self):
        variables = {"params": self.state["params"], **self.state["model_state"]}
        correct, total_loss = jax.device_get(self.eval_fn(variables, self.ex, self.ey, self.ew))
        predictions = self.eval_n * predictions_per_sample(self.plan)
        return float(correct) / predictions, float(total_loss) / predictions, self.eval_n
