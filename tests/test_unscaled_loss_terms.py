"""MP202: a term added to the loss after the loss was scaled (a gradient penalty, the
model's regularization losses) is divided by the loss scale with the rest when the
gradients are unscaled, so that term barely trains."""

from __future__ import annotations

import pytest

from helpers import fired

WGAN = """\
import tensorflow as tf


class WGAN(tf.keras.Model):
    def compile(self, d_optimizer, **kw):
        super().compile(**kw)
        self.d_optimizer = d_optimizer

    def gradient_penalty(self, real, fake):
        with tf.GradientTape() as gp_tape:
            gp_tape.watch(real)
            pred = self.discriminator(real)
        grads = gp_tape.gradient(pred, [real])[0]
        return tf.reduce_mean((tf.norm(grads) - 1.0) ** 2)

    def train_step(self, real):
        with tf.GradientTape() as tape:
            fake = self.generator(real)
            d_cost = tf.reduce_mean(self.discriminator(fake)) - tf.reduce_mean(self.discriminator(real))
            scaled_d_cost = self.d_optimizer.get_scaled_loss(d_cost)
            gp = self.gradient_penalty(real, fake)
            scaled_d_loss = scaled_d_cost + gp * 10.0
        grads = tape.gradient(scaled_d_loss, self.discriminator.trainable_variables)
        grads = self.d_optimizer.get_unscaled_gradients(grads)
        self.d_optimizer.apply_gradients(zip(grads, self.discriminator.trainable_variables))
        return {"d": d_cost}
"""

KERAS_3 = """\
import keras
import tensorflow as tf

keras.mixed_precision.set_global_policy("mixed_float16")
model = keras.Sequential([keras.layers.Dense(8)])
opt = keras.optimizers.LossScaleOptimizer(keras.optimizers.Adam())


def step(x, y):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.cast(model(x), "float32") - y)
        reg = tf.add_n(model.losses)
        total = opt.scale_loss(loss) + reg
    grads = tape.gradient(total, model.trainable_variables)
    opt.apply(grads, model.trainable_variables)
"""


def test_a_penalty_added_to_the_scaled_loss_is_reported_at_the_term() -> None:
    assert fired(WGAN, "MP202") == [(22, "MP202")]


@pytest.mark.parametrize("sum_line", [
    "scaled_d_loss = self.d_optimizer.get_scaled_loss(d_cost + gp * 10.0)",  # scaled as a whole
    "scaled_d_loss = scaled_d_cost + self.d_optimizer.get_scaled_loss(gp * 10.0)",  # each term scaled
    "scaled_d_loss = scaled_d_cost + 1e-3",  # a number has no gradient
    "scaled_d_loss = scaled_d_cost + tf.constant(1e-3)",
])
def test_terms_scaled_too_or_without_gradient_are_silent(sum_line: str) -> None:
    code = WGAN.replace("scaled_d_loss = scaled_d_cost + gp * 10.0", sum_line)
    assert fired(code, "MP202") == []


def test_gradients_never_unscaled_are_left_to_mp203() -> None:
    code = WGAN.replace("        grads = self.d_optimizer.get_unscaled_gradients(grads)\n", "")
    assert fired(code, "MP202") == []


def test_keras_3_apply_of_a_loss_scale_optimizer_divides_the_term_too() -> None:
    assert fired(KERAS_3, "MP202") == [(13, "MP202")]
    # a plain Keras 3 optimizer: scale_loss() hands the loss back, apply() divides nothing
    plain = KERAS_3.replace("keras.optimizers.LossScaleOptimizer(keras.optimizers.Adam())", "keras.optimizers.Adam()")
    assert fired(plain, "MP202") == []


def test_a_sum_on_the_branch_that_does_not_scale_is_silent() -> None:
    """tf_rlib's shape: ``scale_regularization_loss`` (a per-replica division) is no loss
    scaling, and the ``else`` arm sums without scaling on purpose."""
    code = '''\
import tensorflow as tf


def train_step(model, optim, x, y, amp):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(model(x) - y)
        regularization_loss = tf.nn.scale_regularization_loss(tf.math.add_n(model.losses))
        if amp:
            total_loss = optim.get_scaled_loss(loss + regularization_loss)
        else:
            total_loss = loss + regularization_loss
    grads = tape.gradient(total_loss, model.trainable_weights)
    if amp:
        grads = optim.get_unscaled_gradients(grads)
    optim.apply_gradients(zip(grads, model.trainable_weights))
'''
    assert fired(code, "MP202") == []
