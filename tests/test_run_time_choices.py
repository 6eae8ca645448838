"""Run-time choices are conditions: values chosen per ``if`` arm, flags, and the
public aliases that name one API twice (issue 15, sections 3 and 4)."""

import textwrap

import libcst as cst

from helpers import fired
from mplint.semantic.names import NameResolver, canonical, collect_module_imports
from mplint.semantic.scopes import ScopeTracker
from mplint.semantic.values import Evaluator


def _evaluate(code, name):
    """The values of ``name`` as seen by the last statement of ``code``."""
    module = cst.parse_module(textwrap.dedent(code))
    names = NameResolver()
    collect_module_imports(module, names)
    tracker = ScopeTracker(module, names)

    class Walk(cst.CSTVisitor):
        def on_visit(self, node):
            visit = getattr(tracker, f"visit_{type(node).__name__}", None)
            if visit is not None:
                visit(node)
            return True

        def on_leave(self, node):
            leave = getattr(tracker, f"leave_{type(node).__name__}", None)
            if leave is not None:
                leave(node)

    module.visit(Walk())
    location = tracker.location()
    evaluator = Evaluator(names)
    return evaluator.values(cst.Name(name), location), evaluator.values_by_branch(cst.Name(name), location)


# -- a name bound in both arms of an if ---------------------------------------------------------
def test_a_name_bound_in_both_arms_holds_either_value():
    values, split = _evaluate("""
        if tpu:
            policy = "mixed_bfloat16"
        else:
            policy = "mixed_float16"
        use(policy)
    """, "policy")
    assert values == {"mixed_bfloat16", "mixed_float16"}
    assert sorted(sorted(v) for v, _ in split) == [["mixed_bfloat16"], ["mixed_float16"]]
    assert sorted(arm for _, ((_, arm, _),) in split) == ["body", "else"]


def test_a_value_replaced_in_both_arms_no_longer_arrives():
    values, _ = _evaluate("""
        policy = "float32"
        if tpu:
            policy = "mixed_bfloat16"
        else:
            policy = "mixed_float16"
        use(policy)
    """, "policy")
    assert values == {"mixed_bfloat16", "mixed_float16"}


def test_a_value_replaced_in_one_arm_still_arrives():
    values, _ = _evaluate("""
        policy = "float32"
        if amp:
            policy = "mixed_float16"
        use(policy)
    """, "policy")
    assert values == {"float32", "mixed_float16"}


def test_an_unconditional_rebinding_replaces_earlier_ones():
    values, split = _evaluate("""
        if tpu:
            policy = "mixed_bfloat16"
        else:
            policy = "mixed_float16"
        policy = "float32"
        use(policy)
    """, "policy")
    assert values == {"float32"} and split == [(frozenset({"float32"}), ())]


# -- MP403 per branch -----------------------------------------------------------------------------
def test_mp403_float16_chosen_in_the_tpu_arm_is_found():
    code = """
        import tensorflow as tf
        if use_tpu:
            strategy = tf.distribute.TPUStrategy(tf.distribute.cluster_resolver.TPUClusterResolver())
            policy = tf.keras.mixed_precision.Policy("mixed_float16")
        else:
            policy = tf.keras.mixed_precision.Policy("mixed_bfloat16")
        tf.keras.mixed_precision.set_global_policy(policy)
    """
    assert fired(code, "MP403") == [(8, "MP403")]


def test_mp403_hardware_test_next_to_an_unconditional_tpu_use_is_silent():
    code = """
        import tensorflow as tf
        strategy = tf.distribute.TPUStrategy(tf.distribute.cluster_resolver.TPUClusterResolver())
        if on_tpu(strategy):
            tf.keras.mixed_precision.set_global_policy("mixed_bfloat16")
        else:
            tf.keras.mixed_precision.set_global_policy("mixed_float16")
    """
    assert fired(code, "MP403") == []


