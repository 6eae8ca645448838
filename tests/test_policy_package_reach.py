"""Issue #24: each Keras package keeps its own global policy. A trainer that sets the policy
through ``keras`` governs no layer of a model module built from ``tf_keras`` (MP406 reports the
split at the setter), so that module's code is not judged as 16-bit; a setter of the same
package, or a module that also reads ``keras``, still is."""

import json

from helpers import run_cli, write_files

MODEL = """import tensorflow as tf, {package}


def build(n):
    inputs = {package}.Input((8,))
    x = {package}.layers.Dense(16, activation="relu")(inputs)
    outputs = {package}.layers.Dense(n, activation="softmax")(x)
    return {package}.Model(inputs, outputs)
"""
TRAIN = """import {setter}
from model import build

{setter_name}.mixed_precision.set_global_policy("mixed_float16")
model = build(3)
model.compile(optimizer="adam", loss="categorical_crossentropy")
"""


def _found(folder, package, setter, extra=""):
    setter_name = setter.split(" as ")[-1]
    write_files(folder, {"requirements.txt": "tensorflow==2.16.1\n",
                         "model.py": MODEL.format(package=package) + extra,
                         "train.py": TRAIN.format(setter=setter, setter_name=setter_name)})
    result = run_cli("check", "--output-format", "json", "--no-cache", "--select", "MP101,MP406", ".", cwd=folder)
    assert result.returncode in (0, 1), result.stderr
    return sorted((f["path"], f["rule"], f["line"]) for f in json.loads(result.stdout))


def test_a_keras_policy_does_not_reach_a_tf_keras_model_module(tmp_path):
    assert _found(tmp_path, "tf_keras", "keras") == [("train.py", "MP406", 4)]


def test_a_tf_keras_policy_reaches_a_tf_keras_model_module(tmp_path):
    assert _found(tmp_path, "tf_keras", "tf_keras") == [("model.py", "MP101", 7)]


def test_a_keras_policy_reaches_a_keras_model_module(tmp_path):
    assert _found(tmp_path, "keras", "keras") == [("model.py", "MP101", 7)]


def test_a_module_that_also_reads_keras_stays_judged(tmp_path):
    extra = "\n\nimport keras\nSCALE = keras.ops.ones(())\n"
    assert ("model.py", "MP101", 7) in _found(tmp_path, "tf_keras", "keras", extra)


def test_each_trainer_that_builds_a_shared_tf_keras_model_gets_its_own_split(tmp_path):
    trainer = """import sys, os
sys.path.append(os.path.dirname(os.path.abspath(os.path.dirname(__file__))))
import keras
from model.nets import build


def configure():
    keras.mixed_precision.set_global_policy("mixed_float16")
    return build(3)
"""
    write_files(tmp_path, {"requirements.txt": "tensorflow==2.16.1\n",
                           "model/__init__.py": "", "model/nets.py": MODEL.format(package="tf_keras"),
                           "a/__init__.py": "", "a/train.py": trainer, "b/train.py": trainer})
    result = run_cli("check", "--output-format", "json", "--no-cache", "--select", "MP101,MP406", ".", cwd=tmp_path)
    assert result.returncode in (0, 1), result.stderr
    found = sorted((f["path"], f["rule"], f["line"]) for f in json.loads(result.stdout))
    assert found == [("a/train.py", "MP406", 8), ("b/train.py", "MP406", 8)]
