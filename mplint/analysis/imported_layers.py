"""Layer classes and Lambda functions imported from another module of the project.

``from mypkg.heads import TiedOutput`` then ``TiedOutput(...)`` at a model's output:
what the class's ``call`` returns is judged in its own module, by the same analysis
as a class of the checked file (:class:`custom_layers.CustomLayers`), and the
answer is used at the construction site here. The module is found as Python would
import it from this file (its folder and those above it, up to the project root,
and ``src/``); a name re-exported by a package, a module that cannot be read or
parsed, or a class whose bases live in a third module stays unknown, and the rules
stay silent. Each module is parsed once per process and content (a few modules at
most: only classes used at a model output are asked for).
"""

from __future__ import annotations

import functools
import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Dict, FrozenSet, List, Mapping, Optional, Sequence, Set, Tuple

import libcst as cst

from mplint.core import reads
from mplint.core.source import SourceError, decode, parse
from mplint.core.walker import Walker
from mplint.rule.check import Analysis, Context, instantiate_analyses
from mplint.run.module_paths import absolute_import, folders_above, module_file_in, root_package, sys_path_folders
from mplint.semantic.facts import ModuleFacts
from mplint.semantic.names import NameResolver, collect_module_imports, dotted_name
from mplint.semantic.scopes import Location, Scope, ScopeTracker
from mplint.semantic.stored_attributes import InstanceAttributes, StoredForm, foreign_bases, stored_form
from mplint.semantic.vocabulary import names_tensorflow
from mplint.semantic.values import Evaluator

if TYPE_CHECKING:  # pragma: no cover
    from mplint.analysis.custom_layers import CustomLayer, CustomLayers
    from mplint.analysis.dispatch import Dispatch, Overrides

_MAX_BYTES = 2_000_000
#: function key -> the literal slots of each call one route makes of it (see :func:`analysed`)
Handed = Mapping[str, Sequence[Mapping[str, str]]]
#: (path, content digest) -> the module's layer analysis (None: unparsable)
_ANALYSED: Dict[Tuple[str, str], Optional["CustomLayers"]] = {}
#: (path, content digest, analysis) -> another analysis of a module (None: unparsable)
_OTHER: Dict[Tuple[str, str, str], Optional[Analysis]] = {}
#: (path, content digest) -> how many routes' calls it has been walked with (``handed``)
_VARIANTS: Dict[Tuple[str, str], int] = {}
#: the most walks of one module for the calls of different routes
_MAX_VARIANTS = 8
#: (path, content digest) -> the parsed module, to follow a package's re-exports
_PARSED: Dict[Tuple[str, str], Optional[cst.Module]] = {}
#: (module file, class) whose model-ness is being asked, against base classes that cycle
_ASKING: Set[Tuple[str, str]] = set()
#: how many packages may hand a name on before it is given up
_MAX_REEXPORTS = 3


def imported_layer(ctx: Context, func: cst.BaseExpression, call: Optional[cst.Call] = None,
                   loc: Optional[Location] = None, part: Tuple[int, ...] = ()) -> Optional["CustomLayer"]:
    """The layer class ``func`` names when it is imported from a project module
    (``ctx`` runs a :class:`CustomLayers`, which judges it there too); given the
    construction ``call`` and where it is made, as that construction builds it: its
    arguments whose one value this module knows bind ``__init__``'s parameters there
    (``ProjectionHead(n, activation="softmax")``), any other is unknown. ``part``: that
    part of the tuple its ``call`` returns (``box, obj = YoloOutput(n)(x)``)."""
    found = _imported(ctx, func)
    layers = None if found is None else _layers_of(found[0], _analysis(ctx))
    if layers is None or found is None:
        return None
    if call is None or loc is None:
        return layers.judge_class_named(found[1], None, part)
    return layers.judge_class_named(found[1], [known_argument(ctx, arg, loc) for arg in call.args], part)


