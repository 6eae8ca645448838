"""The program model: which code a dtype policy set somewhere in the project reaches.

A policy governs the code that runs after it is set, on a path from where it is
set: ``main()`` sets ``mixed_float16`` and then calls ``build_model()`` in another
module, which calls a helper in a third. A policy set by a helper
(``configure()``) counts where the helper is called. A module's body runs when it
is imported (after each enclosing package's ``__init__``), so a policy set at a module's
top level governs what its importer runs after the import. Code that no policy-setting path reaches is judged under no
project policy: a library's modules are not governed by a benchmark script that
sets a policy and imports the library's top package, unless it calls them.

Calls are followed through imports (any chain, star imports included), functions and
classes of other modules, methods through the class hierarchy (bases imported from other
modules),
``self.method()``, ``self.x.method()`` where ``self.x = Cls(...)``, and a local
``v = Cls(...); v.method()``. A class constructed on such a path has all its methods
governed (a Keras layer captures the policy when it is built and runs it when
called); so has a class that such code hands on to code that may build it
(``functools.partial(Cls)``, an argument, a default, a return: :mod:`escapes`). Calls that cannot be followed are not: unknown stays unknown.

The model is built lazily: only modules that set a policy, that import such a
module, or that governed code calls are summarised (:mod:`summaries`). A run of named
files (pre-commit) searches for setters only among the modules that may reach them
(:meth:`ProgramModel.setter_scope`).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Deque, Dict, FrozenSet, Iterable, List, Optional, Sequence, Set, Tuple, Union, cast

from mplint.run.forwarded_arguments import ForwardedArguments
from mplint.run.import_targets import import_statements, may_import, reachable_below, statement_targets
from mplint.run.instance_methods import InstanceMethods, method_name, names_a_method
from mplint.run.picked_callables import picked_entry
from mplint.run.module_paths import absolute_import, importable, on_path
from mplint.run.optimizer_values import OptimizerValues, judges_optimizers
from mplint.run.registries import RegistryObjects, top_level_names
from mplint.run.scaling_overrides import Override, find_overrides, may_drop_scaling
from mplint.run.mixed_calls import Site, find_mixed_calls
from mplint.run.rewrite_programs import Setter, find_programs, may_switch_rewrite
from mplint.run.scaling_reached import find_scaling, uses_grappler_option
from mplint.run.test_hooks import TestFile
from mplint.run.summaries import (
    BODY, IMPORT, MAIN, METHOD, PARAM, POLICY_SETTERS, REGISTRY, STAR, UNKNOWN, FunctionSummary, ModuleSummary,
    binds, exclusive_lines, returned_part, split_part,
)
from mplint.semantic.elsewhere_marks import CALLER_AT, CONSTRUCTION, caller_at
from mplint.semantic.vocabulary import MIXED_POLICIES, UNKNOWN_POLICY
from mplint.semantic.visibility import is_private_name
from mplint.semantic.test_modules import is_test_path

_WORD = re.compile(rb"\w+")


#: what a library's training entry points are called
_TRAINING_NAME = re.compile(r"^(fit|train|train_step|train_model|train_loop|training_loop|run_training)$")
_TRAINING_DEF = re.compile(rb"\bdef (?:fit|train|train_step|train_model|train_loop|training_loop|run_training)\(")


def _top_package(path: str, root: Optional[Path], packages: FrozenSet[str] = frozenset()) -> Optional[str]:
    """The top-level package holding ``path``: the first folder below the project root
    that is a package (holds an ``__init__.py`` of ``packages``), so ``src/train/common/gpu.py``
    is in ``src/train``, not in ``src`` with every other package of a src layout; the
    first folder when none on the way is one (None at the root)."""
    if root is None:
        return None
    rel = os.path.relpath(path, root)
    parts = rel.split(os.sep)[:-1]
    if not parts or parts[0] == "..":
        return None
    for depth in range(1, len(parts) + 1):
        folder = os.path.join(str(root), *parts[:depth])
        if os.path.join(folder, "__init__.py") in packages:
            return os.sep.join(parts[:depth])
    return parts[0]


#: ``if __name__ == "__main__":`` at the start of a line: a module run as a program
_MAIN_GUARD = re.compile(rb"^if\s+(?:__name__\s*==\s*['\"]__main__['\"]|['\"]__main__['\"]\s*==\s*__name__)", re.M)


def _has_main_guard(raw: bytes) -> bool:
    """:data:`_MAIN_GUARD` in ``raw``, the literal searched first (a pattern led by ``^``
    is tried at every byte)."""
    return b"__main__" in raw and bool(_MAIN_GUARD.search(raw))


def import_words(raw: bytes) -> Set[str]:
    """Every word of the file's import statements (module and imported names)."""
    words: Set[bytes] = set()
    for statement in import_statements(raw):
        words.update(_WORD.findall(statement))
    return {word.decode("ascii") for word in words if word.isascii()}


def program_view(raw: bytes, summary: ModuleSummary) -> str:
    """A digest of what the program model sees of a file: its summary and the byte
    tests the model makes of its text. Two contents with one view give one result, so an
    edit the model cannot see (a comment, a docstring, a value it does not follow) keeps
    a cached result valid: the early cut-off of an incremental build."""
    flags = [judges_optimizers(raw), may_drop_scaling(raw), uses_grappler_option(raw),
             bool(_TRAINING_DEF.search(raw)), may_switch_rewrite(raw)]
    data = json.dumps([summary.to_json(), sorted(import_words(raw)), flags])
    return hashlib.sha256(data.encode()).hexdigest()


#: ``@a.b.`` opening a decorator: the dotted names before which a registry's name stands
#: (``@BACKBONES.register``), as the registries' search for decorated entries reads them
_DECORATOR_CHAIN = re.compile(rb"@(?:\w+\.)+")


def _word_count(raw: bytes, word: bytes) -> int:
    """How many times ``word`` is written in ``raw`` as a whole word."""
    if word not in raw:
        return 0
    return len(re.findall(rb"(?<!\w)" + re.escape(word) + rb"(?!\w)", raw))


def glance_view(raw: bytes, searched: Set[str], sought: Set[str]) -> str:
    """A digest of what the model reads of a file it did not summarise (one whose import
    statements hold a module name it looked for): the words of those statements it looked
    for and those statements as written, which of the names it looked for in the file's
    bytes they hold (callers of a setter, registries' names, at the top level too) and its
    decorators' dotted prefixes, and the byte tests of :func:`program_view`. Two contents
    with one glance lead the model to one decision, so an edit elsewhere in such a file
    keeps a cached result valid."""
    flags = [judges_optimizers(raw), may_drop_scaling(raw), uses_grappler_option(raw),
             bool(_TRAINING_DEF.search(raw)), _has_main_guard(raw)]
    # the statements holding a searched word, as written: which module they load decides
    # whether the file is an importer a one-file run follows (:mod:`import_targets`)
    statements = sorted(statement.decode("utf-8", "replace").strip() for statement in import_statements(raw)
                        if {word.decode("ascii") for word in _WORD.findall(statement) if word.isascii()} & searched)
    data = json.dumps([sorted(import_words(raw) & searched), statements,
                       sorted(name for name in sought if name.encode() in raw),
                       sorted(top_level_names(raw) & sought),
                       sorted({chain.decode("utf-8", "replace") for chain in _DECORATOR_CHAIN.findall(raw)}), flags])
    return hashlib.sha256(data.encode()).hexdigest()


def scope_view(raw: bytes) -> str:
    """A digest of what :meth:`ProgramModel.setter_scope` reads of a file in the scope it
    did not summarise: its import statements as written, the names it binds at its top
    level, its decorator lines and whether it defines a training entry point. An edit
    elsewhere in such a file leaves the scope, and a result searched in it, as they were."""
    data = json.dumps([sorted(statement.decode("utf-8", "replace").strip() for statement in import_statements(raw)),
                       sorted(top_level_names(raw)),
                       sorted(m.group(1).decode("utf-8", "replace") for m in _TOP_DEF.finditer(raw)),
                       sorted(line.decode("utf-8", "replace").strip() for line in _DECORATOR_LINE.findall(raw)),
                       bool(_TRAINING_DEF.search(raw))])
    return hashlib.sha256(data.encode()).hexdigest()


#: a decorator's dotted head, from the start of its line
_DECORATOR_HEAD = re.compile(rb"^[ \t]*@[ \t]*([\w.]+)", re.M)
#: an ``@`` and the dotted name after it: :data:`_DECORATOR_HEAD` led by its literal, which
#: the engine finds with a fast search (a pattern led by ``^`` is tried at every byte)
_AT_HEAD = re.compile(rb"@[ \t]*([\w.]+)")


def decorator_heads(raw: bytes) -> List[bytes]:
    """What :data:`_DECORATOR_HEAD` finds (each decorator's dotted head), searched from
    each ``@`` that only spaces and tabs stand before on its line."""
    return [match.group(1) for match in _AT_HEAD.finditer(raw)
            if not raw[raw.rfind(b"\n", 0, match.start()) + 1:match.start()].strip(b" \t")]


#: a decorator's line (a registry's entry is marked by one)
_DECORATOR_LINE = re.compile(rb"^[ \t]*@[^\n]*", re.M)


def content_view(raw: bytes) -> str:
    """The view of a file the model read without summarising it: its exact bytes."""
    return "raw:" + hashlib.sha256(raw).hexdigest()


Node = Tuple[str, str]  # (absolute path, qualified function name or BODY)

#: a path to governed code: where the policy is set (path, line), then the calls
#: that lead from there (qualified names), for messages
@dataclass(frozen=True)
class Route:
    path: str
    line: int
    chain: Tuple[str, ...]
    #: the program the policy was set in is a test: it governs test code only
    from_test: bool = field(default=False, compare=False)
    #: the call (path, line) whose arguments chose the policy a helper sets (see
    #: ``ProgramModel._bound_sets``), None when no call site bound it
    site: Optional[Tuple[str, int]] = field(default=None, compare=False)


@dataclass
class Governance:
    """The policies that may be in effect in a file's code, and one route for each."""

    policies: FrozenSet[str] = frozenset()
    routes: Dict[str, Route] = field(default_factory=dict)
    #: the same, per function (qualified name, or BODY for top-level code)
    by_function: Dict[str, Dict[str, Route]] = field(default_factory=dict)
    #: functions of the file that set a policy by calling a helper that sets it
    setters: FrozenSet[str] = frozenset()
    #: classes of the file that another class builds as a part (``self.head =
    #: Head(...)``): a model class used as a layer, whose outputs are not the model's
    parts: FrozenSet[str] = frozenset()
    #: classes and functions of the file whose model some project code trains or runs
    #: as a whole (``model = build(); model.fit()``, ``tape.gradient(loss,
    #: model.trainable_variables)``): a function stands for the model it returns
    trained: FrozenSet[str] = frozenset()
    #: optimizer factories the file calls: callee as written -> kinds ("plain", "lso")
    #: of the optimizer the call returns (see :mod:`optimizer_values`)
    factories: Dict[str, Tuple[str, ...]] = field(default_factory=dict)
    #: function -> parameter -> kinds of the optimizer every call site passes for it
    optimizer_params: Dict[str, Dict[str, Tuple[str, ...]]] = field(default_factory=dict)
    #: methods of the file that override a base method scaling the loss, and drop it:
    #: "Class.method" -> (base file, line of its scaling call, "Base.method", optimizer)
    scaling_overrides: Dict[str, Override] = field(default_factory=dict)
    #: a scaling call in another module that the file's code may run (its file and
    #: line), for a file that switches on the grappler option (see :mod:`scaling_reached`)
    scaling_reached: Optional[Tuple[str, int]] = None
    #: function (qualified name) -> the arguments each call in another module passes it,
    #: slot -> JSON literal or UNKNOWN (see ``FunctionSummary.arguments``)
    arguments: Dict[str, List[Dict[str, str]]] = field(default_factory=dict)
    #: the Keras packages ("keras", "tf.keras", "tf_keras") of the layers and models that
    #: code in other modules builds where a mixed policy set in this file reaches it
    layer_packages: FrozenSet[str] = frozenset()
    #: top-level functions of the file that set a policy and that no code of the project
    #: names (see :meth:`ProgramModel._dead_setters`): their policy governs only their own code
    dead_setters: FrozenSet[str] = frozenset()
    #: for a file that may switch the graph rewrite on: function -> the mixed policy that
    #: a setter in another module sets in the program running it, before or after the
    #: call (:mod:`rewrite_programs`): (policy, setter file, line)
    rewrite_programs: Dict[str, Setter] = field(default_factory=dict)
    #: function -> the parameters each call in another module binds where mixed_float16
    #: is in effect (:mod:`mixed_calls`): parameter -> JSON literal or UNKNOWN
    mixed_calls: Dict[str, List[Site]] = field(default_factory=dict)
    #: the attributes the program's summarised code sets on objects other than ``self``
    #: (``ModuleSummary.set_fields``): a config object's field among them is unknown
    set_fields: FrozenSet[str] = frozenset()


