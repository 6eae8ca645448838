"""Names bound from a project function that returns TensorFlow/Keras modules resolve
like import aliases (mplint/run/module_returns.py, NameResolver.returned)."""

import textwrap

from helpers import outcome, run_cli, write_files
from mplint.run.module_returns import returned_modules
from mplint.run.reexports import exports_of

PACKAGE_INIT = """\
import keras


def get_submodules_from_kwargs(kwargs):
    backend = kwargs.get('backend', keras.backend)
    layers = kwargs.get('layers', keras.layers)
    return backend, layers
"""

MODEL = """\
import keras
from .. import get_submodules_from_kwargs


def Net(classes=10, **kwargs):
    global backend, layers
    backend, layers = get_submodules_from_kwargs(kwargs)
    inputs = layers.Input((8,))
    x = layers.Dense(classes)(inputs)
    x = layers.Activation('softmax', name='probs')(x)
    return keras.Model(inputs, x)
"""

TRAIN = """\
import keras
from pkg.models.net import Net

keras.mixed_precision.set_global_policy('mixed_float16')
model = Net()
model.compile(optimizer='adam', loss='categorical_crossentropy')
model.fit(x, y)
"""


def _project(tmp_path, init=PACKAGE_INIT, model=MODEL):
    return write_files(tmp_path, {
        "pyproject.toml": "[project]\nname = 'p'\n", "pkg/__init__.py": textwrap.dedent(init),
        "pkg/models/__init__.py": "", "pkg/models/net.py": textwrap.dedent(model), "train.py": TRAIN})


def _check(tmp_path, *extra):
    return outcome(run_cli("check", "--select", "MP101", *extra, ".", cwd=tmp_path))


def _returns(text: str):
    raw = textwrap.dedent(text).encode()
    return returned_modules(raw, exports_of_imports(raw))


def exports_of_imports(raw: bytes):
    return tuple(e for e in exports_of(raw) if "()" not in e[0])


def test_a_function_returning_module_defaults_hands_them_on():
    assert _returns(PACKAGE_INIT) == (("get_submodules_from_kwargs()#0", "keras.backend"),
                                      ("get_submodules_from_kwargs()#1", "keras.layers"))
    assert _returns("import tensorflow as tf\n\ndef get():\n    return tf.keras.layers\n") == (
        ("get()", "tensorflow.keras.layers"),)
    # through a module-level name assigned once
    assert _returns("import keras\n_L = keras.layers\n\ndef get():\n    return _L\n") == (("get()", "keras.layers"),)
    # joined over branches
    assert _returns("import keras\nimport tf_keras\n\ndef get(new):\n    if new:\n        return keras.layers\n"
                    "    return tf_keras.layers\n") == (("get()", "keras.layers"), ("get()", "tf_keras.layers"))


def test_values_that_cannot_be_followed_hand_nothing_on():
    silent = [
        # no default
        "import keras\n\ndef get(kwargs):\n    layers = kwargs.get('layers')\n    return layers\n",
        # a default that is a parameter
        "import keras\n\ndef get(kwargs, fallback):\n    layers = kwargs.get('layers', fallback)\n    return layers\n",
        # a project module, a non-Keras object
        "import keras\nfrom . import blocks\n\ndef get():\n    return blocks\n",
        "import keras\nimport numpy as np\n\ndef get():\n    return np.linalg\n",
        # one branch returns something unknown
        "import keras\n\ndef get(x):\n    if x:\n        return keras.layers\n    return x\n",
        # returns of different shapes
        "import keras\n\ndef get(x):\n    if x:\n        return keras.layers, keras.models\n    return keras.layers\n",
        # a local rebound
        "import keras\n\ndef get():\n    layers = keras.layers\n    layers = make()\n    return layers\n",
        # a module-level name rebound in a function
        "import keras\n_L = keras.layers\n\ndef set_it():\n    global _L\n    _L = None\n\ndef get():\n    return _L\n",
    ]
    for text in silent:
        assert _returns(text) == (), text


def test_a_softmax_head_built_from_returned_layers_is_found_across_modules(tmp_path):
    _project(tmp_path)
    assert _check(tmp_path, "--no-cache") == (1, [("pkg/models/net.py", 10, "MP101")])


def test_the_cached_run_follows_a_change_in_the_package_init(tmp_path):
    _project(tmp_path)
    assert _check(tmp_path) == (1, [("pkg/models/net.py", 10, "MP101")])
    assert _check(tmp_path) == (1, [("pkg/models/net.py", 10, "MP101")])
    # the package's function now returns layers it cannot name: the finding goes
    (tmp_path / "pkg/__init__.py").write_text(
        PACKAGE_INIT.replace("kwargs.get('layers', keras.layers)", "kwargs.get('layers')"), encoding="utf-8")
    assert _check(tmp_path) == (0, [])
    assert _check(tmp_path, "pkg/models/net.py") == (0, [])
    (tmp_path / "pkg/__init__.py").write_text(PACKAGE_INIT, encoding="utf-8")
    assert _check(tmp_path) == (1, [("pkg/models/net.py", 10, "MP101")])


def test_same_module_function_and_single_value(tmp_path):
    model = """\
    import keras


    def _layers():
        return keras.layers


    def Net(classes=10):
        layers = _layers()
        inputs = layers.Input((8,))
        x = layers.Dense(classes, activation='softmax')(inputs)
        return keras.Model(inputs, x)
    """
    _project(tmp_path, model=model)
    assert _check(tmp_path, "--no-cache") == (1, [("pkg/models/net.py", 11, "MP101")])