def imported_factory(ctx: Context, func: cst.BaseExpression, call: cst.Call,
                     part: Tuple[int, ...] = (), loc: Optional[Location] = None) -> Optional["CustomLayer"]:
    """The layer a function of a project module returns when ``call`` calls it
    (``classifier(10)`` with ``def classifier(n): return Dense(n, activation="softmax")``),
    or returns as part ``part`` of a tuple, judged in its module with the call's literal
    arguments (and, given ``loc``, those whose one value this module knows:
    ``get_head(TASK, n)`` with ``TASK = "multiclass"``, the key of a registry there)."""
    found = imported_definition(ctx, func)
    layers = None if found is None else _layers_of(found[0], _analysis(ctx))
    if layers is None or found is None:
        return None
    args = call.args if loc is None else [known_argument(ctx, arg, loc) for arg in call.args]
    return layers.judge_factory_named(found[1], args, found[0], part)


def imported_keyed_factory(ctx: Context, func: cst.Subscript, call: cst.Call,
                           loc: Location, head: bool = False, key: Optional[str] = None) -> Optional["CustomLayer"]:
    """The layer an entry of another module's dict of builders returns when ``call``
    calls it (``HEADS[config.TASK](n)`` with ``HEADS = {"binary": _binary, ...}`` there),
    when this module knows the key's one value (a literal, a constant here or of a config
    module): only that entry is judged, there, as :func:`imported_factory` judges a
    function (``head``: an entry returning a layer's output, ``HEADS[TASK](x)``, judged as
    :func:`imported_head` judges a function). An unknown key, or a dict built otherwise,
    stays unknown."""
    key = key if key is not None else _subscript_key(ctx, func, loc)
    found = None if key is None else imported_definition(ctx, func.value, assigned=cst.Dict)
    layers = None if found is None else _layers_of(found[0], _analysis(ctx))
    if layers is None or found is None:
        return None
    args = [known_argument(ctx, arg, loc) for arg in call.args]
    if head:
        return layers.judge_head_named(found[1], args, found[0], key=key)
    return layers.judge_factory_named(found[1], args, found[0], key=key)


def imported_partial(ctx: Context, func: cst.BaseExpression, analysis: type
                     ) -> Optional[Tuple[FrozenSet[str], List[cst.Arg], str]]:
    """``HiddenDense`` imported from a project module that binds it to
    ``functools.partial(layers.Dense, 100, ...)``: the layer class's canonical names, the
    preset arguments as literals (an unknown where that module cannot tell the value), and
    where the partial is written (``blocks.py:6``), read there (see
    :meth:`CustomLayers.partial_named`, ``analysis``). None when ``func`` is anything else."""
    found = imported_definition(ctx, func, assigned=cst.Call)
    layers = None if found is None else _layers_of(found[0], analysis)
    preset = None if layers is None or found is None else layers.partial_named(found[1])
    if preset is None or found is None:
        return None
    resolved, args, line = preset
    return resolved, args, f"{os.path.basename(found[0])}:{line}"


def imported_partial_preset(ctx: Context, func: cst.BaseExpression
                            ) -> Optional[Tuple[FrozenSet[str], cst.Call]]:
    """``ProbDense`` imported from a project module that binds it to
    ``functools.partial(layers.Dense, activation="softmax")``: the layer class's canonical
    names and a ``partial(<class>, ...)`` call of the preset arguments as literals (an
    unknown where that module cannot tell the value), which reads anywhere as the preset
    of a :class:`LayerProducer`. None where the file runs no layer analysis to ask."""
    analysis = _running_analysis(ctx)
    found = None if analysis is None else imported_partial(ctx, func, analysis)
    if found is None:
        return None
    resolved, args, _line = found
    return resolved, cst.Call(func=cst.Name("partial"), args=[cst.Arg(cst.Name("_layer")), *args])


def _subscript_key(ctx: Context, func: cst.Subscript, loc: Location) -> Optional[str]:
    """The one string ``REG[key]`` reads with, when this module knows it."""
    if len(func.slice) != 1 or not isinstance(func.slice[0].slice, cst.Index):
        return None
    key = ctx.values.value(func.slice[0].slice.value, loc)
    return key if isinstance(key, str) else None


