"""Command line: ``mplint check``, ``fix``, ``rule``, ``rules`` (and ``runtime``).

Exit codes follow ruff: 0 clean, 1 findings, 2 usage error or a file that could not
be checked. User errors are one line on stderr, never a traceback.
"""

from __future__ import annotations

import argparse
import difflib
import os
import sys
from collections import Counter
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

from mplint import __version__
from mplint.catalog import CatalogError, RuleEntry, load_catalog
from mplint.config import ConfigError, Settings, find_config, load_settings, selected_rules, validate_codes
from mplint.findings import FileError, Finding

EXIT_OK, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2


class UsageError(Exception):
    pass


def _add_common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("paths", nargs="*", default=["."], help="files or folders (default: .)")
    parser.add_argument("--select", help="comma-separated rule ids or prefixes to enable (e.g. MP1,MP201)")
    parser.add_argument("--ignore", help="comma-separated rule ids or prefixes to disable")
    parser.add_argument("--config", help="pyproject.toml to read [tool.mplint] from")
    parser.add_argument("--force-exclude", action="store_true",
                        help="apply 'exclude' to files named on the command line too")
    parser.add_argument("--assume-policy", choices=("mixed_float16", "mixed_bfloat16", "float32"),
                        help="treat every file as running under this dtype policy")
    parser.add_argument("--output-format", choices=("text", "json"), default="text")
    parser.add_argument("--exit-zero", action="store_true", help="exit 0 even when findings remain")
    parser.add_argument("--quiet", "-q", action="store_true", help="print findings only, no summary")
    parser.add_argument("--no-cache", action="store_true",
                        help="neither read nor write the result cache (.mplint_cache/)")
    parser.add_argument("--jobs", "-j", type=int, default=0, metavar="N",
                        help="worker processes (default: one per core)")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="mplint", description="Find and fix mixed-precision pitfalls in TensorFlow/Keras code.")
    parser.add_argument("--version", action="version", version=f"mplint {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    check = sub.add_parser("check", help="report findings")
    _add_common(check)
    fix = sub.add_parser("fix", help="apply fixes, then report what remains")
    _add_common(fix)
    fix.add_argument("--diff", action="store_true", help="print a diff of the fixes; write nothing")
    fix.add_argument("--unsafe-fixes", action="store_true", help="also apply fixes marked unsafe")
    rule = sub.add_parser("rule", help="explain one rule")
    rule.add_argument("rule_id")
    sub.add_parser("rules", help="list every rule")
    return parser


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return EXIT_ERROR
    try:
        catalog = load_catalog()
        if args.command == "rules":
            return cmd_rules(catalog)
        if args.command == "rule":
            return cmd_rule(catalog, args.rule_id)
        return cmd_lint(args, catalog)
    except (ConfigError, CatalogError, UsageError) as exc:
        _error(str(exc))
        return EXIT_ERROR
    except KeyboardInterrupt:
        return 130


def _error(message: str) -> None:
    print(f"mplint: error: {message}", file=sys.stderr)


# -- rule docs ------------------------------------------------------------------
def cmd_rules(catalog: Dict[str, RuleEntry]) -> int:
    rows = [("id", "name", "severity", "fix", "summary")]
    rows += [(e.id, e.name, e.severity, e.fix_safety, e.summary) for e in catalog.values()]
    widths = [max(len(r[i]) for r in rows) for i in range(4)]
    for row in rows:
        print("  ".join(c.ljust(w) for c, w in zip(row[:4], widths)) + "  " + row[4])
    return EXIT_OK


def format_rule(entry: RuleEntry) -> str:
    parts = [f"{entry.id} ({entry.name})", "", entry.summary, "",
             f"Severity: {entry.severity}", "", "Why", "---", entry.why, ""]
    fix = {"none": "No automatic fix."}.get(entry.fix_safety, f"Fix ({entry.fix_safety}): {entry.fix_description}")
    if entry.fix_safety == "none" and entry.fix_description:
        fix = entry.fix_description
    parts += ["Fix", "---", fix, ""]
    bad = next(e for e in entry.examples if e.kind == "bad")
    good = next(e for e in entry.examples if e.kind == "good")
    parts += ["Example", "---", bad.code.rstrip(), ""]
    if bad.fixed:
        parts += ["Fixed", "---", bad.fixed.rstrip(), ""]
    parts += ["Use instead", "---", good.code.rstrip(), ""]
    if entry.options:
        parts += ["Options", "---"]
        parts += [f"{o.name} ({o.type}, default {o.default!r}): {o.description}" for o in entry.options]
        parts.append("")
    if entry.references:
        parts += ["References", "---"] + [f"- {r}" for r in entry.references] + [""]
    return "\n".join(parts)


def cmd_rule(catalog: Dict[str, RuleEntry], rule_id: str) -> int:
    entry = catalog.get(rule_id.upper()) or next(
        (e for e in catalog.values() if e.name == rule_id.lower()), None)
    if entry is None:
        raise UsageError(f"unknown rule {rule_id!r}; `mplint rules` lists them")
    print(format_rule(entry))
    return EXIT_OK


# -- check and fix --------------------------------------------------------------
def _settings(args: argparse.Namespace, catalog: Dict[str, RuleEntry]) -> Settings:
    if args.config:
        config_path: Optional[Path] = Path(args.config)
        if not config_path.is_file():
            raise ConfigError(f"{args.config}: config file not found")
    else:
        existing = [Path(p) for p in args.paths if os.path.exists(p)]
        start = Path(os.path.commonpath([str(p.resolve()) for p in existing])) if existing else Path.cwd()
        if start.is_file():
            start = start.parent
        config_path = find_config(start)
    settings = load_settings(config_path, catalog)
    if args.select:
        settings = settings.with_overrides(
            select=validate_codes(args.select.split(","), catalog, "--select"))
    if args.ignore:
        settings = settings.with_overrides(
            ignore=validate_codes(args.ignore.split(","), catalog, "--ignore"))
    if args.assume_policy:
        settings = settings.with_overrides(assume_policy=args.assume_policy)
    return settings


def cmd_lint(args: argparse.Namespace, catalog: Dict[str, RuleEntry]) -> int:
    from mplint.discovery import LINT_SUFFIXES, discover
    from mplint.project import build_project, find_root

    settings = _settings(args, catalog)
    rules = selected_rules(catalog, settings.select, settings.ignore)
    found = discover(args.paths, settings.root, settings.exclude,
                     settings.respect_gitignore, args.force_exclude, suffixes=LINT_SUFFIXES)
    errors: List[FileError] = list(found.errors)
    root = find_root(args.paths)
    cache = None if args.no_cache else _open_cache(root or settings.root)
    # `mplint check .` at the project root: the project's files are the ones just found.
    at_root = root is not None and [os.path.realpath(p) for p in args.paths] == [str(root)]
    walked = found.files if at_root else None
    contents: Dict[str, bytes] = {}
    parsed: Dict[str, object] = {}
    project = build_project(args.paths, settings, cache, extra=found.files, walked=walked,
                            contents=contents, parsed=parsed)
    if cache is not None:
        from mplint.cache import run_key

        cache.use_run(run_key(rules, settings, project.digest()))

    def make_linter():
        from mplint.engine import Linter

        linter = Linter(settings, catalog, rules)
        linter.project = project
        return linter

    summary_fix: Tuple[int, int, int] = (0, 0, 0)
    if args.command == "check":
        from mplint.runner import check_files, default_jobs

        findings, more = check_files(found.files, make_linter, cache, args.jobs or default_jobs(),
                                     progress=args.output_format == "text", contents=contents,
                                     parsed=parsed)
        errors += more
    else:
        findings, errors, summary_fix = _run_fix(args, make_linter(), found.files, errors, cache)
    return _finish(args, findings, errors, summary_fix)


def _open_cache(root: Path):
    from mplint.cache import FOLDER, Cache

    return Cache(root / FOLDER)


def _run_fix(args: argparse.Namespace, linter, files: List[str], errors: List[FileError],
             cache=None) -> Tuple[List[Finding], List[FileError], Tuple[int, int, int]]:
    from mplint.cache import content_hash
    from mplint.fixer import fix_path
    from mplint.notebooks import fix_notebook

    findings: List[Finding] = []
    applied = changed_files = 0
    wanted = ("safe", "unsafe") if args.unsafe_fixes else ("safe",)
    for path in files:
        if cache is not None:
            # A cached file with nothing to apply needs no parse at all.
            try:
                with open(path, "rb") as handle:
                    hit = cache.get(path, content_hash(handle.read()))
            except OSError:
                hit = None
            if hit is not None and not any(f.fix in wanted for f in hit[0]):
                findings += hit[0]
                errors += hit[1]
                continue
        fixer = fix_notebook if path.endswith(".ipynb") else fix_path
        outcome = fixer(linter, path, unsafe=args.unsafe_fixes, write=not args.diff)
        errors += outcome.errors
        findings += outcome.remaining
        applied += outcome.applied
        if outcome.changed:
            changed_files += 1
            if args.diff:
                sys.stdout.write(_diff(path, outcome.original, outcome.fixed or b""))
    if cache is not None:
        cache.save()
    more_unsafe = sum(1 for f in findings if f.fix == "unsafe")
    return findings, errors, (applied, changed_files, more_unsafe)


def _diff(path: str, before: bytes, after: bytes) -> str:
    a = before.decode("utf-8", errors="replace").splitlines(keepends=True)
    b = after.decode("utf-8", errors="replace").splitlines(keepends=True)
    text = "".join(difflib.unified_diff(a, b, fromfile=f"a/{path}", tofile=f"b/{path}"))
    return text if text.endswith("\n") or not text else text + "\n"


def _finish(args: argparse.Namespace, findings: List[Finding], errors: List[FileError],
            fix_summary: Tuple[int, int, int]) -> int:
    from mplint.output import FORMATTERS

    findings.sort(key=lambda f: (f.path, f.cell or 0, f.line, f.col, f.rule))
    out = FORMATTERS[args.output_format](findings)
    if args.command == "fix" and args.diff:
        out = ""  # the diff is the output
    sys.stdout.write(out)
    for err in errors:
        print(f"mplint: {err.kind}: {err}", file=sys.stderr)
    hard_errors = [e for e in errors if e.kind == "error"]
    if args.output_format == "text" and not args.quiet:
        _summary(args, findings, fix_summary)
    if hard_errors:
        return EXIT_ERROR
    if args.command == "fix" and args.diff:
        return EXIT_FINDINGS if fix_summary[1] else EXIT_OK
    if findings and not args.exit_zero:
        return EXIT_FINDINGS
    return EXIT_OK


def _summary(args: argparse.Namespace, findings: List[Finding], fix_summary: Tuple[int, int, int]) -> None:
    stream = sys.stderr if (args.command == "fix" and args.diff) else sys.stdout
    applied, changed_files, more_unsafe = fix_summary
    if args.command == "fix":
        verb = "Would fix" if args.diff else "Fixed"
        print(f"{verb} {applied} finding{'s' * (applied != 1)} in {changed_files} "
              f"file{'s' * (changed_files != 1)}; {len(findings)} remaining.", file=stream)
        if more_unsafe and not args.unsafe_fixes:
            print(f"{more_unsafe} more fixable with `mplint fix --unsafe-fixes`.", file=stream)
        return
    if not findings:
        print("All checks passed!", file=stream)
        return
    by_rule = Counter(f.rule for f in findings)
    safe = sum(1 for f in findings if f.fix == "safe")
    unsafe = sum(1 for f in findings if f.fix == "unsafe")
    n = len(findings)
    print(f"Found {n} problem{'s' * (n != 1)} ({', '.join(f'{k}: {v}' for k, v in sorted(by_rule.items()))}).",
          file=stream)
    if safe:
        print(f"[*] {safe} fixable with `mplint fix`.", file=stream)
    if unsafe:
        print(f"{unsafe} more fixable with `mplint fix --unsafe-fixes`.", file=stream)
