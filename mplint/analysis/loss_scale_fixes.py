"""Edits that add loss scaling to a train step, in the API of a Keras generation.

Keras 3: ``scaled_loss = opt.scale_loss(loss)`` inside the tape, the gradient of
``scaled_loss``, and ``apply``/``apply_gradients`` unscale by themselves.
Keras 2: ``opt.get_scaled_loss(loss)`` inside the tape, the gradient of it, then
``grads = opt.get_unscaled_gradients(grads)`` before ``apply_gradients``.
Every edit is built from the step's own expressions and statements; when a piece
cannot be placed for certain (the loss is not a name bound inside the tape's
``with`` block), no fix is offered at all: half a fix would make things worse.
"""

from __future__ import annotations

from typing import Callable, Dict, List, Optional, Sequence, Tuple, Union

import libcst as cst

from mplint.analysis.training import UNSCALE_METHOD, Gradient, TrainStep, TrainingLoops, contains
from mplint.rule.check import Context, Fix, Replacement
from mplint.rule.levels import Safety
from mplint.semantic.names import dotted_name
from mplint.semantic.scopes import Location

Imports = Tuple[Tuple[str, Optional[str], Optional[str]], ...]


class StatementEdits:
    """Statement insertions and rewrites, merged per statement into one replacement.

    Rewrites inside a statement may nest (a name inside a call that is wrapped):
    a rewrite given as a function receives the already-rewritten node.
    """

    def __init__(self) -> None:
        self._edits: Dict[int, Tuple[cst.CSTNode, List[cst.BaseStatement], Dict[int, Rewrite], List[cst.BaseStatement]]] = {}

    def _entry(self, statement: cst.CSTNode):
        return self._edits.setdefault(id(statement), (statement, [], {}, []))

    def insert_before(self, statement: cst.CSTNode, new: cst.BaseStatement) -> None:
        self._entry(statement)[1].append(new)

    def insert_after(self, statement: cst.CSTNode, new: cst.BaseStatement) -> None:
        self._entry(statement)[3].append(new)

    def rewrite(self, statement: cst.CSTNode, old: cst.CSTNode, new: Rewrite) -> None:
        self._entry(statement)[2][id(old)] = new

    def statements(self) -> List[cst.CSTNode]:
        return [entry[0] for entry in self._edits.values()]

    def replacements(self) -> Dict[cst.CSTNode, Replacement]:
        out: Dict[cst.CSTNode, Replacement] = {}
        for statement, before, rewrites, after in self._edits.values():
            body = statement.visit(_Rewriter(rewrites)) if rewrites else statement
            if before or after:
                out[statement] = cst.FlattenSentinel([*before, body, *after])
            else:
                out[statement] = body
        return out


Rewrite = Union[cst.CSTNode, Callable[[cst.CSTNode], cst.CSTNode]]


class _Rewriter(cst.CSTTransformer):
    def __init__(self, rewrites: Dict[int, Rewrite]) -> None:
        super().__init__()
        self.rewrites = rewrites

    def on_leave(self, original_node, updated_node):
        new = self.rewrites.get(id(original_node))
        if new is None:
            return updated_node
        return new(updated_node) if callable(new) else new


def code(ctx: Context, node: cst.CSTNode) -> str:
    return ctx.module.code_for_node(node)


def _free_name(base: str, loc: Location) -> str:
    name = base
    while loc.scope.lookup(name) is not None or name in loc.scope.bindings:
        name += "_"
    return name


