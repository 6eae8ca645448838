"""No input may crash or hang a run, no repository may steer where mplint writes, and
the cache never replays a failure (issue 27). Each test failed before its fix."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

from mplint.core.results import REPORT_TO
from helpers import BAD, GOOD, outcome, run_cli, run_process, write_files

POLICY = 'import tensorflow as tf\ntf.keras.mixed_precision.set_global_policy("mixed_float16")\n'
AND_CHAIN = "x = " + " and ".join(["a"] * 10000) + "\n"


def _errors(result):
    assert "Traceback" not in result.stderr, result.stderr[-2000:]
    return result.stderr.strip().splitlines()


# -- 1. an imported module is parsed through the same guard as a checked file ----------
IMPORTER = POLICY + textwrap.dedent("""\
    from heads import Head
    m = tf.keras.Sequential([tf.keras.layers.Dense(16), Head()])
""")


@pytest.mark.parametrize("heads", [
    "import tensorflow as tf\nclass Head(tf.keras.layers.Layer):\n    pass\n" + AND_CHAIN,
    "# -*- coding: no-such-codec -*-\nimport tensorflow as tf\nclass Head(tf.keras.layers.Layer):\n    pass\n",
], ids=["and_chain", "unknown_cookie"])
@pytest.mark.parametrize("jobs", ["1", "2"])
def test_an_imported_module_that_would_crash_libcst_costs_no_run(tmp_path, heads, jobs):
    files = {"main.py": IMPORTER, "heads.py": heads}
    files.update({f"model{i}.py": BAD for i in range(8)})  # enough files for the worker pool
    write_files(tmp_path, files)
    result = run_process("check", "--no-cache", "--jobs", jobs, "--select", "MP101", ".", cwd=tmp_path)
    code, found = outcome(result)
    assert sorted(found) == [(f"model{i}.py", 4, "MP101") for i in range(8)], result.stderr[-2000:]
    assert "internal error" not in result.stderr
    lines = _errors(result)
    # heads.py itself is reported once (when checked) and never crashes the importer's check
    assert all(line.startswith("mplint: error: heads.py:") for line in lines), lines


def test_an_fstring_nested_beyond_cpythons_limit_is_one_line(tmp_path):
    deep = POLICY + "x = f'{" + "(" * 1500 + "1" + ")" * 1500 + "}'\n"
    write_files(tmp_path, {"deep.py": deep, "model.py": BAD})
    result = run_process("check", "--no-cache", ".", cwd=tmp_path)
    assert outcome(result) == (2, [("model.py", 4, "MP101")])
    [line] = _errors(result)
    assert line.startswith("mplint: error: deep.py: too deeply nested to parse"), line


# -- 4. deep JSON and TOML are one line, never a RecursionError -----------------------
def test_a_deeply_nested_notebook_is_one_line(tmp_path):
    deep = "[" * 100000 + "]" * 100000
    cell = '{"cell_type": "code", "metadata": {}, "outputs": [], "source": "import tensorflow as tf"}'
    book = '{"cells": [' + cell + '], "metadata": {"x": ' + deep + '}, "nbformat": 4, "nbformat_minor": 5}'
    write_files(tmp_path, {"deep.ipynb": book, "model.py": BAD})
    for command in ("check", "fix"):
        result = run_cli(command, "--no-cache", ".", cwd=tmp_path)
        [line] = _errors(result)
        assert line == "mplint: error: deep.ipynb: invalid notebook: its JSON nests too deeply to read", line


@pytest.mark.parametrize("nested", ["x = " + "[" * 100000 + "]" * 100000, "x = " + "{a = " * 50000 + "1" + "}" * 50000])
def test_a_deeply_nested_pyproject_is_one_line(tmp_path, nested):
    write_files(tmp_path, {"pyproject.toml": "[tool.other]\n" + nested + "\n", "model.py": BAD})
    result = run_cli("check", "--no-cache", ".", cwd=tmp_path)
    assert result.returncode == 2
    [line] = _errors(result)
    assert line.endswith("pyproject.toml: nests arrays or tables too deeply to read"), line


# -- a worker that dies is reported and the run completes ------------------------------
KILL_ONE_WORKER = textwrap.dedent("""\
    import os, signal, sys
    import mplint.run.runner as runner
    from mplint.cli import main

    run = runner.CheckTask.run

    def run_or_die(self, path, raw):
        if path.endswith("boom.py"):
            os.kill(os.getpid(), signal.SIGSEGV)  # what a native parser's stack overflow does
        return run(self, path, raw)

    runner.CheckTask.run = run_or_die
    sys.exit(main(sys.argv[1:]))
