"""Numeric constants of another module of the project: ``from config import HIDDEN``,
``config.BATCH_SIZE``, ``settings.CONFIG["units"]`` (integers: sizes), and
``from config import NEG_INF`` (any number: the literals MP501/MP502 judge), and
``config.POLICY`` (strings and numbers alike: what the file's evaluator asks of a name
another module binds, :func:`imported_literal`).

A size is often decided in a config module and used in the model's. The module is
found as Python would import it from the checked file (``imported_layers.module_file``)
and read through :mod:`core.reads`, so a cached result is keyed by its content too.
Only plain constants count: a name bound exactly once at the module's top level (not
in a function or class), to an integer literal, simple arithmetic of such constants,
or a dict literal read by a constant key (with ``numbers``, float literals too). A name bound twice, in a loop, by an import
or a call stays unknown, and so does one the checked file assigns to
(``config.BATCH_SIZE = 32``): the rules stay silent.

A name bound once to a loaded configuration file (``cfg = EasyDict(yaml.safe_load(
open("configs/train.yaml")))``, in a top-level ``with open(...) as f`` block, or by a
loader function of the module called with a literal path) is a container whose keys the
file decides: ``config.cfg.model.epsilon`` and ``cfg["lr"]`` read them
(:mod:`semantic.config_files`, read through ``core.reads`` like the module).
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Callable, Dict, FrozenSet, List, Mapping, Optional, Sequence, Tuple, Union

import libcst as cst

from mplint.semantic.config_loads import Written, by_imports, call_strings, loaded, opened, returned
from mplint.analysis.imported_layers import module_file, parsed_module, star_imported, top_level_imports
from mplint.rule.check import Context
from mplint.run.module_paths import absolute_import
from mplint.semantic import config_files
from mplint.semantic.arithmetic import binary, builtin, builtin_name
from mplint.semantic.config_objects import (
    FROM_CALL, FROM_CLASS, field_assigned, field_source, namespace_keyword, string_keyed_entries,
)
from mplint.semantic.names import canonical, dotted_name, string_key
from mplint.semantic.vocabulary import TENSORFLOW_PACKAGES

_MAX_DEPTH = 8
#: (path, content digest) -> the module's top-level constants (None: unparsable)
_CONSTANTS: Dict[Tuple[str, str], Optional["_Constants"]] = {}

Number = Union[int, float]
Literal = Union[int, float, str]
#: what a constant may be: "int" (a size), "number" (int or float), "literal" (a string too)
Kind = str



def imported_constant(ctx: Context, expr: cst.BaseExpression) -> Optional[Tuple[int, str]]:
    """The integer ``expr`` reads from another module of the project, with where it is
    written (``config.HIDDEN``), or None when unknown."""
    found = _imported(ctx, expr, "int")
    return None if found is None or not isinstance(found[0], int) else (found[0], found[1])


def imported_number(ctx: Context, expr: cst.BaseExpression) -> Optional[Tuple[Number, str]]:
    """The int or float ``expr`` reads from another module of the project
    (``from config import NEG_INF``), with where it is written, or None."""
    found = _imported(ctx, expr, "number")
    return None if found is None or isinstance(found[0], str) else (found[0], found[1])


def imported_literal(ctx: Context, expr: cst.BaseExpression) -> Optional[Literal]:
    """The string or number ``expr`` reads from another module of the project
    (``config.POLICY`` with ``POLICY = "mixed_bfloat16"`` there), or None."""
    found = _imported(ctx, expr, "literal")
    return None if found is None else found[0]


def imported_binding(ctx: Context, expr: cst.BaseExpression
                     ) -> Optional[Tuple[cst.BaseExpression, Mapping[str, Optional[cst.BaseExpression]]]]:
    """The expression another module of the project binds ``expr`` to, once, at its top
    level (``from compat import KERAS_3``), with that module's names bound that way (to
    follow the names the expression reads), or None."""
    found = _bound_elsewhere(ctx, expr)
    value = None if found is None else found[2].values.get(found[1])
    return None if value is None or found is None else (value, found[2].values)


def _bound_elsewhere(ctx: Context, expr: cst.BaseExpression) -> Optional[Tuple[str, str, "_Constants"]]:
    """(module file, name, that module's constants) of the top-level name of another
    module of the project that ``expr`` reads, when this file never assigns it."""
    if (_imported_name(ctx, expr) or "").partition(".")[0] in TENSORFLOW_PACKAGES:
        return None
    found = _defined_by(ctx, expr)
    if found is None:
        return None
    path, name = found
    if os.path.abspath(path) == os.path.abspath(ctx.path) or _assigned_here(ctx.text, name):
        return None
    constants = _constants_of(path)
    return None if constants is None else (path, name, constants)


def imported_constructor(ctx: Context, expr: cst.BaseExpression) -> Optional[Tuple[str, cst.Call]]:
    """The canonical name of the API another module of the project calls, once, at its top
    level, to make what ``expr`` reads (``config.OPTIMIZER`` with ``OPTIMIZER =
    tf.keras.optimizers.Adam(1e-3)`` there: ``tensorflow.keras.optimizers.Adam``), with
    that call; None when the name is bound otherwise, or more than once."""
    found = _bound_elsewhere(ctx, expr)
    value = None if found is None else found[2].values.get(found[1])
    if found is None or not isinstance(value, cst.Call):
        return None
    name = found[2].canonical(value.func)
    return None if name is None else (canonical(name), value)


def imported_field(ctx: Context, call: Optional[cst.Call], attr: str,
                   spread: Callable[[cst.BaseExpression], Optional[Mapping[str, cst.BaseExpression]]],
                   home: Optional[Tuple[str, str]] = None) -> Optional[Tuple[str, object]]:
    """The field ``attr`` of the config object ``call`` builds of a class another module
    of the project defines (``ModelConfig(units=64)`` with ``from config import
    ModelConfig``): (FROM_CALL, the argument the call passes, read in the checked file),
    or (FROM_CLASS, the literal default the class declares); None when unknown. Without a
    call, the field of the object ``home`` names (a module constant). ``home``:
    (module path relative to the project root, class) of a construction another module
    makes, which the program model resolved."""
    if home is not None:
        if not ctx.facts.project_root:
            return None
        found: Optional[Tuple[str, str]] = (os.path.join(ctx.facts.project_root, home[0]), home[1])
    elif call is not None:
        found = _defined_by(ctx, call.func)
    else:
        return None
    if found is None:
        return None
    path, name = found
    if os.path.abspath(path) == os.path.abspath(ctx.path) or attr in ctx.facts.project_set_fields \
            or "*" in ctx.facts.project_set_fields:
        return None
    constants = _constants_of(path)
    if call is None:  # the object the module binds to ``name`` (``CFG = ModelConfig()``)
        value = None if constants is None else constants.object_value(name, [attr], "literal")
        return None if value is None else (FROM_CLASS, value)
    cls = None if constants is None else constants.class_named(name)
    if constants is None or cls is None or constants.sets_attribute(attr):
        return None
    source = field_source(cls, call, attr, constants.resolve, spread)
    if source is None:
        return None
    if source[1] == FROM_CALL:
        return FROM_CALL, source[0]
    value = constants.literal(source[0])
    return None if value is None else (FROM_CLASS, value)


def imported_elements(ctx: Context, expr: cst.BaseExpression) -> Optional[Tuple[List[object], str]]:
    """The elements of the list or tuple literal another module of the project binds
    ``expr`` to once, at its top level (``STAGES = [(64, 1), (96, 2)]``), each evaluated
    there (a nested tuple or list literal as a tuple of its elements' values; an element
    not known, None), with where it is written; None when it is no such literal."""
    found = _bound_elsewhere(ctx, expr)
    if found is None:
        return None
    path, name, constants = found
    if re.search(rf"\b{re.escape(name)}\s*\.\s*(append|extend|insert|remove|pop|sort|reverse)\(", ctx.text):
        return None
    literal = constants.values.get(name)
    if not isinstance(literal, (cst.List, cst.Tuple)) or any(isinstance(e, cst.StarredElement) for e in literal.elements):
        return None
    module = Path(path).stem if Path(path).name != "__init__.py" else Path(path).parent.name
    return [constants.element(e.value) for e in literal.elements], f"{module}.{name}"


def _defined_by(ctx: Context, expr: cst.BaseExpression) -> Optional[Tuple[str, str]]:
    """(file, name) of the project module whose top-level name ``expr`` reads through
    the file's imports (``from utils import load_config``), with no attribute read on it."""
    dotted = _imported_name(ctx, expr)
    if dotted is None or "." not in dotted.lstrip("."):
        return None
    root = Path(ctx.facts.project_root) if ctx.facts.project_root else None
    found = _owner(ctx, dotted, root)
    if found is None or found[3]:
        return None
    return found[1], found[2]


def _imported(ctx: Context, expr: cst.BaseExpression, kind: Kind) -> Optional[Tuple[Literal, str]]:
    keys: List[str] = []
    while isinstance(expr, cst.Subscript):  # ``CONFIG["model"]["units"]``
        key = string_key(expr)
        if key is None:
            return None
        keys.insert(0, key)
        expr = expr.value
    dotted = _imported_name(ctx, expr)
    if dotted is None or "." not in dotted.lstrip(".") or dotted.partition(".")[0] in TENSORFLOW_PACKAGES:
        return None  # ``tf.keras.layers.Dense``: no module of the project
    root = Path(ctx.facts.project_root) if ctx.facts.project_root else None
    found = _owner(ctx, dotted, root)
    if found is None:
        return None
    module, path, name, attributes = found
    if os.path.abspath(path) == os.path.abspath(ctx.path) or _assigned_here(ctx.text, name):
        return None
    constants = _constants_of(path)
    if constants is None:
        return None
    if name in constants.configs:  # ``cfg.model.epsilon`` of ``cfg = yaml.safe_load(open(...))``
        value = constants.config_value(name, attributes + keys, path, root, kind)
    elif attributes and not keys:  # ``config.CFG.norm_eps`` of ``CFG = ModelConfig()``
        if any(field_assigned(ctx.text, attr) or attr in ctx.facts.project_set_fields for attr in attributes) \
                or "*" in ctx.facts.project_set_fields:
            return None
        value = constants.object_value(name, attributes, kind)
    elif attributes or len(keys) > 1:
        return None
    else:
        value = constants.value(name, keys[0] if keys else None, kind=kind)
    if value is None:
        return None
    where = f"{module.rpartition('.')[2]}.{name}" + "".join(f".{a}" for a in attributes) \
        + "".join(f"[{k!r}]" for k in keys)
    return value, where


def _owner(ctx: Context, dotted: str, root: Optional[Path]) -> Optional[Tuple[str, str, str, List[str]]]:
    """(module, its file, the name it binds, the attributes read on it) for a dotted
    name: the longest prefix that is a module of the project, the next part a name it
    binds (``config.CFG.model.lr``: module ``config``, name ``CFG``, ``[model, lr]``)."""
    dots = len(dotted) - len(dotted.lstrip("."))
    parts = dotted[dots:].split(".")
    for end in range(len(parts) - 1, 0, -1):
        module = "." * dots + ".".join(parts[:end])
        if module.startswith("."):
            module = absolute_import(module, os.path.abspath(ctx.path), root)
        path = module_file(module, ctx.path, root) if module else None
        if path is not None:
            return module, path, parts[end], parts[end + 1:]
    return None


def loader_value(ctx: Context, call: cst.Call, keys: Sequence[str],
                 string_of: Callable[[cst.BaseExpression], Optional[str]]) -> Optional[Literal]:
    """The value at ``keys`` of the file a loader function of another module of the
    project returns the content of (``from utils import load_config``, then
    ``load_config("configs/train.yaml")`` in the checked file); None when unknown."""
    found = _defined_by(ctx, call.func)
    if found is None:
        return None
    path, name = found
    constants = _constants_of(path)
    function = None if constants is None else constants.functions.get(name)
    if function is None:
        return None
    written = returned(function, constants.canonical, call_strings(function, call, string_of))  # type: ignore[union-attr]
    if written is None:
        return None
    # a path beside the loader is its module's; any other is where the program runs
    root = Path(ctx.facts.project_root) if ctx.facts.project_root else None
    return file_value(written, keys, path if written.beside_module else ctx.path, root)


def file_value(written: Written, keys: Sequence[str], path: str, root: Optional[Path],
               kind: Kind = "literal") -> Optional[Literal]:
    """The value at ``keys`` of the configuration file the module at ``path`` loads
    (beside it, or relative to where the program runs: the project's root or the
    module's folder), when every file it may be holds the same one of ``kind``; None when
    no such file, key or kind."""
    if not keys:
        return None
    here = Path(path).parent
    folders = [here] if written.beside_module else ([root] if root is not None else []) + [here]
    value = config_files.value(config_files.candidates(written.path, folders), keys)
    if value is None or isinstance(value, bool):
        return None
    if kind == "int" and not isinstance(value, int) or kind == "number" and isinstance(value, str):
        return None
    return value


def _imported_name(ctx: Context, expr: cst.BaseExpression) -> Optional[str]:
    """The dotted name ``expr`` stands for through the file's imports (relative ones
    keep their dots: ``from .config import HIDDEN`` -> ``.config.HIDDEN``)."""
    resolved = ctx.names.resolve(expr)
    if len(resolved) == 1:
        return next(iter(resolved))
    written = dotted_name(expr)
    if written is None or resolved:
        return None
    head, _, rest = written.partition(".")
    target = top_level_imports(ctx.module).get(head) or star_imported(ctx, head)
    return None if target is None else target + ("." + rest if rest else "")


def _assigned_here(text: str, name: str) -> bool:
    """The checked file assigns the imported name or a key of it (``config.BATCH_SIZE =
    32``, ``CONFIG["units"] = ...``, ``cfg.model.lr = args.lr``): its value there is a
    run-time matter."""
    return re.search(rf"\b{re.escape(name)}(\s*\[[^\]\n]*\]|\s*\.\s*\w+)*\s*(\+|-|\*|/)?=(?!=)", text) is not None \
        or re.search(rf"\b{re.escape(name)}(\.\w+)*\.(update|setdefault|pop|clear|merge_with)\(", text) is not None


def _constants_of(path: str) -> Optional["_Constants"]:
    found = parsed_module(path)
    if found is None:
        return None
    digest, module = found
    if (path, digest) not in _CONSTANTS:
        _CONSTANTS[(path, digest)] = _Constants(module)
    return _CONSTANTS[(path, digest)]


class _Constants:
    """A module's top-level names bound exactly once, by a plain assignment."""

    def __init__(self, module: cst.Module) -> None:
        self.values: Dict[str, Optional[cst.BaseExpression]] = {}
        #: names bound once to a loaded configuration file, by the file's written path
        self.configs: Dict[str, Written] = {}
        #: the module's top-level functions (a loader a config name is bound by calling)
        self.functions: Dict[str, cst.FunctionDef] = {}
        #: the module's top-level classes (a config object's class), by name
        self.classes: Dict[str, cst.ClassDef] = {}
        self.canonical = by_imports(top_level_imports(module))
        self._module = module
        self._text: Optional[str] = None
        self._collect(module.body)
        for name in list(self.configs):
            if self.values.get(name) is None:
                del self.configs[name]  # bound again elsewhere: not one file

    def _collect(self, body: object) -> None:
        for statement in body if isinstance(body, (list, tuple)) else ():
            if isinstance(statement, cst.SimpleStatementLine):
                for small in statement.body:
                    self._bind_small(small)
                    changed = _changed_in_place(small)
                    if changed is not None:  # ``STAGES.append((512, 2))``: not the literal's value
                        self._bind(changed, None)
            elif isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
                self._bind(statement.name.value, None)
                if isinstance(statement, cst.FunctionDef):
                    self.functions[statement.name.value] = statement
                else:
                    self.classes[statement.name.value] = statement
            elif isinstance(statement, cst.With) and self._config_block(statement):
                continue
            elif isinstance(statement, (cst.If, cst.For, cst.While, cst.Try, cst.With)):
                # bound under a condition, in a loop or a try: not one value
                for node in _bound_names(statement):
                    self._bind(node, None)

    def _config_block(self, statement: cst.With) -> bool:
        """``with open(PATH) as f: CFG = yaml.safe_load(f)`` at the top level: one name
        bound to the file's content (the block holds only that assignment)."""
        if len(statement.items) != 1 or not isinstance(statement.body, cst.IndentedBlock) \
                or len(statement.body.body) != 1:
            return False
        item = statement.items[0]
        line = statement.body.body[0]
        stream = opened(item.item, self.canonical)
        if stream is None or item.asname is None or not isinstance(item.asname.name, cst.Name) \
                or not isinstance(line, cst.SimpleStatementLine) or len(line.body) != 1:
            return False
        small = line.body[0]
        if not isinstance(small, cst.Assign) or len(small.targets) != 1 \
                or not isinstance(small.targets[0].target, cst.Name):
            return False
        handle = item.asname.name.value
        written = loaded(small.value, self.canonical, lambda name: stream if name == handle else None)
        if written is None:
            return False
        self._bind(item.asname.name.value, None)
        self._bind_small(small, written)
        return True

    def _bind_small(self, small: cst.BaseSmallStatement, written: Optional[Written] = None) -> None:
        if isinstance(small, cst.Assign):
            value: Optional[cst.BaseExpression] = small.value if len(small.targets) == 1 else None
            if value is not None and isinstance(small.targets[0].target, cst.Name):
                written = written or loaded(value, self.canonical) or self._loader_call(value)
                if written is not None:
                    self.configs[small.targets[0].target.value] = written
            for target in small.targets:
                if isinstance(target.target, cst.Name):
                    self._bind(target.target.value, value)
        elif isinstance(small, cst.AnnAssign) and isinstance(small.target, cst.Name):
            self._bind(small.target.value, small.value)
        elif isinstance(small, cst.AugAssign) and isinstance(small.target, cst.Name):
            self._bind(small.target.value, None)
        elif isinstance(small, (cst.Import, cst.ImportFrom)) and not isinstance(getattr(small, "names", None), cst.ImportStar):
            for alias in small.names:  # type: ignore[union-attr]
                bound = alias.asname.name if alias.asname is not None else alias.name
                if isinstance(bound, cst.Name):
                    self._bind(bound.value, None)

    def _loader_call(self, value: cst.BaseExpression) -> Optional[Written]:
        """``CFG = load_config("configs/train.yaml")`` with the loader defined above."""
        if not isinstance(value, cst.Call) or not isinstance(value.func, cst.Name):
            return None
        function = self.functions.get(value.func.value)
        if function is None or self.values.get(value.func.value, cst.Name("x")) is not None:
            return None  # not defined here, or bound again
        return returned(function, self.canonical, call_strings(function, value, lambda expr: None))

    def _bind(self, name: str, value: Optional[cst.BaseExpression]) -> None:
        self.values[name] = value if name not in self.values else None

    def value(self, name: str, key: Optional[str] = None, depth: int = 0, kind: Kind = "int"
              ) -> Optional[Literal]:
        """The constant ``name`` (``name[key]``) holds: an int, a float too for "number",
        and a string too for "literal"; None when it is not one. Arithmetic in between
        may pass through floats (``int(2 * (4 * EMBED_DIM) / 3)``); only the result is of
        ``kind``."""
        return _of_kind(self._value(name, key, depth, kind), kind)

    def _value(self, name: str, key: Optional[str], depth: int, kind: Kind) -> Optional[Literal]:
        expr = self.values.get(name)
        if expr is None:
            return None
        if key is not None:
            if not isinstance(expr, cst.Dict):
                return None
            expr = _entry(expr, key)
            if expr is None:
                return None
        return self._evaluate(expr, depth, kind)

    def class_named(self, name: str) -> Optional[cst.ClassDef]:
        """The top-level class ``name`` of this module, bound once."""
        return self._class(cst.Name(name))

    def sets_attribute(self, attr: str) -> bool:
        """Some code of this module sets ``attr`` on an object other than ``self``."""
        if self._text is None:
            self._text = self._module.code
        return field_assigned(self._text, attr, on_self=False)

    def literal(self, expr: cst.BaseExpression) -> Optional[Literal]:
        """The string or number ``expr`` (written in this module) holds."""
        return self._evaluate(expr, 0, "literal")

    def resolve(self, expr: cst.BaseExpression) -> FrozenSet[str]:
        """The canonical name of ``expr`` through this module's imports."""
        return self._resolve(expr)

    def _resolve(self, expr: cst.BaseExpression) -> FrozenSet[str]:
        found = self.canonical(expr)
        return frozenset() if found is None else frozenset({found})

    def _class(self, expr: cst.BaseExpression) -> Optional[cst.ClassDef]:
        """The class of this module a name bound once denotes."""
        if not isinstance(expr, cst.Name) or expr.value not in self.classes or expr.value not in self.values \
                or self.values[expr.value] is not None or self._bound_again(expr.value):
            return None
        return self.classes[expr.value]

    def _bound_again(self, name: str) -> bool:
        return sum(1 for statement in self._module.body if isinstance(statement, (cst.ClassDef, cst.FunctionDef))
                   and statement.name.value == name) != 1

    def object_value(self, name: str, attributes: Sequence[str], kind: Kind) -> Optional[Literal]:
        """``CFG.model.norm_eps`` of ``CFG = ModelConfig(...)`` bound once here (or
        ``Config.EPS`` of a class): each attribute a field of the config object the one
        before it holds (:mod:`semantic.config_objects`); None when any is unknown or some
        code of this module sets such an attribute."""
        if any(self.sets_attribute(attr) for attr in attributes):
            return None
        current: Optional[cst.BaseExpression] = cst.Name(name)
        for attr in attributes:
            current = self._field(current, attr, 0)
            if current is None:
                return None
        return None if current is None else self._evaluate(current, 0, kind)

    def _field(self, expr: Optional[cst.BaseExpression], attr: str, depth: int) -> Optional[cst.BaseExpression]:
        if expr is None or depth > _MAX_DEPTH:
            return None
        cls = self._class(expr)
        if cls is not None:
            found = field_source(cls, None, attr, self._resolve)
            return None if found is None else found[0]
        if isinstance(expr, cst.Name):
            return self._field(self.values.get(expr.value), attr, depth + 1)
        if isinstance(expr, cst.Call):
            cls = self._class(expr.func)
            if cls is None:
                return namespace_keyword(expr, attr, self._resolve, self._spread)
            found = field_source(cls, expr, attr, self._resolve, self._spread)
            return None if found is None else found[0]
        return None

    def _spread(self, expr: cst.BaseExpression) -> Optional[Mapping[str, cst.BaseExpression]]:
        """``**DEFAULTS`` of a dict literal bound once here."""
        literal = self.values.get(expr.value) if isinstance(expr, cst.Name) else expr
        if not isinstance(literal, cst.Dict) or (isinstance(expr, cst.Name) and self._text is not None and re.search(
                rf"\b{re.escape(expr.value)}(\s*\[[^\]\n]*\]\s*=(?!=)|\.(update|setdefault|pop|clear)\()",
                self._text) is not None):
            return None
        return string_keyed_entries(literal)

    def element(self, expr: cst.BaseExpression) -> object:
        """An element of a sequence literal: its value (a tuple of its elements' for a
        tuple or list literal), None when unknown."""
        if isinstance(expr, (cst.List, cst.Tuple)):
            if any(isinstance(e, cst.StarredElement) for e in expr.elements):
                return None
            return tuple(self.element(e.value) for e in expr.elements)
        return _of_kind(self._evaluate(expr, 0, "literal"), "literal")

    def config_value(self, name: str, keys: Sequence[str], path: str, root: Optional[Path],
                     kind: Kind) -> Optional[Literal]:
        """The value at ``keys`` of the configuration file ``name`` was loaded from
        (:func:`file_value`, for this module at ``path``)."""
        return file_value(self.configs[name], keys, path, root, kind)

    def _evaluate(self, expr: cst.BaseExpression, depth: int, kind: Kind) -> Optional[Literal]:
        if depth > _MAX_DEPTH:
            return None
        if isinstance(expr, (cst.Integer, cst.Float)):
            found = expr.evaluated_value
            return found if isinstance(found, (int, float)) else None
        if kind == "literal" and isinstance(expr, (cst.SimpleString, cst.ConcatenatedString)):
            text = expr.evaluated_value
            return text if isinstance(text, str) else None
        if isinstance(expr, cst.Name):
            return self._value(expr.value, None, depth + 1, kind)
        if isinstance(expr, cst.Subscript) and isinstance(expr.value, cst.Name):
            key = string_key(expr)
            return None if key is None else self._value(expr.value.value, key, depth + 1, kind)
        if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Minus):
            inner = self._evaluate(expr.expression, depth + 1, kind)
            return None if inner is None or isinstance(inner, str) else -inner
        if isinstance(expr, cst.BinaryOperation):
            left = self._evaluate(expr.left, depth + 1, kind)
            right = self._evaluate(expr.right, depth + 1, kind)
            return None if left is None or right is None else binary(expr.operator, left, right)
        if isinstance(expr, cst.Call):  # ``int(2 * (4 * EMBED_DIM) / 3)``, unless the module rebinds ``int``
            name = builtin_name(expr)
            if name is None or name in self.values:
                return None
            args = [self._evaluate(arg.value, depth + 1, kind) for arg in expr.args]
            return None if any(a is None for a in args) else builtin(name, args)
        return None


