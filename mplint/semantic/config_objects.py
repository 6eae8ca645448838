"""Which expression a field of a config object reads: the argument its construction
passes, else the default its class declares.

One place answers it for every shape a configuration is written in: a dataclass or an
attrs class (``@dataclass class ModelConfig: norm_eps: float = 1e-9``, fields in the
order declared, ``field(default=...)``), a ``NamedTuple`` subclass, a plain class whose
body binds the attribute (``class Config: EPS = 1e-9``), and the namespaces whose
attributes are the keywords they are made with (``SimpleNamespace(a=...)``,
``ml_collections.ConfigDict({"a": ...})``). The evaluator of the checked file asks it
for a class of the file, and ``analysis.module_constants`` for a class or a constant
of another module; each then evaluates the expression where it is written.

Unknown (None) whenever the value is a run-time matter: a method of the class assigns
the attribute (``__post_init__``, an ``__init__`` of a plain class), a base class may
declare the field, the construction spreads ``*args`` or a ``**overrides`` that cannot
be read, or the field has no default and the call does not pass it.
"""

from __future__ import annotations

import re
from typing import Callable, Dict, FrozenSet, Iterator, List, Mapping, Optional, Tuple, Union

import libcst as cst

from mplint.semantic.vocabulary import DATACLASS_DECORATORS, NAMESPACE_CONSTRUCTORS

#: canonical names of an expression (the file's ``NameResolver.resolve``, or another
#: module's imports read as one)
Resolve = Callable[[cst.BaseExpression], FrozenSet[str]]
#: the keys and values of a ``**spread`` of the construction, None when unreadable
Spread = Callable[[cst.BaseExpression], Optional[Mapping[str, cst.BaseExpression]]]

#: where a field's expression is written: in the construction ("call") or in the class body
FROM_CALL = "call"
FROM_CLASS = "class"
Source = Tuple[cst.BaseExpression, str]

_NAMED_TUPLES = frozenset({"typing.NamedTuple", "typing_extensions.NamedTuple"})
#: namespaces made from a dict or keywords: ``ConfigDict({"lr": 0.1})``, ``ConfigDict(lr=0.1)``
_DICT_NAMESPACES = frozenset({"ml_collections.ConfigDict", "ml_collections.config_dict.ConfigDict",
                              "ml_collections.FrozenConfigDict", "easydict.EasyDict", "munch.Munch",
                              "addict.Dict", "box.Box", "dotmap.DotMap"})
#: ``field(default=...)`` of dataclasses and attrs
_FIELD_CALLS = frozenset({"dataclasses.field", "attr.ib", "attr.attrib", "attr.field", "attrs.field"})


def is_config_class(node: cst.ClassDef, resolve: Resolve) -> bool:
    """A dataclass, attrs class or NamedTuple: ``__init__`` takes the declared fields."""
    return _fields_class(node, resolve)


def namespace_keyword(call: cst.Call, attr: str, resolve: Resolve,
                      spread: Optional[Spread] = None) -> Optional[cst.BaseExpression]:
    """``SimpleNamespace(attr=...)`` and the dict namespaces made from a
    dict literal or keywords: the expression bound to ``attr``; None when the call is no
    such namespace, or may hold the key where it cannot be read."""
    names = resolve(call.func)
    if not names & (NAMESPACE_CONSTRUCTORS | _DICT_NAMESPACES):
        return None  # a plain ``dict(a=...)`` has no attribute ``a``: it is read by key (``Evaluator.item``)
    entries: Dict[str, cst.BaseExpression] = {}
    for arg in call.args:
        if arg.keyword is not None:
            entries[arg.keyword.value] = arg.value
        elif arg.star == "" and isinstance(arg.value, cst.Dict) and names & _DICT_NAMESPACES:
            literal = string_keyed_entries(arg.value)
            if literal is None:
                return None
            entries.update(literal)
        elif arg.star == "**" and spread is not None:
            found = spread(arg.value)
            if found is None:
                return None
            entries.update(found)
        else:
            return None  # ``Namespace(**vars(args))``, a dict of another kind
    return entries.get(attr)


