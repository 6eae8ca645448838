"""MP408: a trainable variable created with an explicit 16-bit dtype under a mixed policy."""

from __future__ import annotations

from typing import Dict, List, Optional, Set, Tuple

import libcst as cst

from mplint.analysis.compute_regions import ComputeRegions
from mplint.analysis.tensor_kinds import LOW, TensorKinds, Where
from mplint.analysis.weight_dtype_params import DtypeParam, WeightDtypeParams, imported_dtype_params
from mplint.rule.check import Check, Context, Fix, Needs
from mplint.rule.edits import arg_index, without_arg
from mplint.rule.levels import Safety
from mplint.semantic.call_args import keyword_only, positional_or_keyword
from mplint.semantic.base_inits import own_init
from mplint.semantic.scopes import Scope, class_chain, class_scope_of, is_super, trains_nothing
from mplint.semantic.vocabulary import names_tensorflow
from mplint.semantic.vocabulary import VARIABLE_CONSTRUCTORS, VARIABLE_CREATOR_SCOPES, VARIABLE_SCOPES, WEIGHT_LAYERS

#: where ``dtype`` stands among the positional arguments
_VARIABLE_DTYPE_POSITION = 5  # tf.Variable(initial_value, trainable, validate_shape, caching_device, name, ..., dtype)
_ADD_WEIGHT_DTYPE_POSITION = 2  # add_weight(name|shape, shape|initializer, dtype, ...) in Keras 2 and 3


