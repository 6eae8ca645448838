"""MP504 at the failing operation: where it reports, what it names, how it is
suppressed and fixed, and the flows that carry a float32 tensor there."""

import textwrap

import helpers

HEADER = "import tensorflow as tf\ntf.keras.mixed_precision.set_global_policy('mixed_float16')\n"


def findings(code, rules="MP504", **settings):
    return helpers.lint(textwrap.dedent(code), rules, path="case.py", **settings)


def fired(code, **settings):
    return helpers.fired(textwrap.dedent(code), "MP504", path="case.py", **settings)


MASKED = HEADER + """
class MaskedScores(tf.keras.layers.Layer):
    def build(self, shape):
        self.query = tf.keras.layers.Dense(shape[-1])

    def call(self, x, mask):
        adder = (1.0 - tf.cast(mask, tf.float32)) * -10000.0{made}
        return tf.add(self.query(x), adder){op}
"""


def test_reported_at_the_operation_with_the_line_that_made_the_tensor():
    [found] = findings(MASKED.format(made="", op=""))
    assert (found.line, found.col) == (10, 16)
    assert found.message.startswith("`tf.add(self.query(x), adder)` combines a float16 tensor with a float32 one")
    assert "made at line 9 by `tf.cast(mask, tf.float32)`" in found.message


def test_made_on_the_same_line_names_no_line():
    [found] = findings(HEADER + """
class Noise(tf.keras.layers.Layer):
    def call(self, x):
        return x + tf.random.normal(tf.shape(x))
""")
    assert "made by `tf.random.normal(tf.shape(x))`" in found.message
    assert "at line" not in found.message


def test_noqa_on_either_line_suppresses_and_counts_as_used():
    assert fired(MASKED.format(made="", op="  # noqa: MP504")) == []
    assert fired(MASKED.format(made="  # noqa: MP504", op="")) == []
    # a noqa for another rule suppresses nothing; MP900 sees the used one as used
    assert fired(MASKED.format(made="  # noqa: MP501", op="")) == [(10, "MP504")]
    assert findings(MASKED.format(made="  # noqa: MP504", op=""), rules="MP504,MP900") == []


def test_the_fix_changes_the_creation_not_the_operation():
    fixed = helpers.fix(MASKED.format(made="", op=""), "MP504")
    assert "tf.cast(mask, self.compute_dtype)" in fixed
    assert "return tf.add(self.query(x), adder)" in fixed


def test_no_fix_where_the_op_has_no_dtype_or_self_is_no_layer():
    code = HEADER + """
def relative_bias(n):
    return tf.range(n, dtype=tf.float32)


class Bias(tf.keras.layers.Layer):
    def build(self, shape):
        self.bias = relative_bias(shape[-1])
        self.proj = tf.keras.layers.Dense(shape[-1])

    def call(self, x):
        y = self.proj(x) / tf.sqrt(8.0)
        y = y + tf.image.resize(x, (4, 4))
        return y + self.bias
"""
    assert [(f.line, f.fix) for f in findings(code)] == [(14, None), (15, None), (16, None)]
    assert helpers.fix(code, "MP504") == textwrap.dedent(code)


def test_helper_returns_follow_the_arguments_of_each_call():
    code = HEADER + """
class Heads(tf.keras.layers.Layer):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.proj = tf.keras.layers.Dense(8)

    def _split(self, t):
        return tf.reshape(t, (-1, 2, 4))

    def call(self, x, lengths):
        heads = self._split(self.proj(x))
        steps = self._split(tf.cast(lengths, tf.float32))
        unknown = self._split(lengths)
        return heads * unknown + tf.cast(steps, heads.dtype) + heads * steps
"""
    # the same helper gives float16 for one call and float32 for another; an
    # unknown argument gives an unknown result
    assert fired(code) == [(16, "MP504")]


def test_a_comprehension_name_is_not_the_outer_binding():
    code = HEADER + """
class Levels(tf.keras.layers.Layer):
    def build(self, shape):
        level = tf.constant(2.0)
        self.scales = [level * 0 + s for s in range(3)]
        self.shifts = [tf.cast(level, "float32") for level in self.scales]

    def call(self, x):
        return x * self.scales[0] + self.shifts[1]
"""
    # ``level`` inside the second comprehension is its own loop name, but the cast
    # makes float32 whatever it is; the first list is float32 through ``level``
    assert fired(code) == [(11, "MP504")]
    assert [f.message.count("made at line") for f in findings(code)] == [1]


def test_silent_where_the_float32_tensor_is_the_first_input_of_a_layer_call():
    code = HEADER + """
class Points(tf.keras.layers.Layer):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.proj = tf.keras.layers.Dense(4)

    def grid(self, n):
        points = tf.ones((n, 2), dtype=tf.float32) / n
        return self(points) + self.proj(points)

    def call(self, points):
        return self.proj(points) * points
"""
    assert fired(code) == []


def test_keyword_argument_to_a_layer_is_not_autocast():
    code = HEADER + """
class Attention(tf.keras.layers.Layer):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.qk = tf.keras.layers.Dense(8)

    def call(self, x, bias=None):
        return self.qk(x) + bias


class Block(tf.keras.layers.Layer):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.attn = Attention()
        self.bias = tf.zeros((8,))

    def call(self, x):
        return self.attn(x, bias=self.bias) + self.attn(x, bias=tf.cast(self.bias, self.compute_dtype))
"""
    [found] = findings(code)
    assert found.line == 10 and "made at line 17 by `tf.zeros((8,))`" in found.message


