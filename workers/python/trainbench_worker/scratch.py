"""A worker's own folder for the temporary files of its process.

TensorFlow's autograph writes the source of every function it converts to
the temp folder (``__autograph_generated_file*.py``, seven for a training
run) and removes each in an exit handler. A worker leaves without the
interpreter's teardown (``__main__._leave``), so those handlers never ran
and every TensorFlow run left its files in ``/tmp``. TensorFlow's worker
therefore takes a folder of its own for Python's temporary files when it
sets up a training run (not for a person's model file, whose process ends
through the teardown); the folder goes when the worker leaves, either way.

Only this process's ``tempfile`` moves: the environment of the processes it
starts is left alone (a Ray node finds its cluster through the temp folder,
and TorchInductor keeps its cache there).
"""

from __future__ import annotations

import atexit
import shutil
import tempfile

_TAKEN: list[str] = []


def take() -> str:
    """A new folder in the temp folder, where this process's ``tempfile``
    writes from now on; the same folder when taken already."""
    if not _TAKEN:
        folder = tempfile.mkdtemp(prefix="trainbench-worker-")
        _TAKEN.append(folder)
        tempfile.tempdir = folder
        # Exit handlers run last registered first: this one runs after those
        # registered later, autograph's for each file it writes among them.
        atexit.register(release)
    return _TAKEN[0]


def release() -> None:
    """The folder removed with everything in it, and ``tempfile`` back to
    the temp folder; nothing when none was taken."""
    while _TAKEN:
        folder = _TAKEN.pop()
        if tempfile.tempdir == folder:
            tempfile.tempdir = None
        shutil.rmtree(folder, ignore_errors=True)
