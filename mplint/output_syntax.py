"""A syntax error is reported as a finding at ``path:line:col``, in every format, as
ruff reports one: it is a problem in the code, with a place, not a tool failure.
It counts as a finding for the exit code (1, or 0 with ``--exit-zero``).

The parser's one-line message (:mod:`mplint.core.source`) says where:
``syntax error at line 2, column 5: '(' was never closed``; a notebook's names its
cell. Files that cannot be read or decoded stay errors (exit 2).
"""

from __future__ import annotations

import re
from typing import List, Optional, Sequence, Tuple

from mplint.core.findings import FileError, Finding

#: the ``rule`` of a syntax error finding (JSON, SARIF ``ruleId``); not a catalog rule
SYNTAX_ERROR = "syntax-error"
#: how the text formats name it, as ruff does (``path:2:5: SyntaxError: ...``)
SYNTAX_ERROR_TITLE = "SyntaxError"

_PLACE = re.compile(r"syntax error at (?:cell (?P<cell>\d+), )?line (?P<line>\d+)(?:, column (?P<col>\d+))?: "
                    r"(?P<message>.*)", re.S)


def syntax_finding(error: FileError) -> Optional[Finding]:
    """The finding a syntax error is, None for any other error."""
    match = _PLACE.fullmatch(error.message) if error.kind == "error" else None
    if match is None:
        return None
    line, col = int(match["line"]), int(match["col"] or 1)
    return Finding(path=error.path, line=line, col=col, end_line=line, end_col=col, rule=SYNTAX_ERROR,
                   severity="error", message=match["message"], fix=None,
                   cell=int(match["cell"]) if match["cell"] else None)


def split_syntax_errors(errors: Sequence[FileError]) -> Tuple[List[Finding], List[FileError]]:
    """The syntax errors among ``errors`` as findings, and the other errors."""
    findings: List[Finding] = []
    others: List[FileError] = []
    for error in errors:
        finding = syntax_finding(error)
        if finding is None:
            others.append(error)
        else:
            findings.append(finding)
    return findings, others
