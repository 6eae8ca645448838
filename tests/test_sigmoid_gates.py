"""MP102 reports a library model's 16-bit sigmoid output (probabilities go to its
users' losses as they are), but not a Sequential built into an attribute of a model
class and called by it: that sigmoid is a gate of the block (a TFT variable selection,
a detector's quality predictor), not a whole model's output."""

from __future__ import annotations

from pathlib import Path

from helpers import reported, run_cli, write_files

BASE = """\
import tensorflow as tf


class BaseModel(tf.keras.Model):
    pass
"""

SELECTOR = """\
import tensorflow as tf
from tensorflow.keras.layers import Dense

from .base import BaseModel


class Selector(BaseModel):
    def __init__(self, units):
        super().__init__()
        self.selection = tf.keras.Sequential([
            Dense(units, activation="relu"),
            Dense(units, activation="sigmoid"),
        ])

    def call(self, x):
        return x * self.selection(x)


def segmenter():
    inputs = tf.keras.Input((32,))
    outputs = Dense(1, activation="sigmoid")(Selector(32)(inputs))
    return tf.keras.Model(inputs, outputs)
"""


def test_a_gate_stored_on_the_instance_is_silent_and_the_whole_models_output_is_not(tmp_path: Path) -> None:
    write_files(tmp_path, {"pyproject.toml": '[project]\nname = "vslib"\n', "vslib/__init__.py": "",
                           "vslib/base.py": BASE, "vslib/selector.py": SELECTOR})
    found = reported(run_cli("check", "--no-cache", "--exit-zero", "--select", "MP102", ".", cwd=tmp_path).stdout)
    assert found == [("vslib/selector.py", 21, "MP102")]