#: a line after every other: where a module's ``__main__`` guard runs, for its top level
_AFTER_ALL = 1 << 30
#: more call sites of one function than this: its parameters are left unknown
_MAX_SITES = 32
#: a bool argument as a summary writes it
#: a function defined at a module's top level (a registering decorator, maybe)
_TOP_DEF = re.compile(rb"^(?:async[ \t]+)?def[ \t]+([A-Za-z_]\w*)", re.M)


class WholeSearchNeeded(Exception):
    """A setter search kept to a scope cannot tell what the whole project's tells the
    checked files (:meth:`ProgramModel._may_seed`): search the whole project."""


#: entries a registry call is followed into, at most
_MAX_REGISTRY = 64
#: ``module.__dict__[name]``: the module's namespace as a registry
_MODULE_DICT = ".__dict__"
#: the Keras model classes a builder makes directly
_MODEL_CLASSES = frozenset({"Sequential", "Model"})


class ProgramResult:
    """What the model found, per file: plain data, cached with the project index so a
    run over an unchanged tree does not build the model again."""

    def __init__(self, by_file: Optional[Dict[str, Governance]] = None, read: Iterable[str] = (),
                 searched: Iterable[str] = (), scope: Optional[Iterable[str]] = None) -> None:
        self._by_file = by_file or {}
        #: the files the result answers for (None: every file of the project)
        self.scope = None if scope is None else sorted(scope)
        #: the files whose content the result depends on, and the module names it
        #: looked for in the import statements of every other file
        self.read = sorted(read)
        self.searched = sorted(searched)
        #: path -> the view the model had of each file it read (:func:`program_view`)
        self.views: Dict[str, str] = {}
        #: path -> the names the model looked for in its bytes (callers of a setter, registries)
        self.sought: Dict[str, List[str]] = {}
        #: path -> what the model read of each other file whose import statements hold a
        #: module name it looked for (:func:`glance_view`)
        self.glances: Dict[str, str] = {}
        #: path -> :func:`scope_view` of each file of the setter search's scope (a run of
        #: named files) that it did not read
        self.scoped: Dict[str, str] = {}

    def still_valid(self, changed: Iterable[str], import_words: Callable[[str], Set[str]],
                    content: Callable[[str], Optional[bytes]] = lambda path: None,
                    view: Callable[[str, str], Optional[str]] = lambda path, before: None) -> bool:
        """Whether the result holds after ``changed`` files changed (or appeared, or
        went): each one it read still looks the same to the model (``view(path, the
        view it had)``), of the others none now applies gradients without scaling (a
        candidate override) or may switch the graph rewrite on, and none imports a
        module name looked for unless it did so before and still gives the model the
        same glance (:func:`glance_view`)."""
        read, searched = set(self.read), set(self.searched)
        for path in changed:
            if path in read:
                before = self.views.get(path)
                if before is None or view(path, before) != before:
                    return False
                continue
            raw = content(path)
            if may_drop_scaling(raw or b"") or may_switch_rewrite(raw or b""):
                return False  # a candidate override, or a rewrite switch whose programs are asked
            if path in self.scoped and (raw is None or scope_view(raw) != self.scoped[path]):
                return False
            glanced = self.glances.get(path)
            if glanced is not None:
                if raw is None or glance_view(raw, searched, set(self.sought.get(path, ()))) != glanced:
                    return False
            elif import_words(path) & searched:
                return False
        return True

    def answers_for(self, targets: Optional[Iterable[str]]) -> bool:
        """Whether the result covers these checked files (None: the whole project)."""
        if self.scope is None:
            return True
        return targets is not None and set(targets) <= set(self.scope)

    def files(self) -> List[str]:
        """The files the result says something of."""
        return list(self._by_file)

    def governance(self, path: str) -> Governance:
        """The policies that reach code of ``path`` from where they are set."""
        return self._by_file.get(path) or Governance()

    def files_json(self) -> Dict[str, list]:
        """What the result says of each file (what a file's findings depend on)."""
        return {path: [sorted(g.setters), {name: {policy: [r.path, r.line, list(r.chain),
                                                           None if r.site is None else list(r.site)]
                                                  for policy, r in routes.items()}
                                           for name, routes in g.by_function.items()}, sorted(g.parts),
                       sorted(g.trained), g.factories, g.optimizer_params,
                       {name: list(o) for name, o in g.scaling_overrides.items()},
                       None if g.scaling_reached is None else list(g.scaling_reached), g.arguments,
                       sorted(g.layer_packages), sorted(g.dead_setters),
                       {name: list(setter) for name, setter in g.rewrite_programs.items()},
                       {name: [list(site) for site in sites] for name, sites in g.mixed_calls.items()},
                       sorted(g.set_fields)]
                for path, g in self._by_file.items()}

    def to_json(self) -> list:
        return [self.files_json(), self.read, self.searched, self.scope, self.views, self.sought, self.glances,
                self.scoped]

    @classmethod
    def from_json(cls, data: object) -> Optional["ProgramResult"]:
        """The result, or None for data of another shape (a cache miss)."""
        try:
            files, read, searched, scope, views, sought, glances, scoped = cast(List[Any], data)
            by_file: Dict[str, Governance] = {}
            assert isinstance(files, dict) and isinstance(read, list) and isinstance(searched, list)
            for path, (setters, functions, parts, trained, factories, params, overrides, reached, arguments,
                       packages, dead, programs, mixed, fields) in files.items():
                found = Governance(setters=frozenset(str(s) for s in setters),
                                   parts=frozenset(str(p) for p in parts),
                                   trained=frozenset(str(t) for t in trained),
                                   factories={str(k): tuple(map(str, v)) for k, v in factories.items()},
                                   optimizer_params={
                                       str(f): {str(p): tuple(map(str, v)) for p, v in by_param.items()}
                                       for f, by_param in params.items()},
                                   scaling_overrides={str(m): (str(p), int(l), str(b), str(r))
                                                      for m, (p, l, b, r) in overrides.items()},
                                   scaling_reached=None if reached is None else (str(reached[0]), int(reached[1])),
                                   arguments={str(f): [{str(k): str(v) for k, v in site.items()} for site in sites]
                                              for f, sites in arguments.items()},
                                   layer_packages=frozenset(str(p) for p in packages),
                                   dead_setters=frozenset(str(d) for d in dead),
                                   rewrite_programs={str(f): (str(p), str(w), int(l))
                                                     for f, (p, w, l) in programs.items()},
                                   mixed_calls={str(f): [(str(w), int(l), {str(k): str(v) for k, v in bound.items()})
                                                         for w, l, bound in sites]
                                                for f, sites in mixed.items()},
                                   set_fields=frozenset(str(f) for f in fields))
                for name, routes in functions.items():
                    found.by_function[str(name)] = {
                        str(policy): Route(str(where), int(line), tuple(str(c) for c in chain),
                                           site=None if site is None else (str(site[0]), int(site[1])))
                        for policy, (where, line, chain, site) in routes.items()}
                    for policy, route in found.by_function[str(name)].items():
                        found.routes.setdefault(policy, route)
                found.policies = frozenset(found.routes)
                by_file[str(path)] = found
            seen = {str(k): str(v) for k, v in views.items()}
            glanced = {str(k): str(v) for k, v in glances.items()}
            names = {str(k): [str(n) for n in v] for k, v in sought.items()}
            in_scope = {str(k): str(v) for k, v in scoped.items()}
        except (AssertionError, AttributeError, TypeError, ValueError):
            return None
        result = cls(by_file, [str(r) for r in read], [str(s) for s in searched],
                     None if scope is None else [str(s) for s in scope])
        result.views = seen
        result.sought = names
        result.glances = glanced
        result.scoped = in_scope
        return result