def judge_function_of(ctx: Context, entry: Tuple[str, str], call: cst.Call, loc: Location,
                      head: bool) -> Optional["CustomLayer"]:
    """The function ``entry`` (its module file and name) names, called by ``call``,
    judged in its module as :func:`imported_head` (``head``) or :func:`imported_factory`
    judge one (a registry's entry another module picked)."""
    layers = _layers_of(entry[0], _analysis(ctx))
    if layers is None or any(arg.star for arg in call.args):
        return None
    args = [known_argument(ctx, arg, loc) for arg in call.args]
    return layers.judge_head_named(entry[1], args, entry[0]) if head \
        else layers.judge_factory_named(entry[1], args, entry[0])


def imported_function(ctx: Context, func: cst.BaseExpression) -> Optional[bool]:
    """For a Lambda's imported function: whether it returns a softmax, when every
    return is 16-bit in its module (None when anything is unknown)."""
    found = _imported(ctx, func)
    layers = None if found is None else _layers_of(found[0], _analysis(ctx))
    return None if layers is None or found is None else layers.judge_function_named(found[1])


def imported_function_definition(ctx: Context, func: cst.BaseExpression) -> bool:
    """``func`` names a function (not a class) that a project module defines."""
    found = imported_definition(ctx, func)
    module = None if found is None else _parsed(found[0])
    return module is not None and found is not None and any(
        isinstance(s, cst.FunctionDef) and s.name.value == found[1] for s in module.body)


def imported_head(ctx: Context, call: cst.Call, loc: Optional[Location] = None,
                  part: Tuple[int, ...] = ()) -> Optional["CustomLayer"]:
    """The Keras layer whose output a function of a project module returns when ``call``
    calls it (``heads.make_head(x)`` with ``return Dense(n, activation="softmax")(x)``
    there), or returns as part ``part`` of a tuple (``enc, dec = heads.build(x)``),
    judged in its module with the call's literal arguments (and, given ``loc``,
    the arguments whose one value this module knows: ``activation=output_activation``
    with ``output_activation='Softmax'`` by default)."""
    found = imported_definition(ctx, call.func)
    layers = None if found is None else _layers_of(found[0], _analysis(ctx))
    if layers is None or found is None:
        return None
    args = call.args if loc is None else [known_argument(ctx, arg, loc) for arg in call.args]
    return layers.judge_head_named(found[1], args, found[0], part)


def known_argument(ctx: Context, arg: cst.Arg, loc: Location) -> cst.Arg:
    """``arg`` with its value written as a literal when this module knows its one
    value (a string, a number, a bool); unchanged otherwise."""
    if arg.star:
        return arg
    value = ctx.values.value(arg.value, loc)  # None: unknown (a None literal is kept as written)
    literal: Optional[cst.BaseExpression] = None
    if isinstance(value, bool):
        literal = cst.Name(repr(value))
    elif isinstance(value, str):
        literal = cst.SimpleString(repr(value))
    elif isinstance(value, int):
        literal = cst.Integer(repr(value)) if value >= 0 else None
    elif isinstance(value, float):
        literal = cst.Float(repr(value)) if value >= 0 and repr(value) not in ("inf", "nan") else None
    return arg if literal is None else arg.with_changes(value=literal)


def imported_model(ctx: Context, cls: cst.BaseExpression, method: str) -> Optional["CustomLayer"]:
    """The Keras layer computing the output of the model that ``method`` of the class
    ``cls`` names builds and returns, when that class is imported from a project module
    (``Unet(...).build_generator()`` with ``return Model(inputs, Activation("tanh")(x))``
    there), judged in its module."""
    found = imported_definition(ctx, cls)
    layers = None if found is None else _layers_of(found[0], _analysis(ctx))
    return None if layers is None or found is None else layers.judge_model_named(found[1], method, found[0])


