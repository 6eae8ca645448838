"""A repository whose root is the package itself (``__init__.py`` at the root, as
google-research/deeplab2): its modules import each other as ``segkit.model.builder``
whatever the clone's or the zip's folder is called (``run.module_paths.root_package``).

fixtures/projects/root_package is such a tree: trainer/train.py sets mixed_float16 and
builds the model of model/builder.py through ``from segkit.model import builder``; the
model's Gate picks ``hard_sigmoid`` by name from model/layers/activations.py, which adds
a float32 ``tf.constant(3.)`` to the 16-bit conv output.
"""

import shutil
import subprocess

import pytest

from helpers import PROJECTS, outcome, run_cli, write_files
from mplint.run import library, module_paths
from mplint.run.module_paths import importable, module_file_in, module_names, root_package

FOUND = [("model/builder.py", 11, "MP101"), ("model/layers/gates.py", 15, "MP504")]


@pytest.fixture(autouse=True)
def _fresh_tree():
    """Each test builds trees in folders an earlier test may have used: forget them."""
    library.forget_files()
    yield
    library.forget_files()


def _copy(tmp_path, name):
    target = tmp_path / name
    shutil.copytree(PROJECTS / "root_package", target)
    return target


@pytest.mark.parametrize("name", ["segkit", "google-research+segkit@64bc1c1a6505", "segkit-main", "checkout"])
def test_the_root_package_links_across_files_whatever_its_folder_is_called(tmp_path, name):
    tree = _copy(tmp_path, name)  # no .git, no marker: a zip's copy, run from its folder
    result = run_cli("check", "--no-cache", ".", cwd=tree)
    assert outcome(result) == (1, FOUND), result.stdout + result.stderr
    assert "the mixed policy is set in trainer/train.py:8" in result.stdout
    # pre-commit names one file: the same answer
    assert outcome(run_cli("check", "--no-cache", "model/layers/gates.py", cwd=tree)) == (1, FOUND[1:])


def test_a_clone_of_the_root_package_links_across_files(tmp_path):
    tree = _copy(tmp_path, "deeplab-clone")
    subprocess.run(["git", "init", "-q", str(tree)], check=True)
    assert outcome(run_cli("check", "--no-cache", ".", cwd=tree)) == (1, FOUND)
    # run from a sub-folder of the clone: the repository is still the root
    assert outcome(run_cli("check", "--no-cache", "builder.py", cwd=tree / "model")) == (1, [("builder.py", 11, "MP101")])


def test_without_the_roots_init_the_package_name_is_nobodys(tmp_path):
    tree = _copy(tmp_path, "segkit-main")
    (tree / "__init__.py").unlink()  # ``segkit`` is then an installed package, not this tree
    assert outcome(run_cli("check", "--no-cache", ".", cwd=tree)) == (0, [])


def test_the_name_comes_from_the_roots_own_imports(tmp_path):
    root = write_files(tmp_path / "x-main", {
        "__init__.py": "",
        "common.py": "import os.path\nfrom tensorflow.keras import layers\n",
        "layers/__init__.py": "",
        "path/__init__.py": "",
        "model/__init__.py": "",
        "model/net.py": "from deepkit.layers import blocks\nfrom deepkit import common\n",
        "layers/blocks.py": "import deepkit.model.net\n",
    })
    # ``os`` and ``tensorflow`` name folders of the root after them (path/, layers/): never its name
    assert root_package(root) == "deepkit"
    blocks = str(root / "layers" / "blocks.py")
    assert module_names(blocks, root) == ("deepkit.layers.blocks", "layers.blocks", "blocks")
    assert ("deepkit", root.parent) in importable(str(root / "__init__.py"), root)
    # the module a dotted name loads from the folder above the root is the root's, whatever its name
    assert module_file_in("deepkit.layers.blocks", (root.parent,), root) == blocks
    assert module_file_in("deepkit", (root.parent,), root) == str(root / "__init__.py")
    assert module_file_in("deepkit.layers.blocks", (root.parent,)) is None


def test_no_name_where_the_imports_disagree_or_name_nothing_of_the_root(tmp_path):
    tied = write_files(tmp_path / "tied", {
        "__init__.py": "", "model/__init__.py": "",
        "a.py": "from alpha.model import x\n", "b.py": "from beta.model import y\n",
    })
    assert root_package(tied) is None
    unrelated = write_files(tmp_path / "unrelated", {
        "__init__.py": "", "model/__init__.py": "",
        "a.py": "from vendor.other import x\nimport numpy.linalg\n# from fake.model import y\n",
    })
    assert root_package(unrelated) is None
    # one import alone is no name (a torchvision ``models`` beside the root's models.py)...
    single = write_files(tmp_path / "single", {
        "__init__.py": "", "models.py": "", "a.py": "from torchvision import models\n",
    })
    assert root_package(single) is None
    # ...unless the root folder is called so (a clone under its own name)
    named = write_files(tmp_path / "segkit", {
        "__init__.py": "", "models.py": "", "a.py": "from segkit import models\n",
    })
    assert root_package(named) == "segkit"
    plain = write_files(tmp_path / "plain", {"model/__init__.py": "", "a.py": "from plain.model import x\n"})
    assert root_package(plain) is None  # no __init__.py at the root: no package
    assert module_names(str(plain / "a.py"), plain) == ("a",)


def test_a_package_dir_mapping_the_root_names_it(tmp_path):
    root = write_files(tmp_path / "src-copy", {
        "__init__.py": "",
        "setup.py": "from setuptools import setup\nsetup(name='x', package_dir={'segkit': '.'}, "
                    "packages=['segkit'])\n",
        "model/__init__.py": "",
        "model/net.py": "from othername.model import y\n",
    })
    assert root_package(root) == "segkit"  # what the distribution installs wins over a guess


def test_a_changed_import_changes_the_next_cached_run(tmp_path):
    tree = _copy(tmp_path, "segkit-main")
    assert outcome(run_cli("check", ".", cwd=tree)) == (1, FOUND)
    train = tree / "trainer" / "train.py"
    train.write_text(train.read_text().replace("from segkit.model", "from otherkit.model"))
    # the trainer now imports an installed package: no policy reaches the model
    assert outcome(run_cli("check", ".", cwd=tree)) == (0, [])
    train.write_text(train.read_text().replace("from otherkit.model", "from segkit.model"))
    assert outcome(run_cli("check", "model/layers/gates.py", cwd=tree)) == (1, FOUND[1:])