class ProgramModel:
    """Policies set in the project and the code they reach."""

    def __init__(self, root: Optional[Path], files: Iterable[str],
                 summary_of: Callable[[str], ModuleSummary], read: Callable[[str], Optional[bytes]],
                 policy_values: Callable[[str], FrozenSet[str]]) -> None:
        """``files``: absolute paths of the project's modules; ``summary_of`` and
        ``read`` give a file's summary and bytes; ``policy_values`` the policies a
        file sets, as the project index evaluated them (for run-time choices)."""
        self.root = root
        self.files = [f for f in files if f.endswith((".py", ".ipynb"))]
        self._summary_of = summary_of
        self._read = read
        #: the test files read for their hooks and training calls, by path
        self._test_files: Dict[str, TestFile] = {}
        self._policy_values = policy_values
        self._summaries: Dict[str, ModuleSummary] = {}
        #: node -> (policy, setter file) for every route offered to it (:meth:`_govern`)
        self._setter_files: Dict[Node, Set[Tuple[str, str]]] = {}
        #: path -> the Keras packages the module reads names from (:meth:`_module_packages`)
        self._keras_packages: Dict[str, Set[str]] = {}
        self._modules: Dict[str, List[str]] = {}
        for path in self.files:
            for name, _ in importable(path, root):
                self._modules.setdefault(name, []).append(path)
        #: node -> for each policy it sets (directly or through a callee): the first
        #: line that sets it, and where it is set
        self._sets: Dict[Node, Dict[str, Tuple[int, Route]]] = {}
        #: node -> policies in effect when it runs, with a route for each
        self._governed: Dict[Node, Dict[str, Route]] = {}
        self._edges: Dict[Node, List[Tuple[int, List[Node]]]] = {}
        self._by_file: Dict[str, Governance] = {}
        self._resolved: Dict[Tuple[str, str], List[Node]] = {}
        #: path -> what each of its import statements may load (:meth:`_statement_targets`)
        self._targets_of: Dict[str, List[Optional[FrozenSet[str]]]] = {}
        #: word of any import statement -> files that hold it (built on first use)
        self._import_words: Optional[Dict[str, Set[str]]] = None
        #: while looking for setters: the modules a call may resolve into
        self._restrict: Optional[Set[str]] = None
        self._module_of: Dict[Tuple[str, str], Optional[str]] = {}
        #: class -> the project classes that derive from it (:meth:`_subclasses_of`)
        self._subclass_index: Optional[Dict[Node, List[Node]]] = None
        #: the module names looked for in import statements (what the result
        #: depends on in files that were not summarised)
        self.searched: Set[str] = set()
        #: path -> the names looked for in its bytes (what the result depends on in a
        #: file that was not summarised, with :attr:`searched`)
        self.sought: Dict[str, Set[str]] = {}
        #: setter nodes some project code calls, and the roots seeded for library switches
        self._called: Set[Node] = set()
        self._api_roots: List[Node] = []
        #: how many resolutions stopped at a module outside ``_restrict`` (not memoised:
        #: a setter found later widens it, and the order setters are taken in must not matter)
        self._cut = 0
        #: dotted name -> the modules below it (built on first use, :meth:`_modules_named`)
        self._below: Optional[Dict[str, Set[str]]] = None
        #: the names written in decorators' heads (built on first use, :meth:`_decorator_words`)
        self._decorated_names: Optional[Set[str]] = None
        #: the modules the spread may enter (None: all)
        self._within: Optional[Set[str]] = None
        #: summaries' ``passes`` by the last name of the callee (see :meth:`call_sites`)
        self._sites_by_name: Optional[Dict[str, List[Tuple[str, str, str, str, str]]]] = None
        #: the called name -> (callee, slot, path, function, callable) of each handed callable
        self._handed_by_name: Optional[Dict[str, List[Tuple[str, str, str, str, str]]]] = None
        #: how many modules were summarised when ``_handed_by_name`` was indexed
        self._handed_indexed = 0
        #: registry objects filled by decorators (``@BACKBONES.register``)
        self._registry_objects = RegistryObjects(self)
        #: plain classes built on governed paths, and the methods governed code calls
        self._instances = InstanceMethods(self)

    # -- building ------------------------------------------------------------------------
    def build(self, setter_files: Iterable[str], targets: Optional[Iterable[str]] = None,
              scope: Optional[Set[str]] = None) -> "ProgramResult":
        """Find every function that sets a policy (directly or through a helper),
        then spread each policy over the code called after it is set.

        ``targets``: the files being checked, when not the whole project (pre-commit
        names one): the spread then enters only modules that may lead to them.
        ``scope`` (:meth:`setter_scope` of the targets): the upward search for who calls
        a setter stays in these modules; raises :class:`WholeSearchNeeded` where that
        cannot tell what a whole search tells the targets (a library switch's seeds)."""
        pending = sorted(set(setter_files) & set(self.files))  # one answer, whatever the order
        seen_setters: Set[str] = set()
        # Upward, a call matters only if it may reach a setter: modules that set
        # nothing are not summarised for it (most importers' calls go elsewhere).
        self._restrict = set(pending)
        while pending:  # upward: who calls a setter, found in files that import it
            path = pending.pop()
            if path in seen_setters:
                continue
            seen_setters.add(path)
            self._find_sets(path)
            names = self._setter_names(path)
            for importer in self._importers(path):
                if scope is not None and importer not in scope:
                    continue  # its calls lead to no checked file (:meth:`setter_scope`)
                raw = self._read(importer) or b""
                if names is not None:
                    self.sought.setdefault(importer, set()).update(name.decode("utf-8", "replace") for name in names)
                if names is not None and not any(name in raw for name in names):
                    continue  # it never names what sets the policy: no call can reach it
                before = self._sets_of(importer)
                if self._find_sets(importer):
                    self._restrict.add(importer)
                    if self._sets_of(importer) != before:  # its own importers learn of it again
                        seen_setters.discard(importer)
                        pending.append(importer)
        self._restrict = None
        self._resolved.clear()  # answers given under the restriction
        self._edges.clear()
        within = None if targets is None else self._leading_to(set(targets))
        if scope is not None and within is not None and self._may_seed(within):
            raise WholeSearchNeeded()
        self._seed_library_api()
        self._within = within
        self._restrict = self._within  # calls into other modules are not resolved
        self._spread()
        self._restrict = None
        if self._within is not None:
            self._resolved.clear()  # calls out of the spread's modules are followed from here on
        # A function that calls a setter runs its own code after the call under the
        # policy too (the module facts see only the calls written in its file).
        helped: Dict[str, Set[str]] = {}
        for (path, name), sets in self._sets.items():
            for policy, (_, route) in sets.items():
                if route.path != path or len(route.chain) > 1:
                    helped.setdefault(path, set()).add(name)
                    self._govern((path, name), policy, Route(route.path, route.line, route.chain[:1],
                                                             site=route.site))
                    if name == BODY:
                        self._govern_definitions(path, policy, route)
        for (path, name), policies in sorted(self._governed.items()):
            # a policy set through keras reaches no layer of a module built from tf_keras
            policies = {policy: route for policy, route in policies.items()
                        if route.path == path or not self.misses_layers(route, path)}
            found = self._by_file.setdefault(path, Governance())
            for policy, route in policies.items():
                found.routes.setdefault(policy, route)
            found.policies = frozenset(found.routes)
            # the ``__main__`` guard is top-level code to the checks
            key = BODY if name == MAIN else name
            found.by_function[key] = {**policies, **found.by_function.get(key, {})}
        for path, functions in helped.items():
            self._by_file.setdefault(path, Governance()).setters = frozenset(functions)
        for path, dead in self._dead_setters().items():
            self._by_file.setdefault(path, Governance()).dead_setters = frozenset(dead)
        for path, packages in self._layer_packages_reached().items():
            self._by_file.setdefault(path, Governance()).layer_packages = frozenset(packages)
        for path, classes in self._parts().items():
            if path in self._by_file:  # only governed code is judged under a policy
                self._by_file[path].parts = frozenset(classes)
        for path, models in TrainedModels(self).find().items():
            if path in self._by_file:
                self._by_file[path].trained = frozenset(models)
        # Optimizers: for every summarised file (a script that sets the policy itself
        # and calls a factory is governed by nothing from elsewhere).
        optimizers = OptimizerValues(self)
        summarised = {path for path in self._summaries if judges_optimizers(self._read(path) or b"")}
        parameters = optimizers.parameters(summarised)
        for path in sorted(summarised):
            factories = optimizers.factories(path)
            passed = parameters.get(path, {})
            if factories or passed:
                governance = self._by_file.setdefault(path, Governance())
                governance.factories = {k: tuple(v) for k, v in factories.items()}
                governance.optimizer_params = {f: {p: tuple(v) for p, v in by_param.items()}
                                               for f, by_param in passed.items()}
        # The arguments other modules pass to the functions of the governed and checked files.
        judged = set(self._by_file) | (set() if targets is None else set(targets) & set(self.files))
        for path, by_function in self.arguments(sorted(judged)).items():
            self._by_file.setdefault(path, Governance()).arguments = by_function
        for path, mixed_sites in find_mixed_calls(self, sorted(judged)).items():
            self._by_file.setdefault(path, Governance()).mixed_calls = mixed_sites
        # Overrides that drop a base class's loss scaling: judged in every module that
        # applies gradients without scaling (only the checked ones, for named files).
        candidates = [path for path in (self.files if targets is None else sorted(set(targets) & set(self.files)))
                      if may_drop_scaling(self._read(path) or b"")]
        for path, overrides in find_overrides(self, candidates).items():
            self._by_file.setdefault(path, Governance()).scaling_overrides = overrides
        # Modules that switch on the grappler option: loss scaling in code they call.
        grappler = [path for path in (self.files if targets is None else sorted(set(targets) & set(self.files)))
                    if uses_grappler_option(self._read(path) or b"")]
        for path, place in find_scaling(self, grappler).items():
            self._by_file.setdefault(path, Governance()).scaling_reached = place
        # Modules that may switch the graph rewrite on: the mixed policy of the programs
        # running their code, set before or after (MP401 is no matter of order).
        rewriting = [path for path in (self.files if targets is None else sorted(set(targets) & set(self.files)))
                     if may_switch_rewrite(self._read(path) or b"")]
        for path, programs in find_programs(self, rewriting).items():
            self._by_file.setdefault(path, Governance()).rewrite_programs = {
                BODY if name == MAIN else name: setter for name, setter in sorted(programs.items())}
        fields = frozenset(f for path in list(self._summaries) for f in self.summary(path).set_fields)
        for governance in self._by_file.values():
            governance.set_fields = fields
        result = ProgramResult(self._by_file, sorted(self._summaries), sorted(self.searched),
                               None if targets is None else sorted(targets))
        result.sought = {path: sorted(names) for path, names in self.sought.items()}
        return result

    def _layer_packages_reached(self) -> Dict[str, Set[str]]:
        """Setter file -> the Keras packages of the layers and models built by the code of
        other modules that a mixed policy set there reaches (``build()`` in ``model.py``
        making ``tf_keras.layers.Dense`` for ``keras.mixed_precision.set_global_policy``)."""
        found: Dict[str, Set[str]] = {}
        for (path, name), reaching in self._setter_files.items():
            setters = {setter for policy, setter in reaching if policy in MIXED_POLICIES and setter != path}
            if not setters:
                continue
            packages = self._layer_packages_of(path, name)
            for setter in setters if packages else ():
                found.setdefault(setter, set()).update(packages)
        return found

    def _layer_packages_of(self, path: str, name: str) -> Set[str]:
        """The Keras packages whose layers or models the function builds, by its calls'
        names read through the module's imports."""
        # (imported here: the index workers forked from this process must not load libcst)
        from mplint.semantic.names import keras_package
        summary = self.summary(path)
        function = summary.functions.get(name)
        found: Set[str] = set()
        for _, callee in function.calls if function is not None else ():
            head, _, rest = callee.partition(".")
            target = summary.imports.get(head)
            if target is None or METHOD in callee or callee.startswith(IMPORT):
                continue
            full = target + ("." + rest if rest else "")
            package = keras_package(full)
            if package is not None and (".layers." in full or full.rsplit(".", 1)[-1] in _MODEL_CLASSES):
                found.add(package)
        return found

    def misses_layers(self, route: Route, path: str) -> bool:
        """Whether the policy set at ``route`` cannot reach the layers of module ``path``:
        it is set through one Keras package, and every Keras package the module reads
        names from keeps a global policy of its own (``keras.mixed_precision.set_global_policy``
        in a trainer, a model module built from ``tf_keras``: its layers stay float32)."""
        from mplint.semantic.names import separate_policies
        setters = self._setter_packages(route.path, route.line)
        if len(setters) != 1:
            return False
        (setter,) = setters
        module = self._module_packages(path)
        return bool(module) and all(separate_policies(setter, p) for p in module)

    def _setter_packages(self, path: str, line: int) -> Set[str]:
        """The Keras packages the policy setters called at ``path:line`` are read through
        ("?" for one not read through an import: unknown)."""
        from mplint.semantic.names import keras_package
        summary = self.summary(path)
        found: Set[str] = set()
        for function in summary.functions.values():
            for at, callee in function.calls:
                if at != line or callee.rpartition(".")[2] not in POLICY_SETTERS:
                    continue
                head, _, rest = callee.partition(".")
                target = summary.imports.get(head)
                package = keras_package(target + ("." + rest if rest else "")) if target else None
                found.add(package or "?")
        return found

    def _module_packages(self, path: str) -> Set[str]:
        """The Keras packages module ``path`` imports or builds layers and models from."""
        from mplint.semantic.names import keras_package
        found = self._keras_packages.get(path)
        if found is None:
            summary = self.summary(path)
            found = {p for p in map(keras_package, summary.imports.values()) if p is not None}
            for name in summary.functions:
                found |= self._layer_packages_of(path, name)
            self._keras_packages[path] = found
        return found

    def _govern_definitions(self, path: str, policy: str, route: Route) -> None:
        """A module whose top level sets a policy through what it imports or calls
        (``import amp`` whose ``__init__`` sets it) has every function of its own under it,
        as a set written in the module itself has: they run when called, after the import."""
        for name in self.summary(path).functions:
            if name not in (BODY, MAIN):
                self._govern((path, name), policy, Route(route.path, route.line,
                                                         (*route.chain[:1], self._label((path, name))),
                                                         site=route.site))

    def summaries(self) -> Dict[str, ModuleSummary]:
        """The modules summarised so far (what a result read of them)."""
        return dict(self._summaries)

    def summary(self, path: str) -> ModuleSummary:
        found = self._summaries.get(path)
        if found is None:
            found = self._summaries[path] = self._summary_of(path)
        return found

    def _sets_of(self, path: str) -> Dict[str, Dict[str, int]]:
        """What the nodes of ``path`` set, and from which line (to tell a change)."""
        return {name: {policy: line for policy, (line, _) in sets.items()}
                for (where, name), sets in self._sets.items() if where == path}

    def _find_sets(self, path: str) -> bool:
        """Record the nodes of ``path`` that set a policy, directly or by calling a
        node that does; whether any does. Each keeps its first such line."""
        summary = self.summary(path)
        changed = True
        while changed:  # a function of this module may call another one that sets
            changed = False
            for name, function in summary.functions.items():
                node = (path, name)
                found: Dict[str, Tuple[int, Route]] = {}

                def offer(policy: str, line: int, route: Route) -> None:
                    if policy not in found or line < found[policy][0]:
                        found[policy] = (line, route)

                for line, literal in function.sets:
                    literal = literal or self._named_policy(path, function, line)
                    values = frozenset({literal}) if literal else self._policy_values(path)
                    for policy in values:
                        offer(policy, line, Route(path, line, (self._label(node),)))
                for line, callee in function.calls:
                    for target in self._resolve(path, name, callee):
                        if target == node or not _named_by(callee, target):
                            continue
                        if target in self._sets:
                            self._called.add(target)
                        bound = self._bound_sets(function, (path, line), callee, target)
                        for policy, (_, route) in (bound or self._sets.get(target, {})).items():
                            offer(policy, line, Route(route.path, route.line, (self._label(node), *route.chain),
                                                      site=route.site))
                old = self._sets.get(node, {})
                if found and {p: v[0] for p, v in found.items()} != {p: v[0] for p, v in old.items()}:
                    self._sets[node] = found  # a route alone never re-runs this
                    changed = True
        return any((path, name) in self._sets for name in summary.functions)

    def _bound_sets(self, caller: FunctionSummary, site: Tuple[str, int], callee: str, target: Node
                    ) -> Optional[Dict[str, Tuple[int, Route]]]:
        """What a call of a helper whose policy depends on its parameters sets at this
        call site, its parameters bound from the call's arguments and the defaults
        (``setup(False)`` sets float32 only, ``setup(True, "mixed_bfloat16")``
        mixed_bfloat16): one level of call string. None when the helper's sets depend
        on no parameter, or the call cannot be read (``*args``): its sets from every
        caller stand."""
        sets = self._sets.get(target)
        if not sets:  # (before its summary: a module that sets nothing is not read for this)
            return None
        function = self.summary(target[0]).functions.get(target[1])
        if function is None or not function.set_terms:
            return None
        slots = self._site_slots(caller, site, callee)
        if slots is None or "*" in slots:
            return None
        terms = {term_line: (param, guards) for term_line, param, guards in function.set_terms}
        chosen = {(line, policy): (param, truth) for line, policy, param, truth in function.set_choices}

        def argument(param: str) -> str:
            if param in function.params and str(function.params.index(param)) in slots:
                return slots[str(function.params.index(param))]
            return slots.get(param, function.defaults.get(param, UNKNOWN))

        found: Dict[str, Tuple[int, Route]] = {}
        for set_line, literal in function.sets:
            literal = literal or self._named_policy(target[0], function, set_line)
            param, guards = terms.get(set_line, ("", []))
            if literal is not None and (set_line, literal) in chosen:
                guards = [*guards, chosen[(set_line, literal)]]
            if any(argument(p) != UNKNOWN and bool(json.loads(argument(p))) != truth for p, truth in guards):
                continue  # the call's arguments rule this set out
            value = argument(param) if param else UNKNOWN
            if literal:
                values = frozenset({literal})
            elif value != UNKNOWN and isinstance(json.loads(value), str):
                values = frozenset({json.loads(value)})
            else:
                values = self._policy_values(target[0])  # as for every caller
            for policy in values:
                if policy not in found or set_line < found[policy][0]:
                    found[policy] = (set_line, Route(target[0], set_line, (self._label(target),), site=site))
        for policy, (first, route) in sets.items():  # what it sets through its own callees
            if len(route.chain) > 1 and policy not in found:
                found[policy] = (first, route)
        return found

    def _site_slots(self, caller: FunctionSummary, site: Tuple[str, int], callee: str
                    ) -> Optional[Dict[str, str]]:
        """The arguments of the call of ``callee`` at ``site`` (``FunctionSummary.arguments``),
        with a name another module binds to a literal once read as that literal
        (``setup(cfg.USE_AMP)`` with ``USE_AMP = False`` in ``configs/default.py``)."""
        slots = next((s for l, c, s in caller.arguments if l == site[1] and c == callee), None)
        if slots is None:
            return None
        named = [(slot, name) for l, c, slot, name in caller.named_arguments if l == site[1] and c == callee]
        if not named:
            return slots
        slots = dict(slots)
        for slot, name in named:
            value = self._constant(site[0], name)
            if value is not None:
                slots[slot] = json.dumps(value)
        return slots

    def _parts(self) -> Dict[str, Set[str]]:
        """Classes that a class of a summarised module builds as ``self.x = Cls(...)``."""
        found: Dict[str, Set[str]] = {}
        for path in list(self._summaries):
            for info in self.summary(path).classes.values():
                for written in info.attributes.values():
                    cls = self._class(path, written)
                    if cls is not None:
                        found.setdefault(cls[0], set()).add(cls[1])
        return found

    def _setter_names(self, path: str) -> Optional[Set[bytes]]:
        """The names a caller must write to reach a setter of ``path`` (functions, and
        classes whose methods set); None when importing the module is enough."""
        names: Set[bytes] = set()
        for node in self._sets:
            if node[0] != path:
                continue
            if node[1] == BODY:
                return None
            if node[1] == MAIN:
                continue  # runs as a program only: no importer reaches it
            names.update(part.encode() for part in node[1].split(".")[:1] + node[1].split(".")[-1:])
        return names

    def _leading_to(self, targets: Set[str]) -> Set[str]:
        """``targets`` and every module that may import them, directly or through others,
        or reach their code through a registry their decorators fill."""
        found = set(targets)
        # Registries the targets' own definitions enter (not those of every importer:
        # that would summarise the whole tree for one file).
        todo = [*targets, *(module for path in targets for module in self._registries_filled_by(path))]
        found.update(todo)
        while todo:
            for importer in self.importers_of(todo.pop()):
                if importer not in found:
                    found.add(importer)
                    todo.append(importer)
        return found

    def importers_of(self, path: str) -> List[str]:
        """Project files whose import statements may load the module at ``path``: those
        :meth:`_importers` finds by a word, kept when a statement, read as Python reads it,
        names the module or a submodule of it (:mod:`import_targets`)."""
        names = [name for name, _ in importable(path, self.root)]
        return [importer for importer in self._importers(path)
                if may_import(self._statement_targets(importer), names)]

    def _statement_targets(self, path: str) -> List[Optional[FrozenSet[str]]]:
        """What each import statement of ``path`` may load (read once per file)."""
        found = self._targets_of.get(path)
        if found is None:
            found = self._targets_of[path] = [statement_targets(statement, path, self.root)
                                              for statement in import_statements(self._read(path) or b"")]
        return found

    def _registries_filled_by(self, path: str) -> List[str]:
        """Modules holding a decorator registry that the definitions of ``path`` enter
        (``@register_model`` from ``registry.py``): a call through it runs their code."""
        found: List[str] = []
        for decorator in self.summary(path).decorated:
            for module, name in self._resolve(path, BODY, decorator):
                if name in self.summary(module).writers and module not in found:
                    found.append(module)
        return found + [module for module in self._registry_objects.filled_by(path) if module not in found]

    def _seed_library_api(self) -> None:
        """A library function that sets a policy and that nothing in the project calls
        is the library's public switch (``enable_mixed_precision()``): its users call
        it before training, so the library's own training entry points (``fit``,
        ``train``, ``train_step`` of its package) may run under it, not for certain.

        Only in a library: where a program of the project sets its policy (a script's
        top level or ``__main__`` guard, directly or through what it calls), the
        project is an application whose programs choose their policies themselves,
        and a setter nothing calls is dead code that governs nothing."""
        if self._programs_set_policies():
            return
        for (path, name), direct in self._uncalled_setters():
            if _private(name):
                continue
            for root in self._training_entry_points(path):
                for policy, (_, route) in direct.items():
                    for value in (policy, UNKNOWN_POLICY):
                        self._govern(root, value, Route(route.path, route.line, (self._label(root),)))
                self._api_roots.append(root)

    def _may_seed(self, within: Set[str]) -> bool:
        """Whether :meth:`_seed_library_api` may seed a training entry point of ``within``
        after a search kept to a scope: whether a program sets a policy, and whether a
        setter is called, are facts of the whole project, which that search did not read
        (it reads every setter of the packages of ``within``'s training entry points, so
        one it leaves uncalled is the only kind that may seed there)."""
        if self._programs_set_policies():
            return False  # set by a program the scope holds: so in the whole project too
        return any(root[0] in within for (path, name), _ in self._uncalled_setters() if not _private(name)
                   for root in self._training_entry_points(path))

    def reuse_indexes(self, other: "ProgramModel") -> None:
        """Take ``other``'s indexes of the project's import statements (facts of the
        files' bytes alone), built for the same files: a run of named files reads them
        once for :meth:`setter_scope` and once for the model."""
        self._import_words = other._import_words
        self._targets_of = other._targets_of
        self._below = other._below
        self._decorated_names = other._decorated_names

    def setter_scope(self, targets: Iterable[str]) -> Optional[Set[str]]:
        """The modules whose policy setters, and the callers of those, may reach the code
        of ``targets`` (a run that checks named files): the modules that lead to them
        (:meth:`_leading_to`), and everything those may import, transitively (a setter
        reaches a module's code only through a call, and a call into another module goes
        through an import; a package's submodules count, ``pkg.sub.f()`` after ``import
        pkg``), with the modules that import one of them and decorate with a name it binds
        (a registry's entries, which a lookup runs), and every module of the top package of
        a module of ``within`` that defines a training entry point (where a library switch
        seeds: :meth:`_seed_library_api`). None (no scope: the whole project) when an import
        statement cannot be read, or the project holds a notebook (its imports are cells of
        JSON text, which :meth:`importers_of` does not read: a notebook that sets a policy
        and calls a checked module is found only by the whole search)."""
        if any(path.endswith(".ipynb") for path in self.files):
            return None
        within = self._leading_to(set(targets))
        self._resolved.clear()  # (asked again under the upward search's restriction)
        self._edges.clear()
        found = set(within)
        todo = sorted(within)
        while todo:
            path = todo.pop()
            loaded: Set[str] = set()
            below: Set[str] = set()
            for statement in import_statements(self._read(path) or b""):
                names = statement_targets(statement, path, self.root)
                under = reachable_below(statement, path, self.root)
                if names is None or under is None:
                    return None
                loaded.update(names)
                below.update(under)
            for module in self._modules_named(loaded, below) | self._registering(path):
                if module not in found:
                    found.add(module)
                    todo.append(module)
            if len(found) * 2 > len(self.files):
                return None  # most of the project (``import pkg`` of a library): the whole search costs less
        packages = frozenset(f for f in self.files if os.path.basename(f) == "__init__.py")
        trainers = {_top_package(path, self.root, packages) for path in within
                    if _TRAINING_DEF.search(self._read(path) or b"")}
        trainers.discard(None)
        if trainers:
            found.update(f for f in self.files if _top_package(f, self.root, packages) in trainers)
        return found

    def _modules_named(self, loaded: Iterable[str], below: Iterable[str]) -> Set[str]:
        """The project modules that loading ``loaded`` runs (each name's module and the
        packages above it), and those below the names of ``below``."""
        if self._below is None:
            self._below = {}
            for name, paths in self._modules.items():
                parts = name.split(".")
                for depth in range(1, len(parts)):
                    self._below.setdefault(".".join(parts[:depth]), set()).update(paths)
        found: Set[str] = set()
        for name in loaded:
            parts = name.split(".")
            for depth in range(1, len(parts) + 1):
                found.update(self._modules.get(".".join(parts[:depth]), ()))
        for name in below:
            found.update(self._below.get(name, ()))
        return found

    def _registering(self, path: str) -> Set[str]:
        """The importers of ``path`` that decorate a definition with a name ``path`` binds
        at its top level (``@BACKBONES.register``, ``@register_model``): a registry's
        entries, which a lookup through ``path`` may run."""
        raw = self._read(path) or b""
        names = set(top_level_names(raw)) | {m.group(1).decode("ascii", "replace") for m in _TOP_DEF.finditer(raw)}
        names = {name for name in names if name.isidentifier()} & self._decorator_words()
        if not names:
            return set()
        mark = re.compile(rb"@(?:\w+\.)*(?:" + b"|".join(re.escape(n.encode()) for n in sorted(names)) + rb")\b")
        return {importer for importer in self.importers_of(path) if mark.search(self._read(importer) or b"")}

    def _decorator_words(self) -> Set[str]:
        """Every name written in a decorator's dotted head anywhere in the project (read
        once): a module binding none of them fills no registry by decorators."""
        if self._decorated_names is None:
            self._decorated_names = set()
            for path in self.files:
                for head in decorator_heads(self._read(path) or b""):
                    self._decorated_names.update(part.decode("ascii", "replace") for part in head.split(b"."))
        return self._decorated_names

    def _uncalled_setters(self) -> List[Tuple[Node, Dict[str, Tuple[int, Route]]]]:
        """Functions outside tests that set a policy themselves and that no project call
        the model resolved reaches, with the policies they set directly."""
        found: List[Tuple[Node, Dict[str, Tuple[int, Route]]]] = []
        for (path, name), sets in list(self._sets.items()):
            if name in (BODY, MAIN) or (path, name) in self._called or is_test_path(path) \
                    or name.split(".")[-1].startswith("test"):
                continue
            direct = {policy: first for policy, first in sets.items() if len(first[1].chain) == 1}
            if direct:
                found.append(((path, name), direct))
        return found

    def _dead_setters(self) -> Dict[str, Set[str]]:
        """Top-level functions that set a policy themselves and that no code of the project
        calls or names: not their own module beyond the ``def``, nor any file whose imports
        may name that module (``make_fc_model`` in a notebook's helper module, which the
        notebook never calls). Such a policy governs only the function's own code, not the
        rest of its module. A name written anywhere else (a call, a callback handed to
        ``app.run``, a registry, a string for ``getattr``) keeps it alive."""
        found: Dict[str, Set[str]] = {}
        for (path, name), _ in self._uncalled_setters():
            if "." in name:
                continue
            word = name.encode()
            if _word_count(self._read(path) or b"", word) != 1:
                continue
            importers = self._importers(path)
            for importer in importers:
                self.sought.setdefault(importer, set()).add(name)
            if any(_word_count(self._read(importer) or b"", word) for importer in importers):
                continue
            found.setdefault(path, set()).add(name)
        return found

    def _programs_set_policies(self) -> bool:
        """Whether a program of the project, tests aside, sets a policy: a module's top
        level or ``__main__`` guard sets one itself or through a function it calls."""
        return any(name in (BODY, MAIN) and not is_test_path(path) for path, name in self._sets)

    def _training_entry_points(self, setter: str) -> List[Node]:
        """``fit``/``train``... functions and methods in the setter's top-level package,
        outside the package's own programs (a module with a ``__main__`` guard)."""
        packages = frozenset(f for f in self.files if os.path.basename(f) == "__init__.py")
        package = _top_package(setter, self.root, packages)
        if package is None:
            return []
        found: List[Node] = []
        for path in self.files:
            if path == setter or is_test_path(path) or _top_package(path, self.root, packages) != package:
                continue
            raw = self._read(path)
            if not raw or not _TRAINING_DEF.search(raw) or _has_main_guard(raw):
                continue  # a program's own training function runs from its ``__main__``, not a user's
            for name in self.summary(path).functions:
                if _TRAINING_NAME.match(name.split(".")[-1]):
                    found.append((path, name))
        return found

    def searched_importers(self) -> Set[str]:
        """The files whose import statements hold a module name the model looked for."""
        if self._import_words is None:
            return set()
        return set().union(*(self._import_words.get(word, set()) for word in self.searched))

    def _importers(self, path: str) -> List[str]:
        """Project files whose import statements may name the module at ``path``
        (a word of an import statement equals its last dotted name)."""
        if self._import_words is None:
            self._import_words = {}
            for other in self.files:
                raw = self._read(other)
                if not raw:
                    continue
                for word in import_words(raw):
                    self._import_words.setdefault(word, set()).add(other)
        found: Set[str] = set()
        for name, _ in importable(path, self.root):
            word = name.split(".")[-1]
            self.searched.add(word)
            found |= self._import_words.get(word, set())
        found.discard(path)
        return sorted(found)

    def _spread(self) -> None:
        """Policies flow from each setting node into what it calls after the set,
        and from governed nodes into everything they call. Breadth first, so each
        route kept is a shortest one from where the policy is set."""
        queue: Deque[Node] = deque()
        for node, sets in self._sets.items():
            extra: List[Tuple[int, List[Node], List[Node]]] = []
            if node[1] == BODY and MAIN in self.summary(node[0]).functions:
                # a program's top level runs its ``__main__`` guard after it (not an import of it)
                extra = [(_AFTER_ALL, [(node[0], MAIN)], [])]
            for policy, (line, route) in sets.items():
                base = Route(route.path, route.line, (self._label(node),),
                             from_test=self._test_not_training(node), site=route.site)
                queue.extend(self._reach(node, policy, base, line, extra))
                # a test file's setup hook: each test it runs before is under the policy
                for test in self._tests_after(node):
                    if self._govern(test, policy, Route(
                            route.path, route.line, (self._label(node), self._label(test)),
                            from_test=self._test_not_training(test), site=route.site)):
                        queue.append(test)
            for setter, target in self._handed_into_setters(node, sets):
                for policy, (line, route) in sets.items():
                    if self._govern(target, policy, Route(
                            route.path, route.line, (self._label(node), self._label(setter), self._label(target)),
                            from_test=self._test_not_training(node), site=route.site)):
                        queue.append(target)
        queue.extend(self._api_roots)
        while queue:
            node = queue.popleft()
            for policy, route in list(self._governed.get(node, {}).items()):
                queue.extend(self._reach(node, policy, route, -1))

    def _test_file(self, path: str) -> Optional[TestFile]:
        if not is_test_path(path):
            return None
        found = self._test_files.get(path)
        if found is None:
            found = self._test_files[path] = TestFile(self._read(path) or b"")
        return found

    def _test_not_training(self, node: Node) -> bool:
        """Code of a test file that is no training program: the policy it sets governs
        test code only. A test that trains (``fit``, an optimizer update) is one: the library
        models it trains under its policy are trained under it."""
        test_file = self._test_file(node[0])
        return test_file is not None and not test_file.trains(node[1])

    def _tests_after(self, node: Node) -> List[Node]:
        """The tests a setup hook (``setUp``, ``setup_module``, a fixture) runs before."""
        test_file = self._test_file(node[0])
        return [(node[0], name) for name in test_file.tests_after(node[1])] if test_file is not None else []

    def _reach(self, node: Node, policy: str, route: Route, after: int,
               extra: Sequence[Tuple[int, List[Node], List[Node]]] = ()) -> List[Node]:
        """Govern what ``node`` runs after line ``after`` under ``policy`` (``route``: how
        the policy reaches ``node``); the nodes newly governed."""
        found: List[Node] = []

        def govern(target: Node, how: Route) -> None:
            if self._govern(target, policy, how):
                found.append(target)

        def onward(target: Node, start: Route = route) -> Route:
            return Route(start.path, start.line, start.chain + (self._label(target),),
                         from_test=start.from_test, site=start.site)

        # the setter's own code: not the calls in the other arm of the ``if`` that sets it
        setter = self.summary(node[0]).functions.get(node[1]) if after >= 0 else None
        for call_line, now, built in [*self._run_edges(node), *extra]:
            if call_line <= after or (setter is not None and exclusive_lines(setter, after, call_line)):
                continue
            for target in now:
                govern(target, onward(target))
            for method in built:
                caller = self._instances.offer(method, policy)
                if caller is not None:
                    govern(method, onward(method, caller))
        for call_line, name in self._methods_called(node):
            if call_line > after:
                for method in self._instances.called(name, policy, route):
                    govern(method, onward(method))
        owner = self._owner(node)
        this = self.summary(node[0]).functions.get(node[1])
        for call_line, name in self._self_calls(node) if owner is not None else ():
            if call_line > after:
                # virtual dispatch: ``self.build_model()`` in ``BaseModel.__init__`` runs the
                # override of the subclass built here (``FpnDepth(cfg)``), not only the base's
                assert owner is not None
                dispatched = self._instances.dispatched(owner, name, policy, route)
                for method in self._bound(this, call_line, "self." + name, dispatched) if this else dispatched:
                    govern(method, onward(method))
        return found

    def _owner(self, node: Node) -> Optional[Node]:
        """The class whose method ``node`` is (a class of its module), else None."""
        owner = node[1].rsplit(".", 1)[0] if "." in node[1] else None
        return (node[0], owner) if owner is not None and owner in self.summary(node[0]).classes else None

    def _self_calls(self, node: Node) -> List[Tuple[int, str]]:
        """(line, name) of each method ``node`` calls on ``self`` (``self.build_model()``)."""
        function = self.summary(node[0]).functions.get(node[1])
        if function is None:
            return []
        return [(line, callee[len("self."):]) for line, callee in function.calls
                if callee.startswith("self.") and "." not in callee[len("self."):]]

    def _handed_into_setters(self, node: Node, sets: Dict[str, Tuple[int, Route]]) -> List[Tuple[Node, Node]]:
        """``(setter, callable)`` for each callable that ``node`` hands, on the line where
        it sets a policy through a helper, to that helper, which calls it after its set
        (``fe.build(model_fn=LeNet, mixed_precision=True)`` where ``build`` sets the policy,
        then calls ``model_fn()``): the builder runs under the policy the helper sets. A
        builder called in the argument list (``model_fn=make()``) ran before: not one."""
        function = self.summary(node[0]).functions.get(node[1])
        lines = {line for line, _ in sets.values()}
        out: List[Tuple[Node, Node]] = []
        for line, callee, slot, handed in function.handed if function is not None else []:
            if line not in lines:
                continue
            for setter in self._resolve(node[0], node[1], callee):
                if setter != node and self._calls_after_set(setter, slot):
                    out.extend((setter, target) for target in self._resolve(node[0], node[1], handed))
        return out

    def _calls_after_set(self, setter: Node, slot: str) -> bool:
        """The setter calls the parameter in ``slot`` (a position or a keyword) after the
        first policy it sets."""
        sets = self._sets.get(setter)
        function = self.summary(setter[0]).functions.get(setter[1])
        if not sets or function is None:
            return False
        param = function.params[int(slot)] if slot.isdigit() and int(slot) < len(function.params) else slot
        first = min(line for line, _ in sets.values())
        return param in function.params and any(called == param and line > first for line, called in function.calls)

    def _govern(self, node: Node, policy: str, route: Route) -> bool:
        if self._within is not None and node[0] not in self._within:
            return False
        if route.from_test and not is_test_path(node[0]):
            # A test sets a policy to test that code under it, often on purpose
            # (dtype checks): the library it calls is not a training program's.
            return False
        # every setter file that reaches the node, though one route per policy is kept:
        # a model module two trainers build is reached from both (MP406 at each)
        self._setter_files.setdefault(node, set()).add((policy, route.path))
        policies = self._governed.setdefault(node, {})
        if policy in policies:
            return False
        policies[policy] = route
        return True

    def summarised(self) -> List[str]:
        """The modules summarised so far, in order."""
        return sorted(self._summaries)

    def governed_policies(self, node: Node) -> Dict[str, Route]:
        """The policies the spread carried into ``node``, and a route of each."""
        return self._governed.get(node, {})

    def policy_sets(self) -> Dict[Node, Dict[str, Tuple[int, Route]]]:
        """Each node that sets a policy, directly or through a helper: policy -> (its
        first line, the route)."""
        return self._sets

    def edges_of(self, node: Node) -> List[Tuple[int, List[Node]]]:
        edges = self._edges.get(node)
        if edges is None:
            path, name = node
            function = self.summary(path).functions.get(name)
            edges = self._edges[node] = [] if function is None else [
                (line, self._resolve(path, name, callee)) for line, callee in function.calls]
        return edges

    def _run_edges(self, node: Node) -> List[Tuple[int, List[Node], List[Node]]]:
        """What running ``node`` may run: its calls, and the methods of each project class
        it hands on as a value (``functools.partial(Block)``, an argument of a call into
        code mplint cannot see, a default, a container, a return: see :mod:`escapes`), as
        the code receiving the class may build it. A class only tested (``isinstance``)
        or named as a base is not built. Each edge: (line, what runs now, the methods of
        a plain class it builds, which run only where called: :mod:`instance_methods`)."""
        edges = self.edges_of(node)
        function = self.summary(node[0]).functions.get(node[1])
        if function is None:
            return [(line, targets, []) for line, targets in edges]
        out = [(line, *self._instances.built(node[0], callee, self._bound(function, line, callee, targets)))
               for (line, targets), (_, callee) in zip(edges, function.calls)]
        for line, written in function.escapes:
            targets = self._escaped(node[0], written)
            if targets:
                out.append((line, *self._instances.built(node[0], written, targets)))
        return out

    def _bound(self, caller: FunctionSummary, line: int, callee: str, targets: List[Node]) -> List[Node]:
        """The targets that the call of ``callee`` at ``line`` can bind: a function the
        call gives too few arguments (``build()`` of ``def build(size, classes)``) raises
        TypeError before its body runs, so nothing reaches through that call. Only a
        function the call names is judged, not the methods a class construction runs."""
        sites = [slots for at, written, slots in caller.arguments if at == line and written == callee]
        if not sites:
            return targets
        name = callee.rpartition(".")[2]
        kept = []
        for target in targets:
            function = self.summary(target[0]).functions.get(target[1])
            if function is None or target[1].rpartition(".")[2] != name \
                    or any(binds(function, slots) for slots in sites):
                kept.append(target)
        return kept

    def _methods_called(self, node: Node) -> List[Tuple[int, str]]:
        """(line, name) of each method ``node`` calls on a receiver the model cannot
        resolve (``model.export()``, ``model`` a factory's result)."""
        function = self.summary(node[0]).functions.get(node[1])
        if function is None:
            return []
        return [(line, method_name(callee)) for (line, targets), (_, callee) in zip(self.edges_of(node), function.calls)
                if not targets and names_a_method(callee)]

    def _escaped(self, path: str, written: str) -> List[Node]:
        """What a name handed on as a value may run: a project class's methods, or the
        entries of a module-level registry (``LAYERS = {"a": A}``, here or imported)."""
        cls = self._class(path, written)
        if cls is not None:
            return self._class_nodes(cls)
        summary = self.summary(path)
        if written in summary.registries:
            return self._entries(path, summary.registries[written])
        for full in self._imported(path, written):
            owner, _, name = full.rpartition(".")
            module = self._module(path, owner) if owner else None
            if module is None or (self._restrict is not None and module not in self._restrict
                                  and module not in self._summaries):
                continue
            entries = self.summary(module).registries.get(name)
            if entries:
                return self._entries(module, entries)
        return []

    # -- name resolution ---------------------------------------------------------------
    def _resolve(self, path: str, function: str, callee: str) -> List[Node]:
        """The project nodes a call written ``callee`` in ``function`` of ``path`` may run."""
        summary = self.summary(path)
        if callee.startswith(IMPORT):
            return self._imported_bodies(path, callee[len(IMPORT):])
        if METHOD in callee:
            cls, _, method = callee.partition(METHOD)
            method = method.split(".")[0]
            if cls == "super":
                owner = function.rsplit(".", 1)[0] if "." in function else None
                if owner is None or owner not in summary.classes:
                    return []
                for base in self._bases((path, owner))[1:]:
                    found = self._methods(base, method)
                    if found:
                        return found
                return []
            return self._methods(self._class(path, cls), method)
        if callee.endswith(REGISTRY):
            registry = callee[:-len(REGISTRY)]
            return self._registry(path, registry) or self._registry_objects.lookup(path, registry)
        head, _, rest = callee.partition(".")
        if head in ("self", "cls") and "." in function:  # ``cls``: a classmethod's class
            owner = function.rsplit(".", 1)[0]
            local = (path, owner)
            if not rest:
                return []
            first, _, more = rest.partition(".")
            if not more:
                return self._methods(local, first) or self._picked(path, owner, first)
            attribute = summary.classes.get(owner)
            if attribute is not None and first in attribute.attributes:
                return self._methods(self._class(path, attribute.attributes[first]), more.split(".")[0])
            return []
        if head in summary.classes or head in summary.functions:
            return self._local(path, callee)
        return self._through_imports(path, callee) or self._registry_objects.lookup(path, callee)

    def _picked(self, path: str, owner: str, attr: str) -> List[Node]:
        """The function ``self.<attr>`` of the class ``owner`` holds, when its class binds it
        to one by name (``activations.hard_sigmoid``) or by a literal key a function of the
        project picks it by (``get_activation("hard_sigmoid")``; :mod:`picked_callables`)."""
        cls = self.summary(path).classes.get(owner)
        form = cls.callables.get(attr) if cls is not None else None
        if not form and cls is not None and cls.sources.get(attr, "").startswith(PARAM):
            # ``self.perturb = perturb`` in ``__init__``: what the constructions hand it
            # (``PerturbedDense(128, perturb=augment.feature_jitter)`` in another module)
            param = cls.sources[attr][len(PARAM):]
            return list(dict.fromkeys(node for init in self._methods((path, owner), "__init__")
                                      for caller, function, handed in self.handed_sites(init, param)
                                      for node in self._resolve(caller, function, handed) if node[1] != BODY))
        if not form:
            return []
        if len(form) == 1:
            return [node for node in self._resolve(path, BODY, form[0]) if node[1] != BODY]
        picker, slot, key = form
        found: List[Node] = []
        for target in self._resolve(path, BODY, picker):
            function = self.summary(target[0]).functions.get(target[1])
            if function is None or not function.picks or target[1] == BODY:
                return []
            keyed = self.summary(target[0]).keyed
            entry = picked_entry(function.picks, function.params, slot, key, lambda name: keyed.get(name, {}))
            if entry is None:
                return []
            found += [node for node in self._resolve(target[0], BODY, entry) if node[1] != BODY]
        return found

    def _imported_bodies(self, importer: str, name: str) -> List[Node]:
        """The module bodies an import statement runs, in the order Python runs them:
        each enclosing package's ``__init__`` first (``import a.b.c`` runs ``a``, then
        ``a.b``, then ``a.b.c``), never the importer itself (a package importing its own
        submodules)."""
        parts = absolute_import(name, importer, self.root).split(".")
        found: List[Node] = []
        for cut in range(1, len(parts) + 1):
            module = self._module(importer, ".".join(parts[:cut]))
            if module is not None and module != importer and (module, BODY) not in found:
                found.append((module, BODY))
        return found

    def _registry(self, path: str, base: str) -> List[Node]:
        """What a call through a registry may run, its key chosen at run time: every
        entry of a module-level dict of callables (``TASKS[name]()``, here or imported),
        or every public function and class of a module (``models.__dict__[arch]()``,
        ``getattr(models, arch)()``)."""
        summary = self.summary(path)
        if base in summary.registries:
            return self._entries(path, summary.registries[base])
        if any(base in names for names in summary.writers.values()):
            return self._registered(path, base)
        written = base[:-len(_MODULE_DICT)] if base.endswith(_MODULE_DICT) else base
        head, _, rest = written.partition(".")
        target = summary.imports.get(head)
        if target is None:
            return []
        full = target + ("." + rest if rest else "")
        module = self._module(path, full)
        if module is not None:
            if self._restrict is not None and module not in self._restrict and module not in self._summaries:
                self._cut += 1
                return []
            public = self.summary(module)
            names = [name for name in [*public.functions, *public.classes]
                     if name not in (BODY, MAIN) and "." not in name and not name.startswith("_")]
            return [node for name in sorted(names) for node in self._local(module, name)][:_MAX_REGISTRY]
        owner, _, name = full.rpartition(".")
        module = self._module(path, owner) if owner else None
        if module is None or (self._restrict is not None and module not in self._restrict
                              and module not in self._summaries):
            return []
        entries = self.summary(module).registries.get(name)
        if not entries and any(name in names for names in self.summary(module).writers.values()):
            return self._registered(module, name)
        return self._entries(module, entries) if entries else []

    def _registered(self, path: str, registry: str) -> List[Node]:
        """The entries of a decorator registry: every top-level function and class, in
        the registry's module or one importing it, decorated by a function of ``path``
        that stores into ``registry`` by key."""
        writers = {(path, name) for name, stored in self.summary(path).writers.items() if registry in stored}
        found: List[Node] = []
        for module in [path, *self._importers(path)]:
            if self._restrict is not None and module not in self._restrict and module not in self._summaries:
                continue
            for decorator, names in sorted(self.summary(module).decorated.items()):
                if writers & set(self._resolve(module, BODY, decorator)):
                    found += [node for name in names for node in self._local(module, name)]
            if len(found) >= _MAX_REGISTRY:
                break
        return found[:_MAX_REGISTRY]

    def _entries(self, path: str, values: List[str]) -> List[Node]:
        found: List[Node] = []
        for value in values:
            found += self._resolve(path, BODY, value)
        return found[:_MAX_REGISTRY]

    def _local(self, path: str, name: str) -> List[Node]:
        summary = self.summary(path)
        if name in summary.classes:
            return self._class_nodes((path, name))
        if name in summary.functions:
            return [(path, name)]
        owner, _, method = name.rpartition(".")
        if owner in summary.classes:
            return self._methods((path, owner), method)
        return []

    def _external(self, importer: str, full: str) -> List[Node]:
        """``pkg.mod.func`` / ``pkg.mod.Class`` / ``pkg.mod.Class.method`` from ``importer``
        (memoised; a cycle of re-exports resolves to nothing)."""
        key = (importer, full)
        found = self._resolved.get(key)
        if found is None:
            self._resolved[key] = []  # in progress: a re-export cycle ends here
            cut = self._cut
            found = self._find_external(importer, full)
            if self._cut == cut:
                self._resolved[key] = found
            else:  # stopped at a module outside the restriction, which may widen later
                del self._resolved[key]
        return found

    def _find_external(self, importer: str, full: str) -> List[Node]:
        parts = full.split(".")
        for cut in range(len(parts), 0, -1):
            module = self._module(importer, ".".join(parts[:cut]))
            if module is None:
                continue
            if self._restrict is not None and module not in self._restrict and module not in self._summaries:
                self._cut += 1
                return []
            rest = ".".join(parts[cut:])
            if not rest:
                return [(module, BODY)]
            return self._local(module, rest) or self._through_imports(module, rest)
        return []

    def _through_imports(self, module: str, rest: str) -> List[Node]:
        """What a name written in ``module`` runs through the imports binding it: a call's
        callee, or ``from pkg import build`` where ``pkg/__init__.py`` imports ``build``."""
        for full in self._imported(module, rest):
            found = self._external(module, full)
            if found:
                return found
        return []

    def _imported(self, path: str, written: str) -> List[str]:
        """The dotted names a name written in ``path`` may stand for through its imports:
        the import that binds its head, else each ``from mod import *`` (the last one
        first, as a later star import shadows an earlier one)."""
        summary = self.summary(path)
        head, _, rest = written.partition(".")
        target = summary.imports.get(head)
        if target is not None:
            return [target + ("." + rest if rest else "")]
        stars = [module for key, module in summary.imports.items() if key.startswith(STAR)]
        joined = [module + written if module.endswith(".") else f"{module}.{written}" for module in reversed(stars)]
        return joined

    def _class(self, path: str, written: str) -> Optional[Node]:
        """The class a dotted name written in ``path`` names."""
        summary = self.summary(path)
        if written in summary.classes:
            return (path, written)
        tail = written.rpartition(".")[2]
        for full in self._imported(path, written):
            for node in self._external(path, full):
                owner = node[1].rsplit(".", 1)[0] if node[1] != BODY else None
                if "." in written and node[1].rpartition(".")[2] == tail:
                    return None  # ``Net.create``: a method of the class, not the class
                if owner and owner in self.summary(node[0]).classes:
                    return (node[0], owner)
        return None

    def _bases(self, cls: Node, seen: Optional[Set[Node]] = None) -> List[Node]:
        """The class and its project base classes, nearest first."""
        seen = seen if seen is not None else set()
        if cls in seen:
            return []
        seen.add(cls)
        out = [cls]
        info = self.summary(cls[0]).classes.get(cls[1])
        for base in info.bases if info else []:
            found = self._base_class(cls[0], base)
            if found is not None:
                out += self._bases(found, seen)
        return out

    def _base_class(self, path: str, written: str) -> Optional[Node]:
        """The project class a base written in ``path`` names. A base is part of its
        subclass's definition, not a call: it is found wherever it lives, even while the
        spread of a run of named files enters only the modules leading to them, and its
        module joins those (``BaseModel.__init__`` runs ``self.build_model()``, the
        checked subclass's override), so such a run follows the routes a whole run does."""
        if self._within is None or self._restrict is not self._within:
            return self._class(path, written)
        self._restrict = None
        try:
            found = self._class(path, written)
        finally:
            self._restrict = self._within
        if found is not None and path in self._within:
            self._within.add(found[0])
        return found

    def _methods(self, cls: Optional[Node], method: str) -> List[Node]:
        if cls is None:
            return []
        for owner in self._bases(cls):
            info = self.summary(owner[0]).classes.get(owner[1])
            if info is not None and method in info.methods:
                return [(owner[0], f"{owner[1]}.{method}")]
        return []

    def _class_nodes(self, cls: Node) -> List[Node]:
        """Constructing a class: every method of it and its project bases."""
        out: List[Node] = []
        for owner in self._bases(cls):
            info = self.summary(owner[0]).classes.get(owner[1])
            out += [(owner[0], f"{owner[1]}.{m}") for m in (info.methods if info else [])]
        return out

    def _named_policy(self, path: str, function: FunctionSummary, line: int) -> Optional[str]:
        """The policy a set at ``line`` names through a string constant another module
        binds (``set_global_policy(config.POLICY)``, ``POLICY = "mixed_bfloat16"`` in
        ``config``), or None when it names none or the name is not such a constant."""
        written = next((name for at, name in function.set_names if at == line), None)
        if written is None:
            return None
        value = self._constant(path, written)
        return value if isinstance(value, str) else None

    def _constant(self, path: str, written: str) -> Union[str, bool, int, float, None]:
        """The literal a name written in ``path`` reads from a constant another module of
        the project binds once (``config.POLICY``, ``cfg.USE_AMP`` with ``USE_AMP = False``
        in ``configs/default.py``), or None when it is no such constant (or is None)."""
        found: Set[str] = set()
        for full in self._imported(path, written):
            parts = full.split(".")
            # ``config.POLICY``, or ``config.CFG.policy`` of a config object (``object_constants``)
            for end in range(len(parts) - 1, 0, -1):
                module = self._module(path, ".".join(parts[:end]))
                if module is not None:
                    if end < len(parts) - 1 and ({parts[-1], "*"} & self.summary(path).set_fields_view()):
                        return None  # ``CFG.policy = args.policy`` in the setter's module
                    if module != path:
                        found.add(self.summary(module).constants.get(".".join(parts[end:]), UNKNOWN))
                    break
        literal = found.pop() if len(found) == 1 else UNKNOWN
        return None if literal == UNKNOWN else json.loads(literal)

    def _module(self, importer: str, name: str) -> Optional[str]:
        """The project file an import of ``name`` in ``importer`` loads (memoised)."""
        key = (importer, name)
        if key not in self._module_of:
            self._module_of[key] = self._find_module(importer, absolute_import(name, importer, self.root))
        return self._module_of[key]

    def _find_module(self, importer: str, name: str) -> Optional[str]:
        for candidate in self._modules.get(name, []):
            if any(n == name and on_path(folder, importer, self.root)
                   for n, folder in importable(candidate, self.root)):
                return candidate
        return None

    def forget_call_sites(self) -> None:
        """Modules were summarised since :meth:`call_sites` indexed the calls: index again."""
        self._sites_by_name = None
        self._handed_by_name = None
        self._subclass_index = None

    def handed_sites(self, target: Node, param: str) -> List[Tuple[str, str, str]]:
        """``(path, function, callable)`` for each callable the summarised code hands the
        function ``target`` for its parameter ``param`` (``FunctionSummary.handed``)."""
        function = self.summary(target[0]).functions.get(target[1])
        if function is None or param not in function.params:
            return []
        if self._handed_by_name is None or self._handed_indexed != len(self._summaries):
            # (modules summarised since the index was made hand callables too)
            self._handed_indexed = len(self._summaries)
            self._handed_by_name = {}
            for path in list(self._summaries):
                for name, caller in self.summary(path).functions.items():
                    for _, callee, slot, handed in caller.handed:
                        last = callee.rsplit(".", 1)[-1].rpartition(METHOD)[2]
                        self._handed_by_name.setdefault(last, []).append((callee, slot, path, name, handed))
        slots = (str(function.params.index(param)), param)
        parts = target[1].split(".")
        spelled = parts[-2] if parts[-1] == "__init__" and len(parts) > 1 else parts[-1]  # a class's name
        return [(path, name, handed)
                for callee, slot, path, name, handed in self._handed_by_name.get(spelled, [])
                if slot in slots and target in self.call_targets(path, name, callee)]

    def call_sites(self, target: Node) -> List[Tuple[str, str, str, str]]:
        """``(slot, path, function, argument)`` for each argument that summarised code
        passes to the function ``target`` (a constructor: its class's name), from the
        summaries' ``passes``; only calls spelled with its name are resolved."""
        if self._sites_by_name is None:
            self._sites_by_name = {}
            for path in list(self._summaries):
                for name, function in self.summary(path).functions.items():
                    for callee, slot, argument in function.passes:
                        last = callee.rsplit(".", 1)[-1].rpartition(METHOD)[2]  # ``GAN#compile``: compile
                        self._sites_by_name.setdefault(last, []).append((callee, slot, path, name, argument))
        parts = target[1].split(".")
        called = parts[-2] if parts[-1] == "__init__" and len(parts) > 1 else parts[-1]
        found: List[Tuple[str, str, str, str]] = []
        resolved: Dict[Tuple[str, str, str], bool] = {}
        for callee, slot, path, name, argument in self._sites_by_name.get(called, []):
            key = (path, name, callee)
            if key not in resolved:
                resolved[key] = target in self.call_targets(path, name, callee)
            if resolved[key]:
                found.append((slot, path, name, argument))
        return found

    def arguments(self, paths: Iterable[str]) -> Dict[str, Dict[str, List[Dict[str, str]]]]:
        """path -> function -> the arguments each call in the summarised code of *other*
        modules passes it (a call in its own module is read by the file's evaluator):
        ``build(x, classifier_activation="softmax")`` in ``train.py`` for ``build`` in
        ``models.py``. A function with more calls than ``_MAX_SITES`` gets one site of
        unknowns."""
        wanted = self.defined_by_spelling(paths)
        every = {path for homes in wanted.values() for path in homes}
        found: Dict[str, Dict[str, List[Dict[str, str]]]] = {}
        forwarded = ForwardedArguments(self)
        for caller in sorted(self._summaries):
            for function, summary in self.summary(caller).functions.items():
                for line, callee, slots in summary.arguments:
                    spelled = callee.rsplit(".", 1)[-1]
                    homes = wanted.get(spelled)
                    picked = not homes and callee.count(".") == 1 and callee.startswith("self.")
                    if not homes and not picked:
                        continue
                    targets = [t for t in [*self.call_targets(caller, function, callee),
                                           *self._overrides_called(caller, function, callee)]
                               if (t[0] in homes if homes else t[0] in every) and t[0] != caller]
                    if not targets:
                        continue
                    # strings, numbers, bools and None: a bool handed two calls down decides an arm
                    # (``include_top=False`` forwarded by ``EfficientNetLiteB0`` to ``EfficientNetLite``)
                    slots = self._constructions(caller, slots)
                    at = {CALLER_AT: caller_at(self._relative(caller), line, spelled if picked else None)}
                    sites = [{**site, **at} for site in forwarded.expand(caller, function, summary, callee, slots)]
                    for target in targets:
                        found.setdefault(target[0], {}).setdefault(target[1], []).extend(sites)
        for by_function in found.values():
            for name, sites in by_function.items():
                if len(sites) > _MAX_SITES:
                    by_function[name] = [{"*": UNKNOWN}]
        return found

    def _constructions(self, caller: str, slots: Dict[str, str]) -> Dict[str, str]:
        """``slots`` with each construction an argument makes (``CONSTRUCTION + slot``)
        resolved to the project's top-level class it builds: ``[module path relative to
        the root, class, {slot: literal}]`` (a call of anything else is dropped)."""
        if not any(k.startswith(CONSTRUCTION) for k in slots):
            return slots
        out: Dict[str, str] = {}
        for key, value in slots.items():
            if key.startswith(CONSTRUCTION):
                record = json.loads(value)
                if len(record) == 1:  # ``build(CFG)`` with ``from config import CFG``
                    bound = self._top_name(caller, record[0])
                    if bound is None:
                        continue
                    value = json.dumps([self._relative(bound[0]), bound[1]])
                else:
                    cls = self._top_class(caller, record[0])
                    if cls is None:
                        continue
                    value = json.dumps([self._relative(cls[0]), cls[1], record[1]])
            out[key] = value
        return out

    def _top_name(self, path: str, written: str) -> Optional[Node]:
        """(module, name) of the top-level name of another project module a name written
        in ``path`` stands for through its imports (``config.CFG``, ``from config import CFG``)."""
        for full in self._imported(path, written):
            module_name, _, name = full.rpartition(".")
            module = self._module(path, module_name) if module_name else None
            if module is not None and module != path:
                return (module, name)
        return None

    def _top_class(self, path: str, written: str) -> Optional[Node]:
        """The top-level class of a project module a name written in ``path`` names,
        defined there or imported (``from config import ModelConfig``)."""
        if written in self.summary(path).classes:
            return (path, written)
        for full in self._imported(path, written):
            module_name, _, name = full.rpartition(".")
            module = self._module(path, module_name) if module_name else None
            if module is not None and name in self.summary(module).classes:
                return (module, name)
        return None

    def _overrides_called(self, path: str, function: str, callee: str) -> List[Node]:
        """The overrides a ``self.method(...)`` call in a method of a class may run: the
        method of that name each subclass in the project defines (``self.mask_scores(s)``
        in a base's ``call``, overridden in another module): virtual dispatch."""
        head, _, method = callee.partition(".")
        if head != "self" or not method or "." in method or "." not in function:
            return []
        owner = (path, function.rsplit(".", 1)[0])
        found: List[Node] = []
        for cls in self._subclasses_of(owner):
            info = self.summary(cls[0]).classes.get(cls[1])
            if info is not None and method in info.methods:
                found.append((cls[0], f"{cls[1]}.{method}"))
        return found

    def _subclasses_of(self, cls: Node) -> List[Node]:
        """The project's classes that have ``cls`` among their bases (not itself), memoised
        per run."""
        if self._subclass_index is None:
            index: Dict[Node, List[Node]] = {}
            for path in sorted(self._summaries):
                for name in self.summary(path).classes:
                    for base in self._bases((path, name))[1:]:
                        index.setdefault(base, []).append((path, name))
            self._subclass_index = index
        return self._subclass_index.get(cls, [])

    def _relative(self, path: str) -> str:
        """A module's path as a call site names it: relative to the project root, so a
        stored result does not depend on where the project was checked out."""
        return os.path.relpath(path, self.root) if self.root is not None else path

    def defined_by_spelling(self, paths: Iterable[str]) -> Dict[str, Set[str]]:
        """The name a call spells for each function of ``paths`` (a class's name for its
        ``__init__``) -> the files defining one of that name."""
        wanted: Dict[str, Set[str]] = {}
        for path in paths:
            for name in self.summary(path).functions:
                if name in (BODY, MAIN):
                    continue
                parts = name.split(".")
                spelled = parts[-2] if parts[-1] == "__init__" and len(parts) > 1 else parts[-1]
                wanted.setdefault(spelled, set()).add(path)
        return wanted

    def call_targets(self, path: str, function: str, callee: str) -> List[Node]:
        """The functions a call passes its arguments to: a class's constructor, or the function."""
        cls = self._class(path, callee)
        if cls is not None:
            return self._methods(cls, "__init__")
        return [node for node in self._resolve(path, function, callee) if node[1] != BODY]

    @staticmethod
    def _label(node: Node) -> str:
        path, name = node
        if name == MAIN:
            return f"{os.path.basename(path)} __main__"
        return f"{os.path.basename(path)} top level" if name == BODY else f"{name}()"




