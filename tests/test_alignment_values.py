"""MP301-MP303 follow a size to where it is decided: a dict literal read by key, a
flag's default, a functools.partial, a name bound on each arm of an if, a constant
of another module, a dataclass field, an attribute of self set once, each element of
a literal a loop runs over, a tuple unpacked, a pipeline handed to a training function,
a class attribute read through self or cls, a name a star import binds, an absl flag
defined in an imported module;
and stay silent where that value may not be the one that runs."""

import textwrap

import pytest

from helpers import fix, lint, reported, run_cli, write_files

RULES = ["MP301", "MP302", "MP303", "MP304"]
MIXED = 'import tensorflow as tf\nfrom tensorflow.keras import layers\n\ntf.keras.mixed_precision.set_global_policy("mixed_float16")\n'
HEADER = MIXED.count("\n")


def _lint(body, **overrides):
    return lint(MIXED + textwrap.dedent(body), *RULES, **overrides)


BAD = [
    # (id, body, (line in body, rule), words the message must hold, fixed body or None)
    ("dict-literal-by-key",
     'CONFIG = {"hidden": 100, "classes": 10}\nh = layers.Dense(CONFIG["hidden"])\n',
     (2, "MP301"), "units=100 (from CONFIG)", None),
    ("dict-call-by-key",
     'CONFIG = dict(units=100, classes=10)\nh = layers.Dense(CONFIG["units"])\n',
     (2, "MP301"), "units=100 (from CONFIG)", None),
    ("nested-config-dict",
     'CONFIG = {"model": {"hidden": 100}, "train": dict(batch_size=60)}\nh = layers.Dense(CONFIG["model"]["hidden"])\n',
     (2, "MP301"), "units=100 (from CONFIG)", None),
    ("nested-config-dict-call",
     'CONFIG = {"model": {"hidden": 128}, "train": dict(batch_size=60)}\n'
     'model.fit(x, y, batch_size=CONFIG["train"]["batch_size"])\n',
     (2, "MP303"), "batch_size=60 (from CONFIG)", None),
    ("dataclass-built-at-the-call",
     "from dataclasses import dataclass, field\n@dataclass\nclass Config:\n    units: int = 128\n    sizes: list = field(default_factory=lambda: [100])\n"
     "def build(cfg):\n    return layers.Dense(cfg.units)\nm = build(Config(units=100))\n",
     (8, "MP301"), "units=100 (passed to build() as 'cfg')", None),
    ("argparse-default",
     'import argparse\np = argparse.ArgumentParser()\np.add_argument("--batch-size", type=int, default=100)\n'
     "args = p.parse_args()\nmodel.fit(x, y, batch_size=args.batch_size)\n",
     (5, "MP303"), "batch_size=100 (the default of --batch-size)", None),
    ("argparse-namespace-passed-to-a-function",
     'import argparse\np = argparse.ArgumentParser()\np.add_argument("--units", type=int, default=300)\n'
     "def build(opts):\n    return layers.Dense(opts.units)\n\nargs = p.parse_args()\nbuild(args)\n",
     (5, "MP301"), "units=300 (the default of --units)", None),
    ("absl-flag-default",
     'from absl import flags\nflags.DEFINE_integer("units", 100, "hidden units")\nFLAGS = flags.FLAGS\n'
     "h = layers.Dense(FLAGS.units)\n",
     (4, "MP301"), "units=100 (the default of --units)", None),
    ("click-option-default",
     'import click\n@click.command()\n@click.option("--filters", default=30)\ndef main(filters):\n'
     "    return layers.Conv2D(filters, 3)\n",
     (5, "MP302"), "filters=30 (the default of --filters)", None),
    ("partial-holds-the-size",
     'import functools\nHidden = functools.partial(layers.Dense, 100, activation="relu")\nh = Hidden()\n',
     (3, "MP301"), "units=100 (set by its functools.partial)", None),
    ("partial-size-at-the-call",
     "from functools import partial\nConv = partial(layers.Conv2D, kernel_size=3, padding=\"same\")\n"
     "a = Conv(48)\nb = Conv(30)\n",
     (4, "MP302"), "filters=30 is", "from functools import partial\nConv = partial(layers.Conv2D, kernel_size=3, "
     "padding=\"same\")\na = Conv(48)\nb = Conv(32)\n"),
    ("arms-of-one-if",
     "if use_large:\n    units = 500\nelse:\n    units = 64\nh = layers.Dense(units)\n",
     (5, "MP301"), "units=500 (from units, when use_large)", None),
    ("gpu-arm",
     'if tf.config.list_physical_devices("GPU"):\n    units = 500\nelse:\n    units = 60\nh = layers.Dense(units)\n',
     (5, "MP301"), "when tf.config.list_physical_devices", None),
    ("loader-named-for-training",
     'train_ds = tf.keras.utils.image_dataset_from_directory("d", image_size=(64, 64), batch_size=20)\n',
     (1, "MP303"), "batch_size=20", 'train_ds = tf.keras.utils.image_dataset_from_directory("d", image_size=(64, 64), '
     "batch_size=24)\n"),
    ("loader-training-subset",
     'ds = tf.keras.utils.image_dataset_from_directory("d", subset="training", validation_split=0.2, seed=1, '
     "batch_size=20)\n",
     (1, "MP303"), "batch_size=20", None),
    ("dataclass-field-default",
     "import dataclasses\n@dataclasses.dataclass\nclass Config:\n    hidden: int = 100\n    classes: int = 10\n"
     "cfg = Config()\nh = layers.Dense(cfg.hidden)\n",
     (7, "MP301"), "units=100", None),
    ("dataclass-field-given-at-the-call",
     "from dataclasses import dataclass, field\n@dataclass(frozen=True)\nclass Config:\n    hidden: int = 64\n"
     "    width: int = field(default=100)\ncfg = Config(100, width=32)\nh = layers.Dense(cfg.hidden)\n"
     "c = layers.Conv2D(cfg.width, 3)\n",
     (7, "MP301"), "units=100", None),
    ("self-attribute-set-once",
     "class FFN(tf.keras.layers.Layer):\n    def __init__(self, width=100, **kwargs):\n"
     "        super().__init__(**kwargs)\n        self.width = width\n"
     "        self.up = layers.Dense(self.width)\n",
     (5, "MP301"), "units=100", None),
    ("class-attribute-read-through-self",
     "class Stem(tf.keras.layers.Layer):\n    width = 20\n    def __init__(self, **kwargs):\n"
     "        super().__init__(**kwargs)\n        self.conv = layers.Conv2D(self.width, 3)\n",
     (5, "MP302"), "filters=20 (from width)", None),
    ("class-attribute-of-a-base",
     "class Base(tf.keras.layers.Layer):\n    hidden = 100\n    def build(self, shape):\n"
     "        self.up = layers.Dense(self.hidden)\nclass Head(Base):\n    pass\n",
     (4, "MP301"), "units=100 (from hidden)", None),
    ("class-attribute-through-cls",
     "class Blocks:\n    filters = 36\n    @classmethod\n    def conv(cls):\n        return layers.Conv2D(cls.filters, 3)\n",
     (5, "MP302"), "filters=36", None),
    ("class-attribute-of-the-built-class",
     "class Narrow(tf.keras.layers.Layer):\n    units = 44\n    def build(self, shape):\n"
     "        self.up = layers.Dense(self.units)\nclass Wide(Narrow):\n    units = 64\nlayer = Narrow()\n",
     (4, "MP301"), "units=44", None),
    ("loop-over-a-literal",
     "x = inputs\nfor filters in (32, 64, 100):\n    x = layers.Conv2D(filters, 3)(x)\n",
     (3, "MP302"), "filters=100 (from filters)", None),
    ("tuple-unpacked",
     "hidden, depth = 100, 2\nx = layers.Bidirectional(layers.LSTM(hidden))(inputs)\n",
     (2, "MP301"), "LSTM units=100 (from hidden)", None),
    ("pipeline-handed-to-a-training-function",
     "def train(model, ds, batch_size=60):\n    model.fit(ds.batch(batch_size))\n"
     "train(model, tf.data.Dataset.from_tensor_slices(features))\n",
     (2, "MP303"), "Dataset.batch batch_size=60 (default of 'batch_size')",
     "def train(model, ds, batch_size=64):\n    model.fit(ds.batch(batch_size))\n"
     "train(model, tf.data.Dataset.from_tensor_slices(features))\n"),
    # a module-level dict of known keys spread into the constructor
    ("spread-dict-call",
     "CONV = dict(filters=30, kernel_size=3)\nh = layers.Conv2D(**CONV)\n",
     (2, "MP302"), "Conv2D filters=30 (from **CONV)",
     "CONV = dict(filters=32, kernel_size=3)\nh = layers.Conv2D(**CONV)\n"),
    ("spread-dict-literal",
     'HEAD_KW = {"units": 100, "use_bias": False}\nh = layers.Dense(**HEAD_KW)\n',
     (2, "MP301"), "Dense units=100 (from **HEAD_KW)", None),
    ("spread-dict-in-a-function",
     'CONV = {"filters": 30, "kernel_size": 3}\ndef block(x):\n    return layers.Conv2D(**CONV)(x)\n',
     (3, "MP302"), "Conv2D filters=30 (from **CONV)", None),
]


