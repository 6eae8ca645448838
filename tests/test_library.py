"""Library mode's guess: which code is judged as "its users may run it under a mixed
policy" when no program of the repository sets one (mplint.run.library).

fixtures/projects/unpackaged_zoo is a model zoo shared as a folder (no setup.py): a
package whose __init__ exports the models, a layers sub-package exporting LayerScale,
an internal DropPath only the models import, a script inside the package, and a
notebook that trains a model in float32. fixtures/projects/flat_training is a flat
repository (no package, no policy): train.py imports model.py, blocks.py only defines
layers, one_off.py is an experiment nobody imports, test_model.py a test.
"""

import shutil
from pathlib import Path

from helpers import PROJECTS, outcome, run_cli, write_files
from mplint.run.library import imported_modules, is_script, package_surface

ZOO = [("zoo/layers/scale.py", 13, "MP504"), ("zoo/models.py", 14, "MP101")]


def _copy(name, tmp_path):
    target = tmp_path / name
    shutil.copytree(PROJECTS / name, target)
    return target


def test_an_unpackaged_model_zoo_is_judged_through_its_packages_surface(tmp_path):
    zoo = _copy("unpackaged_zoo", tmp_path)
    whole = run_cli("check", ".", cwd=zoo)
    # drop.py (imported only by the zoo's own models) and the package's script stay silent
    assert outcome(whole) == (1, ZOO), whole.stdout + whole.stderr
    assert whole.stdout.count("a library's code: its users may run it under a mixed policy") == 2
    # pre-commit names one file: the same answer
    assert outcome(run_cli("check", "zoo/layers/scale.py", cwd=zoo)) == (1, ZOO[:1])
    assert outcome(run_cli("check", "zoo/layers/drop.py", cwd=zoo)) == (0, [])


def test_the_surface_is_what_an_init_exports_or_code_outside_the_package_imports(tmp_path):
    zoo = _copy("unpackaged_zoo", tmp_path)
    # the notebook alone still makes the models the zoo's surface
    (zoo / "zoo" / "__init__.py").write_text('"""Nothing exported."""\n')
    notebook = zoo / "notebooks" / "finetune.ipynb"
    notebook.write_text(notebook.read_text().replace("from zoo import", "from zoo.models import"))
    assert outcome(run_cli("check", ".", cwd=zoo)) == (1, ZOO)
    # with no user outside the package either, the models are the package's own code
    notebook.unlink()
    assert outcome(run_cli("check", ".", cwd=zoo)) == (1, ZOO[:1])
    # a script beside the package that imports it is a user too
    (zoo / "evaluate.py").write_text("from zoo.models import build_classifier\n\nbuild_classifier().summary()\n")
    assert outcome(run_cli("check", ".", cwd=zoo)) == (1, ZOO)


def test_a_changed_export_changes_the_next_cached_run(tmp_path):
    zoo = _copy("unpackaged_zoo", tmp_path)
    assert outcome(run_cli("check", "zoo/layers/scale.py", cwd=zoo)) == (1, ZOO[:1])
    exports = zoo / "zoo" / "layers" / "__init__.py"
    exports.write_text("")  # LayerScale is now the package's own (models.py imports it)
    assert outcome(run_cli("check", "zoo/layers/scale.py", cwd=zoo)) == (0, [])
    exports.write_text("from .scale import LayerScale\n")
    assert outcome(run_cli("check", "zoo/layers/scale.py", cwd=zoo)) == (1, ZOO[:1])


FLAT = [("blocks.py", 10, "MP504"), ("model.py", 10, "MP504"), ("model.py", 16, "MP101")]


def test_a_flat_repository_is_judged_through_its_surface(tmp_path):
    flat = _copy("flat_training", tmp_path)
    # model.py (train.py imports it) and blocks.py (definitions only); one_off.py, the
    # test and blocks.py's private layer stay silent
    result = run_cli("check", ".", cwd=flat)
    assert outcome(result) == (1, FLAT), result.stdout + result.stderr
    assert outcome(run_cli("check", "one_off.py", cwd=flat)) == (0, [])
    # once another file imports the one-off script, its layer is the surface too
    (flat / "evaluate.py").write_text("from one_off import Shift\n\nprint(Shift)\n")
    assert ("one_off.py", 8, "MP504") in outcome(run_cli("check", ".", cwd=flat))[1]


