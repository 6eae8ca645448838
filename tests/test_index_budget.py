"""The project index obeys the per-file time budget (``file-timeout``) as the check does.

The index parses every file that sets a policy before any file is checked; a
pathological one (shapes libcst's parser takes many seconds on, generated here,
never committed) must cost its budget and one line, not the parser's minutes, and
its facts are unknown: rules stay silent on what they would need from it."""

from __future__ import annotations

import os
import resource
from pathlib import Path

import pytest

from helpers import run_process, write_files
from mplint.api import make_linter
from mplint.run.cache import Cache
from mplint.run.project import build_project

POLICY = 'import tensorflow as tf\ntf.keras.mixed_precision.set_global_policy("mixed_float16")\n'
SOFTMAX = 'm = tf.keras.Sequential([tf.keras.layers.Dense(10, activation="softmax")])\n'
#: 40 chains of 450 subscripts, under the depth guard's 500: libcst's native parser
#: takes over 30 s of CPU on them (cubic), and Python cannot interrupt it
CHAINS = ("x = a" + "[0]" * 450 + "\n") * 40
#: a program that sets the policy for the model it imports, and that libcst is slow on
SLOW_TRAIN = POLICY + "from model import build\nm = build()\n" + CHAINS
MODEL = 'import tensorflow as tf\ndef build():\n    return tf.keras.Sequential([tf.keras.layers.Dense(10, activation="softmax")])\n'
#: what costs the slow file its parse, far above the budget the tests give
BUDGET = "1"
LATE = f"took longer than {BUDGET} s (file-timeout); skipped"


def _project(root: Path, setters: int = 0) -> Path:
    """A repository: the slow ``train.py``, the ``model.py`` it governs, ``other.py``
    (a policy and a float16 softmax of its own), and ``setters`` more small files that
    set a policy (so the index has enough parses for a pool)."""
    files = {"train.py": SLOW_TRAIN, "model.py": MODEL, "other.py": POLICY + SOFTMAX}
    files.update({f"setter{i}.py": POLICY for i in range(setters)})
    write_files(root, files)
    (root / ".git").mkdir()
    return root


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def test_a_file_over_the_budget_is_left_unindexed_and_its_facts_unknown(tmp_path):
    root = _project(tmp_path)
    settings = make_linter().settings
    cache = Cache(root / ".mplint_cache")
    before = _children_cpu()
    project = build_project([str(root)], settings, cache, budget=float(BUDGET))
    train = str(root / "train.py")
    assert project.unindexed == {train: LATE}
    assert train not in project.files  # no facts, not empty facts: nothing is cached for it
    assert cache.index_get(train, (root / "train.py").read_bytes()) is None
    assert str(root / "other.py") in project.files  # the other files are indexed as ever
    # The parse ran in a worker stopped at its budget (a hang detector, not a speed claim:
    # unstopped, the parse alone takes over 30 s of CPU).
    assert _children_cpu() - before < 10
    governed = project.program.governance(str(root / "model.py"))
    assert not governed.policies  # train.py's policy is unknown, so it reaches nothing


def test_without_a_budget_the_index_parses_in_this_process_and_keeps_the_module(tmp_path):
    root = _project(tmp_path / "p")
    (root / "train.py").write_text(POLICY + "from model import build\nm = build()\n")
    parsed: dict = {}
    project = build_project([str(root)], make_linter().settings, parsed=parsed)
    assert not project.unindexed
    assert str(root / "train.py") in parsed  # the check reuses it: one parse per file
    assert project.program.governance(str(root / "model.py")).policies == {"mixed_float16"}


def _lines(stderr: bytes, start: str) -> list:
    return [line for line in stderr.decode().splitlines() if line.startswith(start)]


@pytest.mark.parametrize("jobs", ["1", pytest.param("2", marks=pytest.mark.slow)], ids=["serial", "pool"])
def test_check_and_fix_say_one_line_for_the_slow_file_and_report_the_rest(tmp_path, jobs):
    root = _project(tmp_path, setters=8)
    before = _children_cpu()
    checked = run_process("check", "--jobs", jobs, "--file-timeout", BUDGET, ".", cwd=root)
    assert "Traceback" not in checked.stderr, checked.stderr
    assert checked.returncode == 2  # the slow file is among the checked: it could not be checked
    # One line: the index gave up on it, so its check does not try again.
    assert _lines(checked.stderr_bytes, "mplint:") == [f"mplint: error: train.py: {LATE}"]
    assert "other.py:3:26: MP101" in checked.stdout
    assert "model.py" not in checked.stdout  # the policy that would reach it is unknown
    assert _children_cpu() - before < 20  # a hang detector: the parse alone takes over 30 s
    fixed = run_process("fix", "--jobs", jobs, "--file-timeout", BUDGET, ".", cwd=root)
    assert fixed.returncode == 2 and "Traceback" not in fixed.stderr, fixed.stderr
    assert _lines(fixed.stderr_bytes, "mplint:") == [f"mplint: error: train.py: {LATE}"]
    assert 'dtype="float32"' in (root / "other.py").read_text() or "dtype='float32'" in (root / "other.py").read_text()
    assert (root / "train.py").read_text() == SLOW_TRAIN