def add_scaling(ctx: Context, step: TrainStep, version: int, edits: StatementEdits,
                guard: Optional[str] = None) -> bool:
    """Scale each differentiated loss inside its tape (and unscale on Keras 2).

    ``guard``: the condition under which the optimizer is a LossScaleOptimizer, when
    it is one only on some paths (see :func:`path_guard`); the loss is scaled only then.
    """
    if (version == 3 and step.clipped) or step.crossed:
        # Keras 3 would clip the still-scaled gradients, or the gradients come from the
        # helper's callers, where the optimizer has another name: a human must decide
        return False
    optimizer = code(ctx, step.receiver)
    method = "scale_loss" if version == 3 else "get_scaled_loss"
    for gradient in step.gradients:
        if not _scale_one(ctx, gradient, optimizer, method, edits, guard):
            return False
    if version == 2 and not step.unscaled:
        return guard is None and add_unscaling(ctx, step, edits)
    return True


def path_guard(ctx: Context, step: TrainStep) -> Optional[str]:
    """The condition under which the step's optimizer is a LossScaleOptimizer, as the
    loop itself writes it: the test of the ``if`` that guards every one of its
    ``get_unscaled_gradients`` calls (``if amp: grads = opt.get_unscaled_gradients(grads)``),
    when it is a name or an attribute (``args.amp``); None otherwise."""
    where = {id(call): loc for call, loc in ctx.get(TrainingLoops).method_calls.get(UNSCALE_METHOD, [])}
    tests = set()
    for call in step.unscale_calls:
        loc = where.get(id(call))
        if loc is None or not loc.branches or loc.branches[-1][1] != "body":
            return None  # unguarded, or in an ``else``: no condition to reuse
        tests.add(loc.branches[-1][2])  # the innermost ``if`` around it
    if len(tests) != 1:
        return None
    (test,) = tests
    return code(ctx, test) if isinstance(test, (cst.Name, cst.Attribute)) and dotted_name(test) else None


def _scale_one(ctx: Context, gradient: Gradient, optimizer: str, method: str,
               edits: StatementEdits, guard: Optional[str] = None) -> bool:
    target, block, statement = gradient.target, gradient.tape_block, gradient.statement
    if (not isinstance(target, cst.Name) or block is None or statement is None
            or not isinstance(block.body, cst.IndentedBlock) or not block.body.body):
        return False
    binding = gradient.location.lookup(target.value)
    if binding is None or binding.scope is not gradient.location.scope or not contains(block, binding.node):
        return False  # the loss must be computed while the tape records
    scaled = _free_name(f"scaled_{target.value}", gradient.location)
    value = f"{optimizer}.{method}({target.value})"
    if guard is not None:
        value = f"{value} if {guard} else {target.value}"
    new = cst.parse_statement(f"{scaled} = {value}\n")
    body = block.body.body
    if any(s is statement for s in body):
        edits.insert_before(statement, new)
    else:
        edits.insert_after(body[-1], new)
    edits.rewrite(statement, target, cst.Name(scaled))
    return True


def add_unscaling(ctx: Context, step: TrainStep, edits: StatementEdits) -> bool:
    """Keras 2: ``grads = opt.get_unscaled_gradients(grads)`` right after each gradient."""
    if step.crossed:
        return False  # the optimizer has another name where the gradients are taken
    optimizer = code(ctx, step.receiver)
    for gradient in step.gradients:
        statement = gradient.statement
        if statement is None or gradient.symbolic:
            return False
        small = statement.body[0] if len(statement.body) == 1 else None
        if (isinstance(small, cst.Assign) and small.value is gradient.call and len(small.targets) == 1
                and isinstance(small.targets[0].target, cst.Name)):
            name = small.targets[0].target.value
            edits.insert_after(statement, cst.parse_statement(
                f"{name} = {optimizer}.get_unscaled_gradients({name})\n"))
        else:
            wrapper = cst.parse_expression(f"{optimizer}.get_unscaled_gradients(__grads__)")
            assert isinstance(wrapper, cst.Call)

            def wrap(call: cst.CSTNode, wrapper: cst.Call = wrapper) -> cst.CSTNode:
                assert isinstance(call, cst.BaseExpression)
                return wrapper.with_changes(args=[cst.Arg(call)])

            edits.rewrite(statement, gradient.call, wrap)
    return True


