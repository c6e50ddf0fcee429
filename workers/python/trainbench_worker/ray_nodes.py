"""The nodes after the first of a run on a Ray cluster: each a Ray task
pinned to a node of its own (not the one node 0 runs on), which runs the
node's worker as a child process that dies with it.

Used twice. In the worker on node 0 (the PyTorch, JAX … environment, which
need not have Ray), ``fan_out_over_ray`` says the command that starts the
helper with the cluster's Python (``TRAINBENCH_RAY_PYTHON``, an interpreter
the host's check found importing ray). That helper
(``python -m trainbench_worker.ray_nodes SPEC``) joins the cluster, picks
the nodes, starts the tasks (with the job's kit as their working folder),
says on stderr which node runs which rank, and
exits as soon as one fails, or when all have ended.
"""

from __future__ import annotations

import json
import os
import sys
from typing import TYPE_CHECKING, Any

from .protocol import node_rank_env

if TYPE_CHECKING:
    from .harness import Plan

# The workers' folder inside the kit (the task's working folder).
WORKERS = "share/trainbench/workers/python"


def fan_out_over_ray(ray_python: str, args: list[str], passed: dict[str, str], plan: Plan) -> list[str]:
    """The command that starts nodes 1 … N-1 as Ray tasks, each with
    ``passed`` (the plan and how the nodes meet) and its node rank."""
    spec = {
        "python": sys.executable,
        "args": args,
        "nodes": [{**passed, "PYTHONUNBUFFERED": "1", **node_rank_env(i)} for i in range(1, plan.nodes)],
        "gpus": plan.devices if plan.device != "cpu" else 0,
    }
    return [ray_python, "-m", "trainbench_worker.ray_nodes", json.dumps(spec)]


def run_node(python: str, args: list[str], values: dict[str, str]) -> int:
    """One node's worker, in a Ray task: a child process that is killed when
    the task's process dies (the helper gone, the job stopped); its exit
    code."""
    import ctypes
    import signal
    import subprocess

    def die_with_parent() -> None:
        pr_set_pdeathsig = 1
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(pr_set_pdeathsig, signal.SIGKILL)

    import tempfile

    # The task starts in the kit's folder; the child works elsewhere, since
    # Ray may unpack the kit again while the job runs.
    env = {**os.environ, **values, "PYTHONPATH": os.path.join(os.getcwd(), WORKERS)}
    child = subprocess.Popen(
        [python, *args], env=env, cwd=tempfile.gettempdir(), stdin=subprocess.DEVNULL, preexec_fn=die_with_parent
    )
    return child.wait()


def main() -> None:
    """The helper: the other nodes' tasks, each on a node of its own."""
    import ray
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    spec: dict[str, Any] = json.loads(sys.argv[1])
    # The job's driver is given the cluster's address (RAY_ADDRESS) and the
    # job's runtime environment (the kit as working folder); this helper,
    # its grandchild, inherits both, and so do the tasks it starts.
    ray.init(address=os.environ.get("RAY_ADDRESS", "auto"), logging_level="ERROR")
    here = ray.get_runtime_context().get_node_id()
    gpus = int(spec["gpus"])
    others = [
        n
        for n in ray.nodes()
        if n["Alive"]
        and n["NodeID"] != here
        and n["Resources"].get("CPU", 0) >= 1
        and n["Resources"].get("GPU", 0) >= gpus
    ]
    wanted = len(spec["nodes"])
    if len(others) < wanted:
        print(
            f"trainbench: nodes = {wanted + 1} is not possible on this Ray cluster: besides the first node's, "
            f"{len(others)} node(s) have a CPU{f' and {gpus} GPU(s)' if gpus else ''}",
            file=sys.stderr,
            flush=True,
        )
        sys.exit(3)
    task = ray.remote(run_node)
    refs = []
    for node, values in zip(others, spec["nodes"]):
        print(f"[ray] node {values['TRAINBENCH_NODE_RANK']} on Ray node {node['NodeID']}", file=sys.stderr, flush=True)
        strategy = NodeAffinitySchedulingStrategy(node_id=node["NodeID"], soft=False)
        refs.append(
            task.options(scheduling_strategy=strategy, num_cpus=1, num_gpus=gpus).remote(
                spec["python"], spec["args"], values
            )
        )
    while refs:
        ready, refs = ray.wait(refs, num_returns=1)
        code = int(ray.get(ready[0]))
        if code != 0:
            sys.exit(code)


if __name__ == "__main__":
    main()
