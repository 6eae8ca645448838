"""MP208 (clipping scaled gradients), MP209 (a second gradient without loss scaling)
and MP101/MP102 through Lambda and custom layers: cases beyond the catalog examples
and fixtures, and the fixes run with real TensorFlow.

The executed tests fix a fixture with mplint, import the fixed file and compare one
training step under mixed_float16 with the same step computed in float32. They are
skipped where TensorFlow (or, for Keras 2, tf_keras) is not installed; CI installs
tensorflow-cpu.
"""

from __future__ import annotations

import importlib.util
import textwrap
from pathlib import Path

import pytest

from helpers import fired, fix
from mplint.api import fix_text, make_linter

ROOT = Path(__file__).resolve().parent.parent
LOSS_SCALING = ROOT / "fixtures" / "loss_scaling"


def _import(path: Path, name: str):
    """Import a fixed file as a module (tf.function reads its source from disk)."""
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return vars(module)


def _fixed_copy(fixture: Path, tmp_path: Path, keras_version: int, rules: str) -> Path:
    """The fixture fixed by mplint (unsafe fixes of ``rules`` included), written next to the test."""
    linter = make_linter(select=rules.split(","), keras_version=keras_version)
    text = fixture.read_text(encoding="utf-8")
    fixed = fix_text(text, path=str(fixture), unsafe=True, linter=linter)
    assert fixed != text
    out = tmp_path / f"fixed_{fixture.name}"
    out.write_text(fixed, encoding="utf-8")
    return out


# -- MP208: static cases -----------------------------------------------------------------
KERAS2_LOOP = """
    import tensorflow as tf

    optimizer = tf.keras.mixed_precision.LossScaleOptimizer(tf.keras.optimizers.SGD(0.1))


    def step(model, x, y):
        with tf.GradientTape() as tape:
            scaled_loss = optimizer.get_scaled_loss(tf.reduce_mean(model(x) - y))
        grads = tape.gradient(scaled_loss, model.trainable_variables)
        grads, _ = tf.clip_by_global_norm(grads, 1.0)
        grads = optimizer.get_unscaled_gradients(grads)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
"""


def test_keras2_clip_before_unscaling_is_swapped_safely():
    assert fired(KERAS2_LOOP, "MP208", keras_version=2) == [(11, "MP208")]
    out = fix(KERAS2_LOOP, "MP208", unsafe=False, keras_version=2)
    assert ("    grads = optimizer.get_unscaled_gradients(grads)\n"
            "    grads, _ = tf.clip_by_global_norm(grads, 1.0)\n"
            "    optimizer.apply_gradients(") in out


def test_keras2_rule_leaves_keras3_and_unscaled_loops_to_other_rules():
    # Keras 3 has no get_scaled_loss (MP207's finding)
    assert fired(KERAS2_LOOP, "MP208", keras_version=3) == []
    # no unscaling at all: MP203's finding, not a misplaced clip
    no_unscaling = KERAS2_LOOP.replace("        grads = optimizer.get_unscaled_gradients(grads)\n", "")
    assert fired(no_unscaling, "MP208", "MP203", keras_version=2) == [(12, "MP203")]


def test_keras2_no_fix_when_the_scaled_gradients_are_read_again():
    logged = KERAS2_LOOP.replace(
        "        grads = optimizer.get_unscaled_gradients(grads)\n",
        "        unscaled = optimizer.get_unscaled_gradients(grads)\n        tf.print(grads)\n")
    logged = logged.replace("zip(grads,", "zip(unscaled,")
    assert fired(logged, "MP208", keras_version=2) == [(11, "MP208")]
    assert fix(logged, "MP208", keras_version=2) == textwrap.dedent(logged)


