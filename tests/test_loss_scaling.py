"""Loss scaling in custom loops (MP201-MP207): cases beyond the catalog examples."""

import textwrap

import pytest

from helpers import fired, fix, lint
from mplint.semantic.keras_version import detect, generation_from_versions, installed_generation, spelling_generation

RULES = ["MP201", "MP202", "MP203", "MP204", "MP205", "MP206", "MP207"]


def findings(code, **overrides):
    """``(line, rule)`` of the loss-scaling rules' findings."""
    return fired(code, *RULES, **overrides)


def fixed(code, **overrides):
    """``code`` with the loss-scaling fixes applied, unsafe ones too (checked to parse and settle)."""
    return fix(code, *RULES, **overrides)


# -- the Keras generation -------------------------------------------------------------
@pytest.mark.parametrize("keras,tensorflow,expected", [
    ("3.15.1", "2.21.0", 3),
    (None, "2.16.1", 3),
    ("2.15.0", "2.15.1", 2),
    (None, "2.13.0", 2),
    ("3.0.0", None, 3),
    (None, None, None),
    ("garbage", "1.15.0", None),
])
def test_generation_from_installed_versions(keras, tensorflow, expected):
    assert generation_from_versions(keras, tensorflow) == expected


def test_generation_priority_config_then_tf_keras_then_spelling_then_installed():
    keras2_text = "import tensorflow as tf\nx = opt.get_scaled_loss(loss)\n"
    assert detect(3, keras2_text, installed=2) == 3
    assert detect(None, "import tf_keras as keras\n", installed=3) == 2
    assert detect(None, "import tensorflow as tf, tf_keras\n", installed=3) == 2
    assert detect(None, "import my_tf_keras_utils\n", installed=3) == 3
    assert detect(None, "import os\nos.environ['TF_USE_LEGACY_KERAS'] = '1'\n", installed=3) == 2
    assert detect(None, keras2_text, installed=3) == 2  # code spelled for Keras 2 is Keras 2 code
    assert detect(None, "import tensorflow as tf\n", installed=3) == 3
    assert detect(None, keras2_text, use_installed=False) == 2
    assert detect(None, "s = opt.scale_loss(loss)\n", use_installed=False) == 3
    assert detect(None, "import tensorflow as tf\n", use_installed=False) is None


def test_mixed_spellings_say_nothing():
    assert spelling_generation("a = o.get_scaled_loss(l)\nb = o.scale_loss(l)\n") is None


def test_installed_generation_is_read_once_per_process():
    installed_generation.cache_clear()
    first = installed_generation()
    installed_generation()
    installed_generation()
    assert installed_generation.cache_info().misses == 1
    assert installed_generation() == first


# -- MP201 ---------------------------------------------------------------------------
LOOP_WITH_PARAM = """
    import tensorflow as tf

    tf.keras.mixed_precision.set_global_policy("mixed_float16")


    def train_step(model, optimizer, x, y):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(model(x) - y)
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
"""


def test_optimizer_that_cannot_be_followed_is_silent():
    assert findings(LOOP_WITH_PARAM) == []
    factory = LOOP_WITH_PARAM.replace("def train_step(model, optimizer, x, y):",
                                      "optimizer = make_optimizer()\n\n\n    def train_step(model, x, y):")
    assert findings(factory) == []
    tf1 = LOOP_WITH_PARAM.replace("def train_step(model, optimizer, x, y):",
                                  "optimizer = tf.compat.v1.train.AdamOptimizer()\n\n\n    def train_step(model, x, y):")
    assert findings(tf1) == []


def test_run_time_policy_choice_fires_with_a_note():
    code = """
        import tensorflow as tf
        import sys

        policy = "mixed_float16" if "--fp16" in sys.argv else "float32"
        tf.keras.mixed_precision.set_global_policy(policy)
        opt = tf.keras.optimizers.Adam()


        def step(model, x):
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(model(x))
            opt.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))
    """
    found = lint(code, "MP201")
    assert [f.line for f in found] == [13]
    assert "chosen at run time" in found[0].message


def test_a_mixed_policy_and_a_literal_float32_reset_say_so_not_run_time():
    code = """
        import tensorflow as tf

        tf.keras.mixed_precision.set_global_policy("mixed_float16")
        opt = tf.keras.optimizers.Adam()


        def step(model, x):
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(model(x))
            opt.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))


        tf.keras.mixed_precision.set_global_policy("float32")
    """
    [found] = lint(code, "MP201")
    assert "float32 is set too" in found.message and "run time" not in found.message


