"""The rules of issue 28 (MP210, MP211, MP408, MP506, and MP404's library switches):
cases beyond the catalog examples and fixtures, one test per vocabulary entry, and
MP210's fix run with real TensorFlow."""

from __future__ import annotations

import textwrap

import pytest

from helpers import fired, fix, run_cli
from mplint.semantic.vocabulary import (
    LIBRARY_FLOAT16_SWITCHES, LIBRARY_MIXED_SWITCHES, LIBRARY_PACKAGES, UNSCALED_LIBRARY_TRAINERS,
)


def _spell(canonical: str) -> str:
    """Import lines and the call expression for a canonical library name
    (``deepxde.config.set_default_float`` -> ``import deepxde as lib``, ``lib.config.set_default_float``)."""
    root, _, rest = canonical.partition(".")
    return f"import {root} as lib\n", f"lib.{rest}"


# -- MP210 ---------------------------------------------------------------------------------
KERAS2_STEP = """
    import tensorflow as tf

    optimizer = tf.keras.mixed_precision.LossScaleOptimizer(tf.keras.optimizers.SGD(0.1))


    def step(model, x, y):
        with tf.GradientTape() as tape:
            loss = tf.cast(tf.reduce_mean(tf.square(model(x) - y)), tf.float16)
            scaled = optimizer.get_scaled_loss(loss)  # scaled here
        grads = optimizer.get_unscaled_gradients(tape.gradient(scaled, model.trainable_variables))
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        tf.summary.scalar("scaled", scaled)
"""


def test_mp210_reports_a_read_scaled_loss_and_fixes_it_keeping_comments():
    assert fired(KERAS2_STEP, "MP210", keras_version=2) == [(10, "MP210")]
    out = fix(KERAS2_STEP, "MP210", unsafe=False, keras_version=2)
    assert "optimizer.get_scaled_loss(tf.cast(loss, tf.float32))  # scaled here" in out
    assert fired(out, "MP210", keras_version=2) == []


def test_mp210_silent_when_the_scaled_loss_is_only_differentiated():
    only = KERAS2_STEP.replace('        tf.summary.scalar("scaled", scaled)\n', "")
    assert fired(only, "MP210", keras_version=2) == []
    # an attribute of the same name is no read of the variable
    attribute = KERAS2_STEP.replace('tf.summary.scalar("scaled", scaled)', 'tf.print(optimizer.scaled)')
    assert fired(attribute, "MP210", keras_version=2) == []


def test_mp210_a_direct_cast_gets_float32_as_its_dtype():
    code = KERAS2_STEP.replace(
        "loss = tf.cast(tf.reduce_mean(tf.square(model(x) - y)), tf.float16)\n"
        "            scaled = optimizer.get_scaled_loss(loss)",
        "loss = tf.reduce_mean(tf.square(model(x) - y))\n"
        "            scaled = optimizer.get_scaled_loss(tf.cast(loss, dtype='float16'))")
    assert fired(code, "MP210", keras_version=2) == [(10, "MP210")]
    assert "get_scaled_loss(tf.cast(loss, dtype='float32'))" in fix(code, "MP210", keras_version=2)


BRANCHED_STEP = """
    import tensorflow as tf
    from absl import flags

    FLAGS = flags.FLAGS
    optimizer = tf.keras.mixed_precision.LossScaleOptimizer(tf.keras.optimizers.SGD(0.1))


    def step(model, x, y):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(model(x) - y))
            if FLAGS.amp:
                total_loss = tf.cast(loss, tf.float16)
                total_loss = optimizer.get_scaled_loss(total_loss)
            else:
                total_loss = loss
        if FLAGS.amp:
            grads = optimizer.get_unscaled_gradients(tape.gradient(total_loss, model.trainable_variables))
        else:
            grads = tape.gradient(total_loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        LATER
"""


