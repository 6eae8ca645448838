#!/usr/bin/env python3
"""Write the boilerplate of a new rule: its check module, its catalog entry, its README row.

    python scripts/add_rule.py MP506 float16-cumsum --severity warning --fix none \\
        --summary "A cumulative sum runs in float16."

The catalog entry's examples are placeholders that the catalog test runs at once:
it fails until the check reports the bad example and stays silent on the good one,
so the rule starts from a failing test. CONTRIBUTING.md walks through the rest.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

MODULE = '''"""{rule_id}: {summary_sentence}"""

from __future__ import annotations

import libcst as cst

from mplint.rule.check import Check, Needs


class {class_name}(Check):
    rule_id = "{rule_id}"
    #: the words every finding needs in the file's bytes (the prescan skips files without them)
    needs = Needs((b"TODO",))

    def visit_Call(self, node: cst.Call) -> None:
        """Report what the catalog entry describes (see CONTRIBUTING.md)."""
'''

ENTRY = '''id: {rule_id}
name: {name}
summary: {summary}
severity: {severity}
why: |
  TODO: why it matters, citing the TensorFlow mixed precision guide or the API source,
  and where the rule stays silent.
fix:
  safety: {fix}
  description: |
    {fix_description}
references:
  - https://www.tensorflow.org/guide/mixed_precision
examples:
  - bad: |
      import tensorflow as tf

      # TODO: code the rule must report
{fixed}  - good: |
      import tensorflow as tf

      # TODO: the closest code the rule must leave alone
'''


def class_name(name: str) -> str:
    return "".join(part.capitalize() for part in name.split("-"))


def write(path: Path, text: str) -> None:
    if path.exists():
        raise SystemExit(f"add_rule: {path} exists already")
    path.write_text(text, encoding="utf-8")
    print(f"wrote {path}")


def main(argv: "list[str] | None" = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("rule_id", help="MPxxx: 1xx model outputs, 2xx loss scaling, "
                                        "3xx alignment, 4xx policy setup, 5xx numerics")
    parser.add_argument("name", help="kebab-case name, e.g. float16-cumsum")
    parser.add_argument("--summary", required=True, help="one sentence")
    parser.add_argument("--severity", choices=("error", "warning"), default="warning")
    parser.add_argument("--fix", choices=("safe", "unsafe", "none"), default="none")
    parser.add_argument("--root", type=Path, default=ROOT, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if not re.fullmatch(r"MP[1-9]\d\d", args.rule_id):
        parser.error("rule id must look like MP506")
    if not re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", args.name):
        parser.error("name must be kebab-case")
    root: Path = args.root
    module = root / "mplint" / "checks" / f"{args.rule_id.lower()}_{args.name.replace('-', '_')}.py"
    entry = root / "rules" / f"{args.rule_id}.yaml"
    if entry.exists() or list(module.parent.glob(f"{args.rule_id.lower()}_*.py")):
        raise SystemExit(f"add_rule: {args.rule_id} exists already")
    summary = args.summary.strip().rstrip(".") + "."
    write(module, MODULE.format(rule_id=args.rule_id, class_name=class_name(args.name),
                                summary_sentence=summary[0].lower() + summary[1:]))
    fixed = ("" if args.fix == "none" else
             "    fixed: |\n      import tensorflow as tf\n\n      # TODO: the bad example after `mplint fix`\n")
    write(entry, ENTRY.format(rule_id=args.rule_id, name=args.name, summary=summary,
                              severity=args.severity, fix=args.fix, fixed=fixed,
                              fix_description="None." if args.fix == "none" else "TODO: what the fix changes."))
    readme = root / "README.md"
    sys.path.insert(0, str(root))
    from mplint import docs
    from mplint.rule.catalog import load_catalog

    load_catalog.cache_clear()
    readme.write_text(docs.render(readme.read_text(encoding="utf-8"), load_catalog(str(root / "rules"))),
                      encoding="utf-8")
    print(f"updated the rule table in {readme}")
    print(f"next: python -m pytest tests/test_catalog.py -k {args.rule_id}  (fails until the check reports)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
