"""Gradient clipping, or unscaling, done by a function of another project module.

``grads = clip_grads(grads, FLAGS.clip_norm)`` with ``def clip_grads(grads, max_norm):
clipped, _ = tf.clip_by_global_norm(grads, max_norm); return clipped`` in
``grad_utils.py``: the call clips its argument as ``tf.clip_by_global_norm`` would, and a
train step that hands it still-scaled gradients clips them at 1/scale of the threshold.
What the function does to its parameter is read in its own module, by the training-loop
analysis walked there (the same flow that follows a helper of the checked file), and
used at the call here. A module that cannot be read, a name re-exported beyond what
:func:`imported_definition` follows, or a function that unscales on the way, is no clip.

``grads = unscale(grads, optimizer)`` with ``return [g / optimizer.dynamic_scale for g in
grads]`` there is read the same way: the call divides its argument by the loss scale, as
the same division written in the train step would (:func:`imported_unscaling`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Optional, Tuple

import libcst as cst

from mplint.analysis.imported_layers import analysed, imported_definition
from mplint.core.positions import positions_of
from mplint.rule.check import Context
from mplint.semantic.scopes import Location

if TYPE_CHECKING:  # pragma: no cover
    from mplint.analysis.training import TrainingLoops


@dataclass(frozen=True)
class ClippedParameter:
    """A function's parameter that reaches its return through a known clipping call."""

    #: positional index (``self`` left out) and name of the parameter
    index: int
    name: str
    #: the clipping function, without its package (``clip_by_global_norm``)
    clip: str
    #: the function's module file, for the message
    path: str
    #: the instance attributes the ``if`` arms around the clipping ``return`` test, each
    #: with the truth it needs (``if self.clip_gradients:``): the caller's instance decides
    needs: Tuple[Tuple[str, bool], ...] = ()


def imported_clip(ctx: Context, call: cst.Call, analysis: "type[TrainingLoops]",
                  loc: Optional[Location] = None) -> Optional[ClippedParameter]:
    """The parameter a function of another project module clips and returns, when
    ``call`` calls it (or, given ``loc``, a method a class here inherits from a base
    there); None when it is no such function or cannot be followed."""
    found = _defining_module(ctx, call, analysis, loc)
    if found is None:
        return None
    other, path, name = found
    clipped = other.clipped_parameter(name)
    if clipped is None:
        return None
    index, param, clip, needs = clipped
    return ClippedParameter(index, param, clip, path, needs)


@dataclass(frozen=True)
class UnscaledParameter:
    """A function's parameter that reaches its return divided by a loss scale."""

    index: int
    name: str
    #: the function's module file, for the message
    path: str


def imported_unscaling(ctx: Context, call: cst.Call, analysis: "type[TrainingLoops]",
                       loc: Optional[Location] = None) -> Optional[UnscaledParameter]:
    """The parameter a function of another project module divides by the loss scale and
    returns, when ``call`` calls it (or an inherited method, as :func:`imported_clip`);
    None when it is no such function or cannot be followed."""
    found = _defining_module(ctx, call, analysis, loc)
    if found is None:
        return None
    other, path, name = found
    unscaled = other.unscaled_parameter(name)
    return None if unscaled is None else UnscaledParameter(unscaled[0], unscaled[1], path)


def imported_inner_gradient(ctx: Context, call: cst.Call, analysis: "type[TrainingLoops]",
                            loc: Optional[Location] = None) -> Optional[Tuple[str, int]]:
    """(file, line) of the unscaled ``tape.gradient`` a function of another project module
    returns a value computed from (``gradient_penalty(critic, real, fake)`` in
    ``losses.py``: see ``TrainingLoops.unscaled_inner_gradient``), when ``call`` calls it;
    None when it is no such function or cannot be followed."""
    found = _defining_module(ctx, call, analysis, loc)
    if found is None:
        return None
    other, path, name = found
    gradient = other.unscaled_inner_gradient(name)
    if gradient is None:
        return None
    position = positions_of(other.ctx.module, other.ctx.text, [gradient.call]).get(gradient.call)
    return None if position is None else (path, position.start.line)


def _defining_module(ctx: Context, call: cst.Call, analysis: "type[TrainingLoops]",
                     loc: Optional[Location] = None) -> Optional[Tuple["TrainingLoops", str, str]]:
    """The training-loop analysis of the project module that defines what ``call`` calls,
    its file and the function's name there (``Base.method`` for ``self.method(...)`` in
    a class, given ``loc``, that inherits it from a base of that module); None when it is
    not such a function."""
    found = imported_definition(ctx, call.func) or (None if loc is None else _inherited_method(ctx, call, loc))
    other = None if found is None else analysed(found[0], analysis)
    if found is None or other is None:
        return None
    return other, found[0], found[1]  # type: ignore[return-value]


def _inherited_method(ctx: Context, call: cst.Call, loc: Location) -> Optional[Tuple[str, str]]:
    """(file, ``Base.method``) for ``self.method(...)`` in a class of this file that does
    not define ``method`` and derives from a class of another project module."""
    func = call.func
    cls = loc.scope.enclosing_class()
    if not (isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == "self") \
            or cls is None or not isinstance(cls.node, cst.ClassDef):
        return None
    method = func.attr.value
    if any(isinstance(s, cst.FunctionDef) and s.name.value == method for s in cls.node.body.body):
        return None  # its own method: this file's to read
    for base in cls.node.bases:
        found = imported_definition(ctx, base.value)
        if found is not None:
            return found[0], f"{found[1]}.{method}"
    return None
