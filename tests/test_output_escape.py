"""Control characters in file names and source lines never reach a terminal or a CI log
raw (issue 27, item 11); machine formats keep the real name and stay valid."""

from __future__ import annotations

import json
import os
import re
import xml.etree.ElementTree as ET

import pytest

from helpers import BAD, run_cli, write_files
from mplint.output_escape import printable, xml_safe

#: what a text report must never hold: controls but tab and newline, bidi controls, surrogates
RAW = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
SOURCE = BAD + 'x = "\x1b[31m"; y = tf.keras.layers.Dense(1001)\n'
NAMES = {"newline": "a\n::error::forged.py", "escape": "b\x1b[2Jclear.py", "bidi": "c\u202eyp.py",
         "carriage": "d\rreturn.py"}


def test_printable_writes_escapes_as_python_does():
    assert printable("a\nb\rc\td\x1b\x7f\x85\u202e\udcff") == "a\\nb\\rc\td\\x1b\\x7f\\x85\\u202e\\xff"
    assert printable("new\nline\x1b", keep="\n") == "new\nline\\x1b"
    assert printable("plain ünïcode ✓") == "plain ünïcode ✓"
    assert xml_safe("a\x01b\tc\nd\udcff") == "a\\x01b\tc\nd\\xff"


@pytest.fixture
def tree(tmp_path):
    write_files(tmp_path, {name: SOURCE for name in NAMES.values()})
    (tmp_path / "e\x1b]0;title\x07.ipynb").write_text("{not json: import tensorflow")  # an error about a file
    return tmp_path


@pytest.mark.parametrize("fmt", ["concise", "full", "github"])
def test_text_formats_escape_names_and_lines(tree, fmt):
    result = run_cli("check", "--no-cache", "--output-format", fmt, ".", cwd=tree)
    assert result.returncode == 2
    for stream in (result.stdout, result.stderr):
        assert not RAW.search(stream), [line for line in stream.splitlines() if RAW.search(line)]
    # one line per finding: a newline in a name starts no line of its own
    starts = {"concise": ("a\\n::error::forged.py:5:",), "full": ("a\\n::error::forged.py:5:",),
              "github": ("::warning file=a%0A%3A%3Aerror%3A%3Aforged.py,line=5,",)}[fmt]
    assert sum(line.startswith(starts) for line in result.stdout.splitlines()) == 1, result.stdout
    assert not any(line.startswith("::error::forged") for line in result.stdout.splitlines())
    if fmt == "github":
        assert "title=MP301::a%0A::error::forged.py:5:" in result.stdout
    errors = [line for line in result.stderr.splitlines() if line.startswith("mplint: error:")]
    assert errors == ["mplint: error: e\\x1b]0;title\\x07.ipynb: invalid notebook JSON at line 1, column 2: "
                      "Expecting property name enclosed in double quotes"], result.stderr


def test_the_full_frame_escapes_the_line_and_keeps_the_carets_under_the_finding(tmp_path):
    write_files(tmp_path, {"m.py": SOURCE})
    out = run_cli("check", "--no-cache", "--select", "MP301", "--output-format", "full", ".", cwd=tmp_path).stdout
    lines = out.splitlines()
    [shown] = [line for line in lines if line.startswith("5 |")]
    assert shown == '5 | x = "\\x1b[31m"; y = tf.keras.layers.Dense(1001)'
    carets = lines[lines.index(shown) + 1]
    start = carets.index("^")
    assert shown[start:start + 4] == "1001" and carets[start:].startswith("^^^^ MP301")


def test_a_name_that_is_not_utf8_is_escaped_in_text(tmp_path):
    with open(os.path.join(os.fsencode(tmp_path), b"model\xff.py"), "wb") as handle:
        handle.write(BAD.encode())
    result = run_cli("check", "--no-cache", ".", cwd=tmp_path)
    assert result.returncode == 1 and result.stdout.startswith("model\\xff.py:4:30: MP101 "), result.stdout


@pytest.mark.parametrize("fmt", ["json", "json-lines", "sarif", "gitlab", "junit"])
def test_machine_formats_keep_the_real_name_and_stay_valid(tree, fmt):
    result = run_cli("check", "--no-cache", "--output-format", fmt, ".", cwd=tree)
    assert result.returncode == 2
    if fmt == "junit":
        root = ET.fromstring(result.stdout.encode())  # XML 1.0 cannot hold \x1b: parsing fails on a raw one
        names = {suite.get("name") for suite in root.iter("testsuite")}
        assert {NAMES["newline"], NAMES["bidi"], "b\\x1b[2Jclear.py"} <= names, names
        return
    if fmt == "json-lines":
        data = [json.loads(line) for line in result.stdout.splitlines()]
    else:
        data = json.loads(result.stdout)
    if fmt == "sarif":
        from urllib.parse import unquote

        paths = {unquote(r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"])
                 for r in data["runs"][0]["results"]}
    elif fmt == "gitlab":
        paths = {issue["location"]["path"] for issue in data}
    else:
        paths = {finding["path"] for finding in data}
    assert paths == {name for name in NAMES.values()}
