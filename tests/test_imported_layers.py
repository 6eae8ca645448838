"""Layer classes and Lambda functions imported from another module of the project
(beyond the fixture project): what cannot be read stays silent and never fails the
checked file."""

import json

from helpers import run_cli, write_files

TRAIN = ("import keras\n\nfrom net import build\n\n"
         "keras.mixed_precision.set_global_policy('mixed_float16')\nmodel = build()\nmodel.fit(None)\n")
NET = ("import keras\n\nfrom heads import Head\n\n\ndef build():\n    inputs = keras.Input((8,))\n"
       "    return keras.Model(inputs, Head()(keras.layers.Dense(8)(inputs)))\n")
HEAD = ("import keras\n\n\nclass Head(keras.layers.Layer):\n    def call(self, x):\n        return x * 2.0\n")


def _findings(folder, *paths):
    result = run_cli("check", "--no-cache", "--output-format", "json", *paths, cwd=folder)
    return result.returncode, [(f["path"], f["line"], f["rule"]) for f in json.loads(result.stdout)], result.stderr


def test_an_imported_layer_class_is_judged_in_its_module(tmp_path):
    write_files(tmp_path, {"pyproject.toml": "[project]\nname = 'p'\n", "train.py": TRAIN, "net.py": NET,
                           "heads.py": HEAD})
    assert _findings(tmp_path, ".")[1] == [("net.py", 8, "MP102")]
    assert _findings(tmp_path, "net.py")[1] == [("net.py", 8, "MP102")]  # pre-commit: one file named


def test_a_module_that_does_not_parse_or_does_not_exist_leaves_the_layer_unknown(tmp_path):
    write_files(tmp_path, {"pyproject.toml": "[project]\nname = 'p'\n", "train.py": TRAIN, "net.py": NET,
                           "heads.py": HEAD.replace("def call(self, x):", "def call(self, x:")})
    code, found, err = _findings(tmp_path, "net.py")
    assert found == [] and code == 0 and "heads.py" not in err  # the broken file is not the one checked
    (tmp_path / "heads.py").unlink()
    assert _findings(tmp_path, "net.py")[:2] == (0, [])


def test_a_head_whose_module_imports_the_model_back_is_judged_once(tmp_path):
    circular = HEAD.replace("import keras\n", "import keras\n\nimport net\n")
    write_files(tmp_path, {"pyproject.toml": "[project]\nname = 'p'\n", "train.py": TRAIN, "net.py": NET,
                           "heads.py": circular})
    assert _findings(tmp_path, ".")[1] == [("net.py", 8, "MP102")]


def test_a_layer_class_bound_by_a_star_import_is_judged_in_its_module(tmp_path):
    star = NET.replace("from heads import Head", "from heads import *")
    write_files(tmp_path, {"pyproject.toml": "[project]\nname = 'p'\n", "train.py": TRAIN, "net.py": star,
                           "heads.py": HEAD})
    assert _findings(tmp_path, ".")[1] == [("net.py", 8, "MP102")]


def test_a_star_import_that_does_not_hand_the_class_on_leaves_it_unknown(tmp_path):
    star = NET.replace("from heads import Head", "from heads import *")
    files = {"pyproject.toml": "[project]\nname = 'p'\n", "train.py": TRAIN, "net.py": star}
    # not in the module's __all__: the star import binds no Head
    write_files(tmp_path, {**files, "heads.py": HEAD + "\n__all__ = ['Other']\n"})
    assert _findings(tmp_path, ".")[1] == []
    # the checked file defines its own Head after the star import: that one is called
    own = star + "\n\nclass Head(keras.layers.Layer):\n    def call(self, x):\n        return keras.ops.cast(x, \"float32\")\n"
    write_files(tmp_path, {**files, "heads.py": HEAD, "net.py": own})
    assert _findings(tmp_path, ".")[1] == []


FACTORY = ("import keras\n\n\ndef classifier(n, activation='softmax', dtype=None):\n"
           "    return keras.layers.Dense(n, activation=activation, dtype=dtype)\n")
USES = ("import keras\n\nfrom heads import classifier\n\n"
        "keras.mixed_precision.set_global_policy('mixed_float16')\ninputs = keras.Input((8,))\n"
        "model = keras.Model(inputs, classifier(10)(inputs))\nmodel.fit(None)\n"
        "linear = keras.Model(inputs, classifier(10, activation=None)(inputs))\nlinear.fit(None)\n"
        "safe = keras.Model(inputs, classifier(10, dtype='float32')(inputs))\nsafe.fit(None)\n"
        "act = 'float32'\nunknown = keras.Model(inputs, classifier(10, dtype=act)(inputs))\nunknown.fit(None)\n")


def test_a_layer_a_function_of_another_module_returns_is_judged_with_the_calls_arguments(tmp_path):
    write_files(tmp_path, {"pyproject.toml": "[project]\nname = 'p'\n", "train.py": USES, "heads.py": FACTORY})
    # the default softmax; a call passing None; silent: float32 passed, and an argument the module cannot read
    assert _findings(tmp_path, ".")[1] == [("train.py", 7, "MP101"), ("train.py", 9, "MP102")]


def test_a_fixed_layer_factory_changes_the_next_cached_run(tmp_path):
    write_files(tmp_path, {"pyproject.toml": "[project]\nname = 'p'\n", "train.py": USES, "heads.py": FACTORY})
    cached = lambda: [(f["path"], f["line"], f["rule"]) for f in json.loads(  # noqa: E731
        run_cli("check", "--output-format", "json", "train.py", cwd=tmp_path).stdout)]
    assert cached() == [("train.py", 7, "MP101"), ("train.py", 9, "MP102")]
    (tmp_path / "heads.py").write_text(FACTORY.replace("dtype=None", "dtype='float32'"))
    # the function's default dtype is float32 now: every call that leaves it out is float32
    assert cached() == []
