"""MP102 and a custom loop that casts the model's result to float32 before the loss.

``logits = model(x)`` followed by ``logits = tf.cast(logits, tf.float32)`` (often under
the flag that chose the 16-bit policy, as google/edward2's trainers do) keeps the 16-bit
output away from the loss, like ``tf.cast(model(x), tf.float32)``. Every call of the
model must be cast so; one that is not leaves the finding.
"""

import textwrap

from helpers import fired

BUILD = """\
import tensorflow as tf
from absl import flags

FLAGS = flags.FLAGS

if FLAGS.use_bfloat16:
    tf.keras.mixed_precision.set_global_policy("mixed_bfloat16")


def build(num_classes):
    inputs = tf.keras.layers.Input((32,))
    x = tf.keras.layers.Dense(64, activation="relu")(inputs)
    x = tf.keras.layers.Dense(num_classes)(x)
    return tf.keras.Model(inputs=inputs, outputs=x)


model = build(10)
optimizer = tf.keras.optimizers.SGD()


def train_step(images, labels):
    with tf.GradientTape() as tape:
        logits = model(images, training=True)
"""

LOSS = """\
        loss = tf.reduce_mean(tf.keras.losses.sparse_categorical_crossentropy(labels, logits, from_logits=True))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
"""


def _code(recast: str, extra: str = "") -> str:
    return BUILD + textwrap.indent(textwrap.dedent(recast), " " * 8) + LOSS + textwrap.dedent(extra)


def test_a_result_left_16_bit_is_found():
    assert fired(_code(""), "MP102") == [(13, "MP102")]


def test_a_result_cast_under_the_flag_before_the_loss_is_silent():
    assert fired(_code("""\
        if FLAGS.use_bfloat16:
            logits = tf.cast(logits, tf.float32)
        """), "MP102") == []


def test_a_result_cast_on_the_next_line_is_silent():
    assert fired(_code("logits = tf.cast(logits, tf.float32)\n"), "MP102") == []


def test_a_cast_to_another_dtype_keeps_the_finding():
    assert fired(_code("logits = tf.cast(logits, tf.bfloat16)\n"), "MP102") == [(13, "MP102")]


def test_a_read_before_the_cast_keeps_the_finding():
    assert fired(_code("""\
        probs = tf.nn.softmax(logits)
        logits = tf.cast(logits, tf.float32)
        """), "MP102") == [(13, "MP102")]


def test_a_second_call_left_16_bit_keeps_the_finding():
    evaluate = """\

    def eval_step(images):
        logits = model(images, training=False)
        return tf.argmax(logits, -1)
    """
    assert fired(_code("logits = tf.cast(logits, tf.float32)\n", evaluate), "MP102") == [(13, "MP102")]
