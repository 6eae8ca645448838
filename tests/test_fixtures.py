"""Fixture files carry `# expect: MPxxx` on every line that must fire; nothing else may.

Files under fixtures/projects/<name>/ are multi-file projects: each is checked with
the facts of its whole project (a policy set in train.py governs model.py).

Every fixture is also fixed (unsafe fixes included): the result must parse, settle
in one run, and keep every comment.
"""

import functools
import io
import re
import tokenize

import libcst as cst
import pytest

from helpers import FIXTURES as FOLDER
from helpers import ROOT, linter_for
from mplint.api import fix_text, lint_text, make_linter

FIXTURES = sorted(FOLDER.rglob("*.py"))
MARKER = re.compile(r"#.*\bexpect:\s*(MP\d{3}(?:\s*,\s*MP\d{3})*)")


@functools.lru_cache(maxsize=None)
def _shared_linter():
    """The linter of the files outside a project, built in the first test that needs
    it, so under ``no_installed_keras`` as every test here (one built at import would
    see the installed Keras)."""
    return make_linter()


pytestmark = pytest.mark.usefixtures("no_installed_keras")


def _expected(text):
    out = set()
    for number, line in enumerate(text.splitlines(), 1):
        match = MARKER.search(line)
        if match:
            out |= {(number, code.strip()) for code in match.group(1).split(",")}
    return out


def _comments(text):
    return [t.string for t in tokenize.generate_tokens(io.StringIO(text).readline)
            if t.type == tokenize.COMMENT]


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: str(p.relative_to(ROOT)))
def test_fixture_findings_match_markers(path):
    text = path.read_text(encoding="utf-8")
    findings, errors = lint_text(text, path=str(path), linter=linter_for(path, _shared_linter()))
    assert not errors
    assert {(f.line, f.rule) for f in findings} == _expected(text)


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: str(p.relative_to(ROOT)))
def test_fixture_fix_parses_settles_and_keeps_comments(path):
    text = path.read_text(encoding="utf-8")
    linter = linter_for(path, _shared_linter())
    fixed = fix_text(text, path=str(path), unsafe=True, linter=linter)
    cst.parse_module(fixed)
    assert fix_text(fixed, path=str(path), unsafe=True, linter=linter) == fixed
    before, after = _comments(text), _comments(fixed)
    assert all(c in after for c in before)
    if not _expected(text):
        assert fixed == text, "a silent fixture must stay byte-identical"


def test_there_are_fixtures():
    assert len(FIXTURES) >= 5
