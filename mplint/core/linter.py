"""Check one file: parse once, walk once with every check, position and filter findings.

The data path for a file reads top to bottom in :meth:`Linter.analyze`:
names from imports -> one walk (scopes, facts, checks) -> ``finish()`` -> reports in
blocks that expect an exception dropped -> positions for reported nodes only ->
suppressions and per-file ignores -> findings.
"""

from __future__ import annotations

import sys
from bisect import bisect_right
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Dict, FrozenSet, Iterator, List, Mapping, Optional, Sequence, Set, Tuple, Type

import libcst as cst
from libcst.metadata import CodeRange

from mplint.checks import registry
from mplint.core import reads
from mplint.core.expected_failures import ExpectedFailures
from mplint.core.findings import FileError, Finding
from mplint.core.fixer import RECURSION_LIMIT, fix_program
from mplint.core.gatekeeper import Gatekeeper
from mplint.core.positions import positions_of
from mplint.core.prefilter import Prescan, may_matter
from mplint.core.results import REPORT_TO, FileAnalysis, FileResult, FixCandidate, FixOutcome, describe
from mplint.core.python_syntax import TOO_DEEP_TO_CHECK
from mplint.core.source import Source, SourceError, parse
from mplint.core.source_kinds import SourceKind
from mplint.core.suppression import scan
from mplint.core.unused_noqa import UNUSED_NOQA, report_unused
from mplint.core.walker import Walker
from mplint.rule.catalog import RuleEntry
from mplint.rule.check import Check, Context, Report, all_requirements, instantiate_analyses
from mplint.rule.levels import Safety
from mplint.run.config import Settings
from mplint.run.dependency_pins import shell_pins
from mplint.run.project import ProjectFacts, names_for
from mplint.semantic.config_loads import Written
from mplint.semantic.facts import FactsCollector, ModuleFacts
from mplint.semantic.keras_version import versions_of
from mplint.semantic.scopes import Scope, ScopeTracker
from mplint.semantic.stored_attributes import StoredForm
from mplint.semantic.values import Evaluator, is_script
from mplint.semantic.vocabulary import POLICYLESS_BACKENDS


