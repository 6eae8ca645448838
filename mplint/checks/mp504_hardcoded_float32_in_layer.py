"""MP504: a float32 tensor made in 16-bit layer code meets the layer's 16-bit tensors."""

from __future__ import annotations

import dataclasses
import os
import re
from typing import Dict, List, Optional, Set, Tuple

import libcst as cst

from mplint.analysis.custom_layers import CustomLayers
from mplint.analysis.compute_regions import ComputeRegions, is_call_override
from mplint.analysis.layers import sixteen_bit_name
from mplint.analysis.tensor_imports import crossings, handed_crossings
from mplint.analysis.tensor_kinds import LOW, Mismatch, TensorKinds, Where
from mplint.core.positions import positions_of
from mplint.rule.messages import snippet
from mplint.semantic.facts import PolicyState
from mplint.semantic.vocabulary import INPUT_FUNCTIONS
from mplint.semantic.scopes import Scope
from mplint.rule.check import Check, Fix, Needs
from mplint.rule.edits import with_keyword
from mplint.rule.levels import Safety


#: an import of TensorFlow anywhere in a file, a function's own too
_IMPORTS_TENSORFLOW = re.compile(r"^[ \t]*(?:import[ \t]+tensorflow\b|from[ \t]+tensorflow\b)", re.M)
#: the file picks a Keras 3 backend that promotes mixed dtypes (``os.environ["KERAS_BACKEND"] = "jax"``)
_OTHER_BACKEND = re.compile(r"""KERAS_BACKEND['"][^\n]*?['"](?:jax|torch|numpy|openvino)['"]""")

#: how TensorFlow's error message names the 16-bit dtypes
_TF_NAMES = {"float16": "half", "bfloat16": "bfloat16", "float16/bfloat16": "half (or bfloat16)"}


