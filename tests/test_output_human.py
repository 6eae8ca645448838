"""Output a person reads (issue 16): the ``full`` format with the source and carets,
colour on a terminal only (``NO_COLOR``, ``FORCE_COLOR``), a coloured ``fix --diff``,
the pointer to ``mplint rule``, and notebooks located and diffed as ruff does."""

from __future__ import annotations

import json

import pytest

from helpers import BAD, GOOD, outcome, reported, run_cli, write_files

ESC = "\x1b["
#: MP101 with only an unsafe fix
UNSAFE = BAD.replace('activation="softmax"', 'activation="softmax", dtype="bfloat16"')


@pytest.fixture(autouse=True)
def _plain_environment(monkeypatch):
    """Colour is decided by the environment: start every test from none of it."""
    for name in ("NO_COLOR", "FORCE_COLOR", "TERM"):
        monkeypatch.delenv(name, raising=False)


# -- 7. full format, colour, diff, pointer --------------------------------------------------------
def test_full_format_shows_the_line_with_carets_under_the_finding(tmp_path):
    write_files(tmp_path, {"m.py": BAD + "\n\nhidden = tf.keras.layers.Dense(\n    100)\n", "u.py": UNSAFE})
    result = run_cli("check", "--output-format", "full", ".", cwd=tmp_path)
    assert outcome(result) == (1, [("m.py", 4, "MP101"), ("m.py", 8, "MP301"), ("u.py", 4, "MP101")])
    blocks = result.stdout.split("\n\n")
    assert blocks[0].splitlines() == [
        reported_line(result.stdout, "m.py", 4),
        "  |",
        '3 | tf.keras.mixed_precision.set_global_policy("mixed_float16")',
        '4 | model = tf.keras.Sequential([tf.keras.layers.Dense(10, activation="softmax")])',
        "  |                              " + "^" * 47 + " MP101",
        "5 |",
        "  |",
        "  = fix: `mplint fix`",
        "  = help: `mplint rule MP101` explains why this matters and how to fix it",
    ]
    assert blocks[1].splitlines()[2:6] == [
        "7 | hidden = tf.keras.layers.Dense(",
        "8 |     100)",
        "  |     ^^^ MP301",
        "  |",
    ]
    assert "  = fix (unsafe, may change behaviour): `mplint fix --unsafe-fixes`" in blocks[2]
    assert ESC not in result.stdout  # a pipe gets no colour


def reported_line(stdout: str, path: str, line: int) -> str:
    return next(text for text in stdout.splitlines() if text.startswith(f"{path}:{line}:"))


def test_concise_is_the_default_and_has_a_name(tmp_path):
    write_files(tmp_path, {"m.py": BAD})
    default = run_cli("check", ".", cwd=tmp_path)
    assert run_cli("check", "--output-format", "concise", ".", cwd=tmp_path).stdout == default.stdout
    assert run_cli("check", "--output-format", "text", ".", cwd=tmp_path).stdout == default.stdout
    assert default.stdout.splitlines()[0].startswith("m.py:4:30: MP101 ")
    assert "`mplint rule MP101` explains a rule: why it matters and how to fix it." in default.stdout


def test_colour_only_where_asked_or_on_a_terminal(tmp_path):
    write_files(tmp_path, {"m.py": BAD})
    forced = run_cli("check", ".", cwd=tmp_path, env={"FORCE_COLOR": "1"})
    first = forced.stdout.splitlines()[0]
    assert first.startswith(f"{ESC}1mm.py:4:30{ESC}0m: {ESC}1;31mMP101{ESC}0m ") and first.endswith(f"{ESC}36m[*]{ESC}0m")
    assert ESC not in run_cli("check", ".", cwd=tmp_path, env={"FORCE_COLOR": "1", "NO_COLOR": "1"}).stdout
    assert ESC not in run_cli("check", "--output-format", "json", ".", cwd=tmp_path, env={"FORCE_COLOR": "1"}).stdout


def test_colour_follows_the_terminal(tmp_path):
    from mplint.output_human import use_color

    class Terminal:
        def isatty(self) -> bool:
            return True

    assert use_color(Terminal())
    assert not use_color(open(tmp_path / "f", "w"))


