"""``cfg["head"]`` inside ``build(cfg)``, where every call passes ``CONFIG`` of another
module: the item is read where the argument is written, so the config's literal picks
the head (or the policy, the size) as it does when written ``CONFIG["head"]`` there."""

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


def _check(tmp_path, config, train=TRAIN):
    return [(path, line) for path, line, _ in helpers.project_findings(tmp_path, {
        "pyproject.toml": "[project]\nname = 'items'\n", "config.py": config, "heads.py": HEADS, "train.py": train,
    }, "MP101")]


def test_the_config_passed_picks_the_head(tmp_path):
    assert _check(tmp_path / "softmax", 'CONFIG = {"head": "multiclass", "classes": 20}\n') == [("train.py", 12)]
    assert _check(tmp_path / "float32", 'CONFIG = {"head": "regression", "classes": 20}\n') == []


def test_each_call_of_the_builder_is_judged_with_its_config(tmp_path):
    train = TRAIN.replace("from config import CONFIG", "from config import CONFIG, OTHER").replace(
        "    model.fit(None, None)\n", "    model.fit(None, None)\n    build_model(OTHER).fit(None, None)\n")

    def configs(first, second):
        return f'CONFIG = {{"head": "{first}", "classes": 20}}\nOTHER = {{"head": "{second}", "classes": 2}}\n'

    assert _check(tmp_path / "one", configs("regression", "multiclass"), train) == [("train.py", 12)]
    assert _check(tmp_path / "none", configs("regression", "regression"), train) == []


def test_negative_key_is_written_as_a_negative_literal():
    import libcst as cst

    from mplint.semantic.values import _int_literal

    assert cst.Module([]).code_for_node(_int_literal(-1)) == "-1"
    assert cst.Module([]).code_for_node(_int_literal(3)) == "3"
