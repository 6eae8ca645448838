"""MP202 where the optimizer is a LossScaleOptimizer on some paths only (a --amp flag).

Found on mindee/doctr: ``if args.amp: optimizer = LossScaleOptimizer(optimizer)``
and a loop that unscales under ``if amp:`` but never scales the loss. Scaling the
loss unconditionally would break the run without --amp (a plain Keras 2 optimizer
has no get_scaled_loss), so the fix scales under the loop's own guard, or is left out.
"""

import shutil
import textwrap

from helpers import FIXTURES, fix, lint, run_cli

RULES = ["MP201", "MP202", "MP203", "MP204", "MP205", "MP206", "MP207"]
FIXTURE = FIXTURES / "mp202_conditional" / "amp_flag_loop.py"

DIVIDES = ("get_unscaled_gradients() then divides the never-scaled gradients by the loss scale "
           "(32768 at first), so the model barely trains")


def _edit(code, old, new):
    """``code`` with ``old`` replaced, which must be there."""
    assert old in code
    return code.replace(old, new)


def fixed(code, **overrides):
    """``code`` with the loss-scaling fixes applied, unsafe ones too (checked to parse and settle)."""
    return fix(code, *RULES, **overrides)


def _fixes_to(code, version, old, new):
    """The fix turns ``old`` into ``new`` and nothing else, and leaves no finding."""
    out = fixed(code, keras_version=version)
    assert out == _edit(code, old, new)
    assert lint(out, *RULES, keras_version=version) == []


# A loop and the optimizer it is given (wrapped only under --amp), one function each.
SPLIT = textwrap.dedent("""\
    import tensorflow as tf
    from tensorflow.keras import mixed_precision


    def fit(model, batches, optimizer, amp=False):
        for x, y in batches:
            with tf.GradientTape() as tape:
                # forward
                out = model(x, y, training=True)["loss"]
            grads = tape.gradient(out, model.trainable_weights)
            if amp:
                grads = optimizer.get_unscaled_gradients(grads)  # unscale
            optimizer.apply_gradients(zip(grads, model.trainable_weights))


    def main(args, model):
        optimizer = tf.keras.optimizers.Adam()
        if args.amp:
            optimizer = mixed_precision.LossScaleOptimizer(optimizer)
        fit(model, [], optimizer, amp=args.amp)
""")


def test_the_split_loop_is_reported_with_the_division_by_the_loss_scale():
    found = lint(SPLIT, "MP202", keras_version=2)
    assert [(f.line, f.rule) for f in found] == [(13, "MP202")]
    assert found[0].message == (
        "`optimizer` is a LossScaleOptimizer on some paths, but the loss differentiated here is not "
        f"scaled: {DIVIDES}; scale the loss inside the tape")
    assert found[0].fix is not None


def test_the_split_loop_is_scaled_under_the_loops_own_guard():
    _fixes_to(SPLIT, 2,
              "        grads = tape.gradient(out, model.trainable_weights)\n",
              "            scaled_out = optimizer.get_scaled_loss(out) if amp else out\n"
              "        grads = tape.gradient(scaled_out, model.trainable_weights)\n")


def test_an_attribute_guard_is_reused_as_written():
    code = textwrap.dedent("""\
        import tensorflow as tf
        from tensorflow.keras import mixed_precision


        def train(args, model, batches):
            optimizer = tf.keras.optimizers.SGD()
            if args.amp:
                optimizer = mixed_precision.LossScaleOptimizer(optimizer)
            for x, y in batches:
                with tf.GradientTape() as tape:
                    loss = tf.reduce_mean(model(x) - y)
                    scaled_loss = loss  # taken: the fix picks another name
                grads = tape.gradient(loss, model.trainable_variables)
                if args.amp:
                    grads = optimizer.get_unscaled_gradients(grads)
                optimizer.apply_gradients(zip(grads, model.trainable_variables))
    """)
    out = fixed(code, keras_version=2)
    assert ("            scaled_loss = loss  # taken: the fix picks another name\n"
            "            scaled_loss_ = optimizer.get_scaled_loss(loss) if args.amp else loss\n"
            "        grads = tape.gradient(scaled_loss_, model.trainable_variables)\n") in out
    assert lint(out, *RULES, keras_version=2) == []


