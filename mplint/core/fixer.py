"""Apply fixes: non-overlapping edits in one pass, re-parse, repeat to a fixed point.

Each pass applies every allowed fix whose edited nodes do not overlap an earlier
one's, then re-parses the result (a fix that yields invalid code is rolled back and
reported) and checks again, until nothing is left to apply or the pass cap is hit.
"""

from __future__ import annotations

import sys
from typing import Callable, Dict, List, Mapping, Optional, Sequence, Tuple

import libcst as cst

from mplint.core.findings import FileError
from mplint.core.results import REPORT_TO, FileAnalysis, FixCandidate, FixOutcome, describe
from mplint.core.source import Source, parse_text
from mplint.rule.edits import fit_line_length

MAX_PASSES = 10
#: as deep as ``Linter.analyze`` lets the walk recurse (a 400-term ``+`` chain)
RECURSION_LIMIT = 20000

#: how the fixer asks for findings and fixes: ``Linter.analyze``
Analyze = Callable[[Source, cst.Module, Optional[Sequence[type]]], FileAnalysis]


class _Replace(cst.CSTTransformer):
    def __init__(self, replacements: Mapping[int, object]) -> None:
        super().__init__()
        self.replacements = replacements

    def on_leave(self, original_node, updated_node):
        return self.replacements.get(id(original_node), updated_node)


def _ranges(candidate: FixCandidate, positions) -> List[Tuple[Tuple[int, int], Tuple[int, int]]]:
    out = []
    for node in candidate.fix.replacements:
        rng = positions.get(node)
        if rng is None:
            return []
        out.append(((rng.start.line, rng.start.column), (rng.end.line, rng.end.column)))
    return out


def _overlaps(a, b) -> bool:
    return any(x[0] < y[1] and y[0] < x[1] or x == y for x in a for y in b)


def fix_program(analyze: Analyze, source: Source, module: cst.Module, unsafe: bool,
                outcome: FixOutcome, classes: Optional[Sequence[type]] = None,
                line_length: Optional[int] = None) -> Tuple[Optional[str], FixOutcome]:
    """Fix one parsed program in memory: the fixed text (None when nothing was
    applied) and ``outcome`` filled in. ``classes`` are the checks that may report
    in the program as read; later passes find them again in the fixed text, which
    a fix may have given new words. A call a fix made longer than ``line_length``
    (the project's formatter's) is wrapped."""
    text = source.text
    for _ in range(MAX_PASSES):
        analysis = analyze(source, module, classes)
        classes = None
        outcome.errors = [e for e in outcome.errors if e.kind != "warning"] + analysis.errors
        chosen: List[FixCandidate] = []
        taken: List = []
        for candidate in analysis.fixes:
            if candidate.safety == "unsafe" and not unsafe:
                continue
            spans = _ranges(candidate, analysis.positions or {})
            if not spans or any(_overlaps(spans, t) for t in taken):
                continue
            chosen.append(candidate)
            taken.append(spans)
        outcome.remaining = analysis.findings
        if not chosen:
            break
        rules = ", ".join(sorted({c.finding.rule for c in chosen}))
        limit = sys.getrecursionlimit()
        sys.setrecursionlimit(max(limit, RECURSION_LIMIT))  # the transform recurses as deep as the file nests
        try:
            new_text = _apply(module, chosen, line_length).code
        except Exception as exc:  # a broken fix must not stop the other files
            outcome.errors.append(FileError(
                source.path, f"internal error in the fix for {rules}: {describe(exc)}; "
                f"nothing was applied. Please report this to {REPORT_TO}"))
            break
        finally:
            sys.setrecursionlimit(limit)
        try:
            reparsed = parse_text(new_text)
        except cst.ParserSyntaxError:
            outcome.errors.append(FileError(
                source.path, f"internal error: the fix for {rules} produced invalid code and was not applied. "
                f"Please report this to {REPORT_TO}"))
            break
        if new_text == text:
            break
        outcome.applied += len(chosen)
        outcome.applied_rules += [c.finding.rule for c in chosen]
        text, module = new_text, reparsed
        source = Source(source.path, source.raw, text, source.encoding, source.bom, source.shell)
    else:
        outcome.errors.append(FileError(source.path, f"fixes did not converge after {MAX_PASSES} passes", "warning"))
    return (text if outcome.applied else None), outcome


def _apply(module: cst.Module, chosen: List[FixCandidate], line_length: Optional[int] = None) -> cst.Module:
    # libcst's codemod package loads its matchers (a third of a second): only when fixing.
    from libcst.codemod import CodemodContext
    from libcst.codemod.visitors import AddImportsVisitor, RemoveImportsVisitor

    replacements: Dict[int, object] = {}
    imports: List[Tuple[str, Optional[str], Optional[str]]] = []
    removals: List[Tuple[str, Optional[str], Optional[str]]] = []
    for candidate in chosen:
        for old, new in candidate.fix.replacements.items():
            replacements[id(old)] = new
        imports.extend(candidate.fix.imports)
        removals.extend(candidate.fix.remove_imports)
    new_module = module.visit(_Replace(replacements))
    new_module = fit_line_length(new_module, [new for candidate in chosen for new in candidate.fix.replacements.values()
                                              if isinstance(new, cst.CSTNode)], line_length)
    if imports:
        context = CodemodContext()
        for mod, obj, asname in imports:
            AddImportsVisitor.add_needed_import(context, mod, obj, asname)
        new_module = AddImportsVisitor(context).transform_module(new_module)
    if removals:
        # Only imports the fixed code no longer uses go (the visitor checks scopes).
        context = CodemodContext()
        for mod, obj, asname in removals:
            RemoveImportsVisitor.remove_unused_import(context, mod, obj, asname)
        new_module = RemoveImportsVisitor(context).transform_module(new_module)
    return new_module
