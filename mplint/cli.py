"""Command line: ``mplint check``, ``fix``, ``rule``, ``rules`` (and ``runtime``, ``server``).

Exit codes follow ruff: 0 clean, 1 findings, 2 usage error or a file that could not
be checked. User errors are one line on stderr, never a traceback.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections import Counter
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Dict, List, NoReturn, Optional, Sequence, TextIO, Tuple

from mplint import __version__
from mplint.interrupts import EXIT_INTERRUPTED, INTERRUPTED
from mplint.core.findings import FileError, Finding
from mplint.core.results import FixOutcome
from mplint.output import FORMATTERS, statistics
from mplint.output_escape import printable
from mplint.output_human import HUMAN_FORMATS, Style, color_diff, use_color, would_fix
from mplint.output_syntax import SYNTAX_ERROR, split_syntax_errors
from mplint.rule.catalog import CatalogError, RuleEntry, load_catalog
from mplint.run.config import (MAX_FILE_TIMEOUT, ConfigError, RuleSelection, Settings, file_timeout, load_settings,
                               resolve_rules, selected_rules, validate_codes)

if TYPE_CHECKING:  # pragma: no cover
    from mplint.run.hierarchy import ConfigTree
    from mplint.run.session import Session

EXIT_OK, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2


class UsageError(Exception):
    pass


def _add_common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("paths", nargs="*", default=["."], help="files or folders (default: .)")
    parser.add_argument("--select", help="comma-separated rule ids or prefixes to enable (e.g. MP1,MP201); "
                                         "replaces the configured selection")
    parser.add_argument("--ignore", help="comma-separated rule ids or prefixes to disable")
    parser.add_argument("--extend-select", metavar="CODES",
                        help="rule ids or prefixes to enable on top of the configured selection")
    parser.add_argument("--extend-ignore", metavar="CODES", help="the same as --ignore (as in ruff)")
    parser.add_argument("--config", action="append", metavar="PATH | KEY=VALUE",
                        help="the configuration file for every file (pyproject.toml with [tool.mplint], "
                             "mplint.toml), instead of each file's closest one; or one setting in TOML "
                             "over every configuration (--config \"keras-version = 3\"); may be repeated")
    parser.add_argument("--exclude", metavar="PATTERNS",
                        help="comma-separated gitignore-style patterns to leave out, replacing 'exclude'")
    parser.add_argument("--extend-exclude", metavar="PATTERNS",
                        help="comma-separated patterns to leave out, on top of 'exclude'")
    parser.add_argument("--per-file-ignores", action="append", metavar="PATTERN:CODES",
                        help="rules to ignore in files matching a pattern (tests/*:MP101,MP303), replacing "
                             "'per-file-ignores'; may be repeated")
    parser.add_argument("--extend-per-file-ignores", action="append", metavar="PATTERN:CODES",
                        help="the same, on top of 'per-file-ignores'; may be repeated")
    parser.add_argument("--force-exclude", action="store_true",
                        help="apply 'exclude' to files named on the command line too")
    parser.add_argument("--assume-policy", choices=("mixed_float16", "mixed_bfloat16", "float32"),
                        help="treat every file as running under this dtype policy")
    parser.add_argument("--output-format", choices=tuple(FORMATTERS), default="concise",
                        help="concise (default; also 'text'), full (with the source line), json, "
                             "json-lines, github (workflow annotations), gitlab (Code Quality), "
                             "junit or sarif (code scanning)")
    parser.add_argument("--unsafe-fixes", action="store_true",
                        help="also apply (fix) or count as fixable (check) the fixes marked unsafe")
    parser.add_argument("--exit-zero", action="store_true", help="exit 0 even when findings remain")
    parser.add_argument("--quiet", "-q", action="store_true", help="print findings only, no summary")
    parser.add_argument("--verbose", "-v", action="store_true",
                        help="also say on stderr which configuration each file got, the project root, the "
                             "cache and the time taken")
    parser.add_argument("--color", choices=("auto", "always", "never"), default="auto",
                        help="colour the output: auto (default: on a terminal, unless NO_COLOR), always or never")
    parser.add_argument("--stdin-filename", metavar="PATH",
                        help="with '-' as the path: the name of the code read from stdin (for config, "
                             "per-file-ignores and messages)")
    parser.add_argument("--statistics", action="store_true",
                        help="print the number of findings per rule instead of each finding")
    parser.add_argument("--show-fixes", action="store_true",
                        help="list the fixes applied (fix) or available (check), per file and rule")
    parser.add_argument("--no-cache", action="store_true",
                        help="neither read nor write the result cache (.mplint_cache/)")
    parser.add_argument("--cache-dir", metavar="PATH", default=os.environ.get("MPLINT_CACHE_DIR") or None,
                        help="where to keep the result cache (also MPLINT_CACHE_DIR; default: "
                             ".mplint_cache in the project root)")
    parser.add_argument("--output-file", "-o", metavar="PATH",
                        help="write the report to this file instead of stdout")
    parser.add_argument("--show-settings", action="store_true",
                        help="print the settings the one file given is checked with, and check nothing")
    parser.add_argument("--show-files", action="store_true",
                        help="print the files that would be checked, and check nothing")
    parser.add_argument("--jobs", "-j", type=_jobs, default=0, metavar="N",
                        help="worker processes (default, or 0: one per core)")
    parser.add_argument("--file-timeout", type=_seconds, metavar="SECONDS",
                        help="skip a file that takes longer than this, with one line saying so (default 20; "
                             "0: no limit); also 'file-timeout' in the configuration")
    parser.add_argument("--watch", "-w", action="store_true",
                        help="run again whenever a checked file or a configuration changes (Ctrl-C stops)")


def _jobs(text: str) -> int:
    """``--jobs``: 0 (one per core) or more."""
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 (one per core) or a positive whole number, got {text!r}")
    return value


def _seconds(text: str) -> float:
    """``--file-timeout``: as the configuration's ``file-timeout``."""
    try:
        return file_timeout(float(text), "must be")
    except (ValueError, ConfigError):
        raise argparse.ArgumentTypeError(f"must be a number of seconds from 0 (no limit) to "
                                         f"{MAX_FILE_TIMEOUT:g}, got {text!r}") from None


