"""A cached run equals an uncached one after any file of a project changes.

Every cross-file fact (the policy set elsewhere, a layer or model imported from
another module, an argument passed at a call site in another module, an optimizer
made by a factory, a trainer's scaling, a registry, a re-export) is read through the
program model, whose results are keyed by what they read. So for every fixture
project and every file in it, an edit that changes what the file means must change
the next cached run exactly as far as it changes an uncached one: for the whole
tree, and for a pre-commit run that names one other file.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Iterator, List, Tuple

import pytest

from helpers import ROOT, reported, run_cli

PROJECTS = ROOT / "fixtures" / "projects"

#: edits that change what a file means to the rest of its project (the first that applies)
EDITS: Tuple[Tuple[str, str], ...] = (
    ("mixed_float16", "float32"),
    ('activation="softmax"', 'activation="relu"'),
    ("activation='softmax'", "activation='relu'"),
    ("LossScaleOptimizer(", "_plain_optimizer("),
    ("get_scaled_loss(", "_same_loss("),
    ('dtype="float32"', 'name="head"'),
    ("dtype='float32'", "name='head'"),
    ("softmax", "relu"),
    ("hvd.DistributedGradientTape(", "hvd.recorded_tape("),  # a project wrapper of horovod's tape
    ("trainable=True", "trainable=False"),  # a base's weight a subclass picks the dtype of
)


def _edits(project: Path) -> Iterator[Tuple[Path, str, str]]:
    for path in sorted(project.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        for old, new in EDITS:
            if old in text:
                yield path, old, new
                break


def _findings(project: Path, *args: str) -> List[Tuple[str, int, str]]:
    result = run_cli("check", "--exit-zero", *args, cwd=project)
    assert result.returncode == 0, result.stderr
    return reported(result.stdout)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(p.name for p in PROJECTS.iterdir() if p.is_dir()))
def test_a_cached_run_after_an_edit_anywhere_equals_an_uncached_one(name, tmp_path):
    project = tmp_path / name
    shutil.copytree(PROJECTS / name, project)
    assert _findings(project, ".") == _findings(project, "--no-cache", ".")  # the cache is now warm
    for path, old, new in list(_edits(project)):
        before = path.read_text(encoding="utf-8")
        path.write_text(before.replace(old, new, 1), encoding="utf-8")
        edited = path.relative_to(project).as_posix()
        fresh = _findings(project, "--no-cache", ".")
        assert _findings(project, ".") == fresh, f"after {old!r} -> {new!r} in {edited}"
        # a pre-commit run naming one other file that has (or had) findings
        for other in sorted({p for p, _, _ in fresh} - {edited}):
            expected = [f for f in fresh if f[0] == other]
            assert _findings(project, "--force-exclude", other) == expected, \
                f"{other} after {old!r} -> {new!r} in {edited}"
        path.write_text(before, encoding="utf-8")
        assert _findings(project, ".") == _findings(project, "--no-cache", "."), f"after undoing the edit of {edited}"


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(p.name for p in PROJECTS.iterdir() if p.is_dir()))
def test_a_one_file_run_without_a_cache_equals_the_whole_tree_for_that_file(name, tmp_path):
    """A pre-commit run with ``--no-cache`` indexes only what the named file needs: its
    findings are still the whole tree's for it, for every file of every project."""
    project = tmp_path / name
    shutil.copytree(PROJECTS / name, project)
    whole = _findings(project, "--no-cache", ".")
    for path in sorted(project.rglob("*.py")):
        named = path.relative_to(project).as_posix()
        assert _findings(project, "--no-cache", "--force-exclude", named) == [f for f in whole if f[0] == named], named


