"""``find_all`` is ``libcst.matchers.findall`` for a class-only matcher, without the
import of ``libcst.matchers`` (hundreds of dataclasses built on every run that parses)."""

from __future__ import annotations

import os
import subprocess
import sys

import libcst as cst
import libcst.matchers as m
import pytest

from helpers import ROOT, write_files
from mplint.core.find_nodes import find_all

SOURCES = sorted((ROOT / "mplint").rglob("*.py"))[::7] + sorted((ROOT / "fixtures").rglob("*.py"))[::5]


@pytest.mark.parametrize("kind, matcher", [(cst.Call, m.Call()), (cst.Name, m.Name()), (cst.Integer, m.Integer())])
def test_find_all_meets_the_nodes_findall_meets_in_its_order(kind, matcher):
    for path in SOURCES:
        module = cst.parse_module(path.read_bytes())
        expected = m.findall(module, matcher)
        found = find_all(module, kind)
        assert len(found) == len(expected) and all(a is b for a, b in zip(found, expected)), path
        for node in expected[:20]:  # from an inner node: that node itself counts
            inner = m.findall(node, matcher)
            assert [id(n) for n in find_all(node, kind)] == [id(n) for n in inner]


def test_a_run_that_checks_a_keras_file_never_imports_libcst_matchers(tmp_path):
    project = write_files(tmp_path / "p", {
        "pyproject.toml": "[project]\nname = 'p'\n",
        "model.py": "import tensorflow as tf\n"
                    "tf.keras.mixed_precision.set_global_policy('mixed_float16')\n"
                    "x = tf.keras.layers.Dense(10)(tf.keras.Input((3,)))\n"
                    "y = tf.keras.layers.Dense(10, activation='softmax')(x)\n",
    })
    code = ("import sys; from mplint.cli import main; main(['check', '-q', '--exit-zero', '--no-cache', 'model.py']); "
            "print('libcst' in sys.modules, 'libcst.matchers' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], cwd=project, capture_output=True, text=True,
                          env=dict(os.environ, PYTHONPATH=str(ROOT)), timeout=300)
    assert done.stdout.strip().endswith("True False"), done.stdout + done.stderr