def field_source(node: cst.ClassDef, call: Optional[cst.Call], attr: str, resolve: Resolve,
                 spread: Optional[Spread] = None) -> Optional[Source]:
    """What the field ``attr`` of an instance of the class ``node`` reads, built by ``call``
    (None: read on the class itself, ``Config.EPS``): the argument passed, or the default
    declared in the class body, with which of the two it is. None when unknown."""
    if _assigned_in_methods(node, attr) or not _plain_bases(node, resolve):
        return None
    if _fields_class(node, resolve):
        fields = _fields(node, resolve)
        if attr not in fields:
            return None
        if call is not None:
            passed = _passed(call, list(fields), attr, spread)
            if passed is _UNREAD:
                return None
            if isinstance(passed, cst.BaseExpression):
                return passed, FROM_CALL
        default = fields[attr]
        return None if default is None else (default, FROM_CLASS)
    if call is not None and (call.args or _method(node, "__init__") is not None or _method(node, "__new__")):
        return None  # a plain class's own ``__init__`` decides what it stores
    default = _class_binding(node, attr)
    return None if default is None else (default, FROM_CLASS)


def field_assigned(text: str, attr: str, on_self: bool = True) -> bool:
    """Some code of ``text`` sets the attribute on some object (``cfg.norm_eps = args.eps``,
    ``setattr(cfg, "norm_eps", ...)``): a config field read there is a run-time matter.
    ``on_self=False`` leaves out ``self.<attr> = ...`` (a layer storing its own ``units``;
    the config class's own methods are judged by :func:`field_source`)."""
    before = "" if on_self else r"(?<![^.\w]self)(?<!^self)"
    return re.search(rf"{before}\.\s*{re.escape(attr)}\s*(\+|-|\*|/|//)?=(?!=)", text, re.MULTILINE) is not None \
        or re.search(rf"\bsetattr\([^)]*['\"]{re.escape(attr)}['\"]", text) is not None


_UNREAD = object()


def _passed(call: cst.Call, order: List[str], attr: str,
            spread: Optional[Spread]) -> Union[cst.BaseExpression, None, object]:
    """The argument ``call`` binds to the field ``attr`` (by keyword or by position in the
    declared order), None when left out, _UNREAD when a spread hides it."""
    if any(arg.star == "*" for arg in call.args):
        return _UNREAD
    found: Optional[cst.BaseExpression] = None
    for index, arg in enumerate(a for a in call.args if a.keyword is None and not a.star):
        if index < len(order) and order[index] == attr:
            found = arg.value
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == attr:
            found = arg.value
        elif arg.star == "**":
            entries = spread(arg.value) if spread is not None else None
            if entries is None:
                return _UNREAD  # ``Config(**overrides)``: any field may be in it
            if attr in entries:
                found = entries[attr]
    return found


def _fields_class(node: cst.ClassDef, resolve: Resolve) -> bool:
    decorated = any(resolve(d.decorator.func if isinstance(d.decorator, cst.Call) else d.decorator)
                    & DATACLASS_DECORATORS for d in node.decorators)
    return decorated or any(_named_tuple(base.value, resolve) for base in node.bases)


def _named_tuple(expr: cst.BaseExpression, resolve: Resolve) -> bool:
    return bool(resolve(expr) & _NAMED_TUPLES) or (isinstance(expr, cst.Name) and expr.value == "NamedTuple"
                                                    and not resolve(expr))


def _plain_bases(node: cst.ClassDef, resolve: Resolve) -> bool:
    """No base class that may declare fields or attributes of its own (``object`` and
    ``NamedTuple`` only): an inherited field is not followed here."""
    return all(_named_tuple(base.value, resolve) or (isinstance(base.value, cst.Name) and base.value.value == "object")
               for base in node.bases) and not any(k.keyword is not None and k.keyword.value == "metaclass"
                                                   for k in node.keywords)