def test_keras2_clip_norm_of_the_scaled_gradients_is_not_swapped():
    # the threshold itself is computed from the scaled gradients: a human must decide
    code = KERAS2_LOOP.replace("tf.clip_by_global_norm(grads, 1.0)",
                               "tf.clip_by_global_norm(grads, 0.1 * tf.linalg.global_norm(grads))")
    assert fired(code, "MP208", keras_version=2) == [(11, "MP208")]
    assert fix(code, "MP208", keras_version=2) == textwrap.dedent(code)


KERAS3_LOOP = """
    import keras
    import tensorflow as tf

    optimizer = keras.optimizers.LossScaleOptimizer(keras.optimizers.AdamW(1e-3))


    def step(model, x, y):
        with tf.GradientTape() as tape:
            scaled_loss = optimizer.scale_loss(keras.ops.mean(model(x) - y))
        grads = tape.gradient(scaled_loss, model.trainable_variables)
        grads = [tf.clip_by_value(g, -0.5, 0.5) for g in grads]
        optimizer.apply(grads, model.trainable_variables)
"""


def test_keras3_symmetric_clip_by_value_becomes_clipvalue():
    assert fired(KERAS3_LOOP, "MP208", keras_version=3) == [(12, "MP208")]
    out = fix(KERAS3_LOOP, "MP208", keras_version=3)
    assert "keras.optimizers.AdamW(1e-3, clipvalue=0.5)" in out
    assert "clip_by_value" not in out
    assert fix(KERAS3_LOOP, "MP208", unsafe=False, keras_version=3) == textwrap.dedent(KERAS3_LOOP)


OTHER_STEP = """\
    def other(model, x):
        with tf.GradientTape() as tape:
            loss = optimizer.scale_loss(keras.ops.mean(model(x)))
        optimizer.apply(tape.gradient(loss, model.trainable_variables), model.trainable_variables)


    def step("""


def _line_of(code: str, text: str) -> int:
    return next(i for i, line in enumerate(textwrap.dedent(code).splitlines(), 1) if text in line)


@pytest.mark.parametrize("change", [
    ("tf.clip_by_value(g, -0.5, 0.5)", "tf.clip_by_value(g, 0.0, 0.5)"),  # not symmetric
    ("keras.optimizers.AdamW(1e-3)", "keras.optimizers.AdamW(1e-3, clipnorm=2.0)"),  # Keras takes one
    ("    def step(", OTHER_STEP),  # the optimizer also serves another update
    ("grads = [tf.clip_by_value(g, -0.5, 0.5) for g in grads]",
     "if clip:\n            grads = [tf.clip_by_value(g, -0.5, 0.5) for g in grads]"),  # only sometimes
    ("-0.5, 0.5)", "-self.clip, self.clip)"),  # not a constant the constructor can see
], ids=["asymmetric", "already-clips", "shared-optimizer", "conditional", "attribute-threshold"])
def test_keras3_reported_without_a_fix_where_moving_the_clip_is_not_certain(change):
    code = KERAS3_LOOP.replace(*change)
    assert fired(code, "MP208", keras_version=3) == [(_line_of(code, "clip_by_value"), "MP208")]
    assert fix(code, "MP208", keras_version=3) == textwrap.dedent(code)


def test_keras3_silent_without_loss_scaling_or_after_dividing_by_the_scale():
    plain = KERAS3_LOOP.replace("keras.optimizers.LossScaleOptimizer(keras.optimizers.AdamW(1e-3))",
                                "keras.optimizers.AdamW(1e-3)")
    assert fired(plain, "MP208", keras_version=3) == []  # scale_loss of a plain optimizer scales nothing
    divided = KERAS3_LOOP.replace("        grads = [tf.clip_by_value",
                                  "        grads = [g / optimizer.dynamic_scale for g in grads]\n"
                                  "        grads = [tf.clip_by_value")
    assert fired(divided, "MP208", "MP206", keras_version=3) == [(12, "MP206")]


# -- MP208: the fixes, run ---------------------------------------------------------------


