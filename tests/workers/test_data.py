"""The data every Python framework trains on: the MNIST and text splits, and
the batch order (the same indices for a seed, every sample once an epoch,
each rank its own slice of the global batch)."""

import gzip

import numpy as np
import pytest
from conftest import plan_dict
from trainbench_worker.data import MNIST_MEAN, MNIST_STD, Data, load_mnist, load_text
from trainbench_worker.harness import Plan
from trainbench_worker.protocol import WorkerError


def mnist_file(tmp_path, per_class=20):
    """A gzip CSV in the MNIST sample's layout: 784 pixels then the label,
    the classes interleaved, each image's pixels equal to its row number."""
    rows = []
    for i in range(10 * per_class):
        rows.append([i % 256] * 784 + [i % 10])
    path = tmp_path / "mnist.csv.gz"
    with gzip.open(path, "wt") as f:
        for r in rows:
            f.write(",".join(str(v) for v in r) + "\n")
    return str(path)


def test_mnist_holds_out_every_tenth_image_of_each_class(tmp_path):
    tx, ty, ex, ey = load_mnist(mnist_file(tmp_path, per_class=20))
    assert tx.shape == (180, 1, 28, 28) and ex.shape == (20, 1, 28, 28)
    assert np.bincount(ey, minlength=10).tolist() == [2] * 10
    assert np.bincount(ty, minlength=10).tolist() == [18] * 10
    # Row i is the (i // 10)-th image of class i % 10: the 10th and 20th of each are held out.
    rows = np.rint((ex[:, 0, 0, 0] * MNIST_STD + MNIST_MEAN) * 255).astype(int)
    assert sorted(rows.tolist()) == list(range(90, 100)) + list(range(190, 200))


def test_a_file_that_is_not_the_mnist_csv_is_refused_naming_the_field(tmp_path):
    path = tmp_path / "not.csv.gz"
    with gzip.open(path, "wt") as f:
        f.write("1,2,3\n4,5,6\n")
    with pytest.raises(WorkerError) as e:
        load_mnist(str(path))
    assert e.value.field == "data_path" and "785" in e.value.message


def test_text_trains_on_the_first_nine_tenths_and_holds_out_the_rest(tmp_path):
    path = tmp_path / "corpus.txt"
    path.write_bytes(bytes(range(256)) * 8)
    tx, _, ex, _ = load_text(str(path), seq_len=16)
    assert tx.shape[1] == ex.shape[1] == 17
    # The held-out sequences start where the training bytes end.
    split = int(2048 * 0.9)
    assert len(tx) == (split - 1) // 16
    assert ex[0, 0] == split % 256


def mnist_data(tmp_path, seed=7, **spec):
    plan = Plan(plan_dict(data="mnist", data_path=mnist_file(tmp_path), seed=seed, **spec))
    return Data(plan)


def epoch_indices(data):
    return np.concatenate([data.next_batch() for _ in range(data.steps_per_epoch)])


def test_each_epoch_takes_every_sample_at_most_once_in_a_new_order(tmp_path):
    data = mnist_data(tmp_path, batch_size=16)
    first, second = epoch_indices(data), epoch_indices(data)
    assert len(first) == data.samples_per_epoch == 176
    assert len(set(first.tolist())) == len(first)
    assert not np.array_equal(first, second)


def test_one_seed_gives_one_order_and_another_seed_another(tmp_path):
    a = epoch_indices(mnist_data(tmp_path, seed=3))
    b = epoch_indices(mnist_data(tmp_path, seed=3))
    c = epoch_indices(mnist_data(tmp_path, seed=4))
    assert np.array_equal(a, b)
    assert not np.array_equal(a, c)


def test_each_rank_takes_its_own_slice_of_every_global_batch(tmp_path):
    whole = mnist_data(tmp_path, batch_size=8, devices=2).orders()
    ranks = [mnist_data(tmp_path, batch_size=8, devices=2).orders(rank=r, per_rank=8) for r in (0, 1)]
    for _ in range(30):
        idx, epoch = next(whole)
        parts = [next(r) for r in ranks]
        assert np.array_equal(np.concatenate([p[0] for p in parts]), idx)
        assert {p[1] for p in parts} == {epoch}


def test_synthetic_data_cycles_contiguous_batches_of_its_pool():
    data = Data(Plan(plan_dict(batch_size=8, synthetic_samples=24)))
    starts = [int(data.next_batch()[0]) for _ in range(5)]
    assert starts == [0, 8, 16, 0, 8]


def test_a_global_batch_larger_than_the_data_is_refused_naming_the_batch(tmp_path):
    with pytest.raises(WorkerError) as e:
        mnist_data(tmp_path, batch_size=512)
    assert e.value.field == "batch_size"
    assert "180 training samples" in e.value.message
