"""Issue #24: the Keras generation of an optimizer is the package that builds it. A file that
imports tf_keras for its layers but builds ``keras.mixed_precision.LossScaleOptimizer`` (Keras 3
under TensorFlow 2.16) has ``scale_loss``; one built from tf_keras is Keras 2 whatever is pinned."""

import json

from helpers import run_cli, write_files
from mplint.semantic.versions import TF_KERAS_IMPORTED, Versions

STEP = """import tensorflow as tf, tf_keras
import keras

model = tf_keras.Sequential([tf_keras.layers.Dense(4, dtype="float32")])
optimizer = {lso}({inner}(1e-3))


@tf.function
def train_step(x, y):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(x) - y))
        scaled_loss = optimizer.{scale}(loss)
    grads = tape.gradient(scaled_loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
"""
KERAS3 = {"lso": "keras.mixed_precision.LossScaleOptimizer", "inner": "keras.optimizers.Adam"}
TF_KERAS = {"lso": "tf_keras.mixed_precision.LossScaleOptimizer", "inner": "tf_keras.optimizers.Adam"}
TF_DOT_KERAS = {"lso": "tf.keras.mixed_precision.LossScaleOptimizer", "inner": "tf.keras.optimizers.Adam"}


def _found(folder, text, pin="tensorflow==2.16.1"):
    write_files(folder, {"requirements.txt": pin + "\n", "train.py": text})
    result = run_cli("check", "--output-format", "json", "--no-cache", "--select", "MP206,MP207", ".", cwd=folder)
    assert result.returncode in (0, 1), result.stderr
    return sorted((f["rule"], f["line"]) for f in json.loads(result.stdout))


def test_a_keras_loss_scale_optimizer_beside_tf_keras_layers_is_keras3(tmp_path):
    assert _found(tmp_path, STEP.format(scale="scale_loss", **KERAS3)) == []


def test_a_keras_loss_scale_optimizer_beside_tf_keras_layers_has_no_keras2_methods(tmp_path):
    assert _found(tmp_path, STEP.format(scale="get_scaled_loss", **KERAS3)) == [("MP207", 12)]


def test_a_tf_keras_loss_scale_optimizer_is_keras2_whatever_tensorflow_is_pinned(tmp_path):
    assert _found(tmp_path, STEP.format(scale="scale_loss", **TF_KERAS)) == [("MP206", 14), ("MP207", 12)]


def test_tf_dot_keras_follows_the_pins_not_the_tf_keras_import(tmp_path):
    assert _found(tmp_path, STEP.format(scale="scale_loss", **TF_DOT_KERAS)) == []
    assert _found(tmp_path / "old", STEP.format(scale="scale_loss", **TF_DOT_KERAS),
                  pin="tensorflow==2.15.0") == [("MP206", 14), ("MP207", 12)]


def test_the_package_answer_skips_only_the_tf_keras_import():
    versions = Versions(legacy_keras=TF_KERAS_IMPORTED, installed=3)
    assert versions.keras().generation == 2
    assert versions.keras(package="keras").generation == 3
    assert versions.keras(package="tf_keras").generation == 2
    assert Versions(configured=3).keras(package="tf_keras").generation == 2
    switched = Versions(legacy_keras="the file sets TF_USE_LEGACY_KERAS", installed=3)
    assert switched.keras(package="tf.keras").generation == 2
