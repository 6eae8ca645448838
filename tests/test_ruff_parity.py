"""What a ruff user expects of the report: severity in the text formats, each warning
once and only about the run's files, syntax errors as findings, the wording when
nothing needs fixing, and the command line's options."""

from __future__ import annotations

import textwrap

from helpers import BAD, GOOD, reported, run_cli, write_files

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
