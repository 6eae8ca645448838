"""The shared walk: every node in field order, visit before children, leave after.

The reference below is the plain recursive walk the walker's fast paths (skipped
scalar fields, skipped unhandled leaves, memoised type tests) must agree with.
"""

import dataclasses
import functools
from pathlib import Path

import libcst as cst
import pytest

from mplint.core.walker import _SKIP_FIELDS, Walker

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = sorted((ROOT / "mplint").rglob("*.py"))[:12] + sorted((ROOT / "fixtures").rglob("*.py"))


def _reference(node, out, ancestors):
    out.append(("visit", type(node).__name__, id(node), tuple(map(id, ancestors))))
    ancestors.append(node)
    for f in dataclasses.fields(node):
        if f.name in _SKIP_FIELDS or f.name.startswith("whitespace"):
            continue
        value = getattr(node, f.name)
        items = value if isinstance(value, (list, tuple)) else [value]
        for item in items:
            if isinstance(item, cst.CSTNode):
                _reference(item, out, ancestors)
    ancestors.pop()
    out.append(("leave", type(node).__name__, id(node), tuple(map(id, ancestors))))


def _recorder(types):
    recorder = _recorder_class(frozenset(types))()
    recorder.events = []
    return recorder


@functools.lru_cache(maxsize=None)
def _recorder_class(types):
    """One class per set of types: the walker keeps what it learns of a visitor
    class for good, so a class made per test would pile up."""

    class Recorder:
        events = []

    def make(kind, name):
        def handler(self, node):
            self.events.append((kind, name, id(node), tuple(map(id, self.walker.stack))))
        return handler

    for name in types:
        setattr(Recorder, f"visit_{name}", make("visit", name))
        setattr(Recorder, f"leave_{name}", make("leave", name))
    return Recorder


def _all_node_types():
    seen, todo = set(), [cst.CSTNode]
    while todo:
        for sub in todo.pop().__subclasses__():
            if sub not in seen:
                seen.add(sub)
                todo.append(sub)
    return {t.__name__ for t in seen}


@functools.lru_cache(maxsize=1)  # both cases of a file run one after the other
def _parsed(path):
    """A sample's module and the plain recursive walk's events over it."""
    module = cst.parse_module(path.read_bytes())
    expected = []
    _reference(module, expected, [])
    return module, expected


@pytest.mark.parametrize("types", [None, {"Name", "Call", "Arg", "FunctionDef", "SimpleString", "Integer"}],
                         ids=["every-type", "some-types"])
@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: p.name)
def test_walk_matches_the_plain_recursive_walk(path, types):
    module, expected = _parsed(path)
    recorder = _recorder(types or _all_node_types())
    walker = Walker([recorder], lambda owner, exc: None)
    recorder.walker = walker
    walker.walk(module)
    if types:
        expected = [e for e in expected if e[1] in types]
    assert recorder.events == expected
