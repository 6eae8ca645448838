"""MP504 across modules: float32 tensors handed to a layer or function of another
module of the project, and the returns of functions imported from one."""

import json

import helpers

ATTENTION = """import tensorflow as tf


class Attention(tf.keras.layers.Layer):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.qk = tf.keras.layers.Dense(8)

    def call(self, x, mask=None):
        scores = self.qk(x)
        return tf.nn.softmax({combined})
"""

BLOCK = """import tensorflow as tf

from .layers import Attention
from . import utils


class Block(tf.keras.layers.Layer):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.attn = Attention()
        self.mask = self.make_mask()

    def make_mask(self):
        grid = {made}
        return utils.flatten(grid)

    def call(self, x):
        return {called}
"""

UTILS = """import tensorflow as tf


def flatten(t):
    return {flattened}
"""


def project(tmp_path, combined="scores + mask", made="tf.ones((4, 8), dtype=tf.float32)",
            called="self.attn(x, mask=self.mask)", flattened="tf.reshape(t, (-1, 8))"):
    return helpers.write_files(tmp_path, {
        "pyproject.toml": "[project]\nname = 'pkg'\n",
        "pkg/__init__.py": "",
        "pkg/layers/__init__.py": "from .attention import Attention\n",
        "pkg/layers/attention.py": ATTENTION.format(combined=combined),
        "pkg/blocks.py": BLOCK.format(made=made, called=called),
        "pkg/utils.py": UTILS.format(flattened=flattened),
    })


def check(folder, *extra):
    result = helpers.run_cli("check", "--select", "MP504", "--assume-policy", "mixed_float16",
                             "--output-format", "json", *extra, ".", cwd=folder)
    assert result.returncode in (0, 1), result.stderr
    return json.loads(result.stdout)


def places(found):
    return [(f["path"].replace("\\", "/"), f["line"]) for f in found]


def test_a_float32_mask_passed_as_a_keyword_to_an_imported_layer(tmp_path):
    [found] = check(project(tmp_path), "--no-cache")
    # reported where the tensor is made, through the imported function's return
    assert places([found]) == [("pkg/blocks.py", 14)]
    message = found["message"]
    assert "passes as `mask` to Attention.call (pkg/layers/attention.py:11)" in message
    assert "`scores + mask` combines it with a float16 tensor" in message
    assert "(line 18)" in message


def test_the_fix_makes_the_mask_in_the_compute_dtype(tmp_path):
    folder = project(tmp_path)
    result = helpers.run_cli("fix", "--select", "MP504", "--assume-policy", "mixed_float16", "--unsafe-fixes",
                             "--no-cache", ".", cwd=folder)
    assert result.returncode == 0, result.stdout + result.stderr
    text = (folder / "pkg/blocks.py").read_text()
    assert "grid = tf.ones((4, 8), dtype=self.compute_dtype)" in text
    assert check(folder, "--no-cache") == []


def test_silent_where_the_crossing_is_autocast_cast_or_unknown(tmp_path):
    # the first positional input of a layer's call is autocast
    assert check(project(tmp_path / "a", called="self.attn(self.mask)"), "--no-cache") == []
    # the callee casts the mask to the scores' dtype
    assert check(project(tmp_path / "b", combined="scores + tf.cast(mask, scores.dtype)"), "--no-cache") == []
    # made in the compute dtype
    assert check(project(tmp_path / "c", made="tf.ones((4, 8), dtype=self.compute_dtype)"), "--no-cache") == []
    # the imported function's return is unknown (a call mplint cannot read)
    assert check(project(tmp_path / "d", flattened="unknown(t)"), "--no-cache") == []


def test_the_imported_function_return_meets_16_bit_tensors_in_this_file(tmp_path):
    folder = project(tmp_path, called="x * utils.flatten(tf.ones((4, 8)))")
    [found] = check(folder, "--no-cache")
    assert (found["path"], found["line"]) == ("pkg/blocks.py", 18)
    assert "made by `tf.ones((4, 8))`" in found["message"]


def test_changing_the_other_module_changes_the_cached_result(tmp_path):
    folder = project(tmp_path)
    assert len(check(folder)) == 1
    (folder / "pkg/layers/attention.py").write_text(ATTENTION.format(combined="scores + tf.cast(mask, scores.dtype)"))
    assert check(folder) == []
    (folder / "pkg/utils.py").write_text(UTILS.format(flattened="unknown(t)"))
    (folder / "pkg/layers/attention.py").write_text(ATTENTION.format(combined="scores + mask"))
    assert check(folder) == []
    (folder / "pkg/utils.py").write_text(UTILS.format(flattened="tf.reshape(t, (-1, 8))"))
    assert len(check(folder)) == 1
