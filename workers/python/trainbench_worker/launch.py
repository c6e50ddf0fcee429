"""Starting a run of several devices or nodes, the same way for every
framework: the plan handed on through the environment, one process per node
under Slurm's ``srun``, over SSH to a host's peers, or as Ray tasks on other
nodes of a Ray cluster (``ray_nodes``), node 0's stdout the worker's. What
differs by framework (the launcher each process is started with) is in
``launchers``, which imports no framework.
"""

from __future__ import annotations

import json
import os
import sys
from typing import TYPE_CHECKING, NoReturn

from . import protocol
from .launchers import NODES, Peer, free_port
from .protocol import WorkerError

if TYPE_CHECKING:
    from .harness import Plan


def launch_env(plan_text: str, plan: Plan) -> dict[str, str]:
    """The environment of the processes a launcher starts: the plan, when
    this process started, the threads per rank, and this package on the path
    (torchrun's rendezvous and every rank import it)."""
    env = dict(os.environ)
    start = protocol.process_start_ns()
    if start is not None:
        env[protocol.LAUNCH_ENV] = str(start)
    env["TRAINBENCH_PLAN"] = plan_text
    env.setdefault("OMP_NUM_THREADS", str(plan.threads()))
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env["PYTHONPATH"] = here + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env


def nodes(plan_text: str, plan: Plan, framework: str) -> NoReturn:
    """Several nodes: inside a Slurm allocation, replace this process with
    ``srun`` starting one process per node (what ``launchers.NODES`` says);
    on a host with peers, node 0 here and the others over SSH. Global rank 0
    speaks for the run (its stdout comes back through srun or is this one)."""
    import shutil
    import socket

    job = os.environ.get("SLURM_JOB_ID")
    peers_text = os.environ.get("TRAINBENCH_PEERS")
    peers: list[Peer] | None = json.loads(peers_text) if peers_text else None
    ray_python = os.environ.get("TRAINBENCH_RAY_PYTHON")
    if ray_python and framework == "tensorflow" and not os.environ.get("TRAINBENCH_RDZV_HOST"):
        raise WorkerError(
            "unsupported",
            f"nodes = {plan.nodes} is not allowed for TensorFlow on a Ray cluster: every "
            "worker's address must be known before any starts; expected 1 (or PyTorch or JAX)",
            "nodes",
        )
    if not job and not peers_text and not ray_python:
        raise WorkerError(
            "unsupported",
            f"nodes = {plan.nodes} is not allowed here: several nodes need a Slurm "
            "allocation or a host with peers (`trainbench host add NAME ssh://login "
            "--slurm`, or `--peer ssh://node2`); expected 1",
            "nodes",
        )
    srun = shutil.which("srun") if job else None
    if job and not srun:
        raise WorkerError("unsupported", f"nodes = {plan.nodes}: srun is not on PATH in Slurm job {job}", "nodes")
    job = job or f"{'ray' if ray_python else 'ssh'}-{os.getpid()}"
    host = os.environ.get("TRAINBENCH_RDZV_HOST") or socket.gethostname()
    port = free_port()  # on this (the first) node, for the nodes to meet
    env = launch_env(plan_text, plan)
    # What each node runs after ``python``.
    args = [
        *NODES[framework](plan, host, port, job, peers, env),
        "-m",
        "trainbench_worker",
        framework,
        "train",
        "--plan",
        "env:TRAINBENCH_PLAN",
    ]
    sys.stderr.flush()
    protocol.give_back_stdout()
    if srun is None and ray_python:
        from .ray_nodes import fan_out_over_ray

        run_nodes(args, env, [fan_out_over_ray(ray_python, args, passed_values(env), plan)])
    if srun is None:
        assert peers is not None  # no Slurm job: the host's peers (refused above when none)
        fan_out_over_ssh(args, env, plan, peers)
    cmd = [
        srun,
        f"--nodes={plan.nodes}",
        f"--ntasks={plan.nodes}",
        "--ntasks-per-node=1",
        "--kill-on-bad-exit=1",
        sys.executable,
        *args,
    ]
    os.execve(srun, cmd, env)


