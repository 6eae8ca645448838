"""Issue #24, versions from evidence: a module that spells nothing of its Keras generation
runs in the programs that set the policy governing it, so what those programs spell (Keras 3's
``keras.config``, or ``TF_USE_LEGACY_KERAS`` making ``tf.keras`` Keras 2) is its generation."""

import json

from helpers import run_cli, write_files

STEPS = """import tensorflow as tf


def make_train_step(model, optimizer, loss_fn):
    def train_step(x, y):
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
            scaled = optimizer.{scale}(loss)
        grads = tape.gradient(scaled, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss
    return train_step
"""
KERAS3_MAIN = """import keras
from steps import make_train_step

keras.config.set_dtype_policy("mixed_float16")
model = keras.Sequential([keras.Input((12,)), keras.layers.Dense(3, dtype="float32")])
optimizer = keras.optimizers.LossScaleOptimizer(keras.optimizers.RMSprop(1e-3))
step = make_train_step(model, optimizer, keras.losses.MeanSquaredError())
"""
LEGACY_MAIN = """import os
os.environ["TF_USE_LEGACY_KERAS"] = "1"
import tensorflow as tf
from steps import make_train_step

tf.keras.mixed_precision.set_global_policy("mixed_float16")
model = tf.keras.Sequential([tf.keras.layers.Dense(3, dtype="float32")])
optimizer = tf.keras.mixed_precision.LossScaleOptimizer(tf.keras.optimizers.SGD())
step = make_train_step(model, optimizer, tf.keras.losses.MeanSquaredError())
"""
PLAIN_MAIN = LEGACY_MAIN.replace('import os\nos.environ["TF_USE_LEGACY_KERAS"] = "1"\n', "")


def _mp207(folder, cache=False):
    args = ["check", "--output-format", "json", "--select", "MP207"] + ([] if cache else ["--no-cache"]) + ["."]
    result = run_cli(*args, cwd=folder)
    assert result.returncode in (0, 1), result.stderr
    return [(f["path"], f["line"], f["message"]) for f in json.loads(result.stdout)]


def _project(folder, scale, **mains):
    write_files(folder, {"pyproject.toml": "[project]\nname = 'p'\n", "steps.py": STEPS.format(scale=scale),
                         **{f"{name}.py": text for name, text in mains.items()}})


def test_a_keras3_program_makes_the_keras2_method_of_its_module_a_crash(tmp_path):
    _project(tmp_path, "get_scaled_loss", main=KERAS3_MAIN)
    found = _mp207(tmp_path)
    assert [(path, line) for path, line, _ in found] == [("steps.py", 8)]
    assert "the policy that governs it is set in main.py:4, which uses keras.config" in found[0][2]


def test_a_program_on_legacy_keras_makes_scale_loss_a_crash(tmp_path):
    _project(tmp_path, "scale_loss", main=LEGACY_MAIN)
    found = _mp207(tmp_path)
    assert [(path, line) for path, line, _ in found] == [("steps.py", 8)]
    assert "which uses TF_USE_LEGACY_KERAS" in found[0][2]


def test_a_program_that_spells_neither_generation_says_nothing(tmp_path):
    _project(tmp_path, "get_scaled_loss", main=PLAIN_MAIN)
    assert _mp207(tmp_path) == []


def test_programs_that_disagree_leave_the_generation_unknown(tmp_path):
    _project(tmp_path, "get_scaled_loss", main=KERAS3_MAIN, legacy=LEGACY_MAIN)
    assert _mp207(tmp_path) == []


def test_the_modules_own_spelling_comes_first(tmp_path):
    _project(tmp_path, "get_scaled_loss", main=KERAS3_MAIN)
    steps = tmp_path / "steps.py"
    steps.write_text("import tf_keras\n" + steps.read_text())
    assert _mp207(tmp_path) == []


def test_a_cached_result_follows_the_program_file(tmp_path):
    _project(tmp_path, "get_scaled_loss", main=KERAS3_MAIN)
    assert len(_mp207(tmp_path, cache=True)) == 1
    (tmp_path / "main.py").write_text(KERAS3_MAIN.replace('keras.config.set_dtype_policy("mixed_float16")',
                                                          'keras.mixed_precision.set_global_policy("mixed_float16")')
                                      .replace("keras.optimizers.LossScaleOptimizer", "keras.mixed_precision.LossScaleOptimizer"))
    assert _mp207(tmp_path, cache=True) == []


def test_a_notebook_program_counts_by_its_code_cells(tmp_path):
    cells = [{"cell_type": "markdown", "metadata": {}, "source": ["# keras.config is not code here\n"]},
             {"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [],
              "source": KERAS3_MAIN.splitlines(keepends=True)}]
    notebook = {"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    _project(tmp_path, "get_scaled_loss")
    (tmp_path / "train.ipynb").write_text(json.dumps(notebook))
    found = _mp207(tmp_path)
    assert [(path, line) for path, line, _ in found] == [("steps.py", 8)]
    assert "set in train.ipynb:cell 2:4, which uses keras.config" in found[0][2]
