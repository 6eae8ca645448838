"""Bindings follow if/else arms: code in one arm never sees a binding from the other."""

from helpers import fired


def test_else_arm_does_not_see_the_if_arms_wrapping():
    code = """
        import tensorflow as tf

        def configure(optimizer, dynamic):
            if dynamic:
                optimizer = tf.keras.mixed_precision.LossScaleOptimizer(optimizer)
            else:
                optimizer = tf.keras.mixed_precision.LossScaleOptimizer(optimizer, dynamic_growth_steps=100)
            return optimizer
    """
    assert fired(code, "MP205") == []
    twice = code.replace("            else:\n", "            if True:\n")
    assert fired(twice, "MP205") == [(8, "MP205")]  # the second wrap


def test_tests_on_one_flag_with_different_values_exclude_each_other():
    code = """
        import tensorflow as tf

        def run(flags, opt):
            if flags.impl == "keras" and flags.dtype == "fp16":
                tf.keras.mixed_precision.set_global_policy("mixed_float16")
            if flags.impl == "graph_rewrite":
                opt = tf.compat.v1.mixed_precision.enable_mixed_precision_graph_rewrite(opt)
            return opt
    """
    assert fired(code, "MP401") == []
    both = code.replace('flags.impl == "graph_rewrite"', 'flags.rewrite')
    assert fired(both, "MP401") == [(8, "MP401")]  # the rewrite call


def test_the_body_of_one_if_on_a_flag_and_the_else_of_another_exclude_each_other():
    code = """
        import tensorflow as tf

        def run(flags, opt):
            if flags.graph_rewrite:
                opt = tf.compat.v1.mixed_precision.enable_mixed_precision_graph_rewrite(opt)
            print("configured")
            if flags.graph_rewrite:
                pass
            else:
                tf.keras.mixed_precision.set_global_policy("mixed_float16")
            return opt
    """
    assert fired(code, "MP401") == []
    negated = code.replace("            if flags.graph_rewrite:\n                pass\n            else:\n",
                           "            if not flags.graph_rewrite:\n")
    assert negated != code and fired(negated, "MP401") == []
    same_arm = code.replace("                pass\n            else:\n", "")
    assert fired(same_arm, "MP401") == [(6, "MP401")]


def test_flags_of_one_mutually_exclusive_group_never_run_together():
    from pathlib import Path

    path = Path(__file__).resolve().parent.parent / "fixtures" / "policy" / "correct_exclusive_precision_flags.py"
    code = path.read_text(encoding="utf-8")
    assert fired(code, "MP205", "MP401") == []
    # the same flag outside the group may be given with --fp16: both mechanisms run
    outside = code.replace('precision.add_argument("--auto-mixed-precision"', 'parser.add_argument("--auto-mixed-precision"')
    assert fired(outside, "MP205", "MP401") == [(22, "MP205"), (22, "MP401")]
    # a flag with a default of its own may be true without being given
    const = code.replace('"--fp16", action="store_true"', '"--fp16", action="store_const", const=True, default=True')
    assert fired(const, "MP205", "MP401") == [(22, "MP205"), (22, "MP401")]


GEM = '''\
import tensorflow as tf
from tensorflow import keras

keras.mixed_precision.set_global_policy("mixed_float16")


class GeM(keras.layers.Layer):
    def __init__(self, p=3.0, eps=1e-6, **kwargs):
        super().__init__(**kwargs)
        {store}

    def call(self, x):
        return tf.reduce_mean(tf.pow(tf.maximum(x, self.eps), self.p), axis=[1, 2])


pooled = GeM()(keras.Input((7, 7, 64)))
'''


def test_a_tuple_assignment_binds_each_target_to_its_item():
    # ``self.p, self.eps = p, eps``: p keeps its default of 3, a cube in float16
    assert fired(GEM.format(store="self.p, self.eps = p, eps"), "MP506") == [(13, "MP506")]


def test_a_tuple_assignment_that_swaps_or_unpacks_stays_unknown():
    assert fired(GEM.format(store="self.p, self.eps = eps, p"), "MP506") == []  # p is the epsilon now
    assert fired(GEM.format(store="self.p, self.eps = sorted((p, eps))"), "MP506") == []
    swapped = "p, eps = eps, p\n        self.p, self.eps = p, eps"
    assert fired(GEM.format(store=swapped), "MP506") == []


def test_a_name_bound_in_a_try_and_in_its_handler_may_hold_either():
    # the TPU probe: True when the resolver is found, False in the handler; the policy
    # chosen from it may be either (MP403's good example), never the handler's alone
    code = """
        import tensorflow as tf

        try:
            resolver = tf.distribute.cluster_resolver.TPUClusterResolver()
            on_tpu = True
        except ValueError:
            on_tpu = False
        policy = "mixed_bfloat16" if on_tpu else "mixed_float16"
        tf.keras.mixed_precision.set_global_policy(policy)
    """
    assert fired(code, "MP403") == []
    # a later plain binding still replaces both: mixed_float16 where a TPU is looked for
    later = code.replace('        policy = "mixed_bfloat16"', '        on_tpu = False\n        policy = "mixed_bfloat16"')
    assert fired(later, "MP403") == [(11, "MP403")]
    # both parts false: mixed_float16 whatever the probe finds
    found = code.replace("            on_tpu = True\n", "            on_tpu = False\n")
    assert fired(found, "MP403") == [(10, "MP403")]
