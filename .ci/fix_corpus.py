"""Run ``mplint fix --unsafe-fixes`` over a copy of a tree of real code and audit it.

    python .ci/fix_corpus.py /path/to/code [--assume-policy mixed_float16] [--keep]

The tree is copied first (the original is never touched). Counts: files, files
mplint rewrote, fixes applied, per-file errors by message, internal errors
(crashed rules or fixes), and for every rewritten file whether it still parses
(libcst and CPython), kept all its comments, and settles (a second run changes
nothing). Notebooks (``.ipynb``) are audited the same way, on their code cells joined
as mplint reads them, and must also keep their shape: valid JSON, the same cells in
the same order, every markdown and raw cell, output, execution count and piece of
metadata as it was (a fix changes code cells' source only). Exits 1 on any crash,
unparsable output, lost comment, broken notebook or unsettled file.

    python .ci/fix_corpus.py tests/data/fix_corpus    # the corpus of our own, a notebook in it
"""

from __future__ import annotations

import argparse
import ast
import io
import json
import re
import shutil
import subprocess
import sys
import tempfile
import time
import tokenize
from collections import Counter
from pathlib import Path
from typing import List

import libcst as cst

from mplint.core.source import SourceError
from mplint.core.source_kinds import load_source

#: the files audited: what ``mplint fix`` rewrites
SUFFIXES = (".py", ".ipynb")


def _comments(text: str) -> Counter:
    return Counter(t.string for t in tokenize.generate_tokens(io.StringIO(text).readline)
                   if t.type == tokenize.COMMENT)


def _snapshot(root: Path) -> dict:
    return {p: p.read_bytes() for p in root.rglob("*") if p.suffix in SUFFIXES and p.is_file() and not p.is_symlink()}


def _program(path: Path, raw: bytes) -> str:
    """The Python text mplint reads from the file: a notebook's code cells joined, its
    magics as mplint marks them (SourceError, ValueError when unreadable)."""
    source = load_source(str(path), raw).program()
    return source.text if source is not None else ""


def _unread_cells(path: Path, raw: bytes) -> List[str]:
    """The warnings about a notebook's code cells mplint leaves out (they do not parse)."""
    kind = load_source(str(path), raw)
    kind.program()
    return [warning.message for warning in kind.warnings()]


def _parses(path: Path, text: str) -> None:
    """Raise unless libcst and CPython both read ``text`` (a notebook may ``await`` at
    its top level)."""
    cst.parse_module(text)
    flags = ast.PyCF_ALLOW_TOP_LEVEL_AWAIT if path.suffix == ".ipynb" else 0
    compile(text, str(path), "exec", flags=flags, dont_inherit=True)


def _own_comments(path: Path, raw: bytes, text: str) -> Counter:
    """The comments of the file's code, without the cell and magic markers mplint joins a
    notebook's cells with (each ends with a key drawn from the notebook's bytes)."""
    found = _comments(text)
    if path.suffix == ".ipynb":
        from mplint.core.notebooks import Notebook

        key = Notebook.load(str(path), raw).key
        found = Counter({c: n for c, n in found.items() if not (c.startswith("# mplint: ") and c.endswith(key))})
    return found


def notebook_damage(before: bytes, after: bytes) -> List[str]:
    """What a fix changed in a notebook beyond its code cells' source: each a line."""
    try:
        old, new = json.loads(before), json.loads(after)
    except ValueError as exc:
        return [f"not JSON after the fix: {exc}"]
    found = [f"top-level {key!r} changed" for key in sorted(old.keys() | new.keys())
             if key != "cells" and old.get(key) != new.get(key)]
    cells, fixed = old.get("cells", []), new.get("cells", [])
    if len(cells) != len(fixed):
        return found + [f"{len(cells)} cells became {len(fixed)}"]
    for number, (cell, now) in enumerate(zip(cells, fixed), 1):
        kept = ("source",) if cell.get("cell_type") == "code" else ()
        for key in sorted(cell.keys() | now.keys()):
            if key not in kept and cell.get(key) != now.get(key):
                found.append(f"cell {number} ({cell.get('cell_type')}): {key!r} changed")
    return found