def test_mp210_the_scaling_statement_and_the_other_arm_are_no_reads_of_the_product():
    # ``total_loss = opt.get_scaled_loss(total_loss)`` reads the name before it binds it, and the
    # ``else:`` arm's ``total_loss`` is the unscaled loss (chychen/tf_rlib's runners)
    assert fired(BRANCHED_STEP.replace("LATER", "return loss"), "MP210", keras_version=2) == []
    # read after both arms: under the flag it is the float16 product
    assert fired(BRANCHED_STEP.replace("LATER", "return total_loss"), "MP210", keras_version=2) == [(14, "MP210")]


def test_mp210_keras3_only_with_loss_scale_factor():
    code = """
        import keras
        from keras import ops

        optimizer = OPTIMIZER


        def step(loss):
            scaled = optimizer.scale_loss(ops.cast(loss, "float16"))
            print(scaled)
            return scaled
    """
    factor = code.replace("OPTIMIZER", "keras.optimizers.Adam(loss_scale_factor=128.0)")
    assert fired(factor, "MP210", keras_version=3) == [(9, "MP210")]
    for silent in ("keras.optimizers.LossScaleOptimizer(keras.optimizers.Adam())", "keras.optimizers.Adam()",
                   "make_optimizer()"):
        assert fired(code.replace("OPTIMIZER", silent), "MP210", keras_version=3) == [], silent


# -- MP408 ---------------------------------------------------------------------------------
LAYER = """
    import tensorflow as tf

    tf.keras.mixed_precision.set_global_policy("mixed_float16")


    class Gate(tf.keras.layers.Layer):
        def build(self, input_shape):
            self.w = self.add_weight(ARGS)

        def call(self, x):
            return x * self.w
"""


@pytest.mark.parametrize("args, found, fixed", [
    ('"w", (4,), dtype=tf.float16', True, '"w", (4,)'),
    ('"w", (4,), dtype=tf.bfloat16', True, '"w", (4,)'),
    ('"w", (4,), tf.float16', True, None),  # positional dtype: no fix
    ('"w", (4,), dtype=tf.float16, trainable=False', False, None),
    ('"w", (4,), dtype=tf.float16, trainable=self.learn', False, None),
    ('"w", (4,), dtype=self.dtype', False, None),  # the variable dtype: float32
    ('"w", (4,), dtype=tf.float32', False, None),
])
def test_mp408_add_weight(args, found, fixed):
    code = LAYER.replace("ARGS", args)
    assert bool(fired(code, "MP408")) is found
    if fixed is not None:
        assert f"self.add_weight({fixed})" in fix(code, "MP408")
    if found and fixed is None and "tf.float16" in args and "dtype=" not in args:
        assert fix(code, "MP408") == textwrap.dedent(code)


def test_mp408_offers_no_fix_that_would_drop_a_comment():
    code = LAYER.replace("ARGS", '"w", (4,),  # bfloat16 is 16 bits too\n                dtype=tf.bfloat16')
    assert fired(code, "MP408") == [(9, "MP408")]  # at the call that creates the variable
    assert fix(code, "MP408") == textwrap.dedent(code)


def test_mp408_a_variable_read_at_once_is_no_variable():
    code = LAYER.replace("self.w = self.add_weight(ARGS)",
                         "self.w = tf.Variable(0.0001, dtype=tf.float16, trainable=True).numpy()")
    assert fired(code, "MP408") == []
    kept = code.replace(".numpy()", "")
    assert fired(kept, "MP408") == [(9, "MP408")]


@pytest.mark.parametrize("variable, found", [
    ("tf.Variable(tf.zeros((4,), dtype=tf.float16))", True),  # its dtype is its initial value's
    ("tf.Variable(tf.ones([4], tf.bfloat16))", True),
    ("tf.Variable(tf.zeros((4,), dtype=tf.float16), trainable=False)", False),  # a buffer
    ("tf.Variable(tf.zeros((4,), dtype=tf.float16), dtype=tf.float32)", False),  # converted
    ("tf.Variable(tf.zeros((4,)))", False),  # float32
    ("tf.Variable(tf.cast(tf.zeros((4,), dtype=tf.float16), tf.float32))", False),
    ("tf.Variable(initial)", False),  # a value that cannot be followed
])
def test_mp408_a_variable_takes_its_initial_values_dtype(variable, found):
    code = LAYER.replace("self.add_weight(ARGS)", variable)
    assert fired(code, "MP408") == ([(9, "MP408")] if found else [])
    if found:
        assert fix(code, "MP408") == textwrap.dedent(code)  # no safe rewrite of a raw variable