@pytest.mark.parametrize("body,where,words,fixed", [b[1:] for b in BAD], ids=[b[0] for b in BAD])
def test_the_value_is_followed_to_where_it_is_decided(body, where, words, fixed):
    findings = _lint(body)
    assert [(f.line - HEADER, f.rule) for f in findings] == [where], findings
    assert words in findings[0].message
    if fixed is not None:
        assert fix(MIXED + body, *RULES)[len(MIXED):] == fixed


GOOD = [
    # ``**spread`` whose value at the call may not be the literal's
    ("spread-dict-written-to",
     'CONV = dict(filters=30, kernel_size=3)\nCONV["filters"] = 32\nh = layers.Conv2D(**CONV)\n'),
    ("spread-dict-updated", "CONV = dict(filters=30, kernel_size=3)\nCONV.update(cfg)\nh = layers.Conv2D(**CONV)\n"),
    ("spread-dict-rebound-on-an-arm",
     "CONV = dict(filters=30)\nif big:\n    CONV = dict(filters=64)\nh = layers.Conv2D(kernel_size=3, **CONV)\n"),
    ("spread-beside-an-unreadable-spread", 'CONV = {"filters": 30}\nh = layers.Conv2D(kernel_size=3, **CONV, **extra)\n'),
    ("spread-parameter", "def block(x, conv):\n    return layers.Conv2D(**conv)(x)\n"),
    ("spread-float32-dtype", 'CONV = dict(filters=30, kernel_size=3, dtype="float32")\nh = layers.Conv2D(**CONV)\n'),
    ("spread-aligned", "CONV = dict(filters=32, kernel_size=3)\nh = layers.Conv2D(**CONV)\n"),
    ("dict-written-to", 'CONFIG = {"hidden": 100}\nCONFIG["hidden"] = 128\nh = layers.Dense(CONFIG["hidden"])\n'),
    ("dict-updated", 'CONFIG = {"hidden": 100}\nCONFIG.update(overrides)\nh = layers.Dense(CONFIG["hidden"])\n'),
    ("dict-spread", 'CONFIG = {**BASE, "hidden": 100}\nh = layers.Dense(CONFIG["hidden"])\n'),
    ("dict-unknown-key", 'CONFIG = {"a": 100, "b": 64}\nh = layers.Dense(CONFIG[name])\n'),
    ("dict-aligned", 'CONFIG = {"hidden": 128}\nh = layers.Dense(CONFIG["hidden"])\n'),
    ("dict-call-written-to-with-an-unknown-key",
     'CONFIG = dict(units=100)\nCONFIG[name] = 64\nh = layers.Dense(CONFIG["units"])\n'),
    ("dict-call-unpacking", 'CONFIG = dict(**base, units=100)\nh = layers.Dense(CONFIG["units"])\n'),
    ("dict-call-of-a-mapping", 'CONFIG = dict(pairs, units=100)\nh = layers.Dense(CONFIG["units"])\n'),
    ("dict-shadowed", 'dict = OrderedConfig\nCONFIG = dict(units=100)\nh = layers.Dense(CONFIG["units"])\n'),
    ("nested-dict-written-to",
     'CONFIG = {"model": {"hidden": 100}}\nCONFIG["model"]["hidden"] = 128\nh = layers.Dense(CONFIG["model"]["hidden"])\n'),
    ("nested-dict-updated",
     'CONFIG = {"model": {"hidden": 100}}\nCONFIG["model"].update(o)\nh = layers.Dense(CONFIG["model"]["hidden"])\n'),
    ("dataclass-at-the-call-field-default-aligned",
     "from dataclasses import dataclass, field\n@dataclass\nclass Config:\n    units: int = 128\n    sizes: list = field(default_factory=lambda: [100])\n" "def build(cfg):\n    return layers.Dense(cfg.units)\nm = build(Config())\n"),
    ("dataclass-at-the-call-default-factory",
     "from dataclasses import dataclass, field\n@dataclass\nclass Config:\n    units: int = 128\n    sizes: list = field(default_factory=lambda: [100])\n" "def build(cfg):\n    return layers.Dense(cfg.sizes[0])\nm = build(Config())\n"),
    ("dataclass-at-the-call-and-an-unknown-caller",
     "from dataclasses import dataclass, field\n@dataclass\nclass Config:\n    units: int = 128\n    sizes: list = field(default_factory=lambda: [100])\n" "def build(cfg):\n    return layers.Dense(cfg.units)\nm = build(Config(units=100))\nn = build(loaded)\n"),
    ("dataclass-at-the-call-field-written",
     "from dataclasses import dataclass, field\n@dataclass\nclass Config:\n    units: int = 128\n    sizes: list = field(default_factory=lambda: [100])\n" "def build(cfg):\n    cfg.units = 128\n    return layers.Dense(cfg.units)\nm = build(Config(units=100))\n"),
    ("dataclass-at-the-call-unpacked",
     "from dataclasses import dataclass, field\n@dataclass\nclass Config:\n    units: int = 128\n    sizes: list = field(default_factory=lambda: [100])\n" "def build(cfg):\n    return layers.Dense(cfg.units)\nm = build(Config(**overrides, units=100))\n"),
    ("nested-dict-of-a-name", 'CONFIG = {"model": MODEL}\nh = layers.Dense(CONFIG["model"]["hidden"])\n'),
    ("flag-without-default",
     'import argparse\np = argparse.ArgumentParser()\np.add_argument("--units", type=int, required=True)\n'
     "args = p.parse_args()\nh = layers.Dense(args.units)\n"),
    ("flag-rewritten",
     'import argparse\np = argparse.ArgumentParser()\np.add_argument("--batch-size", type=int, default=100)\n'
     "args = p.parse_args()\nargs.batch_size *= 8\nmodel.fit(x, y, batch_size=args.batch_size)\n"),
    ("flag-set-defaults",
     'import argparse\np = argparse.ArgumentParser()\np.add_argument("--units", type=int, default=100)\n'
     "p.set_defaults(units=128)\nargs = p.parse_args()\nh = layers.Dense(args.units)\n"),
    ("flag-defined-twice",
     'import argparse\np = argparse.ArgumentParser()\np.add_argument("--units", type=int, default=100)\n'
     'q = argparse.ArgumentParser()\nq.add_argument("--units", type=int, default=128)\n'
     "args = p.parse_args()\nh = layers.Dense(args.units)\n"),
    ("not-a-flag-object", "h = layers.Dense(cfg.units)\n"),
    ("flag-names-a-class-count",
     'import argparse\np = argparse.ArgumentParser()\np.add_argument("--num-classes", type=int, default=100)\n'
     "args = p.parse_args()\nh = layers.Dense(args.num_classes)\n"),
    ("dict-key-names-a-class-count", 'CONFIG = {"num_classes": 100}\nh = layers.Dense(CONFIG["num_classes"])\n'),
    ("partial-float32-dtype",
     'import functools\nHead = functools.partial(layers.Dense, 100, dtype="float32")\nh = Head()\n'),
    ("partial-of-a-function", "import functools\nmake = functools.partial(build_block, 100)\nh = make()\n"),
    ("partial-star-args", "import functools\nConv = functools.partial(layers.Conv2D, *sizes)\nc = Conv(3)\n"),
    ("default-rebound-under-a-condition",
     "units = 64\nif debug:\n    units = 50\nh = layers.Dense(units)\n"),
    ("arm-without-gpu",
     'if tf.config.list_physical_devices("GPU"):\n    units = 512\nelse:\n    units = 100\nh = layers.Dense(units)\n'),
    ("arm-bound-by-a-loop", "if big:\n    units = 500\nelse:\n    for units in (64, 100):\n        pass\n"
                            "h = layers.Dense(units)\n"),
    ("loader-named-for-validation",
     'val_ds = tf.keras.utils.image_dataset_from_directory("d", image_size=(64, 64), batch_size=20)\n'),
    ("loader-validation-subset",
     'train_ds = tf.keras.utils.image_dataset_from_directory("d", subset="validation", validation_split=0.2, '
     "seed=1, batch_size=20)\n"),
    # a dataclass field is followed only where the instance holds what the class says
    ("dataclass-field-written", "from dataclasses import dataclass\n@dataclass\nclass C:\n    hidden: int = 100\n"
                                "cfg = C()\ncfg.hidden = 128\nh = layers.Dense(cfg.hidden)\n"),
    ("dataclass-post-init", "from dataclasses import dataclass\n@dataclass\nclass C:\n    hidden: int = 100\n"
                            "    def __post_init__(self):\n        self.hidden = 128\ncfg = C()\nh = layers.Dense(cfg.hidden)\n"),
    ("dataclass-derived", "from dataclasses import dataclass\n@dataclass\nclass C(Base):\n    hidden: int = 100\n"
                          "cfg = C()\nh = layers.Dense(cfg.hidden)\n"),
    ("dataclass-unpacked-arguments", "from dataclasses import dataclass\n@dataclass\nclass C:\n    hidden: int = 100\n"
                                     "cfg = C(**overrides)\nh = layers.Dense(cfg.hidden)\n"),
    ("dataclass-default-factory", "from dataclasses import dataclass, field\n@dataclass\nclass C:\n"
                                  "    hidden: int = field(default_factory=lambda: 100)\ncfg = C()\nh = layers.Dense(cfg.hidden)\n"),
    ("plain-class-attribute", "class C:\n    hidden: int = 100\ncfg = C()\nh = layers.Dense(cfg.hidden)\n"),
    ("dataclass-given-an-aligned-size", "from dataclasses import dataclass\n@dataclass\nclass C:\n    hidden: int = 100\n"
                                        "cfg = C(hidden=128)\nh = layers.Dense(cfg.hidden)\n"),
    # an attribute of self is followed only where the class sets it once and no subclass does
    ("self-attribute-changed", "class A(tf.keras.layers.Layer):\n    def __init__(self, width=100):\n"
                               "        self.width = width\n        self.width += 4\n        self.up = layers.Dense(self.width)\n"),
    ("self-attribute-a-subclass-sets", "class B(tf.keras.layers.Layer):\n    def __init__(self, width=100):\n"
                                       "        self.width = width\n    def build(self, shape):\n"
                                       "        self.up = layers.Dense(self.width)\n"
                                       "class C(B):\n    def __init__(self):\n        super().__init__()\n        self.width = 128\n"),
    ("self-attribute-of-an-unknown-argument", "class D(tf.keras.layers.Layer):\n    def __init__(self, width):\n"
                                              "        self.w = width\n        self.up = layers.Dense(self.w)\nD(n)\n"),
    # a class attribute is followed through self/cls only while nothing else decides it
    ("class-attribute-overridden-in-the-built-subclass",
     "class Tower(tf.keras.layers.Layer):\n    units = 36\n    def build(self, shape):\n"
     "        self.up = layers.Dense(self.units)\nclass WideTower(Tower):\n    units = 64\nlayer = WideTower()\n"),
    ("class-attribute-overridden-nothing-built",
     "class Tower(tf.keras.layers.Layer):\n    units = 36\n    def build(self, shape):\n"
     "        self.up = layers.Dense(self.units)\nclass WideTower(Tower):\n    units = 64\n"),
    ("class-attribute-set-on-the-class", "class T(tf.keras.layers.Layer):\n    units = 36\n    def build(self, shape):\n"
                                         "        self.up = layers.Dense(self.units)\nT.units = 64\n"),
    ("class-attribute-set-on-an-instance", "class T(tf.keras.layers.Layer):\n    units = 36\n"
                                           "    def __init__(self, wide=False):\n        if wide:\n            self.units = 64\n"
                                           "    def build(self, shape):\n        self.up = layers.Dense(self.units)\n"),
    ("class-attribute-computed", "class T(tf.keras.layers.Layer):\n    units = compute()\n    def build(self, shape):\n"
                                 "        self.up = layers.Dense(self.units)\n"),
    ("class-attribute-read-in-a-nested-function",
     "class T(tf.keras.layers.Layer):\n    units = 36\n    def build(self, shape):\n"
     "        def make(self=other):\n            return layers.Dense(self.units)\n        self.up = make()\n"),
    # a loop variable is each element only inside the loop, and only when nothing else binds it
    ("used-after-the-loop", "for width in (32, 100):\n    pass\nh = layers.Dense(width)\n"),
    ("loop-over-unknowns", "for units in [64, n]:\n    h = layers.Dense(units)\n"),
    ("loop-variable-rebound", "for k in (100, 64):\n    k = 64\n    h = layers.Dense(k)\n"),
    ("loop-unpacking", "for i, size in enumerate((100, 64)):\n    h = layers.Dense(size)\n"),
    ("loop-aligned", "for filters in (32, 64, 128):\n    c = layers.Conv2D(filters, 3)\n"),
    # an unpacked name is its element only for a plain tuple, bound once, and no swap
    ("tuple-swapped", "a, b = 100, 2\nb, a = a, b\nh = layers.Dense(a)\n"),
    ("tuple-starred", "c, *rest = 100, 2, 3\nh = layers.Dense(c)\n"),
    ("tuple-rebound", "d, e = 100, 2\nd = 64\nh = layers.Dense(d)\n"),
    ("tuple-of-a-conditional", "f, g = (100, 2) if big else (64, 2)\nh = layers.Dense(f)\n"),
    # a parameter is a pipeline only when every caller hands one
    ("parameter-given-an-array", "def train(model, ds):\n    model.fit(ds.batch(60))\ntrain(model, features)\n"),
    ("parameter-never-called", "def train(model, ds):\n    model.fit(ds.batch(60))\n"),
    ("parameter-given-a-pipeline-and-an-array",
     "def train(model, ds):\n    model.fit(ds.batch(60))\n"
     "train(model, tf.data.Dataset.from_tensor_slices(x))\ntrain(model, x)\n"),
]


