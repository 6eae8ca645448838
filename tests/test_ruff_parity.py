"""What a ruff user expects of the report: severity in the text formats, each warning
once and only about the run's files, syntax errors as findings, the wording when
nothing needs fixing, and the command line's options."""

from __future__ import annotations

import json
import os
import textwrap

import pytest

from helpers import BAD, GOOD, as_at_a_terminal, reported, run_cli, write_files
from mplint import __version__
from mplint.rule.catalog import load_catalog

#: MP301 (a warning) and MP101 (an error) in one file
TWO_SEVERITIES = textwrap.dedent('''\
    import tensorflow as tf

    tf.keras.mixed_precision.set_global_policy("mixed_float16")
    model = tf.keras.Sequential([tf.keras.layers.Dense(100), tf.keras.layers.Dense(10, activation="softmax")])
''')
UNKNOWN_CODE = "import tensorflow as tf\n\nx = 1  # noqa: MP999\n"


def test_severity_shows_in_the_concise_and_full_formats(tmp_path):
    write_files(tmp_path, {"pyproject.toml": "", "m.py": TWO_SEVERITIES})
    for fmt in ("concise", "full"):
        lines = [line for line in run_cli("check", "--output-format", fmt, ".", cwd=tmp_path).stdout.splitlines()
                 if line.startswith("m.py:")]
        assert [line.split(": ", 2)[1] for line in lines] == ["MP301 warning", "MP101 error"], lines


def test_a_warning_is_said_once_and_only_by_runs_that_check_its_file(tmp_path):
    write_files(tmp_path, {"pyproject.toml": "", "other.py": UNKNOWN_CODE, "m.py": BAD})
    warning = "mplint: warning: other.py: line 3: unknown rule MP999 in a suppression comment"
    assert run_cli("check", ".", cwd=tmp_path).stderr.splitlines() == [warning]
    for args in (["check", "m.py"], ["check", "--force-exclude", "m.py"], ["fix", "--diff", "m.py"],
                 ["check", "-", "--stdin-filename", "m.py"]):
        assert "MP999" not in run_cli(*args, cwd=tmp_path, input=BAD).stderr, args
    # a fix checks the file again after each pass: the warning is still said once
    fixed = run_cli("fix", "-", "--stdin-filename", "other.py", cwd=tmp_path, input=UNKNOWN_CODE + BAD)
    assert fixed.stderr.count("unknown rule MP999") == 1, fixed.stderr


def test_nothing_to_fix_is_said_as_ruff_says_it(tmp_path):
    write_files(tmp_path, {"pyproject.toml": "", "m.py": GOOD})
    for args in (["fix", "."], ["fix", "--check", "."]):
        result = run_cli(*args, cwd=tmp_path)
        assert (result.returncode, result.stdout) == (0, "All checks passed!\n"), args


# -- syntax errors -------------------------------------------------------------------
def test_a_syntax_error_is_a_finding_in_json_and_exit_zero_covers_it(tmp_path):
    write_files(tmp_path, {"pyproject.toml": "", "broken.py": "import keras\nx = (\n"})
    result = run_cli("check", "--output-format", "json", ".", cwd=tmp_path)
    assert result.returncode == 1 and result.stderr.startswith("Found 1 problem")
    [finding] = json.loads(result.stdout)
    assert (finding["path"], finding["line"], finding["col"], finding["rule"], finding["fix"]) == (
        "broken.py", 2, 5, "syntax-error", None)
    assert run_cli("check", "--exit-zero", ".", cwd=tmp_path).returncode == 0
    # the summary points at no rule's documentation for it
    assert "mplint rule" not in run_cli("check", ".", cwd=tmp_path).stdout


# -- the command line ----------------------------------------------------------------
def test_rule_all_as_text_and_json():
    catalog = load_catalog()
    text = run_cli("rule", "--all")
    assert text.returncode == 0
    assert [line.split()[0] for line in text.stdout.splitlines() if line.startswith("MP") and " (" in line
            and line.endswith(")")] == list(catalog)
    data = json.loads(run_cli("rule", "--all", "--output-format", "json").stdout)
    assert [d["code"] for d in data] == list(catalog)
    assert data[0]["explanation"] + "\n" == run_cli("rule", data[0]["code"]).stdout
    assert {e["kind"] for e in data[0]["examples"]} == {"bad", "good"}
    one = json.loads(run_cli("rule", "float16-final-softmax", "--output-format", "json").stdout)
    assert one["code"] == "MP101" and one["fix"] == "safe"
    assert run_cli("rule").returncode == 2 and run_cli("rule", "MP101", "--all").returncode == 2


