"""The README's rule table, generated from the catalog.

``python -m mplint.docs`` rewrites the table between the README's markers; a test
fails when the README and the catalog disagree.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Dict, Optional

from mplint.rule.catalog import RuleEntry, load_catalog

START, END = "<!-- rules:start -->", "<!-- rules:end -->"


def rule_table(catalog: Optional[Dict[str, RuleEntry]] = None) -> str:
    rows = ["| id | name | severity | fix | summary |", "|---|---|---|---|---|"]
    for entry in (catalog or load_catalog()).values():
        summary = entry.summary.replace("|", "\\|")
        rows.append(f"| {entry.id} | {entry.name} | {entry.severity} | {entry.fix_safety} | {summary} |")
    return "\n".join(rows)


def render(readme: str, catalog: Optional[Dict[str, RuleEntry]] = None) -> str:
    head, _, rest = readme.partition(START)
    _, _, tail = rest.partition(END)
    return f"{head}{START}\n{rule_table(catalog)}\n{END}{tail}"


def main() -> int:
    path = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parent.parent / "README.md"
    path.write_text(render(path.read_text(encoding="utf-8")), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
