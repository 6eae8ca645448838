"""Which configuration file an expression loads: ``yaml.safe_load(open("conf.yaml"))``,
``EasyDict(json.load(f))`` inside ``with open(PATH) as f``, ``OmegaConf.load(PATH)``.

The calls are facts about APIs (``vocabulary.CONFIG_STREAM_LOADERS``,
``CONFIG_FILE_LOADERS``, ``CONFIG_WRAPPERS``, ``FILE_OPENERS``); this module reads the
shape of one expression with the canonical names of its calls (the names a
module binds decide what ``yaml`` or ``EasyDict`` is), and says which path it names.
A path is a string literal (relative to where the program runs: the caller tries the
project's root and the module's folder) or one joined to the module's own folder
(``os.path.join(os.path.dirname(__file__), "conf.yaml")``, ``Path(__file__).parent /
"conf.yaml"``); the caller may know the one string a name or a flag holds
(``args.config`` of ``--config`` with ``default="configs/train.yaml"``). Any other path
(a flag with no default, a parameter, an f-string) is unknown.
"""

from __future__ import annotations

from typing import Callable, Mapping, NamedTuple, Optional

import libcst as cst

from mplint.semantic.names import dotted_name
from mplint.semantic.vocabulary import CONFIG_FILE_LOADERS, CONFIG_STREAM_LOADERS, CONFIG_WRAPPERS, FILE_OPENERS


#: the canonical name a call's function stands for (None when it is not one name)
Canonical = Callable[[cst.BaseExpression], Optional[str]]
#: the file a name bound to an opened stream reads (``with open(PATH) as f``), or None
Streams = Callable[[str], Optional["Written"]]
#: the one string a path expression holds where it is written (``args.config`` with a
#: flag's default), or None
Strings = Callable[[cst.BaseExpression], Optional[str]]


def _no_streams(name: str) -> Optional["Written"]:
    return None


def _no_strings(expr: cst.BaseExpression) -> Optional[str]:
    return None


class Written(NamedTuple):
    """A configuration file's path as the code writes it."""

    path: str
    #: joined to the folder of the module that loads it (``__file__``), not the working one
    beside_module: bool


def loaded(expr: cst.BaseExpression, canonical: Canonical, streams: Streams = _no_streams,
           strings: Strings = _no_strings) -> Optional[Written]:
    """The file ``expr`` parses into a dict (through any wrappers), or None. ``streams``
    says which file a name bound to an opened stream reads (``with open(PATH) as f``)."""
    for _ in range(4):
        if not isinstance(expr, cst.Call) or not expr.args:
            return None
        name = canonical(expr.func)
        first = expr.args[0]
        if name in CONFIG_WRAPPERS:
            if first.keyword is not None or len(expr.args) != 1:
                return None
            expr = first.value
            continue
        if name in CONFIG_FILE_LOADERS and first.keyword is None:
            return _path(first.value, canonical, strings)
        if name in CONFIG_STREAM_LOADERS and first.keyword is None:
            return opened(first.value, canonical, streams, strings)
        return None
    return None


def opened(expr: cst.BaseExpression, canonical: Canonical, streams: Streams = _no_streams,
           strings: Strings = _no_strings) -> Optional[Written]:
    """The file a stream expression reads: ``open(PATH)`` (for reading) or a name
    ``streams`` binds to one."""
    if isinstance(expr, cst.Name):
        return streams(expr.value)
    if not isinstance(expr, cst.Call) or not expr.args or canonical(expr.func) not in FILE_OPENERS:
        return None
    mode = expr.args[1].value if len(expr.args) > 1 and expr.args[1].keyword is None else next(
        (a.value for a in expr.args if a.keyword is not None and a.keyword.value == "mode"), None)
    if mode is not None and not (isinstance(mode, cst.SimpleString) and "r" in str(mode.evaluated_value)):
        return None
    return _path(expr.args[0].value, canonical, strings) if expr.args[0].keyword is None else None


def _path(expr: cst.BaseExpression, canonical: Canonical, strings: Strings = _no_strings) -> Optional[Written]:
    literal = _string(expr) or strings(expr)
    if literal is not None:
        return Written(literal, False)
    if isinstance(expr, cst.Call) and canonical(expr.func) == "os.path.join" \
            and len(expr.args) >= 2 and _module_folder(expr.args[0].value, canonical):
        parts = [_string(a.value) for a in expr.args[1:]]
        if all(p is not None for p in parts):
            return Written("/".join(p for p in parts if p is not None), True)
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Divide) \
            and _module_folder(expr.left, canonical):
        right = _string(expr.right)
        if right is not None:
            return Written(right, True)
    return None


def _module_folder(expr: cst.BaseExpression, canonical: Canonical) -> bool:
    """``os.path.dirname(__file__)`` (or of its abspath/realpath), ``Path(__file__).parent``."""
    if isinstance(expr, cst.Attribute) and expr.attr.value == "parent" and isinstance(expr.value, cst.Call):
        call = expr.value
        return canonical(call.func) in ("pathlib.Path", "pathlib.PurePath") and len(call.args) == 1 \
            and _is_file(call.args[0].value, canonical)
    if isinstance(expr, cst.Call) and canonical(expr.func) == "os.path.dirname" and len(expr.args) == 1:
        return _is_file(expr.args[0].value, canonical)
    return False


def _is_file(expr: cst.BaseExpression, canonical: Canonical) -> bool:
    if isinstance(expr, cst.Name):
        return expr.value == "__file__"
    if isinstance(expr, cst.Call) and len(expr.args) == 1 \
            and canonical(expr.func) in ("os.path.abspath", "os.path.realpath"):
        return _is_file(expr.args[0].value, canonical)
    return False


def _string(expr: cst.BaseExpression) -> Optional[str]:
    if isinstance(expr, (cst.SimpleString, cst.ConcatenatedString)):
        value = expr.evaluated_value
        return value if isinstance(value, str) else None
    return None


def by_imports(imports: Mapping[str, str]) -> Canonical:
    """:data:`Canonical` from a module's top-level imports (``open`` stays ``open``: a
    builtin no import rebinds)."""
    def canonical(func: cst.BaseExpression) -> Optional[str]:
        written = dotted_name(func)
        if written is None:
            return None
        head, _, rest = written.partition(".")
        target = imports.get(head)
        if target is None:
            return written if written == "open" else None
        return target + ("." + rest if rest else "")
    return canonical
