"""``HEADS[config.TASK](x)``: an entry of another module's dict of heads, each a function
returning a layer's output, picked by a key this module knows (a constant of a config
module): only that entry is judged, in its module. Another key, or one known only at run
time, decides nothing else."""

import json

import helpers

HEADS = """from tensorflow import keras


def _category_head(x):
    return keras.layers.Dense(4, activation="softmax", dtype="float32")(x)


def _price_head(x):
    return keras.layers.Dense(1)(x)


HEADS = {"category": _category_head, "price": _price_head}
"""

TRAIN = """import sys

from tensorflow import keras

import config
from heads import HEADS

keras.mixed_precision.set_global_policy("mixed_float16")
inputs = keras.Input(shape=(8,))
x = keras.layers.Dense(64, activation="relu")(inputs)
outputs = HEADS[{key}](x)
model = keras.Model(inputs, outputs)
model.compile(optimizer="adam", loss="mse")
"""


def check(tmp_path, task, key="config.TASK"):
    folder = helpers.write_files(tmp_path, {
        "pyproject.toml": "[project]\nname = 'reg'\n",
        "config.py": f'TASK = "{task}"\n',
        "heads.py": HEADS,
        "train.py": TRAIN.format(key=key),
    })
    result = helpers.run_cli("check", "--select", "MP101,MP102", "--output-format", "json", "--no-cache", ".",
                             cwd=folder)
    assert result.returncode in (0, 1), result.stderr
    return [(f["path"], f["line"], f["rule"], f["message"]) for f in json.loads(result.stdout)]


def test_the_entry_the_key_picks_is_judged_in_its_module(tmp_path):
    [(path, line, rule, message)] = check(tmp_path / "a", "price")
    assert (path, line, rule) == ("train.py", 12, "MP102")
    assert "the Dense built at heads.py:9" in message and "HEADS['price']" in message


def test_silent_for_the_float32_entry_or_a_key_known_at_run_time(tmp_path):
    assert check(tmp_path / "a", "category") == []
    assert check(tmp_path / "b", "price", key="sys.argv[1]") == []
