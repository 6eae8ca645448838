"""Text for a terminal or a CI log: control characters in file names and source lines
shown as escapes, never sent raw.

A file name may hold a newline (which starts a new line of the log: a forged
``::error::`` workflow command in GitHub's), an escape sequence (which recolours or
rewrites the terminal), or bidirectional controls (which reorder what is shown, as
in Trojan Source); a name that is not UTF-8 holds lone surrogates, which a strict
UTF-8 stream cannot write. Each is written as Python writes it in a string
literal: ``\\n``, ``\\x1b``, ``\\u202e``, and a byte that is not UTF-8 as ``\\xff``.
Machine formats (JSON, SARIF, GitLab) keep the real text, which their encoders
escape; JUnit's XML cannot hold most control characters at all, so it takes
:func:`xml_safe`.
"""

from __future__ import annotations

import re

#: C0 controls but tab, DEL and C1 controls, bidirectional controls, lone surrogates
_UNPRINTABLE = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
#: what XML 1.0 cannot hold at all, even as a character reference
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")

_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape(match: "re.Match[str]", keep: str = "") -> str:
    char = match.group()
    if char in keep:
        return char
    code = ord(char)
    if 0xDC80 <= code <= 0xDCFF:  # a byte that is not UTF-8, decoded with surrogateescape
        return f"\\x{code - 0xDC00:02x}"
    named = _NAMED.get(char)
    if named is not None:
        return named
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def printable(text: str, keep: str = "") -> str:
    """``text`` with every control character but tabs (and those in ``keep``)
    written as an escape."""
    return _UNPRINTABLE.sub(lambda match: _escape(match, keep), text)


def xml_safe(text: str) -> str:
    """``text`` with what XML 1.0 cannot hold written as an escape (the rest is the
    XML writer's to escape)."""
    return _NOT_XML.sub(_escape, text)