def test_mp408_needs_a_mixed_policy():
    code = LAYER.replace("ARGS", '"w", (4,), dtype=tf.float16').replace(
        'tf.keras.mixed_precision.set_global_policy("mixed_float16")\n', "")
    assert fired(code, "MP408") == []
    assert fired(code, "MP408", assume_policy="mixed_float16") != []


# -- MP404: a library's own float16 switch, one test per vocabulary entry ---------------
@pytest.mark.parametrize("switch", sorted(LIBRARY_FLOAT16_SWITCHES))
def test_mp404_library_float16_switch(switch):
    imports, call = _spell(switch)
    value = LIBRARY_FLOAT16_SWITCHES[switch]
    code = f"{imports}\n{call}({value!r})\n"
    assert fired(code, "MP404") == [(3, "MP404")]
    assert fired(f"{imports}\n{call}('float32')\n", "MP404") == []
    # a mixed policy set too decides the layers' dtypes
    mixed = f"import tensorflow as tf\n{imports}\n{call}({value!r})\n" \
            "tf.keras.mixed_precision.set_global_policy('mixed_float16')\n"
    assert fired(mixed, "MP404") == []


@pytest.mark.parametrize("package", LIBRARY_PACKAGES)
def test_a_library_script_that_never_names_tensorflow_is_checked(package, tmp_path):
    """The prefilter skips files without TensorFlow or Keras in them; a DeepXDE
    script needs neither word."""
    switch = next(s for s in LIBRARY_FLOAT16_SWITCHES if s.startswith(package + "."))
    imports, call = _spell(switch)
    path = tmp_path / "solve.py"
    path.write_text(f"{imports}\n{call}({LIBRARY_FLOAT16_SWITCHES[switch]!r})\n", encoding="utf-8")
    result = run_cli("check", "--select", "MP404", str(path))
    assert result.returncode == 1, result.stdout
    assert "solve.py:3:1: MP404" in result.stdout


# -- MP211: one test per trainer and per switch ----------------------------------------------
@pytest.mark.parametrize("trainer", sorted(UNSCALED_LIBRARY_TRAINERS))
def test_mp211_trainer_under_mixed_float16(trainer):
    imports, constructor = _spell(trainer)
    method = UNSCALED_LIBRARY_TRAINERS[trainer]
    code = (f"import tensorflow as tf\n{imports}\n"
            f"tf.keras.mixed_precision.set_global_policy(POLICY)\n"
            f"trainer = {constructor}(data, net)\ntrainer.{method}(iterations=10)\n")
    assert fired(code.replace("POLICY", "'mixed_float16'"), "MP211") == [(6, "MP211")]
    assert fired(code.replace("POLICY", "'mixed_bfloat16'"), "MP211") == []
    assert fired(code.replace("POLICY", "'float32'"), "MP211") == []
    # an object of unknown class: unknown stays unknown
    unknown = code.replace("POLICY", "'mixed_float16'").replace(f"{constructor}(data, net)", "build()")
    assert fired(unknown, "MP211") == []


@pytest.mark.parametrize("switch", sorted(LIBRARY_MIXED_SWITCHES))
def test_mp211_library_mixed_switch(switch):
    imports, call = _spell(switch)
    trainer = next(t for t in UNSCALED_LIBRARY_TRAINERS if t.split(".")[0] == switch.split(".")[0])
    _, constructor = _spell(trainer)
    code = (f"{imports}\n{call}(VALUE)\nmodel = {constructor}(data, net)\n"
            f"model.{UNSCALED_LIBRARY_TRAINERS[trainer]}(iterations=10)\n")
    assert fired(code.replace("VALUE", repr(LIBRARY_MIXED_SWITCHES[switch])), "MP211") == [(5, "MP211")]
    assert fired(code.replace("VALUE", "'float32'"), "MP211") == []


