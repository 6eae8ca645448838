"""Conditions shared by branches (flags, config objects, constructor parameters kept on
``self``) and ``isinstance`` tests decided by the optimizer's value, for the
loss-scaling rules. A condition compares by what it means, not by how it is spelled."""

import textwrap

import libcst as cst

from helpers import fired, fix, lint
from mplint.core.walker import Walker
from mplint.semantic.conditions import FLAGS, Conditions
from mplint.semantic.names import NameResolver, collect_module_imports
from mplint.semantic.scopes import ScopeTracker

RULES = ["MP201", "MP202", "MP203", "MP205", "MP206"]


def findings(code, **overrides):
    overrides.setdefault("keras_version", 2)
    return fired(code, *RULES, **overrides)


def _line(code, text, nth=0):
    return [i for i, line in enumerate(code.splitlines(), 1) if text in line][nth]


# A trainer that wraps only when told to, and a step with a branch for each case.
TRAINER = textwrap.dedent("""\
    import tensorflow as tf
    from tensorflow.keras import mixed_precision


    class Trainer:
        def __init__(self, model, optimizer, loss_scale=False):
            self.model = model
            self.use_amp = loss_scale
            if loss_scale:
                optimizer = mixed_precision.LossScaleOptimizer(optimizer)
            self.optimizer = optimizer

        def train_step(self, x, y):
            variables = self.model.trainable_variables
            if self.use_amp:
                with tf.GradientTape() as tape:
                    loss = self.model(x, y)
                    scaled = self.optimizer.get_scaled_loss(loss)
                grads = self.optimizer.get_unscaled_gradients(tape.gradient(scaled, variables))
                self.optimizer.apply_gradients(zip(grads, variables))
            else:
                with tf.GradientTape() as tape:
                    loss = self.model(x, y)
                grads = tape.gradient(loss, variables)
                self.optimizer.apply_gradients(zip(grads, variables))  # the plain branch

""")

ARGPARSE_MAIN = textwrap.dedent("""\

    def main():
        import argparse
        parser = argparse.ArgumentParser()
        parser.add_argument("--amp", action="store_true")
        args = parser.parse_args()
        POLICY
        model = tf.keras.Sequential([tf.keras.layers.Dense(8, dtype="float32")])
        Trainer(model, tf.keras.optimizers.Adam(), loss_scale=args.amp).train_step(1, 2)


    if __name__ == "__main__":
        main()
""")


def _program(policy, main=ARGPARSE_MAIN):
    return TRAINER + main.replace("POLICY", policy)


FLAG_POLICY = 'if args.amp:\n        mixed_precision.set_global_policy("mixed_float16")'
ALWAYS_MIXED = 'mixed_precision.set_global_policy("mixed_float16")'


def test_the_plain_branch_under_the_flag_that_wraps_and_sets_the_policy_is_silent():
    # before: MP202 "a LossScaleOptimizer on some paths" on the plain branch
    assert findings(_program(FLAG_POLICY)) == []


def test_the_plain_branch_under_a_mixed_policy_set_on_every_run_is_mp201():
    code = _program(ALWAYS_MIXED)
    [found] = lint(code, *RULES, keras_version=2)
    assert (found.line, found.rule) == (_line(code, "# the plain branch"), "MP201")
    assert "on a branch where it is not wrapped" in found.message
    assert found.fix is None  # wrapping the creation would wrap twice under --amp


def test_a_policy_under_another_flag_may_be_mixed_on_the_plain_branch():
    code = _program(FLAG_POLICY.replace("args.amp", "args.fp16")).replace(
        'parser.add_argument("--amp"', 'parser.add_argument("--fp16", action="store_true")\n'
                                       '    parser.add_argument("--amp"')
    assert findings(code) == [(_line(code, "# the plain branch"), "MP201")]


def test_the_condition_is_compared_by_meaning_not_spelling():
    # a local alias of the flag, and a negated test
    code = _program(FLAG_POLICY.replace("if args.amp:", "amp = args.amp\n    if not not amp:"))
    assert findings(code) == []
    negated = code.replace("        if self.use_amp:\n", "        if not self.use_amp:\n", 1)
    # now the unscaled branch runs when the optimizer is wrapped, on every such run
    [found] = lint(negated, *RULES, keras_version=2)
    assert (found.line, found.rule) == (_line(code, "# the plain branch"), "MP202")
    assert found.message.startswith("`self.optimizer` is a LossScaleOptimizer, but the loss")


