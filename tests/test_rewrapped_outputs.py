"""A model a builder returns, rewrapped with float32 layers on its outputs before it is
trained (``keras.Model(model.inputs, [Activation("linear", dtype="float32")(o) for o in
model.outputs])``): the trained model's outputs are float32, so the builder's own 16-bit
output is no MP102."""

from __future__ import annotations

from helpers import outcome, run_cli, write_files

BUILD = ("import keras\n\n\n"
         "def build():\n"
         "    inputs = keras.Input((8,))\n"
         "    x = keras.layers.Dense(16, activation='relu')(inputs)\n"
         "    outputs = keras.layers.Dense(1)(x)\n"
         "    return keras.Model(inputs, outputs)\n")
TRAIN = ("import keras\n"
         "from build import build\n\n"
         "keras.mixed_precision.set_global_policy('mixed_float16')\n"
         "model = build()\n"
         "REWRAP\n"
         "model.compile(loss='mse')\n"
         "model.fit(None, None)\n")


def _found(tmp_path, rewrap):
    write_files(tmp_path, {"pyproject.toml": "[project]\nname = 'p'\n", "build.py": BUILD,
                           "train.py": TRAIN.replace("REWRAP", rewrap)})
    return outcome(run_cli("check", "--no-cache", ".", cwd=tmp_path))[1]


def test_outputs_rewrapped_in_float32_are_not_the_builders_16_bit_output(tmp_path):
    each = ("outputs = [keras.layers.Activation('linear', dtype='float32')(o) for o in model.outputs]\n"
            "model = keras.Model(model.inputs, outputs)")
    assert _found(tmp_path, each) == []
    numbered = ("outputs = [keras.layers.Activation('linear', dtype='float32', name=f'o{i}')(o)"
                " for i, o in enumerate(model.outputs)]\n"
                "model = keras.Model(model.inputs, outputs)")
    assert _found(tmp_path, numbered) == []
    single = "model = keras.Model(model.input, keras.layers.Activation('linear', dtype='float32')(model.output))"
    assert _found(tmp_path, single) == []


def test_a_model_trained_as_built_or_rewrapped_in_16_bits_keeps_its_finding(tmp_path):
    assert _found(tmp_path, "pass") == [("build.py", 7, "MP102")]
    sixteen = ("outputs = [keras.layers.Activation('linear')(o) for o in model.outputs]\n"
               "model = keras.Model(model.inputs, outputs)")
    assert ("build.py", 7, "MP102") in _found(tmp_path, sixteen)
