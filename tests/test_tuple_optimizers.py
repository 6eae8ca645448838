"""Optimizers handed around in a tuple: ``opt_g, opt_d = make_optimizers()`` (a factory of
another module returning a tuple), ``Trainer(gen, disc, (opt_g, opt_d))`` whose
``__init__`` unpacks them onto ``self``, then a custom loop that applies gradients with
each. The element each attribute takes decides MP201 (a plain optimizer, no scaling) and
MP202 (a LossScaleOptimizer whose loss is never scaled); a call passing anything but a
tuple written out leaves both unknown."""

import pytest

import helpers

OPTIM = '''import tensorflow as tf


def make_optimizers(lr=1e-4):
    opt_g = tf.keras.mixed_precision.LossScaleOptimizer(tf.keras.optimizers.Adam(lr))
    opt_d = tf.keras.optimizers.Adam(lr)
    return opt_g, opt_d
'''

TRAINER = '''import tensorflow as tf


class Trainer:
    def __init__(self, gen, disc, optimizers):
        self.gen = gen
        self.disc = disc
        self.g_opt, self.d_opt = optimizers

    def train_step(self, x):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(self.disc(x))
        grads = tape.gradient(loss, self.disc.trainable_variables)
        self.d_opt.apply_gradients(zip(grads, self.disc.trainable_variables))
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(self.disc(self.gen(x)))
            scaled = self.g_opt.get_scaled_loss(loss)
        grads = self.g_opt.get_unscaled_gradients(tape.gradient(scaled, self.gen.trainable_variables))
        self.g_opt.apply_gradients(zip(grads, self.gen.trainable_variables))
        return loss
'''

TRAIN = '''import tensorflow as tf

from optim import make_optimizers
from trainer import Trainer

tf.keras.mixed_precision.set_global_policy("mixed_float16")


def main():
    gen = tf.keras.Sequential([tf.keras.layers.Dense(16)])
    disc = tf.keras.Sequential([tf.keras.layers.Dense(1, dtype="float32")])
    opt_g, opt_d = make_optimizers()
    trainer = Trainer(gen, disc, (opt_g, opt_d))
    for x in range(10):
        trainer.train_step(x)


if __name__ == "__main__":
    main()
'''


def _check(tmp_path, optim=OPTIM, trainer=TRAINER, train=TRAIN):
    return sorted(helpers.project_findings(tmp_path, {
        "pyproject.toml": "[project]\nname = 'gan'\n", "optim.py": optim, "trainer.py": trainer, "train.py": train,
    }, "MP201,MP202"))


def test_the_plain_element_of_the_tuple_is_found(tmp_path):
    assert _check(tmp_path) == [("trainer.py", 14, "MP201")]
    listed = TRAIN.replace("Trainer(gen, disc, (opt_g, opt_d))", "Trainer(gen, disc, optimizers=[opt_g, opt_d])")
    assert _check(tmp_path / "list", train=listed) == [("trainer.py", 14, "MP201")]


def test_both_wrapped_is_silent(tmp_path):
    optim = OPTIM.replace("    opt_d = tf.keras.optimizers.Adam(lr)",
                          "    opt_d = tf.keras.mixed_precision.LossScaleOptimizer(tf.keras.optimizers.Adam(lr))")
    trainer = TRAINER.replace('''        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(self.disc(x))
        grads = tape.gradient(loss, self.disc.trainable_variables)''', '''        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(self.disc(x))
            scaled_d = self.d_opt.get_scaled_loss(loss)
        grads = self.d_opt.get_unscaled_gradients(tape.gradient(scaled_d, self.disc.trainable_variables))''')
    assert _check(tmp_path, optim=optim, trainer=trainer) == []


def test_the_wrapped_element_without_scaling_is_mp202(tmp_path):
    """The elements swapped: ``self.d_opt`` is the LossScaleOptimizer, its loss unscaled."""
    train = TRAIN.replace("(opt_g, opt_d)", "(opt_d, opt_g)")
    assert ("trainer.py", 14, "MP202") in _check(tmp_path, train=train)


@pytest.mark.parametrize("change", [
    ("Trainer(gen, disc, (opt_g, opt_d))", "Trainer(gen, disc, make_optimizers())"),  # not written out
    ("    trainer = Trainer(gen, disc, (opt_g, opt_d))",
     "    trainer = Trainer(gen, disc, (opt_g, opt_d))\n    Trainer(gen, disc, choose())"),  # another call
    ("(opt_g, opt_d)", "(opt_g, *rest)"),
])
def test_a_tuple_not_written_out_at_every_call_is_unknown(tmp_path, change):
    assert _check(tmp_path, train=TRAIN.replace(*change)) == []


MODELS = '''import tensorflow as tf


def build_a():
    inputs = tf.keras.Input((64,))
    return tf.keras.Model(inputs, tf.keras.layers.Dense(10, activation="softmax")(inputs))


class Net(tf.keras.Model):
    def __init__(self):
        super().__init__()
        self.head = tf.keras.layers.Dense(10, activation="softmax")

    def call(self, x):
        return self.head(x)


def build_b():
    inputs = tf.keras.Input((64,))
    return tf.keras.Model(inputs, tf.keras.layers.Dense(10, activation="softmax")(inputs))


def main():
    tf.keras.mixed_precision.set_global_policy("mixed_float16")
    models = [build_a(), Net()]
    for m in models:
        m.compile(optimizer="adam", loss="mse")
        m.fit(None, None)
    pair = (build_b(), None)
    pair[0].fit(None, None)


if __name__ == "__main__":
    main()
'''


def test_models_in_a_list_trained_one_by_one(tmp_path):
    """``for m in models: m.fit()`` and ``pair[0].fit()``: each element is a whole model."""
    assert helpers.fired(MODELS, "MP101") == [(6, "MP101"), (12, "MP101"), (20, "MP101")]


@pytest.mark.parametrize("change", [
    ("    for m in models:\n", "    for m in [build_a()][:0]:\n"),  # another container: the list's models stay blocks
    ("    pair[0].fit(None, None)", "    pair[1].fit(None, None)"),  # another element trained
    ("    models = [build_a(), Net()]\n", "    models = [build_a(), Net()]\n    models.append(other)\n"),
])
def test_a_model_in_a_list_not_trained_stays_a_block(change):
    found = helpers.fired(MODELS.replace(*change), "MP101")
    lines = {"    for m in models:\n": [6, 12], "    pair[0].fit(None, None)": [20]}.get(change[0], [6, 12])
    assert all((line, "MP101") not in found for line in lines)