def test_a_different_flag_deciding_the_step_is_not_the_wrapping_flag():
    code = _program(FLAG_POLICY).replace("if self.use_amp:", "if self.model.trainable:")
    # nothing ties the branch to the wrapping: the old "on some paths" reading stands
    assert (_line(code, "# the plain branch"), "MP202") in findings(code)


def test_absl_flags():
    main = textwrap.dedent("""\

        from absl import app, flags

        flags.DEFINE_bool("amp", False, "mixed precision")
        FLAGS = flags.FLAGS


        def main(argv):
            if FLAGS.amp:
                mixed_precision.set_global_policy("mixed_float16")
            model = tf.keras.Sequential([tf.keras.layers.Dense(8, dtype="float32")])
            Trainer(model, tf.keras.optimizers.Adam(), loss_scale=FLAGS.amp).train_step(1, 2)


        if __name__ == "__main__":
            app.run(main)
    """)
    assert findings(TRAINER + main) == []
    always = (TRAINER + main).replace("    if FLAGS.amp:\n        mixed_precision", "    if True:\n        mixed_precision")
    assert findings(always) == [(_line(always, "# the plain branch"), "MP201")]


def test_click_option_parameters():
    main = textwrap.dedent("""\

        import click


        @click.command()
        @click.option("--amp", is_flag=True)
        def main(amp):
            if amp:
                mixed_precision.set_global_policy("mixed_float16")
            model = tf.keras.Sequential([tf.keras.layers.Dense(8, dtype="float32")])
            Trainer(model, tf.keras.optimizers.Adam(), loss_scale=amp).train_step(1, 2)


        if __name__ == "__main__":
            main()
    """)
    assert findings(TRAINER + main) == []


CONFIG_TRAINER = textwrap.dedent("""\
    import dataclasses

    import tensorflow as tf


    @dataclasses.dataclass
    class Config:
        mixed_precision: bool = False


    def make_optimizer(cfg):
        opt = tf.keras.optimizers.SGD(0.1)
        if cfg.mixed_precision:
            opt = tf.keras.mixed_precision.LossScaleOptimizer(opt)
        return opt


    class Problem:
        def __init__(self, cfg, model):
            self.cfg = cfg
            self.model = model
            if cfg.mixed_precision:
                tf.keras.mixed_precision.set_global_policy("mixed_float16")
            self.optimizer = tf.keras.optimizers.SGD(0.1)
            if self.cfg.mixed_precision:
                self.optimizer = tf.keras.mixed_precision.LossScaleOptimizer(self.optimizer)

        @tf.function
        def train_step(self, x, y):
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(self.model(x) - y)
                if self.cfg.mixed_precision:
                    loss = self.optimizer.get_scaled_loss(loss)
            grads = tape.gradient(loss, self.model.trainable_variables)
            if self.cfg.mixed_precision:
                grads = self.optimizer.get_unscaled_gradients(grads)
            self.optimizer.apply_gradients(zip(grads, self.model.trainable_variables))


    Problem(Config(mixed_precision=True), tf.keras.Sequential([tf.keras.layers.Dense(8, dtype="float32")]))
""")


def test_scaling_under_the_config_attribute_that_wraps_is_correct():
    assert findings(CONFIG_TRAINER) == []


def test_keys_name_the_meaning():
    code = textwrap.dedent("""\
        import argparse
        from absl import flags
        FLAGS = flags.FLAGS
        args = argparse.ArgumentParser().parse_args()
        alias = args.amp


        class T:
            def __init__(self, cfg, scale):
                self.cfg = cfg
                self.scale = scale
                self.other = scale
                self.other = None

            def step(self):
                return self.cfg.fp16, self.scale, self.other, FLAGS.amp, alias, unknown.x


        T(object(), args.amp)
    """)
    module = cst.parse_module(code)
    names = NameResolver()
    collect_module_imports(module, names)
    tracker = ScopeTracker(module, names)
    seen = []

    class Grab:
        def visit_Tuple(self, node):
            seen.append((node, tracker.location()))

    Walker([tracker, Grab()], lambda owner, exc: (_ for _ in ()).throw(exc)).walk(module)
    conditions = Conditions(names, tracker.calls)
    [(values, where)] = seen
    keys = [conditions.key(e.value, where) for e in values.elements]
    assert keys == ["param:T.__init__:cfg.fp16", f"{FLAGS}.amp", "self:T.other", f"{FLAGS}.amp", f"{FLAGS}.amp",
                    None]


