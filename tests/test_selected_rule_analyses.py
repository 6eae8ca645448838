"""A rule selected alone runs every analysis its analyses ask, so ``--select MP301`` on a
model that builds a class of another module answers as the whole run does, instead of an
internal error: ``ModelOutputs`` asks ``CustomLayers`` (its companion, named by path
because importing it would close a cycle) whether that class is a model."""

import helpers

from mplint.analysis.custom_layers import CustomLayers
from mplint.analysis.models import ModelOutputs
from mplint.rule.check import all_requirements

CONFIG = """from dataclasses import dataclass


@dataclass
class ModelConfig:
    norm_eps: float = 1e-9
    head_act: str = "softmax"
    units: int = 100
    policy: str = "mixed_float16"


CFG = ModelConfig()
"""

MODEL = """import tensorflow as tf

from config import CFG, ModelConfig


class RMSNorm(tf.keras.layers.Layer):
    def __init__(self, eps=1e-6, **kwargs):
        super().__init__(**kwargs)
        self.eps = eps

    def call(self, x):
        return x * tf.math.rsqrt(tf.reduce_mean(tf.square(x), axis=-1, keepdims=True) + self.eps)


def build_const():
    inputs = tf.keras.Input((64,))
    x = RMSNorm(CFG.norm_eps)(inputs)
    x = tf.keras.layers.Dense(100)(x)
    return tf.keras.Model(inputs, tf.keras.layers.Dense(10, activation=CFG.head_act)(x))


def build_param(cfg):
    inputs = tf.keras.Input((64,))
    x = RMSNorm(cfg.norm_eps)(inputs)
    return tf.keras.Model(inputs, tf.keras.layers.Dense(10, activation="softmax")(x))


class Net(tf.keras.Model):
    def __init__(self, cfg):
        super().__init__()
        self.cfg = cfg
        self.norm = RMSNorm(self.cfg.norm_eps)
        self.head = tf.keras.layers.Dense(10, activation="softmax")

    def call(self, x):
        return self.head(self.norm(x))


def main():
    tf.keras.mixed_precision.set_global_policy("mixed_float16")
    local = ModelConfig(head_act="sigmoid", units=64)
    m1 = build_param(ModelConfig(units=64))
    m1.compile(optimizer="adam", loss="mse")
    m1.fit(None, None)
    m2 = Net(ModelConfig(norm_eps=1e-10))
    m2.compile(optimizer="adam", loss="mse")
    m2.fit(None, None)


if __name__ == "__main__":
    main()
"""


def test_model_outputs_brings_its_companion():
    assert CustomLayers in all_requirements(ModelOutputs)


def test_rule_selected_alone_checks_the_file(tmp_path):
    files = {"pyproject.toml": "[project]\nname = 'selected'\n", "config.py": CONFIG, "model.py": MODEL}
    for rule in ("MP301", "MP101", "MP504"):
        result = helpers.run_cli("check", "--select", rule, "--no-cache", ".", cwd=helpers.write_files(tmp_path / rule, files))
        assert "internal error" not in result.stderr + result.stdout, (rule, result.stderr)
        assert result.returncode in (0, 1), result.stderr
