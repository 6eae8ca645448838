"""MP900: ``# noqa`` codes that suppress nothing, found once the other rules' findings
have met the suppressions (ruff's RUF100 runs at the same point).

A finding points at the directive; its fix rewrites the comment without the
unused codes, or removes the comment when nothing of it is left. Comments are
libcst ``Comment`` nodes inside ``TrailingWhitespace`` or ``EmptyLine``; they are
matched to the tokenizer's comments in source order.
"""

from __future__ import annotations

import io
import tokenize
from typing import Dict, FrozenSet, List, Optional, Sequence, Union

import libcst as cst
from libcst.metadata import CodePosition, CodeRange

from mplint.core.findings import Finding
from mplint.core.results import FileAnalysis, FixCandidate
from mplint.core.suppression import Suppressions, Unused
from mplint.rule.catalog import RuleEntry
from mplint.rule.check import Fix
from mplint.rule.levels import Safety

#: the rule this module reports (its catalog entry is rules/MP900.yaml)
UNUSED_NOQA = "MP900"

Holder = Union[cst.TrailingWhitespace, cst.EmptyLine]


class _Holders(cst.CSTVisitor):
    """Every node that holds a comment, in source order."""

    def __init__(self) -> None:
        super().__init__()
        self.found: List[Holder] = []

    def visit_TrailingWhitespace(self, node: cst.TrailingWhitespace) -> None:
        if node.comment is not None:
            self.found.append(node)

    def visit_EmptyLine(self, node: cst.EmptyLine) -> None:
        if node.comment is not None:
            self.found.append(node)


def _holders_by_line(module: cst.Module, text: str) -> Dict[int, Holder]:
    """The comment holder of each line with a comment; empty when the tokenizer's
    comments and libcst's disagree (then no fix is offered)."""
    visitor = _Holders()
    module.visit(visitor)
    try:
        tokens = [t for t in tokenize.generate_tokens(io.StringIO(text).readline) if t.type == tokenize.COMMENT]
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return {}
    if len(tokens) != len(visitor.found):
        return {}
    out: Dict[int, Holder] = {}
    for token, holder in zip(tokens, visitor.found):
        assert holder.comment is not None
        if token.string != holder.comment.value:
            return {}
        out[token.start[0]] = holder
    return out


def _replacement(holder: Holder, comment: Optional[str]) -> Union[cst.CSTNode, cst.RemovalSentinel]:
    if comment is not None:
        return holder.with_changes(comment=cst.Comment(comment))
    if isinstance(holder, cst.EmptyLine):
        return cst.RemoveFromParent()
    return holder.with_changes(whitespace=cst.SimpleWhitespace(""), comment=None)


def report_unused(path: str, module: cst.Module, text: str, suppressions: Suppressions,
                  ran: Sequence[str], known: FrozenSet[str], entry: RuleEntry, out: FileAnalysis) -> None:
    """Add MP900's findings (and their fixes) to ``out``: the directives whose codes
    suppressed nothing, of the rules that ran on the file (``ran``); ``known`` are
    the catalog's rule ids, for telling a misspelt code."""
    unused: List[Unused] = suppressions.unused([r for r in ran if r != entry.id], known)
    holders: Optional[Dict[int, Holder]] = None
    for item in unused:
        d = item.directive
        if suppressions.suppressed(entry.id, d.line, d.line):
            continue
        safety = Safety.SAFE if entry.fixable else None
        finding = Finding(path=path, line=d.line, col=d.col + 1, end_line=d.line,
                          end_col=d.comment_col + d.end + 1, rule=entry.id, severity=entry.severity,
                          message=item.message(), fix=safety)
        out.findings.append(finding)
        if safety is None or out.positions is None:
            continue
        if holders is None:
            holders = _holders_by_line(module, text)
        holder = holders.get(d.line)
        if holder is None:
            continue
        # The fixer keeps fixes apart by the span they edit: the comment's.
        out.positions[holder] = CodeRange(CodePosition(d.line, d.comment_col),
                                          CodePosition(d.line, d.comment_col + len(d.comment)))
        fix = Fix({holder: _replacement(holder, item.fixed_comment())}, safety=safety)
        out.fixes.append(FixCandidate(finding, fix, safety))
