"""What a launcher's processes are given: the plan, the threads per rank,
this package on the path; several nodes only where a Slurm allocation or
peers make them possible."""

import json
import os

import pytest
from conftest import plan_dict
from trainbench_worker import launch
from trainbench_worker.harness import Plan
from trainbench_worker.protocol import WorkerError


def test_the_launched_processes_get_the_plan_threads_and_this_package(monkeypatch):
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    monkeypatch.setenv("PYTHONPATH", "/elsewhere")
    plan = Plan(plan_dict(threads=3))
    env = launch.launch_env('{"plan": 1}', plan)
    assert env["TRAINBENCH_PLAN"] == '{"plan": 1}'
    assert env["OMP_NUM_THREADS"] == "3"
    here = os.path.dirname(os.path.dirname(os.path.abspath(launch.__file__)))
    assert env["PYTHONPATH"] == here + os.pathsep + "/elsewhere"


def test_a_thread_count_set_by_the_caller_is_kept(monkeypatch):
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    env = launch.launch_env("{}", Plan(plan_dict(threads=3)))
    assert env["OMP_NUM_THREADS"] == "1"


def test_threads_are_shared_out_among_the_devices_when_none_are_given(monkeypatch):
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    monkeypatch.setattr(os, "cpu_count", lambda: 8)
    assert Plan(plan_dict(devices=2)).threads() == 4
    assert Plan(plan_dict(devices=16)).threads() == 1


def test_several_nodes_without_slurm_or_peers_are_refused_naming_the_field(monkeypatch):
    monkeypatch.delenv("SLURM_JOB_ID", raising=False)
    monkeypatch.delenv("TRAINBENCH_PEERS", raising=False)
    monkeypatch.delenv("TRAINBENCH_RAY_PYTHON", raising=False)
    plan = Plan(plan_dict(nodes=2))
    with pytest.raises(WorkerError) as e:
        launch.nodes("{}", plan, "pytorch")
    assert e.value.field == "nodes"
    assert "Slurm" in e.value.message


def test_a_slurm_job_without_srun_is_refused(monkeypatch):
    monkeypatch.setenv("SLURM_JOB_ID", "42")
    monkeypatch.setenv("PATH", "/nonexistent")
    with pytest.raises(WorkerError) as e:
        launch.nodes("{}", Plan(plan_dict(nodes=2)), "pytorch")
    assert "srun is not on PATH in Slurm job 42" in e.value.message


def test_a_free_port_can_be_bound():
    import socket

    port = launch.free_port()
    with socket.socket() as s:
        s.bind(("", port))


def test_the_ray_helper_is_told_each_later_node_its_rank_and_the_plan():
    import json

    from trainbench_worker import ray_nodes

    plan = Plan(plan_dict(nodes=3))
    cmd = ray_nodes.fan_out_over_ray("/opt/ray/bin/python", ["-m", "x"], {"TRAINBENCH_PLAN": "{}"}, plan)
    assert cmd[:3] == ["/opt/ray/bin/python", "-m", "trainbench_worker.ray_nodes"]
    spec = json.loads(cmd[3])
    assert spec["args"] == ["-m", "x"]
    assert spec["gpus"] == 0
    assert [n["TRAINBENCH_NODE_RANK"] for n in spec["nodes"]] == ["1", "2"]
    assert [n["PET_NODE_RANK"] for n in spec["nodes"]] == ["1", "2"]
    assert all(n["TRAINBENCH_PLAN"] == "{}" for n in spec["nodes"])


def test_tensorflow_over_ray_nodes_is_refused_without_one_meeting_host(monkeypatch):
    monkeypatch.delenv("SLURM_JOB_ID", raising=False)
    monkeypatch.delenv("TRAINBENCH_RDZV_HOST", raising=False)
    monkeypatch.setenv("TRAINBENCH_RAY_PYTHON", "/opt/ray/bin/python")
    with pytest.raises(WorkerError) as e:
        launch.nodes("{}", Plan(plan_dict(nodes=2)), "tensorflow")
    assert e.value.field == "nodes"
    assert "TensorFlow on a Ray cluster" in e.value.message


