"""What the tensor dtype inference hands the rules: places, sites and mismatches."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Tuple

import libcst as cst

from mplint.semantic.scopes import Location


Path = Tuple[int, ...]
#: the kinds of a helper's parameters at one call: (id of the ``cst.Param``, kind, index
#: of the argument in ``TensorKinds._arguments``), sorted; () outside any call
Env = Tuple[Tuple[int, Optional[str], int], ...]

MAX_DEPTH = 24


@dataclass(frozen=True)
class Where:
    """A location plus the chain of blocks (by id) that encloses it."""

    loc: Location
    path: Path


@dataclass
class OperationSite:
    """An outermost arithmetic expression, or a call that combines tensors."""

    node: cst.CSTNode
    where: Where


@dataclass
class Mismatch:
    """A float32 tensor meeting a 16-bit one in a TensorFlow op."""

    node: cst.CSTNode
    f32: cst.BaseExpression
    low: cst.BaseExpression
    where: Where
    #: the caller's arguments under which the operands have these kinds
    env: Env = ()


@dataclass(frozen=True)
class ForeignContext:
    """The kinds one call in another module of the project gives a function's
    parameters (see :mod:`tensor_callers`), and where that call is written."""

    env: Env
    #: ``blocks.py:42``, relative to the project root
    at: str
    #: the caller's own MP504 names the call (a function called from 16-bit layer or
    #: helper code: ``tensor_imports.handed_crossings``), so the callee leaves it to it
    handed: bool = False