@pytest.mark.parametrize("body", [g[1] for g in GOOD], ids=[g[0] for g in GOOD])
def test_a_value_that_may_not_be_the_one_that_runs_is_silent(body):
    assert _lint(body) == []


def test_an_arm_that_runs_only_in_float32_is_silent():
    code = textwrap.dedent("""\
        import argparse
        import tensorflow as tf
        parser = argparse.ArgumentParser()
        parser.add_argument("--amp", action="store_true")
        args = parser.parse_args()
        if args.amp:
            tf.keras.mixed_precision.set_global_policy("mixed_float16")
        if args.amp:
            units = 128
        else:
            units = 100
        h = tf.keras.layers.Dense(units)
        if args.amp:
            width = 100
        else:
            width = 128
        g = tf.keras.layers.Dense(width)
    """)
    assert [(f.line, f.rule) for f in lint(code, *RULES)] == [(17, "MP301")]


def test_test_files_are_never_judged_for_sizes():
    code = MIXED + "h = layers.Dense(100)\nc = layers.Conv2D(30, 3)\nmodel.fit(x, y, batch_size=50)\n"
    assert [f.rule for f in lint(code, *RULES)] == ["MP301", "MP302", "MP303"]
    for path in ("tests/test_model.py", "model_test.py", "conftest.py"):
        assert lint(code, *RULES, path=path) == []
        assert lint(code, *RULES, path=path, assume_policy="mixed_float16") == []


