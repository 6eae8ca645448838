"""What a check module sees: the base class, its context and the fix it may offer.

A check is one class per module in ``mplint/checks/``. It defines libcst-style
``visit_<Node>``/``leave_<Node>`` methods that the shared walker calls in one pass
over the file, and optionally ``finish()``, called once the walk is over and every
module fact (the policy, the Keras version) is known. Checks report nodes; the
engine turns them into positioned findings, applies suppressions and fixes.
"""

from __future__ import annotations

import importlib

from dataclasses import dataclass, field
from typing import (
    TYPE_CHECKING, Any, ClassVar, Dict, FrozenSet, List, Mapping, Optional, Sequence, Set, Tuple, Type, TypeVar, Union,
)

import libcst as cst

from mplint.rule.levels import Safety, Severity

if TYPE_CHECKING:  # pragma: no cover
    from mplint.semantic.facts import ModuleFacts
    from mplint.semantic.names import NameResolver
    from mplint.core.prefilter import Prescan
    from mplint.semantic.scopes import ScopeTracker
    from mplint.semantic.values import Evaluator

A = TypeVar("A")

Replacement = Union[cst.CSTNode, cst.RemovalSentinel, cst.FlattenSentinel]


@dataclass
class Fix:
    """Node replacements, by node identity, that repair one finding.

    ``safety`` is what this occurrence deserves; the engine never lets it exceed the
    catalog entry's safety, and demotes it to unsafe when it would drop a comment.
    ``imports`` are ``(module, name_or_None, asname_or_None)`` to add when applied;
    ``remove_imports`` (same shape) are dropped afterwards, each only if the fixed
    file no longer uses it (libcst's RemoveImportsVisitor decides).
    """

    replacements: Mapping[cst.CSTNode, Replacement]
    safety: Safety = Safety.SAFE
    imports: Tuple[Tuple[str, Optional[str], Optional[str]], ...] = ()
    remove_imports: Tuple[Tuple[str, Optional[str], Optional[str]], ...] = ()


@dataclass
class Report:
    node: cst.CSTNode
    message: str
    fix: Optional[Fix] = None
    #: overrides the catalog severity for this finding (e.g. by target version)
    severity: Optional[Severity] = None
    #: other nodes of the file whose statement's ``# noqa`` also suppresses the finding
    #: (MP504 reports the failing operation; its noqa may sit where the value was made)
    noqa_at: Tuple[cst.CSTNode, ...] = ()


@dataclass
class Context:
    """Per-file state shared by every check during one walk."""

    path: str
    module: cst.Module
    names: "NameResolver"
    scopes: "ScopeTracker"
    facts: "ModuleFacts"
    options: Mapping[str, Any]
    values: "Evaluator"
    #: the file's source text, for cheap whole-file tests before any per-node work
    text: str = ""
    reports: Dict[str, List[Report]] = field(default_factory=dict)
    #: checks that could not judge something here because the Keras generation is unknown
    blind: Set[str] = field(default_factory=set)
    #: shared analyses (see ``Check.requires``), one instance per file
    analyses: Dict[type, Any] = field(default_factory=dict)
    #: per-file answers of helpers that are no analysis, each under a key of its own
    #: (``(helper, question)``): asked again by every rule and site, found once
    memo: Dict[Any, Any] = field(default_factory=dict)

    def get(self, analysis: Type[A]) -> A:
        """The shared analysis of that type that the engine walked for this file."""
        return self.analyses[analysis]

    def release(self) -> None:
        """Break the cycles a file's analysis leaves (analyses and checks hold the
        context, scopes their parents and children), so its tree is freed by reference
        counting as soon as the file is done instead of by a collection that scans it."""
        self.analyses.clear()
        self.memo.clear()
        self.scopes.release()


class Analysis:
    """A shared, read-only fact finder that several checks use (e.g. model outputs).

    It is walked once per file, before the checks, when any selected check lists it
    in ``requires``.
    """

    requires: ClassVar[Tuple[type, ...]] = ()

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx


@dataclass(frozen=True)
class Needs:
    """What a file must hold for a check to report in it, judged from its bytes
    before parsing (``Check.may_report``): one of ``words``, or a mixed policy that may
    govern the file (``mixed_policy``: set in it, in a file sharing its program, or
    assumed), or a policy call in the file itself (``policy_call``); and, when given,
    one of ``also`` besides."""

    words: Tuple[bytes, ...] = ()
    mixed_policy: bool = False
    policy_call: bool = False
    also: Tuple[bytes, ...] = ()
    #: with ``mixed_policy``: a library's module counts too (its users may set one)
    library: bool = False

    def met_by(self, file: "Prescan") -> bool:
        found = (self.mixed_policy and (file.policy or (self.library and file.library))) \
            or (self.policy_call and file.sets_policy) or file.has(*self.words)
        return bool(found) and (not self.also or file.has(*self.also))


class Check:
    """Base class of every rule implementation.

    Subclasses set ``rule_id`` (its catalog entry supplies name, severity and docs).
    """

    rule_id: ClassVar[str] = ""
    #: Analysis classes this check reads through ``self.ctx.get(...)``
    requires: ClassVar[Tuple[type, ...]] = ()
    #: what a file must hold for this check to report in it (None: any file)
    needs: ClassVar[Optional[Needs]] = None

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx

    @classmethod
    def may_report(cls, file: "Prescan") -> bool:
        """Whether this check can report anything in ``file``, judged from its bytes.

        A file that no selected check may report in is not parsed at all, so this must
        never answer False where ``finish()`` could report. Most checks only declare
        ``needs`` (the words every finding needs, or a mixed policy); one whose
        condition ``Needs`` cannot say overrides this. No ``needs``: True.
        """
        return cls.needs is None or cls.needs.met_by(file)

    @property
    def names(self) -> "NameResolver":
        return self.ctx.names

    @property
    def facts(self) -> "ModuleFacts":
        return self.ctx.facts

    def option(self, key: str) -> Any:
        return self.ctx.options[key]

    def report(self, node: cst.CSTNode, message: str, fix: Optional[Fix] = None,
               severity: Optional[Severity] = None, noqa_at: Tuple[cst.CSTNode, ...] = ()) -> None:
        """Report ``node``; ``severity`` ("error"/"warning") overrides the catalog's; a
        ``# noqa`` on the statement of ``node`` or of any of ``noqa_at`` suppresses it."""
        self.ctx.reports.setdefault(self.rule_id, []).append(Report(node, message, fix, severity, noqa_at))

    def generation_unknown(self) -> None:
        """Say that this file holds something the check could not judge because the
        Keras generation (2 or 3) is unknown; the run says so once, with the setting
        that tells it."""
        self.ctx.blind.add(self.rule_id)

    def finish(self) -> None:
        """Called after the walk, when all module facts are known."""


def requirements_of(cls: type) -> Tuple[type, ...]:
    """What an analysis or check needs to run beside it: its ``requires``, then its
    ``companions``, analyses named by their dotted path that it asks through a hook and
    cannot import without a cycle (``ModelOutputs`` asks ``CustomLayers`` whether a class
    of another module is a model, whichever rule is selected)."""
    companions = tuple(_import_named(path) for path in getattr(cls, "companions", ()))
    return tuple(getattr(cls, "requires", ())) + companions


def _import_named(path: str) -> type:
    module, _, name = path.rpartition(".")
    found = getattr(importlib.import_module(module), name)
    assert isinstance(found, type)
    return found


def all_requirements(cls: type) -> FrozenSet[type]:
    """The analyses a check or analysis reads, directly or through another one."""
    out: set = set()
    todo = list(requirements_of(cls))
    while todo:
        analysis = todo.pop()
        if analysis not in out:
            out.add(analysis)
            todo.extend(requirements_of(analysis))
    return frozenset(out)


def instantiate_analyses(classes: Sequence[type], ctx: Context) -> List[object]:
    """One instance of every analysis the checks (or analyses) need, dependencies first."""
    ordered: List[type] = []

    def need(analysis: type) -> None:
        if analysis in ordered:
            return
        for dep in getattr(analysis, "requires", ()):
            need(dep)
        ordered.append(analysis)

    for cls in classes:
        for analysis in requirements_of(cls):
            need(analysis)
    # companions last, where the checks did not ask for them: the order the checks ask in
    # (which the walk's visits follow) stays the same whether they are there or not
    done = 0
    while done < len(ordered):
        for companion in requirements_of(ordered[done])[len(getattr(ordered[done], "requires", ())):]:
            need(companion)
        done += 1
    for analysis in ordered:
        ctx.analyses[analysis] = analysis(ctx)
    return [ctx.analyses[a] for a in ordered]
