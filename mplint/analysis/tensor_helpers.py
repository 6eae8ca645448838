"""The functions and methods of one file that the tensor dtype inference follows
calls into: which a call runs, the kinds its arguments give their parameters, what
each returns, and which run under autocast because 16-bit code calls them."""

from __future__ import annotations

from typing import TYPE_CHECKING, Dict, FrozenSet, List, Optional, Set, Tuple, cast

import libcst as cst

from mplint.analysis.compute_regions import Region
from mplint.analysis.dtype_kinds import F32, LOW
from mplint.analysis.tensor_calls import NOT_CALLED_FROM_CALL, resize_method
from mplint.analysis.tensor_callers import foreign_contexts, functional_caller
from mplint.analysis.tensor_sites import MAX_DEPTH, Env, ForeignContext, Where
from mplint.analysis.tensor_syntax import child_scope, decorated, is_none, is_self
from mplint.analysis.tensor_containers import LayerContainers
from mplint.analysis.uncalled import never_called
from mplint.rule.check import Context
from mplint.semantic.call_args import UNREADABLE, argument_for
from mplint.semantic.public_reach import public_reach
from mplint.semantic.scopes import Location, Scope
from mplint.semantic.test_modules import is_test_path
from mplint.semantic.vocabulary import NEAREST_RESIZE_METHODS, RESIZING_LAYERS, SEQUENTIAL_CLASSES, is_classifier_application

if TYPE_CHECKING:
    from mplint.analysis.tensor_kinds import TensorKinds
    from mplint.semantic.facts import ModuleFacts, PolicyState

#: what :meth:`FileCalls.called_layer` answers for a layer whose output kind is unknown
#: (one that does not compute in 16 bits, or whose constructions disagree)
UNKNOWN_OUTPUT = "unknown"
#: how many calls up the file's callers of a helper are followed for its arguments'
#: kinds (a bounded call string: each level multiplies the envs judged)
CALL_STRING_DEPTH = 3


def _function_of(scope: Scope) -> Scope:
    """The function a place belongs to (itself for a function, the module at top level)."""
    while scope.kind != "function" and scope.parent is not None:
        scope = scope.parent
    return scope


