"""Library mode's guess: which code is judged as "its users may run it under a mixed
policy" when no program of the repository sets one (mplint.run.library).

fixtures/projects/unpackaged_zoo is a model zoo shared as a folder (no setup.py): a
package whose __init__ exports the models, a layers sub-package exporting LayerScale,
an internal DropPath only the models import, a script inside the package, and a
notebook that trains a model in float32. fixtures/projects/flat_training is a flat
training repository (train.py + model.py, float32, no package).
"""

import shutil
from pathlib import Path

from helpers import PROJECTS, outcome, run_cli
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


def test_a_flat_training_repository_is_no_library_unless_configured(tmp_path):
    flat = _copy("flat_training", tmp_path)
    assert outcome(run_cli("check", ".", cwd=flat)) == (0, [])
    # the configuration decides over the guess: the modules beside the script, not the script
    (flat / "pyproject.toml").write_text("[tool.mplint]\nlibrary = true\n")
    result = run_cli("check", ".", cwd=flat)
    assert outcome(result) == (1, [("model.py", 9, "MP504"), ("model.py", 15, "MP101")]), result.stdout


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


def test_package_surface_leaves_root_modules_and_programs_folders_out(tmp_path):
    files = {
        "__init__.py": "",  # a root that is a package: its modules are the scripts' neighbours
        "base.py": "",
        "train.py": "from base import x\nfrom pkg import models\n",
        "pkg/__init__.py": "",
        "pkg/models.py": "",
        "pkg/internal.py": "",
        "examples/__init__.py": "",
        "examples/demo.py": "",
        "run_demo.py": "from examples import demo\n",
    }
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    paths = [str(tmp_path / name) for name in files]
    surface = package_surface(paths, lambda key: Path(key).read_bytes(), tmp_path)
    # the package itself (its __init__ runs on import) and the module train.py imports
    assert surface == {str(tmp_path / "pkg" / "__init__.py"), str(tmp_path / "pkg" / "models.py")}
