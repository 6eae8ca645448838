"""The rule catalog: one YAML file per rule, the single source of its docs and examples.

In a source checkout the catalog is the top-level ``rules/`` folder; in an installed
wheel it ships as ``mplint/rules/``. Every entry is validated strictly: a missing or
unknown key is an error naming the file.
"""

from __future__ import annotations

import functools
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

from mplint.core import user_cache
from mplint.core.regular_files import read_regular
from mplint.rule.levels import Safety, Severity, parse_severity

RULE_ID = re.compile(r"^MP\d{3}$")
KEBAB = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")

_REQUIRED = {"id", "name", "summary", "severity", "why", "fix", "examples"}
_OPTIONAL = {"options", "references", "opt-in"}
_FIX_KEYS = {"safety", "description"}
_EXAMPLE_KEYS = {"bad", "good", "fixed", "config", "path"}
_OPTION_KEYS = {"type", "default", "description"}
_OPTION_LIMITS = {"minimum", "maximum", "format"}
_OPTION_TYPES = {"int": int, "str": str, "bool": bool, "float": float, "list": list}
#: what an option's value may look like (``format:``): the pattern and how to say it
_OPTION_FORMATS = {
    "version": (re.compile(r"(?:\d+(?:\.\d+){0,2})?"), 'a version such as "2.8" ("" for the latest)'),
}


class CatalogError(Exception):
    """A catalog entry is malformed; the message names the file."""


@dataclass(frozen=True)
class Example:
    kind: str  # "bad" or "good"
    code: str
    fixed: Optional[str] = None
    config: Dict[str, Any] = field(default_factory=dict)
    path: str = "example.py"


@dataclass(frozen=True)
class RuleOption:
    name: str
    type: str
    default: Any
    description: str
    #: the smallest value a number may take
    minimum: Optional[float] = None
    #: the largest value a number may take (a fix may write it into the code)
    maximum: Optional[float] = None
    #: a key of ``_OPTION_FORMATS`` a string must match
    format: Optional[str] = None

    def problem(self, value: Any) -> Optional[str]:
        """What is wrong with ``value`` for this option (``"must be ..."``), or None."""
        expected = {"float": (int, float)}.get(self.type, _OPTION_TYPES[self.type])
        if not isinstance(value, expected) or (self.type != "bool" and isinstance(value, bool)):
            return f"must be of type {self.type}"
        if self.minimum is not None and isinstance(value, (int, float)) and value < self.minimum:
            return f"must be at least {self.minimum:g}"
        if self.maximum is not None and isinstance(value, (int, float)) and value > self.maximum:
            return f"must be at most {self.maximum:g}"
        if self.format is not None and isinstance(value, str):
            pattern, says = _OPTION_FORMATS[self.format]
            if not pattern.fullmatch(value):
                return f"must be {says}"
        return None


@dataclass(frozen=True)
class RuleEntry:
    id: str
    name: str
    summary: str
    severity: Severity
    why: str
    #: the most a fix of this rule may claim; NONE: the rule offers no fix
    fix_safety: Safety
    fix_description: str
    examples: Tuple[Example, ...]
    options: Tuple[RuleOption, ...] = ()
    references: Tuple[str, ...] = ()
    source: str = ""
    #: left out of the default selection and of ALL; enabled only by a code naming it
    opt_in: bool = False

    @property
    def fixable(self) -> bool:
        return self.fix_safety is not Safety.NONE


def catalog_dir() -> Path:
    """``mplint/rules`` inside a wheel, else ``rules/`` next to the package."""
    package = Path(__file__).resolve().parent.parent
    installed = package / "rules"
    if installed.is_dir():
        return installed
    return package.parent / "rules"


def _fail(path: Path, message: str) -> CatalogError:
    return CatalogError(f"{path}: {message}")


def _text(path: Path, data: dict, key: str) -> str:
    value = data.get(key)
    if not isinstance(value, str) or not value.strip():
        raise _fail(path, f"'{key}' must be a non-empty string")
    return value


