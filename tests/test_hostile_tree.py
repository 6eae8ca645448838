"""Issue 27's 'done when': one run over a tree holding every hostile input the audit
found completes, says one line per bad input, and reports the other files' findings,
serially and with the worker pool, and changes nothing outside the tree but mplint's
own cache folder (hashes, modes and mtimes of a folder beside the tree and of $HOME).
A bad configuration stops the run with one line, as ruff does: those inputs get a tree
each."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import time
from pathlib import Path
from typing import Dict, List, Tuple

import pytest

from helpers import BAD, run_process, write_files
from mplint.core import temp_files

POLICY = 'import tensorflow as tf\ntf.keras.mixed_precision.set_global_policy("mixed_float16")\n'
SOFTMAX = 'm = tf.keras.Sequential([tf.keras.layers.Dense(10, activation="softmax")])\n'
#: a shape libcst's native parser is slow on, and Python cannot interrupt: chains of 450
#: subscripts (under the depth guard's 500). libcst 1.9 parses 20 of them in about 3.6 s
#: of CPU, too close to the budget, so 60: about 11 s, far above it on any machine
SLOW = "import tensorflow as tf\nd = tf.keras.layers.Dense(1001, dtype='float16')\n" + (
    "x = a" + "[0]" * 450 + "\n") * 60
#: the budget the run is given: far below SLOW's cost, far above any other file's
BUDGET = "3"
#: cells of the large notebook, one finding each
BIG_CELLS = 1000


def _notebook(*cells: str, extra: Dict[str, object] = None) -> str:
    book = {"cells": [{"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [],
                       "source": cell} for cell in cells],
            "metadata": {"language_info": {"name": "python"}, **(extra or {})}, "nbformat": 4, "nbformat_minor": 5}
    return json.dumps(book, indent=1)


def _dead_pid() -> int:
    done = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    return int(done.stdout)


def build(root: Path) -> Dict[str, List[str]]:
    """The hostile tree under ``root / 'tree'`` (with ``root / 'outside'`` beside it);
    what a check must say: the findings expected, by file, and the one line each bad
    input gets."""
    tree, outside = root / "tree", root / "outside"
    long_name = "a" * 60 + ".py"
    files = {
        # files with findings
        "model.py": BAD,
        "pkg/train.py": POLICY + SOFTMAX,
        # 1. an imported layer's module holds a 10,000-term `and` chain / an unknown coding cookie
        "layers/main.py": POLICY + "from heads import Head\nfrom odd_cookie import Tail\n" + SOFTMAX,
        "layers/heads.py": "import tensorflow as tf\nclass Head(tf.keras.layers.Layer):\n    pass\n"
                           + "x = " + " and ".join(["a"] * 10000) + "\n",
        "layers/odd_cookie.py": "# -*- coding: no-such-codec -*-\nimport tensorflow as tf\n"
                                "class Tail(tf.keras.layers.Layer):\n    pass\n",
        # 2. an f-string nested beyond CPython's limit
        "fstring.py": POLICY + "x = f'{" + "(" * 1500 + "1" + ")" * 1500 + "}'\n",
        # 4. a notebook whose JSON nests 100,000 deep
        "deep.ipynb": '{"cells": [{"cell_type": "code", "source": "import tensorflow"}], "metadata": {"x": '
                      + "[" * 100000 + "]" * 100000 + '}, "nbformat": 4}',
        # 5. a .gitignore pattern that backtracks for hours in a regex, and a name it meets
        ".gitignore": "*a" * 30 + "*b\n",
        long_name: BAD,
        # 6. a chain of subscripts 2,900 deep (85 s in libcst once) and 1,000 findings in one file
        "chain.py": POLICY + "x = a" + "[0]" * 2900 + "\n",
        "many.py": POLICY + "".join(f"d{i} = tf.keras.layers.Dense({i * 8 + 10})\n" for i in range(1000)),
        # 8. cell lines that look like mplint's own markers
        "markers.ipynb": _notebook("%matplotlib inline\n" + POLICY,
                                   's = """\n# mplint: cell 2\npass  # mplint: magic 0\n"""\n' + SOFTMAX),
        # 11. control characters in a file name
        "new\nline\x1b[2J.py": BAD,
        # 14. NaN and Infinity in a notebook, as Python's json writes them
        "nan.ipynb": _notebook(POLICY, SOFTMAX, extra={"a": float("nan"), "b": float("inf")}),
        # 15. operator-first continuation lines in brackets
        "continued.ipynb": _notebook(POLICY, "ok = (\n    a\n    % 3\n    != b\n)\n" + SOFTMAX),
        # 18. valid Python libcst cannot read
        "annotated.py": POLICY + "(x): int = 1\n",
        # the time budget: a file libcst would hold for many seconds, and one that sets a
        # policy, which the project index parses before any check
        "slow.py": SLOW,
        "slow_train.py": POLICY + SLOW,
        # 6. a large notebook, one finding per cell
        "big.ipynb": _notebook(POLICY, *(f"d{i} = tf.keras.layers.Dense({i * 8 + 10})\n" for i in range(BIG_CELLS))),
        # 11. control characters in a source line
        "ctrl.py": BAD.replace("import tensorflow as tf", "import tensorflow as tf  # \x1b[31mred\x07\x1b]0;x\x07"),
        # 10. the repository's configuration moves the cache outside the tree, into a folder
        # holding result files mplint did not write
        "mplint.toml": 'cache-dir = "../outside/cache2"\n',
    }
    write_files(tree, files)
    write_files(outside, {"model.py": BAD, "cache/index.json": "{}", "cache/results-" + "0" * 32 + ".json": "{}",
                          "cache2/index.json": "{}",
                          **{f"cache2/results-{n:032x}.json": "{}" for n in range(12)}})
    # 3. a file name that is not UTF-8
    with open(os.path.join(os.fsencode(tree), b"latin\xe9.py"), "wb") as handle:
        handle.write(BAD.encode())
    # 9. a symlink to a file outside the tree; 10. a committed cache folder that is a symlink
    os.symlink(outside / "model.py", tree / "innocent.py")
    os.symlink(outside / "cache", tree / ".mplint_cache")
    # a symlinked folder leading outside: the walk does not follow it
    os.symlink(outside, tree / "linked_dir")
    # a FIFO named like a module: a walk leaves it out (as ruff does), and never blocks on it
    os.mkfifo(tree / "pipe.py")
    # 16. a temporary file a killed mplint left
    (tree / "pkg" / f"{temp_files.PREFIX}{temp_files._host()}-{_dead_pid()}-0123abcd{temp_files.SUFFIX}").write_text(
        "half")
    findings = {
        "model.py": ["model.py:4:30: MP101"],
        "pkg/train.py": ["pkg/train.py:3:26: MP101"],
        "layers/main.py": ["layers/main.py:5:26: MP101"],
        long_name: [f"{long_name}:4:30: MP101"],
        "many.py": [f"many.py:{i + 3}:" for i in range(1000)],  # no size there is a multiple of 8
        "markers.ipynb": ["markers.ipynb:cell 2:5:26: MP101"],
        "new\\nline\\x1b[2J.py": ["new\\nline\\x1b[2J.py:4:30: MP101"],  # escaped: one line
        "nan.ipynb": ["nan.ipynb:cell 2:1:26: MP101"],
        "continued.ipynb": ["continued.ipynb:cell 2:6:26: MP101"],
        "latin\\xe9.py": ["latin\\xe9.py:4:30: MP101"],
        "innocent.py": ["innocent.py:4:30: MP101"],  # checked; only fix refuses to write through it
        "big.ipynb": [f"big.ipynb:cell {i + 2}:1:" for i in range(BIG_CELLS)],
        "ctrl.py": ["ctrl.py:4:30: MP101"],
    }
    lines = {
        "layers/heads.py": ["mplint: error: layers/heads.py: too deeply nested to parse"],
        "layers/odd_cookie.py": ["mplint: error: layers/odd_cookie.py: "],
        "fstring.py": ["mplint: error: fstring.py: too deeply nested to parse"],
        "deep.ipynb": ["mplint: error: deep.ipynb: invalid notebook: its JSON nests too deeply to read"],
        "chain.py": ["mplint: error: chain.py: too deeply nested to parse"],
        "annotated.py": ["mplint: error: annotated.py: is valid Python that mplint's parser (libcst) cannot read"],
        "slow.py": [f"mplint: error: slow.py: took longer than {BUDGET} s (file-timeout); skipped"],
        "slow_train.py": [f"mplint: error: slow_train.py: took longer than {BUDGET} s (file-timeout); skipped"],
    }
    return {"findings": [f for each in findings.values() for f in each], "lines": [x for each in lines.values()
                                                                                     for x in each]}


