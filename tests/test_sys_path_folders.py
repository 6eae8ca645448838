"""Library folders with no ``__init__.py``: a namespace sub-package of a package, and a
folder a module puts on ``sys.path`` before importing from it by a bare name (CaiT-TF2's
``sys.path.append("cait/layers/")``), link as a package does (mplint/run/sys_path_folders.py,
mplint/run/library.py)."""

from pathlib import Path

from helpers import outcome, run_cli, write_files
from mplint.run.sys_path_folders import added_folders

SCALE = """\
import tensorflow as tf


class LayerScale(tf.keras.layers.Layer):
    def __init__(self, dim, init_values=1e-5, **kwargs):
        super().__init__(**kwargs)
        self.gamma = tf.Variable(init_values * tf.ones((dim,)), name="gamma")

    def call(self, x):
        return x * self.gamma
"""

BLOCK = """\
import sys
sys.path.append("zoo/layers/")

import tensorflow as tf
from scale import LayerScale


class Block(tf.keras.layers.Layer):
    def __init__(self, dim, **kwargs):
        super().__init__(**kwargs)
        self.scale = LayerScale(dim)

    def call(self, x):
        return self.scale(x)
"""

FOUND = (1, [("zoo/layers/scale.py", 10, "MP504")])


def _check(tmp_path):
    return outcome(run_cli("check", "--no-cache", "--select", "MP504", ".", cwd=tmp_path))


def test_folders_read_from_the_call():
    root = Path("/r")
    importer = "/r/pkg/blocks/block.py"
    cases = {
        b'sys.path.append("pkg/layers/")\n': {Path("/r/pkg/layers"), Path("/r/pkg/blocks/pkg/layers")},
        b"sys.path.insert(0, 'lib')\n": {Path("/r/lib"), Path("/r/pkg/blocks/lib")},
        b'sys.path.append(os.path.dirname(__file__))\n': {Path("/r/pkg/blocks")},
        b'sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))\n': {Path("/r/pkg")},
        b'sys.path.append(os.path.join(os.path.dirname(__file__), "..", "layers"))\n': {Path("/r/pkg/layers")},
    }
    for raw, expected in cases.items():
        assert added_folders(raw, importer, root) == expected, raw


def test_folders_that_cannot_be_read_add_nothing():
    for raw in (b"sys.path.append(LIB)\n", b"sys.path.append(os.environ['LIB'])\n",
                b"sys.path.insert(0, str(Path(__file__).parents[1]))\n", b"sys.path.remove('x')\n",
                b"print(sys.path)\n", b"sys.path.append(f'{root}/lib')\n"):
        assert added_folders(raw, "/r/a.py", Path("/r")) == frozenset(), raw


def test_a_namespace_sub_package_of_a_packaged_library_is_the_librarys(tmp_path):
    write_files(tmp_path, {"setup.py": "from setuptools import setup\nsetup(name='zoo')\n",
                           "zoo/__init__.py": "", "zoo/layers/scale.py": SCALE, "zoo/blocks/block.py": BLOCK})
    assert _check(tmp_path) == FOUND
    # a folder outside any package is no namespace sub-package of one
    write_files(tmp_path, {"zoo/__init__.py": ""})
    (tmp_path / "zoo/__init__.py").unlink()
    assert _check(tmp_path) == (0, [])


def test_a_script_that_puts_the_folder_on_sys_path_makes_it_the_surface(tmp_path):
    script = 'import sys\nsys.path.append("zoo/layers")\nfrom scale import LayerScale\n\nlayer = LayerScale(8)\n'
    # registered on import: a module that runs code is the library's only where it is imported
    registered = SCALE + '\n\ntf.keras.utils.get_custom_objects().update({"LayerScale": LayerScale})\n'
    write_files(tmp_path, {"zoo/__init__.py": "", "zoo/layers/scale.py": registered, "run.py": script})
    assert _check(tmp_path) == FOUND
    # without the sys.path line the bare name is another module: nothing links
    (tmp_path / "run.py").write_text(script.replace('sys.path.append("zoo/layers")\n', ""), encoding="utf-8")
    assert _check(tmp_path) == (0, [])
    # a folder the script does not add
    (tmp_path / "run.py").write_text(script.replace("zoo/layers", "vendor/layers"), encoding="utf-8")
    assert _check(tmp_path) == (0, [])