class Linter:
    """Runs the selected checks on files with one configuration.

    Its two operations, :meth:`check` and :meth:`fix`, take a source of any kind
    (:func:`mplint.core.source_kinds.load_source`); every caller goes through them.
    """

    def __init__(self, settings: Settings, catalog: Dict[str, RuleEntry], rule_ids: Sequence[str],
                 project: Optional[ProjectFacts] = None, installed_keras: Optional[int] = None) -> None:
        self.settings = settings
        self.catalog = catalog
        checks = registry()
        self.rule_ids = [r for r in rule_ids if r in checks]
        self.check_classes = [checks[r] for r in self.rule_ids]
        self.known_codes: FrozenSet[str] = frozenset(catalog)
        #: what each file's check needs before the checks run (the prescan, ignores)
        self.gate = Gatekeeper(settings, catalog, self.rule_ids, project)
        self.options = settings.option_map()
        #: the Keras generation of the installed packages (the run's environment)
        self.installed_keras = installed_keras
        #: skip (leave unparsed) files no selected check may report in; off only to
        #: test that the skipping never changes a result
        self.prescan = True

    @property
    def project(self) -> Optional[ProjectFacts]:
        """Facts of the whole project (policies and rewrites set in other files): the
        gatekeeper's, which the prescan reads."""
        return self.gate.project

    @project.setter
    def project(self, project: Optional[ProjectFacts]) -> None:
        self.gate.project = project

    # -- the two operations ---------------------------------------------------------
    def check(self, src: SourceKind, module: Optional[cst.Module] = None) -> FileResult:
        """Findings and errors of one source (``module``: its program already parsed,
        by the project index)."""
        result = FileResult(src.path)
        with reads.recording() as result.reads:
            prepared = self._prepare(src, module, result.errors)
            if prepared is not None:
                source, parsed, classes = prepared
                analysis = self.analyze(source, parsed, classes)
                result.findings = [src.finding(f) for f in analysis.findings]
                result.errors += [src.error(e) for e in analysis.errors]
        return result

    def fix(self, src: SourceKind, unsafe: bool) -> FixOutcome:
        """Fix one source in memory: ``fixed`` holds the new bytes (nothing is written)."""
        outcome = FixOutcome(src.path, original=src.raw)
        with reads.recording() as noted:
            prepared = self._prepare(src, None, outcome.errors)
            if prepared is None:
                return outcome
            source, module, classes = prepared
            # The source's own warnings (a notebook's cells left out), in its terms already:
            # the passes replace the analysis's warnings, never these.
            given = list(outcome.errors)
            text, outcome = fix_program(self.analyze, source, module, unsafe, outcome, classes,
                                        self.settings.line_length)
        outcome.reads = noted
        outcome.remaining = [src.finding(f) for f in outcome.remaining]
        outcome.errors = given + [src.error(e) for e in outcome.errors if e not in given]
        if text is not None:
            try:
                outcome.fixed = src.encode(text)
            except SourceError as exc:
                outcome.errors.append(src.error(FileError(src.path, str(exc))))
        return outcome

    def _prepare(self, src: SourceKind, module: Optional[cst.Module], errors: List[FileError]
                 ) -> Optional[Tuple[Source, cst.Module, List[Type[Check]]]]:
        """The program, its parsed module and the checks that may report in it, or
        None when there is nothing to analyse (errors and warnings go to ``errors``).

        The prefilter and the prescan run here, once per file, for every caller.
        """
        if self.prescan and not may_matter(src.raw):
            return None
        classes = self.checks_for(src.path, src.raw)
        if not classes and module is None:  # no rule can report here: not parsed
            self.gate.unparsed(src, errors)
            return None
        try:
            source = src.program()
            if source is not None and module is None:
                module = parse(source)
        except SourceError as exc:
            errors.append(src.error(FileError(src.path, str(exc))))
            return None
        if classes or source is None:
            # Cells left out are worth a warning where a rule could have reported in
            # them, or where nothing at all could be checked ("All checks passed!"
            # would be a claim about no code).
            errors += src.warnings()
        if source is None or module is None:
            return None
        return source, module, classes

    def checks_for(self, path: str, raw: bytes) -> List[Type[Check]]:
        """The selected checks, less per-file ignores, that may report in this file
        (see ``Check.may_report``)."""
        ignored = self.ignored_for(path)
        classes = [c for c in self.check_classes if c.rule_id not in ignored]
        if not self.prescan:
            return classes
        scan = self.scan(path, raw)
        return [c for c in classes if c.may_report(scan)]

    def scan(self, path: str, raw: bytes) -> Prescan:
        """What the file's bytes, the project and the config say before parsing."""
        return self.gate.scan(path, raw)

    def analyze(self, source: Source, module: cst.Module,
                classes: Optional[Sequence[Type[Check]]] = None) -> FileAnalysis:
        """Run the selected checks that may report in this file over its parsed module.

        ``classes`` are :meth:`checks_for` the file when the caller has them; else they
        are found from the text (which a fix pass may have changed since it was read).
        """
        out = FileAnalysis()
        if classes is None:
            classes = self.checks_for(source.path, source.text.encode("utf-8", "surrogateescape"))
        if not classes:
            return out
        names = names_for(module, source.path, self.project)
        tracker = ScopeTracker(module, names)
        versions = versions_of(self.settings.keras_version, source.text, installed=self.installed_keras,
                               use_installed=self.installed_keras is not None,
                               file_pins=shell_pins(source.shell),
                               project_pins=self.project.pins.for_file(source.path, source.text)
                               if self.project is not None else ())
        facts = ModuleFacts(assumed_policy=self.settings.assume_policy, keras_version=versions.keras_generation,
                            configured_keras_version=self.settings.keras_version, versions=versions)
        if self.project is not None:
            self.project.apply(facts, source.path)
        facts.library = self.gate.library(source.path)
        facts.policyless_backend = names.imported_package(POLICYLESS_BACKENDS)
        evaluator = Evaluator(names, call_sites=tracker.calls)
        evaluator.elsewhere = facts.project_arguments
        evaluator.fields_set = facts.project_set_fields
        # a library module's top-level calls (``setattr(ResNet18, '__doc__', ...)``) do not
        # make it a program whose calls of its public functions are all their calls
        evaluator.script = source.path.endswith(".ipynb") or (is_script(module) and not facts.library)
        ctx = Context(source.path, module, names, tracker, facts, self.options, evaluator, source.text)
        evaluator.inherited_store = lambda cls, attr: _inherited_store(ctx, cls, attr)
        evaluator.imported_literal = lambda expr: _imported_literal(ctx, expr)
        evaluator.imported_field = lambda call, attr, spread, home: _imported_field(ctx, call, attr, spread, home)
        evaluator.config_value = lambda written, keys: _config_value(ctx, written, keys)
        evaluator.loader_value = lambda call, keys, strings: _loader_value(ctx, call, keys, strings)
        try:
            return self._walk(ctx, source, classes, out)
        finally:
            ctx.release()  # the tree is freed now, not by the next collection

    def _walk(self, ctx: Context, source: Source, classes: Sequence[Type[Check]], out: FileAnalysis) -> FileAnalysis:
        """One walk of the module by every analysis and check, then their findings."""
        module, names, tracker, facts, evaluator = ctx.module, ctx.names, ctx.scopes, ctx.facts, ctx.values
        collector = FactsCollector(facts, names, tracker, evaluator)
        analyses = instantiate_analyses(classes, ctx)
        checks = [cls(ctx) for cls in classes]
        crashed: Dict[str, BaseException] = {}

        def on_error(owner: object, exc: BaseException) -> None:
            rule = getattr(owner, "rule_id", "")
            if rule:
                crashed.setdefault(rule, exc)
                return
            # A shared analysis failed: every check that reads it is unreliable.
            name = type(owner).__name__
            users = [cls.rule_id for cls in classes if type(owner) in all_requirements(cls)]
            for user in users:
                crashed.setdefault(user, RuntimeError(f"in analysis {name}: {describe(exc)}"))
            if not users:
                crashed[name] = exc

        expected = ExpectedFailures()
        walker = Walker([tracker, collector, expected, *analyses, *checks], on_error)
        try:
            with _deep_recursion():
                walker.walk(module)
        except RecursionError:
            out.errors.append(FileError(source.path, TOO_DEEP_TO_CHECK))
            return out
        for check in checks:
            if check.rule_id in crashed:
                continue
            try:
                check.finish()
            except Exception as exc:  # a broken rule must not stop the others
                crashed[check.rule_id] = exc
        expected.drop_reports_inside(ctx.reports)
        for rule, error in sorted(crashed.items()):
            ctx.reports.pop(rule, None)
            out.errors.append(FileError(
                source.path,
                f"internal error in rule {rule}: {describe(error)}. "
                f"The other rules still ran. Please report this to {REPORT_TO}",
            ))
        ran = [cls.rule_id for cls in classes if cls.rule_id not in crashed]
        if ctx.blind:  # one message for every file, so a run says it once
            out.errors.append(FileError(source.path, UNKNOWN_GENERATION, "note"))
        if not ctx.reports and UNUSED_NOQA not in ran:
            self._warn_unknown_codes(source, out)
            return out
        try:
            with _deep_recursion():  # positions regenerate code, as deep as the file nests
                self._position(source, module, ctx.reports, out, ran)
        except Exception as error:
            if not _from_recursion(error):
                raise
            out.findings, out.fixes, out.positions = [], [], None
            out.errors.append(FileError(source.path, TOO_DEEP_TO_CHECK))
        return out

    # -- helpers ------------------------------------------------------------------
    def ignored_for(self, path: str) -> FrozenSet[str]:
        """The selected rules `per-file-ignores` turns off for ``path``."""
        return self.gate.ignored_for(path)

    def _warn_unknown_codes(self, source: Source, out: FileAnalysis) -> None:
        out.errors += self.gate.unknown_code_warnings(source)

    def _position(self, source: Source, module: cst.Module,
                  reports: Dict[str, List[Report]], out: FileAnalysis, ran: Sequence[str] = ()) -> None:
        wanted = [r.node for found in reports.values() for r in found]
        wanted += [old for found in reports.values() for r in found if r.fix is not None
                   for old in r.fix.replacements]
        wanted += [other for found in reports.values() for r in found for other in r.noqa_at]
        positions = positions_of(module, source.text, wanted)
        out.positions = positions
        suppressions = scan(source.text, self.known_codes)
        if UNUSED_NOQA not in ran:  # else MP900 reports them
            for line, code in suppressions.unknown:
                out.errors.append(FileError(source.path, f"line {line}: unknown rule {code} in a suppression comment", "warning"))
        seen = set()
        spans = StatementSpans(module, positions)
        for rule in sorted(reports):
            entry = self.catalog[rule]
            placed = [(positions[r.node], r) for r in reports[rule] if r.node in positions]
            placed.sort(key=lambda item: (item[0].start.line, item[0].start.column))
            for rng, report in placed:
                first, last = spans.span(rng)
                if suppressions.suppressed(rule, first, last) or any(
                        suppressions.suppressed(rule, *spans.span(positions[other]))
                        for other in report.noqa_at if other in positions):
                    continue
                safety = self._safety(entry, report)
                finding = Finding(
                    path=source.path, line=rng.start.line, col=rng.start.column + 1,
                    end_line=rng.end.line, end_col=rng.end.column + 1, rule=rule,
                    severity=report.severity or entry.severity, message=report.message, fix=safety,
                )
                key = (finding.line, rule)
                if key in seen:
                    continue  # one finding per line and rule; a fix pass finds the rest
                seen.add(key)
                out.findings.append(finding)
                if safety is not None and report.fix is not None:
                    out.fixes.append(FixCandidate(finding, report.fix, safety))
        if UNUSED_NOQA in ran:  # once every other rule has met the suppressions
            report_unused(source.path, module, source.text, suppressions, ran, self.known_codes,
                          self.catalog[UNUSED_NOQA], out)
        out.findings.sort(key=lambda f: (f.line, f.col, f.rule))

    @staticmethod
    def _safety(entry: RuleEntry, report: Report) -> Optional[Safety]:
        """The catalog caps a fix's safety; dropping a comment demotes it to unsafe."""
        if report.fix is None or not entry.fixable:
            return None
        if entry.fix_safety == Safety.UNSAFE or report.fix.safety == Safety.UNSAFE:
            return Safety.UNSAFE
        for old, new in report.fix.replacements.items():
            if not comments_of(old) <= comments_of(new):
                return Safety.UNSAFE
        return Safety.SAFE


