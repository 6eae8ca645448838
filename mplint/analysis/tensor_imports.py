"""Tensors that cross into another module of the project, judged there.

``utils.window_partition(mask, 7)`` returns what its module's code makes of a
float32 mask, and ``self.attn(x, mask=self.attn_mask)``, where ``self.attn`` is a
``WindowAttention`` imported from ``layers/``, hands a float32 mask to that class's
``call`` (keyword and later arguments are not autocast). Both are answered by the
other module's own :class:`TensorKinds` (walked once per content by
:func:`imported_layers.analysed`, which notes the read for the cache), judged with
the kinds this module's arguments have: the function's parameters take them as a
helper's do in its own file. A name that stays unknown (a third-party class, a
function with ``*args``, a cycle of modules) keeps its kind unknown, and the rules
silent.
"""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, FrozenSet, Iterator, List, Optional, Set, Tuple

import libcst as cst

from mplint.analysis.compute_regions import overrides_call
from mplint.analysis.dtype_kinds import F32, LOW
from mplint.analysis.imported_layers import analysed, imported_definition
from mplint.semantic.call_args import UNREADABLE, argument_for, literal_slots
from mplint.semantic.scopes import Scope

if TYPE_CHECKING:  # pragma: no cover
    from mplint.analysis.tensor_kinds import Env, Mismatch, TensorKinds, Where

#: the functions of other modules being judged now: a cycle of modules ends unknown
_ACTIVE: Set[Tuple[str, int]] = set()
#: how many modules deep a value is followed
_MAX_HOPS = 2
#: the policy another module's code is judged under where a mixed policy governs the
#: call that runs it (its 16-bit kinds read the same under mixed_bfloat16; the rules
#: name the policy that reaches the code they judge)
JUDGED_UNDER = "mixed_float16"


@dataclass(frozen=True)
class ImportedCallee:
    """A function, or a layer class's ``call``, of another module of the project."""

    kinds: "TensorKinds"
    function: Scope
    #: leading parameters the call does not pass (``self``)
    offset: int
    path: str
    #: ``window_partition`` or ``WindowAttention.call``, for messages
    label: str


def imported_callee(kinds: "TensorKinds", call: cst.Call, where: "Where") -> Optional[ImportedCallee]:
    """What ``call`` runs when it calls a function imported from the project, or an
    instance of a 16-bit layer class imported from it (``self.attn = Attention(...)``)."""
    if len(_ACTIVE) >= _MAX_HOPS or framework_call(kinds.ctx.names.resolve(call.func)):
        return None  # TensorFlow's and Keras's own names are the vocabulary's
    func = call.func
    values = _instances(kinds, func, where)
    if values is not None:
        if not values or not all(isinstance(v, cst.Call) for v, _ in values):
            return None
        classes: List[Optional[Tuple["TensorKinds", str, str, Scope]]] = []
        constructions: List[cst.Call] = []
        for value, at in values:
            assert isinstance(value, cst.Call)
            # ``self.mlp = MLP_Block(...)`` with ``MLP_Block=MLP``: every class it may be
            denoted = kinds.regions.constructed_classes(value.func, at.loc)
            if not denoted:
                return _picked_by_name(kinds, values)
            classes.extend(_definition(kinds, cls) for cls, _ in denoted)
            constructions.append(value)
        first = classes[0]
        if first is None or any(c is None or c[3] is not first[3] for c in classes):
            return None  # one imported class in every assignment
        if first[2] == "def":  # a function of another module that returns a function
            return _picked_by_name(kinds, values)
        return _layer_call(_constructed(kinds, first, constructions))
    if isinstance(func, (cst.Name, cst.Attribute)):
        # a function called where a mixed policy governs builds its layers under it:
        # ``d1 = conv(e, 64)`` returns a 16-bit Conv2D output there, however its own
        # module runs (its other callers may run it under no policy)
        found = _definition(kinds, func, governed=kinds.governed(where.loc))
        if found is None:
            return None
        other, path, binding_kind, scope = found
        if binding_kind != "def":
            return None
        return ImportedCallee(other, scope, 0, path, _name(scope))
    return None