def imported_method_head(ctx: Context, cls: cst.BaseExpression, method: str, call: cst.Call,
                         bound: FrozenSet[str], attributes: InstanceAttributes) -> Optional["CustomLayer"]:
    """The Keras layer whose output ``method`` of the model class ``cls`` of a project
    module returns when a subclass here calls ``self.<method>(...)`` as ``call`` does,
    judged in its module (``bound``: the names the subclass binds on ``self`` in its class
    bodies; ``attributes``: ``self.<attr>`` of the instance, as this module sees it)."""
    found = imported_definition(ctx, cls)
    layers = None if found is None else _layers_of(found[0], _analysis(ctx))
    if layers is None or found is None:
        return None
    return layers.judge_method_named(found[1], method, call.args, bound, found[0], attributes)


def imported_dispatch(ctx: Context, cls: cst.BaseExpression, overrides: "Overrides",
                      attributes: InstanceAttributes) -> Optional[List["Dispatch"]]:
    """For a class here deriving from the model class ``cls`` of a project module and
    inheriting its ``call``: the calls that ``call`` makes on the instance of methods this
    class overrides (``overrides``) and returns the result of, judged in that module
    (:meth:`ModelOutputs.dispatch_outputs`; ``attributes``: ``self.<attr>`` of the instance,
    as this module sees it). None when it cannot be followed."""
    found = imported_definition(ctx, cls)
    layers = None if found is None else _layers_of(found[0], _analysis(ctx))
    if layers is None or found is None:
        return None
    return layers.dispatched_named(found[1], overrides, attributes)


def imported_model_class(ctx: Context, cls: cst.BaseExpression) -> bool:
    """``cls`` names a class of another module of the project that derives from a Keras
    model there (``class BaseNet(keras.Model)``, through that module's own bases too):
    a class deriving from it here is a model (``super().__init__(inputs, outputs)``
    builds a functional one). False when the module or the class cannot be followed,
    or when the question is already being asked (bases that import each other)."""
    found = imported_definition(ctx, cls)
    if found is None or found in _ASKING:
        return False
    layers = _layers_of(found[0], _analysis(ctx))
    if layers is None:
        return False
    _ASKING.add(found)
    try:
        return layers.is_model_class_named(found[1])
    finally:
        _ASKING.discard(found)


def imported_layer_sixteen_bit(ctx: Context, cls: cst.BaseExpression, analysis: type) -> Optional[bool]:
    """For ``cls`` naming a Keras layer class of another module of the project (through
    that module's own bases too: ``class PaddedAttention(ScoredAttention)`` with
    ``ScoredAttention(tf.keras.layers.Layer)`` there): whether it computes in 16 bits
    under a mixed policy (False: it pins float32 or turns autocast off). None when it is
    no layer class, cannot be followed, or is being asked already (bases that import
    each other). ``analysis``: the region analysis, run on that module."""
    found = imported_definition(ctx, cls)
    if found is None or found in _ASKING:
        return None
    _ASKING.add(found)
    try:
        regions = analysed(found[0], analysis, root=ctx.facts.project_root)
        named = getattr(regions, "layer_class_named", None)
        layer = named(found[1]) if named is not None else None
        return None if layer is None else bool(layer.sixteen_bit)
    finally:
        _ASKING.discard(found)


def imported_passthrough(ctx: Context, func: cst.BaseExpression, call: cst.Call) -> Optional[int]:
    """Which input a layer class of a project module hands on unchanged when ``call``
    builds it (``Masked(name="MLM")``, whose ``call`` returns ``inputs[0] + 0``), judged
    in its module with the call's literal arguments (``ModelOutputs.passthrough``)."""
    found = imported_definition(ctx, func)
    layers = None if found is None else _layers_of(found[0], _analysis(ctx))
    if layers is None or found is None or any(arg.star for arg in call.args):
        return None
    return layers.passthrough_named(found[1], call)