class SixteenBitTrainableVariable(Check):
    rule_id = "MP408"
    requires = (ComputeRegions, TensorKinds, WeightDtypeParams)

    #: only under a mixed policy
    needs = Needs(mixed_policy=True)

    def __init__(self, ctx: Context) -> None:
        super().__init__(ctx)
        #: (call, is add_weight, where)
        self._created: List[Tuple[cst.Call, bool, Where]] = []
        #: open ``with`` blocks that decide how variables are created (float32 master weights)
        self._creator_scopes = 0
        #: variable constructions read at once (``tf.Variable(...).numpy()``): no variable is kept
        self._read_at_once: Set[int] = set()
        #: (a Keras layer's construction, its ``dtype`` argument, where): a sublayer built in the compute dtype
        self._layer_dtypes: List[Tuple[cst.Call, cst.BaseExpression, Where]] = []
        #: calls that may bind a layer class's ``__init__`` parameters: constructions and a
        #: subclass's ``super().__init__(...)`` (see :mod:`weight_dtype_params`)
        self._binders: List[Tuple[cst.Call, Where]] = []

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if isinstance(node.value, cst.Call):
            self._read_at_once.add(id(node.value))

    def visit_With(self, node: cst.With) -> None:
        self._creator_scopes += self._keeps_master_weights(node)

    def leave_With(self, node: cst.With) -> None:
        self._creator_scopes -= self._keeps_master_weights(node)

    def _keeps_master_weights(self, node: cst.With) -> int:
        return int(any(isinstance(item.item, cst.Call)
                       and self.names.resolve(item.item.func) & (VARIABLE_CREATOR_SCOPES | VARIABLE_SCOPES)
                       for item in node.items))

    def visit_Call(self, node: cst.Call) -> None:
        if self._creator_scopes:
            return
        func = node.func
        add_weight = isinstance(func, cst.Attribute) and func.attr.value == "add_weight"
        resolved = self.names.resolve(func)
        if node.args and isinstance(func, (cst.Name, cst.Attribute)) and not names_tensorflow(resolved) \
                and not add_weight:
            self._binders.append((node, self.ctx.get(TensorKinds).here()))
        if add_weight or resolved & VARIABLE_CONSTRUCTORS:
            self._created.append((node, add_weight, self.ctx.get(TensorKinds).here()))
        elif resolved & WEIGHT_LAYERS:
            dtype = next((arg.value for arg in node.args if arg.keyword is not None and arg.keyword.value == "dtype"),
                         None)
            if dtype is not None:
                self._layer_dtypes.append((node, dtype, self.ctx.get(TensorKinds).here()))

    def finish(self) -> None:
        kinds = self.ctx.get(TensorKinds)
        for call, add_weight, where in self._created:
            if id(call) in self._read_at_once:
                continue
            policy = self.facts.mixed_policy(where.loc.scope)
            if policy is None:
                continue
            dtype = positional_or_keyword(
                call, _ADD_WEIGHT_DTYPE_POSITION if add_weight else _VARIABLE_DTYPE_POSITION, "dtype")
            initial = None if add_weight or dtype is not None else positional_or_keyword(call, 0, "initial_value")
            if initial is not None and kinds.kind(initial, where) == LOW:
                dtype = initial  # ``tf.Variable(tf.zeros(n, dtype=tf.float16))``: its initial value's dtype
            elif dtype is None or kinds.dtype_kind(dtype, where) != LOW:
                continue  # no dtype: the policy's variable dtype (float32); unknown: silent
            if not self._trainable(call, add_weight, where):
                continue
            if trains_nothing(where.loc.scope, self.ctx.module, self.ctx.path):
                continue  # a test that checks dtypes and trains nothing
            spelled = " ".join(self.ctx.module.code_for_node(dtype).split())
            if dtype is initial:
                spelled = f"float16/bfloat16 (from its initial value `{_short(spelled)}`)"
            if add_weight:
                advice = ("leave dtype out: the weight is then float32 (the policy's variable dtype) and "
                          "Keras reads it in the compute dtype inside call()")
            else:
                advice = ("create it with add_weight() in a layer (float32, read in the compute dtype "
                          "inside call()), or keep it float32 and cast it where it is used")
            self.report(call, f"a trainable variable created with dtype {spelled} under a mixed "
                               f"policy{policy.note}: the optimizer updates it in 16 bits, so updates "
                               f"smaller than about 1/1000 of the weight round away (float16 1.0 + 1e-4 "
                               f"is 1.0); mixed precision keeps variables in float32; {advice}",
                        None if dtype is initial else self._fix(call, add_weight))

        self._sublayers_in_compute_dtype(kinds)
        self._dtype_arguments(kinds)

    def _dtype_arguments(self, kinds: TensorKinds) -> None:
        """A 16-bit dtype handed to a layer class's ``__init__`` parameter that becomes a
        trainable weight's dtype there (``super().__init__(weight_dtype="float16", **kw)``
        of a subclass, ``BaseBlock(weight_dtype="float16")``), the class in this module or
        another: reported at the call, where the policy is known."""
        for call, where in self._binders:
            if not any(kinds.dtype_kind(arg.value, where) == LOW for arg in call.args if not arg.star):
                continue  # no 16-bit dtype handed: no other module need be read
            target = self._bound_params(call, where)
            if target is None:
                continue
            params, offset, cls = target
            for param in params.values():
                value = _argument(call, param, offset)
                if value is None or kinds.dtype_kind(value, where) != LOW:
                    continue
                if cls is not None and not self._inherited_as_is(cls, param):
                    continue
                policy = self.facts.mixed_policy(where.loc.scope)
                if policy is None or trains_nothing(where.loc.scope, self.ctx.module, self.ctx.path):
                    continue
                spelled = _short(" ".join(self.ctx.module.code_for_node(value).split()))
                self.report(call, f"`{param.name}={spelled}` makes `{param.owner}` create a trainable variable "
                                  f"in that 16-bit dtype (add_weight at {param.made_at}) under a mixed "
                                  f"policy{policy.note}: the optimizer updates it in 16 bits, so updates "
                                  f"smaller than about 1/1000 of the weight round away (float16 1.0 + 1e-4 "
                                  f"is 1.0); mixed precision keeps variables in float32; leave the dtype out "
                                  f"or pass float32")

    def _bound_params(self, call: cst.Call, where: Where
                      ) -> Optional[Tuple[Dict[str, DtypeParam], int, Optional[Scope]]]:
        """The dtype parameters ``call`` binds, how many of the ``__init__``'s leading
        parameters the call's own arguments skip, and the class of this module whose
        ``__init__`` makes the call (a ``super().__init__``), else None."""
        func = call.func
        weights = self.ctx.get(WeightDtypeParams)
        if isinstance(func, cst.Attribute) and func.attr.value == "__init__":
            cls = where.loc.scope.enclosing_class()
            init = own_init(cls) if cls is not None else None
            if cls is None or init is None or where.loc.scope.node is not init \
                    or not isinstance(cls.node, cst.ClassDef) or len(cls.node.bases) != 1:
                return None
            base = cls.node.bases[0].value
            if is_super(func.value):
                offset = 0
            elif isinstance(func.value, cst.Name) and dotted_name_of(base) == func.value.value and call.args \
                    and isinstance(call.args[0].value, cst.Name) and call.args[0].value.value == "self":
                offset = 1
            else:
                return None
            chain = class_chain(cls)
            if len(chain) > 1:
                return weights.params_of(chain[1]), offset, cls
            return imported_dtype_params(self.ctx, base), offset, cls
        local = class_scope_of(func, where.loc)
        if local is not None:
            return weights.params_of(local), 0, None
        head = dotted_name_of(func).partition(".")[0]
        if not head or where.loc.lookup(head) is not None:
            return None  # a local object or function, not an imported class
        return imported_dtype_params(self.ctx, func), 0, None

    @staticmethod
    def _inherited_as_is(cls: Scope, param: DtypeParam) -> bool:
        """The subclass making the ``super().__init__`` call keeps the base's weight: it
        neither overrides the method that makes it nor stores ``self.<attr>`` itself."""
        if not isinstance(cls.node, cst.ClassDef) or not isinstance(cls.node.body, cst.IndentedBlock):
            return False
        if param.method != "__init__" and cls.bindings.get(param.method):
            return False
        return not (param.attr and cls.attributes.get(param.attr))

    def _sublayers_in_compute_dtype(self, kinds: TensorKinds) -> None:
        """A Keras layer built with the compute dtype another expression names
        (``Conv2D(..., dtype=self.compute_dtype)`` in a layer's ``__init__``): under the
        mixed policy that dtype is float16/bfloat16, a pure 16-bit policy for the
        sublayer, whose weights are 16-bit variables. A dtype spelled as a value
        (``dtype="float16"``) is MP404's; one that cannot be read stays silent."""
        for layer, dtype, where in self._layer_dtypes:
            policy = self.facts.mixed_policy(where.loc.scope)
            if policy is None or self.ctx.values.values(dtype, where.loc) is not None:
                continue
            if kinds.dtype_kind(dtype, where) != LOW or trains_nothing(where.loc.scope, self.ctx.module, self.ctx.path):
                continue
            spelled = _short(" ".join(self.ctx.module.code_for_node(dtype).split()))
            self.report(layer, f"a layer built with dtype `{spelled}`, the 16-bit compute dtype under a mixed "
                               f"policy{policy.note}: that dtype is a pure float16/bfloat16 policy for the "
                               f"layer, so its weights are 16-bit variables the optimizer updates in 16 bits "
                               f"(updates smaller than about 1/1000 of a weight round away); leave dtype out "
                               f"so the layer takes the mixed policy (float32 variables, 16-bit compute)")

    def _trainable(self, call: cst.Call, add_weight: bool, where: Where) -> bool:
        """Whether the variable is certainly trainable: ``trainable=True`` given or the
        default. A raw variable counts only where it is a layer's weight (made in a
        Keras layer or model class) or said to be trainable: elsewhere it is often a
        buffer or a counter that no optimizer updates."""
        flag = keyword_only(call, "trainable")
        if flag is None and not add_weight:
            flag = positional_or_keyword(call, 1, "trainable")
        if flag is not None:
            return self.ctx.values.values(flag, where.loc) == frozenset({True})
        if add_weight:
            return True
        cls = where.loc.scope.enclosing_class()
        return cls is not None and self.ctx.get(ComputeRegions).layer_class(cls.node) is not None

    def _fix(self, call: cst.Call, add_weight: bool) -> Optional[Fix]:
        """``add_weight(..., dtype=...)`` without its dtype: float32 under the policy,
        read in the compute dtype inside ``call``. A raw variable has no such reading."""
        if not add_weight or "#" in self.ctx.module.code_for_node(call):
            return None  # a comment among the arguments could be lost with the dtype's comma
        index = arg_index(list(call.args), _ADD_WEIGHT_DTYPE_POSITION, "dtype")
        if index is None or call.args[index].keyword is None:
            return None
        return Fix({call: call.with_changes(args=without_arg(list(call.args), index))}, safety=Safety.UNSAFE)


def _argument(call: cst.Call, param: DtypeParam, offset: int) -> Optional[cst.BaseExpression]:
    """What ``call`` passes the parameter: its keyword, else the argument at its position
    (after ``offset`` leading ones) when no ``*args`` comes before; None when not passed
    or unreadable."""
    found = keyword_only(call, param.name)
    if found is not None or param.position < 0:
        return found
    index = param.position + offset
    positional = [arg for arg in call.args if arg.keyword is None]
    if any(arg.star for arg in positional[:index + 1]) or index >= len(positional):
        return None
    return positional[index].value


def dotted_name_of(expr: cst.BaseExpression) -> str:
    """``a.b.C`` as written ("" for anything else)."""
    if isinstance(expr, cst.Name):
        return expr.value
    if isinstance(expr, cst.Attribute):
        head = dotted_name_of(expr.value)
        return f"{head}.{expr.attr.value}" if head else ""
    return ""


def _short(code: str, limit: int = 40) -> str:
    return code if len(code) <= limit else code[:limit] + "..."