def test_mp211_policy_set_by_the_caller_in_another_function():
    code = """
        import deepxde as dde
        import tensorflow as tf


        def solve(data, net):
            model = dde.Model(data, net)
            return model.train(iterations=10)


        def main():
            tf.keras.mixed_precision.set_global_policy("mixed_float16")
            solve(None, None)
    """
    assert fired(code, "MP211") == [(8, "MP211")]


# -- MP506 -----------------------------------------------------------------------------------
HEAD = """
    import tensorflow as tf
    POLICY


    class Head(tf.keras.layers.Layer):
        def call(self, x):
            BODY
"""


@pytest.mark.parametrize("body, found", [
    ("return tf.reduce_sum(x ** 2, axis=-1)", True),
    ("return tf.reduce_sum(tf.pow(x, 2), axis=-1)", True),
    ("return tf.linalg.norm(x, axis=-1)", True),
    ("return tf.pow(x, 4)", True),
    ("return tf.pow(x, 2)", False),  # one square overflows only past 256
    ("return 0.5 * x * (1.0 + tf.tanh(0.79788456 * (x + 0.044715 * x ** 3)))", False),  # tanh saturates
    ("return tf.reduce_mean(tf.square(x), axis=-1)", False),
    ("return tf.reduce_sum(tf.square(tf.nn.sigmoid(x)), axis=-1)", False),
    ("return tf.reduce_sum(tf.square(x / tf.norm(x)), axis=-1)", True),  # the norm itself
    ("y = tf.reshape(tf.nn.tanh(x), [-1]); return tf.reduce_sum(y * y)", False),
    ("return tf.reduce_sum(tf.square(tf.cast(x, tf.float32)), axis=-1)", False),
])
def test_mp506_shapes(body, found):
    code = HEAD.replace("POLICY", 'tf.keras.mixed_precision.set_global_policy("mixed_float16")').replace(
        "BODY", body)
    assert bool(fired(code, "MP506")) is found, body


def test_mp506_one_finding_for_a_sum_of_cubes():
    code = HEAD.replace("POLICY", 'tf.keras.mixed_precision.set_global_policy("mixed_float16")').replace(
        "BODY", "return tf.reduce_sum(tf.pow(x, 3), axis=-1)")
    assert fired(code, "MP506") == [(8, "MP506")]


def test_mp506_leaves_sums_into_a_loss_to_mp505():
    code = HEAD.replace("POLICY", 'tf.keras.mixed_precision.set_global_policy("mixed_float16")').replace(
        "BODY", "self.add_loss(1e-4 * tf.reduce_sum(tf.square(x)))\n            return x")
    assert fired(code, "MP506", "MP505") == [(8, "MP505")]


def test_mp506_library_mode_is_the_program_models():
    sizes = ("h = tf.cast(tf.shape(x)[1], self.compute_dtype)\n"
             "            w = tf.cast(tf.shape(x)[2], self.compute_dtype)\n"
             "            return x * tf.sqrt(h * w)")
    library = HEAD.replace("POLICY", "").replace("BODY", sizes)
    assert fired(library, "MP506", library=True) == [(10, "MP506")]
    assert fired(library, "MP506") == []  # no policy reaches it, and it is no library
    # a library's public layer that squares its input: how large it grows is the data's
    norm = HEAD.replace("POLICY", "").replace("BODY", "return tf.norm(x, axis=-1)")
    assert fired(norm, "MP506", library=True) == []
    assert fired(norm, "MP506", assume_policy="mixed_float16") == [(8, "MP506")]
    # bfloat16 sizes do not overflow
    bfloat16 = library.replace("self.compute_dtype", "tf.bfloat16")
    assert fired(bfloat16, "MP506", library=True) == []


