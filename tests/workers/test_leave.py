"""How a worker ends: at once after its last word, unless it still has child
processes (a data loader's, a compiler's pool) that only the interpreter's
teardown stops, or the teardown may still do what the run needs (a person's
script or model file ran, whose exit handlers are theirs; a process joined
to others by a coordinator)."""

import os
import subprocess
import sys
import textwrap

from trainbench_worker import __main__ as entry

PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(entry.__file__)))


def test_children_are_seen_while_they_live():
    assert not entry._has_children()
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        assert entry._has_children()
    finally:
        child.kill()
        child.wait()
    assert not entry._has_children()


def _ending(body: str) -> subprocess.CompletedProcess:
    script = textwrap.dedent(
        """
        import atexit, subprocess, sys
        from trainbench_worker import __main__ as entry
        atexit.register(lambda: print("teardown", flush=True))
        print("last word")
        """
    ) + textwrap.dedent(body)
    env = {**os.environ, "PYTHONPATH": PACKAGE}
    return subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, env=env)


def test_a_worker_without_children_leaves_without_teardown_and_keeps_its_code():
    out = _ending("entry._leave(3, unless_teardown_wanted=True)\n")
    assert out.returncode == 3
    assert out.stdout == "last word\n"


def test_a_worker_with_a_child_returns_to_the_interpreters_teardown():
    out = _ending(
        """
        child = subprocess.Popen([sys.executable, "-c", "pass"], stdout=subprocess.DEVNULL)
        entry._leave(0, unless_teardown_wanted=True)
        child.wait()
        print("returned")
        """
    )
    assert out.returncode == 0
    assert out.stdout == "last word\nreturned\nteardown\n"


def test_a_persons_script_or_model_file_or_a_coordinated_process_keeps_the_teardown():
    ordinary = _ending("entry._leave(0, unless_teardown_wanted=True)\nprint('returned')\n")
    assert (ordinary.returncode, ordinary.stdout) == (0, "last word\n")
    for body in (
        "entry._SCRIPT_RAN[0] = True\n",
        "import types; sys.modules[entry._USER_MODEL_MODULE] = types.ModuleType('m')\n",
        "import os; os.environ['TRAINBENCH_COORDINATOR'] = '127.0.0.1:1234'\n",
    ):
        out = _ending(body + "entry._leave(4, unless_teardown_wanted=True)\nprint('returned')\nsys.exit(4)\n")
        assert out.returncode == 4, body
        assert out.stdout == "last word\nreturned\nteardown\n", body


def test_the_model_files_module_name_is_the_one_the_end_looks_for():
    from trainbench_worker import file_models

    assert entry._USER_MODEL_MODULE == file_models.MODULE_NAME