PROJECT = {
    "pyproject.toml": '[project]\nname = "p"\n',
    "config.py": "HIDDEN = 100\nBATCH = 60\n",
    "model.py": "import tensorflow as tf\nfrom config import HIDDEN\n\n\ndef build():\n"
                "    return tf.keras.Sequential([tf.keras.layers.Dense(HIDDEN), tf.keras.layers.Dense(10, dtype='float32')])\n",
    "train.py": "import tensorflow as tf\nimport config\nfrom model import build\n"
                "tf.keras.mixed_precision.set_global_policy('mixed_float16')\nm = build()\n"
                "m.fit(x, y, batch_size=config.BATCH)\n",
}


def test_a_constant_of_another_module_decides_and_its_edit_reaches_the_cache(tmp_path):
    write_files(tmp_path, PROJECT)
    expected = [("model.py", 6, "MP301"), ("train.py", 6, "MP303")]
    assert reported(run_cli("check", "--exit-zero", ".", cwd=tmp_path).stdout) == expected
    (tmp_path / "config.py").write_text("HIDDEN = 128\nBATCH = 64\n")
    assert reported(run_cli("check", "--exit-zero", ".", cwd=tmp_path).stdout) == []
    (tmp_path / "config.py").write_text("HIDDEN = 100\nif fast:\n    BATCH = 60\nelse:\n    BATCH = 30\n")
    assert reported(run_cli("check", "--exit-zero", ".", cwd=tmp_path).stdout) == [("model.py", 6, "MP301")]