def test_a_flat_repository_that_sets_float32_or_says_no_is_no_library(tmp_path):
    flat = _copy("flat_training", tmp_path)
    # a program that sets float32 explicitly: its policies are followed instead
    train = flat / "train.py"
    train.write_text(train.read_text().replace(
        "    model = build_model()", "    tf.keras.mixed_precision.set_global_policy('float32')\n    model = build_model()"))
    assert outcome(run_cli("check", ".", cwd=flat)) == (0, [])
    train.write_text(train.read_text().replace("    tf.keras.mixed_precision.set_global_policy('float32')\n", ""))
    (flat / "pyproject.toml").write_text("[tool.mplint]\nlibrary = false\n")
    assert outcome(run_cli("check", ".", cwd=flat)) == (0, [])
    # library = true: every module beside the scripts that is no script (one_off.py has
    # no __main__ guard, so the configuration counts it)
    (flat / "pyproject.toml").write_text("[tool.mplint]\nlibrary = true\n")
    found = outcome(run_cli("check", ".", cwd=flat))[1]
    assert set(FLAT) <= set(found) and ("one_off.py", 8, "MP504") in found


def test_a_program_that_imports_mixed_precision_chose_its_policy(tmp_path):
    flat = _copy("flat_training", tmp_path)
    train = flat / "train.py"
    original = train.read_text()
    # the switch commented out beside the import it needed: an application in float32
    train.write_text("from tensorflow.keras import mixed_precision\n"
                     "# mixed_precision.set_global_policy('mixed_float16')\n" + original)
    assert outcome(run_cli("check", ".", cwd=flat)) == (0, [])
    # the import commented out too, or in a module that is no program: still the surface
    train.write_text("# from tensorflow.keras import mixed_precision\n" + original)
    assert outcome(run_cli("check", ".", cwd=flat)) == (1, FLAT)
    train.write_text(original)
    blocks = flat / "blocks.py"
    blocks.write_text("from tensorflow.keras import mixed_precision\n" + blocks.read_text())
    assert outcome(run_cli("check", ".", cwd=flat)) == (1, [("blocks.py", 11, "MP504"), *FLAT[1:]])


def test_a_program_that_sets_the_float_type_chose_its_precision(tmp_path):
    flat = _copy("flat_training", tmp_path)
    train = flat / "train.py"
    original = train.read_text()
    # a half-precision export program: its author chose float16 for everything
    train.write_text("import keras\n\nkeras.backend.set_floatx('float16')\n" + original)
    assert outcome(run_cli("check", "--select", "MP1,MP5", ".", cwd=flat)) == (0, [])
    # the call commented out: still the surface
    train.write_text("import keras\n\n# keras.backend.set_floatx('float16')\n" + original)
    assert outcome(run_cli("check", "--select", "MP1,MP5", ".", cwd=flat)) == (1, FLAT)


def test_a_program_that_sets_float32_explicitly_makes_the_zoo_no_library(tmp_path):
    zoo = _copy("unpackaged_zoo", tmp_path)
    (zoo / "train.py").write_text(
        "import tensorflow as tf\n\nfrom zoo import build_classifier\n\n"
        "tf.keras.mixed_precision.set_global_policy('float32')\n"
        "build_classifier().fit(tf.zeros((8, 16, 64)), tf.zeros((8,)))\n")
    assert outcome(run_cli("check", ".", cwd=zoo)) == (0, [])


def test_the_library_setting_decides_both_ways_and_per_path(tmp_path):
    zoo = _copy("unpackaged_zoo", tmp_path)
    (zoo / "pyproject.toml").write_text("[tool.mplint]\nlibrary = false\n")
    assert outcome(run_cli("check", ".", cwd=zoo)) == (0, [])
    # the closest configuration wins: the root says library, zoo/layers/ says not
    (zoo / "pyproject.toml").write_text("[tool.mplint]\nlibrary = true\n")
    (zoo / "zoo" / "layers" / "mplint.toml").write_text("library = false\n")
    found = outcome(run_cli("check", ".", cwd=zoo))[1]
    assert ("zoo/models.py", 14, "MP101") in found and not any(path.startswith("zoo/layers/") for path, _, _ in found)


def test_imported_modules_reads_every_import_form():
    text = ("import a.b as c, d\nfrom .layers import (LayerScale,\n    DropPath as DP)\n"
            "from . import scale\nfrom ..pkg.mod import *\n    from e import f  # in a function\n"
            "x = 'import nothing'\n")
    assert imported_modules(text) == {
        "a.b", "d", ".layers", ".layers.LayerScale", ".layers.DropPath", ".", ".scale", "..pkg.mod", "e", "e.f"}


def test_a_script_is_a_module_with_a_main_guard():
    assert is_script(b"def main():\n    pass\n\nif __name__ == '__main__':\n    main()\n")
    assert not is_script(b"def main():\n    if __name__ == '__main__':\n        pass\n")
    assert not is_script(b"x = 1\n")