def _of_kind(value: Optional[Literal], kind: Kind) -> Optional[Literal]:
    """``value`` when it is of ``kind`` ("int": an int; "number": an int or float;
    "literal": a string too), else None."""
    if value is None or isinstance(value, bool):
        return None
    if kind == "int":
        return value if isinstance(value, int) else None
    if kind == "number":
        return None if isinstance(value, str) else value
    return value


_MUTATORS = frozenset({"append", "extend", "insert", "remove", "pop", "sort", "reverse", "update",
                       "setdefault", "clear", "popitem"})


def _changed_in_place(small: cst.BaseSmallStatement) -> Optional[str]:
    """The name a top-level statement changes in place: ``STAGES.append(...)``,
    ``CONFIG["units"] = 64``, ``del CONFIG["units"]``."""
    target: Optional[cst.BaseExpression] = None
    if isinstance(small, cst.Expr) and isinstance(small.value, cst.Call) \
            and isinstance(small.value.func, cst.Attribute) and small.value.func.attr.value in _MUTATORS:
        target = small.value.func.value
    elif isinstance(small, (cst.Assign, cst.AugAssign)):
        targets = [t.target for t in small.targets] if isinstance(small, cst.Assign) else [small.target]
        target = next((t.value for t in targets if isinstance(t, (cst.Subscript, cst.Attribute))), None)
    return target.value if isinstance(target, cst.Name) else None