def test_a_constant_the_importer_writes_is_unknown(tmp_path):
    files = dict(PROJECT)
    files["train.py"] = files["train.py"].replace("m = build()", "config.BATCH = 64\nm = build()")
    write_files(tmp_path, files)
    assert reported(run_cli("check", "--exit-zero", "--no-cache", ".", cwd=tmp_path).stdout) == [("model.py", 6, "MP301")]


def test_relative_imports_of_a_package_constant(tmp_path):
    write_files(tmp_path, {
        "pyproject.toml": '[project]\nname = "p"\n',
        "pkg/__init__.py": "",
        "pkg/config.py": 'HIDDEN = 100\nSIZES = {"a": 60, "b": 64}\n',
        "pkg/model.py": "import tensorflow as tf\nfrom .config import HIDDEN\nfrom . import config as C\n"
                        "tf.keras.mixed_precision.set_global_policy('mixed_float16')\n"
                        "a = tf.keras.layers.Dense(HIDDEN)\nb = tf.keras.layers.Dense(C.SIZES['a'])\n"
                        "c = tf.keras.layers.Dense(C.SIZES['b'])\nd = tf.keras.layers.Dense(C.MISSING)\n",
    })
    result = run_cli("check", "--exit-zero", "--no-cache", ".", cwd=tmp_path)
    assert reported(result.stdout) == [("pkg/model.py", 5, "MP301"), ("pkg/model.py", 6, "MP301")]
    assert "units=60 (from config.SIZES['a'])" in result.stdout