def test_mp401_a_policy_and_the_rewrite_under_parameters_of_their_own_functions_are_the_callers_matter():
    code = """
        import tensorflow as tf
        def set_policy(dtype):
            if dtype == tf.float16:
                tf.keras.mixed_precision.set_global_policy("mixed_float16")
            elif dtype == tf.bfloat16:
                tf.keras.mixed_precision.set_global_policy("mixed_bfloat16")
        def configure(opt, use_graph_rewrite=False):
            if use_graph_rewrite:
                opt = tf.train.experimental.enable_mixed_precision_graph_rewrite(opt)
            return opt
    """
    assert fired(code, "MP401") == []
    unguarded = code.replace("            if use_graph_rewrite:\n                opt =", "            opt =")
    assert fired(unguarded, "MP401") == [(9, "MP401")]


def test_mp403_a_tpu_found_by_a_probe_with_a_fallback_is_a_warning_without_a_fix():
    """TPU if one is found, else GPUs: float16 is right on the GPUs, so the policy must
    follow the hardware; a blanket swap to bfloat16 would slow the GPU runs."""
    from helpers import lint

    code = """
        import tensorflow as tf
        try:
            resolver = tf.distribute.cluster_resolver.TPUClusterResolver()
            strategy = tf.distribute.TPUStrategy(resolver)
        except ValueError:
            strategy = tf.distribute.MirroredStrategy()
        tf.keras.mixed_precision.set_global_policy("mixed_float16")
    """
    (found,) = lint(code, "MP403")
    assert (found.line, found.severity, found.fix) == (8, "warning", None)
    assert "finds a TPU" in found.message
    unprobed = code.replace("try:\n", "if True:\n").replace("        except ValueError:\n", "        else:\n")
    (found,) = lint(unprobed, "MP403")
    assert (found.severity, found.fix) == ("error", "safe")


def test_mp403_a_tpu_helper_runs_where_it_is_called():
    code = """
        import tensorflow as tf
        def tpu():
            return tf.distribute.TPUStrategy(tf.distribute.cluster_resolver.TPUClusterResolver())
        def main(flags):
            if flags.tpu:
                strategy = tpu()
            else:
                tf.keras.mixed_precision.set_global_policy("mixed_float16")
    """
    assert fired(code, "MP403") == []
    # called on the path that sets float16: found
    both = code.replace("strategy = tpu()", "pass").replace(
        'set_global_policy("mixed_float16")', 'set_global_policy("mixed_float16"); strategy = tpu()')
    assert fired(both, "MP403") == [(9, "MP403")]


# -- public aliases (section 4) ---------------------------------------------------------------------
def test_tf_optimizers_is_tf_keras_optimizers():
    assert canonical("tensorflow.optimizers.Adam") == "keras.optimizers.Adam"
    assert canonical("tensorflow.compat.v2.optimizers.SGD") == "keras.optimizers.SGD"
    assert canonical("tensorflow.optimizers.legacy.Adam") == "keras.optimizers.legacy.Adam"
    assert canonical("tensorflow.losses.MeanSquaredError") == "keras.losses.MeanSquaredError"
    assert canonical("tensorflow.metrics.Mean") == "keras.metrics.Mean"
    assert canonical("tensorflow.initializers.GlorotUniform") == "keras.initializers.GlorotUniform"
    # TF1's own losses are not Keras's
    assert canonical("tensorflow.compat.v1.losses.mean_squared_error").startswith("tensorflow.compat.v1.")
    assert canonical("keras.optimizers.LossScaleOptimizer") == canonical(
        "tensorflow.keras.mixed_precision.LossScaleOptimizer")


def test_mp201_tf_optimizers_in_a_float16_loop():
    code = """
        import tensorflow as tf
        tf.keras.mixed_precision.set_global_policy("mixed_float16")
        opt = tf.optimizers.Adam()
        def step(model, x):
            with tf.GradientTape() as tape:
                loss = model(x)
            grads = tape.gradient(loss, model.trainable_variables)
            opt.apply_gradients(zip(grads, model.trainable_variables))
    """
    assert fired(code, "MP201") == [(9, "MP201")]
    wrapped = code.replace("opt = tf.optimizers.Adam()",
                           "opt = tf.keras.mixed_precision.LossScaleOptimizer(tf.optimizers.Adam())")
    assert fired(wrapped, "MP201") == []


