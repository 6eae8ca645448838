"""What one module says about the program it belongs to, read with CPython's ``ast``.

A summary lists, for the module body and every function and method: the calls it
makes (as the dotted names written, ``trainers.fit``, ``self.model.fit``), the
imports it runs, and where it sets a dtype policy; for each class its bases, methods
and the classes of its ``self.x = Cls(...)`` attributes. It says whether the module
is a script (a ``__main__`` guard or calls at top level). Summaries are plain JSON
data, cached by file content with the project index, and only made for the modules
the program model asks for: CPython's parser costs a tenth of libcst's, and most
modules of a project are never asked for.
"""

from __future__ import annotations

import ast
import json
from dataclasses import dataclass, field, replace
from typing import Any, Dict, FrozenSet, Iterable, Iterator, List, Mapping, Optional, Sequence, Set, Tuple

from mplint.core.python_syntax import tree_or_none
from mplint.run.dotted import dotted
from mplint.run.escapes import escapes_by_function, handed_arguments
from mplint.semantic.elsewhere_marks import CONSTRUCTION
from mplint.run.object_constants import object_facts
from mplint.run.picked_callables import if_chain_pick, note_callable, picked_return
from mplint.run.returned_values import element_stores, element_values, policy_truths
from mplint.semantic.vocabulary import (
    DTYPE_NAMES, GLOBAL_POLICY_WORDS, LOSS_SCALE_FACTOR_KEYWORD, POLICY_SETTER_WORDS, SAME_CLASS_REBUILDERS, WHOLE_MODEL_METHODS,
    WHOLE_MODEL_VARIABLES,
)

#: the module body's name among a summary's functions
BODY = "<module>"
#: the body of the module's ``if __name__ == "__main__":`` guard, which runs when the
#: module runs as a program and not when it is imported
MAIN = "<main>"
#: a call recorded for an import statement: it runs the imported module's body
IMPORT = "import:"
#: the key of ``from mod import *`` in ``ModuleSummary.imports`` (``*mod`` -> ``mod``)
STAR = "*"
#: an argument slot: the call spreads ``**kwargs`` and no ``*args`` (STAR is there too)
KEYWORD_SPREAD = "**"
#: ``v.method`` where ``v`` holds an instance of a known class, ``Class(...).method``
#: and ``super().method``: ``Class#method`` (``super#method``)
METHOD = "#"
POLICY_SETTERS = frozenset(POLICY_SETTER_WORDS)
SUMMARY_VERSION = 30
#: a trained value that is a parameter of the function: ``param:`` + its name
PARAM = "param:"
#: a value a summary cannot name (an expression, ``None``, a loop variable)
UNKNOWN = "?"
#: a call through a registry, whose key is chosen at run time: ``MODELS[name](...)``,
#: ``models.__dict__[arch](...)`` and ``getattr(models, arch)(...)`` are ``MODELS`` and
#: ``models.__dict__`` and ``models`` + REGISTRY: any entry may run
REGISTRY = "[]"
#: a part of what a call returns: ``build@1`` is the second element of the tuple
#: ``build(...)`` returns (``enc, dec = build(x)``; see :func:`returned_part`)
PART = "@"


@dataclass
class FunctionSummary:
    #: (line, dotted callee) in source order; imports as IMPORT + dotted module
    calls: List[Tuple[int, str]] = field(default_factory=list)
    #: (line, policy name when written as a literal, else None) of each policy set
    sets: List[Tuple[int, Optional[str]]] = field(default_factory=list)
    #: positional parameters, ``self``/``cls`` of methods left out
    params: List[str] = field(default_factory=list)
    #: the dotted callees whose result it returns (``return build(...)``, ``m = Cls(); return m``,
    #: every callee bound to the name), PARAM + a parameter it returns, UNKNOWN for any other
    returns: List[str] = field(default_factory=list)
    #: models it trains or runs as a whole (``m.fit()``, ``m.trainable_variables``): the
    #: dotted callee that made ``m``, ``self.x`` for an attribute, PARAM + a parameter
    trained: List[str] = field(default_factory=list)
    #: (callee, parameter position or keyword, what the argument is: a dotted callee
    #: that made it, PARAM + a parameter of this function, ``self.x`` for an attribute
    #: handed to a method of the same object, or UNKNOWN), for each argument of each
    #: call (``Cls#method`` for a method of a local instance, as in ``calls``); a call
    #: with ``*args``/``**kwargs`` passes UNKNOWN as "*"
    passes: List[Tuple[str, str, str]] = field(default_factory=list)
    #: models whose outputs it casts to float32 (``logits = model(x)`` then
    #: ``tf.cast(logits, tf.float32)``), named as in ``trained``: trained so, their
    #: float16 outputs never reach the loss (the mixed precision guide's own remedy)
    casts: List[str] = field(default_factory=list)
    #: every call of a name that may be the project's (not a builtin, not TensorFlow's):
    #: (line, dotted callee, slot -> the argument as a JSON literal when it is a string,
    #: a number, a bool or None (a float dtype, ``tf.float16``, by its name), else UNKNOWN; "*" -> UNKNOWN for ``*args``/``**kwargs``). The
    #: values a parameter takes at the calls of other modules (see
    #: ``ProgramModel.arguments``), and what binds a policy-setting helper's parameters
    arguments: List[Tuple[int, str, Dict[str, str]]] = field(default_factory=list)
    #: for each policy set that depends on the function's parameters: (line, the
    #: parameter whose value it sets or "" when it is not one, the parameters whose
    #: truth decides whether it runs: (name, True for ``if p:``, False for ``if not p:``,
    #: the ``else`` arm, or the code after ``if p: return``)). What a call site binds.
    set_terms: List[Tuple[int, str, List[Tuple[str, bool]]]] = field(default_factory=list)
    #: parameter -> its default as a JSON literal (a string, a bool or None), for every function
    defaults: Dict[str, str] = field(default_factory=dict)
    #: (line, dotted name) of each class-like name the code hands on as a value, which
    #: code mplint cannot see may build (``functools.partial(Block)``, an argument, a
    #: default, a container, a return; see :mod:`escapes`)
    escapes: List[Tuple[int, str]] = field(default_factory=list)
    #: (line, callee, slot, dotted callable) for each callable a call hands its callee to
    #: run there (``build(model_fn=LeNet)``, ``model_fn=lambda: UNet(2)``: ``UNet``,
    #: ``functools.partial(LeNet, classes=3)``: ``LeNet``): it runs inside the callee, under
    #: what the callee sets before calling it
    handed: List[Tuple[int, str, str, str]] = field(default_factory=list)
    #: for each ``return``, what each element of the tuple or list it writes out may be
    #: (named as in ``returns``); [] for a return of anything else
    parts: List[List[List[str]]] = field(default_factory=list)
    #: (line, dotted name) of each policy set given a name (``set_global_policy(config.POLICY)``):
    #: a constant of another module may name the policy (``ModuleSummary.constants``)
    set_names: List[Tuple[int, str]] = field(default_factory=list)
    #: (registry, parameter) of each ``return REGISTRY[param](...)``: a call site that
    #: passes a literal key picks the entry (``ModuleSummary.keyed``)
    keyed_returns: List[Tuple[str, str]] = field(default_factory=list)
    #: for a function that sets a policy: line -> the ``if`` tests around each policy set
    #: and each call in ``arguments`` there, as (the test's source, the truth its arm needs):
    #: a call under ``else`` of the ``if args.amp:`` that sets the policy runs without it
    guards: Dict[int, List[Tuple[str, bool]]] = field(default_factory=dict)
    #: (line, policy, parameter, the truth it needs) for each policy a set chooses by a
    #: parameter's truth (``set("mixed_float16" if amp else "float32")``, or through a
    #: name bound once so): that policy is set only when the parameter has that truth
    set_choices: List[Tuple[int, str, str, bool]] = field(default_factory=list)
    #: (parameter, module-level dict, entries) of each ``return NAME[param]`` that returns
    #: an entry of a dict of callables picked by a parameter (``name_to_fn[identifier]``):
    #: a dict the function writes out gives its string keys -> dotted values as entries,
    #: a module-level one its name (``ModuleSummary.keyed``); see :mod:`picked_callables`
    picks: List[Tuple[str, str, Dict[str, str]]] = field(default_factory=list)
    #: for each ``return``, the JSON literals each element of the tuple or list it writes
    #: out may hold ([] where unknown); [] for a return of anything else (:mod:`returned_values`)
    part_values: List[List[List[str]]] = field(default_factory=list)
    #: the parameters every call must bind (no default; keyword-only ones too), read only
    #: for a function defined once with no decorator but ``staticmethod``/``classmethod``:
    #: a call that binds none of them raises TypeError before the body runs
    #: (:func:`binds`); [] when unknown
    required: List[str] = field(default_factory=list)
    #: (line, callee, slot, dotted name) of each argument in ``arguments`` that is an
    #: imported name the module never writes (``setup(cfg.USE_AMP)``, ``cfg`` a module):
    #: a constant of another module may decide it (``ModuleSummary.constants``)
    named_arguments: List[Tuple[int, str, str, str]] = field(default_factory=list)
    #: for each ``return`` under parameter tests (``if scaled: return LossScaleOptimizer(opt)``):
    #: (what it returns, named as in ``returns``, the tests: (parameter, the truth it needs));
    #: a call site's literal flags rule such a return out (``make(lr, scaled=False)``)
    return_terms: List[Tuple[List[str], List[Tuple[str, bool]]]] = field(default_factory=list)


