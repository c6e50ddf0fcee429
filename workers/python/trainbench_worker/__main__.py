"""Entry point of the Python workers.

    python -m trainbench_worker FRAMEWORK train [--plan FILE|-]   # the plan on stdin by default
    python -m trainbench_worker FRAMEWORK count                   # model configs (JSON list) on stdin → counts
    python -m trainbench_worker FRAMEWORK info                    # version and devices, one JSON object

FRAMEWORK is pytorch, tensorflow or jax. ``train`` speaks the worker protocol
(docs/protocol.md) on stdout and exits 0 (done), 1 (failed), 2 (bad_config) or
3 (unsupported).
"""

import argparse
import json
import os
import sys
import traceback

from . import protocol
from .protocol import WorkerError, first_line

FRAMEWORKS = {
    "pytorch": ("torch", "torch_worker", "torch==2.13.0"),
    "tensorflow": ("tensorflow", "tf_worker", "tensorflow-cpu"),
    "jax": ("jax", "jax_worker", "jax[cpu] flax optax"),
}


def _import(framework):
    """The framework's module, or an `unsupported` error that says how to install it."""
    package, module, _ = FRAMEWORKS[framework]
    try:
        return __import__(f"trainbench_worker.{module}", fromlist=[module])
    except ImportError as e:
        raise WorkerError(
            "unsupported",
            f"framework = {framework}: cannot import {package} in the environment {sys.prefix} ({e}); "
            f"install it with `trainbench env install {framework}`",
            "framework",
        ) from e


def _launch_env(plan_text, plan):
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


def _launch_nodes(plan_text, plan, framework):
    """Several nodes: inside a Slurm allocation, replace this process with
    ``srun`` starting one process per node. PyTorch: a torchrun each, which
    meet at this host through torchrun's c10d rendezvous and start
    ``devices`` ranks each. JAX: the worker itself, joined by
    ``jax.distributed.initialize`` with this host as coordinator. TensorFlow:
    the worker itself, one MultiWorkerMirroredStrategy worker per node. Global
    rank 0 speaks for the run (its stdout comes back through srun)."""
    import shutil
    import socket

    job = os.environ.get("SLURM_JOB_ID")
    peers = os.environ.get("TRAINBENCH_PEERS")
    if not job and not peers:
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
    job = job or f"ssh-{os.getpid()}"
    host = os.environ.get("TRAINBENCH_RDZV_HOST") or socket.gethostname()
    with socket.socket() as s:  # a free port on this (the first) node for the rendezvous
        s.bind(("", 0))
        port = s.getsockname()[1]
    env = _launch_env(plan_text, plan)
    cmd = [
        srun,
        f"--nodes={plan.nodes}",
        f"--ntasks={plan.nodes}",
        "--ntasks-per-node=1",
        "--kill-on-bad-exit=1",
        sys.executable,
    ]
    if framework == "pytorch":
        cmd += [
            "-m",
            "torch.distributed.run",
            f"--nnodes={plan.nodes}",
            f"--nproc-per-node={plan.devices}",
            "--rdzv-backend=c10d",
            f"--rdzv-endpoint={host}:{port}",
            f"--rdzv-id=trainbench-{job}",
        ]
    elif framework == "jax":
        env["TRAINBENCH_COORDINATOR"] = f"{host}:{port}"
    elif framework == "tensorflow":
        # Every worker's address up front (TF_CONFIG): the allocation's nodes
        # (or this host and its peers) at one port, or, with
        # TRAINBENCH_RDZV_HOST, that host at free ports.
        if os.environ.get("TRAINBENCH_RDZV_HOST"):
            ports = [port]
            while len(ports) < plan.nodes:
                with socket.socket() as s:
                    s.bind(("", 0))
                    ports.append(s.getsockname()[1])
            workers = [f"{host}:{p}" for p in ports]
        elif peers:
            workers = [f"{host}:{port}"] + [f"{p['host']}:{port}" for p in json.loads(peers)[: plan.nodes - 1]]
        else:
            import subprocess

            names = subprocess.run(
                ["scontrol", "show", "hostnames", os.environ.get("SLURM_JOB_NODELIST", "")],
                capture_output=True,
                text=True,
            ).stdout.split()
            if len(names) != plan.nodes:
                raise WorkerError(
                    "unsupported",
                    f"nodes = {plan.nodes}: scontrol lists {len(names)} node(s) in Slurm job {job}",
                    "nodes",
                )
            workers = [f"{n}:{port}" for n in names]
        env["TRAINBENCH_TF_WORKERS"] = ",".join(workers)
        env["TRAINBENCH_COORDINATOR"] = workers[0]
    cmd += ["-m", "trainbench_worker", framework, "train", "--plan", "env:TRAINBENCH_PLAN"]
    sys.stderr.flush()
    protocol.give_back_stdout()
    if srun is None:
        _fan_out_over_ssh(cmd[cmd.index(sys.executable) + 1 :], env, plan, json.loads(peers))
    os.execve(srun, cmd, env)