# -- isinstance ---------------------------------------------------------------------------
ISINSTANCE = textwrap.dedent("""\
    import tensorflow as tf

    tf.keras.mixed_precision.set_global_policy("mixed_float16")
    model = tf.keras.Sequential([tf.keras.layers.Dense(8, dtype="float32")])
    optimizer = BUILT


    @tf.function
    def train_step(x, y):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(model(x) - y)
            if isinstance(optimizer, TESTED):
                loss = optimizer.get_scaled_loss(loss)
        grads = tape.gradient(loss, model.trainable_variables)
        if isinstance(optimizer, TESTED):
            grads = optimizer.get_unscaled_gradients(grads)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
""")
STABLE = "tf.keras.mixed_precision.LossScaleOptimizer"
EXPERIMENTAL = "tf.keras.mixed_precision.experimental.LossScaleOptimizer"


def _isinstance(built, tested):
    return ISINSTANCE.replace("BUILT", built).replace("TESTED", tested)


def test_isinstance_against_a_class_never_built_shuts_the_scaling():
    code = _isinstance(f"{STABLE}(tf.keras.optimizers.Adam())", EXPERIMENTAL)
    assert findings(code) == [(_line(code, "apply_gradients"), "MP202")]
    once = fix(code, *RULES, keras_version=2)
    assert "scaled_loss = optimizer.get_scaled_loss(loss)" in once
    assert findings(once) == []


def test_isinstance_against_the_class_built_keeps_the_scaling():
    assert findings(_isinstance(f"{STABLE}(tf.keras.optimizers.Adam())", STABLE)) == []
    # the experimental class derives from the stable one (TF 2.4-2.8)
    assert findings(_isinstance(f"{EXPERIMENTAL}(tf.keras.optimizers.Adam(), 'dynamic')", STABLE)) == []
    assert findings(_isinstance(f"{EXPERIMENTAL}(tf.keras.optimizers.Adam(), 'dynamic')",
                                f"({STABLE}, {EXPERIMENTAL})")) == []


def test_isinstance_with_a_plain_optimizer_is_mp201_not_a_scaled_loop():
    code = _isinstance("tf.keras.optimizers.Adam()", STABLE)
    assert findings(code) == [(_line(code, "apply_gradients"), "MP201")]


def test_isinstance_stays_undecided_where_the_optimizer_is_not_known():
    assert findings(_isinstance("make_optimizer()", EXPERIMENTAL)) == []
    both = _isinstance(f"tf.keras.optimizers.Adam()\nif FLAG:\n    optimizer = {STABLE}(optimizer)", STABLE)
    assert findings(both) == []  # scaled on the wrapped path, plain on the other
    other_class = _isinstance(f"{STABLE}(tf.keras.optimizers.Adam())", "tf.keras.optimizers.Adam")
    assert findings(other_class) == []  # a test against another kind of class: not decided, the scaling counts
    shadowed = "def isinstance(a, b):\n    return True\n\n\n" + _isinstance(
        f"{STABLE}(tf.keras.optimizers.Adam())", EXPERIMENTAL)
    assert findings(shadowed) == []


def test_an_update_under_an_isinstance_no_value_passes_is_no_train_step():
    code = _isinstance(f"{STABLE}(tf.keras.optimizers.Adam())", STABLE).replace(
        "    optimizer.apply_gradients(", f"    if isinstance(optimizer, {EXPERIMENTAL}):\n"
                                         "        optimizer.apply_gradients(")
    assert findings(code) == []


def test_clipping_in_the_branch_that_differentiates_the_plain_loss_is_not_mp208():
    code = textwrap.dedent("""\
        import tensorflow as tf

        optimizer = OPTIMIZER


        def train_step(model, x, y, variables):
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(model(x) - y)
                if isinstance(optimizer, tf.keras.mixed_precision.LossScaleOptimizer):
                    scaled = optimizer.get_scaled_loss(loss)
                    grads = optimizer.get_unscaled_gradients(tape.gradient(scaled, variables))
                    grads, _ = tf.clip_by_global_norm(grads, 1.0)
                else:
                    grads = tape.gradient(loss, variables)
                    grads, _ = tf.clip_by_global_norm(grads, 1.0)
            optimizer.apply_gradients(zip(grads, variables))
    """)
    wrapped = code.replace("OPTIMIZER", "tf.keras.mixed_precision.LossScaleOptimizer(tf.keras.optimizers.SGD())")
    assert fired(wrapped, "MP208", keras_version=2) == []
    # the same clip before the unscaling in the scaled branch is still reported
    early = wrapped.replace(
        "            grads = optimizer.get_unscaled_gradients(tape.gradient(scaled, variables))\n"
        "            grads, _ = tf.clip_by_global_norm(grads, 1.0)\n",
        "            grads, _ = tf.clip_by_global_norm(tape.gradient(scaled, variables), 1.0)\n"
        "            grads = optimizer.get_unscaled_gradients(grads)\n")
    assert early != wrapped
    assert fired(early, "MP208", keras_version=2) == [(_line(early, "clip_by_global_norm(tape.gradient"), "MP208")]