def wrap_creation(ctx: Context, loops: TrainingLoops, call: cst.Call,
                  loc: Location) -> Optional[Tuple[cst.Call, Imports]]:
    """``Adam(...)`` -> ``<spelling>.LossScaleOptimizer(Adam(...))`` in the file's own spelling.

    None when the variable it is assigned to gets another optimizer elsewhere in its
    scope (``if gpu: opt = SGD() else: opt = SGD()``): wrapping one of them would leave
    the train step calling ``get_scaled_loss`` on a plain optimizer on the other path."""
    if _assigned_elsewhere(call, loc):
        return None
    spelled, imports = lso_spelling(ctx, loops, call, loc)
    if spelled is None:
        return None
    func = cst.parse_expression(spelled)
    return cst.Call(func=func, args=[cst.Arg(call)]), imports


def _assigned_elsewhere(call: cst.Call, loc: Location) -> bool:
    """The name ``call`` is assigned to is also given a value not built from it."""
    for name, bindings in loc.scope.bindings.items():
        if not any(b.value is call for b in bindings):
            continue
        return any(b.value is not call and not (b.value is not None and _reads(b.value, name))
                   for b in bindings)
    return False


def _reads(expr: cst.CSTNode, name: str) -> bool:
    """``expr`` reads the variable ``name`` (``LossScaleOptimizer(opt)``)."""
    stack = [expr]
    while stack:
        node = stack.pop()
        if isinstance(node, cst.Name) and node.value == name:
            return True
        stack.extend([node.value] if isinstance(node, cst.Attribute) else node.children)
    return False


def lso_spelling(ctx: Context, loops: TrainingLoops, call: cst.Call,
                 loc: Location) -> Tuple[Optional[str], Imports]:
    """How this file can name the LossScaleOptimizer of the optimizer's own package."""
    roots = sorted({q.split(".optimizers")[0] for q in loops.qualified.get(id(call), ()) if ".optimizers" in q})
    if len(roots) != 1 or roots[0] not in ("tensorflow.keras", "keras", "tf_keras"):
        return None, ()
    target = roots[0] + ".mixed_precision.LossScaleOptimizer"
    best: Optional[str] = None
    for local, targets in ctx.names.module_scope.aliases.items():
        if len(targets) != 1 or _shadowed(local, loc):
            continue
        (qualified,) = targets
        if target == qualified:
            spelled = local
        elif target.startswith(qualified + "."):
            spelled = local + target[len(qualified):]
        else:
            continue
        if best is None or len(spelled) < len(best):
            best = spelled
    if best is not None:
        return best, ()
    if "mixed_precision" in ctx.names.module_scope.aliases or _shadowed("mixed_precision", loc):
        return None, ()
    return "mixed_precision.LossScaleOptimizer", ((roots[0], "mixed_precision", None),)


def _shadowed(name: str, loc: Location) -> bool:
    binding = loc.lookup(name)
    return binding is not None and (binding.scope is not None and binding.scope.kind != "module"
                                    or binding.kind != "assign")


def fix_replacements(edits: StatementEdits, extra: Sequence[Tuple[cst.CSTNode, Replacement]]) -> Optional[Dict[cst.CSTNode, Replacement]]:
    """All replacements of one fix, or None when an extra edit falls inside an edited statement."""
    out = edits.replacements()
    for old, new in extra:
        if any(contains(statement, old) for statement in edits.statements()):
            return None
        out[old] = new
    return out


def unscaling_fix(ctx: Context, step: TrainStep) -> Optional[Fix]:
    """The unsafe fix that inserts the missing ``get_unscaled_gradients`` (MP203, MP206)."""
    edits = StatementEdits()
    if not add_unscaling(ctx, step, edits):
        return None
    replacements = fix_replacements(edits, [])
    return Fix(replacements, safety=Safety.UNSAFE) if replacements else None
