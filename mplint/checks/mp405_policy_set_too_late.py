"""MP405: the global policy is set after layers or models were created in the same scope.

A layer's dtype policy is fixed when it is constructed, and a model's too; compile()
wraps the optimizer in a LossScaleOptimizer only if the model's own policy was
mixed_float16 when it was built (reference, section 3). So a mixed policy set after
``model = build_model()`` does nothing for that model. Only objects still *used*
after the policy call count (trained, called, compiled, added to a model): a float32
teacher loaded before the policy and only asked to predict is left alone.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import FrozenSet, List, Optional, Set, Tuple

import libcst as cst

from mplint.analysis.model_builders import ModelBuilders, imported_builder
from mplint.analysis.policy_helpers import helper_sets
from mplint.analysis.references import References
from mplint.rule.check import Check, Needs
from mplint.semantic.names import dotted_name, self_attribute
from mplint.semantic.scopes import Binding, Location, Scope
from mplint.semantic.vocabulary import MIXED_POLICIES

#: packages whose classes are known: Keras ones are judged by _creates, others are not Keras
_KNOWN_PACKAGES = frozenset({"keras", "tensorflow", "tf_keras", "numpy", "sklearn", "torch", "jax"})
#: attributes only Keras layers and models have (``fit`` is scikit-learn's too)
_KERAS_ONLY = frozenset({"compile", "trainable_weights", "non_trainable_weights", "get_layer"})
#: attributes that show a received object is a model whose variables were already made
#: (``trainable_variables`` is a tf.Module's too: the policy does not reach one either)
_BUILT_MODEL = _KERAS_ONLY | {"trainable_variables", "losses", "layers"}
#: uses that do not depend on the policy the object was built with
_READ_ONLY = frozenset({
    "predict", "predict_on_batch", "evaluate", "test_on_batch", "summary", "save",
    "save_weights", "export", "to_json", "get_config", "count_params", "get_weights",
    "name", "dtype_policy", "dtype", "compute_dtype", "variable_dtype",
})


@dataclass
class _Setting:
    """Where the policy is set: a policy call, or a call of a project helper that always
    sets it (``enable_mixed_precision()``, named by ``helper``)."""

    node: cst.Call
    values: Optional[FrozenSet[str]]
    location: Location
    helper: Optional[str] = None


@dataclass
class _Creation:
    name: str
    binding: Binding
    what: str


@dataclass
class _AttributeCreation:
    """``self.model = self.build()`` in a method: an instance attribute holding a model."""

    attribute: str
    location: Location
    what: str


class PolicySetTooLate(Check):
    rule_id = "MP405"
    requires = (References, ModelBuilders)

    #: reported at a policy call in the file, or at a call of a project helper that sets
    #: one (the file then shares a program with the helper's mixed policy)
    needs = Needs(policy_call=True, mixed_policy=True)

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self._functions: List[cst.FunctionDef] = []
        self._assigns: List[cst.Assign] = []
        self._attribute_creations: List[_AttributeCreation] = []
        #: ``self.x.attr`` (attr "()" for ``self.x(...)``): (x, attr, where)
        self._attribute_uses: List[Tuple[str, str, Location]] = []
        #: ``from models import model`` at the top level: (name, where); a module other
        #: than a known package's, whose top level ran when imported
        self._imported_objects: List[Tuple[str, str, Location]] = []
        #: calls made as statements (``enable_mixed_precision()``): a helper may set the policy
        self._statement_calls: List[Tuple[cst.Call, Location]] = []

    # -- which functions build models ------------------------------------------------
    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._functions.append(node)

    def leave_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._functions.pop()

    def visit_Call(self, node: cst.Call) -> None:
        attribute = self_attribute(node.func)
        if attribute is not None:
            self._attribute_uses.append((attribute, "()", self.ctx.scopes.location()))

    def visit_Expr(self, node: cst.Expr) -> None:
        if isinstance(node.value, cst.Call) and isinstance(node.value.func, (cst.Name, cst.Attribute)) \
                and self_attribute(node.value.func) is None:
            self._statement_calls.append((node.value, self.ctx.scopes.location()))

    def visit_Attribute(self, node: cst.Attribute) -> None:
        attribute = self_attribute(node.value)
        if attribute is not None:
            self._attribute_uses.append((attribute, node.attr.value, self.ctx.scopes.location()))

    def _creates(self, call: cst.Call) -> Optional[str]:
        return self.ctx.get(ModelBuilders).creates(call)

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        if node.relative or isinstance(node.names, cst.ImportStar) or node.module is None:
            return
        module = dotted_name(node.module)
        location = self.ctx.scopes.location()
        if not module or module.split(".", 1)[0] in _KNOWN_PACKAGES or location.scope.kind != "module":
            return
        for alias in node.names:
            bound = alias.asname.name if alias.asname is not None else alias.name
            if isinstance(bound, cst.Name) and bound.value[:1].islower():
                self._imported_objects.append((bound.value, module, location))

    # -- bindings -----------------------------------------------------------------------
    def visit_Assign(self, node: cst.Assign) -> None:
        if isinstance(node.value, cst.Call) and len(node.targets) == 1 \
                and isinstance(node.targets[0].target, cst.Name):
            self._assigns.append(node)
        attribute = self_attribute(node.targets[0].target) if len(node.targets) == 1 else None
        if attribute is not None and isinstance(node.value, cst.Call) and self._functions:
            location = self.ctx.scopes.location()
            what = self._creates(node.value) or self._method_builder(node.value, location)
            if what is not None:
                self._attribute_creations.append(_AttributeCreation(attribute, location, what))

    def _method_builder(self, call: cst.Call, location: Location) -> Optional[str]:
        """``self.build()`` where ``build`` is a method of the class that builds layers or models."""
        method = self_attribute(call.func)
        owner = location.scope.enclosing_class()
        found = owner.lookup(method) if owner is not None and method is not None else None
        if found is not None and found.kind == "def" and id(found.node) in self.ctx.get(ModelBuilders).builders:
            return f"built by self.{method}()"
        return None

    # -- decide ---------------------------------------------------------------------------
    def finish(self) -> None:
        self._settings = [_Setting(c.node, c.values, c.location) for c in self.facts.policy_calls]
        if self._assigns or self._imported_objects or self._attribute_creations:
            self._settings += self._helper_settings()
        if not any(c.values and c.values & MIXED_POLICIES for c in self._settings):
            return
        creations = self._creations()
        for call in self._settings:
            if not call.values or not call.values & MIXED_POLICIES:
                continue
            scope, order = call.location.scope, call.location.order
            if any(other.location.scope is scope and other.location.order < order
                   for other in self._settings):
                # An earlier policy call in this scope governs what was built after it
                # (a float32 head built on purpose between two calls is deliberate).
                continue
            late = [f"`{c.name}` ({c.what}) was created in this scope" for c in creations
                    if c.binding.scope is scope and c.binding.order < order and self._used_after(c, scope, order)]
            late += [f"`self.{c.attribute}` ({c.what}) was created in this scope"
                     for c in self._attribute_creations
                     if c.location.scope is scope and c.location.order < order
                     and self._attribute_used_after(c.attribute, scope, order)]
            late += [f"`{name}` (a Keras model built at the top level of {module} when it was imported) "
                      "was created in this scope"
                     for name, module, where in self._imported_objects
                     if where.scope is scope and where.order < order and self._keras_object_used_after(name, scope, order)]
            if call.helper is None and not self._set_at_construction(scope, call.values):
                late += [f"`{name}`, a model this function receives as an argument, was built by its caller"
                         for name in self._received_models(scope)]
            if late:
                what = "the policy is set" if call.helper is None else \
                    f"{call.helper}() sets the policy ({'/'.join(sorted(call.values))})"
                self.report(
                    call.node,
                    f"{what} after {late[0]} and is still used: it keeps the old policy "
                    f"(float32), and compile() adds no loss scaling for it; set the policy before building anything",
                )

    def _helper_settings(self) -> List[_Setting]:
        """Calls made as statements of a project helper that always sets a mixed policy
        (:mod:`analysis.policy_helpers`)."""
        out = []
        for call, location in self._statement_calls:
            found = helper_sets(self.ctx, call, location)
            if found is not None:
                out.append(_Setting(call, found[0], location, found[1]))
        return out

    def _set_at_construction(self, scope: Scope, values: FrozenSet[str]) -> bool:
        """A method of a class whose construction sets the same policy first (``__init__``
        calling ``self.enable_mixed_precision()``, directly or through other methods): a
        caller holding the instance built the model it hands this method under it, so
        setting it again here changes nothing for that model."""
        owner = scope.enclosing_class()
        if owner is None or not isinstance(scope.node, cst.FunctionDef) or scope.parent is not owner:
            return False
        methods = {child.node.name.value: child for child in owner.children
                   if child.kind == "function" and isinstance(child.node, cst.FunctionDef)}
        init = methods.get("__init__")
        if init is None or init is scope:
            return False
        run: Set[int] = set()
        todo = [init]
        while todo:
            current = todo.pop()
            if id(current) in run:
                continue
            run.add(id(current))
            for key, sites in self.ctx.scopes.calls.items():
                method = key[len("self."):] if key.startswith("self.") else None
                if method in methods and method is not None and methods[method] is not scope \
                        and any(where.scope is current for _, where in sites):
                    todo.append(methods[method])
        return any(other.values == values and id(other.location.scope) in run
                   for other in self.facts.policy_calls)

    def _received_models(self, scope: Scope) -> List[str]:
        """Parameters of the function setting the policy that hold a built model: read as
        one (``model.trainable_variables``, ``model.compile``) in the function, or kept as
        ``self.model = model`` and read as one by a method of the class (a trainer whose
        constructor turns mixed precision on for the model it is handed)."""
        if scope.kind != "function":
            return []
        found = []
        for name, bindings in scope.bindings.items():
            param = next((b for b in bindings if b.kind == "param"), None)
            if param is None or name in ("self", "cls"):
                continue
            if any(use.attr in _BUILT_MODEL and not use.store and use.location.scope is scope
                   and use.location.lookup(name) is param for use in self.ctx.get(References).get(name)):
                found.append(name)
                continue
            owner = scope.enclosing_class()
            kept = {attribute for attribute, stored in (owner.attributes.items() if owner is not None else ())
                    for b in stored if b.scope is scope and isinstance(b.value, cst.Name) and b.value.value == name
                    and b.location().lookup(name) is param}
            if owner is not None and any(
                    attribute in kept and attr in _BUILT_MODEL and where.scope.enclosing_class() is owner
                    for attribute, attr, where in self._attribute_uses):
                found.append(name)
        return found

    def _creations(self) -> List[_Creation]:
        self._by_node = {id(b.node): b for scope in self.ctx.scopes.all_scopes()
                         for bindings in scope.bindings.values() for b in bindings}
        out = []
        for node in self._assigns:
            call = node.value
            assert isinstance(call, cst.Call)
            name = node.targets[0].target.value  # type: ignore[attr-defined]
            binding = self._binding_of(node, name)
            if binding is None:
                continue
            what = self._creates(call) or self._local_builder(call, node) or self._keras_by_use(call, binding)
            if what is not None:
                out.append(_Creation(name, binding, what))
        return out

    def _keras_by_use(self, call: cst.Call, binding: Binding) -> Optional[str]:
        """``model = MyNet()`` of a class from elsewhere (the project's own model
        module), known to be Keras by what is done with it: ``compile()``, or its
        ``trainable_weights``, which only Keras layers and models have."""
        name = dotted_name(call.func)
        if not name or not name.rsplit(".", 1)[-1][:1].isupper() \
                or any(n.split(".", 1)[0] in _KNOWN_PACKAGES for n in self.names.resolve(call.func)):
            return None  # not a class, or a known API (Keras: _creates; the rest: not Keras)
        for use in self.ctx.get(References).get(binding.name):
            if use.attr in _KERAS_ONLY and not use.store and use.location.lookup(binding.name) is binding:
                return f"a Keras model: it has {use.attr}"
        return None

    def _local_builder(self, call: cst.Call, assign: cst.Assign) -> Optional[str]:
        """``model = build_model()`` where ``build_model`` is defined in this file, or in
        another module of the project (``from model_zoo import build_model``)."""
        if not isinstance(call.func, (cst.Name, cst.Attribute)):
            return None
        binding = self._binding_of(assign, assign.targets[0].target.value)  # type: ignore[attr-defined]
        if binding is None or binding.scope is None:
            return None
        if isinstance(call.func, cst.Name):
            found = binding.scope.lookup(call.func.value, binding.order)
            if found is not None and found.kind == "def" and id(found.node) in self.ctx.get(ModelBuilders).builders:
                return f"built by {call.func.value}()"
            if found is not None:
                return None  # a name bound here to something else (imports bind none)
        if not any(c.location.scope is binding.scope and binding.order < c.location.order
                   for c in self._settings):
            return None  # no policy set after it here: another module is not worth reading
        if imported_builder(self.ctx, call.func) is not None:
            return f"built by {self.ctx.module.code_for_node(call.func)}(), which builds Keras layers in its module"
        return None

    def _binding_of(self, node: cst.Assign, name: str) -> Optional[Binding]:
        binding = self._by_node.get(id(node))
        return binding if binding is not None and binding.name == name else None

    def _keras_object_used_after(self, name: str, scope, order: int) -> bool:
        """``model.compile()`` after the policy call, on an object imported before it
        (``from models import model``, built at that module's top level): only a Keras
        model has ``compile``/``trainable_weights``, and it kept the policy in effect when
        its module ran. A name assigned again in this file is another object."""
        uses = self.ctx.get(References).get(name)
        if any(use.store for use in uses):
            return False
        return any(use.attr in _KERAS_ONLY and use.location.scope is scope and use.location.order > order
                   and use.location.lookup(name) is None for use in uses)

    def _attribute_used_after(self, attribute: str, scope, order: int) -> bool:
        """``self.model.fit()``, ``self.model(x)`` later in the same method (an attribute
        set again in between is a new object: not followed, so not counted)."""
        for name, attr, where in self._attribute_uses:
            if name == attribute and where.scope is scope and where.order > order and attr not in _READ_ONLY:
                return not any(c.attribute == attribute and c.location.scope is scope
                               and order < c.location.order <= where.order for c in self._attribute_creations)
        return False

    def _used_after(self, creation: _Creation, scope, order: int) -> bool:
        for use in self.ctx.get(References).get(creation.name):
            if use.store or use.location.scope is not scope or use.location.order <= order:
                continue
            if use.attr in _READ_ONLY:
                continue
            if use.location.lookup(creation.name) is creation.binding:
                return True
        return False