class FileCalls(LayerContainers):
    """Calls into the file's own helpers, methods and layers (see the module)."""

    def __init__(self, ctx: Context) -> None:
        super().__init__(ctx)
        #: :meth:`policy_reaching`'s answers by (id of the facts, id of the scope): each
        #: rule asks it of every site (MP501 twice), most sites share a few scopes
        self._reaching: Dict[Tuple[int, int], "Optional[PolicyState]"] = {}

    def region(self, loc: Location) -> Optional[Region]:
        """The 16-bit region of a location (cached per scope for function regions); a
        lambda mapped over a tuple runs where ``map`` is called."""
        mapped = self._maps.get(id(loc.scope.node)) if loc.scope.kind == "lambda" else None
        if mapped is not None:
            return self.region(mapped[1].loc)
        if not self.arms_run(loc):
            return None  # an arm no run takes (``if self.mode == "max":``, every caller passes "mean")
        key = id(loc.scope)
        if key not in self._regions:
            self._regions[key] = None  # cycle guard: helpers calling each other
            found = self.regions.function_region(loc.scope) or self._called_from_call(loc.scope, set())
            self._regions[key] = found or self._called_from_region(loc.scope) or self._called_from_functional(loc.scope)
        found = self._regions[key]
        if found is not None:
            return found
        return Region("functional", None) if self.regions.in_functional(loc) else None

    def _from_call(self, scope: Scope) -> Optional[Region]:
        """The layer region of a ``call`` method (or code nested in one)."""
        found = self.regions.function_region(scope)
        if found is None or found.function is None or not isinstance(found.function.node, cst.FunctionDef):
            return None
        return found if found.function.node.name.value == "call" else None

    def policy_reaching(self, facts: "ModuleFacts", scope: Scope) -> "Optional[PolicyState]":
        """The mixed policy that reaches code in ``scope`` (a layer's methods run under a
        program's policy only where a program builds the layer, not where it merely
        imports the layer's module), or in a library the policies its users may set;
        None where none does, or in a library's private code that none of its public
        functions and classes runs: how that code runs is the library's own. Asked by every rule
        about a 16-bit crash or wrong result at an operation (MP501, MP502, MP504).
        None in a test module: only its tests set the policy its code runs under, on
        purpose, and a hazard there is what they exercise or makes them fail; the
        library code they call is judged in its own module. None in a private function
        nothing names (:func:`never_called`): it never runs."""
        key = (id(facts), id(scope))
        if key not in self._reaching:
            self._reaching[key] = self._policy_reaching(facts, scope)
        return self._reaching[key]

    def _policy_reaching(self, facts: "ModuleFacts", scope: Scope) -> "Optional[PolicyState]":
        if is_test_path(self.ctx.path) or never_called(self.ctx, scope):
            return None  # (a private function nothing names never runs)
        here = facts.library_policy(scope)
        if here is None or (here.library and not self._run_by_public_code(scope)):
            return None
        return here

    def _run_by_public_code(self, scope: Scope) -> bool:
        """Code of a library that its public surface runs (:func:`public_reach`), or a lambda mapped in such code, which runs there."""
        mapped = self._maps.get(id(scope.node)) if scope.kind == "lambda" else None
        if mapped is not None:
            return self._run_by_public_code(mapped[1].loc.scope)
        return public_reach(self.ctx.scopes).runs(scope)

    def _called_from_call(self, scope: Optional[Scope], seen: Set[int]) -> Optional[Region]:
        """A method of a 16-bit layer that the layer's ``call`` calls (``self.helper(x)``,
        directly or through other such methods): it runs under autocast too."""
        while scope is not None and not (scope.kind == "function" and scope.parent is not None
                                         and scope.parent.kind == "class"):
            scope = scope.parent
        if scope is None or id(scope) in seen or not isinstance(scope.node, cst.FunctionDef):
            return None
        seen.add(id(scope))
        name = scope.node.name.value
        cls = self.regions.layer_class(scope.parent.node) if scope.parent is not None else None
        if cls is None or not cls.sixteen_bit or name in NOT_CALLED_FROM_CALL:
            return None
        for caller in self._self_calls.get(name, []):
            if caller.enclosing_class() is not scope.parent:
                continue
            found = self._from_call(caller) or self._called_from_call(caller, seen)
            if found is not None and found.kind == "layer":
                return Region("layer", scope, cls)
        if self.foreign_contexts(scope):
            # an override a base class's ``call`` of another module calls (``self.mask_scores(s)``)
            return Region("layer", scope, cls)
        return None

    def _called_from_region(self, scope: Scope) -> Optional[Region]:
        """A function of this file (not a method) that 16-bit code of the file calls
        (``apply_mask(scores, mask)`` in a layer's ``call``): it runs under autocast
        there, with the arguments each such caller gives it (:meth:`contexts`)."""
        while scope.kind != "function" and scope.parent is not None:
            scope = scope.parent
        if scope.kind != "function" or (scope.parent is not None and scope.parent.kind == "class"):
            return None
        for _, where, _ in self._caller_map().get(id(scope), []):
            caller = self.region(where.loc)
            if caller is not None and caller.kind != "functional":
                return Region("helper", scope)
        if self.foreign_contexts(scope):
            return Region("helper", scope)  # another module hands it a 16-bit tensor
        return None

    def _called_from_functional(self, scope: Scope) -> Optional[Region]:
        """A function (not a layer's method) that functional model code calls, in this
        file or another module (``d1 = conv_block(d2, 64)`` between ``Input`` and
        ``Model``, or in a builder they call): a model builder, whose layers are applied
        to KerasTensors, so it is functional model code too."""
        while scope.kind != "function" and scope.parent is not None:
            scope = scope.parent
        node = scope.node
        if scope.kind != "function" or not isinstance(node, cst.FunctionDef) or node.name.value == "__init__" \
                or (scope.parent is not None and scope.parent.kind == "class"
                    and self.regions.layer_class(scope.parent.node) is not None):
            return None
        for _, where, _ in self._caller_map().get(id(scope), []):
            caller = self.region(where.loc)
            if caller is not None and caller.kind == "functional":
                return Region("functional", None)
        if self.functional_caller(scope) is not None:
            return Region("functional", None)
        return None

    def _caller_map(self) -> Dict[int, List[Tuple[cst.Call, Where, int]]]:
        """The calls of this file that may run each function scope (by id)."""
        if self._callers is None:
            self._callers = {}
            for call, where in self._calls:
                for callee, offset in self._callees(call, where):
                    self._callers.setdefault(id(callee), []).append((call, where, offset))
        return self._callers

    def helper(self, call: cst.Call, where: Where) -> Optional[Tuple[Scope, int]]:
        """The function scope a call runs when it is a function or method of this file
        (``self._split(x)``, ``window_partition(x, 7)``, a nested ``def``, a lambda bound
        once to a name), with the
        number of leading parameters the call does not pass (``self``)."""
        func = call.func
        if isinstance(func, cst.Attribute) and is_self(func.value):
            cls = where.loc.scope.enclosing_class()
            if cls is None:
                return None
            if func.attr.value not in cls.bindings:
                return self._stored_function(func, where)
            defs = [b for b in cls.bindings.get(func.attr.value, []) if b.kind == "def"]
            if len(defs) != 1 or len(cls.bindings[func.attr.value]) != 1:
                return None
            scope = child_scope(cls, defs[0].node)
            if scope is None or decorated(defs[0].node):
                return None
            return scope, 1
        if isinstance(func, cst.Name):
            binding = where.loc.lookup(func.value)
            if binding is not None and binding.scope is not None and isinstance(binding.value, cst.Lambda) \
                    and binding.kind == "assign" and len(binding.scope.bindings.get(func.value, ())) == 1:
                lambda_scope = child_scope(binding.scope, binding.value)  # ``split = lambda t: ...``
                return (lambda_scope, 0) if lambda_scope is not None else None
            if binding is None or binding.kind != "def" or binding.scope is None or decorated(binding.node):
                return None
            scope = child_scope(binding.scope, binding.node)
            if scope is None:
                return None
            return scope, 1 if binding.scope.kind == "class" else 0
        return None

    def _stored_function(self, func: cst.Attribute, where: Where) -> Optional[Tuple[Scope, int]]:
        """The function of this file that ``self.<attr>`` holds when the class assigns it
        once, a plain name of a ``def`` (``self._act = hard_swish`` in ``__init__``):
        calling the attribute calls that function, every parameter passed."""
        binding = self._self_attribute(func, where)
        at = self.binding_where(binding) if binding is not None else None
        if binding is None or at is None or not isinstance(binding.value, cst.Name):
            return None
        target = at.loc.lookup(binding.value.value)
        if target is None or target.kind != "def" or target.scope is None or decorated(target.node) \
                or target.scope.kind == "class":
            return None
        scope = child_scope(target.scope, target.node)
        return (scope, 0) if scope is not None else None

    def call_env(self, function: Scope, offset: int, call: cst.Call, where: Where, depth: int) -> Env:
        """The kinds the call gives the function's parameters (unknown where it passes
        ``*args``/``**kwargs`` or leaves a default)."""
        key = (call, self._env)
        if key not in self._call_envs:
            self._call_envs[key] = ()  # cycle guard
            self._call_envs[key] = self._call_env(function, offset, call, where, depth)
        return self._call_envs[key]

    def _call_env(self, function: Scope, offset: int, call: cst.Call, where: Where, depth: int) -> Env:
        node = function.node
        if not isinstance(node, (cst.FunctionDef, cst.Lambda)):
            return ()
        params = list(node.params.posonly_params) + list(node.params.params) + list(node.params.kwonly_params)
        env = []
        for param in params[offset:]:
            argument = argument_for(node, param, call, offset)
            if argument is None or argument is UNREADABLE:
                continue
            assert isinstance(argument, cst.BaseExpression)
            index = len(self._arguments)
            self._arguments.append((argument, where, self._env))
            env.append((id(param), self.kind(argument, where, depth + 1), index))
        return tuple(sorted(env, key=lambda item: item[0]))

    def contexts(self, scope: Scope) -> List[Env]:
        """The parameters' kinds each call of this file gives the function that
        ``scope`` is in: a helper called with a float32 mask, a layer whose ``call`` is
        given one as a keyword (``self.attn(x, mask=self.attn_mask)``; keyword and
        later arguments are not autocast). Only the envs that know some kind.
        A lambda mapped over a tuple written out (``map(lambda t: t * m, (q, k, v))``)
        is judged with its parameter bound to each item."""
        while scope.kind != "function" and scope.parent is not None:
            if scope.kind == "lambda" and id(scope.node) in self._maps:
                mapped = [env for env in self.mapped_envs(scope) if any(kind is not None for _, kind, _ in env)]
                return list(dict.fromkeys(mapped))
            scope = scope.parent
        own = self._caller_contexts(scope, 0)
        return own + [found.env for found in self.foreign_contexts(scope) if found.env not in own]

    def foreign_contexts(self, function: Scope) -> List[ForeignContext]:
        """What the calls in other modules of the project hand the function (see
        :mod:`tensor_callers`), once per function."""
        if id(function) not in self._foreign:
            self._foreign[id(function)] = []  # a caller's module that asks back ends here
            self._foreign[id(function)] = foreign_contexts(cast("TensorKinds", self), function)
        return self._foreign[id(function)]

    def functional_caller(self, function: Scope) -> Optional[str]:
        """Where functional model code of another module calls the function (see
        :func:`tensor_callers.functional_caller`), once per function."""
        if id(function) not in self._functional_callers:
            self._functional_callers[id(function)] = None  # a caller's module that asks back ends here
            self._functional_callers[id(function)] = functional_caller(cast("TensorKinds", self), function)
        return self._functional_callers[id(function)]

    def handed_at_caller(self, env: Env) -> bool:
        """Whether the call of another module that gives ``env`` reports a float32
        tensor meeting its 16-bit argument itself (see ``ForeignContext.handed``)."""
        return any(context.handed for found in self._foreign.values() for context in found if context.env == env)

    def foreign_caller(self, env: Env) -> Optional[str]:
        """Where the call of another module that gives ``env`` is written (``blocks.py:42``);
        None for an env of this file."""
        for found in self._foreign.values():
            for context in found:
                if context.env == env:
                    return context.at
        return None

    def _caller_contexts(self, function: Scope, level: int) -> List[Env]:
        """The envs the calls of ``function`` in this file give it, each call judged as
        its own code stands and under each env its own callers give it, up to
        ``CALL_STRING_DEPTH`` calls up (``call`` -> ``relative_logits(q)`` ->
        ``rel_to_abs(logits)``: the 16-bit query reaches the helper two calls down)."""
        key = (id(function), level)
        found = self._contexts.get(key)
        if found is not None:
            return found
        self._contexts[key] = []  # a recursive helper: its own calls add nothing new
        out: List[Env] = []
        for call, where, offset in self._caller_map().get(id(function), []):
            caller = self.region(where.loc)
            if caller is None or (caller.kind == "functional" and offset):
                # outside autocast (``train_step``): weights read as float32 there; a
                # function (no method) that functional model code hands its KerasTensors
                # runs on them as they are (``gate(d1, cls)``)
                continue
            outer: List[Env] = [()]
            if level < CALL_STRING_DEPTH:
                enclosing = _function_of(where.loc.scope)
                outer += self._caller_contexts(enclosing, level + 1)
                # and what calls in other modules hand the caller (a builder given the
                # 16-bit features of another module's model passes them on)
                outer += [found.env for found in self.foreign_contexts(enclosing) if found.env not in outer]
            for caller_env in outer:
                with self._under(caller_env):
                    env = self.call_env(function, offset, call, where, 0)
                if any(kind is not None for _, kind, _ in env) and env not in out:
                    out.append(env)
        self._contexts[key] = out
        return out

    def mapped_envs(self, scope: Scope) -> List[Env]:
        """For the lambda of ``map(lambda t: ..., (a, b, c))``: its parameter bound to
        each item in turn (one env per item, in order); [] for any other scope."""
        node = scope.node
        found = self._maps.get(id(node))
        if found is None or not isinstance(node, cst.Lambda):
            return []
        call, where = found
        items = call.args[1].value
        params = node.params.params
        if not isinstance(items, (cst.Tuple, cst.List)) or len(params) != 1 \
                or any(isinstance(e, cst.StarredElement) for e in items.elements):
            return []
        out: List[Env] = []
        for element in items.elements:
            index = len(self._arguments)
            self._arguments.append((element.value, where, self._env))
            out.append(((id(params[0]), self.kind(element.value, where, 1), index),))
        return out

    def _callees(self, call: cst.Call, where: Where) -> List[Tuple[Scope, int]]:
        """The function scopes of this file a call may run: a helper, or the ``call``
        of the layer class the called attribute holds an instance of."""
        helper = self.helper(call, where)
        if helper is not None:
            return [helper]
        values = self._attribute_values(call.func, where)
        if not values or self.region(where.loc) is None:
            return []
        classes = set()
        cls_scope: Optional[Scope] = None
        for value, at in values:
            if not (isinstance(value, cst.Call) and isinstance(value.func, cst.Name)):
                return []
            binding = at.loc.lookup(value.func.value)
            if binding is None or binding.kind != "class" or binding.scope is None:
                return []
            classes.add((binding.node, id(binding.scope)))
            cls_scope = child_scope(binding.scope, binding.node)
            layer = self.regions.layer_class(binding.node)
            if cls_scope is None or layer is None or not layer.sixteen_bit:
                return []
        if len(classes) != 1 or cls_scope is None:
            return []
        calls = [b for b in cls_scope.bindings.get("call", []) if b.kind == "def"]
        method = child_scope(cls_scope, calls[0].node) if len(calls) == 1 else None
        return [(method, 1)] if method is not None else []

    def returns_of(self, call: cst.Call, where: Where, depth: int = 0) -> List[Tuple[cst.BaseExpression, Where]]:
        """What the helper of this file that ``call`` runs returns, each where it is
        returned (none for any other call)."""
        helper = self.helper(call, where)
        if helper is None:
            return []
        return [(value, at) for _, value, at in self._returned(helper, call, where, depth) if value is not call]

    def _returned(self, helper: Tuple[Scope, int], call: cst.Call, where: Where, depth: int
                  ) -> List[Tuple[Optional[str], cst.BaseExpression, Where]]:
        """The kind of each ``return`` of a helper, with the call's arguments bound, and
        the value and where (judged under the call's ``Env``: see :meth:`under`)."""
        function, offset = helper
        returns = self._returns.get(id(function), [])
        if not returns or depth > MAX_DEPTH:
            return [(None, call, where)]
        with self._under(self.call_env(function, offset, call, where, depth)):
            return [(self.kind(value, at, depth + 1), value, at) for value, at in returns]

    def _called_layer(self, func: cst.BaseExpression, where: Where) -> Optional[str]:
        """The kind of a layer's output when ``func`` is a layer: LOW for a 16-bit layer,
        F32 for one that hands back float32 whatever its input (a bilinear
        ``UpSampling2D``), ``UNKNOWN_OUTPUT`` for any other layer; None when ``func`` is
        not a layer."""
        regions = self.regions
        if isinstance(func, cst.Attribute):
            # ``self.query = None`` in ``__init__``, ``self.query = Dense(...)`` in ``build``
            values = self._attribute_values(func, where)
            if not values:
                return None
            region = self.region(where.loc)
            # ``self.norm = norm_layer(dim) if norm_layer else None``: a call of None
            # raises, so the call that returns runs one of the other values
            built = [(layer, loc) for value, at in values if not is_none(value)
                     for layer, loc in self._output_layers(value, at)]
            if not built:
                return None
            if not all(isinstance(value, cst.Call) and self._is_layer_constructor(value, loc)
                       for value, loc in built):
                return None
            if (region is None or region.kind != "layer") and not all(self.governed(loc) for _, loc in built):
                return UNKNOWN_OUTPUT
            return self._layer_output(built)
        if isinstance(func, cst.Call):  # Dense(3)(x), Sequential(blocks)(x)
            built = self._output_layers(func, where)
            if all(isinstance(layer, cst.Call) and self._is_layer_constructor(layer, loc) for layer, loc in built):
                governed = self.region(where.loc) is not None or self.governed(where.loc)
                return self._layer_output(built) if governed else UNKNOWN_OUTPUT
            return None
        if isinstance(func, cst.Name):
            binding, reaching = self.reaching(func, where)
            if binding is None or binding.value is None or binding.scope is None:
                return None
            loc = binding.location()
            if isinstance(binding.value, cst.Call) and self._is_layer_constructor(binding.value, loc):
                governed = self.region(where.loc) is not None or self.governed(loc)
                return self._layer_output([(binding.value, loc)]) if reaching and governed else UNKNOWN_OUTPUT
        return None

    def _nested_model(self, call: cst.Call, where: Where) -> Optional[str]:
        """``gen_out = self.gen_model(x)``, a model called as a layer, built by a function
        or method of this module or another (``Unet.build_generator``): LOW when the layer
        analysis, where a check of the run asked for it, says its one output is certainly
        16-bit where it is built (:attr:`nested_model`); None otherwise."""
        judge = self.nested_model
        if judge is None or not isinstance(call.func, (cst.Name, cst.Attribute)) \
                or self.ctx.names.resolve(call.func) or id(call) in self._nesting:
            return None
        self._nesting.add(id(call))
        try:
            return LOW if judge(call, where.loc) else None
        finally:
            self._nesting.discard(id(call))

    def _layer_output(self, built: List[Tuple[cst.BaseExpression, Location]]) -> str:
        """The output kind of a layer built by each of these constructor calls, run where
        a mixed policy governs it: 16-bit, or float32 for a resizing layer that does not
        resize nearest-neighbour (its result is never cast back)."""
        kinds = set()
        for value, loc in built:
            if not isinstance(value, cst.Call) or not self.regions.is_sixteen_bit_layer(value, loc):
                return UNKNOWN_OUTPUT
            names = self.ctx.names.resolve(value.func)
            if names & RESIZING_LAYERS:
                nearest = self.resizes_nearest(value, names, loc)
                kinds.add(None if nearest is None else LOW if nearest else F32)
            else:
                kinds.add(LOW)
        found = next(iter(kinds)) if len(kinds) == 1 else None
        return found if found is not None else UNKNOWN_OUTPUT

    def resizes_nearest(self, call: cst.Call, names: FrozenSet[str], loc: Location) -> Optional[bool]:
        """Whether a resizing op or layer (``IMAGE_RESIZE``, ``RESIZING_LAYERS``) resizes
        nearest-neighbour (keeping its input's dtype; any other method gives float32);
        None when the method cannot be followed."""
        found = resize_method(call, names)
        if found is None:
            return None
        method, default = found
        if method is None:
            return default in NEAREST_RESIZE_METHODS
        resolved = self.ctx.names.resolve(method)
        if resolved:
            if resolved & NEAREST_RESIZE_METHODS:
                return True
            return False if all(n.startswith("tensorflow.image.ResizeMethod.") for n in resolved) else None
        values = self.ctx.values.values(method, loc)
        if not values or not all(isinstance(v, str) for v in values):
            return None
        nearest = {v in NEAREST_RESIZE_METHODS for v in values}
        return next(iter(nearest)) if len(nearest) == 1 else None

    def _output_layers(self, value: cst.BaseExpression, where: Where) -> List[Tuple[cst.BaseExpression, Location]]:
        """The layers whose output a ``keras.Sequential(layers)`` gives (its output has
        their dtype: see :mod:`tensor_containers`); any other value (or a Sequential
        whose list cannot be followed) itself."""
        if isinstance(value, cst.Call) and self.ctx.names.resolve(value.func) & SEQUENTIAL_CLASSES:
            last = self.sequential_last_layers(value, where)
            if last:
                return [(layer, at.loc) for layer, at in last]
        return [(value, where.loc)]

    def governed(self, loc: Location) -> bool:
        """A mixed policy governs the code at ``loc``: a Keras layer built there computes
        in the 16-bit dtype wherever it is called (a ``tf.Module``'s ``__call__``, a
        plain function), not only inside another layer's ``call``."""
        return self.ctx.facts.mixed_policy(loc.scope) is not None

    def _is_layer_constructor(self, call: cst.Call, loc: Location) -> bool:
        classes = self.regions.constructed_classes(call.func, loc)
        return bool(classes) and all(self._is_layer_class(func, at) for func, at in classes or ())

    def _is_layer_class(self, func: cst.BaseExpression, loc: Location) -> bool:
        names = self.ctx.names.resolve(func)
        if names:
            # a ``keras.applications`` model is called as a layer is (``VGG19(...)(x)``)
            return any(n.startswith("keras.layers.") and n.rsplit(".", 1)[-1][:1].isupper() for n in names) \
                or is_classifier_application(names)
        if isinstance(func, cst.Name):
            binding = loc.lookup(func.value)
            return binding is not None and binding.kind == "class" and self.regions.layer_class(binding.node) is not None
        return False