KERAS3_PLAIN = """
    from keras.optimizers import SGD
    from keras.mixed_precision import set_global_policy
    import tensorflow as tf

    set_global_policy("mixed_float16")
    opt = SGD(0.1)


    def step(model, x, y):
        tape = tf.GradientTape(persistent=True)
        with tape:
            loss = tf.reduce_mean(model(x) - y)
            grads = tape.gradient(loss, model.trainable_variables)
        opt.apply(grads, model.trainable_variables)
"""


def test_fix_imports_mixed_precision_and_scales_before_a_gradient_inside_the_tape():
    assert findings(KERAS3_PLAIN, keras_version=3) == [(15, "MP201")]
    out = fixed(KERAS3_PLAIN, keras_version=3)
    assert "from keras import mixed_precision" in out
    assert "opt = mixed_precision.LossScaleOptimizer(SGD(0.1))" in out
    assert ("        loss = tf.reduce_mean(model(x) - y)\n"
            "        scaled_loss = opt.scale_loss(loss)\n"
            "        grads = tape.gradient(scaled_loss, model.trainable_variables)\n") in out


def test_no_fix_when_keras3_loop_clips_or_the_loss_is_not_a_variable_of_the_tape():
    clipped = KERAS3_PLAIN.replace("        opt.apply(grads", "        grads = [tf.clip_by_norm(g, 1.0) for g in grads]\n        opt.apply(grads")
    assert findings(clipped, keras_version=3) == [(16, "MP201")]
    assert fixed(clipped, keras_version=3) == textwrap.dedent(clipped)
    inline = KERAS3_PLAIN.replace("tape.gradient(loss,", "tape.gradient(tf.reduce_mean(model(x)),")
    assert fixed(inline, keras_version=3) == textwrap.dedent(inline)


def test_applying_with_the_unwrapped_optimizer_is_reported_without_a_fix():
    code = """
        import tensorflow as tf

        tf.keras.mixed_precision.set_global_policy("mixed_float16")
        opt = tf.keras.optimizers.Adam()
        lso = tf.keras.mixed_precision.LossScaleOptimizer(opt)


        def step(model, x):
            with tf.GradientTape() as tape:
                loss = lso.scale_loss(tf.reduce_mean(model(x)))
            opt.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))
    """
    found = lint(code, "MP201", keras_version=3)
    assert [(f.line, f.fix) for f in found] == [(12, None)]
    assert "not with the LossScaleOptimizer that wraps it" in found[0].message


# -- MP202 / MP205 / MP204 / MP207 ------------------------------------------------------
TRAIN_STEP = """
    import keras
    import tensorflow as tf

    POLICY


    class Net(keras.Model):
        def train_step(self, data):
            x, y = data
            with tf.GradientTape() as tape:
                loss = self.compute_loss(y=y, y_pred=self(x, training=True))
            grads = tape.gradient(loss, self.trainable_variables)
            self.optimizer.apply(grads, self.trainable_variables)
            return {"loss": loss}
"""


@pytest.mark.parametrize("policy,expected", [
    ('keras.mixed_precision.set_global_policy("mixed_float16")', [(14, "MP202")]),
    # chosen at run time: it may be mixed_float16, and the message says so
    ('keras.mixed_precision.set_global_policy(POLICY_NAME)', [(14, "MP202")]),
    ('keras.mixed_precision.set_global_policy("mixed_bfloat16")', []),
    # the program picks float16 where it finds no TPU: wrapped there (keras_cv_attention_models)
    ('keras.mixed_precision.set_global_policy("mixed_bfloat16" if TPU else "mixed_float16")', [(14, "MP202")]),
    ('keras.mixed_precision.set_global_policy("float32" if CPU else "mixed_float16")', [(14, "MP202")]),
    ('keras.mixed_precision.set_global_policy("mixed_float16")\nNet().compile(optimizer="adam", auto_scale_loss=False)', []),
])
def test_compiled_optimizer_counts_as_wrapped_under_a_float16_policy_certain_or_chosen(policy, expected):
    code = TRAIN_STEP.replace("POLICY", policy.replace("\n", "\n    "))
    assert findings(code, keras_version=3) == expected


def test_a_policy_chosen_at_run_time_is_named_in_the_message():
    code = TRAIN_STEP.replace("POLICY", "keras.mixed_precision.set_global_policy(args.policy)")
    (found,) = lint(code, "MP202", keras_version=3)
    assert "chosen at run time and may be mixed" in found.message