def _instances(kinds: "TensorKinds", func: cst.BaseExpression, where: "Where"
               ) -> Optional[List[Tuple[cst.BaseExpression, "Where"]]]:
    """What an instance called here was built by: ``self.attn`` (what the class's
    methods assign it), or a local name (``blk`` of ``for blk in self.blocks:``, each
    item of the list, comprehension or appends that fill ``self.blocks``:
    ``LayerContainers.possible_values``). None when ``func`` is neither (an imported
    name, a parameter); [] when its values cannot be read: the instance stays unknown."""
    if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == "self":
        return kinds.attribute_values(func, where) or []
    if not isinstance(func, cst.Name):
        return None
    binding, _ = kinds.reaching(func, where)
    if binding is None or binding.kind not in ("for", "assign"):
        return None
    return kinds.possible_values(func, where) or []


def _picked_by_name(kinds: "TensorKinds", values: List[Tuple[cst.BaseExpression, "Where"]]
                    ) -> Optional[ImportedCallee]:
    """``self._act = activations.get_activation('hard_sigmoid')``: the function of the
    getter's module that every assignment picks by name (:mod:`tensor_named`)."""
    from mplint.analysis.tensor_named import named_function

    picked: Optional[ImportedCallee] = None
    for value, at in values:
        if not isinstance(value, cst.Call) or not isinstance(value.func, (cst.Name, cst.Attribute)):
            return None
        found = _definition(kinds, value.func)
        if found is None or found[2] != "def":
            return None
        other, path, _, getter = found
        function = named_function(kinds, other, getter, value, at)
        if function is None or (picked is not None and picked.function is not function):
            return None
        picked = ImportedCallee(other, function, 0, path, _name(function))
    return picked


def framework_call(names: FrozenSet[str]) -> bool:
    """A call of TensorFlow or Keras (the vocabulary judges it); a name of another
    import (``masks.causal_mask`` after ``import masks``) may be the project's own."""
    return any(n == root or n.startswith(root + ".") for n in names for root in ("tensorflow", "keras"))


def _definition(kinds: "TensorKinds", func: cst.BaseExpression, governed: bool = False
                ) -> Optional[Tuple["TensorKinds", str, str, Scope]]:
    """(the other module's analysis, its path, ``def`` or ``class``, the scope) of an
    imported top-level function or class; ``governed``: the module judged as code a
    mixed policy governs (``JUDGED_UNDER``), as the call being followed runs it."""
    if isinstance(func, cst.Name) and func.value in kinds.ctx.scopes.module_scope.bindings:
        return None  # the file's own (or a name rebound here)
    named = imported_definition(kinds.ctx, func)
    root = kinds.ctx.facts.project_root
    other = None if named is None else analysed(named[0], type(kinds), root=root, policy=JUDGED_UNDER) \
        if governed and root else analysed(named[0], type(kinds))
    if named is None or not isinstance(other, type(kinds)):
        return None
    module = other.ctx.scopes.module_scope
    bindings = module.bindings.get(named[1], [])
    if len(bindings) != 1 or bindings[0].kind not in ("def", "class"):
        return None
    scope = next((c for c in module.children if c.node is bindings[0].node), None)
    return None if scope is None else (other, named[0], bindings[0].kind, scope)


def _constructed(kinds: "TensorKinds", found: Tuple["TensorKinds", str, str, Scope],
                 constructions: List[cst.Call]) -> Tuple["TensorKinds", str, str, Scope]:
    """The imported class as the constructions of this route build it: its module judged
    with their literal arguments handed to the class's own ``__init__`` (``PatchEmbed(
    embed_dim=dim)`` leaves ``norm_layer`` None, so ``if self.norm is not None:`` in its
    ``call`` never runs here). Another argument stays unknown; a class without its own
    ``__init__``, or a module that cannot be walked again, is judged as before."""
    other, path, binding_kind, cls = found
    name = _name(cls)
    if binding_kind != "class" or not any(b.kind == "def" for b in cls.bindings.get("__init__", [])) \
            or any(arg.star == "*" for call in constructions for arg in call.args):
        return found
    handed = {f"{name}.__init__": [literal_slots(call) for call in constructions]}
    variant = analysed(path, type(kinds), handed=handed)
    if not isinstance(variant, type(kinds)):
        return found
    bindings = variant.ctx.scopes.module_scope.bindings.get(name, [])
    scope = next((c for c in variant.ctx.scopes.module_scope.children
                  if len(bindings) == 1 and c.node is bindings[0].node), None)
    return found if scope is None else (variant, path, binding_kind, scope)


