"""Callables picked by name: what the summaries note and how the program model reads it.

``self._gate = activations.get_activation("hard_sigmoid")`` then ``self._gate(x)``
runs ``hard_sigmoid`` when ``get_activation`` returns ``name_to_fn[identifier]`` of a
dict of functions keyed by string literals: the literal key picks the entry, as a
literal default picks a value. ``self._gate = activations.hard_sigmoid`` and
``self._gate = getattr(activations, "hard_sigmoid")`` name it outright. A call through
the attribute is then a call of the picked function: the program model resolves it
(``ProgramModel._resolve``), hands the function the call's arguments
(``ProgramModel.arguments``) and governs it under the caller's policy.

Precision: an attribute bound anywhere else in its class (``self._gate = None`` first,
a second pick), a key that is not a string literal, a key the dict lacks, or a key the
function rewrites other than by ``str()``/``.lower()``/``.strip()`` pick nothing.
"""

from __future__ import annotations

import ast
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from mplint.run.dotted import dotted

#: a picked form: [dotted callable], or [dotted picker, argument slot, string key]
Form = List[str]
#: the rewrites of a key that keep a string the same or lower its case
_KEY_REWRITES = frozenset({"str", "lower", "strip"})


def note_callable(callables: Dict[str, Form], targets: Sequence[ast.AST], value: Optional[ast.AST],
                  params: Sequence[str]) -> None:
    """Notes what each ``self.<attr>`` target of one assignment in a method holds, in
    ``ClassSummary.callables``: a second different binding makes it [] (unknown)."""
    for target in targets:
        if _self_attribute(target):
            assert isinstance(target, ast.Attribute)
            form = callable_form(value, params) or []
            known = callables.get(target.attr)
            callables[target.attr] = form if known is None or known == form else []
        elif isinstance(target, (ast.Tuple, ast.List)):
            for element in target.elts:
                if _self_attribute(element):
                    assert isinstance(element, ast.Attribute)
                    callables[element.attr] = []


def callable_form(value: Optional[ast.AST], params: Sequence[str]) -> Optional[Form]:
    """``fn`` / ``mod.fn``: [dotted]; ``getattr(mod, "fn")``: [``mod.fn``]; ``pick("key")``
    with one string-literal argument: [``pick``, slot, key]; None for anything else."""
    if isinstance(value, (ast.Name, ast.Attribute)):
        written = dotted(value)
        head = (written or "").partition(".")[0]
        if written is None or head in ("self", "cls", "None", "True", "False") or head in params:
            return None
        return [written]
    if not isinstance(value, ast.Call):
        return None
    callee = dotted(value.func)
    if callee is None or callee.partition(".")[0] in ("self", "cls") or callee.partition(".")[0] in params:
        return None
    if callee == "getattr" and len(value.args) == 2 and not value.keywords:
        owner, name = dotted(value.args[0]), _string(value.args[1])
        if owner is None or name is None or owner.partition(".")[0] in ("self", "cls", *params):
            return None
        return [f"{owner}.{name}"]
    arguments: List[Tuple[str, Any]] = [(str(i), a) for i, a in enumerate(value.args)]
    arguments += [(k.arg, k.value) for k in value.keywords if k.arg is not None]
    if len(arguments) != 1 or len(value.args) + len(value.keywords) != 1:
        return None
    slot, argument = arguments[0]
    key = _string(argument)
    return None if key is None else [callee, slot, key]


def picked_return(value: Optional[ast.AST], params: Sequence[str],
                  assigns: Sequence[Any]) -> Optional[Tuple[str, str, Dict[str, str]]]:
    """(parameter, module-level dict, entries) for ``return NAME[key]`` where ``key`` is a
    parameter (or a name bound only to ``str(param).lower()`` and the like) and ``NAME``
    a dict of callables the function writes out once (its string keys -> dotted values)
    or binds nowhere (a module-level dict, named)."""
    if not (isinstance(value, ast.Subscript) and isinstance(value.value, ast.Name)
            and isinstance(value.slice, ast.Name)):
        return None
    param = _key_parameter(value.slice.id, params, assigns)
    if param is None:
        return None
    name = value.value.id
    bound = [node.value for node in assigns for target in _targets(node)
             if isinstance(target, ast.Name) and target.id == name]
    if not bound:
        return param[0], name, {}
    if len(bound) != 1 or not isinstance(bound[0], ast.Dict):
        return None
    entries: Dict[str, str] = {}
    for key, entry in zip(bound[0].keys, bound[0].values):
        text = _string(key) if key is not None else None
        written = dotted(entry) if isinstance(entry, (ast.Name, ast.Attribute)) else None
        if text is not None and written is not None and (not param[1] or text == text.lower()):
            entries[text] = written
    return (param[0], "", entries) if entries else None


