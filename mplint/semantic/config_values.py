"""What a read of a configuration object the checked file loads gives: ``cfg.model.lr``
and ``cfg["policy"]`` after ``cfg = EasyDict(yaml.safe_load(open("configs/train.yaml")))``
or ``with open(PATH) as f: cfg = json.load(f)``.

The object must be bound once in its scope and never changed there (no ``cfg.lr =
args.lr``, no ``cfg.update(...)``, not handed whole to a call that may change it); the
file is found and read by the linter (``Evaluator.config_value``: the file's content
keys the cached result). Anything else is unknown, and the rules stay silent.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Dict, FrozenSet, List, Optional, Set

import libcst as cst

from mplint.semantic.config_loads import Written, call_strings, loaded, opened, returned
from mplint.semantic.names import dotted_name, string_key
from mplint.semantic.scopes import Binding, Location, NameWrites, Scope, names_written

if TYPE_CHECKING:
    from mplint.semantic.values import Evaluator

_READ_METHODS = frozenset({"get", "keys", "items", "values", "copy", "to_dict", "toDict"})


class ConfigReads:
    """Reads of configuration objects loaded in the file (one per evaluator)."""

    def __init__(self, evaluator: "Evaluator") -> None:
        self.evaluator = evaluator
        #: scope node's id -> the names a nested part of which it changes (one walk per scope)
        self._deep: Dict[int, FrozenSet[str]] = {}

    def read(self, expr: cst.BaseExpression, loc: Location) -> Optional[FrozenSet[object]]:
        """The value ``expr`` reads from a loaded configuration file, or None."""
        found = self.evaluator.config_value
        if found is None:
            return None
        keys: List[str] = []
        while isinstance(expr, (cst.Attribute, cst.Subscript)):
            if isinstance(expr, cst.Attribute):
                keys.insert(0, expr.attr.value)
            else:
                key = string_key(expr)
                if key is None:
                    return None
                keys.insert(0, key)
            expr = expr.value
        if not keys or not isinstance(expr, cst.Name) or expr.value == "self":
            return None
        written = self.loaded_by(expr.value, loc)
        if written is not None:
            value = found(written, keys)
        else:
            value = self._imported_loader(expr.value, keys, loc)
        return None if value is None else frozenset({value})

    def _imported_loader(self, name: str, keys: List[str], loc: Location) -> object:
        """``cfg = load_config(PATH)`` with the loader imported from another module."""
        binding = self._single(name, loc)
        call = binding.value if binding is not None else None
        ask = self.evaluator.loader_value
        if ask is None or binding is None or not isinstance(call, cst.Call) \
                or not isinstance(call.func, (cst.Name, cst.Attribute)):
            return None
        head: cst.BaseExpression = call.func
        while isinstance(head, cst.Attribute):
            head = head.value
        if not isinstance(head, cst.Name) or loc.reaching(head.value):
            return None  # bound here: the file's own (``loaded_by``)
        where = binding.location()
        return ask(call, keys, lambda path: self._string(path, where))

    def _single(self, name: str, loc: Location) -> Optional[Binding]:
        bindings = loc.reaching(name)
        if len(bindings) != 1:
            return None
        binding = bindings[0]
        scope = binding.scope
        if binding.kind != "assign" or binding.value is None or scope is None \
                or len(scope.bindings.get(name, ())) != 1 or self._changed(scope, name):
            return None
        return binding

    def loaded_by(self, name: str, loc: Location) -> Optional[Written]:
        """The file ``name`` holds the content of, when bound once to it and never changed."""
        binding = self._single(name, loc)
        if binding is None or binding.value is None:
            return None
        where = binding.location()
        found = loaded(binding.value, self._canonical, lambda stream: self._stream(stream, where),
                       lambda path: self._string(path, where))
        call = binding.value
        if found is None and isinstance(call, cst.Call) and isinstance(call.func, cst.Name):
            # ``cfg = load_config("configs/train.yaml")`` with the loader defined in the file
            defined = where.reaching(call.func.value)
            function = defined[0].node if len(defined) == 1 and defined[0].kind == "def" else None
            if isinstance(function, cst.FunctionDef):
                arguments = call_strings(function, call, lambda path: self._string(path, where))
                found = returned(function, self._canonical, arguments)
        return found

    def _string(self, expr: cst.BaseExpression, loc: Location) -> Optional[str]:
        """The one string a path holds: a name bound to one, or ``args.config`` of a flag
        with a string default (what a run given no ``--config`` loads)."""
        found = self.evaluator.value(expr, loc)
        if isinstance(found, str):
            return found
        if isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name):
            bindings = loc.reaching(expr.value.value)
            value = bindings[0].value if len(bindings) == 1 else None
            if isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) \
                    and value.func.attr.value == "parse_args":
                return self.evaluator.flag_default(expr.attr.value)
        return None

    def _stream(self, name: str, loc: Location) -> Optional[Written]:
        bindings = loc.reaching(name)
        if len(bindings) != 1 or bindings[0].kind != "with" or not isinstance(bindings[0].node, cst.WithItem):
            return None
        return opened(bindings[0].node.item, self._canonical)

    def _canonical(self, func: cst.BaseExpression) -> Optional[str]:
        names = self.evaluator.names.resolve(func)
        if len(names) == 1:
            return next(iter(names))
        return "open" if not names and dotted_name(func) == "open" else None

    def _changed(self, scope: Scope, name: str) -> bool:
        if self.evaluator.changed_in_place(scope, name):
            return True
        return name in names_written(self._deep, scope, _DeepWrites)


class _DeepWrites(NameWrites):
    """The names a nested part of whose object a scope changes: ``cfg.model.lr = 1e-3``,
    ``cfg["model"].update(...)``. One walk collects them all."""

    def _add_root(self, expr: cst.BaseExpression) -> None:
        while isinstance(expr, (cst.Attribute, cst.Subscript)):
            expr = expr.value
        if isinstance(expr, cst.Name):
            self.changed.add(expr.value)

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        if isinstance(node.target, (cst.Attribute, cst.Subscript)):
            self._add_root(node.target)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        if isinstance(node.target, (cst.Attribute, cst.Subscript)):
            self._add_root(node.target)

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value not in _READ_METHODS:
            self._add_root(func.value)
        if isinstance(func, cst.Name) and func.value == "setattr" and node.args:
            self._add_root(node.args[0].value)
