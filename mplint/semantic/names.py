"""Canonical names for every spelling of a TensorFlow/Keras API.

Rules compare canonical names only, never raw text. A name is resolved from the
file's own import statements (an alias table built while the file is walked),
not with libcst's QualifiedNameProvider, which costs about nine parses per file.

Canonical form:
- Keras APIs start with ``keras.`` whatever package they came from
  (``tf.keras``, ``tensorflow.python.keras``, ``tf_keras``, ``keras.api._v2.keras``);
  the package itself is kept apart as the *origin* (see :func:`keras_origin`).
- Other TensorFlow APIs start with ``tensorflow.``.
- Exact synonyms (``keras.config.set_dtype_policy`` and
  ``keras.mixed_precision.set_global_policy``) map to one name.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Callable, Dict, FrozenSet, Iterable, Iterator, List, Optional, Set, Tuple

import libcst as cst

from mplint.semantic.injected_modules import injected_globals, injected_submodules, unpacked_names

# Prefix rewrites, longest first. Each maps a package path to the canonical prefix.
# TensorFlow's public aliases of Keras modules are among them: ``tf.optimizers`` is
# ``tf.keras.optimizers`` (one API under two names), and so are ``tf.losses``,
# ``tf.metrics`` and ``tf.initializers`` (TF1's ``tf.compat.v1.losses`` is not).
_PREFIXES: Tuple[Tuple[str, str], ...] = (
    ("tensorflow.compat.v2.optimizers", "keras.optimizers"),
    ("tensorflow.compat.v2.initializers", "keras.initializers"),
    ("tensorflow.compat.v2.losses", "keras.losses"),
    ("tensorflow.compat.v2.metrics", "keras.metrics"),
    ("tensorflow.compat.v1.keras", "keras"),
    ("tensorflow.compat.v2.keras", "keras"),
    ("tensorflow.python.keras", "keras"),
    ("tensorflow.compat.v2", "tensorflow"),
    ("tensorflow.keras", "keras"),
    ("tensorflow.optimizers", "keras.optimizers"),
    ("tensorflow.initializers", "keras.initializers"),
    ("tensorflow.losses", "keras.losses"),
    ("tensorflow.metrics", "keras.metrics"),
    ("keras.api._v2.keras", "keras"),
    ("keras._tf_keras.keras", "keras"),
    ("keras.api.keras", "keras"),
    # Keras 3's public API package, which ``keras`` itself re-exports (``from keras.api
    # import mixed_precision``): keras/api/mixed_precision/__init__.py
    ("keras.api", "keras"),
    ("tf_keras.keras", "keras"),
    ("tf_keras", "keras"),
    ("keras.src", "keras"),
    # Keras 2's backend module hands on the TensorFlow it imports (``K.tf.float32``)
    ("keras.backend.tf", "tensorflow"),
)

# Exact synonyms: the same object under several public names.
_SYNONYMS: Dict[str, str] = {
    "keras.models.Model": "keras.Model",
    "keras.models.Sequential": "keras.Sequential",
    "keras.engine.training.Model": "keras.Model",
    "keras.engine.sequential.Sequential": "keras.Sequential",
    "keras.engine.functional.Functional": "keras.Model",
    "keras.layers.Layer": "keras.layers.Layer",
    "keras.engine.base_layer.Layer": "keras.layers.Layer",
    "keras.Layer": "keras.layers.Layer",
    "keras.engine.input_layer.Input": "keras.Input",
    "keras.layers.Input": "keras.Input",
    "keras.config.set_dtype_policy": "keras.mixed_precision.set_global_policy",
    "keras.mixed_precision.set_dtype_policy": "keras.mixed_precision.set_global_policy",
    "keras.config.dtype_policy": "keras.mixed_precision.global_policy",
    "keras.mixed_precision.dtype_policy": "keras.mixed_precision.global_policy",
    "keras.mixed_precision.DTypePolicy": "keras.mixed_precision.Policy",
    "keras.DTypePolicy": "keras.mixed_precision.Policy",
    "keras.FloatDTypePolicy": "keras.mixed_precision.Policy",
    "keras.dtype_policies.DTypePolicy": "keras.mixed_precision.Policy",
    "keras.dtype_policies.FloatDTypePolicy": "keras.mixed_precision.Policy",
    "keras.mixed_precision.policy.Policy": "keras.mixed_precision.Policy",
    "keras.optimizers.LossScaleOptimizer": "keras.mixed_precision.LossScaleOptimizer",
    "keras.mixed_precision.loss_scale_optimizer.LossScaleOptimizer":
        "keras.mixed_precision.LossScaleOptimizer",
    "tensorflow.math.softmax": "tensorflow.nn.softmax",
    "tensorflow.dtypes.float16": "tensorflow.float16",
    "tensorflow.dtypes.float32": "tensorflow.float32",
    "tensorflow.dtypes.bfloat16": "tensorflow.bfloat16",
    "tensorflow.dtypes.cast": "tensorflow.cast",
    "keras.ops.nn.softmax": "keras.ops.softmax",
    "keras.backend.set_floatx": "keras.config.set_floatx",
    "keras.backend.floatx": "keras.config.floatx",
}

# Keras 2 kept layer classes in submodules (keras.layers.core.Dense); fold them.
_LAYER_SUBMODULE_PREFIX = "keras.layers."


def canonical(dotted: str) -> str:
    """Return the canonical spelling of a fully qualified dotted name."""
    for prefix, repl in _PREFIXES:
        if dotted == prefix or dotted.startswith(prefix + "."):
            dotted = repl + dotted[len(prefix):]
            break
    if dotted.startswith(_LAYER_SUBMODULE_PREFIX):
        parts = dotted.split(".")
        # keras.layers.core.dense.Dense -> keras.layers.Dense
        if len(parts) > 3 and parts[-1][:1].isupper() and all(
            p[:1].islower() for p in parts[2:-1]
        ) and parts[2] != "experimental":
            dotted = "keras.layers." + parts[-1]
    return _SYNONYMS.get(dotted, dotted)


def keras_origin(dotted: str) -> Optional[str]:
    """Which Keras package a fully qualified name comes from.

    ``"tf_keras"`` for the standalone Keras 2 package, ``"keras"`` for ``keras``
    and ``tf.keras`` (both are the same package's global state under TF >= 2.16),
    None when the name is not a Keras name. Rules that care about split global
    state (MP406) compare origins.
    """
    if dotted == "tf_keras" or dotted.startswith("tf_keras."):
        return "tf_keras"
    if canonical(dotted).startswith("keras.") or canonical(dotted) == "keras":
        return "keras"
    return None


def keras_package(dotted: str) -> Optional[str]:
    """Which package object a Keras name is read through: finer than :func:`keras_origin`.

    ``"tf_keras"``, ``"tf.keras"`` (read through TensorFlow: Keras 3 under TF >= 2.16,
    Keras 2 before, tf_keras with TF_USE_LEGACY_KERAS=1) or ``"keras"``; None for
    non-Keras names.
    """
    origin = keras_origin(dotted)
    if origin == "keras" and dotted.startswith("tensorflow."):
        return "tf.keras"
    return origin


def separate_policies(a: str, b: str) -> bool:
    """Whether two Keras packages (:func:`keras_package`) keep separate global policies under
    every TensorFlow version: ``keras`` and ``tf_keras`` (reference, section 3). ``tf.keras``
    and ``tf_keras`` are one package under TF <= 2.15 or ``TF_USE_LEGACY_KERAS=1``, so only
    a known Keras 3 target parts them (MP406 asks that itself)."""
    return {a, b} == {"keras", "tf_keras"}


def dotted_name(node: cst.BaseExpression) -> Optional[str]:
    """``a.b.c`` for a Name/Attribute chain, else None."""
    parts: List[str] = []
    while isinstance(node, cst.Attribute):
        parts.append(node.attr.value)
        node = node.value
    if isinstance(node, cst.Name):
        parts.append(node.value)
        return ".".join(reversed(parts))
    return None


def string_key(subscript: cst.Subscript) -> Optional[str]:
    """The key of ``value["key"]`` when written as one string, else None."""
    if len(subscript.slice) != 1 or not isinstance(subscript.slice[0].slice, cst.Index):
        return None
    index = subscript.slice[0].slice.value
    value = index.evaluated_value if isinstance(index, cst.SimpleString) else None
    return value if isinstance(value, str) else None


def _module_path(node: cst.BaseExpression) -> str:
    name = dotted_name(node)
    return name or ""


_NOTHING: FrozenSet[str] = frozenset()


class AliasScope:
    """The import aliases visible in one scope: local name -> qualified names."""

    __slots__ = ("aliases",)

    def __init__(self) -> None:
        self.aliases: Dict[str, Set[str]] = {}

    def add(self, local: str, qualified: str) -> None:
        self.aliases.setdefault(local, set()).add(qualified)

    def add_import(self, node: cst.BaseSmallStatement, package: Optional[str] = None) -> None:
        """Record the names bound by an ``import``/``from ... import`` statement."""
        if isinstance(node, cst.Import):
            for alias in node.names:
                full = _module_path(alias.name)
                if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                    self.add(alias.asname.name.value, full)
                else:
                    # `import tensorflow.keras` binds `tensorflow`
                    head = full.split(".", 1)[0]
                    self.add(head, head)
        elif isinstance(node, cst.ImportFrom):
            if node.relative:  # relative imports are the project's own code
                return
            module = _module_path(node.module) if node.module is not None else ""
            if not module:
                return
            for local, name in _from_import_names(node):
                self.add(local, module + "." + name)


class NameResolver:
    """Resolves expressions to canonical API names through a stack of scopes."""

    def __init__(self) -> None:
        self.scopes: List[AliasScope] = [AliasScope()]
        #: module-level ``from .mod import name [as local]``: (local, ``.mod.name``)
        self.relative_imports: List[Tuple[str, str]] = []
        self._cache: Dict[Tuple[int, str], FrozenSet[str]] = {}
        self._by_node: Dict[int, Tuple[cst.BaseExpression, FrozenSet[str]]] = {}
        #: the absolute names of the project functions a module-level name calls
        #: (``f`` of ``from ..pkg import f`` -> ``pkg.f``), and what a project module
        #: hands on by name (see :meth:`adopt_reexports`)
        self._functions: Dict[str, Set[str]] = {}
        self._handed: Optional[Callable[[str], FrozenSet[str]]] = None

    def _forget(self) -> None:
        self._cache.clear()
        self._by_node.clear()

    @property
    def module_scope(self) -> AliasScope:
        return self.scopes[0]

    def push(self) -> None:
        self.scopes.append(AliasScope())

    def pop(self) -> None:
        """Leave a scope. The answers kept per node stay: a node of the scope left keeps
        the meaning its scope's imports gave it, when a later reader asks again."""
        self.scopes.pop()
        self._cache.clear()

    def snapshot(self) -> Tuple[AliasScope, ...]:
        """The scopes visible here, for :meth:`within` once the walk has left them."""
        return tuple(self.scopes)

    @contextmanager
    def within(self, scopes: Tuple[AliasScope, ...]) -> Iterator[None]:
        """Resolve as where :meth:`snapshot` was taken: a value read again at the end of
        the module sees the imports its function made (``from tensorflow.keras import
        mixed_precision`` inside ``def setup():``)."""
        if not scopes or list(scopes) == self.scopes:
            yield
            return
        saved, self.scopes = self.scopes, list(scopes)
        self._forget()
        try:
            yield
        finally:
            self.scopes = saved
            self._forget()

    def add_import(self, node: cst.BaseSmallStatement) -> None:
        self.scopes[-1].add_import(node)
        self._forget()

    def adopt_reexports(self, meanings: Callable[[str], FrozenSet[str]], absolute: Callable[[str], str],
                        own: Iterable[str] = ()) -> None:
        """``from pkg import tf`` (``from . import tf``) where the project's ``pkg`` binds
        ``tf`` by importing TensorFlow (:mod:`mplint.run.reexports`): ``tf`` names
        ``tensorflow`` here. ``meanings`` answers for a name, ``absolute`` makes a
        relative module name absolute; ``own``: the module's own names, for the modules
        its functions return (:meth:`returned`)."""
        scope = self.module_scope
        self._handed = meanings
        for local, targets in scope.aliases.items():
            self._functions.setdefault(local, set()).update(targets)
        for local, relative in self.relative_imports:
            self._functions.setdefault(local, set()).add(absolute(relative))
        self._own_module = next(iter(own), None)
        for local, targets in scope.aliases.items():
            handed = {target: meanings(target) for target in targets}
            if any(handed.values()):
                scope.aliases[local] = {meaning for target in targets for meaning in handed[target] or {target}}
        for local, relative in self.relative_imports:
            for meaning in meanings(absolute(relative)):
                scope.add(local, meaning)
        self._forget()

    _own_module: Optional[str] = None

    def returned(self, call: cst.BaseExpression, slot: str) -> FrozenSet[str]:
        """The TensorFlow or Keras modules a call of a project function returns (in
        ``slot``: ``()`` for the value, ``()#i`` for a returned tuple's i-th item), as
        :mod:`mplint.run.module_returns` recorded them; empty when unknown."""
        if self._handed is None or not isinstance(call, cst.Call) or not isinstance(call.func, cst.Name):
            return _NOTHING
        name = call.func.value
        if any(name in scope.aliases for scope in self.scopes[1:]):
            return _NOTHING  # a local name of that spelling hides the function
        functions = self._functions.get(name)
        if functions is None and self._own_module is not None and name not in self.module_scope.aliases:
            functions = {f"{self._own_module}.{name}"}
        if not functions:
            return _NOTHING
        answers = [self._handed(f"{function}{slot}") for function in functions]
        if not all(answers):
            return _NOTHING  # one candidate not followed: unknown
        return frozenset(meaning for answer in answers for meaning in answer)

    def forget_alias(self, local: str) -> None:
        """A function's name rebound to something else: it no longer names an API."""
        if len(self.scopes) > 1 and self.scopes[-1].aliases.pop(local, None) is not None:
            self._forget()

    def add_alias(self, local: str, qualified: Iterable[str]) -> None:
        """``Dense = tf.keras.layers.Dense``: a plain assignment that names an API."""
        for q in qualified:
            self.scopes[-1].add(local, q)
        self._forget()

    def qualified(self, node: cst.BaseExpression) -> FrozenSet[str]:
        """Fully qualified (not yet canonical) names the expression may denote."""
        dotted = dotted_name(node)
        if dotted is None:
            return frozenset()
        head, _, rest = dotted.partition(".")
        for scope in reversed(self.scopes):
            targets = scope.aliases.get(head)
            if targets:
                return frozenset(t + "." + rest if rest else t for t in targets)
        return frozenset()

    def _bound(self, node: cst.BaseExpression) -> bool:
        """Whether the chain's head is an imported name at all (most names are not)."""
        while isinstance(node, cst.Attribute):
            node = node.value
        if not isinstance(node, cst.Name):
            return False
        head = node.value
        return any(head in scope.aliases for scope in self.scopes)

    def resolve(self, node: cst.BaseExpression) -> FrozenSet[str]:
        """Canonical names the expression may denote (empty when unknown).

        Every check asks about the same nodes (each ``Call.func``), so answers are
        kept per node until the scopes change; the entry holds the node, so its id
        cannot be reused by another while cached.
        """
        entry = self._by_node.get(id(node))
        if entry is not None and entry[0] is node:
            return entry[1]
        hit = _NOTHING
        if self._bound(node):
            dotted = dotted_name(node)
            if dotted is not None:
                key = (len(self.scopes), dotted)
                found = self._cache.get(key)
                if found is None:
                    found = frozenset(canonical(q) for q in self.qualified(node))
                    self._cache[key] = found
                hit = found
        self._by_node[id(node)] = (node, hit)
        return hit

    def imported_package(self, packages: Iterable[str]) -> Optional[str]:
        """One of ``packages`` that the module imports (itself or a module in it)."""
        for targets in self.module_scope.aliases.values():
            for target in targets:
                head = target.split(".", 1)[0]
                if head in packages:
                    return head
        return None

    def module_alias(self, qualified: str) -> Optional[str]:
        """A module-level local name bound to exactly ``qualified`` (``tf`` for
        ``tensorflow``), for fixes that must spell an API; None when there is none."""
        for local, targets in sorted(self.module_scope.aliases.items()):
            if targets == {qualified}:
                return local
        return None

    def origins(self, node: cst.BaseExpression) -> FrozenSet[str]:
        """Keras packages (``keras``/``tf_keras``) the expression comes from."""
        return frozenset(o for o in map(keras_origin, self.qualified(node)) if o)

    def packages(self, node: cst.BaseExpression) -> FrozenSet[str]:
        """Like :meth:`origins`, telling ``tf.keras`` apart (see :func:`keras_package`)."""
        return frozenset(p for p in map(keras_package, self.qualified(node)) if p)


def collect_module_imports(module: cst.Module, resolver: NameResolver) -> None:
    """Fill the module scope from top-level imports before the walk starts.

    Looks into ``if``/``try``/``with`` blocks at module level, so both branches of a
    try/except import become candidates. Also records module-level aliases such as
    ``Dense = tf.keras.layers.Dense`` once the imports they use are known, and the
    ``layers = None`` placeholders a builder rebinds to the Keras its caller injects.
    """
    assigns: List[cst.Assign] = []
    stars: List[str] = []

    def visit_block(body: Iterable[cst.CSTNode]) -> None:
        for stmt in body:
            if isinstance(stmt, cst.SimpleStatementLine):
                for small in stmt.body:
                    if isinstance(small, (cst.Import, cst.ImportFrom)):
                        resolver.module_scope.add_import(small)
                    if isinstance(small, cst.ImportFrom) and isinstance(small.names, cst.ImportStar) \
                            and not small.relative and small.module is not None:
                        stars.append(_module_path(small.module))
                    if isinstance(small, cst.ImportFrom) and small.relative:
                        resolver.relative_imports += _relative_names(small)
                    elif isinstance(small, cst.Assign):
                        assigns.append(small)
            elif isinstance(stmt, cst.If):
                visit_block(stmt.body.body)
                orelse = stmt.orelse
                while orelse is not None:
                    visit_block(orelse.body.body)
                    orelse = getattr(orelse, "orelse", None)
            elif isinstance(stmt, cst.Try):
                visit_block(stmt.body.body)
                for handler in stmt.handlers:
                    visit_block(handler.body.body)
                if stmt.orelse is not None:
                    visit_block(stmt.orelse.body.body)
            elif isinstance(stmt, cst.With):
                visit_block(stmt.body.body)

    visit_block(module.body)
    if stars:
        _bind_star_names(module, stars, resolver)
    for assign in assigns:
        record_alias_assignment(assign, resolver)
    for local, qualified in injected_globals(module, set(resolver.module_scope.aliases)).items():
        resolver.module_scope.add(local, qualified)


def _bind_star_names(module: cst.Module, stars: List[str], resolver: NameResolver) -> None:
    """``from tensorflow.keras.layers import *``: each public name of a Keras module
    (:data:`STAR_EXPORTS`) names its API, unless the module binds that name itself
    (an import, a class, a function or an assignment at its top level)."""
    from mplint.semantic.star_exports import STAR_EXPORTS

    own = _top_level_names(module) | set(resolver.module_scope.aliases)
    own.update(local for local, _ in resolver.relative_imports)
    for star in stars:
        for name in STAR_EXPORTS.get(canonical(star), ()):
            if name not in own:
                resolver.module_scope.add(name, f"{star}.{name}")


def _top_level_names(module: cst.Module) -> Set[str]:
    """Names a module binds at its top level by ``def``, ``class`` or assignment."""
    names: Set[str] = set()
    for stmt in module.body:
        if isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
            names.add(stmt.name.value)
        elif isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                targets: List[cst.BaseExpression] = []
                if isinstance(small, cst.Assign):
                    targets = [t.target for t in small.targets]
                elif isinstance(small, (cst.AnnAssign, cst.AugAssign)):
                    targets = [small.target]
                for target in targets:
                    for node in [target, *getattr(target, "elements", [])]:
                        node = getattr(node, "value", node) if isinstance(node, cst.Element) else node
                        if isinstance(node, cst.Name):
                            names.add(node.value)
    return names


def _from_import_names(node: cst.ImportFrom) -> List[Tuple[str, str]]:
    """(local, name) for each name ``from mod import name [as local]`` binds (none for ``*``)."""
    if isinstance(node.names, cst.ImportStar):
        return []
    out = []
    for alias in node.names:
        name = _module_path(alias.name)
        local = alias.asname.name.value if alias.asname is not None and isinstance(alias.asname.name, cst.Name) \
            else name
        out.append((local, name))
    return out


def _relative_names(node: cst.ImportFrom) -> List[Tuple[str, str]]:
    """(local, ``.mod.name``) for each name ``from .mod import name [as local]`` binds."""
    base = "." * len(node.relative) + (_module_path(node.module) if node.module is not None else "")
    return [(local, base + name if base.endswith(".") else f"{base}.{name}")
            for local, name in _from_import_names(node)]


def record_alias_assignment(node: cst.Assign, resolver: NameResolver) -> None:
    """Treat ``L = tf.keras.layers`` like ``from tensorflow.keras import layers as L``,
    and ``backend, layers = get_submodules(kwargs)`` alike where the project function
    returns those modules (:meth:`NameResolver.returned`) or the call is keras_applications'
    protocol (:mod:`mplint.semantic.injected_modules`). In a function, a name rebound
    to anything else stops being an alias."""
    if len(node.targets) != 1:
        return
    target = node.targets[0].target
    if isinstance(target, (cst.Tuple, cst.List)) and isinstance(node.value, cst.Call):
        names = unpacked_names(target)
        if names is not None:
            returned = [resolver.returned(node.value, f"()#{index}") for index in range(len(names))]
            injected = injected_submodules(node.value, len(names)) if not any(returned) else None
            for index, name in enumerate(names):
                _bind_alias(name, frozenset({injected[index]}) if injected else returned[index], resolver)
        return
    if not isinstance(target, cst.Name):
        return
    if isinstance(node.value, cst.Call):
        _bind_alias(target.value, resolver.returned(node.value, "()"), resolver)
        return
    qualified = resolver.qualified(node.value) if isinstance(node.value, (cst.Attribute, cst.Name)) else _NOTHING
    _bind_alias(target.value, qualified, resolver)


def _bind_alias(local: str, qualified: FrozenSet[str], resolver: NameResolver) -> None:
    if qualified and any(q.split(".", 1)[0] in _API_ROOTS for q in qualified):
        resolver.add_alias(local, qualified)
    else:
        resolver.forget_alias(local)


_API_ROOTS = frozenset({"tensorflow", "keras", "tf_keras", "numpy", "tensorflow_probability"})


def self_attribute(node: cst.BaseExpression) -> Optional[str]:
    """``x`` of ``self.x`` (an instance attribute read or written in a method), else None."""
    if isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name) and node.value.value == "self":
        return node.attr.value
    return None