def imported_definition(ctx: Context, func: cst.BaseExpression,
                        assigned: Optional[type] = None) -> Optional[Tuple[str, str]]:
    """(module file, name) of the function or class ``func`` names when it is imported
    from a project module, through a package's re-export (``from .attn import
    Attention`` in ``layers/__init__.py``) too: the file that defines it. With
    ``assigned``, a top-level assignment of that kind of expression to the name instead
    (``cst.Dict``: ``HEADS = {...}``; ``cst.Call``: ``Hidden = functools.partial(...)``)."""
    found = _imported(ctx, func)
    for _ in range(_MAX_REEXPORTS):
        if found is None:
            return None
        module = _parsed(found[0])
        if module is None:
            return None
        if assigned is not None and _assigned(module, found[1], assigned):
            return found
        if assigned is None and any(isinstance(s, (cst.FunctionDef, cst.ClassDef)) and s.name.value == found[1]
                                for s in module.body):
            return found
        target = _top_level_imports(module).get(found[1]) \
            or _star_target(module, found[0], _root(ctx), found[1])  # ``from .embeddings import *``
        if target is None:
            return None
        full = absolute_import(target, found[0], _root(ctx))
        owner, _, name = full.rpartition(".")
        path = _module_file(owner, found[0], _root(ctx)) if owner else None
        found = None if path is None else (path, name)
    return None


def _assigned(module: cst.Module, name: str, kind: type) -> bool:
    """``name = <an expression of that kind>`` is a statement of the module's body."""
    return any(isinstance(line, cst.SimpleStatementLine) and isinstance(line.body[0], cst.Assign)
               and isinstance(line.body[0].value, kind)
               and any(isinstance(t.target, cst.Name) and t.target.value == name for t in line.body[0].targets)
               for line in module.body)


def analysed(path: str, analysis: type, root: Optional[str] = None, also: Tuple[type, ...] = (),
             handed: Optional[Handed] = None, policy: Optional[str] = None) -> Optional[Analysis]:
    """``analysis`` of another module of the project (what it reads walked with it),
    by content; the read is noted, so the checked file's cached result is keyed by
    that module's content too. ``root``: the project root its imports resolve from;
    ``also``: analyses it asks for without requiring them (``ModelOutputs`` asks the
    layer analysis about imported classes); ``handed``: the calls one route makes of
    its functions (function key -> each call's literal slots, as the program model
    writes them), which then hold their parameters with the module's own calls, so its
    branches are decided for that route (a walk of its own per set of calls); ``policy``:
    the policy its code is judged under, as ``assume-policy`` would set it (a caller's
    module asked what it hands a function of the checked file under a mixed policy)."""
    found = reads.read(path, _MAX_BYTES)
    if found is None:
        return None
    raw, digest = found
    key = (path, digest, "+".join(a.__name__ for a in (analysis, *also)) + ("@" + root if root else "")
           + ("" if handed is None else "|" + json.dumps(handed, sort_keys=True)) + ("~" + policy if policy else ""))
    if key not in _OTHER and handed is not None:
        variants = _VARIANTS.get((path, digest), 0)
        if variants >= _MAX_VARIANTS:
            return None  # a module reached by many routes: its own judgement stands
        _VARIANTS[(path, digest)] = variants + 1
    if key not in _OTHER:
        _OTHER[key] = _analyse(path, raw, analysis, root, also, handed, policy)
    return _OTHER[key]


def parsed_module(path: str) -> Optional[Tuple[str, cst.Module]]:
    """(content digest, module) of a project file, read through ``core.reads`` (so a
    cached result is keyed by it) and parsed once per content through the guarded entry
    (a module can crash libcst too); None when unreadable or not Python."""
    found = reads.read(path, _MAX_BYTES)
    if found is None:
        return None
    raw, digest = found
    if (path, digest) not in _PARSED:
        try:
            _PARSED[(path, digest)] = parse(decode(path, raw))
        except SourceError:
            _PARSED[(path, digest)] = None
    module = _PARSED[(path, digest)]
    return None if module is None else (digest, module)


def _parsed(path: str) -> Optional[cst.Module]:
    found = parsed_module(path)
    return None if found is None else found[1]


def _analysis(ctx: Context) -> type:
    """The layer analysis class the checked file runs (it asks; no import cycle)."""
    found = _running_analysis(ctx)
    assert found is not None, "asked by an analysis that does not require CustomLayers"
    return found


