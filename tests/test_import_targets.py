"""The modules an import statement may load, read from its bytes: a one-file run keeps
an importer only when a statement names the module or a submodule of it, never fewer
than the program model resolves (the reverse-dependency prefilter of issue #24)."""

from pathlib import Path

from mplint.run.import_targets import import_statements, may_import, reachable_below, statement_targets

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


def _below(text: str, importer: str = "/project/app/models/factory.py"):
    return [reachable_below(s, importer, ROOT) for s in import_statements(text.encode())]


def test_what_a_statement_makes_reachable_below_it():
    # ``import a.b`` binds ``a``: ``a.c.f()`` may name any module under it
    assert _below("import app.layers.blocks as b, json\n") == [frozenset({"app", "json"})]
    # ``from a import b`` binds ``a.b`` (a package's modules by attribute), not ``a``
    assert _below("from ..layers import blocks\n") == [frozenset({"app.layers.blocks"})]
    # a star import binds the module's names, its submodules among them
    assert _below("from app.layers import *\n") == [frozenset({"app.layers"})]
    assert _below("    from the paper, we import ideas\n") == [None]


def test_a_docstring_line_that_starts_with_from_is_no_statement():
    # a ``from`` line without ``import`` (nor a continuation) is prose Python never runs
    assert _targets("    from the output.\n") == [frozenset()]
    assert not may_import(_targets("        from a model class like\n"), ["app.layers", "layers"])
    assert _targets("from app \\\n    import layers\n")[0] is None  # continued: kept unread