def devices(plan_text: str, plan: Plan, framework: str, launcher: list[str]) -> NoReturn:
    """Several devices on this node through the framework's launcher (one
    rank per device): replace this process with it; rank 0 speaks."""
    env = launch_env(plan_text, plan)
    cmd = [sys.executable, *launcher, "-m", "trainbench_worker", framework, "train", "--plan", "env:TRAINBENCH_PLAN"]
    sys.stderr.flush()
    protocol.give_back_stdout()
    os.execve(sys.executable, cmd, env)


def fan_out_over_ssh(args: list[str], env: dict[str, str], plan: Plan, peers: list[Peer]) -> NoReturn:
    """Several nodes over SSH (a host with peers, no Slurm): node 0 here and
    node i on peer i-1 through ``ssh -tt`` (a pseudo-terminal, so that the
    remote side is hung up when this launcher or its ssh dies), each running
    ``python ARGS`` with node rank i; node 0's stdout is this worker's. The
    first node to fail stops the others; exits as node 0 did."""
    import shlex

    if len(peers) < plan.nodes - 1:
        raise WorkerError(
            "unsupported",
            f"nodes = {plan.nodes} is not allowed: this host has {len(peers)} peer(s); "
            f"expected at most {len(peers) + 1}",
            "nodes",
        )
    config = os.environ.get("TRAINBENCH_SSH_CONFIG")
    commands = []
    for i, peer in enumerate(peers[: plan.nodes - 1], start=1):
        values = passed_values(env)
        values.update(PYTHONPATH=peer["workers"], PYTHONUNBUFFERED="1", **protocol.node_rank_env(i))
        remote = (
            "cd /tmp && "
            + " ".join(f"{k}={shlex.quote(v)}" for k, v in values.items())
            + " exec "
            + shlex.join([peer["python"], *args])
        )
        commands.append(
            ["ssh", *(["-F", config] if config else []), "-o", "BatchMode=yes", "-tt", *peer["ssh"], "--", remote]
        )
    run_nodes(args, env, commands)


def passed_values(env: dict[str, str]) -> dict[str, str]:
    """What the nodes after the first need of this one's environment: the
    plan and how the nodes meet."""
    passed = [
        "TRAINBENCH_PLAN",
        "TRAINBENCH_COORDINATOR",
        "TRAINBENCH_TF_WORKERS",
        "OMP_NUM_THREADS",
        protocol.LAUNCH_ENV,
    ]
    return {k: env[k] for k in passed if k in env}


def run_nodes(args: list[str], env: dict[str, str], others: list[list[str]]) -> NoReturn:
    """Node 0 here (``python ARGS``, its stdout this worker's) and the
    commands that start the others (their output on stderr). The first to
    fail stops the others; exits as node 0 did."""
    import subprocess
    import time

    procs = [subprocess.Popen([sys.executable, *args], env={**env, **protocol.node_rank_env(0)})]
    for command in others:
        procs.append(subprocess.Popen(command, env=env, stdin=subprocess.DEVNULL, stdout=sys.stderr.fileno()))
    code: int | None = None
    while code is None:
        for p in procs:
            rc = p.poll()
            if rc is not None and (rc != 0 or p is procs[0]):
                code = rc
                break
        time.sleep(0.2)
    deadline = time.monotonic() + (60 if code == 0 else 0)
    for p in procs[1:]:
        try:
            p.wait(timeout=max(deadline - time.monotonic(), 0.1))
        except subprocess.TimeoutExpired:
            p.kill()
    if procs[0].poll() is None:
        procs[0].kill()
    sys.stdout.flush()
    os._exit(procs[0].wait() if code == 0 else (code or 1))