def _entry(literal: cst.Dict, key: str) -> Optional[cst.BaseExpression]:
    """The value of ``key`` in a dict literal (None when absent, repeated or spread)."""
    found = None
    for element in literal.elements:
        if not isinstance(element, cst.DictElement):
            return None  # ``**other``: any key may come from it
        if isinstance(element.key, cst.SimpleString) and element.key.evaluated_value == key:
            if found is not None:
                return None
            found = element.value
    return found


def _bound_names(node: cst.CSTNode) -> list:
    """Names a compound statement binds at the module's level (not inside defs)."""
    out: list = []
    stack = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, (cst.FunctionDef, cst.ClassDef)):
            out.append(current.name.value)
            continue
        if isinstance(current, (cst.AssignTarget, cst.AnnAssign, cst.AugAssign, cst.For, cst.AsName)):
            target = getattr(current, "target", None) or getattr(current, "name", None)
            for name in _names(target):
                out.append(name)
        if isinstance(current, (cst.Import, cst.ImportFrom)) and not isinstance(current.names, cst.ImportStar):
            for alias in current.names:
                if alias.asname is None and isinstance(alias.name, cst.Name):
                    out.append(alias.name.value)
        stack.extend(current.children)
    return out


def _names(target: Optional[cst.CSTNode]) -> list:
    if isinstance(target, cst.Name):
        return [target.value]
    if isinstance(target, (cst.Tuple, cst.List)):
        return [n for element in target.elements for n in _names(element.value)]
    return []