def _layer_call(found: Tuple["TensorKinds", str, str, Scope]) -> Optional[ImportedCallee]:
    """The ``call`` of an imported class that computes in the 16-bit dtype, or the
    ``__call__`` that replaces Keras's own (:func:`overrides_call`: no input of it is
    autocast, so every argument reaches its body with the kind the caller gives it)."""
    other, path, binding_kind, cls = found
    layer = other.regions.layer_class(cls.node) if binding_kind == "class" else None
    if layer is None or not layer.sixteen_bit:
        return None
    entry = "__call__" if isinstance(cls.node, cst.ClassDef) and overrides_call(cls.node) else "call"
    calls = [b for b in cls.bindings.get(entry, []) if b.kind == "def"]
    method = next((c for c in cls.children if len(calls) == 1 and c.node is calls[0].node), None)
    return None if method is None else ImportedCallee(other, method, 1, path, f"{_name(cls)}.{entry}")


def _name(scope: Scope) -> str:
    node = scope.node
    return node.name.value if isinstance(node, (cst.FunctionDef, cst.ClassDef)) else "?"


def callee_env(kinds: "TensorKinds", callee: ImportedCallee, call: cst.Call, where: "Where", depth: int) -> "Env":
    """The kinds this module's arguments give the callee's parameters (by the ids of
    its own ``Param`` nodes; no argument index: an origin is not followed back)."""
    node = callee.function.node
    if not isinstance(node, cst.FunctionDef):
        return ()
    params = list(node.params.posonly_params) + list(node.params.params) + list(node.params.kwonly_params)
    env = []
    for param in params[callee.offset:]:
        argument = argument_for(node, param, call, callee.offset)
        if argument is None or argument is UNREADABLE:
            continue
        assert isinstance(argument, cst.BaseExpression)
        env.append((id(param), kinds.kind(argument, where, depth + 1), -1))
    return tuple(sorted(env, key=lambda item: item[0]))


def returned_kinds(kinds: "TensorKinds", call: cst.Call, where: "Where", depth: int,
                   part: Tuple[int, ...] = ()) -> Optional[Set[Optional[str]]]:
    """The kinds an imported function returns for this call's arguments (of item
    ``part`` of what it returns: ``x, score = block(x)`` takes part ``(0,)`` of the
    ``return out, score`` of the block's ``__call__``); None when the call runs no
    function of another module."""
    callee = imported_callee(kinds, call, where)
    if callee is None:
        return None
    if callee.offset and kinds.region(where.loc) is None:
        return None  # a layer called outside autocast: its input's dtype is unknown
    # a function's returns, or what the ``call`` of a 16-bit layer class returns (its
    # first input autocast there): ``x = self.patch_embed(x)`` with ``PatchEmbed``
    # imported from the project
    env = callee_env(kinds, callee, call, where, depth)
    key = (callee.path, id(callee.function))
    if key in _ACTIVE:
        return {None}
    _ACTIVE.add(key)
    try:
        return callee.kinds.returned_under(callee.function, env, part)
    finally:
        _ACTIVE.discard(key)


@dataclass(frozen=True)
class Crossing:
    """A float32 argument that meets a 16-bit tensor inside another module's code."""

    call: cst.Call
    argument: cst.BaseExpression
    parameter: str
    callee: ImportedCallee
    mismatch: "Mismatch"


