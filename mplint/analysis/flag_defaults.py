"""The default of a command-line flag a value is read from: ``args.batch_size`` after
``parser.add_argument("--batch-size", type=int, default=100)``, ``FLAGS.units`` after
``flags.DEFINE_integer("units", 100, ...)`` (in this file, or in a module it imports:
:mod:`analysis.imported_flags`), a ``click`` command's parameter after
``@click.option("--batch-size", default=100)``.

A run without the flag uses the default, so the default is the value the program is
written for. Which object is the parsed command line is the conditions' answer
(``Conditions.key``: ``args = parser.parse_args()``, absl's ``FLAGS``, a parameter
every call passes it to, absl's ``FLAGS`` as another module of the project hands it
on); the flag must be defined once, and a program that writes the destination
(``args.batch_size = ...``) or sets its default leaves it unknown.
"""

from __future__ import annotations

from typing import Dict, List, Optional, Tuple

import libcst as cst

from mplint.analysis.imported_flags import ABSL_NUMBER_DEFINES, changes_flag, imported_flag_default, is_imported_registry
from mplint.rule.check import Analysis, Context
from mplint.semantic.call_args import keyword_only, positional_or_keyword
from mplint.semantic.conditions import FLAGS, Conditions
from mplint.semantic.scopes import Binding, Location
from mplint.semantic.vocabulary import FLAG_OBJECTS

_CLICK_OPTIONS = frozenset({"click.option", "click.argument"})


class FlagDefaults(Analysis):
    def __init__(self, ctx: Context) -> None:
        super().__init__(ctx)
        #: flag destination -> (default expression, where it is written, the flag as written)
        self._defaults: Dict[str, List[Tuple[cst.BaseExpression, Location, str]]] = {}
        self._conditions: Optional[Conditions] = None

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        method = func.attr.value if isinstance(func, cst.Attribute) else func.value if isinstance(func, cst.Name) else ""
        if method == "add_argument":
            self._argparse(node)
        elif method in ABSL_NUMBER_DEFINES:
            name = positional_or_keyword(node, 0, "name")
            default = positional_or_keyword(node, 1, "default")
            if isinstance(name, cst.SimpleString) and isinstance(name.evaluated_value, str) and default is not None:
                self._note(name.evaluated_value, default, f"--{name.evaluated_value}")

    def _argparse(self, node: cst.Call) -> None:
        dest_expr = keyword_only(node, "dest")
        default = keyword_only(node, "default")
        names = _strings(node)
        if not names:
            return
        written = next((s for s in names if s.startswith("--")), names[0])
        dest = dest_expr.evaluated_value if isinstance(dest_expr, cst.SimpleString) else written.lstrip("-").replace("-", "_")
        if not isinstance(dest, str):
            return
        if default is None:
            self._defaults.setdefault(dest, []).append((cst.Name("None"), self.ctx.scopes.location(), written))
            return  # no default: None unless given
        self._note(dest, default, written)

    def _note(self, dest: str, default: cst.BaseExpression, written: str) -> None:
        self._defaults.setdefault(dest, []).append((default, self.ctx.scopes.location(), written))

    # -- answers (after the walk) ----------------------------------------------------
    @property
    def conditions(self) -> Conditions:
        """What the file's branch tests mean (the parsed command line among them)."""
        if self._conditions is None:
            self._conditions = Conditions(self.ctx.names, self.ctx.scopes.calls, self.ctx.scopes.global_names)
        return self._conditions

    def default_of(self, expr: cst.BaseExpression, loc: Location) -> Optional[Tuple[cst.BaseExpression, Location, str]]:
        """The default of the flag ``expr`` reads (``args.batch_size``), where it is
        written, and the flag's name; None when ``expr`` is no flag of this file."""
        if not isinstance(expr, cst.Attribute):
            return None
        dest = expr.attr.value
        imported = is_imported_registry(self.ctx, expr.value)
        if not imported and self.conditions.key(expr, loc) != f"{FLAGS}.{dest}":
            return None
        if not self._defaults.get(dest) and (imported or self._is_absl(expr.value, loc)):
            found = imported_flag_default(self.ctx, dest)  # defined in a module the file imports
            return None if found is None else (found[0], loc, f"--{dest} in {found[1]}")
        return self._only_default(dest)

    def _is_absl(self, expr: cst.BaseExpression, loc: Location) -> bool:
        """absl's registry itself (``flags.FLAGS``), or a name bound to it once
        (``FLAGS = flags.FLAGS``), not argparse's namespace."""
        if self.ctx.names.resolve(expr) & FLAG_OBJECTS:
            return True
        binding = loc.lookup(expr.value) if isinstance(expr, cst.Name) else None
        return binding is not None and binding.value is not None and binding.scope is not None \
            and len(binding.scope.bindings.get(binding.name, ())) == 1 \
            and bool(self.ctx.names.resolve(binding.value) & FLAG_OBJECTS)

    def click_default(self, binding: Binding) -> Optional[Tuple[cst.BaseExpression, Location, str]]:
        """A ``click`` command's parameter: the default its ``@click.option`` gives."""
        scope = binding.scope
        function = scope.node if scope is not None else None
        if binding.kind != "param" or not isinstance(function, cst.FunctionDef) or scope is None:
            return None
        found = []
        for decorator in function.decorators:
            call = decorator.decorator
            if not isinstance(call, cst.Call) or not self.ctx.names.resolve(call.func) & _CLICK_OPTIONS:
                continue
            names = _strings(call)
            plain = [n for n in names if not n.startswith("-")]
            dest = plain[0] if plain else next((n for n in names if n.startswith("--")), "").lstrip("-").replace("-", "_")
            if dest == binding.name:
                default = keyword_only(call, "default")
                if default is None:
                    return None
                written = next((n for n in names if n.startswith("-")), dest)
                found.append((default, Location(scope.parent or scope, binding.order), written))
        return found[0] if len(found) == 1 else None

    def _only_default(self, dest: str) -> Optional[Tuple[cst.BaseExpression, Location, str]]:
        defined = self._defaults.get(dest, [])
        if len(defined) != 1 or self._rewritten(dest):
            return None
        return defined[0]

    def _rewritten(self, dest: str) -> bool:
        """The file changes the parsed value or its default (``args.batch_size *=
        n_gpus``, ``set_defaults``)."""
        return changes_flag(self.ctx.text, dest)


def _strings(call: cst.Call) -> List[str]:
    """The call's positional string literals (a flag's names)."""
    out: List[str] = []
    for arg in call.args:
        value = arg.value.evaluated_value if arg.keyword is None and isinstance(arg.value, cst.SimpleString) else None
        if isinstance(value, str):
            out.append(value)
    return out
