"""Values the numeric rules (MP501-MP507) follow through a program's own code: class
constants, constants of another module, helper methods and functions given 16-bit
arguments, datasets returned by a function. Each flow has its silent twin.

Each case is real code linted with the real engine; the expected set is the
(line, rule) pairs that must fire, so both misses and false alarms fail.
"""

import json

import pytest

import helpers

HEADER = "import tensorflow as tf\ntf.keras.mixed_precision.set_global_policy('mixed_float16')\n"
BF16 = "import tensorflow as tf\ntf.keras.mixed_precision.set_global_policy('mixed_bfloat16')\n"
#: Keras 2's backend functions, as attention libraries write them
BACKEND = HEADER + "from tensorflow.keras import backend as K\n"


def fired(code, **settings):
    return helpers.fired(code, "MP5", path="case.py", **settings)


CASES = {
    # a class-level constant read through ``self``
    "class-constant-sentinel": (HEADER + """
class Attention(tf.keras.layers.Layer):
    NEG_INF = -1e9

    def call(self, x):
        causal = tf.linalg.band_part(tf.ones_like(x), -1, 0)
        return x + (1.0 - causal) * self.NEG_INF
""", {(9, "MP501")}),
    "class-constant-within-float16": (HEADER + """
class Attention(tf.keras.layers.Layer):
    NEG_INF = -1e4

    def call(self, x):
        causal = tf.linalg.band_part(tf.ones_like(x), -1, 0)
        return x + (1.0 - causal) * self.NEG_INF
""", set()),
    # a method rebinds it on the instance: its value is not the class's alone
    "class-constant-rebound-on-self": (HEADER + """
class Attention(tf.keras.layers.Layer):
    NEG_INF = -1e9

    def build(self, shape):
        self.NEG_INF = shape[-1]

    def call(self, x):
        causal = tf.linalg.band_part(tf.ones_like(x), -1, 0)
        return x + (1.0 - causal) * self.NEG_INF
""", set()),
    # a helper method that ``call`` hands its 16-bit input
    "norm-in-a-helper-method": (HEADER + """
class Cosine(tf.keras.layers.Layer):
    def _unit(self, t):
        return t / tf.norm(t, axis=-1, keepdims=True)

    def call(self, x):
        return self._unit(x)
""", {(6, "MP506")}),
    "norm-in-a-helper-method-given-float32": (HEADER + """
class Cosine(tf.keras.layers.Layer):
    def _unit(self, t):
        return t / tf.norm(t, axis=-1, keepdims=True)

    def call(self, x):
        return tf.cast(self._unit(tf.cast(x, tf.float32)), self.compute_dtype)
""", set()),
    "norm-in-a-helper-method-of-a-float32-layer": (HEADER + """
class Cosine(tf.keras.layers.Layer):
    def __init__(self, **kwargs):
        super().__init__(dtype="float32", **kwargs)

    def _unit(self, t):
        return t / tf.norm(t, axis=-1, keepdims=True)

    def call(self, x):
        return self._unit(x)
""", set()),
    # a loss summed by a function of the file and handed to add_loss
    "add-loss-of-a-helper-sum": (HEADER + """
def l1(t):
    return tf.reduce_sum(tf.abs(t))

class Sparse(tf.keras.layers.Layer):
    def call(self, x):
        self.add_loss(1e-4 * l1(x))
        return x
""", {(5, "MP505")}),
    "add-loss-of-a-helper-sum-in-float32": (HEADER + """
def l1(t):
    return tf.reduce_sum(tf.abs(tf.cast(t, tf.float32)))

class Sparse(tf.keras.layers.Layer):
    def call(self, x):
        self.add_loss(1e-4 * l1(x))
        return x
""", set()),
    "add-loss-of-a-helper-that-may-return-anything": (HEADER + """
import functools

@functools.lru_cache()
def l1(t):
    return tf.reduce_sum(tf.abs(t))

class Sparse(tf.keras.layers.Layer):
    def call(self, x):
        self.add_loss(1e-4 * l1(x))
        return x
""", set()),
    # a dataset made by a function of the file, mapped with a 16-bit cast
    "cast-in-a-map-over-a-returned-dataset": (HEADER + """
def load(n):
    return tf.data.Dataset.from_tensor_slices(tf.zeros((n, 8), tf.uint8))

def to_model_dtype(img):
    return tf.cast(img, tf.float16) / 255.0

ds = load(64).map(to_model_dtype)
""", {(8, "MP503")}),
    # the last step of a TPU pipeline: bfloat16 keeps float32's range and nothing
    # computes on it on the host (returned as it is, alone or in a tuple)
    "bfloat16-cast-returned-as-the-last-step": (BF16 + """
def parse(img, label):
    img = tf.image.resize(img, (224, 224)) / 255.0
    img = tf.cast(img, tf.bfloat16)
    return img, label

def parse_only(img):
    return tf.cast(img, tf.bfloat16)

ds = tf.data.Dataset.from_tensor_slices(([0.0], [1])).map(parse)
ds2 = tf.data.Dataset.from_tensor_slices([0.0]).map(parse_only)
""", set()),
    # arithmetic after the bfloat16 cast, or a float16 cast returned: still the rule's
    "bfloat16-cast-then-computed-on": (BF16 + """
def parse(img, label):
    img = tf.cast(img, tf.bfloat16)
    img = img / 255.0
    return img, label

def parse16(img):
    return tf.cast(img, tf.float16)

ds = tf.data.Dataset.from_tensor_slices(([0.0], [1])).map(parse)
ds2 = tf.data.Dataset.from_tensor_slices([0.0]).map(parse16)
""", {(5, "MP503"), (10, "MP503")}),
    "map-over-what-a-function-returns-unknown": (HEADER + """
def load(n):
    return make_source(n)

def to_model_dtype(img):
    return tf.cast(img, tf.float16) / 255.0

ds = load(64).map(to_model_dtype)
""", set()),
    # arms of an if/elif with no else: a path binding none raises, so one reaches
    "elif-arms-without-else": (BACKEND + """
class Emission(tf.keras.layers.Layer):
    def call(self, inputs):
        if self.kind == "add":
            e = K.dot(inputs, inputs)
        elif self.kind == "mul":
            e = K.batch_dot(inputs, inputs)
        return e - K.cast(K.ones_like(e), K.floatx())
""", {(11, "MP504")}),
    "elif-arms-disagree": (BACKEND + """
class Emission(tf.keras.layers.Layer):
    def call(self, inputs):
        if self.kind == "add":
            e = K.dot(inputs, inputs)
        elif self.kind == "mul":
            e = K.cast(inputs, K.floatx())
        return e - K.cast(K.ones_like(e), K.floatx())
""", set()),
    # weights declared None together in __init__, made by add_weight in build
    "weights-declared-none-in-a-tuple": (BACKEND + """
class Additive(tf.keras.layers.Layer):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.wq, self.wk = None, None

    def build(self, shape):
        self.wq = self.add_weight(name="wq", shape=(shape[-1], 8))
        self.wk = self.add_weight(name="wk", shape=(shape[-1], 8))

    def call(self, inputs):
        return self.wq * K.cast(K.ones_like(self.wq), K.floatx())
""", {(15, "MP504")}),
    "weights-declared-by-an-unknown-tuple": (BACKEND + """
class Additive(tf.keras.layers.Layer):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.wq, self.wk = make_pair()

    def call(self, inputs):
        return self.wq * K.cast(K.ones_like(self.wq), K.floatx())
""", set()),
    # an activation made by keras.activations.get keeps the dtype
    "activation-attribute-keeps-the-dtype": (BACKEND + """
class Gate(tf.keras.layers.Layer):
    def __init__(self, activation="tanh", **kwargs):
        super().__init__(**kwargs)
        self.activation = tf.keras.activations.get(activation)

    def call(self, inputs):
        e = self.activation(inputs)
        return e * K.cast(K.ones_like(e), K.floatx())
""", {(12, "MP504")}),
    "activation-attribute-set-otherwise": (BACKEND + """
class Gate(tf.keras.layers.Layer):
    def __init__(self, activation=None, **kwargs):
        super().__init__(**kwargs)
        self.activation = activation or (lambda t: tf.cast(t, tf.float32))

    def call(self, inputs):
        e = self.activation(inputs)
        return e * K.cast(K.ones_like(e), K.floatx())
""", set()),
    # ``if K.dtype(x) != K.floatx(): x = K.cast(x, K.floatx())``: float32 either way
    "dtype-normalising-guard": (BACKEND + """
class Position(tf.keras.layers.Layer):
    def call(self, inputs):
        pos = inputs
        if K.dtype(pos) != K.floatx():
            pos = K.cast(pos, K.floatx())
        embd = K.stack([K.sin(pos), K.cos(pos)], axis=-1)
        return K.concatenate([inputs, K.reshape(embd, K.shape(inputs))], axis=-1)
""", {(11, "MP504")}),
    "guard-tests-another-dtype": (BACKEND + """
class Position(tf.keras.layers.Layer):
    def call(self, inputs):
        pos = inputs
        if K.dtype(pos) != "int32":
            pos = K.cast(pos, K.floatx())
        embd = K.stack([K.sin(pos), K.cos(pos)], axis=-1)
        return K.concatenate([inputs, K.reshape(embd, K.shape(inputs))], axis=-1)
""", set()),
    "guard-casts-to-the-compute-dtype": (BACKEND + """
class Position(tf.keras.layers.Layer):
    def call(self, inputs):
        pos = K.arange(0, 8)
        if K.dtype(pos) != self.compute_dtype:
            pos = K.cast(pos, self.compute_dtype)
        return inputs + K.sin(pos)
""", set()),
    # a float16 tensor joined with a float32 one by ``-=`` stays float16 once fixed
    "augmented-assignment-stays-16-bit": (BACKEND + """
class Scores(tf.keras.layers.Layer):
    def call(self, inputs, mask=None):
        e = K.batch_dot(inputs, inputs, axes=2)
        if self.causal:
            e -= 10000.0 * K.cast(K.ones_like(e), K.floatx())
        if mask is not None:
            e -= 10000.0 * (1.0 - K.cast(mask, K.floatx()))
        return e
""", {(9, "MP504"), (11, "MP504")}),
    # a Sequential's output has its last layer's dtype
    "sequential-output-meets-a-raw-variable": (HEADER + """
class ViT(tf.keras.Model):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.projection = tf.keras.Sequential([tf.keras.layers.Conv2D(8, 4, strides=4),
                                               tf.keras.layers.Reshape((-1, 8))])
        self.pos_embed = tf.Variable(tf.zeros((1, 16, 8)))

    def call(self, x):
        return self.projection(x) + self.pos_embed
""", {(12, "MP504")}),
    "sequential-ending-in-a-float32-layer": (HEADER + """
class ViT(tf.keras.Model):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.projection = tf.keras.Sequential([tf.keras.layers.Conv2D(8, 4, strides=4),
                                               tf.keras.layers.Reshape((-1, 8), dtype="float32")])
        self.pos_embed = tf.Variable(tf.zeros((1, 16, 8)))

    def call(self, x):
        return self.projection(x) + self.pos_embed
""", set()),
    # einops keeps the dtype; a lambda mapped over a tuple runs with each item
    "einops-and-a-mapped-lambda": (HEADER + """
from einops import rearrange

class Attention(tf.keras.layers.Layer):
    def build(self, shape):
        self.to_qkv = tf.keras.layers.Dense(24)

    def call(self, inputs, mask=None):
        q, k, v = tf.split(self.to_qkv(inputs), 3, axis=-1)
        q, k, v = map(lambda t: rearrange(t, "b n (h d) -> b h n d", h=2), (q, k, v))
        q, k = map(lambda t: t * tf.cast(mask, dtype=tf.float32), (q, k))
        return q + tf.cast(mask, tf.float32)
""", {(13, "MP504"), (14, "MP504")}),
    "mapped-lambda-casts-to-the-item-dtype": (HEADER + """
class Attention(tf.keras.layers.Layer):
    def build(self, shape):
        self.to_qkv = tf.keras.layers.Dense(24)

    def call(self, inputs, mask=None):
        q, k, v = tf.split(self.to_qkv(inputs), 3, axis=-1)
        q, k = map(lambda t: t * tf.cast(mask, dtype=t.dtype), (q, k))
        return q + k
""", set()),
    # a Python number on one path, a float32 tensor on the other: fails on that one
    "python-number-or-float32-divisor": (HEADER + """
import math

class Landmarks(tf.keras.layers.Layer):
    def call(self, q, mask=None):
        l = math.ceil(q.shape[1] / 4)
        divisor = l
        if mask is not None:
            divisor = tf.reduce_sum(tf.cast(mask, tf.float32)) + 1e-8
        q /= divisor
        return q
""", {(12, "MP504")}),
    "python-number-or-16-bit-divisor": (HEADER + """
import math

class Landmarks(tf.keras.layers.Layer):
    def call(self, q, mask=None):
        divisor = math.ceil(q.shape[1] / 4)
        if mask is not None:
            divisor = tf.reduce_sum(tf.cast(mask, q.dtype)) + 1e-3
        q /= divisor
        return q
""", set()),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_flow(name):
    code, expected = CASES[name]
    assert set(fired(code)) == expected


def test_the_sum_in_a_helper_names_the_loss_it_feeds():
    code, _ = CASES["add-loss-of-a-helper-sum"]
    [found] = helpers.lint(code, "MP505", path="case.py")
    assert "returned into `self.add_loss(1e-4 * l1(x))` at line 9" in found.message


CONFIG_MODULE = {
    "config.py": "NEG_INF = {value}\nHIDDEN = 64\n",
    "blocks.py": """import tensorflow as tf
from config import NEG_INF


class MaskedPool(tf.keras.layers.Layer):
    def call(self, x):
        keep = tf.cast(x > 0, x.dtype)
        x = x + (1.0 - keep) * NEG_INF
        return tf.reduce_max(x, axis=1)
""",
    "train.py": """import tensorflow as tf
from blocks import MaskedPool
tf.keras.mixed_precision.set_global_policy("mixed_float16")
inputs = tf.keras.Input(shape=(16, 32))
model = tf.keras.Model(inputs, MaskedPool()(inputs))
""",
}


def _check(folder):
    result = helpers.run_cli("check", "--select", "MP501", "--output-format", "json", ".", cwd=folder)
    assert result.returncode in (0, 1), result.stderr
    return [(f["path"], f["line"]) for f in json.loads(result.stdout)]


def test_a_sentinel_imported_from_a_config_module(tmp_path):
    files = {name: text.format(value="-1e9") for name, text in CONFIG_MODULE.items()}
    assert _check(helpers.write_files(tmp_path / "a", files)) == [("blocks.py", 8)]
    # within float16's range, or bound twice (not one value): silent
    files = {name: text.format(value="-1e4") for name, text in CONFIG_MODULE.items()}
    assert _check(helpers.write_files(tmp_path / "b", files)) == []
    files = {name: text.format(value="-1e9\nNEG_INF = -1e4") for name, text in CONFIG_MODULE.items()}
    assert _check(helpers.write_files(tmp_path / "c", files)) == []


def test_fixing_the_config_module_changes_the_cached_result(tmp_path):
    folder = helpers.write_files(tmp_path, {name: text.format(value="-1e9") for name, text in CONFIG_MODULE.items()})
    assert _check(folder) == [("blocks.py", 8)]
    (folder / "config.py").write_text("NEG_INF = -1e4\nHIDDEN = 64\n")
    assert _check(folder) == []