def test_short_version_flag():
    result = run_cli("-V")
    assert (result.returncode, result.stdout) == (0, f"mplint {__version__}\n")


def test_no_abbreviations_and_a_suggestion_for_a_mistyped_option(tmp_path):
    write_files(tmp_path, {"pyproject.toml": "", "m.py": BAD})
    for typed, meant in (("--stat", "--statistics"), ("--statistcs", "--statistics"),
                         ("--colour=always", "--color"), ("--unsafe-fix", "--unsafe-fixes")):
        result = run_cli("check", typed, ".", cwd=tmp_path)
        assert result.returncode == 2 and result.stdout == "", typed
        assert result.stderr.splitlines()[-1] == (f"mplint: error: unrecognized arguments: {typed}; "
                                                  f"did you mean '{meant}'?")


def test_color_always_never_and_auto(tmp_path):
    write_files(tmp_path, {"pyproject.toml": "", "m.py": BAD})
    always = run_cli("check", "--color", "always", ".", cwd=tmp_path, env={"NO_COLOR": "1"})
    assert "\x1b[" in always.stdout
    never = run_cli("check", "--color", "never", ".", cwd=tmp_path, env={"FORCE_COLOR": "1"})
    assert "\x1b[" not in never.stdout and reported(never.stdout) == [("m.py", 4, "MP101")]
    auto = run_cli("check", ".", cwd=tmp_path, env={"FORCE_COLOR": "1", "NO_COLOR": None})
    assert "\x1b[" in auto.stdout  # auto follows FORCE_COLOR / NO_COLOR and the terminal
    diff = run_cli("fix", "--diff", "--color", "always", ".", cwd=tmp_path)
    assert "\x1b[32m+" in diff.stdout


def test_clean_removes_every_cache_below_the_current_folder(tmp_path):
    write_files(tmp_path, {"pyproject.toml": "", "m.py": BAD, "sub/pyproject.toml": "", "sub/n.py": BAD})
    run_cli("check", ".", cwd=tmp_path)
    run_cli("check", ".", cwd=tmp_path / "sub")
    assert (tmp_path / ".mplint_cache").is_dir() and (tmp_path / "sub" / ".mplint_cache").is_dir()
    result = run_cli("clean", cwd=tmp_path)
    assert result.returncode == 0 and "Removed cache at: sub/.mplint_cache" in result.stderr
    assert not (tmp_path / ".mplint_cache").exists() and not (tmp_path / "sub" / ".mplint_cache").exists()
    assert (tmp_path / "m.py").read_text() == BAD


def test_clean_deletes_only_cache_folders_mplint_made(tmp_path):
    # a committed link named like the cache, and --cache-dir naming the user's own folder
    write_files(tmp_path, {"repo/m.py": BAD, "outside/keep.txt": "mine", "notes/todo.txt": "mine"})
    os.symlink(tmp_path / "outside", tmp_path / "repo" / ".mplint_cache")
    result = run_cli("clean", "--cache-dir", str(tmp_path / "notes"), cwd=tmp_path / "repo")
    assert result.returncode == 0
    assert (tmp_path / "outside" / "keep.txt").read_text() == "mine" and (tmp_path / "repo" / ".mplint_cache").is_symlink()
    assert (tmp_path / "notes" / "todo.txt").read_text() == "mine"
    assert "Removed" not in result.stderr
    assert result.stderr.count("not a cache folder mplint made") == 2
    # a cache mplint made at --cache-dir goes
    run_cli("check", "--cache-dir", str(tmp_path / "made"), ".", cwd=tmp_path / "repo")
    assert (tmp_path / "made" / "CACHEDIR.TAG").is_file()
    result = run_cli("clean", "--cache-dir", str(tmp_path / "made"), cwd=tmp_path / "repo")
    assert not (tmp_path / "made").exists() and "Removed cache at: " in result.stderr


