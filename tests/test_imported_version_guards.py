"""A version test read from another module of the project (``from compat import
KERAS_3``, with ``KERAS_3 = int(keras.__version__.split(".")[0]) >= 3`` there) decides
the Keras generation of each arm, like one written in the file: each arm's
loss-scaling calls are right for the generation that takes it (MP207 silent)."""

import json

import helpers

STEPS = """import tensorflow as tf

from {module} import {name}


def apply_step(model, optimizer, x, y, loss_fn):
    with tf.GradientTape() as tape:
        loss = loss_fn(y, model(x, training=True))
        if {name}:
            scaled = optimizer.scale_loss(loss)
        else:
            scaled = optimizer.get_scaled_loss(loss)
    grads = tape.gradient(scaled, model.trainable_variables)
    if not {name}:
        grads = optimizer.get_unscaled_gradients(grads)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    return loss
"""

RUN = """import keras
import tensorflow as tf

from steps import apply_step

keras.mixed_precision.set_global_policy("mixed_float16")
model = keras.Sequential([keras.Input((8,)), keras.layers.Dense(64), keras.layers.Dense(1, dtype="float32")])
opt = keras.mixed_precision.LossScaleOptimizer(keras.optimizers.Adam(1e-3))
step = tf.function(lambda x, y: apply_step(model, opt, x, y, keras.losses.MeanSquaredError()))
"""


def check(tmp_path, compat, module="compat", name="KERAS_3"):
    folder = helpers.write_files(tmp_path, {
        "pyproject.toml": "[project]\nname = 'steps'\n",
        f"{module.replace('.', '/')}.py": compat,
        "steps.py": STEPS.format(module=module, name=name),
        "run.py": RUN,
    })
    result = helpers.run_cli("check", "--select", "MP207,MP206,MP203", "--output-format", "json", "--no-cache", ".",
                             cwd=folder)
    assert result.returncode in (0, 1), result.stderr
    return sorted((f["path"], f["line"], f["rule"]) for f in json.loads(result.stdout))


def test_an_imported_version_constant_decides_each_arm(tmp_path):
    assert check(tmp_path / "a", 'import keras\n\nKERAS_3 = int(keras.__version__.split(".")[0]) >= 3\n') == []
    # through another constant of that module
    assert check(tmp_path / "b", 'import tensorflow as tf\n\n_TF = tuple(int(p) for p in tf.__version__.split(".")[:2])\n'
                                 'IS_K3 = _TF >= (2, 16)\n', name="IS_K3") == []
    assert check(tmp_path / "c", 'import os\n\nLEGACY = os.environ.get("TF_USE_LEGACY_KERAS") == "1"\n'
                                 'KERAS_3 = not LEGACY\n') == []


def test_an_imported_constant_that_reads_no_version_decides_nothing(tmp_path):
    # a flag that says nothing of the generation: the Keras-2 arm is Keras 2 code run on Keras 3
    found = check(tmp_path / "a", "KERAS_3 = True\n")
    assert ("steps.py", 12, "MP207") in found
    found = check(tmp_path / "b", 'import os\n\nKERAS_3 = os.environ.get("USE_NEW") == "1"\n')
    assert ("steps.py", 12, "MP207") in found
