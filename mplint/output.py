"""Finding formatters: ``--output-format`` picks one by name.

A formatter takes the findings (sorted by path and position) and returns the text
to print on stdout. Summaries and per-file errors are the CLI's business.
"""

from __future__ import annotations

import json
from typing import Callable, Dict, List

from mplint.findings import Finding

Formatter = Callable[[List[Finding]], str]


def text(findings: List[Finding]) -> str:
    lines = []
    for f in findings:
        mark = " [*]" if f.fix else ""
        lines.append(f"{f.location}: {f.rule} {f.message}{mark}")
    return "\n".join(lines) + ("\n" if lines else "")


def json_format(findings: List[Finding]) -> str:
    return json.dumps([f.to_dict() for f in findings], indent=2) + "\n"


FORMATTERS: Dict[str, Formatter] = {
    "text": text,
    "json": json_format,
}
