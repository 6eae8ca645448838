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
