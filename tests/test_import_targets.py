"""The modules an import statement may load, read from its bytes: a one-file run keeps
an importer only when a statement names the module or a submodule of it, never fewer
than the program model resolves (the reverse-dependency prefilter of issue #24)."""

from pathlib import Path

from mplint.run.import_targets import import_statements, may_import, statement_targets

ROOT = Path("/project")


def _targets(text: str, importer: str = "/project/app/models/factory.py"):
    return [statement_targets(s, importer, ROOT) for s in import_statements(text.encode())]


def test_from_imports_load_the_module_and_each_name():
    assert _targets("from tensorflow.keras import layers as L, models\n") == [
        frozenset({"tensorflow.keras", "tensorflow.keras.layers", "tensorflow.keras.models"})]


def test_relative_imports_are_made_absolute_from_the_importers_package():
    assert _targets("from ..layers import (blocks,  # the blocks\n    heads)\nfrom . import util\n") == [
        frozenset({"app.layers", "app.layers.blocks", "app.layers.heads"}),
        frozenset({"app.models", "app.models.util"})]


def test_plain_imports_and_several_statements_on_a_line():
    assert _targets("import os.path as p, app.layers; import json\n") == [
        frozenset({"os.path", "app.layers", "json"})]


def test_a_statement_that_cannot_be_read_keeps_the_importer():
    found = _targets("    from the paper, we import ideas\n")
    assert found == [None]
    assert may_import(found, ["app.layers", "layers"])


def test_keras_layers_is_no_import_of_a_project_package_called_layers():
    names = ["app.layers", "layers"]
    assert not may_import(_targets("from tensorflow.keras import layers\n"), names)
    assert may_import(_targets("from app import layers\n"), names)
    assert may_import(_targets("from ..layers import blocks\n"), names)  # a submodule runs the package
    assert may_import(_targets("import layers\n", "/project/train.py"), names)
