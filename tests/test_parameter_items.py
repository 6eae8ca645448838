"""``cfg["head"]`` inside ``build(cfg)``, where every call passes ``CONFIG`` of another
module: the item is read where the argument is written, so the config's literal picks
the head (or the policy, the size) as it does when written ``CONFIG["head"]`` there."""

import json

import helpers

HEADS = """from tensorflow.keras import layers


def _multiclass(n):
    return layers.Dense(n, activation="softmax")


def _regression(n):
    return layers.Dense(n, dtype="float32")


HEADS = {"multiclass": _multiclass, "regression": _regression}
"""

TRAIN = """import tensorflow as tf

from config import CONFIG
from heads import HEADS

tf.keras.mixed_precision.set_global_policy("mixed_float16")


def build_model(cfg):
    inputs = tf.keras.Input((128,))
    x = tf.keras.layers.Dense(64, activation="relu")(inputs)
    return tf.keras.Model(inputs, HEADS[cfg["head"]](cfg["classes"])(x))


def main():
    model = build_model(CONFIG)
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
    model.fit(None, None)


if __name__ == "__main__":
    main()
"""


def _check(tmp_path, head, train=TRAIN):
    folder = helpers.write_files(tmp_path, {
        "pyproject.toml": "[project]\nname = 'items'\n",
        "config.py": f'CONFIG = {{"head": "{head}", "classes": 20}}\n',
        "heads.py": HEADS,
        "train.py": train,
    })
    result = helpers.run_cli("check", "--select", "MP101,MP102", "--output-format", "json", "--no-cache", ".",
                             cwd=folder)
    assert result.returncode in (0, 1), result.stderr
    return [(f["path"], f["line"], f["rule"]) for f in json.loads(result.stdout)]


def test_the_config_passed_picks_the_head(tmp_path):
    assert _check(tmp_path / "softmax", "multiclass") == [("train.py", 12, "MP101")]
    assert _check(tmp_path / "float32", "regression") == []


def test_each_call_of_the_builder_is_judged_with_its_config(tmp_path):
    train = TRAIN.replace("from config import CONFIG", "from config import CONFIG, OTHER").replace(
        "    model.fit(None, None)\n", "    model.fit(None, None)\n    build_model(OTHER).fit(None, None)\n")

    def check(folder, first, second):
        folder = helpers.write_files(folder, {
            "pyproject.toml": "[project]\nname = 'items'\n",
            "config.py": f'CONFIG = {{"head": "{first}", "classes": 20}}\nOTHER = {{"head": "{second}", "classes": 2}}\n',
            "heads.py": HEADS,
            "train.py": train,
        })
        result = helpers.run_cli("check", "--select", "MP101", "--output-format", "json", "--no-cache", ".",
                                 cwd=folder)
        return [(f["path"], f["line"]) for f in json.loads(result.stdout)]

    assert check(tmp_path / "one", "regression", "multiclass") == [("train.py", 12)]
    assert check(tmp_path / "none", "regression", "regression") == []
