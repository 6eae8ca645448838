#!/usr/bin/env python3
"""Write ``mplint/rule/gate_table.py``: when each rule may report, as data a run reads
without importing the checks (:mod:`mplint.rule.gates`).

    python scripts/gates.py          # write the table
    python scripts/gates.py --check  # exit 1 when the table is not what the checks say

Run it after changing a check's ``needs`` or ``may_report``; ``tests/test_gates.py``
fails until then.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TABLE = ROOT / "mplint" / "rule" / "gate_table.py"

HEAD = '''"""When each rule may report, told from a file's prescan without importing its check
(:mod:`mplint.rule.gates`). Written by ``python scripts/gates.py`` from the checks; do not
edit: ``tests/test_gates.py`` compares it with them."""

from typing import Dict

from mplint.rule.gates import Gate

GATES: Dict[str, Gate] = {
'''


def render() -> str:
    sys.path.insert(0, str(ROOT))
    from mplint.checks import registry
    from mplint.rule.gates import derive

    lines = [HEAD]
    for rule_id, check in sorted(registry().items()):
        gate = derive(check)
        if gate is not None:
            lines.append(f"    {rule_id!r}: {gate!r},\n")
    lines.append("}\n")
    return "".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="compare, do not write")
    args = ap.parse_args()
    text = render()
    if args.check:
        if TABLE.read_text(encoding="utf-8") != text:
            print(f"{TABLE.relative_to(ROOT)} is out of date: run python scripts/gates.py", file=sys.stderr)
            return 1
        return 0
    TABLE.write_text(text, encoding="utf-8")
    print(f"wrote {TABLE.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