def _running_analysis(ctx: Context) -> Optional[type]:
    """The layer analysis class, when the checked file runs it (None: no rule asked for it)."""
    return next((kind for kind in ctx.analyses if kind.__name__ == "CustomLayers"), None)


# -- where the name comes from -------------------------------------------------------------
def _imported(ctx: Context, func: cst.BaseExpression) -> Optional[Tuple[str, str]]:
    """(module file, name in it) for ``Name`` or ``module.Name`` bound by a top-level
    import of the checked file."""
    written = dotted_name(func)
    if written is None:
        return None
    head, _, rest = written.partition(".")
    imports = _top_level_imports(ctx.module)
    target = imports.get(head) or _star_imported(ctx, head)
    if target is None:
        return None
    full = absolute_import(target, os.path.abspath(ctx.path), _root(ctx)) + ("." + rest if rest else "")
    module, _, name = full.rpartition(".")
    path = _importer_module_file(ctx, module) if module and name else None
    return None if path is None else (path, name)


def _importer_module_file(ctx: Context, module: str) -> Optional[str]:
    """:func:`_module_file` of ``module`` imported by the checked file, found once per
    file: every call the file makes is asked about (by each rule and analysis that judges
    one), and most name a few modules. The folders it imports from are found once too
    (the file's read for ``sys.path`` is noted at the first question)."""
    key = (_importer_module_file, module)
    if key not in ctx.memo:
        folders = ctx.memo.get(_importer_folders)
        if folders is None:
            folders = ctx.memo[_importer_folders] = _importer_folders(ctx.path, _root(ctx))
        ctx.memo[key] = module_file_in(module, folders, _root(ctx))
    found: Optional[str] = ctx.memo[key]
    return found


def _star_imported(ctx: Context, name: str) -> Optional[str]:
    """The dotted target of ``name`` when a top-level ``from heads import *`` of the
    checked file binds it: the last such module that defines or imports it at its top
    level and hands it on (in its ``__all__`` where it has one, else not private).
    None when the file binds the name itself (asked during the walk, which may see the
    binding later: the star imports' answer alone is kept, once per file and name)."""
    if name in ctx.scopes.module_scope.bindings:
        return None
    key = (_star_target, name)
    if key not in ctx.memo:
        ctx.memo[key] = _star_target(ctx.module, ctx.path, _root(ctx), name)
    found: Optional[str] = ctx.memo[key]
    return found


def _star_target(module: cst.Module, path: str, root: Optional[Path], name: str) -> Optional[str]:
    """The dotted target of ``name`` that the top-level ``from heads import *`` of the
    module at ``path`` binds (see :func:`_star_imported`)."""
    found = None
    for statement in module.body:
        if not isinstance(statement, cst.SimpleStatementLine):
            continue
        for small in statement.body:
            if not isinstance(small, cst.ImportFrom) or not isinstance(small.names, cst.ImportStar):
                continue
            base = "." * len(small.relative) + (dotted_name(small.module) or "" if small.module else "")
            target = base + name if base.endswith(".") else f"{base}.{name}"
            owner = absolute_import(target, os.path.abspath(path), root).rpartition(".")[0]
            source = _module_file(owner, path, root) if owner else None
            star = None if source is None else _parsed(source)
            if star is not None and name in _public_names(star):
                found = target
    return found


def _public_names(module: cst.Module) -> List[str]:
    """What ``from module import *`` binds: its ``__all__`` when a literal list or
    tuple of strings, else its top-level definitions and imports not named ``_...``."""
    defined: List[str] = list(_top_level_imports(module))
    for statement in module.body:
        if isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
            defined.append(statement.name.value)
        if not isinstance(statement, cst.SimpleStatementLine):
            continue
        for small in statement.body:
            if isinstance(small, cst.Assign) and len(small.targets) == 1 \
                    and isinstance(small.targets[0].target, cst.Name):
                if small.targets[0].target.value == "__all__" and isinstance(small.value, (cst.List, cst.Tuple)):
                    listed = [e.value.evaluated_value for e in small.value.elements
                              if isinstance(e.value, cst.SimpleString)]
                    return [n for n in listed if isinstance(n, str)]
                defined.append(small.targets[0].target.value)  # a constant: ``HIDDEN = 100``
            elif isinstance(small, cst.AnnAssign) and isinstance(small.target, cst.Name):
                defined.append(small.target.value)
    return [n for n in defined if not n.startswith("_")]


