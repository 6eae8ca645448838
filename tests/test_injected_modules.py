"""Keras modules a caller injects through keras_applications' ``get_submodules_from_kwargs``
protocol (mplint/semantic/injected_modules.py): the library never imports Keras, its
public builders rebind module-level ``layers = None`` placeholders, and its users run the
models under their own policy."""

import textwrap

import libcst as cst

from helpers import outcome, run_cli, write_files
from mplint.semantic.injected_modules import injected_globals
from mplint.semantic.names import NameResolver, collect_module_imports

INIT = """\
_KERAS_BACKEND = None
_KERAS_LAYERS = None
_KERAS_MODELS = None
_KERAS_UTILS = None


def get_submodules_from_kwargs(kwargs):
    backend = kwargs.get('backend', _KERAS_BACKEND)
    layers = kwargs.get('layers', _KERAS_LAYERS)
    models = kwargs.get('models', _KERAS_MODELS)
    utils = kwargs.get('utils', _KERAS_UTILS)
    return backend, layers, models, utils
"""

NET = """\
from . import get_submodules_from_kwargs

backend = None
layers = None
models = None
keras_utils = None


def head(x, classes):
    x = layers.GlobalAveragePooling2D()(x)
    return layers.Dense(classes, activation='softmax', name='probs')(x)


def Net(include_top=True, classes=1000, **kwargs):
    global backend, layers, models, keras_utils
    backend, layers, models, keras_utils = get_submodules_from_kwargs(kwargs)
    inputs = layers.Input((32, 32, 3))
    x = layers.Conv2D(64, 3)(inputs)
    if include_top:
        x = head(x, classes)
    return models.Model(inputs, x, name='net')
"""


def _library(tmp_path, net=NET, init=INIT):
    return write_files(tmp_path, {"setup.py": "from setuptools import setup\nsetup(name='zoo')\n",
                                  "zoo/__init__.py": textwrap.dedent(init), "zoo/net.py": textwrap.dedent(net)})


def _check(tmp_path):
    return outcome(run_cli("check", "--no-cache", "--select", "MP101", ".", cwd=tmp_path))


def _names(code: str):
    module = cst.parse_module(textwrap.dedent(code))
    resolver = NameResolver()
    collect_module_imports(module, resolver)
    return resolver.module_scope.aliases


def test_placeholders_a_builder_rebinds_name_the_injected_keras_modules():
    assert _names(NET) == {"backend": {"keras.backend"}, "layers": {"keras.layers"},
                           "models": {"keras.models"}, "keras_utils": {"keras.utils"}}


def test_a_public_builder_of_injected_layers_ends_in_a_16_bit_softmax(tmp_path):
    _library(tmp_path)
    # the head is built by a helper that reads the module-level ``layers`` the builder rebinds
    assert _check(tmp_path) == (1, [("zoo/net.py", 11, "MP101")])


def test_a_function_of_its_own_that_unpacks_the_modules_is_followed(tmp_path):
    net = """\
    from . import get_submodules_from_kwargs


    def Net(classes=1000, **kwargs):
        backend, layers, models, utils = get_submodules_from_kwargs(kwargs)
        inputs = layers.Input((8,))
        x = layers.Dense(classes, activation='softmax')(inputs)
        return models.Model(inputs, x)
    """
    _library(tmp_path, net=net)
    assert _check(tmp_path) == (1, [("zoo/net.py", 7, "MP101")])


def test_a_float32_head_stays_silent(tmp_path):
    _library(tmp_path, net=NET.replace("name='probs')", "name='probs', dtype='float32')"))
    assert _check(tmp_path) == (0, [])


def test_names_bound_otherwise_are_not_injected_modules():
    silent = {
        # a torch module under the same name: imports keep their meaning
        "torch import": NET.replace("layers = None\n", "import torch.nn as layers\n"),
        # a project class named layers, bound at module level beside the placeholder
        "class": NET.replace("layers = None\n", "layers = None\n\n\nclass layers:\n    Dense = None\n"),
        # bound to something else than None at module level too
        "rebound": NET.replace("keras_utils = None\n", "keras_utils = None\nlayers = make_layers()\n"),
        # not declared global: the function's unpack is its own
        "no global": NET.replace("    global backend, layers, models, keras_utils\n", ""),
        # another function of that shape, or another number of names
        "other function": NET.replace("= get_submodules_from_kwargs(kwargs)", "= get_parts(kwargs)"),
        "three names": NET.replace("backend, layers, models, keras_utils = get_submodules_from_kwargs",
                                   "backend, layers, models = get_submodules_from_kwargs"),
        "keyword argument": NET.replace("get_submodules_from_kwargs(kwargs)", "get_submodules_from_kwargs(x=kwargs)"),
    }
    for why, code in silent.items():
        assert "keras.layers" not in _names(code).get("layers", set()), why


def test_torch_and_flax_modules_with_dense_stay_silent(tmp_path):
    torch_net = """\
    import torch.nn as layers


    def Net(classes=1000, **kwargs):
        return layers.Sequential(layers.Linear(8, classes), layers.Softmax(dim=-1))
    """
    flax_net = """\
    import flax.linen as layers

    backend = None


    def Net(classes=1000, **kwargs):
        global backend
        backend, nn, models, utils = get_submodules_from_kwargs(kwargs)
        return layers.Dense(classes)
    """
    for net in (torch_net, flax_net):
        _library(tmp_path, net=net)
        assert _check(tmp_path) == (0, []), net
    assert injected_globals(cst.parse_module(textwrap.dedent(flax_net)), {"layers"}) == {
        "backend": "keras.backend"}


def test_a_placeholder_under_a_condition_is_no_placeholder():
    code = NET.replace("layers = None\n", "if FLAG:\n    layers = None\n")
    assert injected_globals(cst.parse_module(code), set()).get("layers") is None