def test_rewrapping_a_name_is_reported_without_a_fix():
    code = """
        import keras

        opt = keras.optimizers.Adam()
        opt = keras.mixed_precision.LossScaleOptimizer(opt)
        opt = keras.mixed_precision.LossScaleOptimizer(opt)
    """
    found = lint(code, "MP205")
    assert [(f.line, f.fix) for f in found] == [(6, None)]


def test_graph_rewrite_with_a_gradient_tape():
    code = """
        import tensorflow as tf

        opt = tf.compat.v1.mixed_precision.enable_mixed_precision_graph_rewrite(
            tf.compat.v1.train.AdamOptimizer())


        def step(model, x):
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(model(x))
            grads = tape.gradient(loss, model.trainable_variables)
            opt.apply_gradients(zip(grads, model.trainable_variables))


        def input_gradients(model, x):
            with tf.GradientTape() as tape:
                tape.watch(x)
                y = model(x)
            return tape.gradient(y, x)
    """
    assert findings(code) == [(11, "MP204")]


_AMP_OR_HAND_SCALED = """
    import tensorflow as tf


    def create_optimizer(loss, tvars, amp=True):
        optimizer = tf.compat.v1.train.AdamOptimizer(1e-3)
        if amp:
            optimizer = tf.compat.v1.train.experimental.enable_mixed_precision_graph_rewrite(optimizer)
        {gradients}
        return optimizer.apply_gradients(zip(grads, tvars))
"""


def test_tf_gradients_only_where_the_same_flag_left_the_rewrite_off_is_silent():
    # IntelAI's BERT fp16 optimization.py: `if amp:` rewrite ... `if amp: compute_gradients else: tf.gradients`
    either = ("if amp:\n"
              "            grads = [g for g, _ in optimizer.compute_gradients(loss, tvars)]\n"
              "        else:\n"
              "            grads = tf.gradients(loss * 128.0, tvars)\n"
              "            grads = [g / 128.0 for g in grads]")
    assert findings(_AMP_OR_HAND_SCALED.format(gradients=either)) == []
    negated = ("if not amp:\n"
               "            grads = [g / 128.0 for g in tf.gradients(loss * 128.0, tvars)]\n"
               "        else:\n"
               "            grads = [g for g, _ in optimizer.compute_gradients(loss, tvars)]")
    assert findings(_AMP_OR_HAND_SCALED.format(gradients=negated)) == []
    # under the rewrite too: no loss scale reaches them
    assert findings(_AMP_OR_HAND_SCALED.format(gradients="grads = tf.gradients(loss, tvars)")) == [(9, "MP204")]


def test_graph_rewrite_with_a_tape_that_scales_with_the_returned_optimizer():
    """The rewrite wraps a Keras optimizer in a LossScaleOptimizer; a loop that scales
    and unscales with it gets the loss scale (tensorflow/models' NCF does this)."""
    code = """
        import tensorflow as tf
        import tf_keras

        opt = tf.compat.v1.train.experimental.enable_mixed_precision_graph_rewrite(
            tf_keras.optimizers.legacy.Adam())


        def step(model, x):
            with tf.GradientTape() as tape:
                loss = opt.get_scaled_loss(tf.reduce_mean(model(x)))
            grads = tape.gradient(loss, model.trainable_variables)
            grads = opt.get_unscaled_gradients(grads)
            opt.apply_gradients(zip(grads, model.trainable_variables))


        def step_unscaled(model, x):
            with tf.GradientTape() as tape:
                loss = opt.get_scaled_loss(tf.reduce_mean(model(x)))
            grads = tape.gradient(loss, model.trainable_variables)
            opt.apply_gradients(zip(grads, model.trainable_variables))
    """
    assert [f for f in findings(code) if f[1] == "MP204"] == [(20, "MP204")]


def test_keras3_minimize_is_reported_without_a_fix():
    code = """
        import keras
        import tensorflow as tf

        optimizer = keras.mixed_precision.LossScaleOptimizer(keras.optimizers.SGD())


        def train_step(model, x, y):
            with tf.GradientTape() as tape:
                loss = keras.ops.mean(model(x) - y)
            optimizer.minimize(loss, model.trainable_variables, tape=tape)
    """
    found = lint(code, *RULES, keras_version=3)
    assert [(f.line, f.rule, f.fix) for f in found] == [(11, "MP207", None)]


