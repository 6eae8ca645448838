"""Run ``mplint fix --unsafe-fixes`` over a copy of a tree of real code and audit it.

    python .ci/fix_corpus.py /path/to/code [--assume-policy mixed_float16] [--keep]

The tree is copied first (the original is never touched). Counts: files, files
mplint rewrote, fixes applied, per-file errors by message, internal errors
(crashed rules or fixes), and for every rewritten file whether it still parses
(libcst and CPython), kept all its comments, and settles (a second run changes
nothing). Exits 1 on any crash, unparsable output, lost comment or unsettled file.
"""

from __future__ import annotations

import argparse
import io
import re
import shutil
import subprocess
import sys
import tempfile
import time
import tokenize
from collections import Counter
from pathlib import Path

import libcst as cst

from mplint.core.source import SourceError, decode


def _comments(text: str) -> Counter:
    return Counter(t.string for t in tokenize.generate_tokens(io.StringIO(text).readline)
                   if t.type == tokenize.COMMENT)


def _snapshot(root: Path) -> dict:
    return {p: p.read_bytes() for p in root.rglob("*.py") if p.is_file() and not p.is_symlink()}


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
    unparsable, lost_comments = [], []
    for path in changed:
        try:
            text = decode(str(path), after[path]).text
            cst.parse_module(text)
            compile(text, str(path), "exec", dont_inherit=True)
        except (SourceError, cst.ParserSyntaxError, SyntaxError) as exc:
            unparsable.append(f"{path}: {exc}")
            continue
        old = decode(str(path), before[path]).text
        if _comments(old) - _comments(text):
            lost_comments.append(str(path))
    unsettled = [str(p) for p in after if settled.get(p) != after[p]]
    fixed = re.search(r"Fixed (\d+) finding", first.stdout)
    remaining = re.search(r"; (\d+) remaining", first.stdout)
    kinds = Counter(re.sub(r"^mplint: (\w+): [^:]+: ", r"\1: ", re.sub(r"line \d+", "line N", e))[:90]
                    for e in errors)

    print(f"tree: {args.tree}")
    print(f"python files: {len(before)}; mplint exit code {first.returncode}; {elapsed:.1f}s")
    print(f"fixes applied: {fixed.group(1) if fixed else '?'} in {len(changed)} files; "
          f"remaining findings: {remaining.group(1) if remaining else '?'}")
    print(f"per-file errors/warnings: {len(errors)}")
    for kind, n in kinds.most_common():
        print(f"  {n:5d}  {kind}")
    print(f"crashes (internal errors): {len(crashes)}; tracebacks: {traceback}")
    print(f"unparsable outputs: {len(unparsable)}; lost comments: {len(lost_comments)}; "
          f"changed by a second run: {len(unsettled)}")
    for line in crashes + unparsable + lost_comments + unsettled:
        print("  ", line)
    per_rule: Counter = Counter()
    for match in re.finditer(r"^\s+(\d+) \u00d7 (MP\d+)$", first.stdout, re.M):
        per_rule[match.group(2)] += int(match.group(1))
    print("fixes per rule: " + (", ".join(f"{r}: {n}" for r, n in sorted(per_rule.items())) or "none"))
    if args.keep:
        print(f"fixed copy kept in {copy}")
    else:
        shutil.rmtree(work)
    bad = crashes or traceback or unparsable or lost_comments or unsettled
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