@pytest.mark.slow  # runs TensorFlow
def test_mp208_keras3_fix_clips_the_update_like_float32(keras3, tmp_path):
    tf, keras = keras3
    import numpy as np

    fixture = LOSS_SCALING / "keras3_clipping.py"
    fixed = _fixed_copy(fixture, tmp_path, 3, "MP208")
    assert "SGD(learning_rate=0.1, global_clipnorm=CLIP_NORM)" in fixed.read_text(encoding="utf-8")
    rng = np.random.default_rng(0)
    x = rng.normal(size=(32, 16)).astype("float32")
    y = (3.0 * rng.normal(size=(32, 1))).astype("float32")

    def one_step(path: Path, name: str):
        namespace = _import(path, name)
        model = namespace["model"]
        assert model.layers[1].compute_dtype == "float16"
        before = [w.numpy() for w in model.trainable_variables]
        keras.mixed_precision.set_global_policy("float32")
        reference = namespace["build_model"]()
        reference.set_weights(model.get_weights())
        with tf.GradientTape() as tape:
            loss = namespace["loss_fn"](y, reference(x, training=True))
        grads = tape.gradient(loss, reference.trainable_variables)
        true_norm = float(tf.linalg.global_norm(grads))
        clipped, _ = tf.clip_by_global_norm(grads, namespace["CLIP_NORM"])
        expected = [w - 0.1 * g.numpy() for w, g in zip(before, clipped)]
        namespace["train_step"](x, y)
        after = [w.numpy() for w in model.trainable_variables]
        keras.backend.clear_session()
        return true_norm, expected, before, after

    true_norm, expected, before, after = one_step(fixed, "fixed_keras3_clipping")
    assert true_norm > 4 * 0.5  # the clip is active: the step is shortened to norm 0.5
    for got, want in zip(after, expected):
        np.testing.assert_allclose(got, want, rtol=2e-2, atol=2e-3)

    # The code as written: clipped to 0.5 before apply() divides by 32768.
    keras.mixed_precision.set_global_policy("mixed_float16")
    _, expected, before, after = one_step(fixture, "keras3_clipping")
    moved = np.sqrt(sum(float(np.sum((a - b) ** 2)) for a, b in zip(after, before)))
    assert 0 < moved < 0.1 * 0.5 / 1000  # not the float32 update, by orders of magnitude
    wanted = np.sqrt(sum(float(np.sum((w - b) ** 2)) for w, b in zip(expected, before)))
    assert wanted == pytest.approx(0.1 * 0.5, rel=1e-3)


@pytest.fixture
def keras2():
    tf = pytest.importorskip("tensorflow")
    tf_keras = pytest.importorskip("tf_keras")
    yield tf, tf_keras
    tf_keras.mixed_precision.set_global_policy("float32")
    tf_keras.backend.clear_session()


@pytest.mark.slow  # runs TensorFlow
def test_mp208_keras2_fix_clips_the_update_like_float32(keras2, tmp_path):
    tf, tf_keras = keras2
    import numpy as np

    # one fixed start: float16 rounding of a few unlucky initial weights can exceed the
    # tolerance below (a fresh-clone CI run drew one)
    tf_keras.utils.set_random_seed(0)
    fixed = _fixed_copy(LOSS_SCALING / "keras2_clipping.py", tmp_path, 2, "MP208")
    namespace = _import(fixed, "fixed_keras2_clipping")
    model, loss_object = namespace["model"], namespace["loss_object"]
    rng = np.random.default_rng(0)
    images = (10.0 * rng.normal(size=(32, 20))).astype("float32")
    labels = rng.integers(0, 8, size=(32,))
    model.build((None, 20))
    assert model.layers[0].compute_dtype == "float16"
    before = [w.numpy() for w in model.trainable_variables]

    tf_keras.mixed_precision.set_global_policy("float32")
    reference = tf_keras.Sequential([tf_keras.layers.Dense(64, activation="relu"), tf_keras.layers.Dense(8)])
    reference.build((None, 20))
    reference.set_weights(model.get_weights())
    with tf.GradientTape() as tape:
        loss = loss_object(labels, reference(images, training=True))
    grads = tape.gradient(loss, reference.trainable_variables)
    assert float(tf.linalg.global_norm(grads)) > 4 * namespace["CLIP_NORM"]
    clipped, _ = tf.clip_by_global_norm(grads, namespace["CLIP_NORM"])

    namespace["clip_then_unscale"](images, labels)
    for got, w, g in zip(model.trainable_variables, before, clipped):
        np.testing.assert_allclose(got.numpy(), w - 0.1 * g.numpy(), rtol=2e-2, atol=2e-3)