def _snapshot(folder: Path) -> Dict[str, Tuple[object, ...]]:
    """Every entry under ``folder`` (links not followed): its kind, mode, mtime and
    content or target."""
    found: Dict[str, Tuple[object, ...]] = {}
    for where, folders, files in os.walk(folder):
        for name in folders + files:
            path = os.path.join(where, name)
            st = os.lstat(path)
            content = (os.readlink(path) if stat.S_ISLNK(st.st_mode) else
                       Path(path).read_bytes() if stat.S_ISREG(st.st_mode) else None)
            found[os.path.relpath(path, folder)] = (st.st_mode, st.st_mtime_ns, content)
    return found


def _changed(before: Dict[str, Tuple[object, ...]], after: Dict[str, Tuple[object, ...]]) -> List[str]:
    return sorted(path for path in before.keys() | after.keys() if before.get(path) != after.get(path))


@pytest.mark.slow
@pytest.mark.parametrize("jobs", ["1", "2"], ids=["serial", "pool"])
def test_a_run_over_every_hostile_input_completes_and_reports_the_rest(tmp_path, jobs):
    expected = build(tmp_path)
    home = tmp_path / "home"
    write_files(home, {".bashrc": "# the user's\n", ".cache/other/keep": "x"})
    env = {"HOME": str(home), "XDG_CACHE_HOME": ""}
    before, home_before = _snapshot(tmp_path / "outside"), _snapshot(home)
    started = time.monotonic()
    result = run_process("check", "--jobs", jobs, "--file-timeout", BUDGET, ".", cwd=tmp_path / "tree", env=env)
    took = time.monotonic() - started
    stdout, stderr = result.stdout_bytes.decode("utf-8"), result.stderr_bytes.decode("utf-8")
    assert "Traceback" not in stderr and "internal error" not in stderr, stderr[-3000:]
    assert result.returncode == 2
    reported = [line for line in stdout.splitlines() if ": MP" in line]
    for wanted in expected["findings"]:
        assert any(line.startswith(wanted) for line in reported), (wanted, stdout[-3000:])
    assert len(reported) == len(expected["findings"]), stdout[-3000:]
    said = [line for line in stderr.splitlines() if line.startswith("mplint: error:")]
    for wanted in expected["lines"]:
        assert sum(line.startswith(wanted) for line in said) == 1, (wanted, said)
    assert len(said) == len(expected["lines"]), said
    assert _changed(before, _snapshot(tmp_path / "outside")) == []  # neither the link nor cache-dir was followed
    assert not list((tmp_path / "tree" / "pkg").glob(temp_files.PREFIX + "*"))
    assert took < 240, took  # a hang detector: the slow file alone would take minutes
    fixed = run_process("fix", "--jobs", jobs, "--file-timeout", BUDGET, ".", cwd=tmp_path / "tree", env=env)
    errors = fixed.stderr_bytes.decode("utf-8")
    assert fixed.returncode == 2 and "Traceback" not in errors, errors[-3000:]
    assert "innocent.py: leads through a symbolic link" in errors and "slow.py: took longer than" in errors
    assert _changed(before, _snapshot(tmp_path / "outside")) == []  # nothing written through a link or cache-dir
    # in $HOME, only mplint's own cache folder (and the mtime of the folder holding it)
    own = os.path.join(".cache", "mplint")
    assert [p for p in _changed(home_before, _snapshot(home)) if p != ".cache" and not p.startswith(own)] == []
    assert _snapshot(home)[os.path.join(".cache", "other", "keep")] == home_before[os.path.join(".cache", "other", "keep")]
    assert (tmp_path / "tree" / "model.py").read_text() != BAD  # the rest was fixed
    assert "\x1b" not in result.stdout_bytes.decode() + errors  # no control character reaches the terminal


