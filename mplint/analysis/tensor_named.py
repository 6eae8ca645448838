"""A function of another module chosen by a name written out here.

``self._act = activations.get_activation('hard_sigmoid')`` then ``self._act(x)``:
``get_activation`` returns ``name_to_fn[identifier]``, an item of a dict written out
in its own body (or at its module's top level) whose values are that module's
functions. The string this call passes picks the function (as written, or lowered:
``identifier = str(identifier).lower()``), and the 16-bit tensor handed to
``self._act`` is judged inside it like one handed to any imported function. A key
that cannot be read, an item that is no top-level ``def`` of that module
(``functools.partial(gelu, ...)``), or a getter that may return anything else stays
unknown.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Optional

import libcst as cst

from mplint.core.find_nodes import mentions
from mplint.semantic.scopes import Scope
from mplint.semantic.vocabulary import names_tensorflow

if TYPE_CHECKING:  # pragma: no cover
    from mplint.analysis.tensor_kinds import TensorKinds, Where


def named_function(kinds: "TensorKinds", other: "TensorKinds", getter: Scope, call: cst.Call,
                   where: "Where") -> Optional[Scope]:
    """The top-level function of ``other``'s module that ``getter`` (a function of
    that module) returns for ``call``'s string argument; None when that is unknown."""
    node = getter.node
    if not isinstance(node, cst.FunctionDef) or len(call.args) != 1 or call.args[0].star:
        return None
    found = kinds.ctx.values.values(call.args[0].value, where.loc)
    if not found or len(found) != 1:
        return None
    key = next(iter(found))
    if not isinstance(key, str):
        return None
    returns = other.function_returns(getter)
    picked: Optional[Scope] = None
    for value, _ in returns:
        if isinstance(value, cst.Subscript):
            function = _item(other, getter, value, key)
            if function is None or (picked is not None and function is not picked):
                return None
            picked = function
        elif not _fallback(other, value):
            return None
    return picked


def _item(other: "TensorKinds", getter: Scope, value: cst.Subscript, key: str) -> Optional[Scope]:
    """The function ``table[name]`` holds under ``key`` (or ``key.lower()``)."""
    if not isinstance(value.value, cst.Name) or len(value.slice) != 1 \
            or not _keyed_by_parameter(getter, value.slice[0].slice):
        return None
    table = _dict_literal(other, getter, value.value.value)
    if table is None:
        return None
    for wanted in (key, key.lower()):
        for element in table.elements:
            if isinstance(element, cst.DictElement) and isinstance(element.key, cst.SimpleString) \
                    and element.key.evaluated_value == wanted:
                item = element.value
                return _module_function(other, item.value) if isinstance(item, cst.Name) else None
    return None


def _keyed_by_parameter(getter: Scope, index: cst.BaseSlice) -> bool:
    """``table[identifier]`` with ``identifier`` the getter's first parameter, perhaps
    rebound from itself (``identifier = str(identifier).lower()``)."""
    node = getter.node
    if not isinstance(index, cst.Index) or not isinstance(index.value, cst.Name) \
            or not isinstance(node, cst.FunctionDef) or not node.params.params:
        return False
    name = index.value.value
    if node.params.params[0].name.value != name:
        return False
    for binding in getter.bindings.get(name, []):
        if binding.kind == "param":
            continue
        if binding.kind != "assign" or binding.value is None or not mentions(binding.value, name):
            return False
    return True


def _dict_literal(other: "TensorKinds", getter: Scope, name: str) -> Optional[cst.Dict]:
    """The dict written out that ``name`` is bound to, once, in the getter or at the top
    level of its module."""
    for scope in (getter, other.ctx.scopes.module_scope):
        bindings = scope.bindings.get(name, [])
        if bindings:
            if len(bindings) != 1 or bindings[0].kind != "assign" or not isinstance(bindings[0].value, cst.Dict):
                return None
            return bindings[0].value
    return None


def _module_function(other: "TensorKinds", name: str) -> Optional[Scope]:
    module = other.ctx.scopes.module_scope
    bindings = module.bindings.get(name, [])
    if len(bindings) != 1 or bindings[0].kind != "def":
        return None
    return next((c for c in module.children if c.node is bindings[0].node), None)


def _fallback(other: "TensorKinds", value: cst.BaseExpression) -> bool:
    """A return besides the table's: a Keras or TensorFlow getter for other names
    (``tf.keras.activations.get(identifier)``), which the picked key never reaches
    when the table holds it."""
    return isinstance(value, cst.Call) and names_tensorflow(other.ctx.names.resolve(value.func))
