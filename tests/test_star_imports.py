"""What a star import of TensorFlow or Keras binds (``semantic.star_imports``)."""
import libcst as cst

from mplint.semantic.star_imports import star_bound


def _bound(code: str, *modules: str) -> dict:
    return star_bound(cst.parse_module(code), modules)


def test_free_class_names_come_from_the_one_keras_star_module() -> None:
    code = "from tensorflow.keras.layers import *\nx = Dense(3)(LayerNormalization()(y))\n"
    assert _bound(code, "tensorflow.keras.layers") == {
        "Dense": "tensorflow.keras.layers.Dense", "LayerNormalization": "tensorflow.keras.layers.LayerNormalization"}


def test_names_the_file_binds_and_builtins_are_its_own() -> None:
    code = ("class Dense: pass\n"
            "def f(Conv2D):\n    return Conv2D\n"
            "for Dropout in []: pass\n"
            "try:\n    pass\nexcept ValueError as Flatten:\n    pass\n"
            "x = Dense(), Conv2D, Dropout, Flatten, ValueError, dense_block\n")
    assert _bound(code, "keras.layers") == {}


def test_another_star_import_makes_every_name_unknown() -> None:
    code = "x = Dense(3)\n"
    assert _bound(code, "tensorflow.keras.layers", "mylayers") == {}
    assert _bound(code, "mylayers") == {}
    assert _bound(code, ".") == {}
