"""MP504 in Keras 3 code that imports only ``keras``: its tensors are TensorFlow's where
the project requires TensorFlow (Keras 3's default backend) and the file picks no other,
and a Keras 3 variable operand converts the other side, so ``x32 * self.scale`` runs."""

import json

import helpers

LAYERS = """import os
import keras
from keras import layers, ops, random
{backend}

class StochasticDepth(layers.Layer):
    def __init__(self, rate, **kwargs):
        super().__init__(**kwargs)
        self.rate = rate

    def call(self, x, training=None):
        if training:
            keep = 1 - self.rate
            r = ops.floor(keep + random.uniform((ops.shape(x)[0], 1), 0, 1))
            return (x / keep) * r
        return x


class RMSNorm(layers.Layer):
    def build(self, shape):
        self.scale = self.add_weight(shape=(shape[-1],), initializer="ones")

    def call(self, inputs):
        x = ops.cast(inputs, "float32")
        n = x / ops.sqrt(ops.mean(ops.square(x), axis=-1, keepdims=True) + 1e-6)
        n = n * {scale}
        return ops.cast(n, inputs.dtype)
"""


def check(tmp_path, requirements="tensorflow>=2.16.1\nkeras>=3\n", backend="", scale="self.scale"):
    files = {
        "pyproject.toml": "[project]\nname = 'pkg'\n",
        "pkg/__init__.py": "",
        "pkg/blocks.py": LAYERS.format(backend=backend, scale=scale),
    }
    if requirements:
        files["requirements.txt"] = requirements
    folder = helpers.write_files(tmp_path, files)
    result = helpers.run_cli("check", "--select", "MP504", "--output-format", "json", "--no-cache", ".",
                             cwd=folder)
    assert result.returncode in (0, 1), result.stderr
    return [(f["line"], f["message"]) for f in json.loads(result.stdout)]


def test_a_project_requiring_tensorflow_runs_keras_3_code_on_tensorflow_tensors(tmp_path):
    [(line, message)] = check(tmp_path)
    assert line == 15  # the multiply by the float32 random tensor
    assert "TensorFlow is Keras 3's default backend" in message
    assert "tensorflow>=2.16.1 in requirements.txt:1" in message
    assert "random.uniform" in message


def test_silent_without_tensorflow_or_on_another_backend(tmp_path):
    # nothing says the tensors are TensorFlow's: JAX and torch promote
    assert check(tmp_path / "a", requirements="") == []
    assert check(tmp_path / "b", requirements="keras>=3\njax\n") == []
    # the file chooses JAX itself
    assert check(tmp_path / "c", backend='os.environ["KERAS_BACKEND"] = "jax"') == []


def test_a_keras_3_variable_converts_the_other_operand(tmp_path):
    # ``n * self.scale`` runs: the variable converts the float32 side to its dtype;
    # the same weight read as a 16-bit tensor first meets the float32 one and fails
    assert [line for line, _ in check(tmp_path / "a")] == [15]
    lines = [line for line, _ in check(tmp_path / "b", scale="ops.cast(self.scale, inputs.dtype)")]
    assert lines == [15, 26]