def test_coloured_diff(tmp_path):
    write_files(tmp_path, {"m.py": BAD})
    plain = run_cli("fix", "--diff", ".", cwd=tmp_path)
    assert ESC not in plain.stdout and "+++ b/m.py" in plain.stdout
    coloured = run_cli("fix", "--diff", ".", cwd=tmp_path, env={"FORCE_COLOR": "1"})
    lines = coloured.stdout.splitlines()
    assert f"{ESC}1m+++ b/m.py{ESC}0m" in lines
    assert f"{ESC}31m-{BAD.splitlines()[3]}{ESC}0m" in lines
    assert f"{ESC}32m+{GOOD.splitlines()[3]}{ESC}0m" in lines
    assert (tmp_path / "m.py").read_text() == BAD


def test_full_format_of_a_fix_preview_shows_the_fixed_lines(tmp_path):
    write_files(tmp_path, {"m.py": BAD + "hidden = tf.keras.layers.Dense(100)\n"})
    result = run_cli("fix", "--check", "--output-format", "full", ".", cwd=tmp_path)
    assert outcome(result) == (1, [("m.py", 5, "MP301")])
    assert "5 | hidden = tf.keras.layers.Dense(100)" in result.stdout
    assert '4 | model = tf.keras.Sequential([tf.keras.layers.Dense(10, activation="softmax", dtype="float32")])' \
        in result.stdout  # the line as the fix left it, though nothing was written
    stdin = run_cli("check", "-", "--stdin-filename", "x.py", "--output-format", "full", input=BAD, cwd=tmp_path)
    assert '4 | model = tf.keras.Sequential([tf.keras.layers.Dense(10, activation="softmax")])' in stdin.stdout


# -- 8. notebooks: ruff's location, the real line in CI formats, a diff per cell ---------------------
def _notebook(tmp_path, *, escape: bool = False) -> str:
    cells = [
        {"cell_type": "markdown", "metadata": {}, "source": ["# Title é\n"]},
        {"cell_type": "code", "execution_count": 1, "metadata": {}, "outputs": [],
         "source": ["import tensorflow as tf\n", "tf.keras.mixed_precision.set_global_policy('mixed_float16')"]},
        {"cell_type": "code", "execution_count": 2, "metadata": {}, "outputs": [],
         "source": ["x = 'é'  # not ASCII: escaped in the JSON text or not\n",
                    "model = tf.keras.Sequential([tf.keras.layers.Dense(10, activation='softmax')])"]},
    ]
    text = json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5},
                      indent=1, ensure_ascii=escape) + "\n"
    (tmp_path / "nb.ipynb").write_text(text, encoding="utf-8")
    return text


def _file_position(text: str, needle: str, col: int):
    """(line, col) in the JSON text of character ``col`` (1-based) of the source line ``needle``."""
    for number, line in enumerate(text.split("\n"), 1):
        if needle in line:
            return number, line.index('"') + 1 + col
    raise AssertionError(needle)


