"""A policy setter under an ``if`` that no value reaching it takes never runs:
``config_gpu(mp=False)`` with ``if mp: set_global_policy("mixed_float16")``."""

from __future__ import annotations

from helpers import fired

HELPER = ("import tensorflow as tf\n"
          "def config_gpu(mp=False):\n"
          "    if mp:\n"
          "        tf.keras.mixed_precision.set_global_policy('mixed_float16')\n"
          "config_gpu(CALL)\n"
          "m = tf.keras.Sequential([tf.keras.layers.Dense(10, activation='softmax')])\n"
          "m.compile(loss='categorical_crossentropy')\n")


def test_a_setter_under_a_flag_every_call_turns_off_never_runs():
    assert fired(HELPER.replace("CALL", "mp=False"), "MP101") == []
    assert fired(HELPER.replace("CALL", ""), "MP101") == []  # the default
    assert fired(HELPER.replace("CALL", "mp=True"), "MP101") == [(6, "MP101")]
    # one call turns it on: it may run
    assert fired(HELPER.replace("CALL", "mp=False)\nconfig_gpu(True"), "MP101") == [(7, "MP101")]
    # a value read at run time: it may run
    assert fired(HELPER.replace("CALL", "mp=args.amp"), "MP101") == [(6, "MP101")]


def test_the_else_arm_and_a_negated_test():
    code = HELPER.replace("    if mp:\n", "    if not mp:\n        pass\n    else:\n")
    assert fired(code.replace("CALL", "mp=False"), "MP101") == []
    assert fired(code.replace("CALL", "mp=True"), "MP101") == [(8, "MP101")]
    negated = HELPER.replace("if mp:", "if not mp:")
    assert fired(negated.replace("CALL", "mp=True"), "MP101") == []
    assert fired(negated.replace("CALL", "mp=False"), "MP101") == [(6, "MP101")]


RESTORE = ("import keras\n"
           "def reference(x):\n"
           "    previous = keras.mixed_precision.global_policy().name\n"
           "    keras.mixed_precision.set_global_policy('float32')\n"
           "    y = keras.layers.Dense(4)(x)\n"
           "    keras.mixed_precision.set_global_policy(PUT_BACK)\n"
           "    return y\n"
           "reference(None)\n"
           "m = keras.Sequential([keras.layers.Dense(10, activation='softmax')])\n"
           "m.compile(loss='categorical_crossentropy')\n")


def test_putting_back_the_policy_read_before_is_no_policy_chosen_at_run_time():
    assert fired(RESTORE.replace("PUT_BACK", "previous"), "MP101") == []
    assert fired(RESTORE.replace("PUT_BACK", "keras.config.dtype_policy()"), "MP101") == []
    # a name that is not the policy read before: chosen at run time, may be mixed
    assert fired(RESTORE.replace("PUT_BACK", "NAME"), "MP101") == [(9, "MP101")]


DICT_POLICY = ("import keras\n"
               "PRECISION = {'fp16': 'mixed_float16', 'bf16': 'mixed_bfloat16', 'fp32': 'float32'}\n"
               "CHANGE\n"
               "keras.mixed_precision.set_global_policy(PRECISION[KEY])\n"
               "m = keras.Sequential([keras.layers.Dense(10, activation='softmax')])\n"
               "m.compile(loss='categorical_crossentropy')\n")


def test_a_policy_read_from_a_dict_literal_by_a_known_key_is_that_policy():
    assert fired(DICT_POLICY.replace("CHANGE", "").replace("KEY", "'fp32'"), "MP101") == []
    assert fired(DICT_POLICY.replace("CHANGE", "").replace("KEY", "'fp16'"), "MP101") == [(5, "MP101")]
    # changed in place, or a key read at run time: chosen at run time, may be mixed
    changed = DICT_POLICY.replace("CHANGE", "PRECISION['fp32'] = 'mixed_float16'").replace("KEY", "'fp32'")
    assert fired(changed, "MP101") == [(5, "MP101")]
    assert fired(DICT_POLICY.replace("CHANGE", "import sys").replace("KEY", "sys.argv[1]"), "MP101") == [(5, "MP101")]