def _body(node: cst.ClassDef) -> Iterator[cst.BaseSmallStatement]:
    for statement in node.body.body if isinstance(node.body, cst.IndentedBlock) else ():
        if isinstance(statement, cst.SimpleStatementLine):
            yield from statement.body


def _fields(node: cst.ClassDef, resolve: Resolve) -> Dict[str, Optional[cst.BaseExpression]]:
    """The declared fields in order, each with its default (None: none, or a factory)."""
    out: Dict[str, Optional[cst.BaseExpression]] = {}
    for small in _body(node):
        target = small.target if isinstance(small, cst.AnnAssign) else \
            small.targets[0].target if isinstance(small, cst.Assign) and len(small.targets) == 1 else None
        if not isinstance(target, cst.Name):
            continue
        value = small.value if isinstance(small, (cst.AnnAssign, cst.Assign)) else None
        field_call = isinstance(value, cst.Call) and bool(resolve(value.func) & _FIELD_CALLS)
        if isinstance(small, cst.AnnAssign):
            annotation = small.annotation.annotation
            if "ClassVar" in (cst.Module([]).code_for_node(annotation)):
                continue
        elif not field_call:
            continue  # ``x = 1`` without an annotation: no field (attrs' ``x = attr.ib()`` is one)
        if isinstance(value, cst.Call) and field_call:
            value = next((a.value for a in value.args if a.keyword is not None and a.keyword.value == "default"),
                         None)
        out[target.value] = value
    return out


def _class_binding(node: cst.ClassDef, attr: str) -> Optional[cst.BaseExpression]:
    """The one value the class body binds ``attr`` to (None: none, or bound twice)."""
    found: List[Optional[cst.BaseExpression]] = []
    for small in _body(node):
        if isinstance(small, cst.Assign) and any(isinstance(t.target, cst.Name) and t.target.value == attr
                                                 for t in small.targets):
            found.append(small.value)
        elif isinstance(small, cst.AnnAssign) and isinstance(small.target, cst.Name) and small.target.value == attr:
            found.append(small.value)
        elif isinstance(small, cst.AugAssign) and isinstance(small.target, cst.Name) and small.target.value == attr:
            return None
    for statement in node.body.body if isinstance(node.body, cst.IndentedBlock) else ():
        if isinstance(statement, (cst.FunctionDef, cst.ClassDef)) and statement.name.value == attr:
            return None
        if not isinstance(statement, (cst.SimpleStatementLine, cst.FunctionDef, cst.ClassDef)):
            return None  # bound under a condition or in a loop of the class body
    return found[0] if len(found) == 1 else None


def _method(node: cst.ClassDef, name: str) -> Optional[cst.FunctionDef]:
    for statement in node.body.body if isinstance(node.body, cst.IndentedBlock) else ():
        if isinstance(statement, cst.FunctionDef) and statement.name.value == name:
            return statement
    return None


def _assigned_in_methods(node: cst.ClassDef, attr: str) -> bool:
    """A method of the class sets the attribute (``self.norm_eps = ...`` in
    ``__post_init__``, ``setattr(self, ...)``, ``object.__setattr__``)."""
    for statement in node.body.body if isinstance(node.body, cst.IndentedBlock) else ():
        if isinstance(statement, cst.FunctionDef):
            text = cst.Module([]).code_for_node(statement)
            if field_assigned(text, attr) or "__setattr__" in text or "__dict__" in text:
                return True
    return False


def string_keyed_entries(literal: cst.Dict) -> Optional[Dict[str, cst.BaseExpression]]:
    """Key -> value of a dict literal whose every key is a string literal, else None."""
    out: Dict[str, cst.BaseExpression] = {}
    for element in literal.elements:
        if not isinstance(element, cst.DictElement) or not isinstance(element.key, cst.SimpleString):
            return None
        key = element.key.evaluated_value
        if not isinstance(key, str):
            return None
        out[key] = element.value
    return out