def test_the_fixture_through_the_command_line(tmp_path):
    """``mplint fix --unsafe-fixes`` scales under ``amp``, keeps the comments, and a
    second run changes nothing; ``mplint check`` then finds nothing."""
    target = tmp_path / "train.py"
    shutil.copy(FIXTURE, target)
    (tmp_path / "pyproject.toml").write_text("[tool.mplint]\nkeras-version = 2\n")
    before = target.read_text()
    first = run_cli("fix", "--unsafe-fixes", "--no-cache", str(target), cwd=tmp_path)
    assert first.returncode == 0, first.stdout + first.stderr
    after = target.read_text()
    assert after == before.replace(
        "        grads = tape.gradient(loss, model.trainable_weights)\n"
        "        if amp:\n"
        "            grads = optimizer.get_unscaled_gradients(grads)  # back to true size\n",
        "            scaled_loss = optimizer.get_scaled_loss(loss) if amp else loss\n"
        "        grads = tape.gradient(scaled_loss, model.trainable_weights)\n"
        "        if amp:\n"
        "            grads = optimizer.get_unscaled_gradients(grads)  # back to true size\n")
    assert "            # forward pass\n" in after
    run_cli("fix", "--unsafe-fixes", "--no-cache", str(target), cwd=tmp_path)
    assert target.read_text() == after
    check = run_cli("check", "--no-cache", str(target), cwd=tmp_path)
    assert check.returncode == 0 and "MP202" not in check.stdout, check.stdout


# -- no guard to reuse: reported, not fixed ----------------------------------------------
def _no_fix(code, **overrides):
    found = lint(code, "MP202", **overrides)
    assert [f.rule for f in found] == ["MP202"] and found[0].fix is None
    assert fixed(code, **overrides) == code
    return found[0]


def test_a_negated_guard_gets_no_fix():
    code = _edit(SPLIT, "        if amp:\n            grads = optimizer.get_unscaled_gradients(grads)  # unscale\n",
                         "        if not amp:\n            pass\n        else:\n"
                         "            grads = optimizer.get_unscaled_gradients(grads)  # unscale\n")
    assert DIVIDES in _no_fix(code, keras_version=2).message


def test_a_guard_that_is_a_call_gets_no_fix():
    code = _edit(SPLIT, "        if amp:\n", "        if amp_enabled():\n")
    assert DIVIDES in _no_fix(code, keras_version=2).message


def test_an_unguarded_unscaling_on_some_paths_gets_no_fix():
    """The unscaling itself already fails without --amp: no condition to copy."""
    code = _edit(SPLIT, "        if amp:\n            grads = optimizer.get_unscaled_gradients(grads)  # unscale\n",
                         "        grads = optimizer.get_unscaled_gradients(grads)  # unscale\n")
    assert DIVIDES in _no_fix(code, keras_version=2).message


def test_a_loss_computed_outside_a_name_gets_no_fix():
    code = _edit(_edit(SPLIT, '            out = model(x, y, training=True)["loss"]\n',
                       "            out = model(x, y, training=True)\n"),
                 "tape.gradient(out, ", 'tape.gradient(out["loss"], ')
    assert DIVIDES in _no_fix(code, keras_version=2).message


# -- Keras 3: every optimizer has scale_loss() ----------------------------------------
KERAS3 = textwrap.dedent("""\
    import keras
    import tensorflow as tf


    def train(model, batches, amp):
        optimizer = keras.optimizers.Adam()
        if amp:
            optimizer = keras.mixed_precision.LossScaleOptimizer(optimizer)
        for x, y in batches:
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(model(x) - y)
            grads = tape.gradient(loss, model.trainable_variables)
            optimizer.apply(grads, model.trainable_variables)
""")


def test_keras3_scales_unconditionally_when_every_other_path_is_a_keras_optimizer():
    """A plain Keras 3 optimizer's scale_loss() returns the loss as it is."""
    found = lint(KERAS3, "MP202", keras_version=3)
    assert [(f.line, f.rule) for f in found] == [(13, "MP202")] and "on some paths" in found[0].message
    _fixes_to(KERAS3, 3,
              "        grads = tape.gradient(loss, model.trainable_variables)\n",
              "            scaled_loss = optimizer.scale_loss(loss)\n"
              "        grads = tape.gradient(scaled_loss, model.trainable_variables)\n")


def test_keras3_with_an_unknown_plain_path_gets_no_fix():
    code = _edit(_edit(KERAS3, "import tensorflow as tf\n", "import tensorflow as tf\nfrom my_project import make_optimizer\n"),
                 "optimizer = keras.optimizers.Adam()", "optimizer = make_optimizer()")
    assert "on some paths" in _no_fix(code, keras_version=3).message


# -- every path, and the silent cases ---------------------------------------------------
def test_a_loss_scale_optimizer_on_every_path_keeps_the_unconditional_fix():
    code = _edit(SPLIT, "    if args.amp:\n        optimizer = mixed_precision.LossScaleOptimizer(optimizer)\n",
                         "    optimizer = mixed_precision.LossScaleOptimizer(optimizer)\n")
    found = lint(code, "MP202", keras_version=2)
    assert [f.rule for f in found] == ["MP202"]
    assert found[0].message.startswith("`optimizer` is a LossScaleOptimizer, but") and DIVIDES in found[0].message
    out = fixed(code, keras_version=2)
    assert ("            scaled_out = optimizer.get_scaled_loss(out)\n"
            "        grads = tape.gradient(scaled_out, model.trainable_weights)\n") in out