def crossings(kinds: "TensorKinds", call: cst.Call, where: "Where") -> List[Crossing]:
    """The operations of the imported callee that fail only because of a float32
    argument of this call (its own float32 tensors are its module's findings)."""
    with _entered(kinds, call, where, F32, methods=True) as entered:
        if entered is None:
            return []
        callee, env, suspects = entered
        own = {id(m.node) for m in callee.kinds.mismatches_under(callee.function, ())}
        out: List[Crossing] = []
        for suspect in suspects:
            # only this argument float32: the failure is its doing
            alone = tuple((p, k if p == suspect or k != F32 else None, i) for p, k, i in env)
            for mismatch in callee.kinds.mismatches_under(callee.function, alone):
                if id(mismatch.node) in own or any(c.mismatch.node is mismatch.node for c in out):
                    continue
                argument, parameter = _argument_of(callee, call, suspect)
                if argument is not None:
                    out.append(Crossing(call, argument, parameter, callee, mismatch))
        return out


@contextmanager
def _entered(kinds: "TensorKinds", call: cst.Call, where: "Where", kind: str,
             methods: bool) -> Iterator[Optional[Tuple[ImportedCallee, "Env", List[int]]]]:
    """The imported callee of ``call`` with the kinds its arguments bind and the
    parameters of ``kind`` (the suspects), while it is being judged; None when there is
    none, no suspect, a method where ``methods`` is off, or the callee is judged already
    further up (recursion)."""
    callee = imported_callee(kinds, call, where)
    if callee is None or (callee.offset and not methods):
        yield None
        return
    env = callee_env(kinds, callee, call, where, 0)
    suspects = [param for param, found, _ in env if found == kind]
    key = (callee.path, id(callee.function))
    if not suspects or key in _ACTIVE:
        yield None
        return
    _ACTIVE.add(key)
    try:
        yield callee, env, suspects
    finally:
        _ACTIVE.discard(key)


def _argument_of(callee: ImportedCallee, call: cst.Call, param_id: int) -> Tuple[Optional[cst.BaseExpression], str]:
    node = callee.function.node
    assert isinstance(node, cst.FunctionDef)
    for param in list(node.params.posonly_params) + list(node.params.params) + list(node.params.kwonly_params):
        if id(param) == param_id:
            argument = argument_for(node, param, call, callee.offset)
            if isinstance(argument, cst.BaseExpression):
                return argument, param.name.value
    return None, ""


@dataclass(frozen=True)
class HandedCrossing:
    """A 16-bit argument that meets a float32 tensor made inside another module's
    function (``drop_path(x, rate)`` whose random tensor is float32)."""

    call: cst.Call
    argument: cst.BaseExpression
    parameter: str
    callee: ImportedCallee
    mismatch: "Mismatch"
    #: where the callee makes the float32 tensor (a node of its module)
    origin: cst.CSTNode


def handed_crossings(kinds: "TensorKinds", call: cst.Call, where: "Where") -> List[HandedCrossing]:
    """The operations of an imported function that fail only because this call hands
    it a 16-bit tensor, where a float32 one made there meets it. A layer's ``call`` is
    left out (its first input is 16-bit in its own module, which reports it), and so
    is a failure the callee's module finds with its own callers' arguments."""
    with _entered(kinds, call, where, LOW, methods=False) as entered:
        if entered is None:
            return []
        callee, env, suspects = entered
        other = callee.kinds
        own = {id(m.node) for m in other.mismatches_under(callee.function, ())}
        for context in other.contexts(callee.function):
            own |= {id(m.node) for m in other.mismatches_under(callee.function, context)}
        out: List[HandedCrossing] = []
        for mismatch in other.mismatches_under(callee.function, env):
            if id(mismatch.node) in own or any(c.mismatch.node is mismatch.node for c in out):
                continue
            made = other.origin_in_context(mismatch)
            suspect = next((p for p in suspects if _reads_parameter(other, mismatch, p)), suspects[0])
            argument, parameter = _argument_of(callee, call, suspect)
            if made is not None and argument is not None:
                out.append(HandedCrossing(call, argument, parameter, callee, mismatch, made[0]))
        return out


def _reads_parameter(other: "TensorKinds", mismatch: "Mismatch", param_id: int) -> bool:
    """Whether the 16-bit side of a mismatch is the parameter itself (``x * r``)."""
    low = mismatch.low
    if not isinstance(low, cst.Name):
        return False
    binding, _ = other.reaching(low, mismatch.where)
    return binding is not None and binding.kind == "param" and id(binding.node) == param_id