def test_package_surface_leaves_programs_and_package_internals_out(tmp_path):
    files = {
        "__init__.py": "",  # a root that is a package: its modules are the scripts' neighbours
        "base.py": "",
        "train.py": "from base import x\nfrom pkg import models\n\nif __name__ == '__main__':\n    x()\n",
        "evaluate.py": "import train\n",  # a script another imports is still a script
        "notes.py": "import tensorflow as tf\n\nclass Block(tf.keras.layers.Layer):\n    pass\n\nBlock()\n",
        "layers.py": "import tensorflow as tf\n\nclass Block(tf.keras.layers.Layer):\n    pass\n",
        "pkg/__init__.py": "",
        "pkg/models.py": "from ._impl import build\n",
        "pkg/_impl.py": "from .blocks import Block\nfrom . import _more\n",
        "pkg/_more.py": "",
        "pkg/blocks.py": "",
        "pkg/internal.py": "",
        "pkg/uses_internal.py": "from .internal import x\n",
        "examples/__init__.py": "",
        "examples/demo.py": "",
        "run_demo.py": "from examples import demo\n",
        # a model module with a self-test under its guard, imported by a benchmark: a
        # library module; another imported only by a test stays a script
        "llama.py": "import keras\n\nclass Llama(keras.Model):\n    pass\n\nif __name__ == '__main__':\n    Llama()\n",
        "bench.py": "from llama import Llama\n",
        "gpt.py": "import keras\n\nclass Gpt(keras.Model):\n    pass\n\nif __name__ == '__main__':\n    Gpt().fit(x)\n",
        "test_gpt.py": "from gpt import Gpt\n",
        # a single-file library whose guard only demonstrates its layer (nobody imports
        # it: users copy or import it): library code; one whose guard trains stays a script
        "attention.py": "import tensorflow as tf\n\nclass Attn(tf.keras.layers.Layer):\n    pass\n\n"
                        "if __name__ == '__main__':\n    Attn()(tf.zeros((1, 4)))\n",
        "gan.py": "import tensorflow as tf\n\nclass G(tf.keras.Model):\n    pass\n\ndef main():\n"
                  "    opt.apply_gradients(zip(g, v))\n\nif __name__ == '__main__':\n    main()\n",
    }
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    paths = [str(tmp_path / name) for name in files]
    surface = package_surface(paths, lambda key: Path(key).read_bytes(), tmp_path)
    # the package itself (its __init__ runs on import), the module train.py imports, the
    # private module it hands on and what that one imports; beside the scripts, the
    # module train.py imports and the one that only defines layers
    assert surface == {str(tmp_path / name) for name in (
        "pkg/__init__.py", "pkg/models.py", "pkg/_impl.py", "pkg/_more.py", "pkg/blocks.py", "base.py", "layers.py",
        "llama.py", "attention.py")}


def test_a_docstring_that_tells_users_to_set_the_policy_sets_none(tmp_path):
    package = {
        "pyproject.toml": "[project]\nname = 'tinyclf'\n",
        "tinyclf/__init__.py": ('"""Works with mixed precision: call\n'
                                '``keras.mixed_precision.set_global_policy("mixed_float16")`` first."""\n'
                                "from tinyclf.models import classifier\n"),
        "tinyclf/models.py": ("import keras\n\n\ndef classifier(n):\n    inputs = keras.Input((16,))\n"
                              "    return keras.Model(inputs, keras.layers.Dense(n, activation='softmax')(inputs))\n"),
    }
    folder = write_files(tmp_path / "doc", package)
    assert outcome(run_cli("check", ".", cwd=folder)) == (1, [("tinyclf/models.py", 6, "MP101")])
    # the same words as code: a program of the package sets the policy, no library
    package["tinyclf/__init__.py"] = ('import keras\nkeras.mixed_precision.set_global_policy("float32")\n'
                                      "from tinyclf.models import classifier\n")
    assert outcome(run_cli("check", ".", cwd=write_files(tmp_path / "code", package))) == (0, [])


def test_test_helpers_and_integration_tests_are_no_library_modules(tmp_path):
    from mplint.run.library import is_library_module

    root = write_files(tmp_path, {
        "pkg/__init__.py": "", "pkg/utils/__init__.py": "", "pkg/integration_test/__init__.py": "",
        "pkg/layers.py": "", "pkg/utils/kpl_test_utils.py": "", "pkg/multi_worker_testing_utils.py": "",
        "pkg/integration_test/models.py": "", "pkg/utils/contest_utils.py": "",
    })
    library = {path: is_library_module(str(root / path), root) for path in (
        "pkg/layers.py", "pkg/utils/kpl_test_utils.py", "pkg/multi_worker_testing_utils.py",
        "pkg/integration_test/models.py", "pkg/utils/contest_utils.py")}
    # the tests' model builders are test code; a module merely ending in "test_utils" inside a word is not
    assert library == {"pkg/layers.py": True, "pkg/utils/kpl_test_utils.py": False,
                       "pkg/multi_worker_testing_utils.py": False, "pkg/integration_test/models.py": False,
                       "pkg/utils/contest_utils.py": True}
