"""A fix changes only the cells it fixes: every other byte of the notebook stays."""

import json

import pytest

from helpers import outcome, run_cli
from mplint.api import make_linter
from mplint.core.notebook_json import source_spans, splice
from mplint.core.source_kinds import load_source

POLICY = "tf.keras.mixed_precision.set_global_policy('mixed_float16')\n"
HEAD = "m = tf.keras.Sequential([tf.keras.layers.Dense(10, activation='softmax')])\n"
FIXED_HEAD = "m = tf.keras.Sequential([tf.keras.layers.Dense(10, activation='softmax', dtype='float32')])\n"


def _book(cells):
    return {"cells": cells, "metadata": {"colab": {"name": "a<b>&c"}}, "nbformat": 4, "nbformat_minor": 0}


def _code(source):
    return {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [], "source": source}


def _colab(data):
    """Colab's writer: indent 2, no final newline, <, > and & escaped."""
    text = json.dumps(data, indent=2, ensure_ascii=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def _fix(raw, name="nb.ipynb"):
    outcome = make_linter().fix(load_source(name, raw), unsafe=False)
    assert outcome.errors == [] and outcome.applied == 1, outcome
    return outcome.fixed


def _changed_lines(before, after):
    a, b = before.splitlines(), after.splitlines()
    assert len(a) == len(b)
    return [(x, y) for x, y in zip(a, b) if x != y]


def test_colab_escapes_and_layout_survive_a_one_line_fix():
    markdown = {"cell_type": "markdown", "metadata": {}, "source": ["x < y & z > w\n", "done"]}
    data = _book([markdown, _code(["import tensorflow as tf\n", POLICY, HEAD, "m.summary()"])])
    raw = _colab(data).encode()
    fixed = _fix(raw).decode()
    assert _changed_lines(raw.decode(), fixed) == [(
        '        ' + json.dumps(HEAD).replace("<", "\\u003c") + ",",
        '        ' + json.dumps(FIXED_HEAD) + ",")]
    assert not fixed.endswith("\n")
    assert "x \\u003c y \\u0026 z \\u003e w" in fixed  # the markdown cell kept its escapes
    assert json.loads(fixed)["cells"][1]["source"][2] == FIXED_HEAD


def test_a_string_source_stays_a_string_and_crlf_stays_crlf():
    data = _book([_code("import tensorflow as tf\n" + POLICY + HEAD)])
    raw = json.dumps(data, indent=1).replace("\n", "\r\n").encode()
    fixed = _fix(raw).decode()
    assert json.loads(fixed)["cells"][0]["source"] == "import tensorflow as tf\n" + POLICY + FIXED_HEAD
    assert fixed.count("\r\n") == raw.decode().count("\r\n")
    assert "\n" not in fixed.replace("\r\n", "")


def test_a_one_line_source_list_stays_on_one_line():
    raw = ('{"cells": [{"cell_type": "code", "metadata": {}, "outputs": [], "source": '
           + json.dumps(["import tensorflow as tf\n", POLICY, HEAD]) + '}], "metadata": {}, '
           '"nbformat": 4, "nbformat_minor": 5}')
    fixed = _fix(raw.encode()).decode()
    assert fixed == raw.replace(json.dumps(HEAD), json.dumps(FIXED_HEAD))


def test_spans_skip_outputs_nested_values_and_escaped_quotes():
    cells = [_code(["a = '\\\"}]'\n"]), {"cell_type": "raw", "metadata": {"x": [1, {"y": None}]}, "source": "b"},
             dict(_code(["c\n"]), outputs=[{"data": {"text/plain": ["[{]}\""]}, "output_type": "execute_result"}])]
    text = json.dumps(_book(cells), indent=1)
    spans = source_spans(text)
    assert [json.loads(text[s:e]) for s, e in (spans[0], spans[1], spans[2])] == \
        [["a = '\\\"}]'\n"], "b", ["c\n"]]
    assert json.loads(splice(text, {2: ["d\n"]}))["cells"][2]["source"] == ["d\n"]


def test_the_size_limit_counts_code_not_outputs(tmp_path):
    cell = dict(_code(["import tensorflow as tf\n", POLICY, HEAD]),
                outputs=[{"output_type": "display_data", "metadata": {}, "data": {"image/png": "A" * 3_000_000}}])
    (tmp_path / "big.ipynb").write_text(json.dumps(_book([cell]), indent=1))
    result = run_cli("check", "--no-cache", "big.ipynb", cwd=tmp_path)
    assert outcome(result) == (1, [("big.ipynb:cell 1", 3, "MP101")]) and result.stderr == ""
    assert "big.ipynb:cell 1:3:26: MP101" in result.stdout


@pytest.mark.parametrize("broken", ["batch_size = \n", "x = '\x00'\n", ["import tensorflow as tf", "x = 1"]])
def test_a_notebook_whose_only_code_cell_does_not_parse_says_so(tmp_path, broken):
    source = broken if isinstance(broken, list) else ["import tensorflow as tf\n", broken]
    (tmp_path / "ex.ipynb").write_text(json.dumps(_book([_code(source)]), indent=1))
    result = run_cli("check", "--no-cache", "ex.ipynb", cwd=tmp_path)
    assert outcome(result) == (0, [])  # a warning, not an error
    out, err = result.stdout, result.stderr
    assert "mplint: warning: ex.ipynb: cell 1: " in err and "cell not checked" in err
