"""Optimizer registries keyed by strings (``REGISTRY = {"adam_amp": lambda lr:
LossScaleOptimizer(Adam(lr))}``) behind a getter of another module (``def get(name, lr):
return REGISTRY[name](lr)``): a call that passes a literal key gets that entry's kind,
so wrapping it again is a double wrap (MP205); any other key stays unknown."""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers import reported, run_cli, write_files

OPTIMIZERS = '''\
import keras

REGISTRY = {
    "sgd": lambda lr: keras.optimizers.SGD(lr, momentum=0.9),
    "adam_amp": lambda lr: keras.optimizers.LossScaleOptimizer(keras.optimizers.Adam(lr)),
    "adam": keras.optimizers.Adam,
}


def get(name, lr):
    return REGISTRY[name](lr)
'''

TRAIN = '''\
import keras
import tensorflow as tf

import optimizers

keras.mixed_precision.set_global_policy("mixed_float16")
model = keras.Sequential([keras.Input((8,)), keras.layers.Dense(16), keras.layers.Dense(1, dtype="float32")])
opt = keras.optimizers.LossScaleOptimizer(optimizers.get(KEY, 1e-3))


@tf.function
def step(x, y):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(x) - y))
        scaled = opt.scale_loss(loss)
    grads = tape.gradient(scaled, model.trainable_variables)
    opt.apply(grads, model.trainable_variables)
'''


def _findings(tmp_path: Path, key: str) -> list:
    write_files(tmp_path, {"pyproject.toml": "", "optimizers.py": OPTIMIZERS,
                           "train.py": TRAIN.replace("KEY", key)})
    return reported(run_cli("check", "--no-cache", "--exit-zero", "--select", "MP205", ".", cwd=tmp_path).stdout)


def test_the_entry_a_literal_key_picks_is_wrapped_already(tmp_path: Path) -> None:
    assert _findings(tmp_path, '"adam_amp"') == [("train.py", 8, "MP205")]


@pytest.mark.parametrize("key", ['"sgd"', '"adam"', "args.optimizer", '"missing"'])
def test_a_plain_entry_or_a_key_not_known_is_silent(tmp_path: Path, key: str) -> None:
    assert _findings(tmp_path, key) == []
