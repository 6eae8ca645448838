"""``# noqa``, ``# noqa: MP101`` and ``# mplint: noqa: MP101``, handled once for every rule.

A line comment suppresses the named codes (a bare ``# noqa``: every code, as in
flake8 and ruff) for findings whose statement spans that line; a file-level
comment on its own line suppresses them for the whole file (without codes, every
rule). Each line directive remembers the codes that suppressed something, so the
opt-in rule MP900 can report the ones that did not (ruff's RUF100), and
:func:`add_codes` writes the directives ``mplint check --add-noqa`` adds.
"""

from __future__ import annotations

import io
import re
import tokenize
from dataclasses import dataclass, field
from typing import Dict, FrozenSet, Iterable, List, Optional, Set, Tuple

_CODE_TEXT = r"[A-Za-z]+[0-9][A-Za-z0-9]*"
#: ``# noqa`` (bare, or ``# noqa E501`` as flake8 reads it) or ``# noqa: CODE, CODE``
_NOQA = re.compile(rf"#\s*noqa(?![\w-])(?:\s*:\s*(?P<codes>{_CODE_TEXT}(?:[\s,]+{_CODE_TEXT})*))?", re.I)
_CODE_ITEM = re.compile(_CODE_TEXT)
_FILE_NOQA = re.compile(r"^#\s*mplint\s*:\s*noqa(?:\s*:\s*(?P<codes>[A-Za-z0-9_]+(?:[\s,]+[A-Za-z0-9_]+)*))?\s*$", re.I)
_RULE_ID = re.compile(r"^MP\d{3}$")

ALL = "ALL"


@dataclass(frozen=True)
class Directive:
    """One ``# noqa`` in a line comment: where it is, and its codes (none: bare)."""

    line: int
    #: 0-based column of the comment that holds it
    comment_col: int
    comment: str
    #: the directive's span in ``comment``: from its ``#`` to the end of its last code
    start: int
    end: int
    codes: Tuple[str, ...]
    #: each code's span in ``comment``
    spans: Tuple[Tuple[int, int], ...]

    @property
    def bare(self) -> bool:
        return not self.codes

    @property
    def col(self) -> int:
        """0-based column of the directive in its line."""
        return self.comment_col + self.start


@dataclass(frozen=True)
class Unused:
    """Codes of a directive that suppress nothing, and what becomes of its comment."""

    directive: Directive
    unused: Tuple[str, ...] = ()
    unknown: Tuple[str, ...] = ()
    duplicated: Tuple[str, ...] = ()

    @property
    def codes(self) -> Tuple[str, ...]:
        return self.unused + self.unknown + self.duplicated

    def message(self) -> str:
        parts = [f"{kind}: {', '.join(f'`{c}`' for c in codes)}"
                 for kind, codes in (("unused", self.unused), ("unknown", self.unknown),
                                     ("duplicated", self.duplicated)) if codes]
        return f"unused `noqa` directive ({'; '.join(parts)})"

    def fixed_comment(self) -> Optional[str]:
        """The comment without these codes; None when nothing of it is left."""
        d = self.directive
        dropped = list(self.duplicated)
        keep: List[str] = []
        for code in d.codes:
            if code in self.unused or code in self.unknown:
                continue
            if code in dropped and code in keep:
                dropped.remove(code)
                continue
            keep.append(code)
        if keep:
            first, last = d.spans[0][0], d.spans[-1][1]
            return d.comment[:first] + ", ".join(keep) + d.comment[last:]
        before, after = d.comment[:d.start].rstrip(), d.comment[d.end:].strip()
        if before:
            return before + (" " + after if after else "")
        if after:
            return after if after.startswith("#") else "# " + after
        return None


@dataclass
class Suppressions:
    directives: Dict[int, Directive] = field(default_factory=dict)
    file_codes: FrozenSet[str] = frozenset()
    unknown: List[Tuple[int, str]] = field(default_factory=list)
    #: (line, code) of the directives that suppressed a finding (ALL for a bare one)
    used: Set[Tuple[int, str]] = field(default_factory=set)

    def suppressed(self, rule: str, first_line: int, last_line: int) -> bool:
        if ALL in self.file_codes or rule in self.file_codes:
            return True
        for line in range(first_line, last_line + 1):
            directive = self.directives.get(line)
            if directive is None:
                continue
            if directive.bare:
                self.used.add((line, ALL))
                return True
            if rule in directive.codes:
                self.used.add((line, rule))
                return True
        return False

    def unused(self, ran: Iterable[str], known: FrozenSet[str]) -> List[Unused]:
        """Directives with codes that suppressed nothing: codes of rules that ran on
        the file (``ran``) without reporting there, unknown ``MP`` codes, and repeats.

        Codes of other tools (``E501``) and of rules that did not run (not selected,
        ignored for the file) are left alone: nothing is known about them. A bare
        ``# noqa`` may serve another linter, and is left alone too.
        """
        ran = frozenset(ran)
        out = []
        for line, d in sorted(self.directives.items()):
            unused, unknown, duplicated, seen = [], [], [], set()
            for code in d.codes:
                if code in seen:
                    duplicated.append(code)
                    continue
                seen.add(code)
                if _unknown(code, known):
                    unknown.append(code)
                elif code in ran and (line, code) not in self.used:
                    unused.append(code)
            if unused or unknown or duplicated:
                out.append(Unused(d, tuple(unused), tuple(unknown), tuple(duplicated)))
        return out