def load_entry(path: Path) -> RuleEntry:
    import yaml  # only when the stored catalog is stale (see mplint.core.user_cache)

    try:
        # libyaml's loader when present
        data = yaml.load(path.read_text(encoding="utf-8"), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except (OSError, yaml.YAMLError) as exc:
        raise _fail(path, f"cannot be read: {exc}") from None
    if not isinstance(data, dict):
        raise _fail(path, "must be a mapping")
    missing = _REQUIRED - data.keys()
    if missing:
        raise _fail(path, f"missing key(s): {', '.join(sorted(missing))}")
    unknown = data.keys() - _REQUIRED - _OPTIONAL
    if unknown:
        raise _fail(path, f"unknown key(s): {', '.join(sorted(unknown))}")
    rule_id = _text(path, data, "id")
    if not RULE_ID.match(rule_id) or path.stem != rule_id:
        raise _fail(path, f"'id' must look like MP101 and match the file name, got {rule_id!r}")
    name = _text(path, data, "name")
    if not KEBAB.match(name):
        raise _fail(path, f"'name' must be kebab-case, got {name!r}")
    try:
        severity = parse_severity(_text(path, data, "severity"))
    except ValueError as exc:
        raise _fail(path, f"'severity' must be error or warning, got {data['severity']!r}") from exc
    fix = data["fix"]
    if not isinstance(fix, dict) or set(fix) != _FIX_KEYS:
        raise _fail(path, "'fix' must have exactly the keys safety and description")
    if fix["safety"] not in tuple(s.value for s in Safety):
        raise _fail(path, "'fix.safety' must be safe, unsafe or none")
    safety = Safety(fix["safety"])
    examples = _examples(path, data["examples"], safety)
    options = _options(path, data.get("options") or {})
    references = data.get("references") or []
    if not isinstance(references, list) or not all(isinstance(r, str) for r in references):
        raise _fail(path, "'references' must be a list of strings")
    return RuleEntry(
        id=rule_id, name=name, summary=_text(path, data, "summary").strip(),
        severity=severity, why=_text(path, data, "why").strip(),
        fix_safety=safety, fix_description=str(fix["description"]).strip(),
        examples=examples, options=options, references=tuple(references), source=str(path),
        opt_in=_opt_in(path, data.get("opt-in", False)),
    )


def _opt_in(path: Path, value: Any) -> bool:
    if not isinstance(value, bool):
        raise _fail(path, "'opt-in' must be true or false")
    return value


def _examples(path: Path, raw: Any, safety: Safety) -> Tuple[Example, ...]:
    if not isinstance(raw, list) or not raw:
        raise _fail(path, "'examples' must be a non-empty list")
    out: List[Example] = []
    for i, item in enumerate(raw):
        where = f"examples[{i}]"
        if not isinstance(item, dict):
            raise _fail(path, f"{where} must be a mapping")
        unknown = item.keys() - _EXAMPLE_KEYS
        if unknown:
            raise _fail(path, f"{where}: unknown key(s): {', '.join(sorted(unknown))}")
        kinds = [k for k in ("bad", "good") if k in item]
        if len(kinds) != 1:
            raise _fail(path, f"{where} must have exactly one of 'bad' or 'good'")
        kind = kinds[0]
        if "fixed" in item and kind != "bad":
            raise _fail(path, f"{where}: 'fixed' goes with a 'bad' example")
        if kind == "bad" and safety is not Safety.NONE and "fixed" not in item:
            raise _fail(path, f"{where}: a fixable rule's bad example needs 'fixed'")
        config = item.get("config") or {}
        if not isinstance(config, dict):
            raise _fail(path, f"{where}: 'config' must be a mapping")
        out.append(Example(kind, str(item[kind]), item.get("fixed"), config,
                           str(item.get("path", "example.py"))))
    if not any(e.kind == "bad" for e in out) or not any(e.kind == "good" for e in out):
        raise _fail(path, "'examples' needs at least one bad and one good example")
    return tuple(out)


def _options(path: Path, raw: Any) -> Tuple[RuleOption, ...]:
    if not isinstance(raw, dict):
        raise _fail(path, "'options' must be a mapping")
    out = []
    for name, spec in raw.items():
        if not isinstance(spec, dict) or not _OPTION_KEYS <= set(spec) <= _OPTION_KEYS | _OPTION_LIMITS:
            raise _fail(path, f"option {name!r} needs exactly type, default, description "
                              "(and may have minimum, maximum, format)")
        typ = _OPTION_TYPES.get(spec["type"])
        if typ is None or not isinstance(spec["default"], typ):
            raise _fail(path, f"option {name!r}: default does not match type {spec['type']!r}")
        minimum, maximum = spec.get("minimum"), spec.get("maximum")
        for limit, value in (("minimum", minimum), ("maximum", maximum)):
            if value is not None and (spec["type"] not in ("int", "float") or not isinstance(value, (int, float))):
                raise _fail(path, f"option {name!r}: '{limit}' needs a number and a number type")
        fmt = spec.get("format")
        if fmt is not None and (spec["type"] != "str" or fmt not in _OPTION_FORMATS):
            raise _fail(path, f"option {name!r}: 'format' must be one of {', '.join(_OPTION_FORMATS)} "
                              "on a str option")
        option = RuleOption(str(name), spec["type"], spec["default"], str(spec["description"]), minimum, maximum,
                            fmt)
        problem = option.problem(option.default)
        if problem is not None:
            raise _fail(path, f"option {name!r}: the default {problem}")
        out.append(option)
    return tuple(out)


@functools.lru_cache(maxsize=None)
def load_catalog(directory: Optional[str] = None) -> Dict[str, RuleEntry]:
    """All entries by rule id, sorted by id: parsed from the YAML once per content of
    the catalog and its loader, then read back from :mod:`mplint.core.user_cache`."""
    folder = Path(directory) if directory else catalog_dir()
    paths = sorted(folder.glob("MP*.yaml"))
    if not paths:
        raise CatalogError(f"{folder}: no rule catalog entries found")
    key = _catalog_key(folder, paths)
    if key is not None:
        stored = user_cache.load("catalog", key, _decode)
        if stored is not None and list(stored) == [path.stem for path in paths]:
            return stored
    entries = {}
    for path in paths:
        entry = load_entry(path)
        entries[entry.id] = entry
    if key is not None:
        data = _encode(entries)
        if _decode(data) == entries:  # only what JSON carries as it is (no tuples in a config)
            user_cache.store("catalog", key, data)
    return entries


def _catalog_key(folder: Path, paths: List[Path]) -> Optional[str]:
    """The key of the parsed entries: the YAML files' names and bytes, their folder and
    this module's source (how entries are read and checked); None when a file cannot
    be read (parsing it then says why)."""
    try:
        parts = [os.fsencode(str(folder)), read_regular(__file__)]
        for path in paths:
            parts += [os.fsencode(path.name), read_regular(path)]
    except OSError:
        return None
    return user_cache.key_of(*parts)


def _encode(entries: Dict[str, RuleEntry]) -> List[Any]:
    return [[e.id, e.name, e.summary, e.severity, e.why, e.fix_safety.value, e.fix_description,
             [[x.kind, x.code, x.fixed, x.config, x.path] for x in e.examples],
             [[o.name, o.type, o.default, o.description, o.minimum, o.maximum, o.format] for o in e.options],
             list(e.references), e.source, e.opt_in]
            for e in entries.values()]


def _decode(data: Any) -> Dict[str, RuleEntry]:
    """Entries from :func:`_encode`'s JSON; TypeError, ValueError or KeyError for
    anything else (a miss)."""
    entries: Dict[str, RuleEntry] = {}
    for (rule_id, name, summary, severity, why, safety, fix_description, examples, options, references,
         source, opt_in) in data:
        if not all(isinstance(v, str) for v in (rule_id, name, summary, why, fix_description, source)) \
                or not isinstance(opt_in, bool) or not all(isinstance(r, str) for r in references):
            raise TypeError("not a stored catalog entry")
        entries[rule_id] = RuleEntry(
            id=rule_id, name=name, summary=summary, severity=parse_severity(severity), why=why,
            fix_safety=Safety(safety), fix_description=fix_description,
            examples=tuple(Example(str(kind), str(code), fixed, dict(config), str(path))
                           for kind, code, fixed, config, path in examples),
            options=tuple(RuleOption(str(n), str(t), default, str(d), lo, hi, fmt)
                          for n, t, default, d, lo, hi, fmt in options),
            references=tuple(references), source=source, opt_in=opt_in)
    return entries


def rule_options(catalog: Dict[str, RuleEntry]) -> Dict[str, RuleOption]:
    """Options declared by any rule; config keys beyond the global ones come from here."""
    out: Dict[str, RuleOption] = {}
    for entry in catalog.values():
        for option in entry.options:
            out.setdefault(option.name, option)
    return out
