"""A layer class whose every construction in the program passes a float32 ``dtype``
computes in float32, constructions in other modules included (``Codebook(n,
dtype='float32')`` in encoder.py for ``Codebook`` of layers.py): nothing in its ``call``
is 16-bit. One construction that leaves the dtype out keeps it 16-bit."""

import json

import helpers

LAYERS = """import tensorflow as tf
from tensorflow.keras import layers


class Codebook(layers.Layer):
    def __init__(self, num_codes, **kwargs):
        super().__init__(**kwargs)
        self.num_codes = num_codes

    def build(self, input_shape):
        self.codes = self.add_weight(name="codes", shape=(self.num_codes, input_shape[-1]))

    def call(self, x):
        c_t = tf.transpose(self.codes)
        return tf.reduce_sum(tf.square(x), axis=1, keepdims=True) - 2 * tf.matmul(x, c_t) + 1e-8
"""

ENCODER = """import tensorflow as tf

from layers import Codebook

tf.keras.mixed_precision.set_global_policy("mixed_float16")
inputs = tf.keras.Input((64,))
h = tf.keras.layers.Dense(64)(inputs)
DTYPE = tf.keras.mixed_precision.global_policy().compute_dtype
out = Codebook(512{dtype})(h)
model = tf.keras.Model(inputs, tf.keras.layers.Activation("linear", dtype="float32")(out))
"""


def check(tmp_path, dtype):
    folder = helpers.write_files(tmp_path, {
        "pyproject.toml": "[project]\nname = 'vq'\n",
        "layers.py": LAYERS,
        "encoder.py": ENCODER.format(dtype=dtype),
    })
    result = helpers.run_cli("check", "--select", "MP5", "--output-format", "json", "--no-cache", ".", cwd=folder)
    assert result.returncode in (0, 1), result.stderr
    return [(f["path"], f["line"], f["rule"]) for f in json.loads(result.stdout)]


def test_a_layer_built_in_float32_in_another_module_computes_in_float32(tmp_path):
    assert check(tmp_path / "a", ", dtype='float32'") == []
    assert check(tmp_path / "b", ", dtype='float64'") == []
    # a dtype object: the summaries write it by its name
    assert check(tmp_path / "c", ", dtype=tf.float32") == []


def test_a_construction_that_leaves_the_dtype_out_keeps_it_16_bit(tmp_path):
    assert ("layers.py", 15, "MP502") in check(tmp_path / "a", "")
    assert ("layers.py", 15, "MP502") in check(tmp_path / "b", ", dtype='mixed_float16'")
    # a dtype the summaries cannot read (a name bound at run time): not followed
    assert ("layers.py", 15, "MP502") in check(tmp_path / "c", ", dtype=DTYPE")


def test_a_dtype_spread_from_a_dict_of_keyword_arguments_counts(tmp_path):
    # ``Codebook(512, **HEAD_KWARGS)`` with the dict bound once at the top level, or written there
    spread = ENCODER.replace("out = Codebook", 'HEAD_KWARGS = {"dtype": "float32", "name": "codes"}\nout = Codebook')
    folder = helpers.write_files(tmp_path / "a", {"pyproject.toml": "[project]\nname = 'vq'\n", "layers.py": LAYERS,
                                                  "encoder.py": spread.replace("{dtype}", ", **HEAD_KWARGS")})
    run = helpers.run_cli("check", "--select", "MP5", "--output-format", "json", "--no-cache", ".", cwd=folder)
    assert json.loads(run.stdout) == []
    assert check(tmp_path / "b", ', **{"dtype": "float32"}') == []
    # a dict changed after it is bound, or with a key only known at run time: not followed
    changed = spread.replace("out = Codebook", 'HEAD_KWARGS["dtype"] = DTYPE\nout = Codebook')
    folder = helpers.write_files(tmp_path / "c", {"pyproject.toml": "[project]\nname = 'vq'\n", "layers.py": LAYERS,
                                                  "encoder.py": changed.replace("{dtype}", ", **HEAD_KWARGS")})
    run = helpers.run_cli("check", "--select", "MP5", "--output-format", "json", "--no-cache", ".", cwd=folder)
    assert ("layers.py", 15, "MP502") in [(f["path"], f["line"], f["rule"]) for f in json.loads(run.stdout)]
