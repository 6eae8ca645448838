"""Keras modules a caller hands in: keras_applications' ``get_submodules_from_kwargs``.

keras_applications (and its copies: efficientnet, classification_models,
segmentation_models) never imports Keras. Each model module keeps ``backend = None``,
``layers = None``, ... and the public builder rebinds them at run time::

    def DenseNet(..., **kwargs):
        global backend, layers, models, keras_utils
        backend, layers, models, keras_utils = get_submodules_from_kwargs(kwargs)

``tf.keras.applications`` passes ``tf.keras.layers`` and its siblings, standalone Keras its
own, so ``layers.Dense(...)`` there is ``keras.layers.Dense`` whichever caller runs it. The
callers are outside the repository, so the protocol itself is the evidence
(:data:`~mplint.semantic.vocabulary.KERAS_SUBMODULE_INJECTORS`): the injector's name,
called with one argument and unpacked into exactly its four modules. A module-level name
counts only when every module-level binding of it is ``None`` and a top-level function
declares it ``global`` before rebinding it that way: anything else bound to the name (an
import of ``torch.nn as layers``, a project class) keeps it unknown.
"""

from __future__ import annotations

from typing import Dict, Iterator, Optional, Set, Tuple

import libcst as cst

from mplint.semantic.vocabulary import INJECTED_KERAS_SUBMODULES, KERAS_SUBMODULE_INJECTORS


def injected_submodules(value: cst.BaseExpression, arity: int) -> Optional[Tuple[str, ...]]:
    """The Keras module each of ``arity`` unpacked names receives from ``value``, when it is
    the protocol's ``get_submodules_from_kwargs(kwargs)`` call; None for any other value."""
    if not isinstance(value, cst.Call) or arity != len(INJECTED_KERAS_SUBMODULES):
        return None
    func = value.func
    name = func.value if isinstance(func, cst.Name) else func.attr.value if isinstance(func, cst.Attribute) else None
    if name not in KERAS_SUBMODULE_INJECTORS:
        return None
    if len(value.args) != 1 or value.args[0].keyword is not None or value.args[0].star:
        return None
    return INJECTED_KERAS_SUBMODULES


def unpacked_names(target: cst.BaseExpression) -> Optional[Tuple[str, ...]]:
    """``(a, b, c)`` for a tuple or list target of plain names, else None."""
    if not isinstance(target, (cst.Tuple, cst.List)):
        return None
    names = []
    for element in target.elements:
        if isinstance(element, cst.StarredElement) or not isinstance(element.value, cst.Name):
            return None
        names.append(element.value.value)
    return tuple(names)


def injected_globals(module: cst.Module, imported: Set[str]) -> Dict[str, str]:
    """Module-level name -> the Keras module the protocol rebinds it to, for names every
    module-level binding of which is ``None`` (``imported``: the names the module's imports
    bind, which stay what they are)."""
    placeholders = _none_placeholders(module) - imported
    if not placeholders:
        return {}
    found: Dict[str, str] = {}
    for statement in module.body:
        if not isinstance(statement, cst.FunctionDef) or not isinstance(statement.body, cst.IndentedBlock):
            continue
        declared = _declared_global(statement.body) & placeholders
        if not declared:
            continue
        for assign in _assignments(statement.body):
            names = unpacked_names(assign.targets[0].target) if len(assign.targets) == 1 else None
            modules = injected_submodules(assign.value, len(names)) if names is not None else None
            if names is None or modules is None:
                continue
            for name, qualified in zip(names, modules):
                if name in declared:
                    found[name] = qualified
    return found


def _none_placeholders(module: cst.Module) -> Set[str]:
    """Names bound at module level, each only ever to ``None`` there."""
    none: Set[str] = set()
    other: Set[str] = set()
    for statement in module.body:
        if isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
            other.add(statement.name.value)
            continue
        if not isinstance(statement, cst.SimpleStatementLine):
            continue  # bindings under if/try at module level are not placeholders
        for small in statement.body:
            if isinstance(small, cst.Assign):
                is_none = isinstance(small.value, cst.Name) and small.value.value == "None"
                for target in small.targets:
                    for name in _bound_names(target.target):
                        (none if is_none else other).add(name)
            elif isinstance(small, cst.AnnAssign) or isinstance(small, cst.AugAssign):
                other.update(_bound_names(small.target))
    return none - other


def _bound_names(target: cst.BaseExpression) -> Iterator[str]:
    if isinstance(target, cst.Name):
        yield target.value
    elif isinstance(target, (cst.Tuple, cst.List)):
        for element in target.elements:
            yield from _bound_names(element.value)


def _declared_global(body: cst.IndentedBlock) -> Set[str]:
    """Names a ``global`` statement among the function's own top statements declares."""
    declared: Set[str] = set()
    for statement in body.body:
        if isinstance(statement, cst.SimpleStatementLine):
            for small in statement.body:
                if isinstance(small, cst.Global):
                    declared.update(item.name.value for item in small.names)
    return declared


def _assignments(block: cst.BaseSuite) -> Iterator[cst.Assign]:
    """The assignments of a function body, through its compound statements but not into
    nested functions or classes (their ``global`` is their own)."""
    if not isinstance(block, cst.IndentedBlock):
        return
    for statement in block.body:
        if isinstance(statement, cst.SimpleStatementLine):
            yield from (small for small in statement.body if isinstance(small, cst.Assign))
        elif isinstance(statement, cst.BaseCompoundStatement) \
                and not isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
            for suite in _suites(statement):
                yield from _assignments(suite)


def _suites(statement: cst.BaseCompoundStatement) -> Iterator[cst.BaseSuite]:
    body = getattr(statement, "body", None)
    if isinstance(body, cst.BaseSuite):
        yield body
    for handler in getattr(statement, "handlers", ()):
        yield handler.body
    orelse = getattr(statement, "orelse", None)
    while orelse is not None:
        yield orelse.body
        orelse = getattr(orelse, "orelse", None)
    final = getattr(statement, "finalbody", None)
    if final is not None:
        yield final.body