def test_keras2_rename_alone_is_unsafe_when_nothing_unscales():
    code = """
        import tf_keras as keras
        import tensorflow as tf

        opt = keras.mixed_precision.LossScaleOptimizer(keras.optimizers.Adam())


        def step(model, x):
            with tf.GradientTape() as tape:
                loss = opt.scale_loss(tf.reduce_mean(model(x)))
            grads = tape.gradient(loss, model.trainable_variables)
            opt.apply_gradients(zip(grads, model.trainable_variables))
    """
    found = lint(code, "MP207")
    assert [(f.line, f.fix) for f in found] == [(10, "unsafe")]
    # Safe fixes alone must not turn a crash into silently wrong training.
    assert fix(code, "MP207", unsafe=False) == textwrap.dedent(code)
    out = fixed(code)
    assert "opt.get_scaled_loss(" in out and "grads = opt.get_unscaled_gradients(grads)" in out


def test_version_portable_guards_are_silent():
    code = """
        import tensorflow as tf

        optimizer = tf.keras.mixed_precision.LossScaleOptimizer(tf.keras.optimizers.Adam())


        def train_step(model, x):
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(model(x))
                if hasattr(optimizer, "get_scaled_loss"):
                    scaled = optimizer.get_scaled_loss(loss)
                else:
                    scaled = optimizer.scale_loss(loss)
            grads = tape.gradient(scaled, model.trainable_variables)
            try:
                grads = optimizer.get_unscaled_gradients(grads)
            except AttributeError:
                pass
            optimizer.apply_gradients(zip(grads, model.trainable_variables))
    """
    assert findings(code, keras_version=3) == []


CAPABILITY_STEP = """
    import tensorflow as tf

    optimizer = tf.keras.mixed_precision.LossScaleOptimizer(tf.keras.optimizers.Adam())


    def train_step(model, x, mixed):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(model(x))
            if mixed:
                if TEST:
                    loss = optimizer.get_scaled_loss(loss)
                else:
                    loss = optimizer.scale_loss(loss)
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
"""


@pytest.mark.parametrize("test", [
    "'get_scaled_loss' in dir(optimizer)",
    'hasattr(optimizer, "get_scaled_loss")',
    'getattr(optimizer, "get_scaled_loss", None)',
    'not hasattr(optimizer, "scale_loss")',
    "'scale_loss' not in dir(optimizer)",
    'not (not hasattr(optimizer, "get_scaled_loss"))',
])
@pytest.mark.parametrize("generation", [2, 3])
def test_a_branch_a_capability_test_picks_is_no_missing_api(test, generation):
    # tf-keras-vis: each arm runs only with the optimizer that has the method it calls
    assert fired(CAPABILITY_STEP.replace("TEST", test), "MP207", keras_version=generation) == []


@pytest.mark.parametrize("test", [
    'hasattr(optimizer, "learning_rate")',  # an unrelated attribute
    'getattr(optimizer, "get_scaled_loss")',  # raises when missing: no test
    "'get_scaled_loss' in vars(optimizer)",
])
def test_a_test_that_does_not_decide_the_method_guards_nothing(test):
    code = CAPABILITY_STEP.replace("TEST", test)
    assert fired(code, "MP207", keras_version=2) == [(14, "MP207")]
    assert fired(code, "MP207", keras_version=3) == [(12, "MP207")]


def test_the_else_of_a_conjunction_leaves_the_capability_open():
    # the body of ``mixed and hasattr(...)`` has the Keras 2 API; its ``else`` may be either
    code = CAPABILITY_STEP.replace("TEST", 'mixed and hasattr(optimizer, "get_unscaled_gradients")')
    assert fired(code, "MP207", keras_version=3) == []
    assert fired(code, "MP207", keras_version=2) == [(14, "MP207")]
    # the body of ``hasattr(...) or mixed`` may run without the method; its ``else`` has none
    code = CAPABILITY_STEP.replace("TEST", 'hasattr(optimizer, "get_scaled_loss") or mixed')
    assert fired(code, "MP207", keras_version=3) == [(12, "MP207")]
    assert fired(code, "MP207", keras_version=2) == []


