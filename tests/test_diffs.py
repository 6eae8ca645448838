"""``mplint fix --diff`` prints patches that ``git apply`` takes: a last line without a
newline is marked as git marks it, and only newlines end lines."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from helpers import BAD, GOOD, run_cli, write_files

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")


def _applies(folder: Path, patch: str) -> Path:
    """Apply ``patch`` in ``folder`` as a user would (``git apply``), after ``--check``."""
    (folder / "fix.patch").write_text(patch, encoding="utf-8", newline="")
    for args in (["--check"], []):
        done = subprocess.run(["git", "apply", *args, "fix.patch"], cwd=folder, capture_output=True, text=True)
        assert done.returncode == 0, done.stderr + patch
    return folder


@pytest.mark.parametrize("before, after", [
    (BAD.rstrip("\n"), GOOD.rstrip("\n")),                        # the fixed line is the last, no newline
    (BAD + "\n# the end", GOOD + "\n# the end"),                   # an unchanged last line, no newline
    (BAD.replace("import tensorflow as tf\n", "import tensorflow as tf  # \x0c page\n"),
     GOOD.replace("import tensorflow as tf\n", "import tensorflow as tf  # \x0c page\n")),  # a form feed
], ids=["changed-last-line", "unchanged-last-line", "form-feed"])
def test_the_diff_applies_with_git(tmp_path, before, after):
    project = write_files(tmp_path, {"pyproject.toml": "", "m.py": before})
    result = run_cli("fix", "--diff", "m.py", cwd=project)
    assert result.returncode == 1, result.stderr
    if not before.endswith("\n") and before.endswith("softmax\")])"):
        assert result.stdout.endswith("\\ No newline at end of file\n")
    _applies(project, result.stdout)
    assert (project / "m.py").read_bytes() == after.encode("utf-8")