def returned_part(function: FunctionSummary, index: int) -> Optional[List[str]]:
    """What element ``index`` of the function's result may be (as ``returns`` names
    values), when every ``return`` writes out a tuple or list of one length; None
    otherwise (a return of a name or a call, returns of different lengths, no return)."""
    lengths = {len(part) for part in function.parts}
    if not function.parts or len(lengths) != 1 or not 0 <= index < lengths.pop():
        return None
    return [origin for part in function.parts for origin in part[index]]


def split_part(written: str) -> Tuple[str, Optional[int]]:
    """``build@1`` -> (``build``, 1); any other name -> (it, None)."""
    callee, found, index = written.rpartition(PART)
    if not found or not index.isdigit():
        return written, None
    return callee, int(index)


@dataclass
class ClassSummary:
    bases: List[str] = field(default_factory=list)
    methods: List[str] = field(default_factory=list)
    #: ``self.x = Cls(...)``: attribute -> dotted class name
    attributes: Dict[str, str] = field(default_factory=dict)
    #: ``self.x = make(...)`` (any callee) and ``self.x = <parameter>`` (PARAM + its name)
    #: in a method: attribute -> where its value comes from
    sources: Dict[str, str] = field(default_factory=dict)
    #: ``self.x = fn``, ``self.x = getattr(mod, "fn")`` and ``self.x = pick("key")``: attribute
    #: -> [dotted callable] or [dotted picker, slot, key] when every binding of ``self.x``
    #: in the class is that one; [] when it is bound otherwise too (see :mod:`picked_callables`)
    callables: Dict[str, List[str]] = field(default_factory=dict)


@dataclass
class ModuleSummary:
    #: a script: ``if __name__ == "__main__":`` or calls at top level
    script: bool = False
    #: local name -> dotted target (relative ones keep their leading dots); a star import
    #: ``from mod import *`` as STAR + ``mod`` -> ``mod``
    imports: Dict[str, str] = field(default_factory=dict)
    functions: Dict[str, FunctionSummary] = field(default_factory=dict)
    classes: Dict[str, ClassSummary] = field(default_factory=dict)
    #: module-level dicts of callables, ``TASKS = {"cls": Classifier, ...}``: name -> the
    #: dotted values (what a REGISTRY call through the name may run)
    registries: Dict[str, List[str]] = field(default_factory=dict)
    #: decorators of the top-level functions and classes: the decorator as written
    #: (``register_model``, ``registry.register``) -> the names it decorates
    decorated: Dict[str, List[str]] = field(default_factory=dict)
    #: top-level functions that store into a module-level name by key (``REGISTRY[name] =
    #: fn`` in a decorator): function -> those names. What they decorate is an entry.
    writers: Dict[str, List[str]] = field(default_factory=dict)
    #: top-level names bound once, by a plain assignment of a string, bool, number or
    #: None literal -> the literal as JSON (``POLICY = "mixed_bfloat16"``, ``USE_AMP =
    #: False`` in a config module), and the string fields of the config objects bound so
    #: (``CFG.policy``: :mod:`object_constants`), as JSON too
    constants: Dict[str, str] = field(default_factory=dict)
    #: registries keyed by string literals: name -> key -> the dotted callee that calling
    #: the entry calls (``"adam_amp": lambda lr: LossScaleOptimizer(Adam(lr))``: the wrapper)
    keyed: Dict[str, Dict[str, str]] = field(default_factory=dict)
    #: the attributes its code sets on an object other than ``self`` (``cfg.norm_eps =
    #: args.eps``; "*" for ``setattr``): a config object's field set so is a run-time matter
    set_fields: List[str] = field(default_factory=list)

    def set_fields_view(self) -> FrozenSet[str]:
        """:attr:`set_fields` as a set."""
        return frozenset(self.set_fields)

    def to_json(self) -> List[Any]:
        return [SUMMARY_VERSION, self.script, self.imports,
                {name: [f.calls, f.sets, f.params, f.returns, f.trained, f.passes, f.casts, f.arguments,
                        f.set_terms, f.defaults, f.escapes, f.handed, f.parts, f.set_names, f.keyed_returns,
                        {str(line): [list(g) for g in tests] for line, tests in f.guards.items()},
                        f.set_choices, [[param, name, entries] for param, name, entries in f.picks],
                        f.part_values, f.required, f.named_arguments,
                        [[origins, [list(g) for g in guards]] for origins, guards in f.return_terms]]
                 for name, f in self.functions.items()},
                {name: [c.bases, c.methods, c.attributes, c.sources, c.callables] for name, c in self.classes.items()},
                self.registries, self.decorated, self.writers, self.constants, self.keyed, self.set_fields]

    @classmethod
    def from_json(cls, data: Any) -> Optional["ModuleSummary"]:
        """The summary, or None for data of another shape or version (a cache miss)."""
        try:
            version, script, imports, functions, classes, registries, decorated, writers, constants, keyed, \
                set_fields = data
            if version != SUMMARY_VERSION:
                return None
            return cls(
                bool(script), {str(k): str(v) for k, v in imports.items()},
                {str(name): FunctionSummary([(int(l), str(c)) for l, c in calls],
                                            [(int(l), None if v is None else str(v)) for l, v in sets],
                                            [str(p) for p in params], [str(r) for r in returns],
                                            [str(t) for t in trained],
                                            [(str(c), str(slot), str(a)) for c, slot, a in passes],
                                            [str(c) for c in casts],
                                            [(int(l), str(c), {str(k): str(v) for k, v in slots.items()})
                                             for l, c, slots in arguments],
                                            [(int(l), str(p), [(str(g), bool(t)) for g, t in guards])
                                             for l, p, guards in set_terms],
                                            {str(k): str(v) for k, v in defaults.items()},
                                            [(int(l), str(e)) for l, e in escapes],
                                            [(int(l), str(c), str(slot), str(h)) for l, c, slot, h in handed],
                                            [[[str(o) for o in element] for element in part] for part in parts],
                                            [(int(l), str(n)) for l, n in set_names],
                                            [(str(r), str(p)) for r, p in keyed_returns],
                                            {int(l): [(str(t), bool(b)) for t, b in tests]
                                             for l, tests in guards.items()},
                                            [(int(l), str(v), str(p), bool(t)) for l, v, p, t in set_choices],
                                            [(str(p), str(n), {str(k): str(v) for k, v in e.items()})
                                             for p, n, e in picks],
                                            [[[str(v) for v in element] for element in part]
                                             for part in part_values],
                                            [str(r) for r in required],
                                            [(int(l), str(c), str(slot), str(n)) for l, c, slot, n in named],
                                            [([str(o) for o in origins], [(str(p), bool(t)) for p, t in tests])
                                             for origins, tests in return_terms])
                 for name, (calls, sets, params, returns, trained, passes, casts, arguments, set_terms, defaults,
                            escapes, handed, parts, set_names, keyed_returns, guards, set_choices, picks,
                            part_values, required, named, return_terms) in functions.items()},
                {str(name): ClassSummary([str(b) for b in bases], [str(m) for m in methods],
                                         {str(k): str(v) for k, v in attributes.items()},
                                         {str(k): str(v) for k, v in sources.items()},
                                         {str(k): [str(p) for p in v] for k, v in callables.items()})
                 for name, (bases, methods, attributes, sources, callables) in classes.items()},
                {str(name): [str(v) for v in values] for name, values in registries.items()},
                {str(name): [str(v) for v in values] for name, values in decorated.items()},
                {str(name): [str(v) for v in values] for name, values in writers.items()},
                {str(k): str(v) for k, v in constants.items()},
                {str(name): {str(k): str(v) for k, v in entries.items()} for name, entries in keyed.items()},
                [str(f) for f in set_fields])
        except (TypeError, ValueError, AttributeError):
            return None


def summarize(text: str) -> ModuleSummary:
    """The summary of a module's source (an empty one when it does not parse)."""
    tree = tree_or_none(text)
    if tree is None:
        return ModuleSummary()
    summary = ModuleSummary()
    try:
        _collect_block(summary, tree.body, BODY, [], _Spellings(_dtype_spellings(tree.body),
                                                                  _keyword_dicts(tree.body), _written_names(tree)))
        top = summary.functions.get(BODY)
        if top is not None and top.sets:
            _read_guards(top, tree.body)
        _note_registrations(summary, tree.body)
        objects, summary.set_fields = object_facts(tree)
        summary.constants = {**{name: json.dumps(text) for name, text in objects.items()},
                             **_literal_constants(tree.body)}
        for name, escapes in escapes_by_function(tree.body, BODY, MAIN, _is_main_guard).items():
            summary.functions.setdefault(name, FunctionSummary()).escapes = escapes
    except RecursionError:
        return ModuleSummary()
    summary.script = any(_is_main_guard(stmt) or _is_top_level_call(stmt) for stmt in tree.body)
    return summary