def test_conditional_scaling_on_one_branch_is_silent():
    code = """
        import tensorflow as tf


        class DistributedModel:
            def __init__(self, optimizer, mixed_precision):
                self.optimizer = optimizer
                self.mixed_precision = mixed_precision
                if mixed_precision:
                    self.optimizer = tf.keras.mixed_precision.LossScaleOptimizer(optimizer)

            @tf.function
            def step(self, model, x):
                def replica_step(x):
                    with tf.GradientTape() as tape:
                        loss = tf.reduce_mean(model(x))
                        if self.mixed_precision:
                            scaled_loss = self.optimizer.get_scaled_loss(loss)
                    if self.mixed_precision:
                        gradients = self.optimizer.get_unscaled_gradients(
                            tape.gradient(scaled_loss, model.trainable_variables))
                    else:
                        gradients = tape.gradient(loss, model.trainable_variables)
                    self.optimizer.apply_gradients(zip(gradients, model.trainable_variables))
                return replica_step(x)
    """
    assert findings(code, keras_version=2) == []


def test_scaling_through_a_project_helper_is_trusted():
    code = """
        import tensorflow as tf

        optimizer = tf.keras.mixed_precision.LossScaleOptimizer(tf.keras.optimizers.Adam())


        class helpers:
            def apply_loss_scale(loss):
                return optimizer.get_scaled_loss(loss)


        def train_step(model, x):
            with tf.GradientTape() as tape:
                scaled = helpers.apply_loss_scale(tf.reduce_mean(model(x)))
            grads = optimizer.get_unscaled_gradients(tape.gradient(scaled, model.trainable_variables))
            optimizer.apply_gradients(zip(grads, model.trainable_variables))
    """
    assert findings(code, keras_version=2) == []


def test_optimizer_passed_as_an_argument_is_followed_to_its_creation():
    code = LOOP_WITH_PARAM + """
    def main(model, dataset):
        opt = tf.keras.optimizers.Adam(1e-3)
        for x, y in dataset:
            train_step(model, opt, x, y)
    """
    assert findings(code, keras_version=3) == [(11, "MP201")]
    out = fixed(code, keras_version=3)
    assert "opt = tf.keras.mixed_precision.LossScaleOptimizer(tf.keras.optimizers.Adam(1e-3))" in out
    assert "scaled_loss = optimizer.scale_loss(loss)" in out
    # A second caller passing something unknown makes the parameter unknown: silent.
    other = code + """
    def other(model, optimizer, x, y):
        train_step(model, optimizer=optimizer, x=x, y=y)
    """
    assert findings(other, keras_version=3) == []


def test_dropping_get_unscaled_gradients_is_safe_only_straight_into_apply():
    code = """
        import tensorflow as tf

        optimizer = tf.keras.mixed_precision.LossScaleOptimizer(tf.keras.optimizers.Adam())


        def train_step(model, x):
            with tf.GradientTape() as tape:
                scaled_loss = optimizer.get_scaled_loss(tf.reduce_mean(model(x)))
            grads = optimizer.get_unscaled_gradients(tape.gradient(scaled_loss, model.trainable_variables))
            CLIP
            optimizer.apply_gradients(zip(grads, model.trainable_variables))
    """
    straight = code.replace("CLIP", "pass")
    clipped = code.replace("CLIP", "grads, _ = tf.clip_by_global_norm(grads, 1.0)")
    for text, safety in ((straight, "safe"), (clipped, "unsafe")):
        found = lint(text, "MP207", keras_version=3)
        assert [(f.line, f.fix) for f in found] == [(9, "safe"), (10, safety)]


def test_keras3_loss_scale_factor_is_loss_scaling_without_a_wrapper():
    code = """
        import keras
        import tensorflow as tf

        keras.mixed_precision.set_global_policy("mixed_float16")
        optimizer = keras.optimizers.SGD(0.1, loss_scale_factor=1024.0)


        def train_step(model, x):
            with tf.GradientTape() as tape:
                loss = keras.ops.mean(model(x))
                SCALE
            optimizer.apply(tape.gradient(loss, model.trainable_variables), model.trainable_variables)
    """
    assert findings(code.replace("SCALE", "loss = optimizer.scale_loss(loss)"), keras_version=3) == []
    assert findings(code.replace("SCALE", "pass"), keras_version=3) == [(13, "MP202")]


def test_keras3_fix_drops_the_unscaling_line_or_the_if_that_only_holds_it():
    code = textwrap.dedent("""\
        import tensorflow as tf


        def step(model, optimizer, x, use_amp):
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(model(x))
                if use_amp:
                    loss = optimizer.get_scaled_loss(loss)
            grads = tape.gradient(loss, model.trainable_variables)
            if use_amp:
                grads = optimizer.get_unscaled_gradients(grads)
            grads = optimizer.get_unscaled_gradients(grads)
            optimizer.apply_gradients(zip(grads, model.trainable_variables))
    """)
    out = fix(code, "MP207", unsafe=False, keras_version=3)  # checked to settle
    assert "get_unscaled_gradients" not in out and "grads = grads" not in out
    assert out.count("if use_amp:") == 1  # the one left still scales the loss
    # a comment on it keeps the statement: the unscaling becomes the bare gradients
    commented = code.replace("    if use_amp:\n        grads", "    # unscale\n    if use_amp:\n        grads")
    kept = fix(commented, "MP207", unsafe=False, keras_version=3)
    assert "# unscale\n    if use_amp:\n        grads = grads\n" in kept


