"""Answers found once per file (``Context.memo``) and asked again by every site and rule:
each must stay the answer the question had each time it was asked: a private helper's
name counted in the text (a name that only prefixes another is no mention) and the
policy reaching a scope that several sites share. (Imported names: test_imported_layers,
test_star_imports.)"""

import json
import re

import pytest

from helpers import run_cli, write_files
from mplint.analysis.uncalled import _word_count

PROJECT = {"pyproject.toml": "[project]\nname = 'p'\n"}

ATTENTION = '''\
import tensorflow as tf

tf.keras.mixed_precision.set_global_policy("mixed_float16")


class MaskedAttention(tf.keras.layers.Layer):
    def call(self, inputs, mask=None):
        scores = tf.matmul(inputs, inputs, transpose_b=True)
        {call}
        return tf.nn.softmax(scores)

    def _mask(self, scores, mask):
        scores += (1.0 - tf.cast(mask, scores.dtype)) * -1e9
        bias = (1.0 - tf.cast(mask, scores.dtype)) * -1e9
        return scores + bias

    def _mask_fn(self, scores):
        return scores
'''


def _findings(folder, *args):
    result = run_cli("check", "--no-cache", "--output-format", "json", *args, ".", cwd=folder)
    return sorted((f["path"], f["line"], f["rule"]) for f in json.loads(result.stdout))


@pytest.mark.parametrize("text, word", [
    ("def _mask(x):\n    return _mask_fn(x)\n", "_mask"),      # a longer name holds it
    ("self._mask(x)  # _mask\n_mask", "_mask"),                 # start, middle, end of the text
    ("é_mask _maské _mask_ x_mask _mask", "_mask"),             # letters beyond ASCII are word letters
    ("a_a_a a_a", "a_a"),                                       # overlapping, then whole
    ("_mask\u0301 _mask", "_mask"),                             # a combining mark is no word letter
    ("x\u0301 yx\u0301 x\u0301z", "x\u0301"),                   # a word that ends in one: the regex decides
    ("", "_mask"),
])
def test_the_word_count_is_the_regex_count(text, word):
    want = len(re.findall(r"\b" + re.escape(word) + r"\b", text))
    for most in (1, 2, 5):
        assert _word_count(text, word, most) == min(most, want)


def test_a_private_helper_nothing_calls_is_silent_and_a_called_one_reports_each_site(tmp_path):
    # Named only in its def (``_mask_fn`` merely starts with the name): never runs.
    write_files(tmp_path, {**PROJECT, "attention.py": ATTENTION.format(call="pass")})
    assert _findings(tmp_path) == []
    # Called once: both of its sites are judged, each with the same (remembered) answer.
    write_files(tmp_path, {**PROJECT, "attention.py": ATTENTION.format(call="scores = self._mask(scores, mask)")})
    assert _findings(tmp_path) == [("attention.py", 13, "MP501"), ("attention.py", 14, "MP501")]
    # Assumed by configuration, the same answers.
    assert _findings(tmp_path, "--assume-policy", "mixed_float16") == \
        [("attention.py", 13, "MP501"), ("attention.py", 14, "MP501")]