def test_silent_where_the_name_is_rebound_or_read_before_the_call(tmp_path):
    model = """\
    import keras
    from .. import get_submodules_from_kwargs


    def head(x, classes):
        # reads the global before any call set it: not followed
        return layers.Dense(classes, activation='softmax')(x)


    def Net(classes=10, **kwargs):
        global backend, layers
        backend, layers = get_submodules_from_kwargs(kwargs)
        layers = make_layers()
        inputs = layers.Input((8,))
        x = layers.Activation('softmax', name='probs')(inputs)
        return keras.Model(inputs, head(x, classes))
    """
    _project(tmp_path, model=model)
    assert _check(tmp_path, "--no-cache") == (0, [])


KEYED_INIT = """\
import keras_applications as ka


def get_submodules_from_kwargs(kwargs):
    backend = kwargs.get('backend', ka._KERAS_BACKEND)
    layers = kwargs.get('layers', ka._KERAS_LAYERS)
    return backend, layers
"""

FACTORY = """\
import tensorflow.keras as tfkeras


class Factory:
    @staticmethod
    def get_kwargs():
        return {
            'backend': tfkeras.backend,
            'layers': tfkeras.layers,
        }
"""


def _keyed_project(tmp_path, factory=FACTORY, init=KEYED_INIT):
    _project(tmp_path, init=init)
    (tmp_path / "pkg/factory.py").write_text(textwrap.dedent(factory), encoding="utf-8")


def test_a_default_that_names_no_keras_module_hands_on_the_key():
    assert _returns(KEYED_INIT) == (("get_submodules_from_kwargs()#0", "{backend}"),
                                    ("get_submodules_from_kwargs()#1", "{layers}"))
    assert [e for e in exports_of(FACTORY.encode()) if e[0].startswith("{")] == [
        ("{backend}", "tensorflow.keras.backend"), ("{layers}", "tensorflow.keras.layers")]
    # a default the caller chooses, or a local, stays unknown
    assert _returns("def get(kwargs, fallback):\n    return kwargs.get('layers', fallback.layers)\n") == ()
    assert _returns("def get(kwargs):\n    d = make()\n    layers = kwargs.get('layers', d.layers)\n"
                    "    return layers\n") == ()
    # a dict entry whose value the file does not import from TensorFlow or Keras hands nothing on
    assert [e for e in exports_of(b"import keras\nfrom . import blocks\nD = {'layers': blocks.layers}\n")
            if e[0].startswith("{")] == []


def test_a_key_read_with_a_foreign_default_takes_what_the_projects_dicts_hold(tmp_path):
    _keyed_project(tmp_path)
    assert _check(tmp_path, "--no-cache") == (1, [("pkg/models/net.py", 10, "MP101")])


def test_silent_where_no_dict_holds_a_keras_module_under_the_key(tmp_path):
    # the dict holds the key, but not a Keras module: unknown, silent
    _keyed_project(tmp_path, factory=FACTORY.replace("'layers': tfkeras.layers", "'layers': my_layers"))
    assert _check(tmp_path, "--no-cache") == (0, [])


def test_the_cached_run_follows_a_change_in_the_dict_of_another_module(tmp_path):
    _keyed_project(tmp_path)
    assert _check(tmp_path) == (1, [("pkg/models/net.py", 10, "MP101")])
    assert _check(tmp_path, "pkg/models/net.py") == (1, [("pkg/models/net.py", 10, "MP101")])
    (tmp_path / "pkg/factory.py").write_text(
        textwrap.dedent(FACTORY).replace("'layers': tfkeras.layers", "'layers': my_layers"), encoding="utf-8")
    assert _check(tmp_path) == (0, [])
    assert _check(tmp_path, "pkg/models/net.py") == (0, [])
    (tmp_path / "pkg/factory.py").write_text(textwrap.dedent(FACTORY), encoding="utf-8")
    assert _check(tmp_path, "pkg/models/net.py") == (1, [("pkg/models/net.py", 10, "MP101")])


import pytest  # noqa: E402

from mplint.run.module_returns import _may_return_modules  # noqa: E402

_EXPORTS = (("keras", "keras"),)


@pytest.mark.parametrize("body, expected", [
    ("def f():\n    return keras.layers\n", True),
    ("def f():\n    _L = kwargs.get('layers', keras.layers)\n    return _L\n", True),
    ("_L = keras.layers\ndef f():\n    return _L\n", True),
    ("_L = keras.layers  # the layers\ndef f():\n\treturn (_L, x)\n", True),
    # the gate's literal searches must keep the line-start shapes
    ("def f():\n    x = 1; return keras.layers\n", False),  # not alone on its line
    ("return keras.layers\n", False),  # not indented: no function's return
    ("def f():\n    xreturn = keras.layers\n    return y\n", False),
    ("_L = _M = keras.layers\ndef f():\n    return _L\n", False),  # a chain is not followed
    ("_L += keras.layers\ndef f():\n    return _L\n", False),
    ("_L: object = keras.layers\ndef f():\n    return _L\n", False),
    ("x._L = keras.layers\ndef f():\n    return _L\n", False),
    ("_LX = keras.layers\ndef f():\n    return _L\n", False),
    ("X_L = keras.layers\ndef f():\n    return _L\n", False),
    ("_L = other.layers\ndef f():\n    return _L\n", False),
])
def test_the_byte_gate_reads_only_returns_and_assignments_that_start_their_line(body, expected):
    assert _may_return_modules(("import keras\n" + body).encode(), _EXPORTS) is expected