def _top_level_imports(module: cst.Module) -> Mapping[str, str]:
    """Local name -> dotted target (relative ones keep their dots) of the module's
    top-level imports, read once per module (a checked file asks it of every name it
    calls; the answer is shared: never change it)."""
    known = _IMPORTS_OF.get(id(module))
    if known is not None and known[0] is module:
        return known[1]
    found = _read_top_level_imports(module)
    if len(_IMPORTS_OF) >= _IMPORTS_KEPT:  # the checked files' modules are not kept alive
        _IMPORTS_OF.pop(next(iter(_IMPORTS_OF)))
    _IMPORTS_OF[id(module)] = (module, found)
    return found


#: id of a module -> (the module, its top-level imports), the latest few (identity checked)
_IMPORTS_OF: Dict[int, Tuple[cst.Module, Dict[str, str]]] = {}
_IMPORTS_KEPT = 8


def _read_top_level_imports(module: cst.Module) -> Dict[str, str]:
    out: Dict[str, str] = {}
    for statement in module.body:
        if not isinstance(statement, cst.SimpleStatementLine):
            continue
        for small in statement.body:
            if isinstance(small, cst.ImportFrom) and not isinstance(small.names, cst.ImportStar):
                base = "." * len(small.relative) + (dotted_name(small.module) or "" if small.module else "")
                for alias in small.names:
                    name = dotted_name(alias.name)
                    local = alias.asname.name if alias.asname is not None else alias.name
                    if name and isinstance(local, cst.Name):
                        out[local.value] = base + name if base.endswith(".") else f"{base}.{name}"
            elif isinstance(small, cst.Import):
                for alias in small.names:
                    name = dotted_name(alias.name)
                    if name and alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                        out[alias.asname.name.value] = name
                    elif name:  # ``import masks`` / ``import pkg.masks``: binds the first part
                        head = name.split(".", 1)[0]
                        out[head] = head
    return out


def _root(ctx: Context) -> Optional[Path]:
    return _root_path(ctx.facts.project_root)


@functools.lru_cache(maxsize=64)
def _root_path(root: Optional[str]) -> Optional[Path]:
    """(asked of every call a file makes: the path is made once)"""
    return Path(root) if root else None


def _module_file(module: str, importer: str, root: Optional[Path]) -> Optional[str]:
    """The file Python would load for ``module`` when ``importer`` runs: from its own
    folder or one above it inside the project (its folder and the one above without
    a project), the project's ``src/``, or a folder the importer puts on
    ``sys.path`` (:func:`module_paths.sys_path_folders`)."""
    return module_file_in(module, _importer_folders(importer, root), root)


def _importer_folders(importer: str, root: Optional[Path]) -> Tuple[Path, ...]:
    """The folders :func:`_module_file` looks in for the modules ``importer`` imports."""
    importer = os.path.abspath(importer)  # folders_above caches by the string it is given
    folders = _import_folders(importer, root)
    if root is not None and root_package(root) is not None:  # ``deeplab2.model.utils``: the root itself
        folders += (root.parent,)
    own = reads.read(importer, _MAX_BYTES)  # noted: the cached result is keyed by it
    if own is not None and b"sys.path" in own[0]:
        folders += tuple(sys_path_folders(own[0], importer, root))
    return folders


@functools.lru_cache(maxsize=4096)
def _import_folders(importer: str, root: Optional[Path]) -> Tuple[Path, ...]:
    """The folders ``importer``'s imports load from, nearest first, before any it puts on
    ``sys.path`` (path arithmetic only: cached)."""
    here = Path(importer).parent
    folders: List[Path] = [f for f in sorted(folders_above(importer), key=lambda p: -len(p.parts))
                           if root is None or f == root or root in f.parents] if root is not None \
        else [here, here.parent]
    if root is not None:
        folders.append(root / "src")
    return tuple(folders)