#: the note for a file whose Keras generation nothing tells (no setting, pin, installed
#: TensorFlow or telling spelling) where a rule needed it (``Check.generation_unknown``)
UNKNOWN_GENERATION = (
    "the Keras generation (2 or 3) is unknown, so the loss-scaling rules that depend on it (MP202's fix, "
    "MP206, MP207) could not fully check the code; set `keras-version = 3` (or 2) under [tool.mplint], "
    "or pin tensorflow or keras in the project's dependencies")


@contextmanager
def _deep_recursion() -> Iterator[None]:
    """The walk and the positions recurse once per level of the tree (a 3,000-branch
    ``elif`` chain, a 400-term ``+`` chain): allow as deep as the fixer does."""
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, RECURSION_LIMIT))
    try:
        yield
    finally:
        sys.setrecursionlimit(limit)


def _from_recursion(exc: Optional[BaseException]) -> bool:
    """Whether ``exc`` is, or was raised while handling, a RecursionError (libcst's
    PositionProvider turns one into a KeyError on its way out, one per level it unwinds:
    on Python 3.12 the chain is as long as the recursion was deep)."""
    seen: Set[int] = set()
    while exc is not None and id(exc) not in seen:
        if isinstance(exc, RecursionError):
            return True
        seen.add(id(exc))
        exc = exc.__cause__ or exc.__context__
    return False