def test_a_run_on_other_files_warns_once_about_the_unindexed_one(tmp_path):
    # pre-commit names the changed files: the slow setter is indexed only, never checked
    root = _project(tmp_path)
    result = run_process("check", "--file-timeout", BUDGET, "model.py", "other.py", cwd=root)
    assert "Traceback" not in result.stderr, result.stderr
    assert result.returncode == 1  # the findings decide: a file not checked is a warning
    assert _lines(result.stderr_bytes, "mplint:") == [
        f"mplint: warning: train.py: {LATE}; the policy it may set is unknown to the other files' checks"]
    assert "other.py:3:26: MP101" in result.stdout and "model.py" not in result.stdout


def test_a_budget_of_zero_means_no_limit_for_the_index_too(tmp_path):
    root = _project(tmp_path)
    (root / "train.py").write_text(POLICY + "from model import build\nm = build()\n" + "x = a[0]\n")
    result = run_process("check", "--file-timeout", "0", "model.py", cwd=root)
    assert result.returncode == 1 and not _lines(result.stderr_bytes, "mplint:"), result.stderr
    assert "model.py:3:" in result.stdout  # train.py's policy reaches it


# -- the other ways in: stdin and `analyze policy` -----------------------------------------
def test_stdin_for_a_file_the_slow_setter_governs_is_warned_its_policy_is_unknown(tmp_path):
    # an editor's --stdin-filename run indexes the project first: the slow setter costs
    # its budget and one warning, as on the command line
    root = _project(tmp_path)
    before = _children_cpu()
    result = run_process("check", "--file-timeout", BUDGET, "--stdin-filename", "model.py", "-",
                         cwd=root, input=MODEL)
    assert "Traceback" not in result.stderr, result.stderr
    assert result.returncode == 0 and "model.py" not in result.stdout  # the policy is unknown
    assert _lines(result.stderr_bytes, "mplint:") == [
        f"mplint: warning: train.py: {LATE}; the policy it may set is unknown to the other files' checks"]
    assert _children_cpu() - before < 20  # a hang detector: the parse alone takes over 30 s


def test_stdin_holding_the_slow_file_is_one_line_not_a_second_parse(tmp_path):
    # the buffer itself is the file the index gave up on: its check in this process (no
    # worker, no budget) would take as long, so it is said once instead
    root = _project(tmp_path)
    for command in ("check", "fix"):
        result = run_process(command, "--file-timeout", BUDGET, "--stdin-filename", "train.py", "-",
                             cwd=root, input=SLOW_TRAIN)
        assert "Traceback" not in result.stderr, result.stderr
        assert result.returncode == 2, (command, result.stderr)
        assert _lines(result.stderr_bytes, "mplint:") == [f"mplint: error: train.py: {LATE}"], command
    assert result.stdout == SLOW_TRAIN  # `fix -` gives the buffer back unchanged


def _configured(root: Path) -> Path:
    (root / "pyproject.toml").write_text(f"[tool.mplint]\nfile-timeout = {BUDGET}\n")
    return root


def test_analyze_policy_keeps_the_budget_and_says_which_file_it_left_out(tmp_path):
    root = _configured(_project(tmp_path))
    (root / "caller.py").write_text(POLICY + "from model import build\nm = build()\n")
    before = _children_cpu()
    result = run_process("analyze", "policy", cwd=root)
    assert "Traceback" not in result.stderr, result.stderr
    assert result.returncode == 0
    assert _lines(result.stderr_bytes, "mplint:") == [
        f"mplint: warning: train.py: {LATE}; the policies it may set are not shown"]
    # the other files' routes are shown as ever; the slow one's are unknown
    assert "build(): mixed_float16 (set in caller.py:2" in result.stdout and "train.py" not in result.stdout
    assert _children_cpu() - before < 20