# The wrapping decided at the top level, the step a function that reads the global.
TOP_LEVEL_FLAG = textwrap.dedent("""\
    import argparse
    import keras
    import tensorflow as tf

    parser = argparse.ArgumentParser()
    parser.add_argument("--loss-scale", action="store_true")
    args = parser.parse_args()
    POLICY
    opt = keras.optimizers.Adam()
    if args.loss_scale:
        opt = keras.mixed_precision.LossScaleOptimizer(opt)
    model = keras.Sequential([keras.Input(shape=(8,)), keras.layers.Dense(1, dtype="float32")])


    def step(x, y):
        if args.loss_scale:
            with tf.GradientTape() as tape:
                scaled = opt.scale_loss(tf.reduce_mean(model(x) - y))
            opt.apply(tape.gradient(scaled, model.trainable_variables), model.trainable_variables)
        else:
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(model(x) - y)
            opt.apply(tape.gradient(loss, model.trainable_variables), model.trainable_variables)  # plain
""")


def test_a_global_wrapped_under_a_flag_is_plain_on_the_function_branch_the_flag_shuts():
    code = TOP_LEVEL_FLAG.replace("POLICY", 'keras.mixed_precision.set_global_policy("mixed_float16")')
    [found] = lint(code, *RULES, keras_version=3)
    assert (found.line, found.rule) == (_line(code, "# plain"), "MP201")
    assert "on a branch where it is not wrapped" in found.message and found.fix is None


def test_a_global_wrapped_under_the_flag_that_also_sets_the_policy_is_silent():
    code = TOP_LEVEL_FLAG.replace("POLICY", 'if args.loss_scale:\n    keras.mixed_precision.set_global_policy("mixed_float16")')
    assert findings(code, keras_version=3) == []


def test_a_global_wrapped_on_every_run_is_not_plain_in_the_function():
    code = TOP_LEVEL_FLAG.replace("POLICY", 'keras.mixed_precision.set_global_policy("mixed_float16")').replace(
        "if args.loss_scale:\n    opt = keras", "if True:\n    opt = keras").replace(
        "if True:\n    opt = keras.mixed_precision.LossScaleOptimizer(opt)", "opt = keras.mixed_precision.LossScaleOptimizer(opt)")
    # wrapped on every run: the plain branch differentiates an unscaled loss on a wrapped optimizer
    assert findings(code, keras_version=3) == [(_line(code, "# plain"), "MP202")]


SETUP_TRAINER = textwrap.dedent("""\
    import keras
    import tensorflow as tf

    keras.mixed_precision.set_global_policy("mixed_float16")


    class Trainer:
        def __init__(self, model):
            self.model = model
            self.opt = None

        SETUP

        def step(self, x, y):
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(tf.cast(self.model(x), tf.float32) - y)
            grads = tape.gradient(loss, self.model.trainable_variables)
            self.opt.apply(grads, self.model.trainable_variables)  # update
""")


def test_an_optimizer_made_in_a_setup_method_decides_the_step():
    code = SETUP_TRAINER.replace("SETUP", "def setup(self, lr):\n        self.opt = keras.optimizers.SGD(lr)")
    assert findings(code, keras_version=3) == [(_line(code, "# update"), "MP201")]
    wrapped = code.replace("keras.optimizers.SGD(lr)", "keras.mixed_precision.LossScaleOptimizer(keras.optimizers.SGD(lr))")
    assert (_line(code, "# update"), "MP202") in findings(wrapped, keras_version=3)


def test_an_optimizer_only_ever_none_in_the_file_is_unknown():
    code = SETUP_TRAINER.replace("SETUP", "def reset(self):\n        self.opt = None")
    assert findings(code, keras_version=3) == []