class _CommentCollector(cst.CSTVisitor):
    def __init__(self) -> None:
        self.found: List[str] = []

    def visit_Comment(self, node: cst.Comment) -> None:
        self.found.append(node.value)


def comments_of(node: object) -> FrozenSet[str]:
    if not isinstance(node, cst.CSTNode):
        if isinstance(node, cst.FlattenSentinel):
            return frozenset().union(*(comments_of(n) for n in node.nodes))
        return frozenset()
    collector = _CommentCollector()
    node.visit(collector)
    return frozenset(collector.found)


_STATEMENT_PARTS = (cst.BaseCompoundStatement, cst.IndentedBlock, cst.Else, cst.Finally,
                    cst.ExceptHandler, cst.ExceptStarHandler, cst.MatchCase)


class StatementSpans:
    """Lines of the statement holding a finding, for ``# noqa`` on any of them.

    A finding inside a compound statement's header (``with``, ``def``) spans the
    header lines only, never the whole block. Each block's statements are indexed
    by their first line when first asked for, so each finding costs a bisect per
    level of nesting, not a scan of the file's statements (4,000 findings in one
    file made that scan quadratic).
    """

    def __init__(self, module: cst.Module, positions: Dict[cst.CSTNode, CodeRange]) -> None:
        self.module = module
        self.positions = positions
        self._blocks: Dict[int, Tuple[List[int], List[Tuple[cst.CSTNode, CodeRange]]]] = {}

    def _holding(self, owner: cst.CSTNode, line: int) -> Optional[Tuple[cst.CSTNode, CodeRange]]:
        """The statement (or block part) directly in ``owner`` whose lines hold ``line``."""
        index = self._blocks.get(id(owner))
        if index is None:
            nodes: Sequence[cst.CSTNode] = owner.body if isinstance(owner, cst.Module) else [
                c for c in owner.children if isinstance(c, _STATEMENT_PARTS + (cst.SimpleStatementLine,))]
            placed = [(node, pos) for node in nodes for pos in (self.positions.get(node),) if pos is not None]
            placed.sort(key=lambda item: item[1].start.line)  # siblings never share a first line
            index = self._blocks[id(owner)] = ([pos.start.line for _, pos in placed], placed)
        starts, placed = index
        at = bisect_right(starts, line) - 1
        if at >= 0 and placed[at][1].end.line >= line:
            return placed[at]
        return None

    def span(self, rng: CodeRange) -> Tuple[int, int]:
        line = rng.start.line
        owner: cst.CSTNode = self.module
        span = (rng.start.line, rng.end.line)
        while True:
            found = self._holding(owner, line)
            if found is None:
                return span
            node, pos = found
            if isinstance(node, cst.SimpleStatementLine):
                return (min(pos.start.line, span[0]), max(pos.end.line, span[1]))
            if isinstance(node, cst.BaseCompoundStatement):
                body = self.positions.get(node.body)
                header_end = pos.start.line
                if body is not None and isinstance(node.body, cst.IndentedBlock) and node.body.body:
                    first = self.positions.get(node.body.body[0])
                    if first is not None:
                        header_end = max(pos.start.line, first.start.line - 1)
                elif body is not None:
                    header_end = body.end.line
                if line <= header_end:
                    return (min(pos.start.line, span[0]), max(header_end, span[1]))
            owner = node