class _Parser(argparse.ArgumentParser):
    """argparse without abbreviations (``--stat`` is not ``--statistics``: an option
    added later would change what an abbreviation means), and with a suggestion for
    a mistyped option."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        #: every option of the command line, the subcommands' too (set by build_parser)
        self.known_options: List[str] = []

    def error(self, message: str) -> "NoReturn":
        unknown = message.partition("unrecognized arguments: ")[2].split()
        for option in (o.partition("=")[0] for o in unknown if o.startswith("--")):
            import difflib

            close = difflib.get_close_matches(option, self.known_options, n=1, cutoff=0.6)
            if not close:
                close = [o for o in self.known_options if o.startswith(option)][:1]
            if close:
                message += f"; did you mean '{close[0]}'?"
                break
        super().error(message)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="mplint", description="Find and fix mixed-precision pitfalls in TensorFlow/Keras code.")
    parser.add_argument("--version", action="version", version=f"mplint {__version__}")
    parser.add_argument("-V", action="version", version=f"mplint {__version__}", help=argparse.SUPPRESS)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    check = sub.add_parser("check", help="report findings")
    _add_common(check)
    check.add_argument("--add-noqa", action="store_true",
                       help="add `# noqa: MPxxx` to every line with a finding (for adopting mplint)")
    fix = sub.add_parser("fix", help="apply fixes, then report what remains")
    _add_common(fix)
    fix.add_argument("--diff", action="store_true",
                     help="print a diff of the fixes (unsafe ones too with --unsafe-fixes); write nothing")
    fix.add_argument("--check", action="store_true",
                     help="write nothing; exit 1 if fixes would apply (for CI)")
    fix.add_argument("--exit-non-zero-on-fix", action="store_true",
                     help="exit 1 when a fix was applied, even if no findings remain (pre-commit)")
    rule = sub.add_parser("rule", help="explain a rule (or every rule, with --all)")
    rule.add_argument("rule_id", nargs="?", help="a rule id (MP101) or name (float16-final-softmax)")
    rule.add_argument("--all", action="store_true", help="explain every rule")
    rule.add_argument("--output-format", choices=("text", "json"), default="text",
                      help="text (default) or json: the catalog entry as data")
    sub.add_parser("rules", help="list every rule")
    clean = sub.add_parser("clean", help="remove the result caches (.mplint_cache) in the current folder and below")
    clean.add_argument("--cache-dir", metavar="PATH", default=os.environ.get("MPLINT_CACHE_DIR") or None,
                       help="also remove this cache folder (also MPLINT_CACHE_DIR)")
    # Parsed by mplint.runtime.command (see main): listed here for --help only.
    sub.add_parser("runtime", add_help=False,
                   help="build a model under a dtype policy and check it on this machine")
    # Parsed by mplint.analyze (see main): listed here for --help only.
    sub.add_parser("analyze", add_help=False,
                   help="show the program model: which policies reach each function, and how")
    # Parsed by mplint.server (see main): listed here for --help only.
    sub.add_parser("server", add_help=False,
                   help="language server for editors (LSP over stdio; the lsp extra)")
    options = sorted({o for p in [parser, *sub.choices.values()] for o in p._option_string_actions
                      if o.startswith("--")})
    for each in [parser, *sub.choices.values()]:
        if isinstance(each, _Parser):
            each.known_options = options
    return parser


def main(argv: Optional[Sequence[str]] = None) -> int:
    try:
        return _main(list(sys.argv[1:] if argv is None else argv))
    except KeyboardInterrupt as stop:  # also while a subcommand or the parser is loading
        return _interrupted(stop)


def _main(argv: List[str]) -> int:
    if argv[:1] == ["runtime"]:  # its own parser, loaded only when it runs
        from mplint.runtime.command import main as runtime_main

        return runtime_main(argv[1:])
    if argv[:1] == ["analyze"]:  # its own parser
        from mplint.analyze import main as analyze_main

        return analyze_main(argv[1:])
    if argv[:1] == ["server"]:  # its own parser; pygls is loaded only when it runs
        from mplint.server import main as server_main

        return server_main(argv[1:])
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
            return cmd_rule(catalog, args.rule_id, args.all, args.output_format)
        if args.command == "clean":
            return cmd_clean(args.cache_dir)
        if args.watch:
            return watch(args, catalog)
        return cmd_lint(args, catalog)
    except (ConfigError, CatalogError, UsageError) as exc:
        _error(str(exc))
        return EXIT_ERROR
    except BrokenPipeError:
        # `mplint rules | head`: the reader left; exit quietly like other CLI tools.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_OK


def _interrupted(stop: KeyboardInterrupt) -> int:
    """Ctrl-C: one line, and for ``fix`` each file already written (the rest were
    not touched: a write is a rename, done or not)."""
    from mplint.run.runner import RunInterrupted

    written = [r.path for r in stop.results if isinstance(r, FixOutcome) and r.written] \
        if isinstance(stop, RunInterrupted) else []
    try:
        sys.stdout.flush()
    except (OSError, ValueError):
        pass
    for path in written:
        print(f"mplint: fixed {printable(path)} before the interruption", file=sys.stderr)
    print(INTERRUPTED, file=sys.stderr)
    return EXIT_INTERRUPTED


def _error(message: str) -> None:
    print(f"mplint: error: {printable(message)}", file=sys.stderr)


def _say(err: FileError) -> None:
    """One line on stderr for an error, warning or note about a file (its name may
    hold a newline or an escape sequence: shown escaped)."""
    print(f"mplint: {err.kind}: {printable(str(err))}", file=sys.stderr)


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


def cmd_rule(catalog: Dict[str, RuleEntry], rule_id: Optional[str], every: bool = False,
             output_format: str = "text") -> int:
    """``mplint rule MP101`` / ``mplint rule --all``, as text or JSON."""
    if every == (rule_id is not None):
        raise UsageError("`mplint rule` takes a rule id or --all")
    if every:
        entries = list(catalog.values())
    else:
        assert rule_id is not None
        entry = catalog.get(rule_id.upper()) or next(
            (e for e in catalog.values() if e.name == rule_id.lower()), None)
        if entry is None:
            raise UsageError(f"unknown rule {rule_id!r}; `mplint rules` lists them")
        entries = [entry]
    if output_format == "json":
        data = [rule_data(e) for e in entries]
        print(json.dumps(data if every else data[0], indent=2))
    else:
        print("\n".join(format_rule(e) for e in entries))
    return EXIT_OK


def rule_data(entry: RuleEntry) -> Dict[str, object]:
    """A catalog entry as data (``mplint rule --output-format json``): what the text
    says, field by field, and the text itself as ``explanation``."""
    return {
        "code": entry.id, "name": entry.name, "summary": entry.summary, "severity": entry.severity,
        "fix": entry.fix_safety.value,
        "fix_description": entry.fix_description.strip(), "opt_in": entry.opt_in, "why": entry.why.strip(),
        "examples": [{"kind": e.kind, "code": e.code, "fixed": e.fixed, "config": e.config}
                     for e in entry.examples],
        "options": [{"name": o.name, "type": o.type, "default": o.default, "description": o.description}
                    for o in entry.options],
        "references": list(entry.references),
        "explanation": format_rule(entry),
    }


def cmd_clean(cache_dir: Optional[str]) -> int:
    """``mplint clean``: every ``.mplint_cache`` folder in the current folder and below
    (ruff's ``clean``), and ``--cache-dir`` when given."""
    import shutil

    from mplint.run.cache import FOLDER, made_by_mplint

    found = [Path(cache_dir).expanduser()] if cache_dir and os.path.isdir(cache_dir) else []
    for folder, dirs, _ in os.walk("."):
        if FOLDER in dirs:
            found.append(Path(folder) / FOLDER)
        dirs[:] = [d for d in dirs if d not in (FOLDER, ".git")]
    for cache in found:
        # A committed link, or a folder mplint did not tag (``--cache-dir ~``), is the
        # repository's or the user's, not a cache mplint may delete.
        if not made_by_mplint(cache):
            print(f"mplint: warning: {printable(os.path.normpath(cache))}: not a cache folder mplint made "
                  "(a symbolic link, or no CACHEDIR.TAG of mplint's); left alone", file=sys.stderr)
            continue
        shutil.rmtree(cache, ignore_errors=True)
        print(f"Removed cache at: {printable(os.path.normpath(cache))}", file=sys.stderr)
    return EXIT_OK


# -- check and fix --------------------------------------------------------------
def _configuration(args: argparse.Namespace, catalog: Dict[str, RuleEntry]) -> Tuple[Settings, "ConfigTree"]:
    """The run's settings (those of the folder the paths share: the project index
    and the cache use them) and the tree that gives each file its own."""
    from mplint.run.hierarchy import ConfigTree

    files, tables = _config_arguments(args, catalog)
    adjust = partial(_command_line, args, catalog)
    fixed: Optional[Settings] = None
    if files:
        if len(files) > 1:
            raise UsageError(f"--config names one configuration file, got {len(files)}: {', '.join(files)}")
        fixed = adjust(load_settings(Path(files[0]), catalog, explicit=True, overrides=tables))
    tree = ConfigTree(catalog, adjust, Path.cwd(), fixed=fixed, overrides=tables)
    return tree.settings_for(str(_start_folder(args))), tree


def _start_folder(args: argparse.Namespace) -> Path:
    """The folder the checked paths share (the stdin file's, for ``-``)."""
    given = [args.stdin_filename] if args.stdin_filename else args.paths
    existing = [Path(p) for p in given if os.path.exists(p)]
    existing = existing or [Path(p).parent for p in given if Path(p).parent.is_dir() and p != "-"]
    start = Path(os.path.commonpath([str(p.resolve()) for p in existing])) if existing else Path.cwd()
    return start.parent if start.is_file() else start


def _config_arguments(args: argparse.Namespace, catalog: Dict[str, RuleEntry]
                      ) -> Tuple[List[str], List[Dict[str, object]]]:
    """``--config`` values that name files, and the tables the others and the
    command line's ``--exclude`` and ``--per-file-ignores`` add, in order."""
    from mplint.run.config import inline_table

    files: List[str] = []
    tables: List[Dict[str, object]] = []
    for value in args.config or ():
        if os.path.exists(value) or "=" not in value:
            if not os.path.exists(value):
                raise ConfigError(f"{value}: config file not found")
            files.append(value)  # a folder or a FIFO is said to be one when read
        else:
            tables.append(inline_table(value))
    for key in ("exclude", "extend_exclude"):
        value = getattr(args, key)
        if value is not None:
            tables.append({key.replace("_", "-"): [p.strip() for p in value.split(",") if p.strip()]})
    for key in ("per_file_ignores", "extend_per_file_ignores"):
        mapping: Dict[str, List[str]] = {}
        for value in getattr(args, key) or ():
            pattern, colon, codes = value.rpartition(":")
            if not colon or not pattern:
                raise UsageError(f"--{key.replace('_', '-')} {value!r}: expected PATTERN:CODES (tests/*:MP101,MP102)")
            mapping.setdefault(pattern, []).extend(c.strip() for c in codes.split(",") if c.strip())
        if mapping:
            tables.append({key.replace("_", "-"): mapping})
    return files, tables


def _command_line(args: argparse.Namespace, catalog: Dict[str, RuleEntry], settings: Settings) -> Settings:
    """The command line's options over one configuration's settings."""
    settings = _command_line_selection(args, catalog, settings)
    if args.assume_policy:
        settings = settings.with_overrides(assume_policy=args.assume_policy)
    if args.cache_dir:
        settings = settings.with_overrides(cache_dir=Path(args.cache_dir).expanduser().resolve())
    if args.force_exclude:
        settings = settings.with_overrides(force_exclude=True)
    if args.file_timeout is not None:
        settings = settings.with_overrides(file_timeout=args.file_timeout)
    return settings


def _codes(value: Optional[str], catalog: Dict[str, RuleEntry], option: str) -> Tuple[str, ...]:
    """The codes of a comma-separated option; an empty one (``--select ,``) is an
    error, as in ruff, not a selection of nothing."""
    return validate_codes(value.split(","), catalog, option) if value is not None else ()


def _command_line_selection(args: argparse.Namespace, catalog: Dict[str, RuleEntry],
                            settings: Settings) -> Settings:
    """The command line's selection as a layer over the configured one (ruff's
    order): ``--select`` replaces it, the others adjust it."""
    layer = RuleSelection(
        select=_codes(args.select, catalog, "--select") if args.select is not None else None,
        ignore=_codes(args.ignore, catalog, "--ignore") + _codes(args.extend_ignore, catalog, "--extend-ignore"),
        extend_select=_codes(args.extend_select, catalog, "--extend-select"))
    if not layer:
        return settings
    configured = RuleSelection(select=settings.select, ignore=settings.ignore)
    return replace(settings, select=resolve_rules(catalog, [configured, layer]), ignore=())


def cmd_lint(args: argparse.Namespace, catalog: Dict[str, RuleEntry]) -> int:
    from mplint.run.discovery import LINT_SUFFIXES, OwnExclusion, discover
    from mplint.run.session import Session

    _check_args(args)
    settings, tree = _configuration(args, catalog)
    args.docs_url = settings.docs_url  # the run's, for the report (SARIF helpUri)
    session = Session(settings, catalog, selected_rules(catalog, settings.select, settings.ignore),
                      use_cache=not args.no_cache, jobs=args.jobs,
                      progress=_for_a_person(args), settings_for=tree.settings_for, budget=True)
    if args.paths == ["-"]:
        return _run_stdin(args, session)
    if args.show_settings:
        return _show_settings(args.paths, session)
    found = discover(args.paths, settings.root, settings.exclude, settings.respect_gitignore,
                     settings.force_exclude, suffixes=LINT_SUFFIXES,
                     excluded_by_own=OwnExclusion(session.settings_of, settings))
    errors: List[FileError] = list(found.errors)
    if args.show_files:
        for err in errors:
            _say(err)
        sys.stdout.write("".join(f"{printable(path)}\n" for path in found.files))
        return EXIT_ERROR if any(e.kind == "error" for e in errors) else EXIT_OK
    args.nothing_selected = _nothing_selected(session, found.files)
    started = time.monotonic()
    session.index(args.paths, found.files)
    errors += session.unindexed(found.files)  # files the index gave up on: their facts are unknown
    if args.verbose:
        _say_setup(session, found.files)
    summary = FixSummary()
    sources: Dict[str, bytes] = {}
    if args.command == "check":
        result = session.check(found.files)
        if args.add_noqa:
            return _add_noqa(result.findings, errors + result.errors)
    else:
        result = session.fix(found.files, unsafe=args.unsafe_fixes, write=_writes(args))
        summary = FixSummary.of(result.outcomes, result.findings)
        if args.diff:
            _write_diff(args, "".join(_diff(o.path, o.original, o.fixed or b"") for o in result.outcomes if o.changed))
        # What remains was found in the fixed text, which a preview does not write.
        sources = {o.path: o.fixed for o in result.outcomes if o.changed and o.fixed and not o.written}
    if args.verbose:
        print(f"mplint: {len(found.files)} file{'s' * (len(found.files) != 1)} in "
              f"{time.monotonic() - started:.2f} s", file=sys.stderr)
    return _finish(args, result.findings, errors + _about(result.errors, found.files), summary,
                   no_files=not found.files, sources=sources)


def _nothing_selected(session: "Session", files: Sequence[str]) -> bool:
    """Warn (on stderr, as for a run without files) about each configuration whose
    selection leaves no rule (``select = []``, ``--ignore ALL``): its files are not
    checked. True when that is every file's case, so the summary does not
    say that all checks passed."""
    empty: Dict[str, int] = {}
    for path in files:
        settings = session.settings_of(path)
        if not session.rule_ids_of(settings):
            where = str(settings.config_path or "the default selection")
            empty[where] = empty.get(where, 0) + 1
    for where, count in empty.items():
        print(f"mplint: warning: no rule is selected for {count} file{'s' * (count != 1)} ({printable(where)} and the "
              "command line's --select and --ignore leave none); they are not checked", file=sys.stderr)
    return bool(files) and sum(empty.values()) == len(files)


def _say_setup(session: "Session", files: Sequence[str]) -> None:
    """``--verbose``: the project root, the cache, and which configuration how many files got."""
    print(f"mplint: project root: {session.root or 'none (the named files alone)'}", file=sys.stderr)
    cache = session.cache.folder if session.cache is not None else None  # the one the session opened
    print(f"mplint: cache: {cache or 'off'}", file=sys.stderr)
    by_config = Counter(str(session.settings_of(path).config_path or "defaults (no configuration file)")
                        for path in files)
    for config, count in sorted(by_config.items()):
        print(f"mplint: configuration {printable(config)}: {count} file{'s' * (count != 1)}", file=sys.stderr)


#: how often ``--watch`` looks for changes, in seconds
WATCH_INTERVAL = 0.5
_WATCHED_SUFFIXES = (".py", ".pyi", ".ipynb", ".toml", ".cfg", ".txt", ".gitignore")


def watch(args: argparse.Namespace, catalog: Dict[str, RuleEntry]) -> int:
    """``--watch``: check (or fix) now, then again each time a file under the paths
    changes, until Ctrl-C. A run that fails on a broken configuration says so and
    waits for the next change, as ruff does."""
    _check_args(args)
    if args.paths == ["-"] or args.show_settings or args.show_files or getattr(args, "add_noqa", False):
        raise UsageError("--watch checks files: it cannot read stdin or show settings, files or add noqa")
    while True:
        stamp = _watched(args.paths)
        try:
            cmd_lint(args, catalog)
        except (ConfigError, UsageError) as exc:
            _error(str(exc))
        print(f"[{time.strftime('%H:%M:%S')}] Watching for file changes.", file=sys.stderr, flush=True)
        sys.stdout.flush()
        while _watched(args.paths) == stamp:
            time.sleep(WATCH_INTERVAL)
        print(f"[{time.strftime('%H:%M:%S')}] File change detected...", file=sys.stderr, flush=True)


def _watched(paths: Sequence[str]) -> Dict[str, Tuple[int, int]]:
    """(mtime, size) of every file a change of which may change the result."""
    from mplint.run.cache import FOLDER

    stamps: Dict[str, Tuple[int, int]] = {}
    for given in paths:
        candidates = [given] if os.path.isfile(given) else []
        for folder, dirs, names in os.walk(given):
            dirs[:] = [d for d in dirs if d not in (FOLDER, ".git", "__pycache__")]
            candidates += [os.path.join(folder, n) for n in names if n.endswith(_WATCHED_SUFFIXES)]
        for path in candidates:
            try:
                st = os.stat(path)
            except OSError:
                continue
            stamps[path] = (st.st_mtime_ns, st.st_size)
    return stamps


def _show_settings(paths: Sequence[str], session: "Session") -> int:
    """``--show-settings FILE``: what that file is checked with (nothing is checked)."""
    from mplint.run.discovery import is_excluded
    from mplint.run.dependency_pins import declared_keras_version, project_pins
    from mplint.run.project import find_root
    from mplint.run.session import cache_folder
    from mplint.semantic.keras_version import detect
    from mplint.show_settings import render

    if len(paths) != 1 or not os.path.isfile(paths[0]):
        raise UsageError("--show-settings needs exactly one file as the path")
    path = paths[0]
    settings = session.settings_of(path)  # the one answer the check uses too
    root = find_root([path])
    installed = session.environment.keras_generation
    declared = declared_keras_version(root) if root is not None else None
    try:
        text = Path(path).read_bytes().decode("utf-8", "replace")
    except OSError as exc:
        raise UsageError(f"{path}: cannot be read: {exc.strerror or exc}") from None
    keras = {"project": declared, "installed": installed,
             "file": detect(settings.keras_version, text, installed=installed, use_installed=installed is not None,
                            project_pins=project_pins(root, [os.path.abspath(path)]).for_file(path, text))}
    sys.stdout.write(render(
        path, settings, session.catalog, session.rule_ids_of(settings),
        sorted(session.linter(settings).ignored_for(path)),
        is_excluded(path, settings.root, settings.exclude, settings.respect_gitignore), root,
        cache_folder(settings, root, [path]), keras))
    return EXIT_OK


def _add_noqa(findings: List[Finding], errors: List[FileError]) -> int:
    from mplint.run.add_noqa import add_noqa

    added = add_noqa(findings)
    errors = [e for e in errors + added.errors if e.kind != "note"]
    for err in errors:
        _say(err)
    print(f"Added {added.directives} noqa directive{'s' * (added.directives != 1)} "
          f"in {added.files} file{'s' * (added.files != 1)}.")
    return EXIT_ERROR if any(e.kind == "error" for e in errors) else EXIT_OK


@dataclass
class FixSummary:
    """What ``mplint fix`` did (or would do, with ``--diff`` / ``--check``)."""

    applied: int = 0
    changed_files: int = 0
    more_unsafe: int = 0
    #: rule ids of the applied fixes, per file
    by_file: Dict[str, List[str]] = field(default_factory=dict)

    @classmethod
    def of(cls, outcomes: Sequence[FixOutcome], remaining: Sequence[Finding]) -> "FixSummary":
        summary = cls()
        for outcome in outcomes:
            if outcome.changed:
                summary.applied += outcome.applied
                summary.changed_files += 1
                summary.by_file[outcome.path] = outcome.applied_rules
        summary.more_unsafe = sum(1 for f in remaining if f.fix == "unsafe")
        return summary


def _for_a_person(args: argparse.Namespace) -> bool:
    """Whether the output format is read by a person (the summary goes with it)."""
    return args.output_format in HUMAN_FORMATS or args.output_format == "text"


def _writes(args: argparse.Namespace) -> bool:
    return args.command == "fix" and not (args.diff or args.check)


def _check_args(args: argparse.Namespace) -> None:
    """Option combinations argparse cannot express."""
    if args.statistics and not (_for_a_person(args) or args.output_format == "json"):
        raise UsageError("--statistics works with --output-format concise, full or json")
    if "-" in args.paths and args.paths != ["-"]:
        raise UsageError("'-' (read stdin) cannot be combined with other paths")
    if args.stdin_filename and args.paths != ["-"]:
        raise UsageError("--stdin-filename needs '-' as the only path")
    if getattr(args, "add_noqa", False) and args.paths == ["-"]:
        raise UsageError("--add-noqa writes files; it cannot read stdin")


# -- stdin (editor integration) ---------------------------------------------------
def _run_stdin(args: argparse.Namespace, session: "Session") -> int:
    """Check or fix the code on stdin as if it were ``--stdin-filename``, inside the
    session of the project that file belongs to (its policy may be set elsewhere).

    ``mplint fix -`` writes the fixed code (or the code unchanged, when it cannot be
    fixed) to stdout, so an editor can always replace its buffer with it; findings,
    errors and the summary then go to stderr.
    """
    from mplint.run.discovery import is_excluded
    from mplint.run.session import buffer_paths

    name = args.stdin_filename or "-"
    raw = sys.stdin.buffer.read()
    findings: List[Finding] = []
    errors: List[FileError] = []
    summary = FixSummary()
    fixed = raw
    settings = session.settings_of(name)
    skip = bool(args.stdin_filename and settings.force_exclude and is_excluded(
        name, settings.root, settings.exclude, settings.respect_gitignore))
    unindexed: List[FileError] = []
    if not skip:
        if args.stdin_filename:
            session.index(buffer_paths(name), [name], given={name: raw})
            unindexed = session.unindexed([name])  # files the index gave up on: their facts are unknown
        if args.command == "fix":
            outcome = session.fix_buffer(name, raw, args.unsafe_fixes)
            findings, errors = outcome.remaining, outcome.errors
            summary = FixSummary.of([outcome], findings)
            if outcome.changed:
                fixed = outcome.fixed or raw
        else:
            result = session.check_buffer(name, raw)
            findings, errors = result.findings, result.errors
    if args.command == "fix":
        if args.diff:
            _write_diff(args, _diff(name, raw, fixed) if fixed != raw else "")
        elif not args.check:
            sys.stdout.flush()
            sys.stdout.buffer.write(fixed)
            sys.stdout.buffer.flush()
        return _finish(args, findings, _about(errors, [name]) + unindexed, summary, stream=sys.stderr,
                       sources={name: fixed})
    return _finish(args, findings, _about(errors, [name]) + unindexed, summary, sources={name: raw})


def _about(errors: Sequence[FileError], files: Sequence[str]) -> List[FileError]:
    """The warnings and errors about the run's own ``files``, each once (a fix checks
    a file again after each pass, and each check warns anew)."""
    ours = {os.path.normpath(path) for path in files}
    return [e for e in dict.fromkeys(errors) if os.path.normpath(e.path) in ours]


def _color(args: argparse.Namespace, stream: TextIO) -> bool:
    """``--color``: always, never, or (auto) as the terminal and ``NO_COLOR`` say."""
    if args.color == "auto":
        return use_color(stream)
    return bool(args.color == "always")


def _write_diff(args: argparse.Namespace, text: str) -> None:
    sys.stdout.write(color_diff(text) if text and _color(args, sys.stdout) else text)


def _diff(path: str, before: bytes, after: bytes) -> str:
    from mplint.diffs import unified

    return unified(path, before, after)


# -- report ---------------------------------------------------------------------------
def _finish(args: argparse.Namespace, findings: List[Finding], errors: List[FileError],
            fix_summary: FixSummary, stream: Optional[TextIO] = None, no_files: bool = False,
            sources: Optional[Dict[str, bytes]] = None) -> int:
    """Print the report (to ``--output-file`` when given) and return the exit code.

    ``sources`` are contents the findings were found in that differ from the disk
    (stdin, fixes previewed), for showing their lines. Notes are said once, last."""
    notes = [e for e in errors if e.kind == "note"]
    syntax, errors = split_syntax_errors([e for e in errors if e.kind != "note"])
    findings = findings + syntax  # a syntax error is a finding at its place, as in ruff
    try:
        return _report_to_file(args, findings, errors, fix_summary, stream, no_files, sources)
    finally:
        if not args.quiet:
            _print_notes(notes)


def _print_notes(notes: Sequence[FileError]) -> None:
    """Each note once, however many files gave it (``mplint: note: ... (3 files: a.py, ...)``)."""
    by_message: Dict[str, List[str]] = {}
    for note in notes:
        by_message.setdefault(note.message, []).append(note.path)
    for message, paths in by_message.items():
        paths = sorted(set(paths))
        shown = ", ".join(paths[:3]) + (", ..." if len(paths) > 3 else "")
        print(printable(f"mplint: note: {message} ({len(paths)} file{'s' * (len(paths) != 1)}: {shown})"),
              file=sys.stderr)


def _report_to_file(args: argparse.Namespace, findings: List[Finding], errors: List[FileError],
                    fix_summary: FixSummary, stream: Optional[TextIO], no_files: bool,
                    sources: Optional[Dict[str, bytes]]) -> int:
    if not args.output_file:
        return _report(args, findings, errors, fix_summary, stream, no_files, sources)
    target = Path(args.output_file)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        handle = open(target, "w", encoding="utf-8", newline="")
    except OSError as exc:
        raise UsageError(f"--output-file {args.output_file}: cannot be written: {exc.strerror or exc}") from None
    with handle:
        return _report(args, findings, errors, fix_summary, handle, no_files, sources)


def _report(args: argparse.Namespace, findings: List[Finding], errors: List[FileError],
            fix_summary: FixSummary, stream: Optional[TextIO] = None, no_files: bool = False,
            sources: Optional[Dict[str, bytes]] = None) -> int:
    """Print the report and return the exit code.

    ``no_files``: the paths held no file to check, which is a warning (as in ruff),
    not a clean bill.

    ``stream`` is where the report goes: stdout, unless stdout carries the fixed
    code or a diff.
    """
    findings.sort(key=lambda f: (f.path, f.cell or 0, f.line, f.col, f.rule))
    previews = args.command == "fix" and (args.diff or args.check)
    if stream is None:
        stream = sys.stderr if (args.command == "fix" and args.diff) else sys.stdout
    if args.statistics:
        out = statistics(findings, as_json=args.output_format == "json", unsafe_fixes=args.unsafe_fixes)
    elif _for_a_person(args):
        style = Style(unsafe_fixes=args.unsafe_fixes, color=_color(args, stream), sources=sources or {})
        out = FORMATTERS[args.output_format](findings, errors, style=style)
    elif args.output_format == "sarif":
        out = FORMATTERS["sarif"](findings, errors, docs_url=getattr(args, "docs_url", None))
    else:
        out = FORMATTERS[args.output_format](findings, errors)
    if not (args.command == "fix" and args.diff):  # the diff is the output
        stream.write(out)
    for err in errors:
        _say(err)
    if args.output_format == "github" and not args.statistics:
        _github_limit_note(findings)
    # Machine-readable formats keep stdout parseable: the summary moves to stderr.
    summary_stream = stream if _for_a_person(args) else sys.stderr
    if args.show_fixes:
        _show_fixes(args, findings, fix_summary, summary_stream)
    if no_files and not errors:
        if not args.quiet:
            print("mplint: warning: No Python files found under the given paths", file=sys.stderr)
    elif not args.quiet:
        _summary(args, findings, fix_summary, summary_stream,
                 failed=len({e.path for e in errors if e.kind == "error"}))
    if any(e.kind == "error" for e in errors):
        return EXIT_ERROR
    if previews:
        return EXIT_FINDINGS if fix_summary.changed_files else EXIT_OK
    if args.command == "fix" and args.exit_non_zero_on_fix and fix_summary.applied:
        return EXIT_FINDINGS
    if findings and not args.exit_zero:
        return EXIT_FINDINGS
    return EXIT_OK


#: annotations of one level GitHub shows per step (actions/toolkit, docs/problem-matchers.md)
GITHUB_ANNOTATIONS_PER_STEP = 10


def _github_limit_note(findings: List[Finding]) -> None:
    levels = Counter("error" if f.severity == "error" else "warning" for f in findings)
    over = {level: n for level, n in sorted(levels.items()) if n > GITHUB_ANNOTATIONS_PER_STEP}
    if over:
        counts = " and ".join(f"{n} {level}s" for level, n in over.items())
        print(f"mplint: note: GitHub shows {GITHUB_ANNOTATIONS_PER_STEP} annotations of each level per step "
              f"(50 per job) and this report has {counts}; upload --output-format sarif to code "
              "scanning to see every finding", file=sys.stderr)


def _show_fixes(args: argparse.Namespace, findings: List[Finding], fix_summary: FixSummary,
                stream: TextIO) -> None:
    """Per file and rule: the fixes applied (``fix``) or available (``check``)."""
    if args.command == "fix":
        per_file = {path: Counter(rules) for path, rules in fix_summary.by_file.items()}
        verb = "Would fix" if (args.diff or args.check) else "Fixed"
        title = f"{verb} {fix_summary.applied} finding{'s' * (fix_summary.applied != 1)}:"
    else:
        per_file = {}
        for f in findings:
            if would_fix(f.fix, args.unsafe_fixes):
                per_file.setdefault(f.path, Counter())[f.rule] += 1
        n = sum(sum(c.values()) for c in per_file.values())
        title = f"Fixable with `mplint fix`: {n} finding{'s' * (n != 1)}:"
    if not per_file:
        print("No fixes applied." if args.command == "fix" else "No fixes available.", file=stream)
        return
    print(title, file=stream)
    for path in sorted(per_file):
        print(f"- {printable(path)}:", file=stream)
        for rule, n in sorted(per_file[path].items()):
            print(f"    {n} \u00d7 {rule}", file=stream)


def _all_passed(failed: int, nothing_selected: bool = False) -> str:
    if nothing_selected:
        return "No rule was run: nothing was checked."
    if failed:
        return (f"No problems found, but {failed} file{'s' * (failed != 1)} could not be checked "
                "(see the errors above).")
    return "All checks passed!"


def _summary(args: argparse.Namespace, findings: List[Finding], fix_summary: FixSummary,
             stream: TextIO, failed: int = 0) -> None:
    if args.command == "fix":
        applied, changed_files = fix_summary.applied, fix_summary.changed_files
        hidden = fix_summary.more_unsafe if not args.unsafe_fixes else 0
        if not applied:  # ruff's wording when there is nothing to fix
            if not findings:
                print(_all_passed(failed, getattr(args, "nothing_selected", False)), file=stream)
                return
            n = len(findings)
            print(f"Found {n} problem{'s' * (n != 1)}.", file=stream)
            print(f"{hidden} fixable with `mplint fix --unsafe-fixes`." if hidden else "No fixes available.",
                  file=stream)
            return
        verb = "Would fix" if (args.diff or args.check) else "Fixed"
        print(f"{verb} {applied} finding{'s' * (applied != 1)} in {changed_files} "
              f"file{'s' * (changed_files != 1)}; {len(findings)} remaining.", file=stream)
        if hidden:
            print(f"{hidden} more fixable with `mplint fix --unsafe-fixes`.", file=stream)
        return
    if not findings:
        print(_all_passed(failed, getattr(args, "nothing_selected", False)), file=stream)
        return
    by_rule = Counter(f.rule for f in findings)
    # The same count as the [*] marks: what `mplint fix` with these flags would fix.
    fixable = sum(1 for f in findings if would_fix(f.fix, args.unsafe_fixes))
    hidden = sum(1 for f in findings if f.fix == "unsafe") if not args.unsafe_fixes else 0
    n = len(findings)
    print(f"Found {n} problem{'s' * (n != 1)} ({', '.join(f'{k}: {v}' for k, v in sorted(by_rule.items()))}).",
          file=stream)
    if fixable:
        command = "mplint fix --unsafe-fixes" if args.unsafe_fixes else "mplint fix"
        print(f"[*] {fixable} fixable with `{command}`.", file=stream)
    if hidden:
        print(f"{hidden} more fixable with `mplint fix --unsafe-fixes`.", file=stream)
    rules = [rule for rule, _ in by_rule.most_common() if rule != SYNTAX_ERROR]
    if rules:
        print(f"`mplint rule {rules[0]}` explains a rule: why it matters and how to fix it.", file=stream)