STAR_PROJECT = {
    "pyproject.toml": '[project]\nname = "p"\n',
    "hparams.py": "HIDDEN = 100\nBATCH = 64\n",
    "train.py": "import tensorflow as tf\nfrom hparams import *\n"
                "tf.keras.mixed_precision.set_global_policy('mixed_float16')\n"
                "m = tf.keras.Sequential([tf.keras.layers.Dense(HIDDEN), tf.keras.layers.Dense(1, dtype='float32')])\n"
                "m.fit(x, y, batch_size=BATCH)\n",
}


def test_a_star_imported_constant_decides_and_its_edit_reaches_the_cache(tmp_path):
    write_files(tmp_path, STAR_PROJECT)
    result = run_cli("check", "--exit-zero", ".", cwd=tmp_path)
    assert reported(result.stdout) == [("train.py", 4, "MP301")]
    assert "units=100 (from hparams.HIDDEN)" in result.stdout
    (tmp_path / "hparams.py").write_text("HIDDEN = 128\nBATCH = 60\n")
    assert reported(run_cli("check", "--exit-zero", ".", cwd=tmp_path).stdout) == [("train.py", 5, "MP303")]
    (tmp_path / "hparams.py").write_text('__all__ = ["BATCH"]\nHIDDEN = 100\nBATCH = 64\n')
    assert reported(run_cli("check", "--exit-zero", ".", cwd=tmp_path).stdout) == []