def test_inline_config_values(tmp_path):
    write_files(tmp_path, {"pyproject.toml": '[tool.mplint]\nignore = ["MP3"]\n', "m.py": TWO_SEVERITIES})
    assert reported(run_cli("check", ".", cwd=tmp_path).stdout) == [("m.py", 4, "MP101")]
    # a layer over the file's, as the command line's --select is: select replaces the selection
    result = run_cli("check", "--config", "select = ['MP3']", ".", cwd=tmp_path)
    assert reported(result.stdout) == [("m.py", 4, "MP301")]
    result = run_cli("check", "--config", "extend-ignore = ['MP1']", "--config", "alignment = 4", ".", cwd=tmp_path)
    assert reported(result.stdout) == []  # MP3 (file), MP1 (command line)
    result = run_cli("check", "--config", "alignmnt = 4", ".", cwd=tmp_path)
    assert (result.returncode, result.stderr) == (2, "mplint: error: --config: unknown key 'alignmnt'; "
                                                     "did you mean 'alignment'?\n")
    result = run_cli("check", "--config", "keras-version = ", ".", cwd=tmp_path)
    assert result.returncode == 2 and len(result.stderr.splitlines()) == 1
    assert result.stderr.startswith("mplint: error: --config 'keras-version = ': neither a file nor")


def test_exclude_and_per_file_ignores_on_the_command_line(tmp_path):
    write_files(tmp_path, {"pyproject.toml": '[tool.mplint]\nper-file-ignores = {"a.py" = ["MP101"]}\n',
                           "a.py": BAD, "gen/b.py": BAD, "tests/c.py": BAD})
    assert reported(run_cli("check", ".", cwd=tmp_path).stdout) == [("gen/b.py", 4, "MP101"),
                                                                     ("tests/c.py", 4, "MP101")]
    result = run_cli("check", "--exclude", "gen/,tests/", ".", cwd=tmp_path)
    assert reported(result.stdout) == []
    result = run_cli("check", "--extend-exclude", "gen/", "--per-file-ignores", "tests/*:MP1", ".", cwd=tmp_path)
    assert reported(result.stdout) == [("a.py", 4, "MP101")]  # --per-file-ignores replaces the table's
    result = run_cli("check", "--extend-per-file-ignores", "tests/*:MP101", "--extend-per-file-ignores",
                     "gen/*:MP101", ".", cwd=tmp_path)
    assert reported(result.stdout) == []
    result = run_cli("check", "--per-file-ignores", "MP101", ".", cwd=tmp_path)
    assert result.returncode == 2 and "expected PATTERN:CODES" in result.stderr


def test_verbose_says_which_configuration_each_file_got(tmp_path):
    write_files(tmp_path, {".git/HEAD": "", "pyproject.toml": "[tool.mplint]\n", "m.py": BAD,
                           "sub/mplint.toml": "ignore = ['MP1']\n", "sub/n.py": BAD, "sub/o.py": BAD})
    result = run_cli("check", "--verbose", ".", cwd=tmp_path)
    assert f"mplint: configuration {tmp_path / 'sub' / 'mplint.toml'}: 2 files" in result.stderr
    assert f"mplint: configuration {tmp_path / 'pyproject.toml'}: 1 file" in result.stderr
    assert f"mplint: project root: {tmp_path}" in result.stderr
    assert "mplint: configuration" not in run_cli("check", ".", cwd=tmp_path).stderr


@pytest.mark.slow
def test_watch_checks_again_when_a_file_changes(tmp_path):
    """A real process: the first report, then another after an edit; Ctrl-C ends it."""
    import os
    import signal
    import subprocess
    import sys
    import time

    write_files(tmp_path, {"pyproject.toml": "", "m.py": GOOD})
    process = subprocess.Popen([sys.executable, "-m", "mplint", "check", "--watch", "."], cwd=tmp_path,
                               preexec_fn=as_at_a_terminal, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               env={**os.environ, "NO_COLOR": "1"})
    try:
        def next_line(stream, wanted: str) -> str:
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                line = stream.readline()
                if wanted in line:
                    return line
            raise AssertionError(f"no {wanted!r} within 60 s")

        next_line(process.stdout, "All checks passed!")
        next_line(process.stderr, "Watching for file changes.")
        time.sleep(0.1)
        (tmp_path / "m.py").write_text(BAD)
        assert next_line(process.stdout, "MP101").startswith("m.py:4:30: MP101 error:")
        next_line(process.stderr, "Watching for file changes.")
    finally:
        process.send_signal(signal.SIGINT)
        process.wait(timeout=60)
    assert process.returncode == 130
