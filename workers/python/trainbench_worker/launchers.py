"""What starts each framework's processes when a run spans several devices
or nodes (``launch`` does the starting, the same way for every framework).

Kept apart from the framework modules: a worker that only launches imports
no framework. Its processes import their own, so importing it here as well
cost every run over several devices or nodes one more framework import
before its first step (2.2 s of CPU for PyTorch, 3.5 s for TensorFlow on a
2-core machine), which a person's own ``torchrun script.py`` does not pay.

- ``NODES[framework](plan, host, port, job, peers, env)``: the arguments that
  start one node's processes after ``python`` (``[]``: the worker itself),
  setting in ``env`` what the nodes need to meet;
- ``DEVICES[framework](plan)``: the arguments of a launcher that starts one
  process per device on this node (PyTorch's torchrun); absent for a
  framework whose one process trains every device.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import TYPE_CHECKING, TypedDict

from .protocol import WorkerError

if TYPE_CHECKING:
    from .harness import Plan


class Peer(TypedDict):
    """One of a host's peers, as ``TRAINBENCH_PEERS`` lists them."""

    host: str
    ssh: list[str]
    python: str
    workers: str


def free_port() -> int:
    """A free TCP port on this machine."""
    import socket

    with socket.socket() as s:
        s.bind(("", 0))
        port: int = s.getsockname()[1]
        return port


NodeLaunch = Callable[["Plan", str, int, str, "list[Peer] | None", dict[str, str]], list[str]]
DeviceLaunch = Callable[["Plan"], list[str]]


def torch_nodes(plan: Plan, host: str, port: int, job: str, peers: list[Peer] | None, env: dict[str, str]) -> list[str]:
    """A torchrun on each node, meeting at ``host:port``, ``devices`` ranks each.

    Under Slurm, through torchrun's c10d rendezvous: ``srun`` gathers every
    node's output, so global rank 0 may be on any node. Elsewhere (a host's
    peers over SSH, a Ray cluster) only node 0's output is the run's, and
    c10d ranks nodes by host name and process id, which put rank 0 on a
    peer whose name sorts first (the run then ended "without a done
    event"). There the rendezvous is static: node 0 serves it and each
    node's ``--node-rank`` is its ``PET_NODE_RANK`` (``launch``)."""
    common = ["-m", "torch.distributed.run", f"--nnodes={plan.nodes}", f"--nproc-per-node={plan.devices}"]
    if "SLURM_JOB_ID" in os.environ:
        return [*common, "--rdzv-backend=c10d", f"--rdzv-endpoint={host}:{port}", f"--rdzv-id=trainbench-{job}"]
    return [*common, "--rdzv-backend=static", f"--master-addr={host}", f"--master-port={port}"]


def torch_devices(plan: Plan) -> list[str]:
    """Several devices on one node: torchrun starts one rank per device."""
    return ["-m", "torch.distributed.run", "--standalone", f"--nproc-per-node={plan.devices}"]


def jax_nodes(plan: Plan, host: str, port: int, job: str, peers: list[Peer] | None, env: dict[str, str]) -> list[str]:
    """The worker itself on each node, joined by ``jax.distributed.initialize``
    with this host as coordinator."""
    env["TRAINBENCH_COORDINATOR"] = f"{host}:{port}"
    return []


def tf_nodes(plan: Plan, host: str, port: int, job: str, peers: list[Peer] | None, env: dict[str, str]) -> list[str]:
    """The worker itself on each node, one MultiWorkerMirroredStrategy worker
    per node. Every worker's address is given up front (TF_CONFIG): the
    allocation's nodes (or this host and its peers) at one port, or, with
    TRAINBENCH_RDZV_HOST, that host at free ports."""
    if os.environ.get("TRAINBENCH_RDZV_HOST"):
        ports = [port]
        while len(ports) < plan.nodes:
            ports.append(free_port())
        workers = [f"{host}:{p}" for p in ports]
    elif peers:
        workers = [f"{host}:{port}"] + [f"{p['host']}:{port}" for p in peers[: plan.nodes - 1]]
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
    return []


NODES: dict[str, NodeLaunch] = {"pytorch": torch_nodes, "jax": jax_nodes, "tensorflow": tf_nodes}
DEVICES: dict[str, DeviceLaunch] = {"pytorch": torch_devices}
