"""``# noqa: MP101`` and ``# mplint: noqa: MP101``, handled once for every rule.

A line comment suppresses the named codes for findings whose statement spans that
line; a file-level comment on its own line suppresses them for the whole file
(without codes, every rule). Codes are required on line comments, as in the
issue tracker's convention; an unknown ``MP`` code is reported as a warning.
"""

from __future__ import annotations

import io
import re
import tokenize
from dataclasses import dataclass, field
from typing import Dict, FrozenSet, List, Set, Tuple

_NOQA = re.compile(r"#\s*noqa\s*:\s*(?P<codes>[A-Za-z0-9_]+(?:[\s,]+[A-Za-z0-9_]+)*)", re.I)
_FILE_NOQA = re.compile(r"^#\s*mplint\s*:\s*noqa(?:\s*:\s*(?P<codes>[A-Za-z0-9_]+(?:[\s,]+[A-Za-z0-9_]+)*))?\s*$", re.I)
_CODE = re.compile(r"^MP\d{3}$")

ALL = "ALL"


@dataclass
class Suppressions:
    by_line: Dict[int, FrozenSet[str]] = field(default_factory=dict)
    file_codes: FrozenSet[str] = frozenset()
    unknown: List[Tuple[int, str]] = field(default_factory=list)

    def suppressed(self, rule: str, first_line: int, last_line: int) -> bool:
        if ALL in self.file_codes or rule in self.file_codes:
            return True
        for line in range(first_line, last_line + 1):
            codes = self.by_line.get(line)
            if codes and rule in codes:
                return True
        return False


def _split(codes: str) -> List[str]:
    return [c.upper() for c in re.split(r"[\s,]+", codes.strip()) if c]


def scan(text: str, known: FrozenSet[str]) -> Suppressions:
    """Find suppression comments with the tokenizer, so strings never count."""
    out = Suppressions()
    if "noqa" not in text and "NOQA" not in text:
        return out
    file_codes: Set[str] = set()
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(text).readline))
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return out
    for tok in tokens:
        if tok.type != tokenize.COMMENT:
            continue
        line_no = tok.start[0]
        own_line = tok.line[: tok.start[1]].strip() == ""
        file_match = _FILE_NOQA.match(tok.string.strip()) if own_line else None
        if file_match:
            codes = _split(file_match.group("codes") or "") or [ALL]
            file_codes.update(codes)
            _unknown(out, line_no, codes, known)
            continue
        match = _NOQA.search(tok.string)
        if match:
            codes = _split(match.group("codes"))
            out.by_line[line_no] = out.by_line.get(line_no, frozenset()) | frozenset(codes)
            _unknown(out, line_no, codes, known)
    out.file_codes = frozenset(file_codes)
    return out


def _unknown(out: Suppressions, line: int, codes: List[str], known: FrozenSet[str]) -> None:
    for code in codes:
        if code.startswith("MP") and code != ALL and (not _CODE.match(code) or code not in known):
            out.unknown.append((line, code))
