"""``.ci/fix_corpus.py`` audits notebooks as it audits modules: a fixed notebook must
parse, keep its comments and settle, and keep everything but its code cells' source."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import ROOT

CORPUS = ROOT / "tests" / "data" / "fix_corpus"


def _script():
    spec = importlib.util.spec_from_file_location("fix_corpus", ROOT / ".ci" / "fix_corpus.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


fix_corpus = _script()


def _book(*cells: dict, **metadata: object) -> bytes:
    return json.dumps({"cells": list(cells), "metadata": {"language_info": {"name": "python"}, **metadata},
                       "nbformat": 4, "nbformat_minor": 5}, indent=1).encode()


def _code(source: str, outputs: list = ()) -> dict:
    return {"cell_type": "code", "execution_count": 1, "metadata": {}, "outputs": list(outputs), "source": source}


def _markdown(source: str) -> dict:
    return {"cell_type": "markdown", "metadata": {}, "source": source}


BEFORE = _book(_markdown("# Title"), _code("%matplotlib inline\nx = 1  # one\n"),
               _code("y = x + 1  # two\n", [{"output_type": "stream", "name": "stdout", "text": "2\n"}]))
NOTEBOOK = Path("book.ipynb")


def test_a_fix_that_changes_only_code_keeping_comments_passes():
    after = BEFORE.replace(b"x + 1", b"x + 2")
    assert fix_corpus.audit(NOTEBOOK, BEFORE, after) == []  # mplint's cell markers are no comments of its own


@pytest.mark.parametrize("after, problem", [
    (BEFORE.replace(b"# Title", b"# Titel"), "cell 1 (markdown): 'source' changed"),
    (BEFORE.replace(b'"2\\n"', b'"3\\n"'), "cell 3 (code): 'outputs' changed"),
    (BEFORE.replace(b'"execution_count": 1', b'"execution_count": 2', 1), "cell 2 (code): 'execution_count' changed"),
    (_book(_markdown("# Title"), _code("%matplotlib inline\nx = 1  # one\ny = x + 1  # two\n")), "3 cells became 2"),
    (_book(_markdown("# Title"), _code("%matplotlib inline\nx = 1  # one\n"), _code("y = x + 1  # two\n"),
           kernelspec={"name": "other"}), "top-level 'metadata' changed"),
    (BEFORE.replace(b"  # two", b""), "lost comments: # two"),
    (BEFORE.replace(b"x + 1", b"x +"), "unparsable: "),
    (BEFORE[:-3], "not JSON after the fix"),
])
def test_a_fix_that_damages_a_notebook_is_reported(after, problem):
    found = fix_corpus.audit(NOTEBOOK, BEFORE, after)
    assert any(line.startswith(problem) for line in found), found


def test_modules_are_audited_as_before():
    assert fix_corpus.audit(Path("m.py"), b"x = 1  # one\n", b"x = 2  # one\n") == []
    assert fix_corpus.audit(Path("m.py"), b"x = 1  # one\n", b"x = 2\n") == ["lost comments: # one"]
    assert fix_corpus.audit(Path("m.py"), b"x = 1\n", b"x = (\n")[0].startswith("unparsable")


@pytest.mark.slow
def test_the_corpus_with_its_notebook_is_fixed_cleanly(tmp_path):
    done = subprocess.run([sys.executable, str(ROOT / ".ci" / "fix_corpus.py"), str(CORPUS)],
                          capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "python files: 1, notebooks: 1;" in done.stdout
    assert "in 2 files (1 notebooks)" in done.stdout  # the notebook was fixed, then audited
    assert "lost comments: 0; notebooks changed beyond code: 0; changed by a second run: 0" in done.stdout