def test_a_manual_division_of_never_scaled_gradients_says_so():
    code = textwrap.dedent("""\
        import tensorflow as tf
        from tensorflow.keras import mixed_precision

        optimizer = mixed_precision.LossScaleOptimizer(tf.keras.optimizers.Adam())


        def step(model, x, y):
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(model(x) - y)
            grads = tape.gradient(loss, model.trainable_variables)
            grads = [g / optimizer.loss_scale for g in grads]
            optimizer.apply_gradients(zip(grads, model.trainable_variables))
    """)
    (found,) = lint(code, "MP202", keras_version=2)
    assert "the never-scaled gradients are then divided by the loss scale (32768 at first)" in found.message
    out = fixed(code, keras_version=2)
    assert "        scaled_loss = optimizer.get_scaled_loss(loss)\n" in out
    assert out.count("get_unscaled_gradients") == 0  # the division already unscales


def test_the_loop_scaled_under_its_guard_is_silent_and_unchanged():
    code = _edit(SPLIT, 
        "        grads = tape.gradient(out, model.trainable_weights)\n",
        "            scaled = optimizer.get_scaled_loss(out) if amp else out\n"
        "        grads = tape.gradient(scaled, model.trainable_weights)\n")
    assert lint(code, *RULES, keras_version=2) == []
    assert fixed(code, keras_version=2) == code


def test_a_plain_optimizer_on_every_path_is_silent():
    code = _edit(SPLIT, "    if args.amp:\n        optimizer = mixed_precision.LossScaleOptimizer(optimizer)\n", "")
    assert lint(code, "MP202", keras_version=2) == []


# The unscaled step is picked into an attribute only where the wrapping condition is false
# (Otatsu0319/StarGAN-VC2-tf): a compound test, and its ``else``.
PICKED = textwrap.dedent("""\
    import tensorflow as tf


    class Trainer:
        def __init__(self, args, model):
            self.args = args
            self.model = model
            self.optimizer = tf.keras.optimizers.Adam()
            if args.mixed_precision and not args.use_tpu:
                self.optimizer = tf.keras.mixed_precision.LossScaleOptimizer(self.optimizer)
                self.step_func = tf.function(self.train_step_mp)
            else:
                self.step_func = tf.function(self.train_step)

        def train_step_mp(self, x):
            def step_fn(x):
                with tf.GradientTape() as tape:
                    loss = self.optimizer.get_scaled_loss(tf.reduce_mean(self.model(x)))
                grads = self.optimizer.get_unscaled_gradients(tape.gradient(loss, self.model.trainable_variables))
                self.optimizer.apply_gradients(zip(grads, self.model.trainable_variables))
            step_fn(x)

        def train_step(self, x):
            def step_fn(x):
                with tf.GradientTape() as tape:
                    loss = tf.reduce_mean(self.model(x))
                grads = tape.gradient(loss, self.model.trainable_variables)
                self.optimizer.apply_gradients(zip(grads, self.model.trainable_variables))
            step_fn(x)

        def fit(self, batches):
            for x in batches:
                if not (self.args.mixed_precision and not self.args.use_tpu):
                    self.step_func = tf.function(self.train_step)
                self.step_func(x)
""")


def _mp202(code):
    return [f.line for f in lint(code, "MP201", "MP202", keras_version=2)]


def test_a_step_picked_only_under_the_negated_wrapping_condition_is_never_wrapped():
    assert _mp202(PICKED) == []


def test_a_step_picked_on_some_other_path_is_judged_with_every_path():
    # read once outside the condition: it may run with the wrapped optimizer
    also = _edit(PICKED, "            self.step_func(x)\n", "            self.step_func(x)\n            self.train_step(x)\n")
    assert _mp202(also) == [28]
    # the other arm picks it under a different condition: nothing excludes the wrapping
    other = _edit(PICKED, "if not (self.args.mixed_precision and not self.args.use_tpu):",
                  "if not (self.args.mixed_precision and self.args.use_tpu):")
    assert _mp202(other) == [28]
    # a Keras model's train_step is also run by fit(): its uses in the file are not all of them
    model = _edit(PICKED, "class Trainer:", "class Trainer(tf.keras.Model):")
    assert _mp202(model) == [28]
    # a condition that cannot be followed constrains nothing
    call = _edit(_edit(PICKED, "if args.mixed_precision and not args.use_tpu:",
                       "if args.mixed_precision and not use_tpu():"),
                 "if not (self.args.mixed_precision and not self.args.use_tpu):",
                 "if not (self.args.mixed_precision and not use_tpu()):")
    assert _mp202(call) == [28]
