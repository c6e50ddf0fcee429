"""The operator profile's reducer: self time by nesting, busy time as the
union of top-level intervals, categories that add up, the rest of the
operators counted."""

import pytest
from trainbench_worker import profiling


def ev(name, ts, dur, track=0, category="matmul"):
    return {"name": name, "ts": ts, "dur": dur, "track": track, "category": category}


def test_a_child_is_taken_out_of_its_parents_self_time():
    parent, child, grandchild = ev("outer", 0, 100), ev("inner", 10, 50), ev("leaf", 20, 10)
    other_track = ev("elsewhere", 10, 50, track=1)
    events = [grandchild, parent, child, other_track]
    profiling.self_times(events)
    assert (parent["self"], child["self"], grandchild["self"]) == (50, 40, 10)
    assert child["parent"] is parent and grandchild["parent"] is child
    assert other_track["parent"] is None and other_track["self"] == 50


def test_busy_time_is_the_union_of_overlapping_intervals():
    assert profiling.busy_us([ev("a", 0, 10), ev("b", 5, 10), ev("c", 30, 5)]) == 20
    assert profiling.busy_us([]) == 0


def test_reduce_adds_categories_lists_the_top_operators_and_counts_the_rest():
    cats = profiling.CATEGORIES
    events = [ev(f"op{i}", i * 10, 10, category=cats[i % len(cats)]) for i in range(profiling.TOP_OPS + 5)]
    profiling.self_times(events)
    out = profiling.reduce(events, span_s=0.01, steps=2, tool="t", timeline="host", what="w")
    assert len(out["ops"]) == profiling.TOP_OPS
    assert out["other_ops"]["count"] == 5
    total = sum(c["self_s"] for c in out["categories"])
    assert total == pytest.approx(sum(e["dur"] for e in events) / 1e6)
    assert out["busy_s"] == pytest.approx(min(len(events) * 10 / 1e6, 0.01))
    assert out["idle_s"] == pytest.approx(max(0.01 - len(events) * 10 / 1e6, 0.0))
    assert [c["category"] for c in out["categories"]] == list(cats)


def test_operators_on_two_tracks_at_once_are_scaled_to_the_busy_time():
    # Two devices of one process run the same step side by side: 80 µs of
    # matmul and 20 µs of elementwise each, in a span of 150 µs.
    events = []
    for track in (0, 1):
        events += [
            ev("dot", 0, 80, track=track, category="matmul_conv"),
            ev("add", 80, 20, track=track, category="norm_elementwise"),
        ]
    profiling.self_times(events)
    out = profiling.reduce(events, span_s=150e-6, steps=1, tool="t", timeline="device", what="w")
    cats = {c["category"]: c["self_s"] for c in out["categories"]}
    assert cats["matmul_conv"] == pytest.approx(80e-6) and cats["norm_elementwise"] == pytest.approx(20e-6)
    assert sum(cats.values()) + out["idle_s"] == pytest.approx(150e-6)
    assert out["ops"][0] == {"name": "dot", "category": "matmul_conv", "self_s": pytest.approx(80e-6), "calls": 2}
    assert "summed to 2.00× the busy time" in out["what"]
    # One track: nothing scaled, nothing said.
    one = [e for e in events if e["track"] == 0]
    out = profiling.reduce(one, span_s=150e-6, steps=1, tool="t", timeline="device", what="w")
    assert sum(c["self_s"] for c in out["categories"]) == pytest.approx(100e-6) and out["what"] == "w"


def test_operators_are_categorised_by_their_names():
    assert profiling.category_of_name("aten::mm") != profiling.category_of_name("aten::add_")
