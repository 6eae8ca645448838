"""Edge cases of the numeric rules (MP501-MP505) beyond the catalog and fixtures.

Each case is real code linted with the real engine; the expected set is the
(line, rule) pairs that must fire, so both misses and false alarms fail.
"""

import textwrap

import pytest

import helpers

HEADER = "import tensorflow as tf\ntf.keras.mixed_precision.set_global_policy('mixed_float16')\n"


def findings(code, **settings):
    return helpers.lint(code, "MP5", path="case.py", **settings)


def fired(code, **settings):
    """``(line, rule)`` of each numeric finding, sorted (a duplicate would show)."""
    return helpers.fired(code, "MP5", path="case.py", **settings)


CASES = {
    "branch-upcast-is-ambiguous": (HEADER + """
class Norm(tf.keras.layers.Layer):
    def build(self, shape):
        self.w = self.add_weight(name="w", shape=shape[-1:])

    def call(self, x):
        if x.dtype == tf.float16:
            x = tf.cast(x, tf.float32)
        return x * self.w
""", set()),
    # Bound in both arms of an if/else: one of them certainly reaches the use, and
    # both are float32.
    "branch-only-bindings-joined": (HEADER + """
class Gate(tf.keras.layers.Layer):
    def call(self, x, mask=None):
        if mask is None:
            m = tf.ones_like(x, dtype=tf.float32)
        else:
            m = tf.cast(mask, tf.float32)
        return x * m
""", {(10, "MP504")}),
    # the arms disagree (one casts to the input's dtype): unknown, silent
    "branch-only-bindings-disagree": (HEADER + """
class Gate(tf.keras.layers.Layer):
    def call(self, x, mask=None):
        if mask is None:
            m = tf.ones_like(x, dtype=tf.float32)
        else:
            m = tf.cast(mask, x.dtype)
        return x * m
""", set()),
    # a global name may be bound outside the function: unknown, silent
    "branch-only-bindings-of-a-global": (HEADER + """
m = None

class Gate(tf.keras.layers.Layer):
    def call(self, x, mask=None):
        global m
        if mask is not None:
            m = tf.cast(mask, tf.float32)
        return x * m
""", set()),
    "rebound-in-a-branch-both-float32": (HEADER + """
class Gate(tf.keras.layers.Layer):
    def call(self, x, mask=None):
        m = tf.cast(mask, tf.float32)
        if len(m.shape) == 2:
            m = tf.expand_dims(m, -1)
        return x * m
""", {(9, "MP504")}),
    # RMS norm computed in float32 with a weight Keras never autocasts: all float32.
    "non-autocast-weight-is-float32": (HEADER + """
class RMSNorm(tf.keras.layers.Layer):
    def build(self, shape):
        self.scale = self.add_weight(name="scale", shape=shape[-1:], experimental_autocast=False)

    def call(self, x):
        x = tf.cast(x, tf.float32)
        return x * tf.math.rsqrt(tf.reduce_mean(x * x, -1, keepdims=True)) * self.scale
""", set()),
    "autocast-weight-meets-float32": (HEADER + """
class RMSNorm(tf.keras.layers.Layer):
    def build(self, shape):
        self.scale = self.add_weight(name="scale", shape=shape[-1:])

    def call(self, x):
        x = tf.cast(x, tf.float32)
        return x * tf.math.rsqrt(tf.reduce_mean(x * x, -1, keepdims=True)) * self.scale
""", {(10, "MP504")}),
    "keras-ops-promote": (HEADER + """
from keras import ops

class Add(tf.keras.layers.Layer):
    def call(self, x):
        return ops.add(x, tf.constant(1.0))
""", set()),
    "no-tensorflow-import": ("""
import keras
keras.mixed_precision.set_global_policy("mixed_float16")

class Noise(keras.layers.Layer):
    def call(self, x):
        return x + keras.random.normal(keras.ops.shape(x))
""", set()),
    "lambda-layer-pinned-to-float32": (HEADER + """
inputs = tf.keras.Input((4,))
x = tf.keras.layers.Dense(4)(inputs)
y = tf.keras.layers.Lambda(lambda t: t * 1e5 + tf.constant(1.0), dtype="float32")(x)
model = tf.keras.Model(inputs, y)
""", set()),
    "subclass-of-float32-layer": (HEADER + """
class Base(tf.keras.layers.Layer):
    def __init__(self, **kwargs):
        super().__init__(dtype="float32", **kwargs)

class Child(Base):
    def call(self, x):
        return x + tf.constant(1.0) - 1e9
""", set()),
    "autocast-off": (HEADER + """
class Raw(tf.keras.layers.Layer):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.autocast = False

    def call(self, x):
        return x + tf.constant(1.0)
""", set()),
    "int-constants-and-counters": (HEADER + """
class Step(tf.keras.layers.Layer):
    def build(self, shape):
        self.step = tf.Variable(0, trainable=False)

    def call(self, x):
        idx = tf.constant(1)
        return x * tf.cast(self.step + idx, x.dtype)
""", set()),
    "helper-method-with-sublayer": (HEADER + """
class Block(tf.keras.layers.Layer):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.proj = tf.keras.layers.Dense(8)

    def _attend(self, q):
        return self.proj(q) * -1e9

    def call(self, x):
        return self._attend(x)
""", {(10, "MP501")}),
    "sublayer-pinned-to-float32-is-unknown": (HEADER + """
class Block(tf.keras.layers.Layer):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.head = tf.keras.layers.Dense(8, dtype="float32")

    def call(self, x):
        return self.head(x) * -1e9
""", set()),
    "map-on-a-non-dataset": (HEADER + """
def to_half(v):
    return tf.cast(v, tf.float16)

values = some_pool.map(to_half, items)
""", set()),
    "keras2-group-norm": (HEADER + """
import tf_keras
inputs = tf_keras.Input((8, 8, 16))
x = tf_keras.layers.GroupNormalization(groups=4, epsilon=1e-12)(inputs)
y = tf.keras.layers.GroupNormalization(groups=4, epsilon=1e-12)(inputs)
""", {(6, "MP502")}),
    "preprocess-method-of-a-layer-is-model-code": (HEADER + """
class Stem(tf.keras.layers.Layer):
    def _preprocess(self, x):
        return tf.cast(x, tf.float16) / 255.0

    def call(self, x):
        return self._preprocess(x)
""", set()),
    "per-row-sum-is-not-an-accumulator": (HEADER + """
class Pool(tf.keras.layers.Layer):
    def call(self, x):
        return tf.reduce_sum(x, axis=1) / tf.cast(tf.shape(x)[1], x.dtype)
""", set()),
    "train-step-math-is-float32": (HEADER + """
class Model(tf.keras.Model):
    def train_step(self, data):
        x, y = data
        y_pred = self(x)
        loss = tf.reduce_sum(tf.square(y - y_pred)) + 1e-12
        self.add_loss(tf.reduce_sum(y_pred) * -1e9)
        return {"loss": loss}
""", set()),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_case(name):
    code, expected = CASES[name]
    assert fired(code) == sorted(expected)


def test_runtime_policy_is_noted():
    code = """
import sys
import tensorflow as tf
tf.keras.mixed_precision.set_global_policy(sys.argv[1])

class Mask(tf.keras.layers.Layer):
    def call(self, x):
        return x - 1e9
"""
    found = findings(code)
    assert [(f.line, f.rule) for f in found] == [(8, "MP501")]
    assert "chosen at run time" in found[0].message


def test_assumed_policy_without_a_policy_call():
    code = """
import tensorflow as tf

class Noise(tf.keras.layers.Layer):
    def call(self, x):
        return x + tf.random.normal(tf.shape(x))
"""
    assert fired(code) == []
    assert fired(code, assume_policy="mixed_float16") == [(6, "MP504")]
    assert fired(code, assume_policy="mixed_bfloat16") == [(6, "MP504")]


def test_float16_only_rules_skip_bfloat16():
    code = """
import tensorflow as tf

class Norm(tf.keras.layers.Layer):
    def call(self, x):
        self.add_loss(tf.reduce_sum(x))
        return (x - 1e9) / (tf.norm(x) + 1e-12)
"""
    assert fired(code, assume_policy="mixed_bfloat16") == []
    assert fired(code, assume_policy="mixed_float16") == [(6, "MP505"), (7, "MP501"), (7, "MP502"), (7, "MP506")]


def test_keras_ops_sum_fix_uses_ops_cast():
    code = textwrap.dedent("""\
        import keras
        from keras import ops

        keras.mixed_precision.set_global_policy("mixed_float16")


        class Penalty(keras.layers.Layer):
            def call(self, x):
                self.add_loss(ops.sum(ops.square(x)))
                return x
        """)
    assert [(f.line, f.fix) for f in helpers.lint(code, "MP505")] == [(9, "safe")]
    fixed = helpers.fix(code, "MP505", unsafe=False)
    assert 'self.add_loss(ops.sum(ops.cast(ops.square(x), "float32")))' in fixed
    assert helpers.lint(fixed, "MP505") == []


MASK_LAYER = ("import numpy as np\nimport tensorflow as tf\n"
              "tf.keras.mixed_precision.set_global_policy('mixed_float16')\n"
              "class Attn(tf.keras.layers.Layer):\n"
              "    def call(self, scores, mask):\n"
              "        return tf.nn.softmax(EXPR)\n")


@pytest.mark.parametrize("expr", [
    "scores + (1.0 - tf.cast(mask, scores.dtype)) * tf.float32.min",
    "scores + (1.0 - tf.cast(mask, scores.dtype)) * np.finfo(np.float32).min",
    "scores + (1.0 - tf.cast(mask, scores.dtype)) * np.finfo('float32').min",
    "scores + (1.0 - tf.cast(mask, scores.dtype)) * tf.constant(-1e9, dtype=scores.dtype)",
    "scores + (1.0 - tf.cast(mask, scores.dtype)) * tf.cast(-1e9, scores.dtype)",
    "scores + tf.fill(tf.shape(scores), tf.cast(-1e9, scores.dtype))",
])
def test_mp501_reads_dtype_limits_and_constants_made_16_bit(expr):
    assert fired(MASK_LAYER.replace("EXPR", expr)) == [(6, "MP501")]


@pytest.mark.parametrize("expr", [
    "scores + (1.0 - tf.cast(mask, scores.dtype)) * tf.float16.min",  # the 16-bit limit is finite
    "scores + (1.0 - tf.cast(mask, scores.dtype)) * np.finfo(np.float16).min",
    "tf.where(mask, scores, tf.constant(-1e4, dtype=scores.dtype))",
    "tf.where(mask, scores, tf.as_dtype(scores.dtype).min)",
])
def test_mp501_stays_silent_on_finite_16_bit_sentinels(expr):
    assert fired(MASK_LAYER.replace("EXPR", expr)) == []


@pytest.mark.parametrize("expr", [
    "tf.where(mask, scores, -1e9)",
    "tf.where(mask == 1, -1e9, scores)",
    "tf.where(mask, scores, tf.constant(-1e9, dtype=scores.dtype))",
    "tf.where(mask, scores, tf.cast(-1e9, scores.dtype))",
    "tf.where(mask, scores, tf.fill(tf.shape(scores), tf.cast(-1e9, scores.dtype)))",
    "tf.where(mask, scores, -10000.0 * 10)",
])
def test_mp501_stays_silent_on_a_sentinel_tf_where_only_selects(expr):
    # float16 makes the masked slots -inf and softmax gives them exactly 0 (TF 2.21,
    # run); NaN needs a row with every slot masked, which the data decides
    assert fired(MASK_LAYER.replace("EXPR", expr)) == []


def test_mp501_still_reports_arithmetic_inside_a_tf_where():
    expr = "tf.where(mask, scores, scores + (1.0 - tf.cast(mask, scores.dtype)) * -1e9)"
    assert fired(MASK_LAYER.replace("EXPR", expr)) == [(6, "MP501")]


MASK_HELPER = HEADER + """
def apply_mask(scores, mask):
    return scores + (1.0 - tf.cast(mask, scores.dtype)) * -1e9


class Attention(tf.keras.layers.Layer):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.query = tf.keras.layers.Dense(8)

    def _masked(self, s, mask):
        return s + (1.0 - tf.cast(mask, s.dtype)) * -1e9

    def call(self, x, mask):
        scores = tf.matmul(self.query(x), x, transpose_b=True)
        return {returned}
"""


def test_mp501_follows_scores_into_the_helpers_that_mask_them():
    # a function of the module and a method, each given 16-bit scores by ``call``
    assert fired(MASK_HELPER.format(returned="apply_mask(scores, mask)")) == [(5, "MP501")]
    assert fired(MASK_HELPER.format(returned="self._masked(scores, mask)")) == [(14, "MP501")]
    fixed = helpers.fix(textwrap.dedent(MASK_HELPER.format(returned="apply_mask(scores, mask)")), "MP501")
    assert "(1.0 - tf.cast(mask, scores.dtype)) * tf.as_dtype(scores.dtype).min" in fixed


def test_mp501_in_helpers_stays_silent_for_float32_unknown_or_unautocast_callers():
    # float32 scores on purpose: -1e9 is finite there
    assert fired(MASK_HELPER.format(returned="apply_mask(tf.cast(scores, tf.float32), mask)")) == []
    # scores of a dtype mplint cannot tell
    assert fired(MASK_HELPER.format(returned="apply_mask(unknown(scores), mask)")) == []
    # called only outside any layer's call (a metric, a data function): no autocast there
    outside = MASK_HELPER.format(returned="scores") + """
def evaluate(scores, mask):
    return apply_mask(scores, mask)
"""
    assert fired(outside) == []


def test_mp501_reports_a_named_fill_value_where_its_number_is_written():
    code = HEADER + """
class Attention(tf.keras.layers.Layer):
    def call(self, scores, mask):
        neg = tf.fill(tf.shape(scores), tf.cast(-1e9, scores.dtype))
        return tf.nn.softmax(scores + (1.0 - tf.cast(mask, scores.dtype)) * neg)
"""
    [found] = findings(code)
    assert (found.line, found.col, found.rule) == (6, 49, "MP501")
    assert "meets a float16 tensor in `scores + (1.0 - tf.cast(mask, scores.dtype)) ...`" in found.message
    fixed = helpers.fix(code, "MP501")
    assert "tf.cast(tf.as_dtype(self.compute_dtype).min, scores.dtype)" in fixed
    assert helpers.fix(fixed, "MP501") == fixed


DTYPE_CHOSEN = HEADER + """
class Attn(tf.keras.layers.Layer):
    def call(self, scores, mask):
        max_value = CHOICE
        return tf.nn.softmax(scores - max_value * tf.cast(mask, scores.dtype))
"""


@pytest.mark.parametrize("choice", [
    '65504.0 if scores.dtype == "float16" else 1.0e9',  # keras.layers.Attention's own mask
    "65504.0 if scores.dtype == tf.float16 else 1e9",
    "1e9 if scores.dtype != tf.float16 else 65504.0",
    "6e4 if scores.dtype in (tf.float16, tf.bfloat16) else 1e9",
    "6e4 if self.compute_dtype == 'float16' else 1e9",
])
def test_mp501_takes_the_arm_a_dtype_test_picks_for_16_bit_scores(choice):
    assert fired(DTYPE_CHOSEN.replace("CHOICE", choice)) == []


@pytest.mark.parametrize("choice", [
    "1e9 if scores.dtype == tf.float16 else 65504.0",  # the wrong arm for float16
    "1e9 if self.training_mode else 1e4",  # not a dtype test: either may meet float16
])
def test_mp501_still_reports_an_arm_that_overflows_under_16_bit(choice):
    assert fired(DTYPE_CHOSEN.replace("CHOICE", choice)) == [(7, "MP501")]