class HardcodedFloat32InLayer(Check):
    rule_id = "MP504"
    #: CustomLayers: the output dtype of a model called as a layer (``self.gen_model(x)``)
    requires = (ComputeRegions, TensorKinds, CustomLayers)

    #: only under a mixed policy
    needs = Needs(mixed_policy=True, library=True)

    def finish(self) -> None:
        policy = self.facts.library_policy()  # a library's layers: as its users run them
        if policy is None:
            return
        # Mixed dtypes only raise for TensorFlow tensors; Keras 3 on JAX or torch
        # promotes them. A file with no sign of TensorFlow stays silent.
        backend = self._tensorflow_backend()
        if backend is None:
            return
        kinds = self.ctx.get(TensorKinds)
        generation = self._generation_from_project()
        functional_ops_fail, keras3 = generation == 2, generation == 3
        reported: Set[Tuple[cst.CSTNode, int]] = set()
        #: (mismatch, origin, where, region kind, the policy reaching it)
        found: List[Tuple[Mismatch, cst.CSTNode, Where, str, PolicyState]] = []
        for site in kinds.sites:
            # the policy that reaches this code: a layer's methods run under a program's
            # policy only where a program builds the layer, not where it imports its module
            here = kinds.policy_reaching(self.facts, site.where.loc.scope)
            if here is None:
                continue  # none reaches it, or a library's private code: how it runs is its own
            region = kinds.region(site.where.loc)  # after the policy: it may read other modules
            # Functional model code is left out: Keras 3 promotes mixed KerasTensor
            # dtypes there instead of failing.
            if region is None or (region.kind == "functional" and not functional_ops_fail):
                continue
            for mismatch in kinds.mismatches_in_context(site):
                if keras3 and self._meets_variable(kinds, mismatch):
                    continue
                if mismatch.env and kinds.handed_at_caller(mismatch.env):
                    continue  # reported at the call in the other module (_report_handed there)
                made = kinds.origin_in_context(mismatch)
                if made is None or (made[0], id(site.where.loc.scope)) in reported:
                    continue  # one finding per tensor and function: at the first operation it fails in
                reported.add((made[0], id(site.where.loc.scope)))
                found.append((mismatch, made[0], made[1], "__call__" if is_call_override(region) else region.kind, here))
        lines = self._lines([node for m, origin, _, _, _ in found for node in (m.node, origin)])
        for mismatch, origin, where, region_kind, here in found:
            message = self._message(mismatch, origin, sixteen_bit_name(here.names), here.note, region_kind, lines,
                                    backend)
            in_layer = region_kind in ("layer", "__call__")
            self.report(mismatch.node, message, self._fix(origin, where, mismatch, in_layer),
                        noqa_at=(origin,))
        self._report_crossings(kinds, {origin for origin, _ in reported}, functional_ops_fail)

    def _report_crossings(self, kinds: TensorKinds, reported: Set[cst.CSTNode], functional_ops_fail: bool) -> None:
        """Float32 tensors this file hands to a function or layer of another module,
        where they meet 16-bit ones: reported where the tensor is made (the fix is
        there), naming the call and the operation that fails. Functional model code
        only where it is Keras 2 (Keras 3 promotes KerasTensors of mixed dtypes)."""
        for call, where in kinds.calls():
            here = kinds.policy_reaching(self.facts, where.loc.scope)
            region = None if here is None else kinds.region(where.loc)
            if region is None or (region.kind == "functional" and not functional_ops_fail) or here is None:
                continue
            compute, note = sixteen_bit_name(here.names), here.note
            self._report_handed(kinds, call, where, compute, note)
            for crossing in crossings(kinds, call, where):
                made = kinds.origin(crossing.argument, where)
                if made is None or made[0] in reported:
                    continue
                reported.add(made[0])
                origin, at = made
                lines = self._lines([origin, call])
                other = crossing.callee.kinds
                failing = crossing.mismatch.node
                far = positions_of(other.ctx.module, other.ctx.text, [failing]).get(failing)
                place = self._display(crossing.callee.path) + (f":{far.start.line}" if far is not None else "")
                line = lines.get(call)
                message = (f"`{self._snippet(origin)}` makes a float32 tensor that `{self._snippet(call)}`"
                           f"{f' (line {line})' if line is not None and line != lines.get(origin) else ''} "
                           f"passes as `{crossing.parameter}` to {crossing.callee.label} ({place}), where "
                           f"`{snippet(other.ctx.module.code_for_node(failing), 48)}` combines it with a "
                           f"{compute} tensor{note}: TensorFlow raises 'expected to be a "
                           f"{_TF_NAMES.get(compute, compute)} tensor but is a float tensor'; ")
                made_with_dtype = isinstance(origin, cst.Call) and kinds.takes_dtype(origin)
                in_layer = self._in_layer_method(at)
                spelling = "self.compute_dtype" if in_layer else self._low_argument_dtype(kinds, call, where)
                if made_with_dtype:
                    message += "create it in the compute dtype" + (f" ({spelling})" if spelling else "")
                else:
                    message += f"cast it to the compute dtype (tf.cast(..., {spelling or 'the compute dtype'}))"
                fix = self._dtype_fix(origin, "self.compute_dtype") if in_layer and isinstance(origin, cst.Call) else None
                self.report(origin, message, fix, noqa_at=(call,))

    @staticmethod
    def _low_argument_dtype(kinds: TensorKinds, call: cst.Call, where: Where) -> str:
        """``d1.dtype`` for the first argument of ``call`` that is a 16-bit name (the
        compute dtype, spelled where no layer's ``self`` has it), else ""."""
        for arg in call.args:
            if isinstance(arg.value, cst.Name) and kinds.kind(arg.value, where) == LOW:
                return f"{arg.value.value}.dtype"
        return ""

    def _report_handed(self, kinds: TensorKinds, call: cst.Call, where: Where, compute: str, note: str) -> None:
        """16-bit tensors this file hands to a function of another module, where a
        float32 tensor made there meets them: reported at the call (the other module's
        own code is correct for float32 inputs), naming the operation and the line that
        makes the float32 tensor there."""
        for crossing in handed_crossings(kinds, call, where):
            other = crossing.callee.kinds
            failing, origin = crossing.mismatch.node, crossing.origin
            far = positions_of(other.ctx.module, other.ctx.text, [failing, origin])
            path = self._display(crossing.callee.path)
            at = far.get(failing)
            made_at = far.get(origin)
            code = other.ctx.module.code_for_node
            message = (f"`{self._snippet(call)}` passes the {compute} tensor "
                       f"`{self._snippet(crossing.argument)}` as `{crossing.parameter}` to "
                       f"{crossing.callee.label} ({path}{f':{at.start.line}' if at is not None else ''}), where "
                       f"`{snippet(code(failing), 48)}` combines it with a float32 tensor made"
                       f"{f' at line {made_at.start.line}' if made_at is not None else ''} by "
                       f"`{snippet(code(origin), 48)}`{note}: TensorFlow raises 'expected to be a "
                       f"{_TF_NAMES.get(compute, compute)} tensor but is a float tensor'; make that "
                       f"tensor in the dtype of `{crossing.parameter}` there "
                       f"(dtype={crossing.parameter}.dtype)")
            self.report(call, message)

    def _display(self, path: str) -> str:
        root = self.facts.project_root
        return os.path.relpath(path, root) if root else os.path.basename(path)

    def _lines(self, nodes: List[cst.CSTNode]) -> Dict[cst.CSTNode, int]:
        """The first line of each node, to name where a tensor was made (not in a
        notebook, whose lines are counted per cell)."""
        if not nodes or self.ctx.path.endswith(".ipynb") or not self.ctx.text:
            return {}
        return {node: rng.start.line for node, rng in positions_of(self.ctx.module, self.ctx.text, nodes).items()}

    def _message(self, mismatch: Mismatch, origin: cst.CSTNode, compute: str, note: str, region: str,
                 lines: Dict[cst.CSTNode, int], backend: str = "") -> str:
        """Names the operation that fails, and where the float32 tensor was made."""
        line, at = lines.get(origin), lines.get(mismatch.node)
        where = f" at line {line}" if line is not None and line != at else ""
        caller = self.ctx.get(TensorKinds).foreign_caller(mismatch.env)
        called = f" (called with a {compute} tensor from {caller})" if caller is not None else ""
        fails = (f"`{self._snippet(mismatch.node)}` combines a {compute} tensor{called} with a float32 "
                 f"one{note}: TensorFlow raises 'expected to be a {_TF_NAMES.get(compute, compute)} "
                 f"tensor but is a float tensor'{backend}")
        if region == "functional":
            fails = (f"`{self._snippet(mismatch.node)}` combines a {compute} KerasTensor with a float32 "
                     f"one{note}: under Keras 2 the TensorFlow op raises a dtype error when the model "
                     f"is built (Keras 2 never promotes)")
        if isinstance(origin, cst.Call) and self.names.resolve(origin.func) & INPUT_FUNCTIONS:
            return (f"{fails}; the float32 one is the model input made{where} by `{self._snippet(origin)}`: "
                    f"cast it to the compute dtype first, or combine them with a Keras layer "
                    f"(Concatenate, Add), which casts its inputs")
        if self._is_variable(origin):
            # an overriding ``__call__`` skips Keras's autocast: an add_weight weight is
            # read in the compute dtype only inside ``call``
            where_read = ("call (this class overrides __call__, which Keras never autocasts: "
                          "rename it to call)" if region == "__call__" else "call")
            return (f"{fails}; the float32 one is a raw tf.Variable made{where} (`{self._snippet(origin)}`), "
                    f"never autocast: create the weight with self.add_weight, which Keras reads in "
                    f"the compute dtype inside {where_read}")
        spelling = "self.compute_dtype" if region in ("layer", "__call__") else "x.dtype"
        made = isinstance(origin, cst.Call) and self.ctx.get(TensorKinds).takes_dtype(origin)
        return (f"{fails}; the float32 one is made{where} by `{self._snippet(origin)}`: "
                + (f"create it in the compute dtype ({spelling})" if made
                   else f"cast it to the compute dtype (tf.cast(..., {spelling}))"))

    @staticmethod
    def _meets_variable(kinds: TensorKinds, mismatch: Mismatch) -> bool:
        """An operator whose operand is a Keras 3 variable (``x32 * self.scale``): the
        variable converts the other side to its own dtype, so nothing fails."""
        node = mismatch.node
        if not isinstance(node, (cst.BinaryOperation, cst.AugAssign)):
            return False
        sides = (node.left, node.right) if isinstance(node, cst.BinaryOperation) else (node.target, node.value)
        with kinds.under(mismatch.env):
            return any(side in (mismatch.f32, mismatch.low) and kinds.weight_read(side, mismatch.where)
                       for side in sides)

    def _is_variable(self, origin: cst.CSTNode) -> bool:
        return isinstance(origin, cst.Call) and "tensorflow.Variable" in self.names.resolve(origin.func)

    def _generation_from_project(self) -> Optional[int]:
        """The Keras generation the project's own evidence says, not the packages installed
        where mplint runs. Functional model code fails where it is Keras 2: a TensorFlow op
        on a float32 and a 16-bit KerasTensor raises when the model is built ('Tensors in
        list passed to 'values' of 'ConcatV2' Op have types [float32, float16]', tf_keras
        2.21, run), while Keras 3 promotes them."""
        answer = dataclasses.replace(self.facts.versions, installed=None).keras()
        return None if answer is None else answer.generation

    def _tensorflow_backend(self) -> Optional[str]:
        """Why the file's tensors are TensorFlow's ("" where the file itself says), or None.
        The file imports TensorFlow (at the top, or in the branch a Keras 3 module runs on
        the TensorFlow backend), or it is Keras 2 code (Keras 2 runs on TensorFlow only;
        ``from keras import backend as K`` with ``K.tf.matmul``). Keras 3 code that imports
        only ``keras`` runs on TensorFlow where its project requires TensorFlow, Keras 3's
        default backend, and the file picks no other."""
        aliases = self.names.module_scope.aliases
        if self.facts.keras_version == 2 or _IMPORTS_TENSORFLOW.search(self.ctx.text) is not None or any(
            t == "tensorflow" or t.startswith(("tensorflow.", "tf_keras"))
            for targets in aliases.values() for t in targets
        ) or any(f"{alias}.tf." in self.ctx.text for alias, targets in aliases.items() if "keras.backend" in targets):
            return ""
        pin = self.facts.versions.tensorflow_requirement()
        if pin is None or _OTHER_BACKEND.search(self.ctx.text) is not None:
            return None
        return f" (TensorFlow is Keras 3's default backend, and the project requires it: {pin.describe()})"

    def _snippet(self, node: cst.CSTNode) -> str:
        return snippet(self.ctx.module.code_for_node(node), 48)

    def _fix(self, origin: cst.CSTNode, where: Where, mismatch: Mismatch, in_layer: bool) -> Optional[Fix]:
        if not isinstance(origin, cst.Call):
            return None  # a raw tf.Variable: use add_weight instead (no mechanical fix)
        kinds = self.ctx.get(TensorKinds)
        if not kinds.takes_dtype(origin):
            return None  # a variable, ``tf.fill``, ``tf.image.resize``, ``tf.sqrt(2.0)``: no dtype to set
        dtype = self._dtype_spelling(where, mismatch, in_layer)
        return None if dtype is None else self._dtype_fix(origin, dtype)

    def _dtype_fix(self, origin: cst.Call, dtype: str) -> Optional[Fix]:
        """Make the tensor in ``dtype``: its dtype argument replaced, or one added."""
        kinds = self.ctx.get(TensorKinds)
        if not kinds.takes_dtype(origin):
            return None
        current = kinds.dtype_expression(origin)
        if current is not None:
            new = cst.parse_expression(dtype)
            return Fix({origin: origin.deep_replace(current, new)}, safety=Safety.UNSAFE)
        return Fix({origin: with_keyword(origin, "dtype", cst.parse_expression(dtype))}, safety=Safety.UNSAFE)

    def _in_layer_method(self, where: Where) -> bool:
        scope: Optional[Scope] = where.loc.scope
        while scope is not None and not (scope.kind == "function" and scope.parent is not None
                                         and scope.parent.kind == "class"):
            scope = scope.parent
        if scope is None or scope.parent is None or not isinstance(scope.node, cst.FunctionDef):
            return False
        params = scope.node.params.params
        return (bool(params) and params[0].name.value == "self"
                and self.ctx.get(ComputeRegions).layer_class(scope.parent.node) is not None)

    def _dtype_spelling(self, where: Where, mismatch: Mismatch, in_layer: bool) -> Optional[str]:
        if in_layer:
            # ``self`` must be a layer where the tensor is made (a helper function of
            # the module, or a non-layer class, has no compute dtype to read)
            return "self.compute_dtype" if self._in_layer_method(where) else None
        low = mismatch.low
        kinds = self.ctx.get(TensorKinds)
        if isinstance(low, cst.Name) and kinds.kind(low, mismatch.where) == LOW:
            at_use, _ = kinds.reaching(low, mismatch.where)
            at_origin, reaching = kinds.reaching(low, where)
            if at_use is not None and at_use is at_origin and reaching:
                return f"{low.value}.dtype"
        return None
