"""The same CNN as a Flax (linen) user writes it (NHWC)."""

from flax import linen


class Net(linen.Module):
    @linen.compact
    def __call__(self, x):
        x = linen.max_pool(linen.relu(linen.Conv(32, (3, 3))(x)), (2, 2), (2, 2))
        x = linen.max_pool(linen.relu(linen.Conv(64, (3, 3))(x)), (2, 2), (2, 2))
        x = linen.relu(linen.Dense(128)(x.reshape((x.shape[0], -1))))
        return linen.Dense(10)(x)


def build():
    return Net()