@pytest.mark.parametrize("escape", [False, True])
def test_notebook_findings_point_into_the_ipynb_in_ci_formats(tmp_path, escape):
    text = _notebook(tmp_path, escape=escape)
    concise = run_cli("check", "nb.ipynb", cwd=tmp_path)
    assert concise.stdout.startswith("nb.ipynb:cell 3:2:30: MP101 ")  # ruff's notebook location
    line, col = _file_position(text, "model = tf.keras.Sequential", 30)
    assert text.split("\n")[line - 1][col - 1:].startswith("tf.keras.layers.Dense(10")
    github = run_cli("check", "--output-format", "github", "nb.ipynb", cwd=tmp_path).stdout
    assert github.startswith(f"::error file=nb.ipynb,line={line},col={col},endLine={line},")
    assert "::nb.ipynb:cell 3:2:30: MP101 " in github
    sarif = json.loads(run_cli("check", "--output-format", "sarif", "nb.ipynb", cwd=tmp_path).stdout)
    region = sarif["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["region"]
    assert (region["startLine"], region["startColumn"], region["endLine"]) == (line, col, line)
    assert text.split("\n")[line - 1][region["endColumn"] - 2] == ")"  # the Dense call's end
    junit = run_cli("check", "--output-format", "junit", "nb.ipynb", cwd=tmp_path).stdout
    assert f'line="{line}"' in junit


def test_notebook_diff_is_per_cell_source_not_json(tmp_path):
    _notebook(tmp_path)
    result = run_cli("fix", "--diff", "nb.ipynb", cwd=tmp_path)
    assert result.returncode == 1
    assert result.stdout.splitlines() == [
        "--- a/nb.ipynb:cell 3",
        "+++ b/nb.ipynb:cell 3",
        "@@ -1,2 +1,2 @@",
        " x = 'é'  # not ASCII: escaped in the JSON text or not",
        "-model = tf.keras.Sequential([tf.keras.layers.Dense(10, activation='softmax')])",
        "+model = tf.keras.Sequential([tf.keras.layers.Dense(10, activation='softmax', dtype='float32')])",
    ]


def test_full_format_shows_the_notebook_cell_lines(tmp_path):
    _notebook(tmp_path)
    result = run_cli("check", "--output-format", "full", "nb.ipynb", cwd=tmp_path)
    assert "2 | model = tf.keras.Sequential([tf.keras.layers.Dense(10, activation='softmax')])" in result.stdout
    assert reported(result.stdout) == [("nb.ipynb:cell 3", 2, "MP101")]


# -- 9. GitHub's annotation limit, GitLab Code Quality, JSON lines ---------------------------------
MANY = "import tensorflow as tf\n\ntf.keras.mixed_precision.set_global_policy('mixed_float16')\n" + "".join(
    f"layer{i} = tf.keras.layers.Dense({100 + i * 8})\n" for i in range(12))


def test_github_format_notes_the_annotation_limit(tmp_path):
    write_files(tmp_path, {"m.py": MANY})
    result = run_cli("check", "--output-format", "github", ".", cwd=tmp_path)
    assert result.stdout.count("::warning file=m.py,") == 12
    assert "GitHub shows 10 annotations of each level per step (50 per job) and this report has 12 warnings" \
        in result.stderr
    write_files(tmp_path, {"m.py": BAD})
    assert "GitHub shows" not in run_cli("check", "--output-format", "github", ".", cwd=tmp_path).stderr


def test_gitlab_code_quality_report(tmp_path):
    write_files(tmp_path, {"src/m.py": BAD + "a = tf.keras.layers.Dense(100)\nb = tf.keras.layers.Dense(100)\n"})
    result = run_cli("check", "--output-format", "gitlab", ".", cwd=tmp_path)
    assert result.returncode == 1
    issues = json.loads(result.stdout)
    assert [(i["check_name"], i["severity"], i["location"]["path"], i["location"]["positions"]["begin"]["line"])
            for i in issues] == [("MP101", "major", "src/m.py", 4), ("MP301", "minor", "src/m.py", 5),
                                 ("MP301", "minor", "src/m.py", 6)]
    assert issues[0]["description"].startswith("MP101: final softmax")
    assert len({i["fingerprint"] for i in issues}) == 3
    # a line added above keeps every fingerprint (GitLab matches findings across commits by it)
    write_files(tmp_path, {"src/m.py": "# a new first line\n" + (tmp_path / "src/m.py").read_text()})
    moved = json.loads(run_cli("check", "--output-format", "gitlab", ".", cwd=tmp_path).stdout)
    assert [i["fingerprint"] for i in moved] == [i["fingerprint"] for i in issues]
    in_job = json.loads(run_cli("check", "--output-format", "gitlab", ".", cwd=tmp_path / "src",
                                env={"CI_PROJECT_DIR": str(tmp_path)}).stdout)
    assert in_job[0]["location"]["path"] == "src/m.py"


def test_json_lines(tmp_path):
    write_files(tmp_path, {"m.py": BAD + "a = tf.keras.layers.Dense(100)\n"})
    result = run_cli("check", "--output-format", "json-lines", ".", cwd=tmp_path)
    objects = [json.loads(line) for line in result.stdout.splitlines()]
    assert [(o["path"], o["line"], o["rule"]) for o in objects] == [("m.py", 4, "MP101"), ("m.py", 5, "MP301")]
    assert objects == json.loads(run_cli("check", "--output-format", "json", ".", cwd=tmp_path).stdout)