# -- an optimizer wrapped on some paths only (mindee/doctr's --amp) ---------------------
CONDITIONAL = """\
import tensorflow as tf
from tensorflow.keras import mixed_precision


def train(model, data, amp):
    if amp:
        mixed_precision.set_global_policy("mixed_float16")
    optimizer = tf.keras.optimizers.Adam()
    if amp:
        optimizer = mixed_precision.LossScaleOptimizer(optimizer)
    for x, y in data:
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(model(x) - y)  # the loss
        grads = tape.gradient(loss, model.trainable_variables)
        if amp:
            grads = optimizer.get_unscaled_gradients(grads)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
"""


def test_a_conditional_wrapper_is_scaled_under_the_loops_own_guard():
    """Scaling unconditionally would break the run without --amp (Adam has no
    get_scaled_loss); the loop's guard of get_unscaled_gradients says when it may."""
    found = lint(CONDITIONAL, "MP202", keras_version=2)
    assert [(f.line, f.rule) for f in found] == [(17, "MP202")]
    assert "on some paths" in found[0].message and "get_unscaled_gradients() then divides" in found[0].message
    out = fixed(CONDITIONAL, keras_version=2)
    assert ("            loss = tf.reduce_mean(model(x) - y)  # the loss\n"
            "            scaled_loss = optimizer.get_scaled_loss(loss) if amp else loss\n"
            "        grads = tape.gradient(scaled_loss, model.trainable_variables)\n") in out
    assert findings(out, keras_version=2) == []


def test_a_conditional_wrapper_without_a_guard_to_reuse_gets_no_fix():
    unguarded = CONDITIONAL.replace("        if amp:\n            grads = optimizer.get_unscaled_gradients(grads)\n", "")
    found = lint(unguarded, "MP202", keras_version=2)
    assert [f.rule for f in found] == ["MP202"] and found[0].fix is None
    assert "underflow to zero" in found[0].message
    assert fixed(unguarded, keras_version=2) == unguarded


def test_gradients_scaled_and_unscaled_by_another_optimizers_wrapper_need_no_wrapper():
    """NVIDIA HugeCTR's DLRM: the embedding optimizer's LossScaleOptimizer scales the
    loss and unscales both gradient lists; the plain dense optimizer applies its share."""
    code = """\
import tensorflow as tf
from tensorflow.keras import mixed_precision

mixed_precision.set_global_policy("mixed_float16")
sparse = mixed_precision.LossScaleOptimizer(tf.keras.optimizers.SGD(0.1))
dense = tf.keras.optimizers.SGD(0.1)


def step(model, x, y, sparse_vars, dense_vars):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(model(x) - y)
        loss = sparse.get_scaled_loss(loss)
    sparse_grads, dense_grads = tape.gradient(loss, [sparse_vars, dense_vars])
    sparse_grads = sparse.get_unscaled_gradients(sparse_grads)
    dense_grads = sparse.get_unscaled_gradients(dense_grads)
    sparse.apply_gradients(zip(sparse_grads, sparse_vars))
    dense.apply_gradients(zip(dense_grads, dense_vars))
"""
    assert findings(code, keras_version=2) == []
    unscaled = code.replace("        loss = sparse.get_scaled_loss(loss)\n", "").replace(
        "    dense_grads = sparse.get_unscaled_gradients(dense_grads)\n", "")
    assert ("    dense.apply_gradients(zip(dense_grads, dense_vars))", "MP201") in [
        (unscaled.splitlines()[line - 1], rule) for line, rule in findings(unscaled, keras_version=2)]