# -- MP209 ----------------------------------------------------------------------------------
PENALTY = """
    import tensorflow as tf

    tf.keras.mixed_precision.set_global_policy("mixed_float16")


    def penalty(critic, x):
        with tf.GradientTape() as inner:
            inner.watch(x)
            y = critic(x)
        return tf.reduce_mean(tf.square(inner.gradient(y, x)))


    def step(critic, optimizer, x):
        with tf.GradientTape() as outer:
            loss = tf.reduce_mean(critic(x)) + penalty(critic, x)
        optimizer.apply(outer.gradient(loss, critic.trainable_variables), critic.trainable_variables)
"""


def test_inner_gradient_in_a_module_helper_is_reported_under_float16_only():
    assert fired(PENALTY, "MP209") == [(11, "MP209")]
    assert fired(PENALTY.replace("mixed_float16", "mixed_bfloat16"), "MP209") == []
    assert fired(PENALTY.replace('tf.keras.mixed_precision.set_global_policy("mixed_float16")', ""), "MP209") == []
    assert fired(PENALTY.replace('"mixed_float16"', '"mixed_float16" if fp16 else "float32"'), "MP209") \
        == [(11, "MP209")]


def test_inner_gradient_that_feeds_no_outer_loss_is_silent():
    unused = PENALTY.replace(" + penalty(critic, x)", "\n        tf.print(penalty(critic, x))")
    assert fired(unused, "MP209") == []


def test_one_persistent_tape_differentiating_its_own_gradient_is_left_alone():
    # The rule's pattern is two tapes; one tape recording its own gradient is rare
    # enough that the rule does not guess at it.
    code = """
        import tensorflow as tf

        tf.keras.mixed_precision.set_global_policy("mixed_float16")


        def step(model, x):
            with tf.GradientTape(persistent=True) as tape:
                y = model(x)
                first = tape.gradient(y, x)
                loss = tf.reduce_sum(first)
            return tape.gradient(loss, model.trainable_variables)
    """
    assert fired(code, "MP209") == []


def test_inner_gradient_scaled_by_hand_is_silent():
    scaled = PENALTY.replace("y = critic(x)", "y = critic(x) * loss_scale").replace(
        "inner.gradient(y, x)", "inner.gradient(y, x) / loss_scale")
    assert fired(scaled, "MP209") == []
    # a helper function of the project named like the Keras 3 method (seen in a StyleGAN port)
    helper = PENALTY.replace("y = critic(x)", "y = scale_loss(optimizer, critic(x))").replace(
        "def penalty(critic, x):", "def penalty(critic, optimizer, x):").replace(
        "penalty(critic, x)", "penalty(critic, optimizer, x)")
    assert fired(helper, "MP209") == []


# -- MP101/MP102 through Lambda and custom layers ----------------------------------------
def test_custom_layer_outputs_need_a_class_of_this_file_and_a_readable_call():
    code = """
        import keras

        keras.mixed_precision.set_global_policy("mixed_float16")


        class Base(keras.layers.Layer):
            def __init__(self, scale, **kwargs):
                super().__init__(**kwargs)
                self.scale = scale


        class Scaled(Base):
            def call(self, x):
                y = x * self.scale
                return y


        class Opaque(Base):
            def call(self, x):
                return some_library.transform(x)


        inputs = keras.Input(shape=(8,))
        hidden = keras.layers.Dense(8)(inputs)
        scaled = keras.Model(inputs, Scaled(2.0)(hidden))
        opaque = keras.Model(inputs, Opaque(2.0)(hidden))
        unknown_input = keras.Model(inputs, Scaled(2.0)(some_library.features(inputs)))
        scaled.compile(loss="mse")
    """
    assert fired(code, "MP101", "MP102") == [(_line_of(code, "scaled = "), "MP102")]
    out = fix(code, "MP102", unsafe=False)
    assert "scaled = keras.Model(inputs, Scaled(2.0, dtype=\"float32\")(hidden))" in out