def _literal_constants(body: List[ast.stmt]) -> Dict[str, str]:
    """Top-level names bound exactly once, by ``NAME = "text"``, ``NAME = False``, a number
    or None -> the literal as JSON (any other binding of the name at the top level, in a
    loop, an ``if`` or a ``try`` included, leaves it out)."""
    found: Dict[str, Optional[str]] = {}
    for stmt in body:
        value = stmt.value if isinstance(stmt, (ast.Assign, ast.AnnAssign)) else None
        written_literal = _literal(value) if value is not None else UNKNOWN
        literal = None if written_literal == UNKNOWN else written_literal
        single = isinstance(stmt, ast.AnnAssign) or (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1)
        for node in ast.walk(stmt) if not isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) \
                else [ast.Name(id=stmt.name, ctx=ast.Store())]:
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                written = literal if single and node.id not in found and _is_target(stmt, node) else None
                found[node.id] = written if node.id not in found else None
            elif isinstance(node, ast.alias):
                found[(node.asname or node.name).partition(".")[0]] = None
    return {name: text for name, text in found.items() if text is not None}


def _is_target(stmt: ast.stmt, node: ast.Name) -> bool:
    """``node`` is the whole target of the plain assignment ``stmt``."""
    if isinstance(stmt, ast.Assign):
        return stmt.targets[0] is node
    return isinstance(stmt, ast.AnnAssign) and stmt.target is node


def _is_main_guard(stmt: ast.stmt) -> bool:
    if not isinstance(stmt, ast.If) or not isinstance(stmt.test, ast.Compare):
        return False
    sides = [stmt.test.left, *stmt.test.comparators]
    return any(isinstance(s, ast.Name) and s.id == "__name__" for s in sides) and any(
        isinstance(s, ast.Constant) and s.value == "__main__" for s in sides)


def _is_top_level_call(stmt: ast.stmt) -> bool:
    return isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call)


def _collect_block(summary: ModuleSummary, body: List[ast.stmt], owner: str, classes: List[str],
                   spellings: "_Spellings") -> None:
    """Statements of the module body or a class body: definitions get their own
    summaries, everything else is the module body's code (a class body runs on import).
    ``spellings``: what the module's names stand for (:class:`_Spellings`)."""
    loose: List[ast.AST] = []
    for stmt in body:
        if isinstance(stmt, ast.ClassDef):
            name = ".".join([*classes, stmt.name])
            summary.classes[name] = ClassSummary([b for b in map(dotted, stmt.bases) if b])
            loose += stmt.bases
            loose += stmt.decorator_list
            _collect_block(summary, stmt.body, owner, [*classes, stmt.name], spellings)
        elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            qualname = ".".join([*classes, stmt.name])
            if classes:
                summary.classes[".".join(classes)].methods.append(stmt.name)
            loose += stmt.decorator_list
            again = qualname in summary.functions
            function = summary.functions.setdefault(qualname, FunctionSummary())
            function.params = _parameters(stmt, method=bool(classes))
            function.required = [] if again else _required(stmt, function.params)
            function.defaults = _literal_defaults(stmt)
            nodes = _Nodes(stmt.body)
            tested = _return_guards(stmt.body, set(function.params)) if len(nodes.returns) > 1 else {}
            _collect(summary, function, nodes, ".".join(classes), spellings, tested)
            chain = if_chain_pick(stmt, function.params)
            if chain is not None:
                function.picks.append(chain)
            if function.sets:
                _drop_overwritten(function, stmt.body)
                _read_set_terms(function, stmt)
                _read_guards(function, stmt.body)
                _policy_part_values(function, stmt, spellings.dtypes)
        elif not classes and _is_main_guard(stmt):
            assert isinstance(stmt, ast.If)
            loose.append(stmt.test)
            loose += stmt.orelse
            _collect(summary, summary.functions.setdefault(MAIN, FunctionSummary()), _Nodes(stmt.body), "", spellings)
        else:
            loose.append(stmt)
            if not classes:
                _note_registry(summary, stmt)
    top = summary.functions.setdefault(owner, FunctionSummary())
    _collect(summary, top, _Nodes(loose), "", spellings)
    if not classes and top.sets:
        _drop_overwritten(top, body)


def _drop_overwritten(function: FunctionSummary, body: List[ast.stmt]) -> None:
    """A policy set that the next statement of the same block sets again governs nothing
    (a notebook cell back to float32 right after the one that chose mixed_float16)."""
    lines = {line for line, _ in function.sets}
    setters = [isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) and stmt.lineno in lines
               and stmt.lineno == stmt.end_lineno for stmt in body]
    dead = {body[i].lineno for i in range(len(body) - 1) if setters[i] and setters[i + 1]}
    if dead:
        function.sets = [(line, policy) for line, policy in function.sets if line not in dead]


def _note_registrations(summary: ModuleSummary, body: List[ast.stmt]) -> None:
    """Decorator registries: what decorates each top-level definition, and which
    top-level functions store into a module-level name by key (``@register_model`` whose
    body, or an inner function's, does ``_MODELS[name] = fn``)."""
    module_names = {target.id for stmt in body if isinstance(stmt, (ast.Assign, ast.AnnAssign))
                    for target in (stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target])
                    if isinstance(target, ast.Name)}
    for stmt in body:
        if not isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        for decorator in stmt.decorator_list:
            written = dotted(decorator.func if isinstance(decorator, ast.Call) else decorator)
            if written:
                summary.decorated.setdefault(written, []).append(stmt.name)
        if isinstance(stmt, ast.ClassDef):
            continue
        stored = sorted({target.value.id for node in _assignments(stmt)
                         for target in node.targets if isinstance(target, ast.Subscript)
                         and isinstance(target.value, ast.Name) and target.value.id in module_names})
        if stored:
            summary.writers[stmt.name] = stored


#: the fields in which a statement holds other statements (an except clause's and a
#: match case's bodies through ``handlers`` and ``cases``)
_STATEMENT_FIELDS = ("body", "orelse", "finalbody", "handlers", "cases")


def _assignments(stmt: ast.stmt) -> Iterator[ast.Assign]:
    """The ``=`` assignments in ``stmt`` and the statements nested in it. An expression
    holds no statement, so only statement bodies are walked: what ``ast.walk`` would
    find, in a tenth of the nodes."""
    todo: List[Any] = [stmt]
    while todo:
        node = todo.pop()
        if isinstance(node, ast.Assign):
            yield node
        for name in _STATEMENT_FIELDS:
            inner = getattr(node, name, None)
            if inner.__class__ is list:
                todo += inner


def _note_registry(summary: ModuleSummary, stmt: ast.stmt) -> None:
    """``NAME = {key: Callable, ...}`` at the module's top level, every value a dotted name
    or a lambda that calls one (``lambda lr: Adam(lr)`` runs ``Adam``); by key too when
    every key is a string literal."""
    if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)
            and isinstance(stmt.value, ast.Dict) and stmt.value.values):
        return
    values = [_entry_callee(value) for value in stmt.value.values]
    if not all(values):
        return
    name = stmt.targets[0].id
    summary.registries[name] = [v for v in values if v]
    keys = [key.value if isinstance(key, ast.Constant) and isinstance(key.value, str) else None
            for key in stmt.value.keys]
    if all(key is not None for key in keys) and len(set(keys)) == len(keys):
        summary.keyed[name] = {str(key): str(value) for key, value in zip(keys, values)}


def _entry_callee(value: ast.AST) -> Optional[str]:
    """What calling a registry's entry calls: the entry's dotted name, or the callee of
    a lambda whose body is one call."""
    if isinstance(value, ast.Lambda):
        return dotted(value.body.func) if isinstance(value.body, ast.Call) else None
    return dotted(value)


def _keyed_call(value: Optional[ast.AST], params: List[str]) -> Optional[Tuple[str, str]]:
    """(registry, parameter) of ``REGISTRY[param](...)``, a module-level name indexed by
    a parameter of the function."""
    if not (isinstance(value, ast.Call) and isinstance(value.func, ast.Subscript)
            and isinstance(value.func.value, ast.Name) and isinstance(value.func.slice, ast.Name)
            and value.func.slice.id in params):
        return None
    return value.func.value.id, value.func.slice.id


class _ChildFields(Dict[type, Tuple[str, ...]]):
    """Node class -> the fields that may hold child nodes, worked out on first sight of
    the class. Fields that only hold names, numbers or contexts and operators (leaves no
    collector reads) are left out; anything else that is not a node (a ``None``, a
    string) has no fields and walks as a leaf."""

    NOT_NODES = frozenset({"ctx", "op", "ops", "id", "attr", "arg", "asname", "module", "level", "kind",
                           "type_comment", "conversion", "is_async", "simple", "tag", "lineno", "kwd_attrs",
                           "rest"})

    def __missing__(self, kind: type) -> Tuple[str, ...]:
        fields = () if kind is ast.Constant else tuple(
            f for f in getattr(kind, "_fields", ()) if f not in self.NOT_NODES)
        self[kind] = fields
        return fields


_CHILD_FIELDS = _ChildFields()