def test_an_attribute_wrapped_in_the_other_arm_does_not_reach_the_rewrite():
    """mlcommons' ResNet runnable: LossScaleOptimizer under `if fp16`, the graph rewrite
    under `elif graph_rewrite`; one run does one of them."""
    code = """\
import tensorflow as tf


class Runnable:
    def __init__(self, flags, dtype):
        self.optimizer = tf.keras.optimizers.SGD(0.1)
        if dtype == tf.float16:
            self.optimizer = tf.keras.mixed_precision.LossScaleOptimizer(self.optimizer)
        elif flags.fp16_implementation == "graph_rewrite":
            self.optimizer = tf.train.experimental.enable_mixed_precision_graph_rewrite(self.optimizer)
"""
    assert fired(code, "MP205", keras_version=2) == []
    both = code.replace("        elif flags.fp16_implementation", "        if flags.fp16_implementation")
    assert fired(both, "MP205", keras_version=2) == [(10, "MP205")]


def test_wrapping_and_the_rewrite_under_two_parameters_of_their_own_are_the_callers_matter():
    """mlcommons' performance.configure_optimizer(opt, use_float16, use_graph_rewrite):
    that a caller sets both is not this function's finding; under one flag it is."""
    code = """\
import tensorflow as tf


def configure_optimizer(optimizer, use_float16=False, use_graph_rewrite=False):
    if use_float16:
        optimizer = tf.keras.mixed_precision.LossScaleOptimizer(optimizer)
    if use_graph_rewrite:
        optimizer = tf.train.experimental.enable_mixed_precision_graph_rewrite(optimizer)
    return optimizer
"""
    assert fired(code, "MP205", keras_version=2) == []
    one = code.replace("    if use_graph_rewrite:\n        optimizer", "    if use_float16:\n        optimizer")
    assert fired(one, "MP205", keras_version=2) == [(8, "MP205")]
    flags = code.replace("use_float16=False, use_graph_rewrite=False", "args").replace(
        "if use_float16", "if args.fp16").replace("if use_graph_rewrite", "if args.rewrite")
    assert fired(flags, "MP205", keras_version=2) == [(8, "MP205")]  # both flags may be given


def test_a_float32_baseline_trained_before_the_script_sets_the_policy_is_not_mixed():
    # A script (or notebook) trains a float32 baseline, then turns mixed precision on
    # for a second model: the first loop ran before the policy existed.
    baseline = ("import keras\nimport tensorflow as tf\n"
                "model = keras.Sequential([keras.layers.Dense(64), keras.layers.Dense(1)])\n"
                "opt = keras.optimizers.Adam()\n"
                "for x, y in data:\n"
                "    with tf.GradientTape() as tape:\n"
                "        loss = keras.ops.mean((model(x) - y) ** 2)\n"
                "    opt.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))\n")
    policy = "keras.mixed_precision.set_global_policy('mixed_float16')\n"
    assert fired(baseline + policy, "MP201") == []
    assert fired(baseline.replace("import tensorflow as tf\n", "import tensorflow as tf\n" + policy), "MP201") == [
        (9, "MP201")]


HELPER_SCALES = ("import keras\nimport tensorflow as tf\nkeras.config.set_dtype_policy('mixed_float16')\n"
                 "model = keras.Sequential([keras.layers.Dense(64), keras.layers.Dense(1, dtype='float32')])\n"
                 "opt = keras.mixed_precision.LossScaleOptimizer(keras.optimizers.Adam())\n"
                 "def compute_loss(x, y):\n"
                 "    loss = keras.ops.mean((model(x) - y) ** 2)\n"
                 "    return RETURNED\n"
                 "def step(x, y):\n"
                 "    with tf.GradientTape() as tape:\n"
                 "        scaled, loss = compute_loss(x, y)\n"
                 "    grads = tape.gradient(scaled, model.trainable_variables)\n"
                 "    opt.apply(grads, model.trainable_variables)\n")


def test_a_loss_scaled_in_a_helper_of_the_file_is_scaled():
    # the helper returns the scaled loss: the step differentiates a scaled value
    assert fired(HELPER_SCALES.replace("RETURNED", "opt.scale_loss(loss), loss"), "MP202") == []
    # a helper that scales nothing: the step's loss is not scaled
    assert fired(HELPER_SCALES.replace("RETURNED", "loss, loss"), "MP202") == [(13, "MP202")]
    method = ("import keras\nimport tensorflow as tf\nkeras.config.set_dtype_policy('mixed_float16')\n"
              "class Trainer:\n"
              "    def __init__(self, model):\n"
              "        self.model = model\n"
              "        self.opt = keras.mixed_precision.LossScaleOptimizer(keras.optimizers.Adam())\n"
              "    def _loss(self, x, y):\n"
              "        return SCALED\n"
              "    def step(self, x, y):\n"
              "        with tf.GradientTape() as tape:\n"
              "            scaled = self._loss(x, y)\n"
              "        grads = tape.gradient(scaled, self.model.trainable_variables)\n"
              "        self.opt.apply(grads, self.model.trainable_variables)\n")
    assert fired(method.replace("SCALED", "self.opt.scale_loss(keras.ops.mean(self.model(x) - y))"), "MP202") == []
    assert fired(method.replace("SCALED", "keras.ops.mean(self.model(x) - y)"), "MP202") == [(14, "MP202")]