class TrainedModels:
    """Which models the project trains or runs as a whole, found in the summarised
    modules: what makes ``m`` in ``m.fit()``/``m.trainable_variables``, followed
    through the functions that return it, the parameters it is passed to
    (``train(model)``, ``Trainer(model)`` storing ``self.model``) and ``self.x``
    attributes. A model class or builder never seen so may be a block of a bigger
    model: its last layer is no output."""

    def __init__(self, model: ProgramModel) -> None:
        self.model = model
        self.nodes: Set[Node] = set()
        self.params: Set[Tuple[Node, str]] = set()
        #: (function, index): a part of what the function returns is trained
        self.parts: Set[Tuple[Node, int]] = set()
        self._work: List[Tuple[str, Node, str]] = []

    def find(self) -> Dict[str, Set[str]]:
        model = self.model
        self._summarise_callees()
        for path in list(model._summaries):
            if is_test_path(path):
                continue  # a test fits a model to test it (``can_run_in_mixed_precision``), not to train it
            for name, function in model.summary(path).functions.items():
                if name == MAIN and not self._runs_mixed((path, MAIN)):
                    continue  # a builder's self-test, run only as a program of its own without the policy
                for written in function.trained:
                    # outputs cast to float32 here, or in the loss helper it is handed to: not its loss
                    if written not in function.casts and not self._cast_where_passed(path, name, written):
                        self._offer(path, name, written)
        while self._work:
            kind, node, param = self._work.pop()
            summary = model.summary(node[0]).functions.get(node[1])
            if kind == "node":  # a builder: the model it returns is trained
                for written in summary.returns if summary else []:
                    self._offer(node[0], node[1], written)
                continue
            if kind == "part":  # ``gen, disc = build_gan()``: what that element may be
                for written in (returned_part(summary, int(param)) or []) if summary else []:
                    self._offer(node[0], node[1], written)
                continue
            if summary is None or param not in summary.params:
                continue
            position = str(summary.params.index(param))
            for slot, path, name, argument in model.call_sites(node):
                if slot in (position, param):
                    self._offer(path, name, argument)
        found: Dict[str, Set[str]] = {}
        for path, name in self.nodes:
            found.setdefault(path, set()).add(name)
        return found

    def _runs_mixed(self, node: Node) -> bool:
        """Whether a mixed policy (or one not known) governs ``node`` or is set there."""
        policies = {*self.model.governed_policies(node), *self.model.policy_sets().get(node, {})}
        return bool(policies & (MIXED_POLICIES | {UNKNOWN_POLICY}))

    def _cast_where_passed(self, path: str, function: str, written: str) -> bool:
        """``written`` is handed to a function that casts its outputs to float32 before
        the loss (``loss, _ = mse_loss(model, x, y)`` whose ``heatmaps = model(x)`` is
        cast there): the helper computes the loss the gradients come from."""
        summary = self.model.summary(path).functions.get(function)
        for callee, slot, argument in summary.passes if summary else []:
            if argument != written:
                continue
            for target in self.model.call_targets(path, function, callee):
                helper = self.model.summary(target[0]).functions.get(target[1])
                if helper is None:
                    continue
                param = helper.params[int(slot)] if slot.isdigit() and int(slot) < len(helper.params) else slot
                if PARAM + param in helper.casts:
                    return True
        return False

    def _summarise_callees(self) -> None:
        """A model passed to a function or class of another module (``Trainer(model)``)
        is trained there when that code trains the parameter: summarise the modules the
        summarised code passes arguments into, whatever files the run checks, so a
        pre-commit run naming the model's file alone learns what a whole run learns."""
        model = self.model
        for path in list(model._summaries):
            for name, function in model.summary(path).functions.items():
                for callee in {callee for callee, _, argument in function.passes if argument != UNKNOWN}:
                    model.call_targets(path, name, callee)
        model.forget_call_sites()

    def _offer(self, path: str, function: str, written: str) -> None:
        """``written`` (as in a summary's ``trained``/``returns``/``passes``) is trained."""
        if written == UNKNOWN:
            return
        if written.startswith(PARAM):
            self._add_param((path, function), written[len(PARAM):])
            return
        summary = self.model.summary(path).functions.get(function)
        if summary is not None and written in summary.params:
            # ``model = model_fn()`` of a parameter: the builders its callers hand it
            for caller, caller_function, handed in self.model.handed_sites((path, function), written):
                if not is_test_path(caller):  # as for ``trained``: a test builds a model to test it
                    self._offer(caller, caller_function, handed)
            return
        if written.startswith("self."):
            owner = function.rsplit(".", 1)[0] if "." in function else None
            if owner is None:
                return
            attribute = written[len("self."):]
            for base in self.model._bases((path, owner)):
                info = self.model.summary(base[0]).classes.get(base[1])
                source = info.sources.get(attribute) if info else None
                if source is not None:
                    if source.startswith(PARAM):  # ``self.model = model`` in the constructor
                        self._add_param((base[0], f"{base[1]}.__init__"), source[len(PARAM):])
                    else:
                        self._offer(base[0], f"{base[1]}.__init__", source)
                    return
            return
        callee, index = split_part(written)
        if index is not None:
            # a part of a builder's result: only that element's makers (not every model
            # the builder makes) are trained
            for node in self.model._resolve(path, function, callee):
                if node[1] != BODY and (node, index) not in self.parts:
                    self.parts.add((node, index))
                    self._work.append(("part", node, str(index)))
            return
        cls = self.model._class(path, written)
        if cls is not None:
            for base in self.model._bases(cls):  # a base's ``call`` makes the outputs too
                if base not in self.nodes:
                    self.nodes.add(base)
                    self._delegates(base)
            return
        for node in self.model._resolve(path, function, written):
            if node not in self.nodes and node[1] != BODY:
                self.nodes.add(node)
                self._work.append(("node", node, ""))

    def _delegates(self, cls: Node) -> None:
        """A trained model class whose ``call`` runs a model its constructor was handed
        (``self.base_model = base_model``, then ``self.base_model(inputs)`` in ``call``: a
        wrapper that overrides ``train_step``) trains that model: its outputs are the
        wrapper's. Blocks the class builds itself are not handed in, and stay blocks."""
        info = self.model.summary(cls[0]).classes.get(cls[1])
        method = f"{cls[1]}.call"
        call = self.model.summary(cls[0]).functions.get(method)
        if info is None or call is None:
            return
        for _, callee in call.calls:
            attribute = callee[len("self."):] if callee.startswith("self.") else ""
            if attribute and "." not in attribute and info.sources.get(attribute, "").startswith(PARAM):
                self._offer(cls[0], method, callee)

    def _add_param(self, function: Node, param: str) -> None:
        if (function, param) not in self.params:
            self.params.add((function, param))
            self._work.append(("param", function, param))


def _private(name: str) -> bool:
    """A function or method the library keeps to itself (``Trainer._setup_amp``,
    ``_enable``; not ``__init__``): its users never call it, so when the project does
    not either, it is dead code, not a switch."""
    return any(is_private_name(part) for part in name.split("."))


def _named_by(callee: str, target: Node) -> bool:
    """Whether a call may run ``target`` for setting a policy. Building an object may run
    any of its methods later, but a private one (``Trainer._setup_amp``) runs only where
    something names it (``self._setup_amp()``), and that caller's own sets carry it: a
    class that only defines it sets nothing when built."""
    method = target[1].rsplit(".", 1)[-1]
    return not _private(method) or callee.rsplit(".", 1)[-1].endswith(method)