class _Nodes:
    """The nodes of some statements that the collectors read, each kind in the order
    ``ast.walk`` gives them statement by statement (nested functions and classes fold
    in). One walk sorts them by kind, so no collector goes over the whole tree."""

    def __init__(self, roots: Sequence[ast.AST]) -> None:
        #: Assign and AnnAssign
        self.assigns: List[Any] = []
        #: Call, Import and ImportFrom, mixed: calls and imports share one list of calls
        self.events: List[Any] = []
        self.names: List[ast.Name] = []
        self.returns: List[ast.Return] = []
        self.attributes: List[ast.Attribute] = []
        #: the ``for ... in ...`` clauses of comprehensions
        self.comprehensions: List[ast.comprehension] = []
        #: functions defined inside the code (closures): their calls fold in, their returns do not
        self._nested: List[Any] = []
        self._walk(roots)
        if self._nested:
            self.returns = _outer_returns(self.returns, self._nested)

    def _walk(self, roots: Sequence[ast.AST]) -> None:
        """Breadth first from each root, like ``ast.walk``, without its generators."""
        buckets: Dict[type, List[Any]] = {
            ast.Assign: self.assigns, ast.AnnAssign: self.assigns, ast.Call: self.events,
            ast.Import: self.events, ast.ImportFrom: self.events, ast.Name: self.names,
            ast.Return: self.returns, ast.Attribute: self.attributes, ast.comprehension: self.comprehensions,
            ast.FunctionDef: self._nested, ast.AsyncFunctionDef: self._nested}
        child_fields = _CHILD_FIELDS
        for root in roots:
            queue: List[Any] = [root]
            for node in queue:  # grows as it goes: a breadth-first queue
                kind = node.__class__
                bucket = buckets.get(kind)
                if bucket is not None:
                    bucket.append(node)
                for name in child_fields[kind]:
                    child = getattr(node, name)
                    if child.__class__ is list:
                        queue += child
                    elif child is not None:
                        queue.append(child)


def _outer_returns(returns: List[ast.Return], nested: List[Any]) -> List[ast.Return]:
    """The returns of the code itself, not of the functions defined in it: a closure's
    ``return`` gives the closure's result, not the outer function's."""
    inner = {id(node) for function in nested for stmt in function.body for node in ast.walk(stmt)
             if isinstance(node, ast.Return)}
    return [node for node in returns if id(node) not in inner]


def _collect(summary: ModuleSummary, function: FunctionSummary, nodes: _Nodes, cls: str,
             spellings: "_Spellings", return_guards: Optional[Mapping[int, List[Tuple[str, bool]]]] = None) -> None:
    """Imports, calls and policy sets of some code, and what it returns, trains as a
    whole and passes on; ``cls`` names the class whose method it is, for ``self.x``;
    ``return_guards``: the parameter tests around each ``return`` (by id) under some."""
    bound = {name.id for name in nodes.names if isinstance(name.ctx, ast.Store)} if cls else set()
    instances, assigned = _read_assignments(summary, function, nodes.assigns, cls, bound)
    objects = _local_objects(nodes, function.params)
    if objects:
        spellings = replace(spellings, objects=objects)
    origins = _Origins(_bindings(nodes.names, assigned), set(function.params), cls)
    called = _read_events(summary, function, nodes.events, instances, origins, spellings,
                          _policy_snapshots(nodes.assigns, function.params))
    stores: Optional[Dict[str, int]] = None
    for node in nodes.returns:
        returned = [o if not o.startswith("self.") else UNKNOWN for o in origins(node.value)]
        function.returns += returned
        if return_guards and id(node) in return_guards:
            function.return_terms.append((returned, return_guards[id(node)]))
        keyed = _keyed_call(node.value, function.params)
        if keyed is not None:
            function.keyed_returns.append(keyed)
        picked = picked_return(node.value, function.params, nodes.assigns)
        if picked is not None:
            function.picks.append(picked)
        elements = node.value.elts if isinstance(node.value, (ast.Tuple, ast.List)) else []
        function.parts.append([] if any(isinstance(e, ast.Starred) for e in elements) else
                              [[o if not o.startswith("self.") else UNKNOWN for o in origins(e)] for e in elements])
        if stores is None:
            stores = element_stores(nodes.names)
        function.part_values.append(_part_values(node, nodes, stores, function.params, spellings.dtypes, {}))
    for attribute in nodes.attributes:
        if attribute.attr in WHOLE_MODEL_VARIABLES or id(attribute) in called:
            function.trained += [o for o in origins(attribute.value) if o != UNKNOWN]
    for node in nodes.events:
        if isinstance(node, ast.Call) and _casts_to_float32(node):
            function.casts += [o for model_call in _model_calls(node.args[0], origins)
                               for o in origins(model_call.func) if o != UNKNOWN]
        elif isinstance(node, ast.Call) and _float32_layer(node) and node.args:
            function.casts += [o for model in _outputs_read(node.args[0], nodes.comprehensions)
                               for o in origins(model) if o != UNKNOWN]
    function.calls.sort(key=lambda call: call[0])
    function.sets.sort(key=lambda found: found[0])


def _part_values(node: ast.Return, nodes: "_Nodes", stores: Mapping[str, int], params: List[str],
                 dtypes: Mapping[str, str], truths: Mapping[str, bool]) -> List[List[str]]:
    """``FunctionSummary.part_values`` of one ``return`` (:mod:`returned_values`)."""
    elements = node.value.elts if isinstance(node.value, (ast.Tuple, ast.List)) else []
    if any(isinstance(e, ast.Starred) for e in elements):
        return []
    return [element_values(e, nodes.assigns, stores, params, dtypes, truths) for e in elements]


def _policy_part_values(function: FunctionSummary, stmt: ast.AST, dtypes: Mapping[str, str]) -> None:
    """The returned elements of a function that sets a mixed policy under one parameter,
    read under that policy (``returned_values.policy_truths``)."""
    truths = policy_truths(function)
    if not truths or not function.part_values:
        return
    assert isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef))
    nodes = _Nodes(stmt.body)
    stores = element_stores(nodes.names)
    function.part_values = [_part_values(node, nodes, stores, function.params, dtypes, truths)
                            for node in nodes.returns]


def _casts_to_float32(call: ast.Call) -> bool:
    """``tf.cast(x, tf.float32)``, ``tf.cast(x, "float32")``, ``dtype=`` too."""
    if not (dotted(call.func) or "").endswith("cast") or not call.args:
        return False
    dtype = call.args[1] if len(call.args) > 1 else next(
        (k.value for k in call.keywords if k.arg == "dtype"), None)
    return _is_float32(dtype)


def _is_float32(dtype: Optional[ast.AST]) -> bool:
    """``"float32"`` or ``tf.float32`` (any dotted name ending in it)."""
    if isinstance(dtype, ast.Constant):
        return dtype.value == "float32"
    return dtype is not None and (dotted(dtype) or "").endswith("float32")


def _float32_layer(call: ast.Call) -> bool:
    """A layer made with ``dtype="float32"`` and called at once:
    ``Activation("linear", dtype="float32")(x)``."""
    made = call.func
    return isinstance(made, ast.Call) and any(k.arg == "dtype" and _is_float32(k.value) for k in made.keywords)


def _outputs_read(value: ast.AST, comprehensions: List[ast.comprehension]) -> List[ast.AST]:
    """The models whose outputs ``value`` is: ``model.output``, ``model.outputs[0]``, or
    the target of ``for o in model.outputs`` in a comprehension (a model rewrapped with
    float32 casts on its outputs: ``keras.Model(model.inputs, [cast(o) for o in model.outputs])``)."""
    if isinstance(value, ast.Subscript):
        value = value.value
    if isinstance(value, ast.Attribute) and value.attr in ("output", "outputs"):
        return [value.value]
    if isinstance(value, ast.Name):
        return [model for gen in comprehensions for model in _outputs_iterated(gen, value.id)]
    return []


def _outputs_iterated(gen: ast.comprehension, name: str) -> List[ast.AST]:
    """The model whose outputs ``name`` takes in turn: ``for o in model.outputs``, or
    ``for i, o in enumerate(model.outputs)``."""
    iterated, target = gen.iter, gen.target
    if isinstance(iterated, ast.Call) and dotted(iterated.func) == "enumerate" and len(iterated.args) == 1 \
            and isinstance(target, ast.Tuple) and len(target.elts) == 2:
        iterated, target = iterated.args[0], target.elts[1]
    if isinstance(target, ast.Name) and target.id == name and isinstance(iterated, ast.Attribute) \
            and iterated.attr == "outputs":
        return [iterated.value]
    return []


def _model_calls(value: ast.AST, origins: "_Origins") -> List[ast.Call]:
    """The calls whose result ``value`` holds: ``model(x)`` itself, or the call bound
    to the name (``logits = model(x)``)."""
    if isinstance(value, ast.Call):
        return [value]
    if isinstance(value, ast.Name):
        return [call for _, call in origins.made.get(value.id, []) if isinstance(call, ast.Call)]
    return []


