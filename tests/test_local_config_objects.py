"""A config object a script binds once to a local name and hands to a builder of another
module (``cfg = ModelConfig(); model = build_mlp(cfg)``) is that construction there: the
builder's ``activation=cfg.head_activation`` reads the class's default (or the keyword the
construction passes). Bound twice, or a field set after, it stays unknown."""

import helpers

CONFIG = """from dataclasses import dataclass


@dataclass
class ModelConfig:
    hidden_units: int = 256
    head_activation: str = "softmax"
"""

MODEL = """import tensorflow as tf


def build_mlp(cfg):
    inputs = tf.keras.Input((784,))
    x = tf.keras.layers.Dense(cfg.hidden_units, activation="relu")(inputs)
    outputs = tf.keras.layers.Dense(10, activation=cfg.head_activation)(x)
    return tf.keras.Model(inputs, outputs)
"""

TRAIN = """import argparse

import tensorflow as tf

from config import ModelConfig
from model import build_mlp


def main(argv=None):
    args = argparse.ArgumentParser().parse_args(argv)
    tf.keras.mixed_precision.set_global_policy("mixed_float16")
    {binding}
    model = build_mlp(cfg)
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
    model.fit(None, None)


if __name__ == "__main__":
    main()
"""


def _found(tmp_path, binding):
    files = {"pyproject.toml": "[project]\nname = 'local-config'\n", "config.py": CONFIG, "model.py": MODEL,
             "train.py": TRAIN.format(binding=binding)}
    return helpers.project_findings(tmp_path, files, "MP101")


def test_default_of_a_local_config_object(tmp_path):
    assert _found(tmp_path, "cfg = ModelConfig()") == [("model.py", 7, "MP101")]


def test_keyword_of_a_local_config_object(tmp_path):
    assert _found(tmp_path, 'cfg = ModelConfig(head_activation="sigmoid")') == []


def test_object_bound_twice_is_unknown(tmp_path):
    binding = 'cfg = ModelConfig(head_activation="sigmoid")\n    if args:\n        cfg = ModelConfig()'
    assert _found(tmp_path, binding) == []


def test_field_set_after_is_unknown(tmp_path):
    assert _found(tmp_path, 'cfg = ModelConfig()\n    cfg.head_activation = "sigmoid"') == []
