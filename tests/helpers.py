"""What the tests share: the command line run in this process or as a real one,
lint and fix of a string, a sample file tree, and the findings a run printed.

``run_cli`` calls :func:`mplint.cli.main` in this process, the way Fixit's smoke
tests drive its CLI: starting ``python -m mplint`` costs most of a second of CPU
per call, which the suite paid about 120 times. ``run_process`` starts the real
process; keep it for what only a process shows (the console entry point, the fork
pool, which modules a run imports, a terminal, signals).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, Iterator, List, Mapping, Optional, Tuple, Union, cast

import libcst as cst

from mplint.api import fix_text, lint_text, make_linter
from mplint.cli import main
from mplint.core.findings import Finding
from mplint.core.linter import Linter
from mplint.run.project import build_project

ROOT = Path(__file__).resolve().parent.parent
#: sample code: ``# expect: MPxxx`` marks each line that must fire
FIXTURES = ROOT / "fixtures"
#: multi-file samples, each checked with the facts of its whole project
PROJECTS = FIXTURES / "projects"

#: the smallest file with a finding: a float16 softmax output (MP101, safe fix) ...
BAD = textwrap.dedent('''\
    import tensorflow as tf

    tf.keras.mixed_precision.set_global_policy("mixed_float16")
    model = tf.keras.Sequential([tf.keras.layers.Dense(10, activation="softmax")])
''')
#: ... and the same file fixed
GOOD = BAD.replace('activation="softmax"', 'activation="softmax", dtype="float32"')

Text = Union[str, bytes]


# -- the command line ------------------------------------------------------------------
@dataclass
class CliResult:
    """What a run of ``mplint`` left: its exit code and output (as ``subprocess.run`` gives)."""

    returncode: int
    stdout_bytes: bytes
    stderr_bytes: bytes

    @property
    def stdout(self) -> str:
        return self.stdout_bytes.decode("utf-8")

    @property
    def stderr(self) -> str:
        return self.stderr_bytes.decode("utf-8")


def run_cli(*args: object, cwd: Union[str, Path, None] = None, input: Optional[Text] = None,
            env: Optional[Mapping[str, Optional[str]]] = None) -> CliResult:
    """``mplint ARGS`` in this process: stdin fed from ``input``, stdout and stderr
    captured (text and ``.buffer``), ``cwd`` and ``env`` (None unsets a variable)
    in force for the call only. An exception mplint lets escape fails the test
    with its traceback, where a process would have printed it and exited 1."""
    stdin = input.encode("utf-8") if isinstance(input, str) else (input or b"")
    out, err = _stream(), _stream()
    with _working_dir(cwd), _environment(env or {}), _standard_streams(_stream(stdin), out, err):
        try:
            code = main([str(a) for a in args])
        except SystemExit as exc:  # argparse: usage errors, --help, --version
            code = exc.code if isinstance(exc.code, int) else 0 if exc.code is None else 1
            if isinstance(exc.code, str):
                print(exc.code, file=sys.stderr)
    return CliResult(code, _written(out), _written(err))


def run_process(*args: object, cwd: Union[str, Path, None] = None, input: Optional[Text] = None,
                env: Optional[Mapping[str, str]] = None) -> CliResult:
    """``python -m mplint ARGS`` as a real process, for what only a process shows."""
    stdin = input.encode("utf-8") if isinstance(input, str) else input
    done = subprocess.run([sys.executable, "-m", "mplint", *map(str, args)], cwd=cwd, input=stdin,
                          capture_output=True, env={**os.environ, **(env or {})}, timeout=300)
    return CliResult(done.returncode, done.stdout, done.stderr)


def _stream(data: bytes = b"") -> io.TextIOWrapper:
    # write_through: text and bytes written to .buffer stay in the order they were written
    return io.TextIOWrapper(io.BytesIO(data), encoding="utf-8", write_through=True)


def _written(stream: io.TextIOWrapper) -> bytes:
    stream.flush()
    return cast(io.BytesIO, stream.buffer).getvalue()


@contextlib.contextmanager
def _standard_streams(stdin: io.TextIOWrapper, stdout: io.TextIOWrapper,
                      stderr: io.TextIOWrapper) -> Iterator[None]:
    saved = sys.stdin, sys.stdout, sys.stderr
    sys.stdin, sys.stdout, sys.stderr = stdin, stdout, stderr
    try:
        yield
    finally:
        sys.stdin, sys.stdout, sys.stderr = saved


@contextlib.contextmanager
def _working_dir(cwd: Union[str, Path, None]) -> Iterator[None]:
    before = os.getcwd()
    if cwd is not None:
        os.chdir(cwd)
    try:
        yield
    finally:
        os.chdir(before)


@contextlib.contextmanager
def _environment(changes: Mapping[str, Optional[str]]) -> Iterator[None]:
    saved = {name: os.environ.get(name) for name in changes}
    for name, value in changes.items():
        _set_variable(name, value)
    try:
        yield
    finally:
        for name, value in saved.items():
            _set_variable(name, value)


def _set_variable(name: str, value: Optional[str]) -> None:
    if value is None:
        os.environ.pop(name, None)
    else:
        os.environ[name] = value


_FINDING_LINE = re.compile(r"^(?P<path>.+?):(?:(?P<cell>cell \d+):)?(?P<line>\d+):\d+: (?P<rule>MP\d{3}) ")


def syntax_error_line(path: str, message: str) -> str:
    """The report line (or its start, when ``message`` names no column) of the parser's
    ``syntax error at line L, column C: ...`` in ``path``: a finding, as ruff shows one."""
    match = re.fullmatch(r"syntax error at line (\d+)(?:, column (\d+): (.*))?", message, re.S)
    assert match is not None, message
    line, col, text = match.groups()
    return f"{path}:{line}:{col}: SyntaxError: {text}" if col else f"{path}:{line}:"


def reported(output: str) -> List[Tuple[str, int, str]]:
    """``(path, line, rule)`` of each finding a text report printed; a notebook's
    path names the cell (``nb.ipynb:cell 5``)."""
    found = []
    for text in output.splitlines():
        match = _FINDING_LINE.match(text)
        if match:
            path = match["path"] + (":" + match["cell"] if match["cell"] else "")
            found.append((path, int(match["line"]), match["rule"]))
    return found


def outcome(result: CliResult) -> Tuple[int, List[Tuple[str, int, str]]]:
    """The exit code and the findings printed on stdout: what most CLI tests pin."""
    return result.returncode, reported(result.stdout)


def write_files(folder: Path, files: Mapping[str, Text]) -> Path:
    """Write ``{relative path: text or bytes}`` under ``folder`` (folders made as needed)."""
    for name, text in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text if isinstance(text, bytes) else text.encode("utf-8"))
    return folder


def project_findings(folder: Path, files: Mapping[str, Text], select: str) -> List[Tuple[str, int, str]]:
    """``(path, line, rule)`` of each finding of ``select`` a whole-project check (no
    cache) reports in ``files`` written under ``folder``; a failed run fails the test."""
    result = run_cli("check", "--select", select, "--output-format", "json", "--no-cache", ".",
                     cwd=write_files(folder, files))
    assert result.returncode in (0, 1), result.stderr
    return [(f["path"], f["line"], f["rule"]) for f in json.loads(result.stdout)]


# -- lint and fix a string ------------------------------------------------------------
def lint(code: str, *rules: str, path: str = "<string>", **overrides: Any) -> List[Finding]:
    """The findings of ``rules`` (all when none) on ``code`` (dedented); an error or
    warning about the file fails the test. ``overrides`` as for ``make_linter``."""
    linter = make_linter(select=list(rules) or None, **overrides)
    found, errors = lint_text(textwrap.dedent(code), path=path, linter=linter)
    assert not errors, errors
    return found


def fired(code: str, *rules: str, path: str = "<string>", **overrides: Any) -> List[Tuple[int, str]]:
    """``(line, rule)`` of each finding, in order: misses and false alarms both show."""
    return sorted((f.line, f.rule) for f in lint(code, *rules, path=path, **overrides))


def linter_for(path: Union[str, Path], default: Optional[Linter] = None, **overrides: Any) -> Linter:
    """A linter for a sample file; one under ``fixtures/projects/`` sees the facts of
    its whole project (a policy set in train.py governs model.py). ``default``, when
    given, serves the files outside a project (one linter for many files)."""
    resolved = Path(path).resolve()
    if PROJECTS not in resolved.parents:
        return default if default is not None else make_linter(**overrides)
    # each sample project is a repository of its own, not a part of mplint's
    project = PROJECTS / resolved.relative_to(PROJECTS).parts[0]
    linter = make_linter(**{**_project_settings(project), **overrides})
    linter.project = build_project([str(path)], linter.settings, root=project)
    return linter


def _project_settings(project: Path) -> Dict[str, Any]:
    """The sample project's own ``[tool.mplint]`` ``library`` setting (what a run from its
    folder reads), as an override."""
    try:
        import tomllib
    except ImportError:  # Python < 3.11
        import tomli as tomllib  # type: ignore[no-redef]
    pyproject = project / "pyproject.toml"
    if not pyproject.is_file():
        return {}
    table = tomllib.loads(pyproject.read_text(encoding="utf-8")).get("tool", {}).get("mplint", {})
    return {"library": table["library"]} if "library" in table else {}


def fix(code: str, *rules: str, unsafe: bool = True, path: str = "<string>", **overrides: Any) -> str:
    """``code`` (dedented) fixed; the result must parse and a second fix must change nothing."""
    linter = make_linter(select=list(rules) or None, **overrides)
    fixed = fix_text(textwrap.dedent(code), path=path, unsafe=unsafe, linter=linter)
    cst.parse_module(fixed)
    assert fix_text(fixed, path=path, unsafe=unsafe, linter=linter) == fixed, "a second fix changed the code"
    return fixed


def as_at_a_terminal() -> None:
    """``preexec_fn`` for a child that is sent Ctrl-C: SIGINT reaches it as it does at a
    terminal. A run started in the background (``pytest &``, ``nohup .ci/run &``) hands
    its children SIGINT ignored, and Python then never raises KeyboardInterrupt."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_DFL)