FLAGS_PROJECT = {
    "pyproject.toml": '[project]\nname = "p"\n',
    "flagdefs.py": 'from absl import flags\nflags.DEFINE_integer("batch_size", 100, "batch")\nFLAGS = flags.FLAGS\n',
    "train.py": "import tensorflow as tf\nfrom flagdefs import FLAGS\n"
                "tf.keras.mixed_precision.set_global_policy('mixed_float16')\n"
                "m = tf.keras.Sequential([tf.keras.layers.Dense(128), tf.keras.layers.Dense(1, dtype='float32')])\n"
                "m.fit(x, y, batch_size=FLAGS.batch_size)\n",
}


def test_an_absl_flag_of_another_module_decides_and_its_edit_reaches_the_cache(tmp_path):
    write_files(tmp_path, FLAGS_PROJECT)
    result = run_cli("check", "--exit-zero", ".", cwd=tmp_path)
    assert reported(result.stdout) == [("train.py", 5, "MP303")]
    assert "batch_size=100 (the default of --batch_size in flagdefs.py)" in result.stdout
    (tmp_path / "flagdefs.py").write_text(FLAGS_PROJECT["flagdefs.py"].replace("100", "128"))
    assert reported(run_cli("check", "--exit-zero", ".", cwd=tmp_path).stdout) == []
    (tmp_path / "flagdefs.py").write_text(FLAGS_PROJECT["flagdefs.py"] + 'FLAGS.set_default("batch_size", 64)\n')
    assert reported(run_cli("check", "--exit-zero", ".", cwd=tmp_path).stdout) == []


