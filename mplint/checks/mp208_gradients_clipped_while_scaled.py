"""MP208: gradients clipped while they are still multiplied by the loss scale.

Keras 2: a clip before ``get_unscaled_gradients``. Keras 3: any clip between
``tape.gradient`` of a ``scale_loss`` result and the LossScaleOptimizer's
``apply``/``apply_gradients``, which unscale only inside. The fixes move the
clipping after the unscaling: Keras 2 swaps two adjacent statements; Keras 3 hands
the threshold to the inner optimizer (``global_clipnorm``/``clipnorm``/``clipvalue``),
which clips after ``apply()`` has unscaled.
"""

from __future__ import annotations

import os
from typing import Dict, Iterator, List, Optional, Sequence, Tuple

import libcst as cst

from mplint.analysis.training import (
    COMPILED, FACTOR, LSO, PLAIN, UNSCALE_METHOD, Clip, OptimizerOrigin, TrainingLoops, TrainStep,
    compiled_is_wrapped, contains,
)
from mplint.core.walker import child_nodes
from mplint.rule.check import Check, Fix, Needs, Replacement
from mplint.rule.edits import with_keyword
from mplint.rule.levels import Safety
from mplint.semantic.call_args import keyword_only, positional_or_keyword
from mplint.semantic.scopes import Location

#: clip function (canonical, without the package) -> the optimizer argument doing the same after unscaling
_OPTIMIZER_CLIPS = {"clip_by_global_norm": "global_clipnorm", "clip_by_norm": "clipnorm",
                    "clip_by_value": "clipvalue", "clip": "clipvalue"}
_CLIP_ARGUMENTS = ("clipnorm", "clipvalue", "global_clipnorm")


class GradientsClippedWhileScaled(Check):
    rule_id = "MP208"
    requires = (TrainingLoops,)

    #: Keras 2 unscales with get_unscaled_gradients, Keras 3 scales with scale_loss; the clip may
    #: be a function of another module, named anything (``imported_clips``)
    needs = Needs((b"get_unscaled_gradients", b"scale_loss"))

    def finish(self) -> None:
        loops = self.ctx.get(TrainingLoops)
        version = self.facts.keras_version
        seen: set = set()
        for step in loops.steps():
            generation = self._generation(loops, step, version)
            if generation is None:
                continue
            for clip in step.clips:
                if clip.after_unscaling or not clip.scaled or id(clip.call) in seen:
                    continue
                seen.add(id(clip.call))
                self._report(loops, step, clip, generation)

    @staticmethod
    def _generation(loops: TrainingLoops, step: TrainStep, version: object) -> Optional[int]:
        """Which generation's bookkeeping the step follows, when its gradients are scaled for certain."""
        if step.method == "minimize":
            return None
        if "get_scaled_loss" in step.scaling and step.unscaled and version != 3:
            return 2  # without any unscaling it is MP203's finding
        kinds = step.kinds
        if "scale_loss" in step.scaling and version != 2 and kinds:
            if kinds <= {LSO, FACTOR}:
                return 3
            if LSO in kinds and kinds <= {LSO, PLAIN}:
                # wrapped only on some runs (``if FLAGS.fp16: opt = LossScaleOptimizer(opt)``):
                # a plain optimizer's scale_loss() is the loss itself, the wrapped one's scales
                return 3
            if kinds == {COMPILED} and compiled_is_wrapped(loops.ctx, loops, step.location.scope):
                return 3
        return None

    def _report(self, loops: TrainingLoops, step: TrainStep, clip: Clip, generation: int) -> None:
        clip_name = f"`{self.ctx.module.code_for_node(clip.call.func)}`"
        if clip.helper is not None:  # a function of another module clips them
            clip_name += f" (`{clip.helper.clip}` in {os.path.basename(clip.helper.path)})"
        optimizer = self.ctx.module.code_for_node(step.receiver)
        factor = generation == 3 and step.kinds == {FACTOR}
        scale = "the optimizer's loss_scale_factor" if factor else "the loss scale (32768 at first, then changing)"
        effect = (f"{clip_name} clips gradients still multiplied by {scale}, so it clips at 1/scale "
                  f"of the threshold written")
        if generation == 2:
            advice = f"call `{optimizer}.get_unscaled_gradients()` before clipping"
            fix = _keras2_fix(self.ctx.module, step, clip) if clip.helper is None else None
        else:
            function = clip.helper.clip if clip.helper is not None else _function(clip.call, loops)
            keyword = _OPTIMIZER_CLIPS.get(function, "global_clipnorm")
            which = "the optimizer" if factor else "the inner optimizer"
            advice = (f"`{optimizer}.{step.method}()` unscales only after this clip; pass `{keyword}=` "
                      f"to {which} instead, which clips after unscaling")
            fix = _keras3_fix(loops, step, clip) if clip.helper is None else None
        self.report(clip.call, f"{effect}; {advice}", fix)