def _read_assignments(summary: ModuleSummary, function: FunctionSummary, assigns: List[Any],
                      cls: str, bound: Set[str]) -> Tuple[Dict[str, str], Dict[int, Tuple[str, ast.AST]]]:
    """Names bound to instances (``v = Cls(...)``: name -> class) and the Names bound by
    ``name = callee(...)`` (id of the Name -> callee and call); records a method's
    ``self.x = Cls(...)`` attributes and where its ``self.x`` values come from."""
    instances: Dict[str, str] = {}
    assigned: Dict[int, Tuple[str, ast.AST]] = {}
    params = function.params
    attributes = summary.classes[cls].attributes if cls else {}
    sources = summary.classes[cls].sources if cls else {}
    callables = summary.classes[cls].callables if cls else {}
    local = [*params, *sorted(bound)]  # a name bound here is no module's callable
    for node in assigns:
        value = node.value
        is_assign = isinstance(node, ast.Assign)
        targets = node.targets if is_assign else [node.target]
        if cls:
            note_callable(callables, targets, value, local)
        callee = dotted(value.func) if isinstance(value, ast.Call) else None
        made = (callee if isinstance(value, ast.Call) else _constructed(value)) if is_assign else None
        if made is not None and made.split(".")[-1][:1].isupper():
            for target in targets:
                if isinstance(target, ast.Name):
                    instances[target.id] = made
                elif cls and _is_self_attribute(target):
                    attributes.setdefault(target.attr, made)
        if callee is not None:
            for target in targets:
                if isinstance(target, ast.Name):
                    assigned[id(target)] = (_maker(value), value)
                elif cls and _is_self_attribute(target):
                    sources.setdefault(target.attr, callee)
                elif is_assign and isinstance(target, (ast.Tuple, ast.List)) and _maker(value) != UNKNOWN:
                    # ``enc, dec = build(x)``: each name holds a part of what the call returns
                    for index, element in enumerate(target.elts):
                        if isinstance(element, ast.Starred):
                            break  # the names after it hold parts counted from the end
                        if isinstance(element, ast.Name):
                            assigned[id(element)] = (_maker(value) + PART + str(index), value)
        elif cls and is_assign and isinstance(value, ast.Name) and value.id in params:
            for target in targets:
                if _is_self_attribute(target):
                    sources.setdefault(target.attr, PARAM + value.id)
        elif is_assign and _item_index(value) is not None:
            for target in targets:
                if isinstance(target, ast.Name):  # ``g_opt = opts[0]``: read when asked (_Origins)
                    assigned[id(target)] = (_ITEM, value)
    return instances, assigned


#: what a name bound to ``value[i]`` holds: the part of ``value`` (see ``_Origins``)
_ITEM = "[i]"


def _item_index(value: Optional[ast.AST]) -> Optional[int]:
    """``parts[1]`` (a non-negative integer written as the index): 1; None otherwise."""
    if isinstance(value, ast.Subscript) and isinstance(value.slice, ast.Constant) \
            and type(value.slice.value) is int and value.slice.value >= 0:
        return value.slice.value
    return None


def _bindings(names: List[ast.Name], assigned: Dict[int, Tuple[str, ast.AST]]
              ) -> Dict[str, List[Tuple[str, Optional[ast.AST]]]]:
    """Local name -> what each of its bindings holds, and the call that made it."""
    made: Dict[str, List[Tuple[str, Optional[ast.AST]]]] = {}
    for node in names:
        if isinstance(node.ctx, ast.Store):
            made.setdefault(node.id, []).append(assigned.get(id(node), (UNKNOWN, None)))
    return made


def _maker(call: ast.Call) -> str:
    """The callee that made an argument; UNKNOWN for an optimizer given a static loss
    scale (``Adam(lr, loss_scale_factor=128.0)``), which is neither plain nor wrapped."""
    if any(k.arg == LOSS_SCALE_FACTOR_KEYWORD and not (isinstance(k.value, ast.Constant) and k.value.value is None)
           for k in call.keywords):
        return UNKNOWN
    return dotted(call.func) or UNKNOWN


class _Origins:
    """What a value may hold, named by the callees that made it: the facts that follow
    a model or an optimizer from the function that makes it to the code that uses it
    (see the program model)."""

    def __init__(self, made: Dict[str, List[Tuple[str, Optional[ast.AST]]]], params: Set[str], cls: str) -> None:
        self.made = made
        self.params = params
        self.cls = cls

    def __call__(self, value: Optional[ast.AST], at: Optional[ast.AST] = None, depth: int = 0) -> List[str]:
        """``at``: the call ``value`` is an argument of, whose own result
        (``opt = wrap(opt)``) is not what it is given."""
        if isinstance(value, ast.Call):
            return [self._rebuilt(_maker(value))]
        if isinstance(value, ast.Name):
            found: List[str] = []
            for callee, call in self.made.get(value.id, []):
                if at is not None and call is at:
                    continue
                found += self._item(call, depth) if callee == _ITEM else [self._rebuilt(callee)]
            if value.id in self.params:
                found.append(PARAM + value.id)
            return found or [UNKNOWN]
        if _item_index(value) is not None:
            return self._item(value, depth)
        if self.cls and value is not None and _is_self_attribute(value):
            return ["self." + cast_attribute(value).attr]
        return [UNKNOWN]


    def _item(self, value: Optional[ast.AST], depth: int) -> List[str]:
        """``parts[1]``: part 1 of what made ``parts`` (``parts = build()``); UNKNOWN
        unless every value ``parts`` may hold is a call's result."""
        index = _item_index(value)
        if index is None or depth > 4:
            return [UNKNOWN]
        assert isinstance(value, ast.Subscript)
        found = self(value.value, None, depth + 1)
        if any(o == UNKNOWN or o.startswith((PARAM, "self.")) or PART in o for o in found):
            return [UNKNOWN]
        return [o + PART + str(index) for o in found]

    def _rebuilt(self, callee: str) -> str:
        """``opt.from_config(cfg)`` of a parameter ``opt`` rebuilds an instance of its
        class (:data:`SAME_CLASS_REBUILDERS`): a value of the parameter's kind."""
        head, _, method = callee.rpartition(".")
        if method in SAME_CLASS_REBUILDERS and head in self.params:
            return PARAM + head
        return callee


def _reads_policy(value: Optional[ast.AST]) -> bool:
    """``global_policy()`` or its ``.name`` (Keras 3: ``dtype_policy()``): the policy in force."""
    if isinstance(value, ast.Attribute) and value.attr == "name":
        value = value.value
    callee = dotted(value.func) if isinstance(value, ast.Call) else None
    return callee is not None and callee.rpartition(".")[2] in GLOBAL_POLICY_WORDS


def _policy_snapshots(assigns: List[Any], params: Iterable[str]) -> FrozenSet[str]:
    """Local names every assignment of which reads the policy in force
    (``previous = global_policy().name``): setting one back restores, it sets nothing."""
    reads: Dict[str, bool] = {}
    for node in assigns:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        for target in targets:
            if isinstance(target, ast.Name):
                reads[target.id] = reads.get(target.id, True) and _reads_policy(node.value)
    return frozenset(name for name, snapshot in reads.items() if snapshot and name not in set(params))


def _restores_policy(call: ast.Call, snapshots: FrozenSet[str]) -> bool:
    """``set_global_policy(previous)``, ``previous`` a snapshot, or ``set_global_policy(global_policy())``."""
    value: Optional[ast.AST] = call.args[0] if call.args else None
    return _reads_policy(value) or (isinstance(value, ast.Name) and value.id in snapshots)


def _read_events(summary: ModuleSummary, function: FunctionSummary, events: List[Any],
                 instances: Dict[str, str], origins: _Origins, spellings: "_Spellings",
                 snapshots: FrozenSet[str] = frozenset()) -> Set[int]:
    """Records the calls, imports and arguments passed, in ``ast.walk`` order; returns
    the ids of the ``x.fit``-like attributes that are called (whole-model methods)."""
    called: Set[int] = set()
    calls = function.calls
    for node in events:
        if isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Attribute) and func.attr in WHOLE_MODEL_METHODS:
                called.add(id(func))
            callee = dotted(func)
            _record_call(function, node, callee, instances, snapshots)
            if callee is not None:
                # ``gan.compile(opt=...)`` of ``gan = GAN(...)`` passes to ``GAN#compile``
                _record_passes(function, node, _instance_callee(callee, instances), origins)
                if callee.partition(".")[0] not in _NOT_PROJECT_HEADS:
                    slots = _literal_arguments(node, spellings)
                    function.arguments.append((node.lineno, callee, slots))
                    function.named_arguments += [(node.lineno, callee, slot, name) for slot, name
                                                 in _named_arguments(node, slots, spellings)]
        elif isinstance(node, ast.Import):
            for alias in node.names:
                local = alias.asname or alias.name.split(".")[0]
                summary.imports.setdefault(local, alias.name if alias.asname else local)
                calls.append((node.lineno, IMPORT + alias.name))
        else:
            base = "." * node.level + (node.module or "")
            calls.append((node.lineno, IMPORT + base))
            for alias in node.names:
                if alias.name == "*":
                    summary.imports.setdefault(STAR + base, base)
                else:
                    joined = base + alias.name if base.endswith(".") else f"{base}.{alias.name}"
                    summary.imports.setdefault(alias.asname or alias.name, joined)
                    # ``from pkg import sub`` runs the submodule ``pkg.sub`` when it is one
                    calls.append((node.lineno, IMPORT + joined))
    return called