def audit(path: Path, before: bytes, after: bytes) -> List[str]:
    """What is wrong with a file the fix rewrote: unparsable output, lost comments, a
    damaged notebook (empty: nothing)."""
    problems = notebook_damage(before, after) if path.suffix == ".ipynb" else []
    try:
        text = _program(path, after)
        _parses(path, text)
        # A notebook's cell that no longer parses is left out of its program, not an error.
        unread = [w for w in _unread_cells(path, after) if w not in _unread_cells(path, before)]
    except (SourceError, ValueError, cst.ParserSyntaxError, SyntaxError) as exc:
        return problems + [f"unparsable: {exc}"]
    if unread:
        return problems + [f"unparsable: {w}" for w in unread]
    lost = _own_comments(path, before, _program(path, before)) - _own_comments(path, after, text)
    if lost:
        problems.append("lost comments: " + ", ".join(sorted(lost)))
    return problems


def _run(root: Path, policy: str = "") -> subprocess.CompletedProcess:
    assume = ["--assume-policy", policy] if policy else []
    return subprocess.run([sys.executable, "-m", "mplint", "fix", "--unsafe-fixes", "--show-fixes", *assume, "."],
                          cwd=root, capture_output=True, text=True)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("tree")
    parser.add_argument("--keep", action="store_true", help="keep the fixed copy")
    parser.add_argument("--assume-policy", default="", help="judge every file under this policy (more fixes)")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="mplint-corpus-"))
    copy = work / "tree"
    shutil.copytree(args.tree, copy, symlinks=True)
    before = _snapshot(copy)
    start = time.monotonic()
    first = _run(copy, args.assume_policy)
    elapsed = time.monotonic() - start
    after = _snapshot(copy)
    second = _run(copy, args.assume_policy)
    settled = _snapshot(copy)

    errors = [line for line in first.stderr.splitlines() if line.startswith("mplint: ")]
    crashes = [line for line in errors if "internal error" in line]
    traceback = "Traceback" in first.stderr or "Traceback" in second.stderr
    changed = [p for p in before if after.get(p) != before[p]]
    unparsable: List[str] = []
    lost_comments: List[str] = []
    broken: List[str] = []
    for path in changed:
        for problem in audit(path, before[path], after[path]) if path in after else ["removed by the fix"]:
            kind = unparsable if problem.startswith(("unparsable", "removed")) else \
                lost_comments if problem.startswith("lost comments") else broken
            kind.append(f"{path}: {problem}")
    unsettled = [str(p) for p in after if settled.get(p) != after[p]]
    fixed = re.search(r"Fixed (\d+) finding", first.stdout)
    remaining = re.search(r"; (\d+) remaining", first.stdout)
    kinds = Counter(re.sub(r"^mplint: (\w+): [^:]+: ", r"\1: ", re.sub(r"line \d+", "line N", e))[:90]
                    for e in errors)

    print(f"tree: {args.tree}")
    notebooks = [p for p in before if p.suffix == ".ipynb"]
    print(f"python files: {len(before) - len(notebooks)}, notebooks: {len(notebooks)}; "
          f"mplint exit code {first.returncode}; {elapsed:.1f}s")
    print(f"fixes applied: {fixed.group(1) if fixed else '?'} in {len(changed)} files "
          f"({sum(p.suffix == '.ipynb' for p in changed)} notebooks); "
          f"remaining findings: {remaining.group(1) if remaining else '?'}")
    print(f"per-file errors/warnings: {len(errors)}")
    for kind, n in kinds.most_common():
        print(f"  {n:5d}  {kind}")
    print(f"crashes (internal errors): {len(crashes)}; tracebacks: {traceback}")
    print(f"unparsable outputs: {len(unparsable)}; lost comments: {len(lost_comments)}; "
          f"notebooks changed beyond code: {len(broken)}; changed by a second run: {len(unsettled)}")
    for line in crashes + unparsable + lost_comments + broken + unsettled:
        print("  ", line)
    per_rule: Counter = Counter()
    for match in re.finditer(r"^\s+(\d+) \u00d7 (MP\d+)$", first.stdout, re.M):
        per_rule[match.group(2)] += int(match.group(1))
    print("fixes per rule: " + (", ".join(f"{r}: {n}" for r, n in sorted(per_rule.items())) or "none"))
    if args.keep:
        print(f"fixed copy kept in {copy}")
    else:
        shutil.rmtree(work)
    bad = crashes or traceback or unparsable or lost_comments or broken or unsettled
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
