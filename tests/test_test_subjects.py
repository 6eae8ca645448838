"""Code of a test module runs in 16 bits only where its own tests set the policy, on
purpose: a 1e-9 guard or a float32 constant in a test's model is what the test
exercises (a reproduced hazard), or makes it fail. The rules about a hazard at an
operation (MP501, MP502, MP504) judge the library code in its own module instead."""

from __future__ import annotations

from helpers import fired

SUBJECT = """import tensorflow as tf
import keras

class VoidGuard(keras.layers.Layer):
    def call(self, x):
        return x / (tf.reduce_sum(tf.abs(x), axis=-1, keepdims=True) + 1e-9)

class Masked(keras.layers.Layer):
    def call(self, x):
        return x + (-1e9)

def test_void_guard_fails_in_float16():
    keras.mixed_precision.set_global_policy("mixed_float16")
    VoidGuard()(tf.zeros((1, 4)))
    Masked()(tf.zeros((1, 4)))
"""


def test_a_test_modules_own_subject_is_not_reported():
    assert fired(SUBJECT, "MP501", "MP502", path="tests/test_guard.py") == []


def test_the_same_code_in_a_program_is_reported():
    program = SUBJECT.replace("def test_void_guard_fails_in_float16():", "def main():") + "main()\n"
    assert fired(program, "MP501", "MP502", path="guard.py") == [(6, "MP502"), (10, "MP501")]
