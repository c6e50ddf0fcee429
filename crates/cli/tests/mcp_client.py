"""A real MCP client (the `mcp` package from PyPI) driving `trainbench mcp`.

Run by crates/cli/tests/mcp.rs as `python mcp_client.py TRAINBENCH DB`, in
the test-only environment `scripts/setup.sh --test` makes. It starts the
server over stdio, calls the tools a test needs, and prints one JSON
document of what each call answered; the Rust test checks the figures
against the CLI's own `--json` output.
"""

import asyncio
import json
import os
import sys

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

# A tiny real run on the CPU (the libtorch worker): a few seconds.
TINY = {"model": "resnet_mini", "steps": 12, "batch_size": 4, "window_steps": 3}
# A search over two batches of it: two probes, then confirmation runs.
SEARCH = {
    "model": "resnet_mini",
    "framework": "tch",
    "precision": "fp32",
    "threads": 1,
    "batch_size": [2, 4],
    "steps": 8,
    "window_steps": 2,
}
QUERY = "SELECT run_id, precision, throughput_samples_per_s FROM q_runs WHERE run_id <= 2 ORDER BY run_id"


def answered(result):
    """A tool result as plain JSON: its error flag, text and document."""
    return {
        "is_error": bool(result.is_error),
        "text": [c.text for c in result.content if getattr(c, "type", "") == "text"],
        "json": result.structured_content,
    }


async def drive(trainbench, db):
    server = StdioServerParameters(
        command=trainbench,
        args=["--db", db, "mcp"],
        # The test's whole environment: OMP_NUM_THREADS=1, NVML off, the
        # worker and libtorch's paths.
        env=dict(os.environ),
    )
    out = {}
    async with stdio_client(server) as (read, write):
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            out["server"] = init.server_info.name
            listed = await session.list_tools()
            out["tools"] = sorted(t.name for t in listed.tools)
            out["schemas"] = {t.name: t.input_schema for t in listed.tools}

            async def call(name, arguments):
                return answered(await session.call_tool(name, arguments))

            runs = await call("runs", {})
            ids = [r["id"] for r in runs["json"]["runs"]]
            out["runs_before"] = ids
            out["compare"] = await call("compare", {"ids": ids[:2]})
            out["compare_bad_ids"] = await call("compare", {"ids": ["one"]})
            out["run_refused"] = await call("start_run", {"settings": dict(TINY, precision="fp64")})
            out["run_own_code"] = await call("start_run", {"settings": dict(TINY, model="mine.py:build")})
            # … nor one hidden in a list's item, which the settings' lists
            # join and split again on commas.
            listed = dict(TINY, model=["resnet_mini,mine.py:build"], input_shape="3x8x8", num_classes=5)
            out["run_own_code_listed"] = await call("start_run", {"settings": listed})
            out["tune_own_script_listed"] = await call(
                "start_tune", {"settings": dict(TINY, model=[",script:train.py"])}
            )
            out["tune_refused"] = await call("start_tune", {"settings": {"steps": 4}})
            out["query"] = await call("query", {"sql": QUERY})
            out["describe"] = await call("describe", {"model": "resnet_mini"})
            # Two runs started at once: the first answered when queued,
            # the second when it has ended (after the first: one queue).
            out["queued"] = await call("start_run", {"settings": TINY})
            out["started"] = await call("start_run", {"settings": TINY, "wait": True})
            out["runs_after"] = await call("runs", {})
            new = out["started"]["json"]["runs"][0]["id"]
            out["run"] = await call("run", {"id": new})
            # A search through the same queue, answered when it has ended.
            out["tuned"] = await call("start_tune", {"settings": SEARCH, "wait": True})
    return out


def main():
    trainbench, db = sys.argv[1], sys.argv[2]
    print(json.dumps(asyncio.run(drive(trainbench, db))))


if __name__ == "__main__":
    main()