def _function(call: cst.Call, loops: TrainingLoops) -> str:
    """``clip_by_global_norm``, ``clip_by_norm``, ``clip_by_value`` or ``clip``."""
    names = loops.call_names.get(id(call), frozenset())
    return min(name.rsplit(".", 1)[-1] for name in names) if names else ""


# -- where statements sit -------------------------------------------------------------
def _blocks(root: cst.CSTNode) -> Iterator[cst.IndentedBlock]:
    """Every indented block under ``root`` (function bodies, ``with`` and ``if`` blocks)."""
    stack = [root]
    while stack:
        node = stack.pop()
        if isinstance(node, cst.IndentedBlock):
            yield node
        stack.extend(child_nodes(node))


def _statement(root: cst.CSTNode, node: cst.CSTNode) -> Optional[Tuple[cst.IndentedBlock, int]]:
    """The block holding the simple statement around ``node``, and its index there."""
    for block in _blocks(root):
        for i, statement in enumerate(block.body):
            if isinstance(statement, cst.SimpleStatementLine) and contains(statement, node):
                return block, i
    return None


def _names_in(node: cst.CSTNode, name: str) -> List[cst.Name]:
    out: List[cst.Name] = []
    stack = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, cst.Name) and current.value == name:
            out.append(current)
        elif isinstance(current, cst.Attribute):
            stack.append(current.value)  # `x.grads` is not the name `grads`
        else:
            stack.extend(child_nodes(current))
    return out


def _read_after(root: cst.CSTNode, statement: cst.CSTNode, name: str) -> bool:
    """Whether ``name`` occurs in a statement of ``root`` after ``statement`` (in source order)."""
    passed = False
    for node in _simple_statements(root):
        if passed and _names_in(node, name):
            return True
        if node is statement:
            passed = True
    return False


