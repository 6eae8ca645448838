"""Layers reached through another module's factory closures, dicts of builders and partials.

``head = make_head(10, "softmax")`` then ``head(x)``, with ``make_head`` returning a
closure that builds the layer; ``HEAD_BUILDERS[settings.TASK](1)`` with the key a
constant of a settings module: both are judged in the module that defines them, and
the cached result follows an edit of either module (fixture: ``projects/factory_heads``).
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import List, Tuple

import pytest

from helpers import ROOT, reported, run_cli

PROJECT = ROOT / "fixtures" / "projects" / "factory_heads"


def _findings(project: Path, *args: str) -> List[Tuple[str, int, str]]:
    result = run_cli("check", "--exit-zero", *args, ".", cwd=project)
    assert result.returncode == 0, result.stderr
    return reported(result.stdout)


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new), encoding="utf-8")


@pytest.mark.slow
def test_an_edited_factory_or_key_module_changes_the_next_cached_run(tmp_path):
    project = tmp_path / "factory_heads"
    shutil.copytree(PROJECT, project)
    first = _findings(project)
    assert ("train.py", 19, "MP101") in first and ("train.py", 38, "MP102") in first
    # the closure's layer made float32 in the factory's module: its findings go
    _edit(project / "zoo" / "heads.py", "activation=activation)(x)", 'activation=activation, dtype="float32")(x)')
    after_factory = _findings(project)
    assert after_factory == _findings(project, "--no-cache")
    assert not any(line in (19, 32) for _, line, _ in after_factory)
    assert ("train.py", 38, "MP102") in after_factory
    # the key now picks the float32 builder: the registry's finding goes
    _edit(project / "zoo" / "settings.py", 'TASK = "binary"', 'TASK = "multiclass"')
    after_key = _findings(project)
    assert after_key == _findings(project, "--no-cache") == []


@pytest.mark.slow
def test_an_edited_partial_changes_the_next_cached_run(tmp_path):
    project = tmp_path / "partial_layers"
    shutil.copytree(ROOT / "fixtures" / "projects" / "partial_layers", project)
    assert [line for _, line, _ in _findings(project)] == [13, 15, 16]
    _edit(project / "tower" / "blocks.py", "partial(layers.Dense, 100, activation=\"swish\"",
          "partial(layers.Dense, 104, activation=\"swish\"")
    after = _findings(project)
    assert after == _findings(project, "--no-cache") == [("train.py", 16, "MP301")]


def test_a_summary_passes_a_dtype_spelled_through_the_imports_or_a_constant():
    from mplint.run.summaries import UNKNOWN, summarize

    summary = summarize(
        "import tensorflow as tf\nimport numpy as np\nfrom tensorflow import bfloat16\n"
        "from steps import step\n"
        "HALF = tf.float16\nTWICE = tf.float16\nTWICE = tf.float32\n"
        "def main(dtype):\n"
        "    step(HALF, np.float32, bfloat16, TWICE, dtype, tf.int32, torch.float16)\n"
    )
    (_, callee, slots), = summary.functions["main"].arguments
    assert callee == "step"
    assert [slots[str(i)] for i in range(7)] == ['"float16"', '"float32"', '"bfloat16"', UNKNOWN, UNKNOWN,
                                                 UNKNOWN, UNKNOWN]
