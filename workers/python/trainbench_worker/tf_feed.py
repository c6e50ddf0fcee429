"""What the TensorFlow worker feeds its model: the in-memory split placed on
the first device once, an image folder through ``tf.data`` (in the harness's
order), and the held-out split it evaluates on."""

import tensorflow as tf

from .harness import eval_batch, predictions_per_sample
from .images import HostBatch
from .protocol import WorkerError, first_line


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


class TFFeed:
    """The data half of :class:`~.tf_worker.TFBackend`: ``set_data`` and
    ``evaluate``. Reads the backend's ``plan``, ``home`` (the first device),
    ``jit_step``, ``_host_step`` and ``eval_fn``."""

    def set_data(self, data):
        def images(x):  # NCHW → NHWC, once (tf.constant copies the view)
            return x if self.plan.traits.tokens else x.transpose(0, 2, 3, 1)

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
