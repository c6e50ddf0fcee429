"""A worker's temporary files go with it: TensorFlow's autograph writes each
converted function's source to the temp folder and removes it in an exit
handler, which a worker leaving without the interpreter's teardown skips
(``__main__._leave``); the worker's own temp folder (``scratch``) goes either
way."""

import os
import subprocess
import sys
import textwrap

from trainbench_worker import __main__ as entry

PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(entry.__file__)))


def _worker(tmp, body: str) -> subprocess.CompletedProcess:
    """A process that takes the worker's temp folder, writes a file there as
    autograph does (removed by an exit handler), then ends as ``body`` says."""
    script = textwrap.dedent(
        """
        import atexit, os, subprocess, sys, tempfile
        from trainbench_worker import __main__ as entry, scratch
        scratch.take()
        with tempfile.NamedTemporaryFile("w", suffix=".py", prefix="__autograph_generated_file", delete=False) as f:
            f.write("x = 1\\n")
        atexit.register(lambda: os.remove(f.name))
        print(os.path.dirname(f.name), flush=True)
        """
    ) + textwrap.dedent(body)
    env = {**os.environ, "PYTHONPATH": PACKAGE, "TMPDIR": str(tmp)}
    return subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, env=env)


def test_a_worker_leaving_without_teardown_leaves_no_temporary_file(tmp_path):
    out = _worker(tmp_path, "entry._leave(0)\n")
    assert out.returncode == 0, out.stderr
    folder = out.stdout.strip()
    assert os.path.dirname(folder) == str(tmp_path)
    assert os.path.basename(folder).startswith("trainbench-worker-")
    assert os.listdir(tmp_path) == []


def test_a_worker_ending_through_the_teardown_leaves_none_either(tmp_path):
    body = """
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(1)"])
    entry._leave(0, unless_teardown_wanted=True)
    child.wait()
    """
    out = _worker(tmp_path, body)
    assert out.returncode == 0, out.stderr
    assert os.listdir(tmp_path) == []


def test_the_folder_is_taken_once_and_python_gets_its_temp_folder_back(tmp_path):
    script = textwrap.dedent(
        """
        import tempfile
        from trainbench_worker import scratch
        a = scratch.take()
        assert scratch.take() == a and tempfile.gettempdir() == a
        scratch.release()
        print(tempfile.gettempdir())
        """
    )
    env = {**os.environ, "PYTHONPATH": PACKAGE, "TMPDIR": str(tmp_path)}
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, env=env)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == str(tmp_path)
    assert os.listdir(tmp_path) == []
