"""The literals a returned tuple's elements hold (``run.returned_values``), as the
summaries note them for the calls that unpack them."""

from mplint.run.summaries import summarize

SOURCE = '''
import tensorflow as tf
from tensorflow.keras import mixed_precision

def plain():
    return None, tf.float16, "adam", 3

def named():
    dtype = tf.float16
    return 1, dtype

def flagged(fp16):
    dtype = tf.float16 if fp16 else tf.float32
    return 1, dtype

def under_policy(fp16_run):
    if fp16_run:
        policy = mixed_precision.Policy("mixed_float16")
        mixed_precision.set_policy(policy)
    dtype = tf.float16 if fp16_run else tf.float32
    return 1, dtype

def under_not(fp32):
    if not fp32:
        tf.keras.mixed_precision.set_global_policy("mixed_float16")
    return 1, tf.float32 if fp32 else tf.float16

def other_flag(amp, half):
    if amp:
        tf.keras.mixed_precision.set_global_policy("mixed_float16")
    return 1, tf.float16 if half else tf.float32

def looped(names):
    dtype = tf.float16
    for dtype in names:
        pass
    return 1, dtype

def from_param(dtype):
    return 1, dtype

def called():
    dtype = make()
    return 1, dtype
'''


def test_each_element_holds_its_literals():
    functions = summarize(SOURCE).functions
    assert functions["plain"].part_values == [[["null"], ['"float16"'], ['"adam"'], ["3"]]]
    assert functions["named"].part_values == [[["1"], ['"float16"']]]
    assert functions["flagged"].part_values == [[["1"], ['"float16"', '"float32"']]]


def test_under_the_policy_the_function_sets_by_a_flag_the_flag_picks_the_arm():
    functions = summarize(SOURCE).functions
    assert functions["under_policy"].part_values == [[["1"], ['"float16"']]]
    assert functions["under_not"].part_values == [[["1"], ['"float16"']]]
    # another flag decides the dtype: both values
    assert functions["other_flag"].part_values == [[["1"], ['"float16"', '"float32"']]]


def test_a_name_bound_otherwise_is_unknown():
    functions = summarize(SOURCE).functions
    for name in ("looped", "from_param", "called"):
        assert functions[name].part_values == [[["1"], []]], name