def _fan_out_over_ssh(args, env, plan, peers):
    """Several nodes over SSH (a host with peers, no Slurm): node 0 here and
    node i on peer i-1 through ``ssh -tt`` (a pseudo-terminal, so that the
    remote side is hung up when this launcher or its ssh dies), each running
    ``python ARGS`` with node rank i; node 0's stdout is this worker's. The
    first node to fail stops the others; exits as node 0 did."""
    import shlex
    import subprocess
    import time

    if len(peers) < plan.nodes - 1:
        raise WorkerError(
            "unsupported",
            f"nodes = {plan.nodes} is not allowed: this host has {len(peers)} peer(s); "
            f"expected at most {len(peers) + 1}",
            "nodes",
        )
    passed = [
        "TRAINBENCH_PLAN",
        "TRAINBENCH_COORDINATOR",
        "TRAINBENCH_TF_WORKERS",
        "OMP_NUM_THREADS",
        protocol.LAUNCH_ENV,
    ]
    procs = [subprocess.Popen([sys.executable, *args], env={**env, "TRAINBENCH_NODE_RANK": "0"})]
    config = os.environ.get("TRAINBENCH_SSH_CONFIG")
    for i, peer in enumerate(peers[: plan.nodes - 1], start=1):
        values = {k: env[k] for k in passed if k in env}
        values.update(PYTHONPATH=peer["workers"], PYTHONUNBUFFERED="1", TRAINBENCH_NODE_RANK=str(i))
        remote = (
            "cd /tmp && "
            + " ".join(f"{k}={shlex.quote(v)}" for k, v in values.items())
            + " exec "
            + shlex.join([peer["python"], *args])
        )
        ssh = ["ssh", *(["-F", config] if config else []), "-o", "BatchMode=yes", "-tt", *peer["ssh"], "--", remote]
        procs.append(subprocess.Popen(ssh, stdin=subprocess.DEVNULL, stdout=sys.stderr.fileno()))
    code = None
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


def _launch_processes(plan_text, plan):
    """Several CPU processes or GPUs for PyTorch: replace this process with
    torchrun, which starts one rank per device; rank 0 speaks for the run."""
    env = _launch_env(plan_text, plan)
    cmd = [
        sys.executable,
        "-m",
        "torch.distributed.run",
        "--standalone",
        f"--nproc-per-node={plan.devices}",
        "-m",
        "trainbench_worker",
        "pytorch",
        "train",
        "--plan",
        "env:TRAINBENCH_PLAN",
    ]
    sys.stderr.flush()
    protocol.give_back_stdout()
    os.execve(sys.executable, cmd, env)


def cmd_train(framework, plan_arg):
    protocol.take_stdout()
    # The framework first: an environment without it (or without numpy) is
    # reported as not installed, with the command that installs it.
    mod = _import(framework)
    from .data import Data
    from .harness import Plan, train

    if plan_arg == "env:TRAINBENCH_PLAN":
        text = os.environ.get("TRAINBENCH_PLAN", "")
        plan = Plan(json.loads(text))
    else:
        text = sys.stdin.read() if plan_arg in (None, "-") else open(plan_arg).read()
        try:
            plan = Plan(json.loads(text))
        except (json.JSONDecodeError, KeyError, TypeError) as e:
            raise WorkerError(
                "bad_config", f"spec = (the text given) is not allowed: expected the studio's worker plan ({e})", "spec"
            ) from e
    if plan.framework != framework:
        raise WorkerError(
            "bad_config", f"framework = {plan.framework} is not allowed: this is the {framework} worker", "framework"
        )
    if plan.nodes > 1 and "WORLD_SIZE" not in os.environ and "TRAINBENCH_COORDINATOR" not in os.environ:
        _launch_nodes(text, plan, framework)
    if framework == "pytorch" and plan.devices > 1 and "WORLD_SIZE" not in os.environ:
        _launch_processes(text, plan)
    rank = os.environ.get("RANK")
    if rank is None and "TRAINBENCH_COORDINATOR" in os.environ:  # a JAX or TensorFlow process of several nodes
        rank = os.environ.get("TRAINBENCH_NODE_RANK", os.environ.get("SLURM_PROCID"))
    if int(rank or "0") != 0:
        protocol.silence()
    try:
        backend = mod.Backend(plan)
        data = Data(plan)
        train(plan, backend, data)
    except WorkerError:
        raise
    except MemoryError as e:
        raise WorkerError("oom", f"out of host memory: {e}") from e
    except Exception as e:  # a framework error becomes an `internal` or `oom` event
        if mod.is_oom(e):
            raise WorkerError("oom", f"out of memory: {first_line(e)}") from e
        traceback.print_exc(file=sys.stderr)
        first = first_line(e) if str(e).strip() else ""
        raise WorkerError("internal", f"{type(e).__name__}: {first}"[:2000]) from e


def cmd_count(framework):
    mod = _import(framework)
    configs = json.load(sys.stdin)
    print(json.dumps([int(mod.count_params(c)) for c in configs]))


def cmd_info(framework):
    mod = _import(framework)
    out = {"framework": framework, "python": sys.version.split()[0], "prefix": sys.prefix, **mod.info()}
    print(json.dumps(out))


def main(argv=None):
    ap = argparse.ArgumentParser(prog="trainbench_worker")
    ap.add_argument("framework", choices=sorted(FRAMEWORKS))
    ap.add_argument("command", choices=["train", "count", "info"])
    ap.add_argument("--plan", default="-")
    args = ap.parse_args(argv)
    try:
        if args.command == "train":
            cmd_train(args.framework, args.plan)
        elif args.command == "count":
            cmd_count(args.framework)
        else:
            cmd_info(args.framework)
    except WorkerError as e:
        if args.command == "train":
            e.emit()
        else:
            print(f"trainbench_worker: {e.message}", file=sys.stderr)
        sys.stdout.flush()
        if os.environ.get("WORLD_SIZE"):
            # A failed rank leaves at once: its peers' collectives must not hold it.
            os._exit(e.exit_code)
        sys.exit(e.exit_code)
    except KeyboardInterrupt:
        sys.exit(130)
    sys.stdout.flush()
    if os.environ.get("WORLD_SIZE") and args.command == "train":
        # A rank that finished leaves without the interpreter's teardown of
        # torch.distributed's threads, which can fail after `done` was said
        # and turn a finished run into a failed launcher exit.
        protocol.flush()
        sys.stderr.flush()
        os._exit(0)


if __name__ == "__main__":
    main()