def test_without_a_policy_or_library_nothing():
    assert fired(MASKED.format(made="", op="").replace(
        "tf.keras.mixed_precision.set_global_policy('mixed_float16')\n", "")) == []


def test_a_helpers_callers_outside_autocast_give_it_no_context():
    code = HEADER + """
class Scaled(tf.keras.Model):
    def build(self, shape):
        self.scale = self.add_weight(name="scale", shape=())

    def _apply(self, t):
        return t * self.scale

    def train_step(self, data):
        x, y = data
        return {"scaled": self._apply(tf.cast(y, tf.float32))}

    def call(self, x):
        return self._apply(x)
"""
    # in train_step the weight reads as float32, as its argument is: correct
    assert fired(code) == []
    called = code.replace("return self._apply(x)", "return self._apply(tf.cast(x, tf.float32))")
    assert fired(called) == [(9, "MP504")]


UNPACKED = HEADER + """
class Attention(tf.keras.layers.Layer):
    def build(self, shape):
        self.wq = self.add_weight(name="wq", shape=(shape[0][-1], 8))
        self.wk = self.add_weight(name="wk", shape=(shape[1][-1], 8))

    def project(self, query, key):
        return tf.matmul(query, self.wq), tf.matmul(key, self.wk)

    def call(self, inputs, mask):
        query, key = inputs
        q, k = self.project(query, key)
        scores = tf.matmul(q, k, transpose_b=True)
        return scores {op}
"""


def test_names_unpacked_from_a_helpers_tuple_or_the_inputs_keep_their_dtypes():
    code = UNPACKED.format(op="/ tf.sqrt(tf.constant(8, tf.float32))")
    [found] = findings(code)
    assert found.line == 16 and "made by `tf.constant(8, tf.float32)`" in found.message
    # a part of the autocast inputs is 16-bit too
    direct = code.replace("q, k = self.project(query, key)", "q, k = query, key")
    assert fired(direct) == [(16, "MP504")]


def test_a_float32_part_of_a_returned_tuple_is_followed_to_where_it_was_made():
    code = HEADER + """
class Masked(tf.keras.layers.Layer):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.proj = tf.keras.layers.Dense(8)

    def prepare(self, x, mask):
        bias = (1.0 - tf.cast(mask, tf.float32)) * -1e4
        return self.proj(x), bias

    def call(self, x, mask):
        scores, bias = self.prepare(x, mask)
        return tf.nn.softmax(scores + bias)
"""
    [found] = findings(code)
    assert found.line == 15 and "made at line 10 by `tf.cast(mask, tf.float32)`" in found.message


def test_unpacked_names_stay_silent_where_a_part_is_unknown_or_cast():
    # cast to the compute dtype in the helper: right
    cast = UNPACKED.format(op="/ tf.sqrt(tf.cast(8, scores.dtype))")
    assert fired(cast) == []
    # a starred target, or a tuple from a call mplint cannot read: unknown
    starred = UNPACKED.format(op="+ tf.cast(mask, tf.float32)").replace(
        "q, k = self.project(query, key)", "*front, k = self.project(query, key)\n        q = front[0]")
    assert fired(starred) == []
    unknown = UNPACKED.format(op="+ tf.cast(mask, tf.float32)").replace(
        "q, k = self.project(query, key)", "q, k = make_pair(query, key)")
    assert fired(unknown) == []
    # the shape's parts are no tensors of the compute dtype
    shape = UNPACKED.format(op="").replace(
        "return scores ", "h, w = tf.shape(q)[0], tf.shape(q)[1]\n        return scores / tf.cast(h * w, q.dtype)")
    assert fired(shape) == []


DECODER = """
import tensorflow as tf
import tensorflow_probability as tfp
{policy}

class Decoder(tf.Module):
    def __init__(self):
        self.deconv = tf.keras.layers.Conv2DTranspose(3, 4, strides=2{dtype})

    def __call__(self, z):
        mean = {mean}
        return tfp.distributions.Independent(tfp.distributions.Normal(mean, 1.0), 3)


def decode(z):
    mean = tf.keras.layers.Conv2DTranspose(3, 4{dtype})(z)
    return tfp.distributions.Independent(tfp.distributions.Normal(loc=mean, scale=1.0), 3)
"""
MIXED = "tf.keras.mixed_precision.set_global_policy('mixed_float16')"


def decoder(policy=MIXED, dtype="", mean="self.deconv(z)"):
    return helpers.fired(textwrap.dedent(DECODER.format(policy=policy, dtype=dtype, mean=mean)), "MP507",
                         path="case.py")


def test_a_keras_layer_built_under_a_mixed_policy_outputs_16_bit_outside_any_layer():
    # a tf.Module's __call__ and a plain function are no Keras layers, but the
    # layers they build compute in float16
    assert decoder() == [(12, "MP507"), (17, "MP507")]


def test_layer_outputs_outside_layers_stay_unknown_without_a_mixed_policy_or_when_pinned():
    assert decoder(policy="") == []
    assert decoder(policy="tf.keras.mixed_precision.set_global_policy('float32')") == []
    assert decoder(dtype=", dtype='float32'") == []
    # cast to float32 before the distribution: right
    assert decoder(mean="tf.cast(self.deconv(z), tf.float32)") == [(17, "MP507")]
