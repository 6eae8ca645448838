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

from typing import Callable, Dict, List, Mapping, NamedTuple, Optional

import libcst as cst

from mplint.semantic.call_args import _Unreadable, argument_for
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
           strings: Strings = _no_strings,
           local: Callable[[str], Optional[cst.BaseExpression]] = lambda name: None) -> Optional[Written]:
    """The file ``expr`` parses into a dict (through any wrappers), or None. ``streams``
    says which file a name bound to an opened stream reads (``with open(PATH) as f``),
    ``local`` what a name of a loader function holds (``return EasyDict(config)``)."""
    for _ in range(6):
        if isinstance(expr, cst.Name):
            found = local(expr.value)
            if found is None:
                return None
            expr = found
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


def returned(function: cst.FunctionDef, canonical: Canonical, arguments: Mapping[str, str]) -> Optional[Written]:
    """The file a loader function returns the content of, its path parameters given
    ``arguments`` (``def load_config(path): with open(path) as f: return
    yaml.safe_load(f)`` called as ``load_config("configs/train.yaml")``): its one
    ``return`` gives a load (or a name bound once to one), with streams from its
    top-level ``with open(...) as f`` blocks. None for any other function."""
    returns: List[cst.Return] = []
    bound: Dict[str, List[cst.BaseExpression]] = {}
    streams: Dict[str, cst.BaseExpression] = {}
    _scan(function.body, returns, bound, streams)
    if len(returns) != 1 or returns[0].value is None:
        return None
    value: cst.BaseExpression = returns[0].value

    def local(name: str) -> Optional[cst.BaseExpression]:
        return bound[name][0] if len(bound.get(name, ())) == 1 and name not in streams else None

    def strings(expr: cst.BaseExpression) -> Optional[str]:
        return arguments.get(expr.value) if isinstance(expr, cst.Name) and expr.value not in bound else None

    def stream(name: str) -> Optional[Written]:
        item = streams.get(name)
        return None if item is None or name in bound else opened(item, canonical, _no_streams, strings)

    return loaded(value, canonical, stream, strings, local)


def _scan(block: cst.BaseSuite, returns: List[cst.Return], bound: Dict[str, List[cst.BaseExpression]],
          streams: Dict[str, cst.BaseExpression]) -> None:
    """The returns, single-name assignments and ``with ... as name`` items of a function
    body (not inside nested functions or classes); any other binding of a name marks it
    with a placeholder, so it counts as bound twice."""
    statements = block.body if isinstance(block, cst.IndentedBlock) else []
    for statement in statements:
        if isinstance(statement, cst.SimpleStatementLine):
            for small in statement.body:
                if isinstance(small, cst.Return):
                    returns.append(small)
                elif isinstance(small, cst.Assign) and len(small.targets) == 1 \
                        and isinstance(small.targets[0].target, cst.Name):
                    bound.setdefault(small.targets[0].target.value, []).append(small.value)
                elif isinstance(small, (cst.Assign, cst.AugAssign, cst.AnnAssign)):
                    returns.append(cst.Return(None))  # a binding not followed: unknown
        elif isinstance(statement, cst.With):
            for item in statement.items:
                if item.asname is not None and isinstance(item.asname.name, cst.Name):
                    streams[item.asname.name.value] = item.item
            _scan(statement.body, returns, bound, streams)
        elif isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
            continue
        else:
            returns.append(cst.Return(None))  # a branch or a loop: not one way through


def call_strings(function: cst.FunctionDef, call: cst.Call,
                 string_of: Callable[[cst.BaseExpression], Optional[str]]) -> Dict[str, str]:
    """The string each parameter of ``function`` takes at ``call`` (its argument, else its
    default), where known."""
    out: Dict[str, str] = {}
    params = function.params
    for param in (*params.posonly_params, *params.params, *params.kwonly_params):
        argument = argument_for(function, param, call)
        if isinstance(argument, _Unreadable):
            continue
        written = argument if argument is not None else param.default
        found = None if written is None else (_string(written) or string_of(written))
        if found is not None:
            out[param.name.value] = found
    return out