@pytest.mark.parametrize("train", [
    # argparse's namespace, not absl's registry: an absl flag of that name elsewhere is not it
    "import argparse\nimport flagdefs\np = argparse.ArgumentParser()\nargs = p.parse_args()\n"
    "m.fit(x, y, batch_size=args.batch_size)\n",
    # the program sets the flag itself, or passes it on an argument list it builds
    "from flagdefs import FLAGS\nFLAGS.batch_size = 64\nm.fit(x, y, batch_size=FLAGS.batch_size)\n",
    "from absl import app\nfrom flagdefs import FLAGS\ndef main(_):\n    m.fit(x, y, batch_size=FLAGS.batch_size)\n"
    "app.run(main, argv=['train', '--batch_size=64'])\n",
    # defined twice among the modules it imports
    "import other\nfrom flagdefs import FLAGS\nm.fit(x, y, batch_size=FLAGS.batch_size)\n",
    # a name that is not absl's registry in the module it comes from
    "from flagdefs import CONFIG\nm.fit(x, y, batch_size=CONFIG.batch_size)\n",
])
def test_an_absl_flag_whose_value_the_program_decides_is_silent(tmp_path, train):
    files = dict(FLAGS_PROJECT)
    files["flagdefs.py"] += "CONFIG = load()\n"
    files["other.py"] = 'from absl import flags\nflags.DEFINE_integer("batch_size", 96, "batch")\n'
    files["train.py"] = "import tensorflow as tf\ntf.keras.mixed_precision.set_global_policy('mixed_float16')\n" + train
    write_files(tmp_path, files)
    assert reported(run_cli("check", "--exit-zero", "--no-cache", ".", cwd=tmp_path).stdout) == []