def _record_passes(function: FunctionSummary, node: ast.Call, callee: str, origins: _Origins) -> None:
    """What each argument of the call is (see ``FunctionSummary.passes``)."""
    slots: List[Tuple[str, ast.AST]] = []
    unpacked = False
    for i, arg in enumerate(node.args):
        if isinstance(arg, ast.Starred):
            unpacked = True
        else:
            slots.append((str(i), arg))
    for keyword in node.keywords:
        if keyword.arg is None:
            unpacked = True
        else:
            slots.append((keyword.arg, keyword.value))
    passes = function.passes
    if unpacked:
        passes.append((callee, "*", UNKNOWN))
    # an attribute handed to a method of the same object (``self.compile(opt=self.opt)``)
    # stays ``self.x``: the method may store it back where it came from (a round trip)
    own = callee.startswith("self.")
    for slot, value in slots:
        if isinstance(value, (ast.Tuple, ast.List)) and not any(isinstance(e, ast.Starred) for e in value.elts):
            # ``Trainer(model, (opt_g, opt_d))``: each element, as slot ``2@1`` (and no
            # entry for the slot itself: a call that passes anything else for it has one)
            for index, element in enumerate(value.elts):
                for origin in origins(element, node):
                    passes.append((callee, f"{slot}{PART}{index}",
                                   UNKNOWN if origin.startswith("self.") and not own else origin))
            continue
        for origin in origins(value, node):
            passes.append((callee, slot, UNKNOWN if origin.startswith("self.") and not own else origin))


#: the first name of calls that are never the project's own functions or classes
_NOT_PROJECT_HEADS = frozenset({
    "tf", "tensorflow", "keras", "tf_keras", "np", "numpy", "jnp", "jax", "torch", "os", "sys", "math",
    "json", "re", "time", "logging", "random", "plt", "pd", "absl", "flags", "functools", "itertools",
    "collections", "print", "len", "range", "str", "int", "float", "bool", "list", "dict", "tuple", "set",
    "super", "isinstance", "issubclass", "getattr", "setattr", "hasattr", "zip", "enumerate", "min", "max",
    "sum", "abs", "open", "round", "sorted", "reversed", "map", "filter", "any", "all", "type", "iter",
    "next", "repr", "format", "vars", "id", "hash", "callable", "frozenset", "object", "Exception",
    "ValueError", "TypeError", "KeyError", "RuntimeError", "NotImplementedError", "AssertionError",
})


@dataclass(frozen=True)
class _Spellings:
    """What names of a module stand for, read once from its top level: the spellings of
    float dtypes (:func:`_dtype_spellings`), and the dicts of literal keyword arguments
    bound once to a name (``HEAD_KWARGS = {"dtype": "float32"}``) that a call spreads."""

    dtypes: Mapping[str, str]
    spreads: Mapping[str, ast.Dict]
    #: the dotted names the module stores to anywhere (``cfg.USE_AMP = True``, ``amp = ...``)
    written: FrozenSet[str] = frozenset()
    #: in the code being collected, the names bound exactly once, to a call that may build
    #: a project object (``cfg = ModelConfig()``): an argument ``build(cfg)`` is that construction
    objects: Mapping[str, ast.Call] = field(default_factory=dict)


def _literal_arguments(node: ast.Call, spellings: _Spellings) -> Dict[str, str]:
    """Slot -> the argument as JSON when it is a string, a number, a bool or None (an
    epsilon or a width a constructor gets from another module) or names a float dtype
    (``tf.float16``, ``COMPUTE_DTYPE``: the dtype's name, as the evaluator holds a dtype),
    else UNKNOWN (see ``FunctionSummary.arguments``). ``**HEAD_KWARGS`` of a dict of
    string keys bound once at the top level (or written there) gives each of its keys."""
    dtypes = spellings.dtypes
    slots: Dict[str, str] = {}
    for i, arg in enumerate(node.args):
        if isinstance(arg, ast.Starred):
            slots["*"] = UNKNOWN
        else:
            slots[str(i)] = _argument_literal(arg, dtypes)
            _note_construction(slots, str(i), arg, dtypes, spellings.objects)
    spread_only = "*" not in slots
    for keyword in node.keywords:
        spread = keyword.value if isinstance(keyword.value, ast.Dict) else \
            spellings.spreads.get(keyword.value.id) if isinstance(keyword.value, ast.Name) else None
        if keyword.arg is None and spread is not None and _keyword_dict(spread):
            for key, value in zip(spread.keys, spread.values):
                assert isinstance(key, ast.Constant)
                slots[str(key.value)] = _argument_literal(value, dtypes)
        elif keyword.arg is None:
            slots["*"] = UNKNOWN
            if spread_only:  # only ``**kwargs``: the arguments written beside it still bind
                slots[KEYWORD_SPREAD] = UNKNOWN
        else:
            slots[keyword.arg] = _argument_literal(keyword.value, dtypes)
            _note_construction(slots, keyword.arg, keyword.value, dtypes, spellings.objects)
    return slots


def _note_construction(slots: Dict[str, str], slot: str, value: ast.AST, dtypes: Mapping[str, str],
                       objects: Mapping[str, ast.Call]) -> None:
    """An argument that builds an object of a name that may be the project's class, with
    literal arguments (``build(ModelConfig(units=64))``, or ``build(cfg)`` with ``cfg =
    ModelConfig(units=64)`` bound once in the same code: ``objects``): ``CONSTRUCTION +
    slot`` -> JSON ``[the class as written, {slot: literal}]``, which the program model
    resolves to the class (``ProgramModel.arguments``) so the callee reads the object's
    fields. A name (``build(CFG)``) is ``[the name as written]``: an object another module
    binds, maybe."""
    if isinstance(value, ast.Name) and value.id in objects:
        value = objects[value.id]
    if isinstance(value, (ast.Name, ast.Attribute)) and slots.get(slot) == UNKNOWN:
        written = dotted(value)  # ``build(CFG)``: an object another module binds, maybe
        if written is not None and written.partition(".")[0] not in _NOT_PROJECT_HEADS | {"self"}:
            slots[CONSTRUCTION + slot] = json.dumps([written])
        return
    if not isinstance(value, ast.Call) or any(isinstance(a, ast.Starred) for a in value.args) \
            or any(k.arg is None for k in value.keywords):
        return
    written = dotted(value.func)
    if written is None or written.partition(".")[0] in _NOT_PROJECT_HEADS:
        return
    args = {str(i): _argument_literal(a, dtypes) for i, a in enumerate(value.args)}
    args.update({k.arg: _argument_literal(k.value, dtypes) for k in value.keywords if k.arg is not None})
    slots[CONSTRUCTION + slot] = json.dumps([written, args])


def _local_objects(nodes: "_Nodes", params: Sequence[str]) -> Dict[str, ast.Call]:
    """The names the code binds exactly once (no other store, no parameter of that name),
    by ``name = Call(...)`` of a dotted name that may be the project's: what ``build(name)``
    then hands on is that construction."""
    stores: Dict[str, int] = {}
    for name in nodes.names:
        if isinstance(name.ctx, (ast.Store, ast.Del)):
            stores[name.id] = stores.get(name.id, 0) + 1
    out: Dict[str, ast.Call] = {}
    for assign in nodes.assigns:
        if isinstance(assign, ast.Assign) and len(assign.targets) == 1 and isinstance(assign.targets[0], ast.Name) \
                and isinstance(assign.value, ast.Call):
            target = assign.targets[0].id
            written = dotted(assign.value.func)
            if stores.get(target) == 1 and target not in params and written is not None \
                    and written.partition(".")[0] not in _NOT_PROJECT_HEADS:
                out[target] = assign.value
    return out


def _named_arguments(node: ast.Call, slots: Mapping[str, str], spellings: _Spellings) -> Iterator[Tuple[str, str]]:
    """(slot, dotted name) of each argument the literals leave unknown that is a name the
    module never binds itself: ``setup(cfg.USE_AMP)``, ``from configs import default as
    cfg``, is the constant ``configs.default.USE_AMP`` when that module binds it once (the
    program model resolves the name through the module's imports)."""
    written = [(str(i), arg) for i, arg in enumerate(node.args) if not isinstance(arg, ast.Starred)]
    written += [(k.arg, k.value) for k in node.keywords if k.arg is not None]
    for slot, value in written:
        name = dotted(value) if isinstance(value, (ast.Name, ast.Attribute)) else None
        if name is None or slots.get(slot) != UNKNOWN:
            continue
        head = name.partition(".")[0]
        if name not in spellings.written and head not in spellings.written and head not in _NOT_PROJECT_HEADS:
            yield slot, name


def _written_names(tree: ast.Module) -> FrozenSet[str]:
    """Every dotted name the module stores to or deletes, in any scope (``cfg.AMP = x``,
    ``amp = ...``, a parameter or loop variable of that name): such a name is not another
    module's constant where it is read."""
    found: Set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Name, ast.Attribute)) and isinstance(node.ctx, (ast.Store, ast.Del)):
            name = dotted(node)
            if name is not None:
                found.add(name)
        elif isinstance(node, ast.arg):
            found.add(node.arg)
    return frozenset(found)