def if_chain_pick(node: ast.AST, params: Sequence[str]) -> Optional[Tuple[str, str, Dict[str, str]]]:
    """(parameter, "", entries) of a function whose top-level ``if``/``elif`` chain returns a
    callable by a parameter's value (``if name == "hard_swish": return hard_swish``), each
    arm one ``return`` of a dotted name; None when another ``if`` at its top level returns
    too (it may pick first) or the chain tests two parameters."""
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return None
    entries: Dict[str, str] = {}
    tested: Optional[str] = None
    for stmt in node.body:
        current: Optional[ast.stmt] = stmt
        while isinstance(current, ast.If):
            arm = _keyed_arm(current, params)
            if arm is None:
                if any(isinstance(inner, ast.Return) for inner in ast.walk(current)):
                    return None
                break
            param, key, written = arm
            if tested not in (None, param):
                return None
            tested = param
            entries.setdefault(key, written)
            current = current.orelse[0] if len(current.orelse) == 1 else None
    return (tested, "", entries) if tested is not None and entries else None


def _keyed_arm(stmt: ast.If, params: Sequence[str]) -> Optional[Tuple[str, str, str]]:
    """(parameter, key, dotted callable) of ``if param == "key": return fn``."""
    test = stmt.test
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq)
            and len(stmt.body) == 1 and isinstance(stmt.body[0], ast.Return)):
        return None
    sides = [test.left, test.comparators[0]]
    names = [side.id for side in sides if isinstance(side, ast.Name) and side.id in params]
    keys = [key for key in map(_string, sides) if key is not None]
    value = stmt.body[0].value
    written = dotted(value) if isinstance(value, (ast.Name, ast.Attribute)) else None
    if len(names) != 1 or len(keys) != 1 or written is None:
        return None
    return names[0], keys[0], written


def picked_entry(picks: Sequence[Tuple[str, str, Dict[str, str]]], params: Sequence[str], slot: str, key: str,
                 keyed: Callable[[str], Dict[str, str]]) -> Optional[str]:
    """The dotted callable a function with ``picks`` returns for the call that passes the
    string ``key`` in ``slot`` (a position or a keyword): the entry every pick agrees
    on; None when a pick lacks the key or reads another parameter."""
    found: Optional[str] = None
    for param, registry, entries in picks:
        position = params.index(param) if param in params else -1
        if slot != param and slot != str(position):
            return None
        entry = (keyed(registry) if registry else entries).get(key)
        if entry is None or (found is not None and entry != found):
            return None
        found = entry
    return found


def _key_parameter(name: str, params: Sequence[str], assigns: Sequence[Any]) -> Optional[Tuple[str, bool]]:
    """(the parameter ``name`` holds, whether its case is lowered): ``name`` is a parameter
    that every assignment of it rewrites only by ``str()``/``.lower()``/``.strip()``."""
    if name not in params:
        return None
    lowered = False
    for node in assigns:
        for target in _targets(node):
            if isinstance(target, ast.Name) and target.id == name:
                chain = _rewrites(node.value, name)
                if chain is None:
                    return None
                lowered = lowered or "lower" in chain
            elif isinstance(target, (ast.Tuple, ast.List)) and any(
                    isinstance(e, ast.Name) and e.id == name for e in ast.walk(target)):
                return None
    return name, lowered


def _rewrites(value: Optional[ast.AST], name: str) -> Optional[List[str]]:
    """The rewrites ``str(name).lower()`` applies to ``name`` (["lower", "str"]); None when
    ``value`` is anything else."""
    chain: List[str] = []
    while isinstance(value, ast.Call) and not value.keywords:
        func = value.func
        if isinstance(func, ast.Name) and func.id in _KEY_REWRITES and len(value.args) == 1:
            chain.append(func.id)
            value = value.args[0]
        elif isinstance(func, ast.Attribute) and func.attr in _KEY_REWRITES and not value.args:
            chain.append(func.attr)
            value = func.value
        else:
            return None
    return chain if isinstance(value, ast.Name) and value.id == name else None


def _targets(node: Any) -> List[ast.AST]:
    return list(node.targets) if isinstance(node, ast.Assign) else [node.target]


def _self_attribute(node: ast.AST) -> bool:
    return isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self"


def _string(node: Optional[ast.AST]) -> Optional[str]:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None
