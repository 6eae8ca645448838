"""The depth guard reads CPython's limits in the words of every version from 3.9 on (3.12's
PEP 701 tokenizer words some of them anew), and each limit this interpreter has is
reached through the same guard a checked file goes through."""

from __future__ import annotations

import sys

import pytest

from helpers import BAD, outcome, run_cli, write_files
from mplint.core.python_syntax import TooDeep, beyond_limits, python_tree
from mplint.core.source import SourceError, decode, parse

POLICY = 'import tensorflow as tf\ntf.keras.mixed_precision.set_global_policy("mixed_float16")\n'


@pytest.mark.parametrize("message", [
    "too many nested parentheses",  # the tokenizer, every version (3.12: inside f-strings too)
    "f-string: too many nested parenthesis",  # 3.9-3.11's f-string parser
    "too many levels of indentation",
    "too many statically nested blocks",
    "too many nested f-strings",  # 3.12, 3.13: 150 f-strings one inside another
    "too many nested f-strings or t-strings",  # 3.14
    "too complex",
])
def test_cpythons_limits_in_every_versions_words_are_limits(message):
    assert beyond_limits(message)


@pytest.mark.parametrize("message", [
    "invalid syntax",
    "f-string: expecting '}'",  # 3.9-3.11: an f-string holding its own quote
    "f-string: expressions nested too deeply",  # format specs three deep: wrong in every version
    "unmatched ')'",
    "unterminated string literal (detected at line 1)",
])
def test_syntax_errors_are_not_limits(message):
    assert not beyond_limits(message)


def _nested_fstrings(depth: int) -> str:
    """``f'{f'{f'{1}'}'}'``: legal from 3.12 on, up to 149 deep."""
    text = "1"
    for _ in range(depth):
        text = "f'{" + text + "}'"
    return text


#: each shape beyond a limit of this interpreter, built as its tokenizer reads it
DEEP = {
    "parentheses": "x = " + "(" * 1500 + "1" + ")" * 1500 + "\n",
    "parentheses in an f-string": "x = f'{" + "(" * 1500 + "1" + ")" * 1500 + "}'\n",
    "indentation": "".join(" " * level + "if x:\n" for level in range(120)) + " " * 120 + "pass\n",
}
if sys.version_info >= (3, 12):
    DEEP["nested f-strings"] = "x = " + _nested_fstrings(200) + "\n"


@pytest.mark.parametrize("shape", sorted(DEEP))
def test_each_limit_goes_through_the_guard_a_checked_file_does(shape):
    text = POLICY + DEEP[shape]
    with pytest.raises(TooDeep):
        python_tree(text)
    with pytest.raises(SourceError, match="too deeply nested to parse"):
        parse(decode("deep.py", text.encode()))


def test_nested_fstrings_beyond_3_12s_limit_are_one_line_there_and_read_before(tmp_path):
    write_files(tmp_path, {"deep.py": POLICY + "x = " + _nested_fstrings(200) + "\n", "model.py": BAD})
    result = run_cli("check", "--no-cache", ".", cwd=tmp_path)
    assert "Traceback" not in result.stderr
    code, found = outcome(result)
    assert ("model.py", 4, "MP101") in found  # the other file is checked either way
    if sys.version_info >= (3, 12):
        assert code == 2 and "deep.py: too deeply nested to parse" in result.stderr, result.stderr
    else:  # CPython cannot read it at all; libcst reads 3.12's grammar, and does not crash on it
        assert (code, found) == (1, [("model.py", 4, "MP101")]) and not result.stderr, result.stderr
