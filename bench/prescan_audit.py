#!/usr/bin/env python3
"""Check that the prescan loses no finding on a real tree: every finding with it on
must equal every finding with it off (each file parsed and every rule run).

    python bench/prescan_audit.py FOLDER [--assume-policy mixed_float16] [--keras-version 3]

Prints how many files each way parses and checks, the time each took, and any
finding only one way found (then exits 1). Run it on real code after changing a
check's ``may_report``; the tests cover the fixtures and catalog examples.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import List, Optional

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from mplint.rule.catalog import load_catalog  # noqa: E402
from mplint.run.config import find_config, load_settings, selected_rules  # noqa: E402
from mplint.run.discovery import LINT_SUFFIXES, discover  # noqa: E402
from mplint.core.prefilter import may_matter  # noqa: E402
from mplint.run.session import Session  # noqa: E402


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folder")
    ap.add_argument("--assume-policy")
    ap.add_argument("--keras-version", type=int, choices=(2, 3))
    ap.add_argument("--jobs", type=int, default=2)
    args = ap.parse_args(argv)
    folder = os.path.abspath(args.folder)
    catalog = load_catalog()
    settings = load_settings(find_config(Path(folder)), catalog, root=Path(folder))
    settings = settings.with_overrides(assume_policy=args.assume_policy, keras_version=args.keras_version)
    rules = selected_rules(catalog, settings.select, settings.ignore)
    found = discover([folder], settings.root, settings.exclude, settings.respect_gitignore,
                     suffixes=LINT_SUFFIXES)

    def session(prescan: bool) -> Session:
        made = Session(settings, catalog, rules, use_cache=False, jobs=args.jobs)
        made.prescan = prescan
        made.index([folder], found.files)
        return made

    results = {}
    for prescan in (False, True):
        start = time.perf_counter()
        result = session(prescan).check(found.files)
        results[prescan] = (time.perf_counter() - start,
                            {(f.path, f.line, f.col, f.rule, f.message) for f in result.findings},
                            {(e.path, e.message) for e in result.errors})
    gate = session(True).linter()
    relevant = [p for p in found.files if _read(p) is not None and may_matter(_read(p))]
    parsed = [p for p in relevant if gate.checks_for(p, _read(p))]
    (t_off, off, err_off), (t_on, on, err_on) = results[False], results[True]
    print(f"{folder}: {len(found.files)} files, {len(relevant)} name TensorFlow/Keras; "
          f"the prescan leaves {len(parsed)} to parse")
    print(f"prescan off: {len(off)} findings, {len(err_off)} errors, {t_off:.2f} s")
    print(f"prescan on:  {len(on)} findings, {len(err_on)} errors, {t_on:.2f} s")
    lost, extra = sorted(off - on), sorted(on - off)
    for item in lost:
        print("LOST", *item)
    for item in extra:
        print("EXTRA", *item)
    for item in sorted(err_off ^ err_on):
        print("ERROR DIFFERS", *item)
    return 1 if lost or extra else 0


def _read(path: str) -> Optional[bytes]:
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except OSError:
        return None


if __name__ == "__main__":
    sys.exit(main())