def _keyword_dict(value: ast.AST) -> bool:
    """A dict literal whose keys are all strings (no ``**`` inside): keyword arguments."""
    return isinstance(value, ast.Dict) and all(
        isinstance(key, ast.Constant) and isinstance(key.value, str) for key in value.keys)


def _keyword_dicts(body: List[ast.stmt]) -> Dict[str, ast.Dict]:
    """Top-level names bound once, to a dict literal of string keys, and never changed
    in place (``HEAD_KWARGS = {"dtype": "float32", "name": "probs"}``)."""
    bound: Dict[str, int] = {}
    changed: Set[str] = set()
    for node in ast.walk(ast.Module(body=body, type_ignores=[])):
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            bound[node.id] = bound.get(node.id, 0) + 1
        elif isinstance(node, ast.Subscript) and isinstance(node.ctx, (ast.Store, ast.Del)) \
                and isinstance(node.value, ast.Name):
            changed.add(node.value.id)
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) \
                and node.attr in ("update", "pop", "setdefault", "clear", "popitem"):
            changed.add(node.value.id)
    return {stmt.targets[0].id: stmt.value for stmt in body
            if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)
            and bound.get(stmt.targets[0].id) == 1 and stmt.targets[0].id not in changed
            and isinstance(stmt.value, ast.Dict) and _keyword_dict(stmt.value)}


def _argument_literal(value: ast.AST, dtypes: Mapping[str, str]) -> str:
    written = dotted(value) if isinstance(value, (ast.Name, ast.Attribute)) else None
    return _literal(value) if written is None or written not in dtypes else json.dumps(dtypes[written])


def _dtype_spellings(body: List[ast.stmt]) -> Dict[str, str]:
    """What names a float dtype in a module, spelled as written -> the dtype: through its
    top-level imports (``tf.float16``, ``np.half``, ``float16`` from tensorflow) and
    top-level names bound once, to one of those (``COMPUTE_DTYPE = tf.float16``)."""
    imports: Dict[str, str] = {}
    for stmt in body:
        if isinstance(stmt, ast.Import):
            for alias in stmt.names:
                imports[alias.asname or alias.name.split(".")[0]] = alias.name if alias.asname \
                    else alias.name.split(".")[0]
        elif isinstance(stmt, ast.ImportFrom) and not stmt.level and stmt.module:
            for alias in stmt.names:
                imports[alias.asname or alias.name] = f"{stmt.module}.{alias.name}"

    def dtype(node: ast.AST) -> Optional[str]:
        written = dotted(node) if isinstance(node, (ast.Name, ast.Attribute)) else None
        head, _, rest = (written or "").partition(".")
        if head not in imports:
            return None
        return DTYPE_NAMES.get(imports[head] + ("." + rest if rest else ""))

    spellings: Dict[str, str] = {}
    targets: Dict[str, int] = {}  # how often each name is bound (anywhere: a constant is bound once)
    for node in ast.walk(ast.Module(body=body, type_ignores=[])):
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            targets[node.id] = targets.get(node.id, 0) + 1
        elif isinstance(node, (ast.Name, ast.Attribute)):
            found = dtype(node)
            written = dotted(node)
            if found is not None and written is not None:
                spellings[written] = found
    for stmt in body:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name) \
                and targets.get(stmt.targets[0].id) == 1 and dtype(stmt.value) is not None:
            spellings[stmt.targets[0].id] = dtype(stmt.value) or ""
    return spellings


def _literal(value: ast.AST) -> str:
    if isinstance(value, ast.Constant) and (value.value is None or isinstance(value.value, (str, bool, int, float))):
        return json.dumps(value.value)
    if isinstance(value, ast.UnaryOp) and isinstance(value.op, ast.USub) and isinstance(value.operand, ast.Constant):
        number = value.operand.value
        if isinstance(number, (int, float)) and not isinstance(number, bool):
            return json.dumps(-number)
    return UNKNOWN


def _read_set_terms(function: FunctionSummary, node: ast.AST) -> None:
    """``FunctionSummary.set_terms`` and ``defaults`` of a function that sets a policy:
    ``def setup(enabled, policy="mixed_float16"): if enabled: set(policy); return``
    then ``set("float32")`` sets ``policy`` when ``enabled``, float32 when not."""
    assert isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
    args = node.args
    params = {a.arg for a in [*args.posonlyargs, *args.args, *args.kwonlyargs]}
    lines = {line for line, _ in function.sets}
    found: Dict[int, Tuple[str, List[Tuple[str, bool]]]] = {}
    chosen: Dict[int, Tuple[str, bool, str, str]] = {}
    for call, guards in _guarded_calls(node.body, [], params):
        if call.lineno in lines and call.lineno not in found:
            value = _policy_argument(call)
            param = value.id if isinstance(value, ast.Name) and value.id in params else ""
            choice = _parameter_choice(value, node, params)
            if choice is not None:
                chosen[call.lineno] = choice
            if param or guards or choice is not None:
                found[call.lineno] = (param, guards)
    function.set_terms = [(line, param, guards) for line, (param, guards) in sorted(found.items())]
    if chosen:
        function.sets = [entry for line, literal in function.sets
                         for entry in ([(line, chosen[line][2]), (line, chosen[line][3])]
                                       if line in chosen and literal is None else [(line, literal)])]
        function.set_choices = [choice for line, (param, truth, when, otherwise) in sorted(chosen.items())
                                for choice in ((line, when, param, truth), (line, otherwise, param, not truth))]


def _parameter_choice(value: Optional[ast.AST], function: ast.AST, params: Set[str]
                      ) -> Optional[Tuple[str, bool, str, str]]:
    """(parameter, truth, the policy when it holds, the policy otherwise) for a policy
    chosen by a parameter's truth: ``"mixed_float16" if amp else "float32"`` given to
    the setter, or bound once in the function to a name the setter is given."""
    if isinstance(value, ast.Name) and value.id not in params:
        bound = [stmt.value for stmt in ast.walk(function)
                 if isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.NamedExpr))
                 and any(isinstance(t, ast.Name) and t.id == value.id
                         for t in (stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]))]
        value = bound[0] if len(bound) == 1 else None
    if not isinstance(value, ast.IfExp):
        return None
    test = _parameter_test(value.test, params)
    arms = [arm.value for arm in (value.body, value.orelse) if isinstance(arm, ast.Constant)]
    if test is None or len(arms) != 2 or not all(isinstance(arm, str) for arm in arms):
        return None
    return test[0], test[1], str(arms[0]), str(arms[1])


def exclusive_lines(function: FunctionSummary, a: int, b: int) -> bool:
    """Whether the calls on lines ``a`` and ``b`` of a policy-setting function sit in
    ``if`` arms no run takes together (one test both ways: ``if args.amp:`` and its
    ``else``), by ``FunctionSummary.guards``."""
    needs = dict(function.guards.get(a, ()))
    return any(test in needs and needs[test] != truth for test, truth in function.guards.get(b, ()))


def _read_guards(function: FunctionSummary, body: List[ast.stmt]) -> None:
    """``FunctionSummary.guards`` of a function (or a module's top level) that sets a policy."""
    lines = {line for line, _ in function.sets} | {line for line, _, _ in function.arguments}
    found: Dict[int, List[Tuple[str, bool]]] = {}
    for call, guards in _tested_calls(body, []):
        if call.lineno in lines and guards and call.lineno not in found:
            found[call.lineno] = guards
    function.guards = found


def _tested_calls(body: List[ast.stmt], guards: List[Tuple[str, bool]]
                  ) -> Iterable[Tuple[ast.Call, List[Tuple[str, bool]]]]:
    """Each call of the statements, with the ``if`` tests around it (a test's source,
    ``not`` taken off, and the truth its arm needs)."""
    for stmt in body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        if isinstance(stmt, ast.If):
            test, wanted = stmt.test, True
            while isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
                test, wanted = test.operand, not wanted
            text = ast.unparse(test)
            yield from _calls_in(stmt.test, guards)
            yield from _tested_calls(stmt.body, [*guards, (text, wanted)])
            yield from _tested_calls(stmt.orelse, [*guards, (text, not wanted)])
            continue
        blocks = [getattr(stmt, name) for name in ("body", "orelse", "finalbody")
                  if isinstance(getattr(stmt, name, None), list)]
        handlers = getattr(stmt, "handlers", None) or []
        if not blocks and not handlers:
            yield from _calls_in(stmt, guards)
            continue
        for field_name, value in ast.iter_fields(stmt):
            if field_name not in ("body", "orelse", "finalbody", "handlers") and isinstance(value, ast.AST):
                yield from _calls_in(value, guards)
        for block in [*blocks, *(handler.body for handler in handlers)]:
            yield from _tested_calls(block, guards)


def _parameter_test(test: ast.AST, params: Set[str]) -> Optional[Tuple[str, bool]]:
    """``p`` -> (p, True), ``not p`` -> (p, False), for a parameter ``p``."""
    if isinstance(test, ast.Name) and test.id in params:
        return (test.id, True)
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        inner = _parameter_test(test.operand, params)
        return None if inner is None else (inner[0], not inner[1])
    return None


