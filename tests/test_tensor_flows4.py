"""MP504 and the numeric rules over more of a program's flow: a ``self`` attribute
overwritten in ``__init__``, tables kept from ``build``, helpers given a layer's
tensors, and the dtype Keras picks when none is named (``floatx``)."""

import textwrap

import helpers

HEADER = "import tensorflow as tf\nfrom tensorflow import keras\nfrom tensorflow.keras import backend as K\n"
MIXED = HEADER + "keras.mixed_precision.set_global_policy('mixed_float16')\n"


def fired(code, rule="MP504"):
    return helpers.fired(textwrap.dedent(code), rule, path="case.py")


ACTIVATED = MIXED + """
class Attention(keras.layers.Layer):
    def __init__(self, units, activation=None):
        super().__init__()
        self.units = units
        self.activation = activation
        self.activation = keras.activations.get(activation){later}

    def build(self, shape):
        self.kernel = self.add_weight(name="k", shape=(shape[-1], self.units))

    def call(self, x):
        q = self.activation(K.dot(x, self.kernel))
        return q / K.sqrt(K.constant(self.units, dtype=K.floatx()))
"""


def test_an_attribute_overwritten_later_in_init_has_the_later_value():
    # the first assignment is dead once __init__ returns: the activation keeps q's dtype
    assert fired(ACTIVATED.format(later="")) == [(18, "MP504")]


def test_an_attribute_reassigned_on_a_branch_stays_unknown():
    # ``if`` makes the later assignment conditional: the parameter may survive, and
    # an unknown callable's output has no known dtype
    code = ACTIVATED.format(later="").replace(
        "        self.activation = keras.activations.get(activation)",
        "        if activation is not None:\n            self.activation = keras.activations.get(activation)")
    assert fired(code) == []


BASES = MIXED + """
def trend(theta, basis):
    return tf.einsum("bp,pt->bt", theta, basis)


class Trend(keras.layers.Layer):
    def __init__(self, length, terms):
        super().__init__()
        self.theta = keras.layers.Dense(terms)
        self.basis = tf.concat(
            [tf.math.pow(tf.range(length, dtype={dtype}) / length, i)[None, :] for i in range(terms)],
            axis=0)

    def call(self, x):
        return trend(self.theta(x), self.basis)
"""


def test_a_basis_built_by_a_comprehension_in_init_meets_a_dense_output_in_a_helper():
    found = helpers.lint(textwrap.dedent(BASES.format(dtype="tf.float32")), "MP504", path="case.py")
    assert [(f.line, f.rule) for f in found] == [(7, "MP504")]
    assert "made at line 14" in found[0].message


def test_a_basis_made_in_the_compute_dtype_is_silent():
    assert fired(BASES.format(dtype="self.compute_dtype")) == []


TABLE = MIXED + """
class Positions(keras.layers.Layer):
    def __init__(self):
        super().__init__()
        self.table = None

    def build(self, shape):
        self.table = {table}

    def call(self, x):
        ids = tf.range(tf.shape(x)[1])
        rows = tf.nn.embedding_lookup(self.table, ids)
        return tf.where(tf.equal(x, 0), x, rows)
"""


def test_a_float32_table_kept_from_build_is_looked_up_into_a_where_with_the_input():
    assert fired(TABLE.format(table="tf.convert_to_tensor(positions(shape), dtype=tf.float32)")) == [(17, "MP504")]


def test_a_table_made_as_a_weight_is_read_in_the_compute_dtype():
    assert fired(TABLE.format(table="self.add_weight(name='t', shape=(512, shape[-1]))")) == []


def test_a_where_on_int_tensors_is_silent():
    code = TABLE.format(table="tf.range(512)").replace("tf.equal(x, 0), x, rows", "tf.equal(rows, 0), rows, ids")
    assert fired(code) == []


NORM = HEADER + """
class Norm(keras.layers.Layer):
    def __init__(self, epsilon=None):
        super().__init__()
        if epsilon is None:
            epsilon = {default}
        self.epsilon = epsilon

    def call(self, x):
        mean = K.mean(x, axis=-1, keepdims=True)
        variance = K.mean(K.square(x - mean), axis=-1, keepdims=True)
        return (x - mean) / K.sqrt(variance + self.epsilon)
"""


def lint_mixed(code, rule):
    return helpers.fired(textwrap.dedent(code), rule, path="case.py", assume_policy="mixed_float16")


def test_the_default_epsilon_folded_from_keras_epsilon_underflows():
    found = helpers.lint(textwrap.dedent(NORM.format(default="K.epsilon() * K.epsilon()")), "MP502",
                         path="case.py", assume_policy="mixed_float16")
    assert [(f.line, f.rule) for f in found] == [(15, "MP502")]
    assert "(1e-14)" in found[0].message


def test_keras_epsilon_itself_and_a_set_epsilon_program_are_silent():
    assert lint_mixed(NORM.format(default="K.epsilon()"), "MP502") == []
    assert lint_mixed(NORM.format(default="K.epsilon() * 10"), "MP502") == []  # 1e-6 is a float16 subnormal, not zero
    code = NORM.format(default="K.epsilon() * K.epsilon()") + "\nK.set_epsilon(1e-3)\n"
    assert lint_mixed(code, "MP502") == []


def test_a_default_that_is_not_none_leaves_the_epsilon_unknown():
    code = NORM.format(default="K.epsilon() * K.epsilon()").replace("epsilon=None", "epsilon=1e-3")
    assert lint_mixed(code, "MP502") == []


def test_floatx_is_float32_unless_the_file_sets_it():
    code = ACTIVATED.format(later="")
    assert fired(code) == [(18, "MP504")]
    assert fired(code + "\nK.set_floatx('float32')\n") == [(18, "MP504")]
    assert fired(code + "\nK.set_floatx(FLOATX)\n") == []  # a value it cannot read
    assert fired(code + "\nK.set_floatx('float16')\n") == []
