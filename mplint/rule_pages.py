"""Rule documentation as Markdown pages, from the catalog: the one text SARIF's
``help.markdown`` carries and the documentation site (mkdocs) shows.

``python -m mplint.rule_pages DOCS_DIR`` writes ``index.md`` (the rule table) and one
``rules/MPxxx.md`` per rule into DOCS_DIR; ``mkdocs.yml`` at the repository's root
builds them (``mkdocs build --strict``). A page says what ``mplint rule MPxxx`` says:
why, the fix and its safety, bad and good examples, options, references.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Dict, List, Optional

from mplint.rule.catalog import RuleEntry, load_catalog

_SAFETY = {
    "safe": "Safe: it keeps behaviour and comments, and `mplint fix` applies it.",
    "unsafe": "Unsafe: it may change behaviour, so `mplint fix` applies it only with `--unsafe-fixes`.",
}


def _code(text: str) -> List[str]:
    return ["```python", text.rstrip("\n"), "```", ""]


def rule_markdown(entry: RuleEntry, heading: str = "#") -> str:
    """The rule's page. ``heading`` is the title's level (SARIF viewers show the
    help under a title of their own)."""
    sub = heading + "#"
    lines = [f"{heading} {entry.id}: {entry.name}", "", entry.summary, "",
             f"Severity: **{entry.severity}**." + (" Opt-in: select it by its code." if entry.opt_in else ""), "",
             f"{sub} Why it matters", "", entry.why.strip(), ""]
    lines += [f"{sub} Fix", ""]
    if entry.fixable:
        lines += [_SAFETY.get(entry.fix_safety.value, entry.fix_safety.value), "", entry.fix_description.strip(), ""]
    else:
        lines += [entry.fix_description.strip() or "No automatic fix.", ""]
    for example in entry.examples:
        if example.kind == "bad":
            lines += [f"{sub} Example", ""] + _code(example.code)
            if example.fixed:
                lines += ["`mplint fix` makes it:", ""] + _code(example.fixed)
    goods = [e for e in entry.examples if e.kind == "good"]
    if goods:
        lines += [f"{sub} Use instead", ""]
        for example in goods:
            lines += _code(example.code)
    if entry.options:
        lines += [f"{sub} Options", ""]
        lines += [f"- `{o.name}` ({o.type}, default `{o.default!r}`): {o.description}" for o in entry.options]
        lines.append("")
    if entry.references:
        lines += [f"{sub} References", ""] + [f"- <{r}>" for r in entry.references] + [""]
    return "\n".join(lines)


def index_markdown(catalog: Dict[str, RuleEntry]) -> str:
    rows = ["# mplint rules", "", "| Rule | Name | Severity | Fix | Summary |", "|---|---|---|---|---|"]
    for entry in catalog.values():
        summary = entry.summary.replace("|", "\\|")
        rows.append(f"| [{entry.id}](rules/{entry.id}.md) | {entry.name} | {entry.severity} | "
                    f"{entry.fix_safety.value} | {summary} |")
    return "\n".join(rows) + "\n"


def write_pages(folder: Path, catalog: Optional[Dict[str, RuleEntry]] = None) -> List[Path]:
    """Write the site's pages into ``folder``; the paths written."""
    catalog = catalog or load_catalog()
    (folder / "rules").mkdir(parents=True, exist_ok=True)
    written = [folder / "index.md"]
    written[0].write_text(index_markdown(catalog), encoding="utf-8")
    for entry in catalog.values():
        page = folder / "rules" / f"{entry.id}.md"
        page.write_text(rule_markdown(entry), encoding="utf-8")
        written.append(page)
    return written


def main(argv: Optional[List[str]] = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    folder = Path(args[0]) if args else Path(__file__).resolve().parent.parent / "docs"
    write_pages(folder)
    return 0


if __name__ == "__main__":
    sys.exit(main())