def _imported_literal(ctx: Context, expr: cst.BaseExpression) -> object:
    """The string or number constant another project module binds ``expr`` to (read
    there through the keyed reads, so a cached result follows that module's content)."""
    from mplint.analysis.module_constants import imported_literal
    return imported_literal(ctx, expr)


def _imported_field(ctx: Context, call: Optional[cst.Call], attr: str,
                    spread: Callable[[cst.BaseExpression], Optional[Mapping[str, cst.BaseExpression]]],
                    home: Optional[Tuple[str, str]]) -> Optional[Tuple[str, object]]:
    """A field of a config object built of a class of another project module (read there
    through the keyed reads, as :func:`_imported_literal`)."""
    from mplint.analysis.module_constants import imported_field
    return imported_field(ctx, call, attr, spread, home)


def _config_value(ctx: Context, written: Written, keys: Sequence[str]) -> object:
    """The value at ``keys`` of a configuration file the checked file loads (read through
    the keyed reads, so a cached result follows the file's content)."""
    from mplint.analysis.module_constants import file_value
    root = Path(ctx.facts.project_root) if ctx.facts.project_root else None
    return file_value(written, keys, ctx.path, root)


def _loader_value(ctx: Context, call: cst.Call, keys: Sequence[str],
                  strings: Callable[[cst.BaseExpression], Optional[str]]) -> object:
    """The value at ``keys`` of the file another module's loader function returns (read
    through the keyed reads)."""
    from mplint.analysis.module_constants import loader_value
    return loader_value(ctx, call, keys, strings)


def _inherited_store(ctx: Context, cls: Scope, attr: str) -> Optional[StoredForm]:
    """How a base class of another project module stores ``self.<attr>`` (read there; the
    layer analysis imports libcst's walker, so only when asked)."""
    from mplint.analysis.imported_layers import imported_stored_form
    return imported_stored_form(ctx, cls, attr)