def _simple_statements(root: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """Simple statements and compound statements' headers, in source order."""
    stack = [root]
    while stack:
        node = stack.pop()
        if isinstance(node, cst.SimpleStatementLine):
            yield node
            continue
        if isinstance(node, (cst.If, cst.While)):
            yield node.test
        elif isinstance(node, cst.For):
            yield node.iter
        elif isinstance(node, cst.With):
            for item in node.items:
                yield item.item
        stack.extend(reversed(list(child_nodes(node))))


def _single_assign(statement: cst.BaseStatement) -> Optional[cst.Assign]:
    if isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1 \
            and isinstance(statement.body[0], cst.Assign) and len(statement.body[0].targets) == 1:
        return statement.body[0]
    return None


def _target_names(assign: cst.Assign) -> List[str]:
    target = assign.targets[0].target
    elements = [e.value for e in target.elements] if isinstance(target, (cst.Tuple, cst.List)) else [target]
    return [e.value if isinstance(e, cst.Name) else "" for e in elements]


def _clipped_input(call: cst.Call, value: cst.BaseExpression) -> Optional[cst.Name]:
    """The name of the gradients the clip reads: its first argument, or what a
    comprehension around it iterates over (``[clip(g) for g in grads]``)."""
    first = positional_or_keyword(call, 0, "t_list") or keyword_only(call, "t") or keyword_only(call, "x")
    if not isinstance(first, cst.Name):
        return None
    if isinstance(value, (cst.ListComp, cst.GeneratorExp)) and value.for_in.inner_for_in is None:
        targets = [n.value for n in _names_in_expression(value.for_in.target)]
        if first.value in targets:
            return value.for_in.iter if isinstance(value.for_in.iter, cst.Name) else None
        return None
    return first


def _names_in_expression(node: cst.CSTNode) -> List[cst.Name]:
    if isinstance(node, cst.Name):
        return [node]
    return [n for child in child_nodes(node) for n in _names_in_expression(child)]


class _Rename(cst.CSTTransformer):
    """Replaces given Name nodes (by identity) with another name."""

    def __init__(self, nodes: Sequence[cst.Name], new: str) -> None:
        super().__init__()
        self.ids = {id(n) for n in nodes}
        self.new = new

    def leave_Name(self, original_node: cst.Name, updated_node: cst.Name) -> cst.Name:
        return updated_node.with_changes(value=self.new) if id(original_node) in self.ids else updated_node


# -- Keras 2: unscale first ---------------------------------------------------------------
def _keras2_fix(module: cst.Module, step: TrainStep, clip: Clip) -> Optional[Fix]:
    """Swap ``clipped = clip(grads)`` and the ``get_unscaled_gradients(clipped)`` right after it."""
    function = clip.location.scope.node
    found = _statement(function, clip.call)
    if found is None:
        return None
    block, index = found
    body = block.body
    clip_statement = body[index]
    clip_assign = _single_assign(clip_statement)
    if clip_assign is None or index + 1 >= len(body):
        return None
    unscale_statement = body[index + 1]
    unscale_assign = _single_assign(unscale_statement)
    if unscale_assign is None or not isinstance(unscale_assign.targets[0].target, cst.Name):
        return None
    unscale = unscale_assign.value
    if not (isinstance(unscale, cst.Call) and isinstance(unscale.func, cst.Attribute)
            and unscale.func.attr.value == UNSCALE_METHOD and len(unscale.args) == 1
            and isinstance(unscale.args[0].value, cst.Name) and any(unscale is u for u in step.unscale_calls)):
        return None
    clipped_name = unscale.args[0].value.value
    targets = _target_names(clip_assign)
    source = _clipped_input(clip.call, clip_assign.value)
    if clipped_name not in targets or source is None:
        return None
    if len(_names_in(clip_assign.value, source.value)) != 1:
        return None  # the scaled gradients are read twice by the clip (a norm of them, say)
    result = unscale_assign.targets[0].target.value
    if clipped_name != result and _read_after(function, unscale_statement, clipped_name):
        return None  # something else reads the clipped, still scaled gradients
    # unscale the clip's input where the clip was ...
    new_unscale = unscale_statement.with_changes(body=[unscale_assign.with_changes(
        value=unscale.with_changes(args=[unscale.args[0].with_changes(value=cst.Name(source.value))]))])
    # ... then clip the unscaled gradients into the name the unscaling bound
    target = clip_assign.targets[0].target
    renamed_targets = [n for n in _names_in_expression(target) if n.value == clipped_name]
    new_clip = clip_statement.visit(_Rename([source, *renamed_targets], result))
    others = [t for t in targets if t not in ("", "_", clipped_name)]
    safety = Safety.UNSAFE if any(_read_after(function, clip_statement, t) for t in others) else Safety.SAFE
    assert isinstance(new_clip, cst.SimpleStatementLine)
    # one replacement for the block: each statement keeps its own comments as it moves
    swapped = [*body[:index], new_unscale, new_clip, *body[index + 2:]]
    replacements: Dict[cst.CSTNode, Replacement] = {block: block.with_changes(body=swapped)}
    return Fix(replacements, safety=safety)


# -- Keras 3: the inner optimizer clips ---------------------------------------------------
def _keras3_fix(loops: TrainingLoops, step: TrainStep, clip: Clip) -> Optional[Fix]:
    constructor = _constructor(step)
    if constructor is None or any(keyword_only(constructor[0], k) is not None for k in _CLIP_ARGUMENTS):
        return None  # Keras 3 accepts one clip argument only
    call, where = constructor
    if any(other is not step and any(o.call is call for o in _all_origins(other)) for other in loops.steps()):
        return None  # the optimizer also serves another update
    function = clip.location.scope.node
    if not isinstance(function, cst.FunctionDef) or not isinstance(function.body, cst.IndentedBlock):
        return None
    body = function.body.body
    statement = next((s for s in body if isinstance(s, cst.SimpleStatementLine) and contains(s, clip.call)), None)
    assign = _single_assign(statement) if statement is not None else None
    if statement is None or assign is None or len(body) < 2:
        return None  # clipped only on some path (inside an `if`), or not as a plain statement
    keyword_value = _threshold(loops, clip, assign, where)
    if keyword_value is None:
        return None
    keyword, value = keyword_value
    targets = _target_names(assign)
    source = _clipped_input(clip.call, assign.value)
    if source is None or not targets or targets[0] != source.value:
        return None  # removing the clip must leave the gradients under the same name
    if any(_read_after(function, statement, t) for t in targets[1:] if t not in ("", "_")):
        return None  # the global norm is used (logged, say)
    index = next(i for i, s in enumerate(body) if s is statement)
    if index + 1 >= len(body) or contains(body[index + 1], call):
        return None
    following = body[index + 1]
    if not isinstance(following, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
        return None
    replacements: Dict[cst.CSTNode, Replacement] = {
        call: with_keyword(call, keyword, value),
        statement: cst.RemoveFromParent(),
    }
    moved = _comment_lines(statement)
    if moved:  # the clip's comments stay, on their own lines above the next statement
        replacements[following] = following.with_changes(leading_lines=[*moved, *following.leading_lines])
    return Fix(replacements, safety=Safety.UNSAFE)


def _comment_lines(statement: cst.SimpleStatementLine) -> List[cst.EmptyLine]:
    """The statement's comments as lines of their own: those above it, then its trailing one."""
    lines = [line for line in statement.leading_lines if line.comment is not None]
    comment = statement.trailing_whitespace.comment
    if comment is not None:
        lines.append(cst.EmptyLine(comment=comment))
    return lines


def _all_origins(step: TrainStep) -> Iterator[OptimizerOrigin]:
    for origin in step.origins:
        yield origin
        yield from origin.inner


def _constructor(step: TrainStep) -> Optional[Tuple[cst.Call, Location]]:
    """The optimizer constructor call that should take the clip argument."""
    if len(step.origins) != 1:
        return None
    origin = step.origins[0]
    if origin.kind == LSO and len(origin.inner) == 1 and origin.inner[0].kind == PLAIN:
        origin = origin.inner[0]
    elif origin.kind != FACTOR:
        return None
    if origin.call is None or origin.location is None:
        return None
    name = _last_name(origin.call.func)
    if name is None or not name[:1].isupper():
        return None  # optimizers.get("adam") takes no clipping arguments
    return origin.call, origin.location


def _last_name(func: cst.BaseExpression) -> Optional[str]:
    if isinstance(func, cst.Name):
        return func.value
    if isinstance(func, cst.Attribute):
        return func.attr.value
    return None


def _threshold(loops: TrainingLoops, clip: Clip, assign: cst.Assign,
               constructor: Location) -> Optional[Tuple[str, cst.BaseExpression]]:
    """``(keyword, value)`` for the optimizer, when the clip has one the optimizer means the same by."""
    function = _function(clip.call, loops)
    call = clip.call
    comprehension = isinstance(assign.value, (cst.ListComp, cst.GeneratorExp))
    if function == "clip_by_global_norm":
        value = positional_or_keyword(call, 1, "clip_norm")
        whole = assign.value is call or (
            isinstance(assign.value, cst.Subscript) and assign.value.value is call
            and _index_zero(assign.value))
        if not whole or comprehension:
            return None
    elif function == "clip_by_norm":
        value = positional_or_keyword(call, 1, "clip_norm")
        if not comprehension or positional_or_keyword(call, 2, "axes") is not None:
            return None
    elif function in ("clip_by_value", "clip"):
        low = positional_or_keyword(call, 1, "clip_value_min" if function == "clip_by_value" else "x_min")
        high = positional_or_keyword(call, 2, "clip_value_max" if function == "clip_by_value" else "x_max")
        if not comprehension or low is None or high is None or not _negation_of(low, high):
            return None  # clipvalue clips to [-v, v] only
        value = high
    else:
        return None
    if value is None or not _movable(value, clip.location, constructor):
        return None
    return _OPTIMIZER_CLIPS[function], value


def _index_zero(subscript: cst.Subscript) -> bool:
    if len(subscript.slice) != 1:
        return False
    index = subscript.slice[0].slice
    return isinstance(index, cst.Index) and isinstance(index.value, cst.Integer) and index.value.value == "0"


def _negation_of(low: cst.BaseExpression, high: cst.BaseExpression) -> bool:
    """``-v`` and ``v`` (a number or a name)."""
    if not (isinstance(low, cst.UnaryOperation) and isinstance(low.operator, cst.Minus)):
        return False
    inner = low.expression
    if isinstance(inner, (cst.Integer, cst.Float)) and isinstance(high, (cst.Integer, cst.Float)):
        return inner.evaluated_value == high.evaluated_value
    return isinstance(inner, cst.Name) and isinstance(high, cst.Name) and inner.value == high.value


def _movable(value: cst.BaseExpression, at: Location, to: Location) -> bool:
    """A number, or a name meaning the same binding where the optimizer is made."""
    if isinstance(value, (cst.Integer, cst.Float)):
        return True
    if isinstance(value, cst.Name):
        here, there = at.lookup(value.value), to.lookup(value.value)
        return here is not None and here is there and here.kind in ("assign", "annassign") \
            and here.scope is not None and here.scope.kind == "module" and len(here.scope.bindings[value.value]) == 1
    return False