# -- MP210's fix, run --------------------------------------------------------------------------
FACTOR_STEP = '''\
import keras
import tensorflow as tf

optimizer = keras.optimizers.SGD(0.1, loss_scale_factor=1024.0)
model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(1, kernel_initializer="ones")])


def step(x, y):
    with tf.GradientTape() as tape:
        loss = tf.cast(tf.reduce_mean(tf.square(model(x) - y)), tf.float16)
        scaled = optimizer.scale_loss(loss)
    grads = tape.gradient(scaled, model.trainable_variables)
    return scaled, grads
'''


@pytest.mark.slow  # runs TensorFlow
def test_mp210_fix_makes_the_scaled_loss_finite_and_keeps_the_gradients():
    tf = pytest.importorskip("tensorflow")
    keras = pytest.importorskip("keras")
    if not hasattr(keras.optimizers.SGD(), "scale_loss"):
        pytest.skip("Keras 2: no loss_scale_factor")
    fixed = fix(FACTOR_STEP, "MP210", keras_version=3)
    assert "optimizer.scale_loss(tf.cast(loss, tf.float32))" in fixed
    x = tf.constant([[3.0, 3.0, 3.0, 3.0]])
    y = tf.constant([[1.0]])
    results = []
    for code in (FACTOR_STEP, fixed):
        namespace: dict = {}
        exec(compile(code, "<step>", "exec"), namespace)
        scaled, grads = namespace["step"](x, y)
        results.append((float(scaled), [g.numpy() for g in grads]))
    (before, grads_before), (after, grads_after) = results
    assert before == float("inf")  # (12 - 1) ** 2 * 1024 overflows float16
    assert after == pytest.approx(121.0 * 1024)
    for a, b in zip(grads_before, grads_after):
        assert (a == b).all()


# -- MP507 -----------------------------------------------------------------------------------
DECODER = """
    import tensorflow as tf
    from tensorflow_probability import distributions as tfd

    tf.keras.mixed_precision.set_global_policy(POLICY)


    def decode(mean, ndims):
        mean = tf.cast(mean, DTYPE)
        return tfd.Independent(tfd.Normal(loc=mean, scale=1.0), reinterpreted_batch_ndims=NDIMS)
"""


@pytest.mark.parametrize("policy, dtype, ndims, found", [
    ("'mixed_float16'", "tf.float16", "3", True),
    ("'mixed_float16'", "tf.keras.mixed_precision.global_policy().compute_dtype", "2", True),
    ("'mixed_float16'", "tf.float16", "1", False),
    ("'mixed_float16'", "tf.float16", "ndims", False),
    ("'mixed_float16'", "tf.float32", "3", False),
    ("'mixed_bfloat16'", "tf.bfloat16", "3", False),
    ("'float32'", "tf.float16", "3", False),
])
def test_mp507_decoder_function(policy, dtype, ndims, found):
    code = DECODER.replace("POLICY", policy).replace("DTYPE", dtype).replace("NDIMS", ndims)
    assert fired(code, "MP507") == ([(10, "MP507")] if found else [])


def test_mp507_a_module_that_casts_to_the_compute_dtype():
    code = """
        import tensorflow as tf
        import tensorflow_probability as tfp

        tf.keras.mixed_precision.set_global_policy("mixed_float16")


        class Decoder(tf.Module):
            def __call__(self, features):
                x = self.net(tf.cast(features, tf.keras.mixed_precision.global_policy().compute_dtype))
                means = tf.split(x, 2, -1)
                return {key: tfp.distributions.Independent(tfp.distributions.Normal(mean, 1), 3)
                        for key, mean in zip("ab", means)}
    """
    assert fired(code, "MP507") == [(12, "MP507")]
    cast = code.replace("means = tf.split(x, 2, -1)", "means = tf.split(tf.cast(x, tf.float32), 2, -1)")
    # the comprehension variable is not followed, but the function casts to float32: silent
    assert fired(cast, "MP507") == []
