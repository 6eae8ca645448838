"""Which dataset batches feed training: the ``batch`` of a tf.data pipeline (or a
dataset loader's ``batch_size``) whose dataset reaches ``fit`` or a training loop.

A batch of 9 images to plot, 10 rows to print, or a timing loop over ``take(5)`` is
not a training batch, and rounding it to a multiple of 8 changes what the user sees
for nothing. Training inputs are followed backwards: ``fit``'s ``x``, and what a
``for`` loop iterates (or its body hands to ``next``) when the loop trains (its body,
or a function of the file it calls, applies gradients, records a ``GradientTape``,
calls ``train_on_batch``/``fit``, or names a train step). From there the value goes
back through assignments, Dataset methods, ``iter``/``enumerate``/distribution
wrappers and the returns of the file's functions; every call met on the way is a
training input. What cannot be followed (a parameter, another module) stays out.
"""

from __future__ import annotations

import re
from typing import Dict, List, Optional, Set, Tuple

import libcst as cst

from mplint.rule.check import Analysis, Context
from mplint.semantic.call_args import positional_or_keyword
from mplint.semantic.scopes import Location

#: identifiers that say a loop body (or a function it calls) trains a model
_TRAINING_WORDS = frozenset({"apply_gradients", "minimize", "train_on_batch", "GradientTape", "fit"})
_TRAIN_STEP = re.compile(r"train\w*step|step\w*train|train_on_batch|train_batch", re.IGNORECASE)
#: calls that hand their argument's elements on unchanged
_PASS_THROUGH = frozenset({"iter", "enumerate", "zip", "next", "experimental_distribute_dataset",
                           "distribute_datasets_from_function"})
_MAX_DEPTH = 24


class _Body:
    """The identifiers read in a loop or function body, and the ``next(...)`` arguments."""

    __slots__ = ("node", "location", "names", "nexts")

    def __init__(self, node: cst.CSTNode, location: Location) -> None:
        self.node = node
        self.location = location
        self.names: Set[str] = set()
        self.nexts: List[Tuple[cst.BaseExpression, Location]] = []


class TrainingBatches(Analysis):
    def __init__(self, ctx: Context) -> None:
        super().__init__(ctx)
        #: expressions whose value training consumes, where they are read
        self._inputs: List[Tuple[cst.BaseExpression, Location]] = []
        #: each loop's body and what a ``for`` iterates (None for ``while``)
        self._loops: List[Tuple[_Body, Optional[cst.BaseExpression]]] = []
        self._open: List[_Body] = []
        #: function name -> bodies of the functions (and methods) so named
        self._functions: Dict[str, List[_Body]] = {}
        #: id(FunctionDef) -> the values it returns
        self._returns: Dict[int, List[Tuple[cst.BaseExpression, Location]]] = {}
        self._function_nodes: List[cst.FunctionDef] = []
        self._reached: Optional[Set[int]] = None

    # -- collection (during the walk) ------------------------------------------------
    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        body = _Body(node, self.ctx.scopes.location())
        self._functions.setdefault(node.name.value, []).append(body)
        self._open.append(body)
        self._function_nodes.append(node)

    def leave_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._open.pop()
        self._function_nodes.pop()

    def visit_For(self, node: cst.For) -> None:
        body = _Body(node, self.ctx.scopes.location())
        self._loops.append((body, node.iter))
        self._open.append(body)

    def leave_For(self, node: cst.For) -> None:
        self._open.pop()

    def visit_While(self, node: cst.While) -> None:
        body = _Body(node, self.ctx.scopes.location())
        self._open.append(body)
        self._loops.append((body, None))

    def leave_While(self, node: cst.While) -> None:
        self._open.pop()

    def visit_Name(self, node: cst.Name) -> None:
        for body in self._open:
            body.names.add(node.value)

    def visit_Attribute(self, node: cst.Attribute) -> None:
        for body in self._open:
            body.names.add(node.attr.value)

    def visit_Return(self, node: cst.Return) -> None:
        if self._function_nodes and node.value is not None:
            self._returns.setdefault(id(self._function_nodes[-1]), []).append(
                (node.value, self.ctx.scopes.location()))

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value in ("fit", "fit_generator"):
            x = positional_or_keyword(node, 0, "x" if func.attr.value == "fit" else "generator")
            if x is not None:
                self._inputs.append((x, self.ctx.scopes.location()))
        elif isinstance(func, cst.Name) and func.value == "next" and node.args and self._open:
            for body in self._open:
                body.nexts.append((node.args[0].value, self.ctx.scopes.location()))

    # -- answers (after the walk) ----------------------------------------------------
    def feeds_training(self, call: cst.Call) -> bool:
        """``call`` (a ``batch``, a dataset loader) builds a dataset that training reads."""
        if self._reached is None:
            self._reached = set()
            for expr, where in self._training_inputs():
                self._follow(expr, where, 0, set())
        return id(call) in self._reached

    def _training_inputs(self) -> List[Tuple[cst.BaseExpression, Location]]:
        inputs = list(self._inputs)
        for body, iterable in self._loops:
            if self._trains(body.names, 0, set()):
                if iterable is not None:
                    inputs.append((iterable, body.location))
                inputs.extend(body.nexts)
        return inputs

    def _trains(self, names: Set[str], depth: int, seen: Set[str]) -> bool:
        if names & _TRAINING_WORDS or any(_TRAIN_STEP.search(name) for name in names):
            return True
        if depth > 3:
            return False
        for name in names & self._functions.keys() - seen:
            seen.add(name)
            if any(self._trains(body.names, depth + 1, seen) for body in self._functions[name]):
                return True
        return False

    def _follow(self, expr: cst.BaseExpression, where: Location, depth: int, seen: Set[int]) -> None:
        if depth > _MAX_DEPTH or id(expr) in seen:
            return
        seen.add(id(expr))
        assert self._reached is not None
        if isinstance(expr, cst.Name):
            for binding in where.reaching(expr.value):
                if binding.kind in ("assign", "annassign") and binding.value is not None and binding.scope is not None:
                    self._follow(binding.value, binding.location(), depth + 1, seen)
            return
        if isinstance(expr, (cst.Tuple, cst.List)):
            for element in expr.elements:
                self._follow(element.value, where, depth + 1, seen)
            return
        if not isinstance(expr, cst.Call):
            return
        self._reached.add(id(expr))
        func = expr.func
        if isinstance(func, cst.Attribute):
            self._follow(func.value, where, depth + 1, seen)  # the receiver: ds.batch(64).prefetch(1)
            if func.attr.value in _PASS_THROUGH:
                for arg in expr.args:
                    self._follow(arg.value, where, depth + 1, seen)
            return
        if isinstance(func, cst.Name):
            if func.value in _PASS_THROUGH:
                for arg in expr.args:
                    self._follow(arg.value, where, depth + 1, seen)
                return
            callee = where.lookup(func.value)
            if callee is not None and callee.kind == "def":
                for value, at in self._returns.get(id(callee.node), []):
                    self._follow(value, at, depth + 1, seen)
