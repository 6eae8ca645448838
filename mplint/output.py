"""Finding formatters: ``--output-format`` picks one by name.

A formatter takes the findings (sorted by path and position) and the per-file
errors, and returns the text to print on stdout. The text format leaves errors to
the CLI (one line each on stderr); the CI formats also carry them, because a CI
system reads only the report file. Summaries are the CLI's business.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections import Counter, defaultdict
from typing import Callable, Dict, List, Optional, Sequence
from urllib.parse import quote

from mplint import __version__
from mplint.core.findings import FileError, Finding
from mplint.core.notebook_positions import NotebookPositions
from mplint.output_escape import printable, xml_safe
from mplint.output_human import concise, full, would_fix

Formatter = Callable[..., str]

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"


def rule_help_uri(rule_id: str, docs_url: Optional[str] = None) -> str:
    """Where a rule's full entry (why, examples, fix) can be read: the ``docs-url``
    setting with the rule's id (``{rule}``) or name (``{name}``) filled in, else the
    catalog file of the installed mplint."""
    from mplint.rule.catalog import catalog_dir, load_catalog

    if docs_url:
        entry = load_catalog().get(rule_id)
        return docs_url.format(rule=rule_id, name=entry.name if entry is not None else rule_id)
    return (catalog_dir() / f"{rule_id}.yaml").resolve().as_uri()


def json_format(findings: List[Finding], errors: Sequence[FileError] = ()) -> str:
    return json.dumps([f.to_dict() for f in findings], indent=2) + "\n"


def json_lines(findings: List[Finding], errors: Sequence[FileError] = ()) -> str:
    """One JSON object a line, the keys of ``json``: a stream tools can read line by line."""
    return "".join(json.dumps(f.to_dict()) + "\n" for f in findings)


# -- GitLab Code Quality ------------------------------------------------------------
def _repository_path(path: str) -> str:
    """The path relative to the repository, as GitLab needs (``CI_PROJECT_DIR`` in a
    GitLab job, else the current folder)."""
    base = os.environ.get("CI_PROJECT_DIR") or os.getcwd()
    absolute = os.path.abspath(path)
    rel = os.path.relpath(absolute, base) if absolute.startswith(os.path.abspath(base) + os.sep) else path
    return rel.replace(os.sep, "/")


def gitlab(findings: List[Finding], errors: Sequence[FileError] = ()) -> str:
    """A GitLab Code Quality report (``artifacts: reports: codequality``).

    The fingerprint names the file, rule, message and occurrence, not the line, so a
    finding keeps it when lines above it move, and two alike in a file differ.
    """
    places = NotebookPositions()
    seen: Counter = Counter()
    issues = []
    for f in findings:
        path = _repository_path(f.path)
        seen[(path, f.rule, f.message)] += 1
        key = "\0".join([path, f.rule, f.message, str(seen[(path, f.rule, f.message)])])
        line, col, end_line, end_col = places.place(f)  # a notebook's: in its .ipynb text
        issues.append({
            "description": f"{f.rule}: {f.message}",
            "check_name": f.rule,
            "fingerprint": hashlib.sha256(key.encode("utf-8")).hexdigest()[:32],
            "severity": "major" if f.severity == "error" else "minor",
            "location": {"path": path, "positions": {"begin": {"line": line, "column": col},
                                                     "end": {"line": end_line, "column": end_col}}},
        })
    return json.dumps(issues, indent=2) + "\n"


# -- GitHub Actions workflow commands -----------------------------------------------
def _escape_data(value: str) -> str:
    # As @actions/core escapes a command's message.
    return value.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_message(value: str) -> str:
    """Line breaks percent-encoded (the runner decodes them), other control
    characters escaped (the runner would print them raw)."""
    return _escape_data(printable(value, keep="\r\n"))


def _escape_property(value: str) -> str:
    return _escape_message(value).replace(":", "%3A").replace(",", "%2C")


def github(findings: List[Finding], errors: Sequence[FileError] = ()) -> str:
    """``::error file=...,line=...::message`` lines: annotations on the pull request.

    Line breaks are percent-encoded, as the toolkit does (the runner decodes them:
    ``file=`` names the real file, a message may span lines); other control
    characters, which the runner would print raw, are escaped."""
    lines = []
    places = NotebookPositions()
    for f in findings:
        level = "error" if f.severity == "error" else "warning"
        line, col, end_line, end_col = places.place(f)  # a notebook's: in its .ipynb text
        props = (f"file={_escape_property(f.path)},line={line},col={col},"
                 f"endLine={end_line},endColumn={end_col},title={_escape_property(f.rule)}")
        lines.append(f"::{level} {props}::{_escape_message(f'{f.location}: {f.rule} {f.message}')}")
    for e in errors:
        lines.append(f"::{e.kind} file={_escape_property(e.path)},title=mplint::{_escape_message(str(e))}")
    return "\n".join(lines) + ("\n" if lines else "")


# -- JUnit XML ----------------------------------------------------------------------
def junit(findings: List[Finding], errors: Sequence[FileError] = ()) -> str:
    """One test suite per file, one failing test case per finding (as ruff does).

    A run without findings or errors is one passing test case, so CI dashboards
    show that mplint ran.
    """
    by_file: Dict[str, List[Finding]] = defaultdict(list)
    for f in findings:
        by_file[f.path].append(f)
    errors_by_file: Dict[str, List[FileError]] = defaultdict(list)
    for e in errors:
        if e.kind == "error":
            errors_by_file[e.path].append(e)
    hard = sum(len(v) for v in errors_by_file.values())
    places = NotebookPositions()
    import xml.etree.ElementTree as ET  # only for this format

    root = ET.Element("testsuites", name="mplint", tests=str(max(len(findings) + hard, 1)),
                      failures=str(len(findings)), errors=str(hard))
    for real in sorted(set(by_file) | set(errors_by_file)):
        items, errs = by_file.get(real, []), errors_by_file.get(real, [])
        path = xml_safe(real)  # XML cannot hold a control character, even escaped
        suite = ET.SubElement(root, "testsuite", name=path, tests=str(len(items) + len(errs)),
                              failures=str(len(items)), errors=str(len(errs)))
        for f in items:
            case = ET.SubElement(suite, "testcase", name=f"mplint.{f.rule}", classname=path,
                                 file=path, line=str(places.place(f)[0]))
            failure = ET.SubElement(case, "failure", message=xml_safe(f.message), type=f.rule)
            failure.text = xml_safe(f"{f.location}: {f.rule} {f.message}")
        for e in errs:
            case = ET.SubElement(suite, "testcase", name="mplint.error", classname=path, file=path)
            ET.SubElement(case, "error", message=xml_safe(e.message), type="error").text = xml_safe(str(e))
    if not by_file and not errors_by_file:
        suite = ET.SubElement(root, "testsuite", name="mplint", tests="1", failures="0", errors="0")
        ET.SubElement(suite, "testcase", name="No errors found", classname="mplint")
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


# -- SARIF 2.1.0 ----------------------------------------------------------------------
def _uri(path: str) -> Dict[str, str]:
    """A relative path stays relative to the checkout (what code scanning needs)."""
    posix = path.replace(os.sep, "/")
    if os.path.isabs(path):
        return {"uri": "file://" + quote(os.fsencode(os.path.abspath(path).replace(os.sep, "/")))}
    if posix.startswith("./"):
        posix = posix[2:]
    return {"uri": quote(os.fsencode(posix)), "uriBaseId": "%SRCROOT%"}


def _sarif_rules(docs_url: Optional[str] = None) -> List[dict]:
    """Each rule's descriptor: its help is the rule's whole page (why, the fix,
    the bad and good examples), as ``mplint rule`` prints it; ``helpUri`` only where
    ``docs-url`` gives an address (mplint invents none)."""
    from mplint.rule.catalog import load_catalog
    from mplint.rule_pages import rule_markdown

    rules = []
    for entry in load_catalog().values():
        fix = entry.fix_description.strip() if entry.fixable else "No automatic fix."
        help_text = f"{entry.summary}\n\n{entry.why.strip()}\n\nFix ({entry.fix_safety}): {fix}"
        rule: Dict[str, object] = {
            "id": entry.id,
            "name": entry.name,
            "shortDescription": {"text": entry.summary},
            "fullDescription": {"text": entry.why.strip()},
            "help": {"text": help_text, "markdown": rule_markdown(entry)},
            "defaultConfiguration": {"level": "error" if entry.severity == "error" else "warning"},
            "properties": {"tags": ["mixed-precision"], "fix": entry.fix_safety},
        }
        if docs_url:
            rule["helpUri"] = rule_help_uri(entry.id, docs_url)
        rules.append(rule)
    return rules


def sarif(findings: List[Finding], errors: Sequence[FileError] = (), docs_url: Optional[str] = None) -> str:
    """A SARIF 2.1.0 log with one run, as GitHub code scanning accepts it."""
    rules = _sarif_rules(docs_url)
    index = {rule["id"]: i for i, rule in enumerate(rules)}
    results = []
    places = NotebookPositions()
    for f in findings:
        line, col, end_line, end_col = places.place(f)  # a notebook's: in its .ipynb text
        result: Dict[str, object] = {
            "ruleId": f.rule,
            "level": "error" if f.severity == "error" else "warning",
            "message": {"text": f.message},
            "locations": [{"physicalLocation": {
                "artifactLocation": _uri(f.path),
                "region": {"startLine": line, "startColumn": col,
                           "endLine": end_line, "endColumn": end_col},
            }}],
            "properties": {"fix": f.fix},
        }
        if f.rule in index:
            result["ruleIndex"] = index[f.rule]
        results.append(result)
    notifications = [{
        "level": "error" if e.kind == "error" else "warning",
        "message": {"text": str(e)},
        "locations": [{"physicalLocation": {"artifactLocation": _uri(e.path)}}],
    } for e in errors]
    log = {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "mplint",
                "version": __version__,
                "semanticVersion": __version__,
                "rules": rules,
            }},
            "invocations": [{
                "executionSuccessful": not any(e.kind == "error" for e in errors),
                "toolExecutionNotifications": notifications,
            }],
            "columnKind": "unicodeCodePoints",
            "results": results,
        }],
    }
    return json.dumps(log, indent=2) + "\n"


# -- --statistics ---------------------------------------------------------------------
def statistics(findings: List[Finding], as_json: bool = False, unsafe_fixes: bool = False) -> str:
    """Count per rule, most frequent first: what to tackle (or ignore) first.

    As in ruff, a rule is marked ``[*]`` when ``mplint fix`` with these flags fixes
    every one of its findings, ``[~]`` when it fixes some, ``[ ]`` when none; JSON
    gives ``fixable_count`` (and ``fixable``: all of them)."""
    from mplint.rule.catalog import load_catalog

    catalog = load_catalog()
    counts = Counter(f.rule for f in findings)
    fixable = Counter(f.rule for f in findings if would_fix(f.fix, unsafe_fixes))
    rows = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    if as_json:
        return json.dumps([{
            "code": rule, "name": catalog[rule].name if rule in catalog else "",
            "count": n, "fixable_count": fixable[rule], "fixable": fixable[rule] == n,
        } for rule, n in rows], indent=2) + "\n"
    width = max((len(str(n)) for _, n in rows), default=1)
    lines = [f"{n:>{width}}\t{rule}\t{_fixable_mark(fixable[rule], n)} "
             f"{catalog[rule].name if rule in catalog else ''}" for rule, n in rows]
    return "\n".join(lines) + ("\n" if lines else "")


def _fixable_mark(fixable: int, count: int) -> str:
    return "[*]" if fixable == count else "[~]" if fixable else "[ ]"


FORMATTERS: Dict[str, Formatter] = {
    "concise": concise,
    "text": concise,  # the name before `full` came
    "full": full,
    "json": json_format,
    "json-lines": json_lines,
    "github": github,
    "junit": junit,
    "sarif": sarif,
    "gitlab": gitlab,
}