def _guarded_calls(body: List[ast.stmt], guards: List[Tuple[str, bool]], params: Set[str],
                   kind: type = ast.Call) -> Iterable[Tuple[Any, List[Tuple[str, bool]]]]:
    """Each call (each node of ``kind``) of the statements, with the parameter tests
    that must hold for it to run."""
    guards = list(guards)
    for stmt in body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        if isinstance(stmt, ast.If):
            test = _parameter_test(stmt.test, params)
            if test is not None:
                yield from _guarded_calls(stmt.body, [*guards, test], params, kind)
                yield from _guarded_calls(stmt.orelse, [*guards, (test[0], not test[1])], params, kind)
                if not stmt.orelse and stmt.body and isinstance(stmt.body[-1], (ast.Return, ast.Raise)):
                    guards.append((test[0], not test[1]))  # what follows runs only when the test fails
                continue
            yield from _calls_in(stmt.test, guards, kind)
            yield from _guarded_calls(stmt.body, guards, params, kind)
            yield from _guarded_calls(stmt.orelse, guards, params, kind)
            continue
        nested = [getattr(stmt, name) for name in ("body", "orelse", "finalbody") if isinstance(getattr(stmt, name, None), list)]
        handlers = getattr(stmt, "handlers", None) or []
        if nested or handlers:
            for field_name, value in ast.iter_fields(stmt):
                if field_name not in ("body", "orelse", "finalbody", "handlers") and isinstance(value, ast.AST):
                    yield from _calls_in(value, guards, kind)
            for block in nested:
                yield from _guarded_calls(block, guards, params, kind)
            for handler in handlers:
                yield from _guarded_calls(handler.body, guards, params, kind)
            continue
        yield from _calls_in(stmt, guards, kind)


def _return_guards(body: List[ast.stmt], params: Set[str]) -> Dict[int, List[Tuple[str, bool]]]:
    """id of each ``return`` statement under parameter tests -> those tests (see
    ``FunctionSummary.return_terms``)."""
    rebound = {node.id for stmt in body for node in ast.walk(stmt)
               if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store)}
    return {id(node): guards for node, guards in _guarded_calls(body, [], params - rebound, ast.Return) if guards}


def _calls_in(node: ast.AST, guards: List[Tuple[str, bool]], kind: type = ast.Call
              ) -> Iterable[Tuple[Any, List[Tuple[str, bool]]]]:
    for found in ast.walk(node):
        if isinstance(found, kind):
            yield found, guards


def _policy_argument(call: ast.Call) -> Optional[ast.AST]:
    """What a policy setter is given: its first argument or ``policy=``, inside a
    ``Policy(...)`` when wrapped."""
    value: Optional[ast.AST] = call.args[0] if call.args else next(
        (k.value for k in call.keywords if k.arg in ("policy", "dtype_policy", "value")), None)
    if isinstance(value, ast.Call) and value.args:
        value = value.args[0]
    return value


def _literal_defaults(node: ast.AST) -> Dict[str, str]:
    """``FunctionSummary.defaults``: each parameter whose default is a literal."""
    assert isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
    args = node.args
    positional = [*args.posonlyargs, *args.args]
    pairs = [*zip(positional[len(positional) - len(args.defaults):], args.defaults),
             *((a, d) for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None)]
    return {a.arg: _literal(d) for a, d in pairs if _literal(d) != UNKNOWN}


_SIGNATURE_KEEPING = frozenset({"staticmethod", "classmethod"})


def _required(function: ast.AST, params: List[str]) -> List[str]:
    """``FunctionSummary.required``: the positional parameters (of ``params``, so without
    ``self``) and keyword-only ones that have no default; [] for a decorated function,
    whose decorator may call it with arguments of its own (``@click.command``)."""
    assert isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef))
    if any(dotted(d) not in _SIGNATURE_KEEPING for d in function.decorator_list):
        return []
    args = function.args
    positional = [a.arg for a in [*args.posonlyargs, *args.args]]
    without = positional[:len(positional) - len(args.defaults)]
    keyword = [a.arg for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is None]
    return [p for p in without if p in params] + keyword


def binds(function: FunctionSummary, slots: Mapping[str, str]) -> bool:
    """A call with these argument slots (``FunctionSummary.arguments``) binds every
    parameter the function requires; a call that spreads ``*args`` or ``**kwargs`` may."""
    if "*" in slots:
        return True
    given = sum(1 for slot in slots if slot.isdigit())
    return all(param in slots or (param in function.params and function.params.index(param) < given)
               for param in function.required)


def _parameters(function: ast.AST, method: bool) -> List[str]:
    """Positional parameter names; a method's first (``self``, ``cls``) left out unless static."""
    assert isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef))
    names = [a.arg for a in [*function.args.posonlyargs, *function.args.args]]
    static = any(dotted(d) == "staticmethod" for d in function.decorator_list)
    return names[1:] if method and not static and names else names


def cast_attribute(node: ast.AST) -> ast.Attribute:
    assert isinstance(node, ast.Attribute)
    return node


def _is_self_attribute(node: ast.AST) -> bool:
    return isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self"


def _constructed(value: ast.AST) -> Optional[str]:
    """``Cls`` from ``Cls(...)``, ``[Cls(...) for ...]`` or ``[Cls(...), ...]``."""
    if isinstance(value, (ast.ListComp, ast.GeneratorExp)):
        value = value.elt
    elif isinstance(value, (ast.List, ast.Tuple)) and value.elts:
        value = value.elts[0]
    return dotted(value.func) if isinstance(value, ast.Call) else None


def _instance_callee(callee: str, instances: Dict[str, str]) -> str:
    """``v.method`` of a local ``v = Cls(...)`` is ``Cls#method``; any other callee as written."""
    head, _, rest = callee.partition(".")
    return instances[head] + METHOD + rest if rest and head in instances else callee


def _record_call(function: FunctionSummary, node: ast.Call, callee: Optional[str], instances: Dict[str, str],
                 snapshots: FrozenSet[str] = frozenset()) -> None:
    """``callee``: ``dotted(node.func)``, worked out once for both readers of the call."""
    if callee is None:
        callee = _registry_callee(node.func)
    if callee is None and isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Call):
        # `super().fit(...)`, `Trainer(cfg).fit(...)`: a method of that class
        owner = dotted(node.func.value.func)
        if owner is not None:
            callee = owner + METHOD + node.func.attr
    if callee is None:
        return
    callee = _instance_callee(callee, instances)
    function.calls.append((node.lineno, callee))
    if callee.rpartition(".")[2].rpartition(METHOD)[2] in POLICY_SETTERS and not _restores_policy(node, snapshots):
        function.sets.append((node.lineno, _policy_literal(node)))
        named = _policy_argument(node)
        written = dotted(named) if isinstance(named, (ast.Name, ast.Attribute)) else None
        if written is not None:
            function.set_names.append((node.lineno, written))
    # A function handed to another (`app.run(main)`, `strategy.run(step)`) runs there;
    # a class only tested (`isinstance(x, Block)`) is not built.
    for arg in handed_arguments(node, callee):
        if isinstance(arg, (ast.Name, ast.Attribute)):
            name = dotted(arg)
            if name is not None:
                function.calls.append((node.lineno, name))
    _record_handed(function, node, callee)


#: the callables that bind arguments to a function without calling it
_PARTIALS = frozenset({"functools.partial", "partial"})


def _record_handed(function: FunctionSummary, node: ast.Call, callee: str) -> None:
    """The callables the call hands its callee (see ``FunctionSummary.handed``)."""
    if callee in _PARTIALS or callee.partition(".")[0] in _NOT_PROJECT_HEADS:
        return  # only a call of a name that may be the project's runs what it is handed
    slots = [(str(i), arg) for i, arg in enumerate(node.args) if not isinstance(arg, ast.Starred)]
    slots += [(k.arg, k.value) for k in node.keywords if k.arg is not None]
    for slot, arg in slots:
        found: List[Optional[str]] = []
        if isinstance(arg, (ast.Name, ast.Attribute)):
            found.append(dotted(arg))
        elif isinstance(arg, ast.Lambda):
            found.extend(dotted(inner.func) for inner in ast.walk(arg.body) if isinstance(inner, ast.Call))
        elif isinstance(arg, ast.Call) and dotted(arg.func) in _PARTIALS and arg.args:
            found.append(dotted(arg.args[0]))
        for name in found:
            if name is not None:
                function.handed.append((node.lineno, callee, slot, name))


def _registry_callee(func: ast.AST) -> Optional[str]:
    """``MODELS[name]`` -> ``MODELS[]``; ``getattr(models, name)`` -> ``models[]``."""
    if isinstance(func, ast.Subscript):
        base = dotted(func.value)
        return None if base is None else base + REGISTRY
    if isinstance(func, ast.Call) and isinstance(func.func, ast.Name) and func.func.id == "getattr" \
            and len(func.args) >= 2 and not (isinstance(func.args[1], ast.Constant)):
        base = dotted(func.args[0])
        return None if base is None else base + REGISTRY
    return None


def _policy_literal(call: ast.Call) -> Optional[str]:
    """``"mixed_float16"`` from ``set_global_policy("mixed_float16")`` or
    ``set_global_policy(Policy("mixed_float16"))``; None for anything else."""
    value = _policy_argument(call)
    if isinstance(value, ast.Constant) and isinstance(value.value, str):
        return value.value
    return None