def test_a_ray_node_runs_its_worker_with_its_values_and_the_kits_workers(tmp_path, monkeypatch):
    import sys

    from trainbench_worker import ray_nodes

    monkeypatch.chdir(tmp_path)
    script = "import os, sys; print(os.environ['PYTHONPATH']); sys.exit(int(os.environ['CODE']))"
    assert ray_nodes.run_node(sys.executable, ["-c", script], {"CODE": "3"}) == 3
    assert ray_nodes.run_node(sys.executable, ["-c", script], {"CODE": "0"}) == 0


def test_pytorch_nodes_outside_slurm_are_ranked_by_node_not_by_name(monkeypatch):
    """Over SSH peers or Ray only node 0's output is the run's: torchrun's
    static rendezvous ranks nodes by PET_NODE_RANK, where c10d ranked them by
    host name and process id. Under Slurm (every node's output gathered)
    c10d stays."""
    from trainbench_worker import launchers

    plan = Plan(plan_dict(nodes=2, devices=3))
    monkeypatch.delenv("SLURM_JOB_ID", raising=False)
    args = launchers.torch_nodes(plan, "node0", 1234, "ssh-1", [], {})
    assert "--rdzv-backend=static" in args
    assert "--master-addr=node0" in args and "--master-port=1234" in args
    assert "--nnodes=2" in args and "--nproc-per-node=3" in args
    monkeypatch.setenv("SLURM_JOB_ID", "42")
    args = launchers.torch_nodes(plan, "node0", 1234, "42", None, {})
    assert "--rdzv-backend=c10d" in args and "--rdzv-endpoint=node0:1234" in args
    from trainbench_worker.protocol import node_rank_env

    assert node_rank_env(2) == {"TRAINBENCH_NODE_RANK": "2", "PET_NODE_RANK": "2"}


# A worker that only launches (several devices, or several nodes not yet
# started) starts the run's processes without importing the framework: they
# import it themselves. Run in a child Python whose launcher is replaced by
# one that reports what was imported by then.
LAUNCHER_PROBE = """
import json, sys
from trainbench_worker import launch
from trainbench_worker.__main__ import cmd_train

def report(*args):
    print(json.dumps({"launched": args[2], "imported": sorted(m for m in ("torch", "tensorflow", "jax") if m in sys.modules)}), file=sys.stderr)
    sys.exit(0)

launch.devices = launch.nodes = report
cmd_train(sys.argv[1], "-")
"""


@pytest.mark.parametrize(
    ("framework", "spec", "launched"),
    [("pytorch", {"devices": 2}, "pytorch"), ("pytorch", {"nodes": 2}, "pytorch")],
)
def test_a_launching_worker_imports_no_framework(framework, spec, launched):
    """(This Python has PyTorch only: the other frameworks' workers launch
    through the same code.)"""
    import subprocess
    import sys

    plan = plan_dict(**spec)
    plan["framework"] = framework
    env = {k: v for k, v in os.environ.items() if k not in ("WORLD_SIZE", "TRAINBENCH_COORDINATOR")}
    env["PYTHONPATH"] = os.path.dirname(os.path.dirname(os.path.abspath(launch.__file__)))
    out = subprocess.run(
        [sys.executable, "-c", LAUNCHER_PROBE, framework],
        input=json.dumps(plan),
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    said = json.loads(out.stderr.strip().splitlines()[-1])
    assert said == {"launched": launched, "imported": []}


def test_a_worker_that_trains_on_one_device_is_no_launcher(monkeypatch):
    from trainbench_worker.__main__ import _early_plan, _launches

    monkeypatch.delenv("WORLD_SIZE", raising=False)
    monkeypatch.delenv("TRAINBENCH_COORDINATOR", raising=False)

    def launches(framework, plan):
        early = _early_plan(framework, json.dumps(plan))
        return early is not None and _launches(framework, early)

    one = plan_dict()
    one["framework"] = "pytorch"
    assert not launches("pytorch", one)
    # JAX trains several devices of one host in one process: no launcher.
    two = plan_dict(devices=2)
    two["framework"] = "jax"
    assert not launches("jax", two)
    # A rank of a launched run, and a plan that does not parse, are none either.
    two["framework"] = "pytorch"
    assert launches("pytorch", two)
    monkeypatch.setenv("WORLD_SIZE", "2")
    assert not launches("pytorch", two)
    monkeypatch.delenv("WORLD_SIZE")
    assert _early_plan("pytorch", "not json") is None