# -- run-time switches are conditions (section 3) -----------------------------------------------
_LOOP = """
        model = tf.keras.Sequential([tf.keras.layers.Dense(1, dtype="float32")])
        opt = tf.keras.optimizers.Adam()
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(model(tf.ones((2, 2))))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
"""


def _messages(code, rule):
    from helpers import lint
    return [f.message for f in lint(code, rule)]


def test_a_grappler_option_from_a_flag_may_be_on():
    code = """
        import argparse
        import tensorflow as tf
        parser = argparse.ArgumentParser()
        parser.add_argument("--amp", action="store_true")
        args = parser.parse_args()
        tf.config.optimizer.set_experimental_options({"auto_mixed_precision": args.amp})
    """ + _LOOP
    [message] = _messages(code, "MP201")
    assert "grappler auto_mixed_precision option (chosen at run time)" in message
    # a value that is never true: off
    off = code.replace('{"auto_mixed_precision": args.amp}', '{"auto_mixed_precision": False}')
    assert _messages(off, "MP201") == []
    # `True if args.amp else False` is the same condition
    ifexp = code.replace("args.amp}", "True if args.amp else False}")
    assert "(chosen at run time)" in _messages(ifexp, "MP201")[0]


def test_a_store_true_flag_defaulting_to_true_is_always_on():
    code = """
        import argparse
        import tensorflow as tf
        parser = argparse.ArgumentParser()
        parser.add_argument("--amp", action="store_true", default=True)
        args = parser.parse_args()
        tf.keras.mixed_precision.set_global_policy("mixed_float16" if args.amp else "float32")
    """ + _LOOP
    [message] = _messages(code, "MP201")
    assert "chosen at run time" not in message
    for switch in ('parser.add_argument("--no-amp", dest="amp", action="store_false")',
                   'parser.add_argument("--no_amp", action="store_true")'):
        switchable = code.replace("        args = parser", "        " + switch + "\n        args = parser")
        assert "chosen at run time" in _messages(switchable, "MP201")[0]


def test_mp401_flags_of_one_exclusive_group_never_run_together():
    code = """
        import argparse
        import tensorflow as tf
        parser = argparse.ArgumentParser()
        group = parser.add_mutually_exclusive_group()
        group.add_argument("--keras16", action="store_true")
        group.add_argument("--fp16", action="store_const", const=tf.float16, dest="float_type")
        group.add_argument("--amp", action="store_true")
        args = parser.parse_args()
        if args.keras16 or args.float_type == tf.float16:
            tf.keras.mixed_precision.set_global_policy("mixed_float16")
        tf.config.optimizer.set_experimental_options({"auto_mixed_precision": args.amp})
        if args.amp:
            tf.compat.v1.mixed_precision.enable_mixed_precision_graph_rewrite(opt)
    """
    assert fired(code, "MP401") == []
    # --amp outside the group: it may be given with --keras16
    outside = code.replace('group.add_argument("--amp"', 'parser.add_argument("--amp"')
    assert fired(outside, "MP401") == [(12, "MP401"), (14, "MP401")]
    # a test naming a flag outside the group may run with anything
    other = code.replace("args.keras16 or args.float_type == tf.float16", "args.keras16 or args.big")
    assert fired(other, "MP401") == [(12, "MP401"), (14, "MP401")]


def test_mode_branches_are_judged_apart():
    code = """
        import tensorflow as tf
        def configure(mode):
            if mode == "strict":
                tf.keras.mixed_precision.set_global_policy("mixed_float16")
            elif mode == "auto":
                tf.config.optimizer.set_experimental_options({"auto_mixed_precision": True})
        def train(model, data):
            model.compile(optimizer="adam", loss="mse")
            model.fit(data)
    """
    [message] = _messages(code, "MP407")
    assert "on this path" in message
    # the policy on the rewrite's path too: compile() scales (MP401 tells the conflict)
    same = code.replace('elif mode == "auto":', 'if mode == "strict":')
    assert _messages(same, "MP407") == []
