"""The kind of one expression: 16-bit (``LOW``), float32 (``F32``) or unknown,
from its names' bindings, ``self`` attributes, containers, the calls it makes and
the dtype arguments they take (the rules in :mod:`tensor_kinds`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, FrozenSet, List, Optional, Set, Tuple, cast

import libcst as cst

from mplint.analysis.activations import makes_activation
from mplint.analysis.compute_regions import is_call_override
from mplint.analysis.dtype_kinds import F32, LOW
from mplint.analysis.tensor_calls import (
    ARITHMETIC, BUILT_IN_WEIGHTS, COMPUTE_DTYPE_ATTRS, TENSOR_KEYWORDS, VARIABLE_DTYPE_ATTRS, dtype_argument,
)
from mplint.analysis.tensor_helpers import UNKNOWN_OUTPUT, FileCalls
from mplint.analysis.tensor_imports import framework_call, returned_kinds
from mplint.analysis.tensor_sites import MAX_DEPTH, Env, Path, Where
from mplint.analysis.tensor_syntax import (
    child_scope, is_none, is_self, loop_iterable, loop_targets, mentions, target_path,
)
from mplint.semantic.call_args import keyword_only, positional_or_keyword
from mplint.semantic.scopes import Binding, Location
from mplint.semantic.vocabulary import (
    CASTS, CONSTANTS, CONVERSIONS, DTYPE_OF, EINOPS_FUNCTIONS, PYTHON_NUMBER_FUNCTIONS, DTYPE_PRESERVING_OPS, FILL_OPS, FLOAT32_BY_DEFAULT, FLOATX_BY_DEFAULT, FLOATX_FUNCTIONS,
    GLOBAL_POLICY_FUNCTIONS, IMAGE_RESIZE, INPUT_FUNCTIONS, KERAS_OP_NAMESPACES, LIKE_OPS, MERGE_FUNCTIONS, RANGE_OPS,
    TF_OP_NAMESPACES, TF_VARIABLES, UNPACKING_OPS,
)

if TYPE_CHECKING:  # pragma: no cover
    from mplint.analysis.tensor_kinds import TensorKinds


class DtypeInference(FileCalls):
    """Infers the kind of an expression at a place, cached per caller's arguments."""

    def kind(self, expr: cst.BaseExpression, where: Where, depth: int = 0) -> Optional[str]:
        key = (expr, self._env)
        if key in self._kinds:
            return self._kinds[key]
        if depth > MAX_DEPTH:
            self._cut = True
            return None
        cut_at = self._cut_kinds.get(key)
        if cut_at is not None and depth >= cut_at:
            self._cut = True  # cut short from here before: as unknown again
            return None
        self._kinds[key] = None  # cycle guard
        outer, self._cut = self._cut, False
        found = self._kind(expr, where, depth)
        if self._cut:
            # the depth limit cut the inference short: unknown from this depth, but not
            # from a shallower one (a helper reached first through a long call chain
            # must not stay unknown where it is called directly)
            del self._kinds[key]
            self._cut_kinds[key] = depth
        else:
            self._kinds[key] = found
        self._cut = self._cut or outer
        return found

    def _kind(self, expr: cst.BaseExpression, where: Where, depth: int) -> Optional[str]:
        if isinstance(expr, cst.Name):
            candidates = self.candidates(expr, where)
            if not candidates:
                return None
            normalised = self._normalised(candidates[0], expr.value, depth)
            if normalised is not None:
                return normalised
            filled = self._filled_default(candidates, expr.value)
            if filled is not None:
                return self._binding_kind(filled, depth)
            # a Python number bound on one path is no tensor: the op can fail only on
            # the others (``divisor = l`` then ``if mask: divisor = float32 sum``)
            tensors = [b for b in candidates if not self._python_number_binding(b)] if len(candidates) > 1 else candidates
            kinds = {self._binding_kind(b, depth) for b in tensors or candidates}
            return next(iter(kinds)) if len(kinds) == 1 else None
        if isinstance(expr, cst.Attribute):
            return self._attribute_kind(expr, where, depth)
        if isinstance(expr, cst.Subscript):
            elements = self._elements(expr.value, where, depth + 1)
            if elements is not None:  # an item of a list or dict of tensors
                return next(iter(elements)) if len(elements) == 1 else None
            return self.kind(expr.value, where, depth + 1)
        if isinstance(expr, cst.UnaryOperation):
            return self.kind(expr.expression, where, depth + 1)
        if isinstance(expr, cst.BinaryOperation):
            if not isinstance(expr.operator, ARITHMETIC):
                return None
            kinds = {self.kind(expr.left, where, depth + 1), self.kind(expr.right, where, depth + 1)} - {None}
            # float32 meeting 16-bit fails at run time; once fixed the result is
            # 16-bit, so later operands are judged against the 16-bit side
            return LOW if LOW in kinds else next(iter(kinds), None)
        if isinstance(expr, cst.IfExp):
            # ``make_mask() if shift else None``: None is no tensor (a use checks for it)
            sides = [side for side in (expr.body, expr.orelse) if not is_none(side)]
            kinds = {self.kind(side, where, depth + 1) for side in sides}
            return next(iter(kinds)) if len(kinds) == 1 else None
        if isinstance(expr, cst.Call):
            return self._call_kind(expr, where, depth)
        return None

    def _binding_kind(self, binding: Binding, depth: int) -> Optional[str]:
        if binding.kind == "param":
            if self.regions.is_low_param(binding):
                return LOW
            for param, kind, _ in self._env:
                if param == id(binding.node):
                    return kind
            return None
        where = self.binding_where(binding)
        if where is None:
            return None
        if binding.kind in ("assign", "annassign") and binding.value is not None:
            return self.kind(binding.value, where, depth + 1)
        iterated = loop_iterable(binding)
        if iterated is not None:
            # ``for token in self.tokens``: the items' kind, when they all have one
            items = self._elements(iterated, where, depth + 1)
            return next(iter(items)) if items is not None and len(items) == 1 else None
        if binding.kind == "assign" and isinstance(binding.node, cst.Assign):
            # ``q, k, v = self.project(x)``, ``mean, var = tf.nn.moments(x, ...)``
            imported = self._imported_part(binding, depth)
            if imported is not None:  # ``x, score = block(x)``, a block of another module
                return next(iter(imported)) if len(imported) == 1 else None
            parts = self.unpacked(binding, depth)
            if not parts:
                return None
            kinds = set()
            for value, at, env in parts:
                with self._under(env):
                    kinds.add(self.kind(value, at, depth + 1))
            return next(iter(kinds)) if len(kinds) == 1 else None
        if binding.kind == "augassign" and isinstance(binding.node, cst.AugAssign):
            node = binding.node
            if not isinstance(node.operator, (cst.AddAssign, cst.SubtractAssign, cst.MultiplyAssign, cst.DivideAssign)):
                return None
            if not isinstance(node.target, cst.Name):
                return None
            before = self.kind(node.target, where, depth + 1)
            added = self.kind(node.value, where, depth + 1)
            kinds = {before, added} - {None}
            # as for ``x = x - m``: float32 meeting 16-bit fails (reported), and once
            # fixed the result is 16-bit
            return LOW if LOW in kinds else next(iter(kinds), None)
        return None

    def unpacked(self, binding: Binding, depth: int) -> Optional[List[Tuple[cst.BaseExpression, Where, Env]]]:
        """What a name bound by unpacking (``q, k, v = ...``) may hold: the expressions
        its part comes from, each with where and under which helper arguments to judge
        it; None when that cannot be followed."""
        node = binding.node
        where = self.binding_where(binding)
        if not isinstance(node, cst.Assign) or where is None:
            return None
        for target in node.targets:
            path = target_path(target.target, binding.name)
            if path is not None:
                return self._parts(node.value, where, path, depth + 1)
        return None

    def _imported_part(self, binding: Binding, depth: int) -> Optional[Set[Optional[str]]]:
        """The kinds of the part an unpacking takes of what a function or block of
        another module returns (``x, score = blk(x)``); None when the value unpacked is
        no call of one."""
        node = binding.node
        where = self.binding_where(binding)
        if not isinstance(node, cst.Assign) or not isinstance(node.value, cst.Call) or where is None:
            return None
        for target in node.targets:
            path = target_path(target.target, binding.name)
            if path:
                return returned_kinds(cast("TensorKinds", self), node.value, where, depth, tuple(path))
        return None

    def parts(self, value: cst.BaseExpression, where: Where, path: Path
              ) -> Optional[List[Tuple[cst.BaseExpression, Where, Env]]]:
        """:meth:`_parts`, for a function of another module asked for a part of what
        it returns (:func:`tensor_imports.returned_kinds`)."""
        return self._parts(value, where, path, 0)

    def _parts(self, value: cst.BaseExpression, where: Where, path: Path, depth: int
               ) -> Optional[List[Tuple[cst.BaseExpression, Where, Env]]]:
        """The expressions part ``path`` of ``value`` comes from (see :meth:`unpacked`):
        an item of a tuple or list written out, of each tuple a helper returns (its
        arguments bound), and any part of a tensor, which has the tensor's dtype (a
        slice, ``tf.unstack``, the autocast nest of a layer's inputs)."""
        if not path:
            return [(value, where, self._env)]
        if depth > MAX_DEPTH:
            return None
        index, rest = path[0], path[1:]
        if isinstance(value, (cst.Tuple, cst.List)):
            elements = value.elements
            if index >= len(elements) or any(isinstance(e, cst.StarredElement) for e in elements[:index + 1]):
                return None
            return self._parts(elements[index].value, where, rest, depth + 1)
        if isinstance(value, cst.Name):
            found = self.assigned(value, where)
            if found is not None:
                return self._parts(found[0], found[1], path, depth + 1)
        if isinstance(value, cst.Call):
            helper = self.helper(value, where)
            if helper is not None:
                function, offset = helper
                returns = self._returns.get(id(function), [])
                if not returns:
                    return None
                out: List[Tuple[cst.BaseExpression, Where, Env]] = []
                with self._under(self.call_env(function, offset, value, where, depth)):
                    for returned, at in returns:
                        parts = self._parts(returned, at, path, depth + 1)
                        if parts is None:
                            return None
                        out += parts
                return out
            mapped = None if rest else self._mapped_parts(value, where, index)
            if mapped is not None:
                return mapped
            if value.args and self.ctx.names.resolve(value.func) & UNPACKING_OPS:
                # ``mean, var = tf.nn.moments(x, ...)``: every part has x's dtype
                return [(value.args[0].value, where, self._env)]
        # a tensor: each part has its dtype; anything else (a shape, a Python tuple
        # from an unknown call) has no known kind
        return [(value, where, self._env)]

    def _mapped_parts(self, call: cst.Call, where: Where, index: int
                      ) -> Optional[List[Tuple[cst.BaseExpression, Where, Env]]]:
        """Item ``index`` of ``map(lambda t: body, (a, b, c))``: the body, with ``t``
        bound to that item; None for any other call."""
        lam = call.args[0].value if call.args else None
        if not isinstance(lam, cst.Lambda) or self._maps.get(id(lam), (None,))[0] is not call:
            return None
        scope = child_scope(where.loc.scope, lam)
        envs = self.mapped_envs(scope) if scope is not None else []
        if scope is None or index >= len(envs):
            return None
        return [(lam.body, Where(Location(scope, where.loc.order), where.path), envs[index])]

    def _attribute_kind(self, expr: cst.Attribute, where: Where, depth: int) -> Optional[str]:
        values = self._attribute_values(expr, where)
        if values is None:
            return self._inherited_weight_kind(expr, where)
        kinds = {self._attribute_value_kind(value, at, where, depth) for value, at in values}
        return next(iter(kinds)) if len(kinds) == 1 else None

    def _attribute_value_kind(self, value: cst.BaseExpression, at: Where, use: Where, depth: int) -> Optional[str]:
        """The kind one assignment of a ``self`` attribute gives it where it is read."""
        if isinstance(value, cst.Call):
            if self.ctx.names.resolve(value.func) & TF_VARIABLES:
                return self._variable_kind(value, at, depth)
            func = value.func
            if isinstance(func, cst.Attribute) and func.attr.value == "add_weight" and is_self(func.value):
                region = self.region(use.loc)
                if region is None or region.kind != "layer" or is_call_override(region) \
                        or keyword_only(value, "dtype") is not None:
                    return None  # an overriding ``__call__`` reads it uncast (float32): left unknown
                # ``experimental_autocast=False`` (Keras 2) / ``autocast=False`` (Keras 3):
                # the weight is read in its own dtype, float32, a deliberate float32 path
                off = keyword_only(value, "experimental_autocast") or keyword_only(value, "autocast")
                return None if isinstance(off, cst.Name) and off.value == "False" else LOW
        # a tensor made once (in ``__init__`` or ``build``) keeps its dtype: judged
        # where it was made, with none of the current helper's parameters
        with self._under(()):
            return self.kind(value, at, depth + 1)

    def weight_read(self, expr: cst.BaseExpression, where: Where) -> bool:
        """``self.scale`` read directly where every assignment is ``self.add_weight(...)`` (or
        the weight of a built-in layer it subclasses): a Keras variable. Keras 3's variables
        convert the other operand of ``*``/``+`` to their own dtype (``x32 * self.scale``
        runs under mixed_float16, Keras 3.12, run), Keras 2's AutoCastVariable does not."""
        if not isinstance(expr, cst.Attribute) or not is_self(expr.value):
            return False
        values = self._attribute_values(expr, where)
        if values is None:
            return self._inherited_weight_kind(expr, where) is not None
        return bool(values) and all(
            isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute)
            and value.func.attr.value == "add_weight" and is_self(value.func.value)
            for value, _ in values)

    def _inherited_weight_kind(self, expr: cst.Attribute, where: Where) -> Optional[str]:
        """``self.kernel`` in a subclass of ``Dense``/``Conv2D``...: the built-in layer's
        ``add_weight`` weight, read in the compute dtype inside ``call``."""
        if not is_self(expr.value):
            return None
        layers = BUILT_IN_WEIGHTS.get(expr.attr.value)
        region = self.region(where.loc)
        if layers is None or region is None or region.kind != "layer" or region.layer_class is None \
                or is_call_override(region):
            return None
        for _, names in region.layer_class.bases:
            if any(n.startswith("keras.layers.") and n.rsplit(".", 1)[-1] in layers for n in names):
                return LOW
        return None

    def _item_kind(self, item: cst.BaseExpression, targets: FrozenSet[str], where: Where, depth: int) -> Optional[str]:
        """The kind of a comprehension's item, judged without its loop's own names (the
        scopes know no comprehension, so they would resolve them outside it)."""
        if not mentions(item, targets):
            return self.kind(item, where, depth)
        if isinstance(item, cst.Call) and self.ctx.names.resolve(item.func) & (CASTS | CONSTANTS | FLOAT32_BY_DEFAULT):
            dtype = self._dtype_argument(item, self.ctx.names.resolve(item.func))
            if dtype is not None and not mentions(dtype, targets):
                return self.dtype_kind(dtype, where, depth)
            return self.kind(item, where, depth) if dtype is None and not (
                self.ctx.names.resolve(item.func) & (CASTS | CONSTANTS)) else None
        if isinstance(item, cst.BinaryOperation) and isinstance(item.operator, ARITHMETIC):
            kinds = {self._item_kind(side, targets, where, depth + 1) for side in (item.left, item.right)} - {None}
            return LOW if LOW in kinds else next(iter(kinds), None)
        if isinstance(item, cst.Subscript):  # a slice keeps the tensor's dtype
            return self._item_kind(item.value, targets, where, depth + 1)
        if isinstance(item, cst.Call) and self._preserves_dtype(self.ctx.names.resolve(item.func)):
            # ``tf.pow(t, i)`` with ``i`` the loop's number: the tensor operands' dtype
            operands = [a.value for a in item.args if a.keyword is None and not a.star][:2]
            kinds = {self._item_kind(o, targets, where, depth + 1) for o in operands} - {None}
            return LOW if LOW in kinds else next(iter(kinds), None)
        return None

    @staticmethod
    def _preserves_dtype(names: FrozenSet[str]) -> bool:
        """A TensorFlow op or Keras 2 backend function whose result has its tensor
        operands' dtype."""
        for name in names:
            module, _, short = name.rpartition(".")
            if module + "." in TF_OP_NAMESPACES + KERAS_OP_NAMESPACES and short in DTYPE_PRESERVING_OPS \
                    and not module.startswith("keras.ops"):
                return True
        return False

    def _operand_kinds(self, operand: cst.BaseExpression, where: Where, depth: int) -> Set[Optional[str]]:
        """The kinds an operand of a dtype-keeping op brings: a tensor's, or each item's
        of a list written out or built by a comprehension (``tf.concat([tf.pow(t, i)
        for i in range(n)], 0)``)."""
        if isinstance(operand, (cst.ListComp, cst.GeneratorExp)):  # a list written out is split by operands()
            return self._elements(operand, where, depth) or {None}
        return {self.kind(operand, where, depth)}

    def _elements(self, expr: cst.BaseExpression, where: Where, depth: int) -> Optional[Set[Optional[str]]]:
        """The kinds of the items of a list, tuple or dict that ``expr`` certainly is
        (``self.masks`` built in ``build()``, read back as ``self.masks[i]``); None
        when ``expr`` is not known to be one."""
        if depth > MAX_DEPTH:
            return None
        if isinstance(expr, (cst.List, cst.Tuple, cst.Set)):
            if any(isinstance(e, cst.StarredElement) for e in expr.elements):
                return {None}
            return {self.kind(e.value, where, depth + 1) for e in expr.elements}
        if isinstance(expr, cst.Dict):
            if any(not isinstance(e, cst.DictElement) for e in expr.elements):
                return {None}
            return {self.kind(e.value, where, depth + 1) for e in expr.elements if isinstance(e, cst.DictElement)}
        if isinstance(expr, (cst.ListComp, cst.GeneratorExp, cst.SetComp, cst.DictComp)):
            item = expr.value if isinstance(expr, cst.DictComp) else expr.elt
            return {self._item_kind(item, loop_targets(expr.for_in), where, depth + 1)}
        if isinstance(expr, cst.Name):
            found = self.assigned(expr, where)
            return self._elements(found[0], found[1], depth + 1) if found is not None else None
        if isinstance(expr, cst.Attribute):
            values = self._attribute_values(expr, where)
            if values is None:
                return None
            cls = where.loc.scope.enclosing_class()
            out: Set[Optional[str]] = set()
            with self._under(()):
                for value, at in values:
                    items = self._elements(value, at, depth + 1)
                    if items is None:
                        # one tensor on another path (``self.embeddings = add_weight(...)``
                        # when ``div_val == 1``): its slices keep its dtype
                        kind = self._attribute_value_kind(value, at, where, depth + 1)
                        if kind is None:
                            return None
                        items = {kind}
                    out |= items
                # an appended item is read like an attribute assigned it: an add_weight
                # weight in the compute dtype inside call, a raw tf.Variable in float32
                for value, at in self._appends.get((id(cls), expr.attr.value), []):
                    out.add(self._attribute_value_kind(value, at, where, depth + 1))
            return out
        return None

    def _variable_kind(self, call: cst.Call, where: Where, depth: int, made_here: bool = False) -> Optional[str]:
        """A raw ``tf.Variable``: float32 unless its dtype or initial value says otherwise.

        ``made_here``: the variable is read where it is made (``tf.Variable(20.0) ** 2``,
        one kept in a list): its dtype argument's kind, else float32 only when its initial
        value certainly is (Python floats, a float32 tensor): an integer fill stays unknown."""
        dtype = positional_or_keyword(call, 5, "dtype")
        if dtype is not None:
            kind = self.dtype_kind(dtype, where, depth + 1)
            return kind if made_here or kind == F32 else None
        initial = positional_or_keyword(call, 0, "initial_value")
        if initial is None:
            return None
        found = self.ctx.values.values(initial, where.loc)
        if found is not None:
            return F32 if found and all(isinstance(v, float) for v in found) else None
        initial_kind = self.kind(initial, where, depth + 1)
        if made_here:
            return F32 if initial_kind == F32 else None
        # an initializer's output or a float tensor: float32 unless known to be 16-bit
        return None if initial_kind == LOW else F32

    def _call_kind(self, call: cst.Call, where: Where, depth: int) -> Optional[str]:
        func = call.func
        # a 16-bit sublayer: self.dense(x), Dense(3)(x), or dense(x) for a layer variable
        layer = self._called_layer(func, where)
        if layer is not None:
            return None if layer == UNKNOWN_OUTPUT else layer
        nested = self._nested_model(call, where)
        if nested is not None:
            return nested
        if self._activation_attribute(func, where) and call.args:
            # ``self.activation = keras.activations.get(name)``: an activation keeps
            # its input's dtype
            return self.kind(call.args[0].value, where, depth + 1)
        helper = self.helper(call, where)
        if helper is not None:
            kinds = {kind for kind, _, _ in self._returned(helper, call, where, depth)}
            return next(iter(kinds)) if len(kinds) == 1 else None
        names = self.ctx.names.resolve(func)
        if names & TF_VARIABLES:
            return self._variable_kind(call, where, depth, made_here=True)
        if names & MERGE_FUNCTIONS:  # ``layers.concatenate([a, b])``: a merge layer's output
            governed = self.region(where.loc) is not None or self.governed(where.loc)
            return LOW if governed and keyword_only(call, "dtype") is None else None
        if not framework_call(names):
            imported = returned_kinds(cast("TensorKinds", self), call, where, depth)  # a function of another module
            if imported is not None or not names:
                return next(iter(imported)) if imported is not None and len(imported) == 1 else None
        if names & IMAGE_RESIZE:
            nearest = self.resizes_nearest(call, names, where.loc)
            if nearest:  # the input's dtype
                return self.kind(call.args[0].value, where, depth + 1) if call.args else None
            return None if nearest is None else F32
        if names & RANGE_OPS:
            dtype = self._dtype_argument(call, names)
            if dtype is not None:
                return self.dtype_kind(dtype, where, depth + 1)
            bounds = [a.value for a in call.args if a.keyword is None and not a.star][:3]
            return F32 if any(self._python_float(b, where) for b in bounds) else None
        if names & CASTS:
            dtype = self._dtype_argument(call, names)
            return self.dtype_kind(dtype, where, depth + 1) if dtype is not None else None
        if names & CONSTANTS:
            dtype = self._dtype_argument(call, names)
            if dtype is not None:
                return self.dtype_kind(dtype, where, depth + 1)
            if names & {"keras.backend.constant"}:
                return F32 if self._floatx_is_float32() else None  # floatx() by default
            if names & CONVERSIONS and call.args:
                return self.kind(call.args[0].value, where, depth + 1)  # a tensor keeps its dtype
            if names & {"tensorflow.constant"} and call.args:
                values = self.ctx.values.values(call.args[0].value, where.loc)
                if values and all(isinstance(v, float) for v in values):
                    return F32
            return None
        if names & INPUT_FUNCTIONS:
            # a functional model's input: ``floatx()`` unless given a dtype (Keras
            # casts it only where a layer takes it as its first input)
            dtype = keyword_only(call, "dtype")
            if dtype is not None:
                return self.dtype_kind(dtype, where, depth + 1)
            return F32 if self._floatx_is_float32() else None
        if names & FLOAT32_BY_DEFAULT:
            dtype = self._dtype_argument(call, names)
            if dtype is not None:
                return self.dtype_kind(dtype, where, depth + 1)
            # Keras's own creation ops make floatx(): float32 unless the program sets it
            return F32 if not names & FLOATX_BY_DEFAULT or self._floatx_is_float32() else None
        if names & LIKE_OPS:
            dtype = self._dtype_argument(call, names)
            if dtype is not None:
                return self.dtype_kind(dtype, where, depth + 1)
            return self.kind(call.args[0].value, where, depth + 1) if call.args else None
        if names & FILL_OPS:  # the value's dtype: a Python float is float32, a tensor keeps its own
            value = positional_or_keyword(call, 1, "value")
            if value is None:
                return None
            found = self.ctx.values.values(value, where.loc)
            if found and all(isinstance(v, float) for v in found):
                return F32
            return self.kind(value, where, depth + 1)
        if names & UNPACKING_OPS and call.args:
            # the list of tensors ``tf.split(x, n)`` makes, all in ``x``'s dtype, taken
            # whole (``K.concatenate(tf.split(q, heads, axis=-1), axis=0)``)
            return self.kind(call.args[0].value, where, depth + 1)
        if names & EINOPS_FUNCTIONS:  # ``rearrange(t, "b n (h d) -> b h n d")``
            tensor = positional_or_keyword(call, 0, "tensor")
            return self.kind(tensor, where, depth + 1) if tensor is not None else None
        for name in names:
            module, short = name.rsplit(".", 1)
            if module + "." in TF_OP_NAMESPACES + KERAS_OP_NAMESPACES and short in DTYPE_PRESERVING_OPS:
                operands = self.operands(call) if self.combining(call) else []
                if not operands:
                    first = [a.value for a in call.args if a.keyword is None and not a.star]
                    operands = first[1:] if short == "einsum" else first[:1]
                if not operands:  # ``tf.transpose(a=x, perm=...)``
                    operands = [a.value for a in call.args
                                if a.keyword is not None and a.keyword.value in TENSOR_KEYWORDS][:1]
                kinds = set().union(*(self._operand_kinds(o, where, depth + 1) for o in operands)) - {None}
                if len(kinds) == 1:
                    return next(iter(kinds))
                if not module.startswith("keras.") and operands and all(
                        self._python_float(o, where) for o in operands):
                    return F32  # ``tf.sqrt(float(d))``: a Python float becomes a float32 tensor
                if kinds != {LOW, F32}:
                    return None
                # Keras 3 ops promote float16 with float32 to float32; a TensorFlow op
                # (or a Keras 2 backend function, which calls one) fails there
                # (reported), and once fixed its result is 16-bit
                return F32 if module.startswith("keras.ops") else LOW
        return None

    def _normalised(self, binding: Binding, name: str, depth: int) -> Optional[str]:
        """The kind after ``if K.dtype(x) != D: x = K.cast(x, D)`` (or ``x.dtype != D``):
        ``D`` on both paths, whatever ``x`` was before."""
        path = self._paths.get(binding.node)
        guard = self._guards.get(path[-1]) if path else None
        value = binding.value
        if guard is None or binding.kind != "assign" or not isinstance(value, cst.Call) or not value.args:
            return None
        names = self.ctx.names.resolve(value.func)
        dtype = self._dtype_argument(value, names) if names & CASTS else None
        first = value.args[0].value
        test = guard.test
        if dtype is None or not (isinstance(first, cst.Name) and first.value == name) \
                or not isinstance(test, cst.Comparison) or len(test.comparisons) != 1 \
                or not isinstance(test.comparisons[0].operator, (cst.NotEqual, cst.IsNot)):
            return None
        sides = (test.left, test.comparisons[0].comparator)
        code = self.ctx.module.code_for_node
        target = code(dtype)
        for read, other in (sides, sides[::-1]):
            if self._dtype_of(read, name) and code(other) == target:
                at = self.binding_where(binding)
                return self.dtype_kind(dtype, at, depth + 1) if at is not None else None
        return None

    def _filled_default(self, candidates: List[Binding], name: str) -> Optional[Binding]:
        """``def call(self, x, levels=None): if levels is None: levels = make()``: where
        the parameter is left at its default (no caller of the file passes it), the
        value is the one the ``if`` makes; that binding, else None."""
        if len(candidates) != 2:
            return None
        filled, param = candidates
        node = param.node
        if param.kind != "param" or not isinstance(node, cst.Param) or node.default is None \
                or not is_none(node.default) or any(key == id(node) for key, _, _ in self._env):
            return None
        path = self._paths.get(filled.node)
        guard = self._guards.get(path[-1]) if path else None
        test = guard.test if guard is not None else None
        if not isinstance(test, cst.Comparison) or len(test.comparisons) != 1 \
                or not isinstance(test.comparisons[0].operator, cst.Is) \
                or not (isinstance(test.left, cst.Name) and test.left.value == name) \
                or not is_none(test.comparisons[0].comparator):
            return None
        return filled if filled.kind == "assign" else None

    def _dtype_of(self, expr: cst.BaseExpression, name: str) -> bool:
        """``x.dtype`` or ``K.dtype(x)`` of the name ``name``."""
        if isinstance(expr, cst.Attribute) and expr.attr.value == "dtype":
            return isinstance(expr.value, cst.Name) and expr.value.value == name
        if isinstance(expr, cst.Call) and len(expr.args) == 1 and self.ctx.names.resolve(expr.func) & DTYPE_OF:
            argument = expr.args[0].value
            return isinstance(argument, cst.Name) and argument.value == name
        return False

    def _python_number_binding(self, binding: Binding, depth: int = 0) -> bool:
        """A name bound to a Python number (``l = math.ceil(n / m)``, ``d = 1.0``)."""
        at = self.binding_where(binding)
        return binding.kind == "assign" and binding.value is not None and at is not None \
            and self._python_number(binding.value, at, depth)

    def _python_number(self, expr: cst.BaseExpression, where: Where, depth: int) -> bool:
        if depth > MAX_DEPTH:
            return False
        found = self.ctx.values.values(expr, where.loc)
        if found:
            return all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in found)
        if isinstance(expr, cst.Call):
            func = expr.func
            if isinstance(func, cst.Name) and func.value in ("int", "float", "len", "round", "abs") \
                    and where.loc.lookup(func.value) is None:
                return True
            return bool(self.ctx.names.resolve(func) & PYTHON_NUMBER_FUNCTIONS)
        if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, ARITHMETIC):
            return self._python_number(expr.left, where, depth + 1) and self._python_number(expr.right, where, depth + 1)
        if isinstance(expr, cst.Name):
            found_at = self.assigned(expr, where)
            return found_at is not None and self._python_number(found_at[0], found_at[1], depth + 1)
        return False

    def _activation_attribute(self, func: cst.BaseExpression, where: Where) -> bool:
        """``self.<attr>`` that every assignment makes an activation function
        (``keras.activations.get(...)``, ``getattr(tf.nn, act)``, ``tf.nn.softmax``)."""
        if not (isinstance(func, cst.Attribute) and is_self(func.value)):
            return False
        values = self._attribute_values(func, where)
        return bool(values) and all(makes_activation(value, self.ctx, at.loc) for value, at in values or [])

    def _python_float(self, expr: cst.BaseExpression, where: Where) -> bool:
        """A Python float (a literal, a constant name, ``float(...)``): TensorFlow makes
        it a float32 tensor when no tensor gives it another dtype."""
        if isinstance(expr, cst.Call):
            return (isinstance(expr.func, cst.Name) and expr.func.value == "float"
                    and where.loc.lookup("float") is None)
        if isinstance(expr, cst.UnaryOperation):
            return self._python_float(expr.expression, where)
        found = self.ctx.values.values(expr, where.loc)
        return bool(found) and all(isinstance(v, float) for v in found)  # type: ignore[union-attr]

    def _dtype_argument(self, call: cst.Call, names: FrozenSet[str]) -> Optional[cst.BaseExpression]:
        return dtype_argument(call, names)

    def dtype_kind(self, expr: cst.BaseExpression, where: Where, depth: int = 0) -> Optional[str]:
        """LOW/F32 for an expression that names a dtype, else None."""
        if depth > MAX_DEPTH:
            return None
        if isinstance(expr, cst.Name) and self._env:
            index = self._passed_argument(expr, where)
            if index is not None:
                # the caller's argument, not the default (``float_mask(x, dtype=tf.int32)``,
                # ``make_grid(shape, dtype=self.dtype)``), judged where the caller passes
                # it; another module's argument (index -1) is not followed back
                if index < 0:
                    return None
                value, at, env = self._arguments[index]
                with self._under(env):
                    return self.dtype_kind(value, at, depth + 1)
        found = self.ctx.values.values(expr, where.loc)
        if found is not None:
            if found == frozenset({"float32"}):
                return F32
            if found and all(isinstance(v, str) and v in ("float16", "bfloat16") for v in found):
                return LOW
            return None
        if isinstance(expr, cst.Call):
            if self.ctx.names.resolve(expr.func) & FLOATX_FUNCTIONS and not expr.args:
                return F32 if self._floatx_is_float32() else None
            if self.ctx.names.resolve(expr.func) & {"tensorflow.as_dtype", "tensorflow.dtypes.as_dtype"} and expr.args:
                return self.dtype_kind(expr.args[0].value, where, depth + 1)
            return None
        if isinstance(expr, cst.Attribute):
            owner = expr.value
            attr = expr.attr.value
            if is_self(owner) or (
                isinstance(owner, cst.Attribute) and owner.attr.value in ("dtype_policy", "_dtype_policy")
                and is_self(owner.value)
            ):
                cls = where.loc.scope.enclosing_class()
                layer = self.regions.layer_class(cls.node) if cls is not None else None
                if layer is None or not layer.sixteen_bit:
                    return None
                if attr in COMPUTE_DTYPE_ATTRS:
                    return LOW
                if attr in VARIABLE_DTYPE_ATTRS:
                    return F32
                return None
            read_at = self._global_policy_read(owner, where)
            if read_at is not None:
                # global_policy().compute_dtype (or ``policy = global_policy()`` then
                # ``policy.compute_dtype``): only where the policy is read inside code that runs under it
                if not self._runs_mixed(where) or not self._runs_mixed(read_at):
                    return None
                return LOW if attr == "compute_dtype" else F32 if attr == "variable_dtype" else None
            if attr in ("dtype", "base_dtype"):
                return self.kind(owner, where, depth + 1)
            return None
        if isinstance(expr, cst.Name):
            binding, reaching = self.reaching(expr, where)
            if binding is None or not reaching or binding.value is None:
                return None
            if binding.kind not in ("assign", "annassign"):
                return None
            bw = self.binding_where(binding)
            return self.dtype_kind(binding.value, bw, depth + 1) if bw is not None else None
        return None

    def _runs_mixed(self, where: Where) -> bool:
        """Code that runs under the mixed policy: a 16-bit region, or a method of a layer
        class built under it (``build()`` runs when the model is built, under its policy)."""
        if self.region(where.loc) is not None:
            return True
        cls = where.loc.scope.enclosing_class()
        layer = self.regions.layer_class(cls.node) if cls is not None else None
        return layer is not None and layer.sixteen_bit

    def _global_policy_read(self, owner: cst.BaseExpression, where: Where) -> Optional[Where]:
        """Where the global policy ``owner`` stands for is read: ``global_policy()`` (or
        Keras 3's ``keras.config.dtype_policy()``) itself, or a name bound once to it that
        certainly reaches ``where`` (``policy = global_policy()``); None otherwise."""
        if isinstance(owner, cst.Call):
            return where if self.ctx.names.resolve(owner.func) & GLOBAL_POLICY_FUNCTIONS else None
        if not isinstance(owner, cst.Name):
            return None
        binding, reaching = self.reaching(owner, where)
        if binding is None or not reaching or binding.kind != "assign" or binding.scope is None \
                or len(binding.scope.bindings.get(binding.name, [])) != 1 or not isinstance(binding.value, cst.Call) \
                or not self.ctx.names.resolve(binding.value.func) & GLOBAL_POLICY_FUNCTIONS:
            return None
        return self.binding_where(binding)

    def _floatx_is_float32(self) -> bool:
        """``floatx()`` is float32 unless the file sets it to anything else (or to a
        value it cannot read)."""
        return all(site.values == frozenset({"float32"}) for site in self.ctx.facts.floatx_calls)

    def _passed_argument(self, name: cst.Name, where: Where) -> Optional[int]:
        """The index (in ``_arguments``) of the argument the call being followed passes
        for the parameter ``name``, -1 for another module's argument; None when ``name``
        is no parameter that call passes."""
        binding, _ = self.reaching(name, where)
        if binding is None or binding.kind != "param":
            return None
        for param, _, index in self._env:
            if param == id(binding.node):
                return index
        return None

    def takes_dtype(self, call: cst.Call) -> bool:
        """A creation or cast op whose dtype argument decides its result's dtype."""
        names = self.ctx.names.resolve(call.func)
        return bool(names & (CASTS | CONSTANTS | FLOAT32_BY_DEFAULT | LIKE_OPS | RANGE_OPS))

    def dtype_expression(self, call: cst.Call) -> Optional[cst.BaseExpression]:
        """The dtype argument of a creation or cast call, if it has one."""
        return self._dtype_argument(call, self.ctx.names.resolve(call.func))