#: configurations that stop a run with one line (exit 2), and those that run no rule
#: (a warning, exit 0): a folder each, with a file that has a finding
CONFIGURATIONS = [
    ("pyproject.toml", "[tool.other]\nx = " + "[" * 5000 + "]" * 5000 + "\n", [],
     "pyproject.toml: nests arrays or tables too deeply to read"),
    ("pyproject.toml", "[tool.other]\nx = " + "{a = " * 3000 + "1" + "}" * 3000 + "\n", [],
     "pyproject.toml: nests arrays or tables too deeply to read"),
    ("mplint.toml", "alignment = 99999999999999999999\n", [], "'alignment' must be at most 1024"),
    ("mplint.toml", 'select = [""]\n', [], "'select': an empty rule code ('') selects nothing"),
    ("", "", ["--select", ","], "--select: an empty rule code ('') selects nothing"),
    ("", "", ["--config", "fifo.toml"], "fifo.toml: is not a regular file (a FIFO, socket or device); not read"),
    ("", "", ["--jobs", "-3"], "argument --jobs/-j: must be 0 (one per core) or a positive whole number, got '-3'"),
]


@pytest.mark.slow
@pytest.mark.parametrize("name, text, options, line", CONFIGURATIONS,
                         ids=["deep-arrays", "deep-tables", "huge-alignment", "empty-code", "empty-select", "fifo",
                              "negative-jobs"])