def test_a_file_touched_without_a_change_keeps_the_stored_program_model(tmp_path, monkeypatch):
    """A file whose stamp changed but whose bytes did not (touched, checked out again, left
    as it was by a formatter) changes nothing the program model read: the next pre-commit
    run reuses the stored model instead of building it again. An edit to its bytes still
    gives the uncached run's findings."""
    import os

    import mplint.run.project as project_module
    from helpers import write_files

    project = write_files(tmp_path, {
        "setup.py": "", "pkg/__init__.py": "",
        "pkg/model.py": "import tensorflow as tf\n\n\ndef build():\n"
                        "    return tf.keras.Sequential([tf.keras.layers.Dense(10, activation='softmax')])\n",
        "train.py": "import tensorflow as tf\nfrom pkg.model import build\n\n\ndef main():\n"
                    "    tf.keras.mixed_precision.set_global_policy('mixed_float16')\n    return build()\n",
        # imports the checked module, and is not one the model summarises
        "other.py": "import pkg.model\n\nVERSION = 1\n",
    })
    builds: List[int] = []
    real = project_module._program

    def counted(*args, **kwargs):
        builds.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(project_module, "_program", counted)
    expected = _findings(project, "--no-cache", "--force-exclude", "pkg/model.py")
    assert expected, "the policy set in train.py reaches pkg/model.py"
    builds.clear()
    assert _findings(project, "--force-exclude", "pkg/model.py") == expected  # the cache is now warm
    assert builds == [1]
    other = project / "other.py"
    stamp = other.stat()
    os.utime(other, ns=(stamp.st_atime_ns + 10**9, stamp.st_mtime_ns + 10**9))
    assert _findings(project, "--force-exclude", "pkg/model.py") == expected
    assert builds == [1], "a touched file rebuilt the program model"
    # an edit the model does not see in a file it did not summarise: the same glance
    other.write_text("import pkg.model\n\nVERSION = 2  # bumped\n", encoding="utf-8")
    assert _findings(project, "--force-exclude", "pkg/model.py") == expected
    assert builds == [1], "an edit the model does not see rebuilt it"
    # an edit that makes the file a setter whose policy reaches the checked module
    other.write_text("import tensorflow as tf\nimport pkg.model\n\n"
                     "tf.keras.mixed_precision.set_global_policy('mixed_bfloat16')\nMODEL = pkg.model.build()\n",
                     encoding="utf-8")
    cached = _findings(project, "--force-exclude", "pkg/model.py")
    assert builds == [1, 1]
    builds.clear()
    assert cached == _findings(project, "--no-cache", "--force-exclude", "pkg/model.py")


def test_an_import_added_in_the_setter_scope_rebuilds_a_pre_commit_result(tmp_path):
    """A pre-commit run searches for setters only in the modules that may reach the
    checked one (``ProgramModel.setter_scope``): an edit to such a module's body keeps its
    stored result, and an import it adds (of a module whose helper sets a policy) is
    searched again, as a run without the cache searches it."""
    from helpers import write_files

    project = write_files(tmp_path, {
        # (library mode off: pkg/model.py, reached by no policy, would be its users' build)
        "setup.py": "", "pyproject.toml": "[tool.mplint]\nlibrary = false\n", "pkg/__init__.py": "",
        "pkg/util.py": "VERSION = 1\n",
        "pkg/model.py": "import tensorflow as tf\nfrom pkg import util\n\n\ndef build():\n"
                        "    return tf.keras.Sequential([tf.keras.layers.Dense(10, activation='softmax')])\n",
        "amp.py": "import tensorflow as tf\n\n\ndef enable():\n"
                  "    tf.keras.mixed_precision.set_global_policy('mixed_float16')\n",
    })
    assert _findings(project, "--force-exclude", "pkg/model.py") == []
    util = project / "pkg" / "util.py"
    util.write_text("VERSION = 2  # bumped\n", encoding="utf-8")
    assert _findings(project, "--force-exclude", "pkg/model.py") == []
    util.write_text("from amp import enable\n\nenable()\nVERSION = 3\n", encoding="utf-8")
    cached = _findings(project, "--force-exclude", "pkg/model.py")
    assert cached, "the policy set through pkg/util.py's import reaches pkg/model.py"
    assert cached == _findings(project, "--no-cache", "--force-exclude", "pkg/model.py")
