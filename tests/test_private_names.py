"""One answer to "does its owner keep this name to itself?" for functions, methods,
classes and module files: the library surface, dead-code routes and compute regions
all ask :func:`is_private_name`."""

import pytest

from mplint.semantic.visibility import is_private_name


@pytest.mark.parametrize("name", ["_helper", "__mangled", "_model_unet", "_", "__"])
def test_a_leading_underscore_is_private(name: str) -> None:
    assert is_private_name(name)


@pytest.mark.parametrize("name", ["__init__", "__call__", "__main__", "build", "Dense", "call_"])
def test_dunders_and_plain_names_are_not_private(name: str) -> None:
    assert not is_private_name(name)