@pytest.mark.parametrize("jobs", ["1", "2"], ids=["serial", "pool"])
def test_a_bad_configuration_stops_the_run_with_one_line(tmp_path, name, text, options, line, jobs):
    write_files(tmp_path, {"m.py": BAD, **({name: text} if name else {})})
    if "fifo.toml" in options:
        os.mkfifo(tmp_path / "fifo.toml")
    jobs_option = [] if "--jobs" in options else ["--jobs", jobs]
    before = _snapshot(tmp_path)
    for command in ("check", "fix"):
        result = run_process(command, *jobs_option, *options, ".", cwd=tmp_path)
        errors = result.stderr_bytes.decode()
        assert result.returncode == 2 and "Traceback" not in errors, errors[-2000:]
        assert line in errors and not [x for x in errors.splitlines() if ": MP" in x]
        assert _changed(before, _snapshot(tmp_path)) == []


@pytest.mark.slow
@pytest.mark.parametrize("config, options", [({"mplint.toml": "select = []\n"}, []), ({}, ["--ignore", "ALL"])],
                         ids=["select-nothing", "ignore-all"])
def test_a_configuration_that_runs_no_rule_says_so(tmp_path, config, options):
    write_files(tmp_path, {"m.py": BAD, **config})
    result = run_process("check", *options, ".", cwd=tmp_path)
    assert result.returncode == 0 and result.stdout_bytes.decode() == "No rule was run: nothing was checked.\n"
    assert "mplint: warning: no rule is selected for 1 file" in result.stderr_bytes.decode()