""")


def test_a_worker_that_dies_is_reported_and_the_run_completes(tmp_path):
    import subprocess

    files = {f"model{i}.py": BAD for i in range(12)}
    files["boom.py"] = BAD
    write_files(tmp_path, files)
    done = subprocess.run([sys.executable, "-c", KILL_ONE_WORKER, "check", "--no-cache", "--jobs", "2", "."],
                          cwd=tmp_path, capture_output=True, timeout=120)
    stdout, stderr = done.stdout.decode(), done.stderr.decode()
    assert "Traceback" not in stderr
    assert [line for line in stderr.splitlines() if line.startswith("mplint:")] == [
        "mplint: error: boom.py: mplint's worker process died on this file (killed by signal SIGSEGV); "
        f"not checked. Please report this to {REPORT_TO}"], stderr
    assert sum(f"model{i}.py:4:" in stdout for i in range(12)) == 12, stdout
    assert done.returncode == 2


# -- 3. a file name that is not UTF-8 --------------------------------------------------
@pytest.mark.parametrize("fmt", ["concise", "sarif"])
def test_a_file_name_that_is_not_utf8_is_checked_and_reported(tmp_path, fmt):
    name = b"model\xff.py"
    (tmp_path / "project").mkdir()
    with open(os.path.join(os.fsencode(tmp_path / "project"), name), "wb") as handle:
        handle.write(BAD.encode())
    walked = run_process("check", "--no-cache", "--output-format", fmt, ".", cwd=tmp_path / "project")
    named = run_process("check", "--no-cache", "--output-format", fmt, os.fsdecode(name), cwd=tmp_path / "project")
    outside = run_process("check", "--output-format", fmt, os.fsdecode(os.path.join(os.fsencode(tmp_path / "project"), name)),
                          cwd=tmp_path)
    for result in (walked, named, outside):
        assert result.returncode == 1, result.stderr_bytes[-1500:]
        assert b"Traceback" not in result.stderr_bytes and b"MP101" in result.stdout_bytes


def test_a_file_name_that_is_not_utf8_is_fixed(tmp_path):
    path = os.path.join(os.fsencode(tmp_path), b"model\xff.py")
    with open(path, "wb") as handle:
        handle.write(BAD.encode())
    result = run_process("fix", ".", cwd=tmp_path)
    assert result.returncode == 0 and b"Traceback" not in result.stderr_bytes, result.stderr_bytes[-1500:]
    with open(path, "rb") as handle:
        assert handle.read() == GOOD.encode()


# -- 5. .gitignore and exclude patterns match in linear time ---------------------------
from hypothesis import given, settings, strategies as st  # noqa: E402

from mplint.run.gitignore import LinearMatch, path_or_parent_matcher, wildmatch_pieces  # noqa: E402

_GLOBS = st.lists(st.sampled_from(["a", "b", "/", "*", "**", "?", "[ab]", "[!a]", "**/", "/**"]),
                  max_size=8).map("".join)
_PATHS = st.lists(st.sampled_from(["a", "b", "/", "ab"]), max_size=10).map("".join)


@settings(max_examples=400, deadline=None)
@given(_GLOBS, _PATHS)
def test_the_linear_matcher_agrees_with_the_regex(glob, path):
    import re

    pieces = wildmatch_pieces(glob)
    if pieces is None:
        return
    assert LinearMatch(pieces).fullmatch(path) == bool(re.fullmatch("".join(pieces), path, re.DOTALL))


def test_the_exclude_matcher_for_risky_lists_agrees_with_pathspec():
    import pathspec

    patterns = ["*a*b*c", "build/", "docs/**/*x*y*.py", "/top*a*b"]
    for path in ("xaybzc", "src/xaybzc", "build/", "src/build/f.py", "docs/q/r/1x2y3.py", "docs/1x2y3.py",
                 "top1a2b", "sub/top1a2b", "src/ok.py", "xaybzc/inner.py"):
        expected = pathspec.GitIgnoreSpec.from_lines(patterns).match_file(path)
        assert path_or_parent_matcher(patterns)(path) == expected, path


HOSTILE = "*a" * 30 + "*b"


@pytest.mark.parametrize("where", ["gitignore", "exclude", "per-file-ignores"])
def test_a_backtracking_pattern_never_stalls_a_run(tmp_path, where):
    files = {"model.py": BAD, "a" * 60 + ".py": BAD}
    if where == "gitignore":
        files[".gitignore"] = HOSTILE + "\n"
    elif where == "exclude":
        files["pyproject.toml"] = f'[tool.mplint]\nexclude = ["{HOSTILE}"]\n'
    else:
        files["pyproject.toml"] = f'[tool.mplint]\nper-file-ignores = {{"{HOSTILE}" = ["MP101"]}}\n'
    write_files(tmp_path, files)
    # a hang detector, not a speed test: the regex took hours on this name
    result = run_process("check", "--no-cache", ".", cwd=tmp_path)
    assert ("a" * 60 + ".py:4") in result.stdout and "model.py:4" in result.stdout, result.stderr[-1500:]


# -- 12, 13. `check` with the cache always equals `check --no-cache` --------------------
def _notebook(*cells):
    return json.dumps({"cells": [{"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [],
                                  "source": cell} for cell in cells],
                       "metadata": {"language_info": {"name": "python"}}, "nbformat": 4, "nbformat_minor": 5},
                      indent=1)


SOFTMAX = 'm = tf.keras.Sequential([tf.keras.layers.Dense(10, activation="softmax")])\n'
PY_CONTENTS = [BAD, GOOD, POLICY + "x = (\n", POLICY + "def f():\n    " + SOFTMAX + "\n" + SOFTMAX]
NB_CONTENTS = [
    _notebook(POLICY, SOFTMAX, "x = 1\n", SOFTMAX),
    _notebook(POLICY, "def broken(:\n", SOFTMAX),  # a cell left out, with its warning
    _notebook(POLICY + "\n\n" + SOFTMAX, "y = [\n    1\n    % 3]\n", SOFTMAX),
]
FILES = ["a.py", "b.py", "n.ipynb"]
_OPS = st.one_of(
    st.tuples(st.just("write"), st.sampled_from(FILES), st.integers(0, 3)),
    st.tuples(st.just("chmod"), st.sampled_from(FILES), st.booleans()),
    st.tuples(st.just("fix"), st.just(""), st.booleans()),
    st.tuples(st.just("check"), st.just(""), st.just(0)),
)


def _apply(folder, op):
    kind, name, arg = op
    path = os.path.join(folder, name)
    if kind == "write":
        contents = NB_CONTENTS if name.endswith(".ipynb") else PY_CONTENTS
        if os.path.exists(path):
            os.chmod(path, 0o644)
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(contents[arg % len(contents)])
    elif kind == "chmod" and os.path.exists(path):
        os.chmod(path, 0o444 if arg else 0o644)
    elif kind == "fix":
        run_cli("fix", *(["--unsafe-fixes"] if arg else []), ".", cwd=folder)
    elif kind == "check":
        run_cli("check", ".", cwd=folder)


def _report(result):
    return result.returncode, result.stdout, sorted(result.stderr.splitlines())


@settings(max_examples=25, deadline=None)
@given(st.lists(_OPS, min_size=1, max_size=6))
def test_check_with_the_cache_equals_check_without_it(ops):
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        for name in FILES:
            _apply(folder, ("write", name, 0))
        for op in ops:
            _apply(folder, op)
            cached = run_cli("check", ".", cwd=folder)
            fresh = run_cli("check", "--no-cache", ".", cwd=folder)
            assert _report(cached) == _report(fresh), (op, cached.stdout, cached.stderr)
        for name in FILES:
            os.chmod(os.path.join(folder, name), 0o644)


def test_a_write_failure_is_never_replayed_by_the_cache(tmp_path):
    write_files(tmp_path, {"model.py": BAD})
    (tmp_path / "model.py").chmod(0o444)
    failed = run_cli("fix", ".", cwd=tmp_path)
    assert failed.returncode == 2 and "is read-only; not written" in failed.stderr
    (tmp_path / "model.py").chmod(0o644)
    checked = run_cli("check", ".", cwd=tmp_path)
    assert outcome(checked) == (1, [("model.py", 4, "MP101")]) and checked.stderr == ""


# -- 9, 10. nothing outside the tree or mplint's own cache folder changes ----------------
def _snapshot(folder):
    """Every path under ``folder`` with its bytes (or link target)."""
    out = {}
    for base, dirs, files in os.walk(folder):
        for name in dirs + files:
            path = os.path.join(base, name)
            if os.path.islink(path):
                out[path] = "-> " + os.readlink(path)
            elif os.path.isfile(path):
                with open(path, "rb") as handle:
                    out[path] = handle.read()
    return out


def test_fix_never_writes_through_a_link_out_of_the_tree(tmp_path):
    write_files(tmp_path, {"other-project/model.py": BAD, "tree/pyproject.toml": "[tool.mplint]\n",
                           "tree/own.py": BAD})
    os.symlink("../other-project/model.py", tmp_path / "tree" / "innocent.py")
    before = _snapshot(tmp_path / "other-project")
    for named in (".", "innocent.py"):
        result = run_cli("fix", named, cwd=tmp_path / "tree")
        assert result.returncode == 2
        assert "innocent.py: leads through a symbolic link to" in result.stderr
        assert "outside the tree being fixed" in result.stderr
    assert _snapshot(tmp_path / "other-project") == before
    assert (tmp_path / "tree" / "own.py").read_text() == GOOD


@pytest.mark.parametrize("trap", ["cache_link", "version_link", "cache_dir_setting"])
def test_a_repository_cannot_point_the_cache_elsewhere(tmp_path, trap):
    from mplint import __version__
    from mplint.run.cache import FORMAT

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    victims = {f"results-{i:032x}.json": "{}" for i in range(12)}
    victims.update({"index.json": '{"mine": 1}', "summaries.json": '{"mine": 2}', "notes.txt": "keep"})
    write_files(elsewhere, victims)
    repo = tmp_path / "repo"
    write_files(repo, {"pyproject.toml": "[tool.mplint]\n", "model.py": BAD, "other.py": GOOD})
    if trap == "cache_link":
        os.symlink(elsewhere, repo / ".mplint_cache")
    elif trap == "version_link":
        (repo / ".mplint_cache").mkdir()
        os.symlink(elsewhere, repo / ".mplint_cache" / f"{__version__}-{FORMAT}")
    else:
        (repo / "pyproject.toml").write_text(f'[tool.mplint]\ncache-dir = "{elsewhere}"\n')
    before = _snapshot(elsewhere)
    for args in (["check"], ["check", "--select", "MP101"], ["fix"], ["check"]):
        result = run_cli(*args, ".", cwd=repo)
        assert "Traceback" not in result.stderr
    assert _snapshot(elsewhere) == before
    assert outcome(run_cli("check", ".", cwd=repo)) == (0, [])


def test_pruning_deletes_only_result_files_mplint_names(tmp_path):
    from mplint.run.cache import KEEP_RUN_FILES, Cache

    cache = Cache(tmp_path / "cache")
    cache.use_run("0" * 32)
    cache.put(str(tmp_path / "x.py"), "d", [], [])
    cache.save()
    keep = {"results-mine.json": "{}", "results-1.json.bak": "{}", "notes.txt": ""}
    write_files(cache.version_dir, keep)
    os.symlink(tmp_path / "outside.json", cache.version_dir / f"results-{'f' * 32}.json")
    (tmp_path / "outside.json").write_text("{}")
    for i in range(1, KEEP_RUN_FILES + 4):
        run = Cache(tmp_path / "cache")
        run.use_run(f"{i:032x}")
        run.put(str(tmp_path / "x.py"), "d", [], [])
        run.save()
    names = sorted(os.listdir(cache.version_dir))
    assert [n for n in names if n.startswith("results-") and len(n) == 45 and not os.path.islink(
        cache.version_dir / n)].__len__() == KEEP_RUN_FILES
    assert set(keep) <= set(names) and (tmp_path / "outside.json").exists()


# -- 8. a cell's text can say anything: no line can forge a marker ----------------------
@pytest.mark.parametrize("forged", ["# mplint: cell 2", "pass  # mplint: magic 0"])
def test_a_cell_line_that_looks_like_a_marker_survives_fix(tmp_path, forged):
    doc = f's = """\n{forged}\ntail\n"""\n'
    book = _notebook("%matplotlib inline\n" + POLICY, doc + SOFTMAX, "%time x = 1\nprint(s)\n")
    write_files(tmp_path, {"n.ipynb": book})
    result = run_cli("fix", ".", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    cells = [c["source"] for c in json.loads((tmp_path / "n.ipynb").read_text())["cells"]]
    joined = ["".join(c) if isinstance(c, list) else c for c in cells]
    assert joined == ["%matplotlib inline\n" + POLICY, doc + SOFTMAX.replace('"softmax"', '"softmax", dtype="float32"'),
                      "%time x = 1\nprint(s)\n"]


# -- 15. operator-first continuation lines in brackets are Python, not magics -----------
@pytest.mark.parametrize("continued", ["    % 3", "    != b", "    %b"])
def test_a_continuation_line_starting_with_an_operator_is_checked(tmp_path, continued):
    cell = "ok = (\n    a\n" + continued + "\n)\n" + SOFTMAX
    write_files(tmp_path, {"n.ipynb": _notebook(POLICY, cell)})
    result = run_cli("check", "--no-cache", ".", cwd=tmp_path)
    assert result.returncode == 1 and "cell not checked" not in result.stderr, result.stderr
    assert "n.ipynb:cell 2:5:" in result.stdout, result.stdout


# -- 6. a shape libcst parses in cubic time is one line, not minutes -------------------
@pytest.mark.parametrize("chain", [
    "x = a" + "[0]" * 2900 + "\n",  # one 9 KB line: 85 s in libcst's parser
    "x = (a\n" + "    [0]\n" * 2900 + ")\n",  # the same on short lines
    "x = f" + "()" * 2900 + "\n",
])
def test_a_long_chain_of_subscripts_or_calls_is_one_line(tmp_path, chain):
    from mplint.core.source import MAX_TRAILERS, SourceError, decode, parse

    with pytest.raises(SourceError, match="too deeply nested to parse"):
        parse(decode("chain.py", (POLICY + chain).encode()))
    parse(decode("ok.py", (POLICY + "x = a" + "[0]" * (MAX_TRAILERS - 10) + "\n").encode()))
    with pytest.raises(SourceError, match=f"{MAX_TRAILERS} calls, subscripts and attributes in a row"):
        parse(decode("chain.py", (POLICY + "x = (a\n" + "    [0]\n" * (MAX_TRAILERS + 10) + ")\n").encode()))


def test_the_positions_of_many_findings_are_resolved_together(monkeypatch):
    """Each top-level statement once had its own libcst position pass (milliseconds
    each: 4,000 findings took 16 s, 1,000 took 1.2 s); now they share one per batch."""
    from libcst.metadata import MetadataWrapper

    from helpers import lint

    calls = []
    resolve = MetadataWrapper.resolve
    monkeypatch.setattr(MetadataWrapper, "resolve", lambda self, provider: calls.append(1) or resolve(self, provider))
    code = POLICY + "".join(f"d{i} = tf.keras.layers.Dense({i * 8 + 10})\n" for i in range(1000))
    assert len(lint(code, "MP301")) == 1000
    assert len(calls) <= 1000 // 200 + 1


# -- 14. NaN and Infinity, as Python's json and Jupyter write them ----------------------
def test_a_notebook_holding_nan_and_infinity_is_fixed(tmp_path):
    book = json.loads(_notebook(POLICY, SOFTMAX))
    book["cells"][0]["outputs"] = [{"output_type": "execute_result", "execution_count": 1, "metadata": {},
                                    "data": {"application/json": {"a": float("nan"), "b": float("inf"),
                                                                  "c": -float("inf")}}}]
    text = json.dumps(book, indent=1)
    assert "NaN" in text and "-Infinity" in text
    write_files(tmp_path, {"n.ipynb": text})
    result = run_cli("fix", ".", cwd=tmp_path)
    assert result.returncode == 0 and result.stderr == "", result.stderr
    fixed = (tmp_path / "n.ipynb").read_text()
    assert fixed == text.replace('\\"softmax\\")', '\\"softmax\\", dtype=\\"float32\\")')


# -- 18. valid Python libcst cannot read is not the user's syntax error -------------------
def test_valid_python_the_parser_cannot_read_is_said_so(tmp_path):
    write_files(tmp_path, {"odd.py": POLICY + "(x): int = 1\n", "model.py": BAD})
    result = run_cli("check", "--no-cache", ".", cwd=tmp_path)
    assert outcome(result) == (2, [("model.py", 4, "MP101")])
    [line] = _errors(result)
    assert line.startswith("mplint: error: odd.py: is valid Python that mplint's parser (libcst) cannot read "
                           "(syntax error at line 3, column"), line
    assert line.endswith("; not checked")


# -- 17. configuration no longer accepted silently ---------------------------------------
@pytest.mark.parametrize("setting, message", [
    ("alignment = 99999999999999999999", "'alignment' must be at most 1024, got 99999999999999999999"),
    ('select = [""]', "'select': an empty rule code ('') selects nothing; remove it"),
    ('ignore = ["MP1", " "]', "'ignore': an empty rule code (' ') selects nothing; remove it"),
])
def test_a_setting_out_of_range_or_empty_is_an_error(tmp_path, setting, message):
    write_files(tmp_path, {"pyproject.toml": f"[tool.mplint]\n{setting}\n", "model.py": BAD})
    result = run_cli("fix", "--no-cache", ".", cwd=tmp_path)
    assert result.returncode == 2 and result.stdout == ""
    assert _errors(result) == [f"mplint: error: {tmp_path / 'pyproject.toml'}: {message}"]
    assert (tmp_path / "model.py").read_text() == BAD  # nothing written


@pytest.mark.parametrize("option", [["--select", ","], ["--select", ""], ["--ignore", "MP101,"],
                                    ["--extend-select", ",MP1"]])
def test_an_empty_code_on_the_command_line_is_an_error(tmp_path, option):
    write_files(tmp_path, {"model.py": BAD})
    result = run_cli("check", "--no-cache", *option, ".", cwd=tmp_path)
    assert result.returncode == 2 and result.stdout == ""
    assert _errors(result) == [f"mplint: error: {option[0]}: an empty rule code ('') selects nothing; remove it"]


@pytest.mark.parametrize("jobs", ["-3", "-1", "two"])
def test_jobs_must_be_zero_or_more(tmp_path, jobs):
    write_files(tmp_path, {"model.py": BAD})
    result = run_cli("check", "--jobs", jobs, ".", cwd=tmp_path)
    assert result.returncode == 2
    assert f"argument --jobs/-j: must be 0 (one per core) or a positive whole number, got '{jobs}'" in result.stderr


def test_jobs_zero_is_one_per_core(tmp_path):
    write_files(tmp_path, {"model.py": BAD})
    assert outcome(run_cli("check", "--no-cache", "--jobs", "0", ".", cwd=tmp_path)) == (1, [("model.py", 4, "MP101")])


@pytest.mark.parametrize("how", [["--ignore", "ALL"], ["--select", "MP1", "--ignore", "MP1"], ["config"]])
@pytest.mark.parametrize("command", ["check", "fix"])
def test_a_selection_of_no_rule_is_a_warning_not_a_clean_bill(tmp_path, how, command):
    write_files(tmp_path, {"model.py": BAD})
    if how == ["config"]:
        write_files(tmp_path, {"pyproject.toml": "[tool.mplint]\nselect = []\n"})
    result = run_cli(command, "--no-cache", *(how if how != ["config"] else []), ".", cwd=tmp_path)
    assert result.returncode == 0
    assert "All checks passed" not in result.stdout
    assert result.stdout == "No rule was run: nothing was checked.\n"
    where = tmp_path / "pyproject.toml" if how == ["config"] else "the default selection"
    assert _errors(result) == [f"mplint: warning: no rule is selected for 1 file ({where} and the command line's "
                               "--select and --ignore leave none); they are not checked"]
    assert (tmp_path / "model.py").read_text() == BAD


def test_a_config_that_is_not_a_regular_file_is_said_to_be_so(tmp_path):
    write_files(tmp_path, {"model.py": BAD})
    os.mkfifo(tmp_path / "fifo.toml")
    (tmp_path / "folder.toml").mkdir()
    fifo = run_cli("check", "--config", "fifo.toml", ".", cwd=tmp_path)
    folder = run_cli("check", "--config", "folder.toml", ".", cwd=tmp_path)
    missing = run_cli("check", "--config", "missing.toml", ".", cwd=tmp_path)
    assert (fifo.returncode, folder.returncode, missing.returncode) == (2, 2, 2)
    assert _errors(fifo) == ["mplint: error: fifo.toml: is not a regular file (a FIFO, socket or device); not read"]
    assert _errors(folder) == ["mplint: error: folder.toml: is a folder, not a configuration file"]
    assert _errors(missing) == ["mplint: error: missing.toml: config file not found"]


# -- 6. a per-file time budget: a file libcst would hold for minutes is one line ---------
#: 20 chains of 450 subscripts (under the depth guard): about 17 s of CPU in libcst's
#: native parser, which Python's signals cannot interrupt
SLOW = POLICY.replace("tf.keras.mixed_precision.set_global_policy", "policy = ") + (
    "x = a" + "[0]" * 450 + "\n") * 20


@pytest.mark.slow
@pytest.mark.parametrize("jobs", ["1", "2"], ids=["serial", "pool"])
@pytest.mark.parametrize("command", ["check", "fix"])
def test_a_file_over_the_time_budget_is_one_line_and_its_worker_is_replaced(tmp_path, jobs, command):
    files = {f"model{i}.py": BAD for i in range(9)}  # the pool's size
    files["slow.py"] = SLOW
    files["pyproject.toml"] = '[tool.mplint]\nassume-policy = "mixed_float16"\n'  # so SLOW is parsed
    write_files(tmp_path, files)
    result = run_process(command, "--no-cache", "--jobs", jobs, "--file-timeout", "1", ".", cwd=tmp_path)
    assert _errors(result) == ["mplint: error: slow.py: took longer than 1 s (file-timeout); skipped"]
    assert result.returncode == 2
    if command == "check":
        assert sorted(outcome(result)[1]) == [(f"model{i}.py", 4, "MP101") for i in range(9)]
    else:
        assert all((tmp_path / f"model{i}.py").read_text() == GOOD for i in range(9))
    assert sorted(os.listdir(tmp_path)) == sorted(files)  # no core file, no temporary file


@pytest.mark.parametrize("value, shown", [("-1", "'-1'"), ("nan", "'nan'"), ("1e9", "'1e9'"), ("soon", "'soon'")])
def test_file_timeout_must_be_a_sensible_number_of_seconds(tmp_path, value, shown):
    write_files(tmp_path, {"model.py": BAD})
    result = run_cli("check", "--file-timeout", value, ".", cwd=tmp_path)
    assert result.returncode == 2
    assert f"argument --file-timeout: must be a number of seconds from 0 (no limit) to 86400, got {shown}" \
        in result.stderr
    write_files(tmp_path, {"pyproject.toml": "[tool.mplint]\nfile-timeout = -1\n"})
    result = run_cli("check", ".", cwd=tmp_path)
    assert _errors(result) == [f"mplint: error: {tmp_path / 'pyproject.toml'}: 'file-timeout' must be a number of "
                               "seconds from 0 (no limit) to 86400, got -1"]


def test_file_timeout_is_read_from_the_configuration_and_the_command_line(tmp_path):
    write_files(tmp_path, {"pyproject.toml": "[tool.mplint]\nfile-timeout = 5.5\n", "model.py": BAD})
    shown = run_cli("check", "--show-settings", "model.py", cwd=tmp_path).stdout
    assert "file-timeout = 5.5" in shown
    shown = run_cli("check", "--file-timeout", "0", "--show-settings", "model.py", cwd=tmp_path).stdout
    assert "file-timeout = 0.0" in shown
    assert outcome(run_cli("check", "--no-cache", "--file-timeout", "0", ".", cwd=tmp_path)) == (
        1, [("model.py", 4, "MP101")])


# -- 19. the README's opening promise says which command imports TensorFlow --------------
def test_the_promise_never_to_import_tensorflow_excepts_the_runtime_checker():
    from helpers import ROOT

    opening = (ROOT / "README.md").read_text(encoding="utf-8").split("\n\n")[1]
    promise = " ".join(opening.split())
    assert "never import TensorFlow and never run your code" in promise
    # the one command that does, by design, is named where the promise is made
    assert "(only `mplint runtime` does, by design" in promise
    # and the static commands keep it: importing the command line loads no TensorFlow
    checked = subprocess.run(
        [sys.executable, "-c", "import sys, mplint.cli; print('tensorflow' in sys.modules, 'keras' in sys.modules)"],
        capture_output=True, text=True, timeout=120)
    assert checked.stdout.split() == ["False", "False"], checked.stderr