def _split(codes: str) -> List[str]:
    return [c.upper() for c in re.split(r"[\s,]+", codes.strip()) if c]


def _unknown(code: str, known: FrozenSet[str]) -> bool:
    return code.startswith("MP") and (not _RULE_ID.match(code) or code not in known)


def _comments(text: str) -> List[tokenize.TokenInfo]:
    """The comment tokens of ``text`` (none when it does not tokenize)."""
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(text).readline))
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return []
    return [tok for tok in tokens if tok.type == tokenize.COMMENT]


def directive_in(comment: str, line: int, col: int) -> Optional[Directive]:
    """The ``# noqa`` directive in one comment token, if any."""
    match = _NOQA.search(comment)
    if match is None:
        return None
    spans = tuple((m.start() + match.start("codes"), m.end() + match.start("codes"))
                  for m in _CODE_ITEM.finditer(match.group("codes") or ""))
    codes = tuple(comment[a:b].upper() for a, b in spans)
    return Directive(line, col, comment, match.start(), match.end(), codes, spans)


def scan(text: str, known: FrozenSet[str]) -> Suppressions:
    """Find suppression comments with the tokenizer, so strings never count."""
    out = Suppressions()
    if "noqa" not in text.lower():
        return out
    file_codes: Set[str] = set()
    for tok in _comments(text):
        line_no = tok.start[0]
        own_line = tok.line[: tok.start[1]].strip() == ""
        file_match = _FILE_NOQA.match(tok.string.strip()) if own_line else None
        if file_match:
            codes = _split(file_match.group("codes") or "") or [ALL]
            file_codes.update(codes)
            out.unknown += [(line_no, c) for c in codes if c != ALL and _unknown(c, known)]
            continue
        directive = directive_in(tok.string, line_no, tok.start[1])
        if directive is not None:
            out.directives[line_no] = directive
            out.unknown += [(line_no, c) for c in directive.codes if _unknown(c, known)]
    out.file_codes = frozenset(file_codes)
    return out


# -- --add-noqa ---------------------------------------------------------------------------
def commentable_lines(text: str) -> Set[int]:
    """Lines whose end is outside any string and any backslash continuation, where
    a comment may be added (from the tokenizer: they end in NEWLINE or NL)."""
    try:
        tokens = tokenize.generate_tokens(io.StringIO(text).readline)
        return {tok.start[0] for tok in tokens if tok.type in (tokenize.NEWLINE, tokenize.NL)}
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return set()


def add_codes(text: str, wanted: Dict[int, Set[str]]) -> Tuple[str, int]:
    """``text`` with ``# noqa: CODES`` for each line of ``wanted`` (line -> codes),
    merged into a directive already there; and how many directives changed.

    Lines keep their endings; a comment already on the line stays before the
    directive added after it.
    """
    # Split at "\n" only, as the tokenizer counts lines (not at form feeds or U+2028).
    lines = [line + "\n" for line in text.split("\n")]
    lines[-1] = lines[-1][:-1]
    comments = {tok.start[0]: tok for tok in _comments(text)}
    changed = 0
    for line_no, codes in sorted(wanted.items()):
        if not 1 <= line_no <= len(lines):
            continue
        body = lines[line_no - 1]
        ending = body[len(body.rstrip("\r\n")):]
        body = body[: len(body) - len(ending)]
        tok = comments.get(line_no)
        directive = directive_in(tok.string, line_no, tok.start[1]) if tok is not None else None
        if directive is not None and directive.bare:
            continue  # already suppresses everything
        if directive is not None:
            merged = sorted(set(directive.codes) | codes)
            if merged == sorted(set(directive.codes)):
                continue
            assert tok is not None
            first, last = directive.spans[0][0], directive.spans[-1][1]
            comment = tok.string[:first] + ", ".join(merged) + tok.string[last:]
            col = tok.start[1]
            body = body[:col] + comment + body[col + len(tok.string):]
        else:
            body = body.rstrip() + "  # noqa: " + ", ".join(sorted(codes))
        lines[line_no - 1] = body + ending
        changed += 1
    return "".join(lines), changed