def test_custom_layer_without_kwargs_in_a_sequential_model_is_reported_without_a_fix():
    code = """
        import tensorflow as tf

        tf.keras.mixed_precision.set_global_policy("mixed_float16")


        class Shift(tf.keras.layers.Layer):
            def __init__(self, shift):
                super().__init__()
                self.shift = shift

            def call(self, x):
                return x + self.shift


        model = tf.keras.Sequential([tf.keras.layers.Dense(8), Shift(1.0)])
    """
    assert fired(code, "MP102", keras_version=2) == [(_line_of(code, "Shift(1.0)"), "MP102")]
    assert fix(code, "MP102", keras_version=2) == textwrap.dedent(code)


RUNNABLE_HEADS = '''\
import keras
import tensorflow as tf

keras.mixed_precision.set_global_policy("mixed_float16")


class TiedLogits(keras.layers.Layer):
    def __init__(self, embedding, **kwargs):
        super().__init__(**kwargs)
        self.embedding = embedding

    def call(self, x):
        return tf.matmul(x, self.embedding.embeddings, transpose_b=True)


class Regression(keras.layers.Layer):
    def build(self, input_shape):
        self.kernel = self.add_weight(shape=(input_shape[-1], 1))

    def call(self, x):
        return tf.matmul(x, self.kernel) * 0.5


def build():
    tokens = keras.Input(shape=(4,), dtype="int32")
    embedding = keras.layers.Embedding(64, 16)
    x = keras.layers.Dense(16, activation="relu")(embedding(tokens))
    logits = TiedLogits(embedding)(x)
    value = Regression()(x)
    probabilities = keras.layers.Lambda(lambda t: tf.nn.softmax(t))(logits)
    return keras.Model(tokens, [logits, value, probabilities])
'''


@pytest.mark.slow  # runs TensorFlow
def test_mp101_mp102_custom_layer_fixes_run_and_give_float32_outputs(keras3, tmp_path):
    tf, keras = keras3
    import numpy as np

    linter = make_linter(select=["MP101", "MP102"], keras_version=3)
    fixed = fix_text(RUNNABLE_HEADS, path="heads.py", unsafe=True, linter=linter)
    assert 'TiedLogits(embedding, dtype="float32")(x)' in fixed
    assert 'keras.layers.Activation("linear", dtype="float32")(Regression()(x))' in fixed
    assert 'keras.layers.Lambda(lambda t: tf.nn.softmax(t), dtype="float32")(logits)' in fixed
    path = tmp_path / "fixed_heads.py"
    path.write_text(fixed, encoding="utf-8")
    tokens = np.arange(8, dtype="int32").reshape(2, 4)

    before = _import_text(RUNNABLE_HEADS, tmp_path / "heads.py")["build"]()
    assert [o.dtype.name for o in before(tokens)] == ["float16"] * 3  # what the rules reported
    model = _import(path, "fixed_heads")["build"]()
    model.set_weights(before.get_weights())
    outputs = model(tokens)
    assert [o.dtype.name for o in outputs] == ["float32"] * 3
    for got, old in zip(outputs, before(tokens)):
        np.testing.assert_allclose(got.numpy(), old.numpy().astype("float32"), rtol=2e-2, atol=2e-2)


def _import_text(text: str, path: Path):
    path.write_text(text, encoding="utf-8")
    return _import(path, path.stem)