def test_gradients_unscaled_in_a_helper_of_the_file_are_unscaled():
    code = ("import tensorflow as tf\nimport tf_keras as keras\n"
            "keras.mixed_precision.set_global_policy('mixed_float16')\n"
            "model = keras.Sequential([keras.layers.Dense(64), keras.layers.Dense(1, dtype='float32')])\n"
            "opt = keras.mixed_precision.LossScaleOptimizer(keras.optimizers.Adam())\n"
            "def postprocess(grads):\n"
            "    grads = UNSCALED\n"
            "    return [tf.clip_by_norm(g, 1.0) for g in grads]\n"
            "def step(x, y):\n"
            "    with tf.GradientTape() as tape:\n"
            "        scaled = opt.get_scaled_loss(tf.reduce_mean(tf.square(model(x) - y)))\n"
            "    grads = postprocess(tape.gradient(scaled, model.trainable_variables))\n"
            "    opt.apply_gradients(zip(grads, model.trainable_variables))\n")
    assert fired(code.replace("UNSCALED", "opt.get_unscaled_gradients(grads)"), "MP203", "MP208") == []
    assert fired(code.replace("UNSCALED", "list(grads)"), "MP203", "MP208") != []


HELPER_GRADIENTS = """
import tensorflow as tf

tf.keras.mixed_precision.set_global_policy("mixed_float16")


class Trainer:
    def __init__(self, model):
        self.model = model
        self.optimizer = tf.keras.mixed_precision.LossScaleOptimizer(tf.keras.optimizers.Adam())

    def _compute_grads(self, tape, loss):
        return GRADIENT

    @tf.function
    def train_step(self, x):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(self.model(x, training=True))
            scaled = self.optimizer.get_scaled_loss(loss)
        grads = self._compute_grads(tape, scaled)
        self.optimizer.apply_gradients(zip(grads, self.model.trainable_variables))
        return loss
"""
PLAIN_GRADIENT = "tape.gradient(loss, self.model.trainable_variables)"


def test_gradients_a_helper_method_takes_from_the_loops_tape_are_followed():
    code = HELPER_GRADIENTS.replace("GRADIENT", PLAIN_GRADIENT)
    assert findings(code, keras_version=2) == [(21, "MP203")]
    repaired = fixed(code, keras_version=2)
    assert "get_unscaled_gradients" in repaired and findings(repaired, keras_version=2) == []


@pytest.mark.parametrize("change", [
    # the helper unscales what it returns
    ("GRADIENT", f"self.optimizer.get_unscaled_gradients({PLAIN_GRADIENT})"),
    # a second call hands the helper another tape: which one it differentiates is unknown
    ("        return loss\n", "        return loss\n\n    def other(self, t, l):\n        return self._compute_grads(t, l)\n"),
    # a public helper other modules may call with their own tape
    ("_compute_grads", "compute_grads"),
])
def test_a_helper_whose_gradients_cannot_be_followed_to_the_tape_is_silent(change):
    code = HELPER_GRADIENTS.replace(*change).replace("GRADIENT", PLAIN_GRADIENT)
    assert findings(code, keras_version=2) == []


def test_mp205_an_except_branch_wraps_what_the_failed_try_never_bound():
    # larq's optimizers_test.py: the handler runs only when the try's wrapping raised,
    # so its optimizer is the plain one; a try whose wrapping is not its last statement
    # may fail after binding, and the handler's wrap is a second one
    code = textwrap.dedent("""\
        import tensorflow as tf


        def make(opt):
            try:
                opt = tf.keras.mixed_precision.LossScaleOptimizer(opt)
            except AttributeError:
                opt = tf.keras.mixed_precision.experimental.LossScaleOptimizer(opt, "dynamic")
            return opt


        def make_twice(opt):
            try:
                opt = tf.keras.mixed_precision.LossScaleOptimizer(opt)
                print("wrapped")
            except AttributeError:
                opt = tf.keras.mixed_precision.LossScaleOptimizer(opt)
            return opt
        """)
    assert fired(code, "MP205", keras_version=2) == [(17, "MP205")]
