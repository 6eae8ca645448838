"""``from <keras module> import *``: bare names resolve to the module's public API,
except the names the module binds itself."""

import textwrap

import libcst as cst

from mplint.semantic.names import NameResolver, collect_module_imports


def _resolve(source: str, expression: str) -> frozenset:
    resolver = NameResolver()
    collect_module_imports(cst.parse_module(textwrap.dedent(source)), resolver)
    return resolver.resolve(cst.parse_expression(expression))


def test_star_names_resolve_for_each_keras_spelling() -> None:
    for module in ("tensorflow.keras.layers", "keras.layers", "tf_keras.layers"):
        assert _resolve(f"from {module} import *\n", "Dense") == {"keras.layers.Dense"}
    assert _resolve("from tensorflow.keras.models import *\n", "Model") == {"keras.Model"}
    assert _resolve("from keras import backend\nfrom keras.backend import *\n", "bias_add") \
        == {"keras.backend.bias_add"}


def test_unknown_names_and_own_bindings_stay_unresolved() -> None:
    source = """
        from tensorflow.keras.layers import *
        from .blocks import Attention
        from mylib import LayerNormalization

        class Dense:
            pass

        def Embedding(n):
            return n

        Dropout = None
    """
    for name in ("helper", "Attention", "Dense", "Embedding", "Dropout", "print"):
        assert _resolve(source, name) == frozenset(), name
    assert _resolve(source, "LayerNormalization") == {"mylib.LayerNormalization"}
    assert _resolve(source, "Conv2D") == {"keras.layers.Conv2D"}


def test_a_star_of_an_unknown_module_binds_nothing() -> None:
    assert _resolve("from hparams import *\n", "Dense") == frozenset()