#: the file a project module's dotted name loads from the importer, and the names a
#: module's top-level imports bind, relative ones included (shared with module_constants)
module_file = _module_file
top_level_imports = _top_level_imports
star_imported = _star_imported
project_root = _root
imported_name = _imported


# -- the other module's analysis ----------------------------------------------------------
def _layers_of(path: str, analysis: type) -> Optional["CustomLayers"]:
    """The module's layer analysis, by content; the read is noted (:mod:`core.reads`),
    so a cached result of the checked file is keyed by this module's content too."""
    found = reads.read(path, _MAX_BYTES)
    if found is None:
        return None
    raw, digest = found
    key = (path, digest)
    if key not in _ANALYSED:
        _ANALYSED[key] = _analyse(path, raw, analysis)
    return _ANALYSED[key]


def _analyse(path: str, raw: bytes, analysis: type, root: Optional[str] = None,
             also: Tuple[type, ...] = (), handed: Optional[Handed] = None,
             policy: Optional[str] = None) -> Optional["CustomLayers"]:
    """Walk the module with the layer analysis and what it reads (no checks)."""
    try:
        module = parse(decode(path, raw))  # the depth guard: a module can crash libcst too
    except SourceError:
        return None
    names = NameResolver()
    collect_module_imports(module, names)
    tracker = ScopeTracker(module, names)
    evaluator = Evaluator(names)
    if handed is not None:
        # one route's calls of these functions, with the module's own: a library module's
        # other functions keep their callers unread (``Evaluator.callers_unread``)
        evaluator = Evaluator(names, call_sites=tracker.calls)
        evaluator.elsewhere = handed
        evaluator.script = False
    ctx = Context(path, module, names, tracker, ModuleFacts(assumed_policy=policy, project_root=root), {}, evaluator, module.code)
    failed: List[BaseException] = []
    # what a check requiring the layer analysis gets: it and what it reads, in order
    analyses = instantiate_analyses([type("LayerQuestion", (), {"requires": (analysis, *also)})], ctx)
    try:
        Walker([tracker, *analyses], lambda owner, exc: failed.append(exc)).walk(module)
    except RecursionError:
        return None
    return None if failed else ctx.analyses[analysis]


# -- what a base class of another module stores on ``self`` ------------------------------
class StoredAttributes(Analysis):
    """A module's class scopes, asked how a class stores an attribute on ``self``."""

    def form(self, cls: str, attr: str) -> Optional[StoredForm]:
        binding = self.ctx.scopes.module_scope.lookup(cls)
        if binding is None or binding.kind != "class":
            return None
        scope = next((c for c in self.ctx.scopes.module_scope.children if c.node is binding.node), None)
        if scope is None:
            return None
        if any(not _is_tensorflow(self.ctx, base) for base in foreign_bases(scope)):
            return None  # a base of a third module may store it too
        return stored_form(scope, attr, self.ctx.values)


def imported_stored_form(ctx: Context, cls: Scope, attr: str) -> Optional[StoredForm]:
    """How the one base class of another project module that ``cls`` (a class of the
    checked file) derives from stores ``self.<attr>``, read in that module; None when
    there is no such base, or it stores none (:mod:`semantic.stored_attributes`)."""
    bases = foreign_bases(cls)
    if len(bases) != 1 or _is_tensorflow(ctx, bases[0]):
        return None
    found = imported_definition(ctx, bases[0])
    if found is None:
        return None
    other = analysed(found[0], StoredAttributes, root=str(_root(ctx)) if _root(ctx) else None)
    return other.form(found[1], attr) if isinstance(other, StoredAttributes) else None


def _is_tensorflow(ctx: Context, base: cst.BaseExpression) -> bool:
    return names_tensorflow(ctx.names.resolve(base))
