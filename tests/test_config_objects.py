"""Values held by config objects: a field of a dataclass, attrs class, NamedTuple, plain
class or namespace, read through a module constant of another module (``CFG.norm_eps``),
a parameter every caller passes a construction to (``build(ModelConfig(units=64))``,
keyword overrides over the class's defaults), or ``self.cfg``. Each shape has its silent
twin: the field set anywhere in the program, an override that is not read, a ``**spread``."""

import pytest

import helpers

CONFIG = '''from dataclasses import dataclass


@dataclass
class ModelConfig:
    norm_eps: float = 1e-9
    head_act: str = "softmax"
    units: int = 100
    policy: str = "mixed_float16"


CFG = ModelConfig()
'''

MODEL = '''import tensorflow as tf

from config import CFG


class RMSNorm(tf.keras.layers.Layer):
    def __init__(self, eps=1e-6, **kwargs):
        super().__init__(**kwargs)
        self.eps = eps

    def call(self, x):
        return x * tf.math.rsqrt(tf.reduce_mean(tf.square(x), axis=-1, keepdims=True) + self.eps)


def build_const():
    inputs = tf.keras.Input((64,))
    x = RMSNorm(CFG.norm_eps)(inputs)
    x = tf.keras.layers.Dense(CFG.units)(x)
    return tf.keras.Model(inputs, tf.keras.layers.Dense(10, activation=CFG.head_act)(x))


def build_param(cfg):
    inputs = tf.keras.Input((64,))
    return tf.keras.Model(inputs, tf.keras.layers.Dense(10, activation=cfg.head_act)(inputs))


class Net(tf.keras.Model):
    def __init__(self, cfg):
        super().__init__()
        self.cfg = cfg
        self.head = tf.keras.layers.Dense(10, activation=self.cfg.head_act)

    def call(self, x):
        return self.head(x)
'''

TRAIN = '''import tensorflow as tf

from config import CFG, ModelConfig
from model import build_const, build_param, Net

tf.keras.mixed_precision.set_global_policy(CFG.policy)


def main():
    m1 = build_const()
    m1.compile(optimizer="adam", loss="mse")
    m1.fit(None, None)
    m2 = build_param(ModelConfig(units=64))
    m2.compile(optimizer="adam", loss="mse")
    m2.fit(None, None)
    m3 = Net(ModelConfig(norm_eps=1e-3))
    m3.compile(optimizer="adam", loss="mse")
    m3.fit(None, None)


if __name__ == "__main__":
    main()
'''

#: what every rule reads of the fields: the epsilon, the size, the heads
RULES = "MP101,MP301,MP502"
FOUND = [("model.py", 12, "MP502"), ("model.py", 18, "MP301"), ("model.py", 19, "MP101"),
         ("model.py", 24, "MP101"), ("model.py", 31, "MP101")]


def _check(tmp_path, config=CONFIG, model=MODEL, train=TRAIN, select=RULES):
    return sorted(helpers.project_findings(tmp_path, {
        "pyproject.toml": "[project]\nname = 'cfg'\n", "config.py": config, "model.py": model, "train.py": train,
    }, select))


def test_fields_of_a_config_object_reach_the_rules(tmp_path):
    assert _check(tmp_path) == FOUND


def test_the_policy_a_config_field_names_governs(tmp_path):
    """``set_global_policy(CFG.policy)``: float32 there silences every rule."""
    assert _check(tmp_path, CONFIG.replace('policy: str = "mixed_float16"', 'policy: str = "float32"')) == []


@pytest.mark.parametrize("header", [
    "from typing import NamedTuple\n\n\nclass ModelConfig(NamedTuple):",
    "import attr\n\n\n@attr.s(auto_attribs=True)\nclass ModelConfig:",
    "from dataclasses import dataclass, field\n\n\n@dataclass(frozen=True)\nclass ModelConfig:",
    "import attrs\n\n\n@attrs.frozen\nclass ModelConfig:",
])
def test_each_kind_of_config_class(tmp_path, header):
    config = CONFIG.replace("from dataclasses import dataclass\n\n\n@dataclass\nclass ModelConfig:", header)
    assert _check(tmp_path, config) == FOUND


def test_field_default_written_by_field_call(tmp_path):
    config = CONFIG.replace("from dataclasses import dataclass", "from dataclasses import dataclass, field") \
        .replace('head_act: str = "softmax"', 'head_act: str = field(default="softmax")')
    assert ("model.py", 19, "MP101") in _check(tmp_path, config)


def test_a_plain_class_and_a_namespace(tmp_path):
    plain = 'class Config:\n    norm_eps = 1e-9\n    head_act = "softmax"\n    units = 100\n    policy = "mixed_float16"\n' \
        '\n\nCFG = Config()\nModelConfig = None\n'
    train = TRAIN.replace("    m2 = build_param(ModelConfig(units=64))", "    m2 = build_param(CFG)") \
        .replace("    m3 = Net(ModelConfig(norm_eps=1e-3))", "    m3 = Net(CFG)")
    assert _check(tmp_path / "plain", plain, train=train) == FOUND
    namespace = 'import types\n\nCFG = types.SimpleNamespace(norm_eps=1e-9, head_act="softmax", units=100,' \
        ' policy="mixed_float16")\nModelConfig = None\n'
    assert _check(tmp_path / "namespace", namespace, train=train) == FOUND
    configdict = 'import ml_collections\n\nCFG = ml_collections.ConfigDict({"norm_eps": 1e-9, "head_act": "softmax",' \
        ' "units": 100, "policy": "mixed_float16"})\nModelConfig = None\n'
    assert _check(tmp_path / "configdict", configdict, train=train) == FOUND
    plain_dict = namespace.replace("types.SimpleNamespace(", "dict(")  # ``CFG.units`` of a dict: no such attribute
    assert _check(tmp_path / "dict", plain_dict, train=train) == []


def test_keyword_overrides_win_over_defaults(tmp_path):
    train = TRAIN.replace("ModelConfig(units=64)", 'ModelConfig(head_act="sigmoid")') \
        .replace("ModelConfig(norm_eps=1e-3)", 'ModelConfig(1e-3, "linear")')
    assert _check(tmp_path, train=train) == FOUND[:3]


@pytest.mark.parametrize("change", [
    ("ModelConfig(units=64)", "ModelConfig(head_act=choose())"),  # an override that is not read
    ("ModelConfig(units=64)", "ModelConfig(**overrides())"),  # a spread
    ("ModelConfig(units=64)", "make_config()"),  # no construction
])
def test_a_parameter_passed_what_is_not_read_is_unknown(tmp_path, change):
    found = _check(tmp_path, train=TRAIN.replace(*change))
    assert ("model.py", 24, "MP101") not in found and ("model.py", 19, "MP101") in found


def test_a_field_set_elsewhere_is_unknown(tmp_path):
    found = _check(tmp_path / "one", train=TRAIN.replace("def main():\n", "def main():\n    CFG.head_act = input()\n"))
    assert [f for f in found if f[2] == "MP101"] == []
    assert ("model.py", 12, "MP502") in found  # the other fields still read
    # ``setattr`` on any object but ``self``: any field may be set
    found = _check(tmp_path / "any", train=TRAIN.replace("def main():\n",
                                                          "def main():\n    setattr(CFG, 'head_act', input())\n"))
    assert found == []


def test_a_field_set_in_the_config_module_or_post_init_is_unknown(tmp_path):
    config = CONFIG + "CFG.units = 96\n"
    assert ("model.py", 18, "MP301") not in _check(tmp_path / "module", config)
    post = CONFIG.replace("\n\nCFG = ", "\n    def __post_init__(self):\n        self.units = 96\n\n\nCFG = ")
    assert ("model.py", 18, "MP301") not in _check(tmp_path / "post", post)


def test_the_policy_field_set_by_the_setter_is_unknown(tmp_path):
    train = TRAIN.replace("\n\ndef main():", "CFG.policy = input()\n\n\ndef main():")
    config = CONFIG.replace('policy: str = "mixed_float16"', 'policy: str = "float32"')
    assert _check(tmp_path, config, train=train, select="MP101") != []  # may be mixed: unknown, not float32


def test_replace_and_a_handed_object_in_one_file(tmp_path):
    """In one file: ``dataclasses.replace`` rebinds, a call of something the file does not
    define may change the object; a function of the file reads it."""
    model = MODEL.replace("from config import CFG", "from config import CFG, ModelConfig") + '''

def main():
    tf.keras.mixed_precision.set_global_policy("mixed_float16")
    cfg = ModelConfig(units=64)
    model = build_param(cfg)
    model.compile(optimizer="adam", loss="mse")
    model.fit(None, None)
'''
    train = "import model\n\nmodel.main()\n"
    assert ("model.py", 24, "MP101") in _check(tmp_path / "read", model=model, train=train, select="MP101")
    handed = model.replace("    model = build_param(cfg)", "    configure(cfg)\n    model = build_param(cfg)")
    assert ("model.py", 24, "MP101") not in _check(tmp_path / "handed", model=handed, train=train, select="MP101")
    replaced = model.replace("    model = build_param(cfg)",
                             "    cfg = dataclasses.replace(cfg, head_act=input())\n    model = build_param(cfg)")
    assert ("model.py", 24, "MP101") not in _check(tmp_path / "replaced", model="import dataclasses\n" + replaced,
                                                   train=train, select="MP101")
