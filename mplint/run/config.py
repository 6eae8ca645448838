"""``[tool.mplint]`` in pyproject.toml (or ``mplint.toml`` / ``.mplint.toml``): found,
parsed and validated strictly.

Unknown keys and wrong types are errors that name the key (exit 2), as users of
ruff expect. Rule options (``alignment``, ...) are declared in the rules' catalog
entries, so a new rule with an option touches nothing here. ``extend`` names a
configuration whose settings this one starts from (ruff's ``extend``).
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple

from mplint.core.regular_files import NotRegularFile, read_regular
from mplint.rule.catalog import RuleEntry, rule_options


def _toml(text: str) -> Dict[str, Any]:
    """``tomllib.loads``, imported only where a configuration file is read; its
    ``TOMLDecodeError`` is a ValueError, which the callers catch."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib
    return tomllib.loads(text)


DEFAULT_EXCLUDE = (
    ".git", ".hg", ".svn", ".venv", "venv", ".tox", ".nox", ".eggs", "__pypackages__",
    "build", "dist", "site-packages", "node_modules", ".mplint_cache", "__pycache__",
    ".ipynb_checkpoints",
)

POLICIES = ("mixed_float16", "mixed_bfloat16", "float32")
#: seconds: the slowest real file measured takes under 2 s; a pathological one, minutes
DEFAULT_FILE_TIMEOUT = 20.0
#: the largest ``file-timeout`` accepted, in seconds (a day)
MAX_FILE_TIMEOUT = 86400.0


class ConfigError(Exception):
    """The configuration is invalid; the message names the file and key."""


@dataclass(frozen=True)
class RuleSelection:
    """One layer of rule selection (the config's, then the command line's), as in ruff.

    A layer that gives ``select`` replaces the selection so far; one without it adds
    ``extend_select`` to it and takes ``ignore`` (``extend-ignore`` too) from it.
    Within a layer the more specific code wins, and ties go to ``ignore``.
    """

    select: Optional[Tuple[str, ...]] = None
    ignore: Tuple[str, ...] = ()
    extend_select: Tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return self.select is not None or bool(self.ignore) or bool(self.extend_select)


@dataclass(frozen=True)
class Settings:
    """Everything a run needs to know besides the paths."""

    root: Path = field(default_factory=Path.cwd)
    config_path: Optional[Path] = None
    select: Tuple[str, ...] = ("ALL",)
    ignore: Tuple[str, ...] = ()
    exclude: Tuple[str, ...] = DEFAULT_EXCLUDE
    per_file_ignores: Tuple[Tuple[str, Tuple[str, ...]], ...] = ()
    assume_policy: Optional[str] = None
    #: judge public layers and models as a library's, which users may run under a mixed
    #: policy (None: when no program of the project sets one)
    library: Optional[bool] = None
    keras_version: Optional[int] = None
    respect_gitignore: bool = True
    #: where the result cache lives (None: ``.mplint_cache`` in the project root)
    cache_dir: Optional[Path] = None
    options: Tuple[Tuple[str, Any], ...] = ()
    #: apply ``exclude`` to files named on the command line too (``--force-exclude``)
    force_exclude: bool = False
    #: the configurations ``config_path`` extends, the closest first
    extends: Tuple[Path, ...] = ()
    #: the longest line a fix may write: ``line-length``, else ruff's or black's setting
    line_length: Optional[int] = None
    #: the address of a rule's documentation, ``{rule}`` (or ``{name}``) standing for it
    docs_url: Optional[str] = None
    #: the most seconds one file may take before it is skipped (0: no limit)
    file_timeout: float = DEFAULT_FILE_TIMEOUT

    def with_overrides(self, **changes: Any) -> "Settings":
        return replace(self, **{k: v for k, v in changes.items() if v is not None})

    def option_map(self) -> Dict[str, Any]:
        return dict(self.options)


def _str_list(key: str, value: Any, where: str) -> Tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{where}: '{key}' must be a list of strings")
    return tuple(value)


#: configuration files, in the order one folder's are preferred (ruff's order)
CONFIG_NAMES = (".mplint.toml", "mplint.toml", "pyproject.toml")


def config_in(folder: Path) -> Optional[Path]:
    """The configuration file of one folder: ``.mplint.toml``, ``mplint.toml``, or a
    ``pyproject.toml`` with a [tool.mplint] table."""
    for name in CONFIG_NAMES:
        candidate = folder / name
        if not candidate.is_file():
            continue
        if name != "pyproject.toml":
            return candidate
        try:
            data = _toml(read_regular(candidate).decode("utf-8"))
        except (OSError, ValueError, RecursionError):  # ValueError: undecodable bytes, invalid TOML
            return candidate  # let load_settings report it
        if isinstance(data.get("tool"), dict) and "mplint" in data["tool"]:
            return candidate
    return None


def find_config(start: Path) -> Optional[Path]:
    """The nearest configuration file above ``start`` (see :func:`config_in`)."""
    start = start.resolve()
    for folder in (start, *start.parents):
        found = config_in(folder)
        if found is not None:
            return found
    return None


def load_settings(config_path: Optional[Path], catalog: Dict[str, RuleEntry],
                  root: Optional[Path] = None, explicit: bool = False,
                  overrides: Sequence[Dict[str, Any]] = ()) -> Settings:
    """Read and validate the configuration (defaults when there is none; an error
    when the file was named with ``--config``: ``explicit``), after the ones it
    extends. ``overrides`` are tables read last (``--config KEY=VALUE``)."""
    options = {name: opt.default for name, opt in rule_options(catalog).items()}
    if config_path is None and not overrides:
        home = (root or Path.cwd()).resolve()
        return Settings(root=home, options=tuple(sorted(options.items())), line_length=formatter_line_length(home))
    chain = _extended_chain(config_path, explicit) if config_path is not None else []
    reader = _TableReader(catalog, options)
    for path, table in reversed(chain):  # the furthest base first; each one after overrides
        reader.read(str(path), path.parent, table)
    for table in overrides:
        reader.read(COMMAND_LINE, Path.cwd(), table)
    selection = resolve_rules(catalog, reader.layers)
    # The tables' selection, resolved to rule ids, so every reader of ``select`` sees it.
    home = config_path.parent if config_path is not None else (root or Path.cwd())
    reader.settings.setdefault("line_length", formatter_line_length(home))
    return Settings(root=home.resolve(), config_path=config_path, select=selection,
                    exclude=tuple(reader.exclude), options=tuple(sorted(reader.options.items())),
                    extends=tuple(path for path, _ in chain[1:]), **reader.settings)


#: where an override from the command line comes from, in messages
COMMAND_LINE = "--config"


def inline_table(text: str) -> Dict[str, Any]:
    """``--config "KEY = VALUE"``: one TOML key and value, as in ruff."""
    try:
        return _toml(text)
    except ValueError as exc:  # tomllib.TOMLDecodeError
        raise ConfigError(f"--config {text!r}: neither a file nor a valid TOML 'key = value' ({exc})") from None


def _read_table(config_path: Path, explicit: bool) -> Dict[str, Any]:
    """The mplint table of one file: [tool.mplint] of a pyproject.toml (or of any
    file with a [tool] table), the whole of an ``mplint.toml``."""
    where = str(config_path)
    try:
        data = _toml(read_regular(config_path).decode("utf-8"))
    except NotRegularFile:
        raise ConfigError(f"{where}: is not a regular file (a FIFO, socket or device); not read") from None
    except IsADirectoryError:
        raise ConfigError(f"{where}: is a folder, not a configuration file") from None
    except OSError as exc:
        raise ConfigError(f"{where}: cannot be read: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise ConfigError(f"{where}: is not valid UTF-8") from None
    except ValueError as exc:  # tomllib.TOMLDecodeError (UnicodeDecodeError is caught above)
        raise ConfigError(f"{where}: invalid TOML: {exc}") from None
    except RecursionError:  # tomllib recurses once per level of nesting
        raise ConfigError(f"{where}: nests arrays or tables too deeply to read") from None
    tool = data.get("tool")
    if config_path.name != "pyproject.toml" and "tool" not in data:
        return data  # mplint.toml: the settings at the top level (a [tool.mplint] table is read too)
    if explicit and not (isinstance(tool, dict) and "mplint" in tool):
        raise ConfigError(f"{where}: has no [tool.mplint] table")
    table = tool.get("mplint", {}) if isinstance(tool, dict) else {}
    if not isinstance(table, dict):
        raise ConfigError(f"{where}: [tool.mplint] must be a table")
    return table


def _extended_chain(config_path: Path, explicit: bool) -> List[Tuple[Path, Dict[str, Any]]]:
    """``config_path``'s table, then the table its ``extend`` names, and so on."""
    chain: List[Tuple[Path, Dict[str, Any]]] = []
    seen: List[Path] = []
    path, named = config_path, explicit
    while True:
        table = _read_table(path, named)
        chain.append((path, table))
        seen.append(path.resolve())
        extend = table.get("extend")
        if extend is None:
            return chain
        if not isinstance(extend, str) or not extend:
            raise ConfigError(f"{path}: 'extend' must be the path of a configuration file (a string)")
        base = (path.parent / Path(os.path.expandvars(extend)).expanduser()).resolve()  # relative to its file
        if not base.is_file():
            raise ConfigError(f"{path}: 'extend' names {extend!r}, which is not a file")
        if base in seen:
            raise ConfigError(f"{path}: 'extend' makes a cycle: "
                              + " -> ".join(str(p) for p in [*seen, base]))
        path, named = base, True


class _TableReader:
    """Reads tables in order, each overriding what the ones before it set (ruff's
    ``extend``): ``select`` replaces the selection and ``extend-select`` adds to it,
    ``exclude`` replaces and ``extend-exclude`` adds, every other key replaces."""

    def __init__(self, catalog: Dict[str, RuleEntry], options: Dict[str, Any]) -> None:
        self.catalog = catalog
        self.declared = rule_options(catalog)
        self.options = dict(options)
        self.settings: Dict[str, Any] = {}
        self.exclude = list(DEFAULT_EXCLUDE)
        self.layers: List[RuleSelection] = []

    def read(self, where: str, folder: Path, table: Dict[str, Any]) -> None:
        """Read one table, named ``where`` in messages, whose paths are relative to ``folder``."""
        catalog, declared, settings = self.catalog, self.declared, self.settings
        chosen: Dict[str, Tuple[str, ...]] = {}  # the selection keys' codes
        for key, value in table.items():
            if key in _SELECTION_KEYS:
                chosen[key] = validate_codes(_str_list(key, value, where), catalog, f"{where}: '{key}'")
            elif key == "extend" and where != COMMAND_LINE:
                continue  # read by _extended_chain
            elif key == "exclude":
                self.exclude = list(_str_list(key, value, where))
            elif key == "extend-exclude":
                self.exclude += _str_list(key, value, where)
            elif key == "per-file-ignores":
                settings["per_file_ignores"] = parse_per_file_ignores(value, catalog, where)
            elif key == "extend-per-file-ignores":
                settings["per_file_ignores"] = settings.get("per_file_ignores", ()) + parse_per_file_ignores(
                    value, catalog, where)
            elif key == "assume-policy":
                if value not in POLICIES:
                    raise ConfigError(f"{where}: 'assume-policy' must be one of {', '.join(POLICIES)}, got {value!r}")
                settings["assume_policy"] = value
            elif key == "keras-version":
                if value not in (2, 3) or isinstance(value, bool):
                    raise ConfigError(f"{where}: 'keras-version' must be 2 or 3, got {value!r}")
                settings["keras_version"] = value
            elif key == "library":
                if not isinstance(value, bool):
                    raise ConfigError(f"{where}: 'library' must be true or false")
                settings["library"] = value
            elif key == "docs-url":
                if not isinstance(value, str) or not ("{rule}" in value or "{name}" in value):
                    raise ConfigError(f"{where}: 'docs-url' must be an address with {{rule}} or {{name}} in it "
                                      f"(https://example.org/mplint/rules/{{rule}}/), got {value!r}")
                try:
                    value.format(rule="MP101", name="float16-final-softmax")
                except (KeyError, IndexError, ValueError):
                    raise ConfigError(f"{where}: 'docs-url' may hold only {{rule}} and {{name}}, got {value!r}") from None
                settings["docs_url"] = value
            elif key == "line-length":
                if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= 320:
                    raise ConfigError(f"{where}: 'line-length' must be a whole number from 1 to 320, got {value!r}")
                settings["line_length"] = value
            elif key == "file-timeout":
                settings["file_timeout"] = file_timeout(value, f"{where}: 'file-timeout'")
            elif key in ("respect-gitignore", "force-exclude"):
                if not isinstance(value, bool):
                    raise ConfigError(f"{where}: '{key}' must be true or false")
                settings[key.replace("-", "_")] = value
            elif key == "cache-dir":
                if not isinstance(value, str) or not value:
                    raise ConfigError(f"{where}: 'cache-dir' must be a folder path (a string)")
                # relative to the config file, as every path in it
                settings["cache_dir"] = folder.resolve() / Path(value).expanduser()
            elif key in declared:
                problem = declared[key].problem(value)
                if problem is not None:
                    raise ConfigError(f"{where}: '{key}' {problem}, got {value!r}")
                self.options[key] = value
            else:
                table_name = "" if where == COMMAND_LINE else " in [tool.mplint]" if where.endswith(
                    "pyproject.toml") else f" in {Path(where).name}"
                raise ConfigError(f"{where}: unknown key '{key}'{table_name}{_did_you_mean(key, declared)}")
        self.layers.append(RuleSelection(select=chosen.get("select"),
                                         ignore=chosen.get("ignore", ()) + chosen.get("extend-ignore", ()),
                                         extend_select=chosen.get("extend-select", ())))


def file_timeout(value: Any, where: str) -> float:
    """``file-timeout`` (``--file-timeout``): seconds, 0 for no limit."""
    if not isinstance(value, (int, float)) or isinstance(value, bool) or not 0 <= value <= MAX_FILE_TIMEOUT:
        raise ConfigError(f"{where} must be a number of seconds from 0 (no limit) to {MAX_FILE_TIMEOUT:g}, "
                          f"got {value!r}")
    return float(value)


def formatter_line_length(start: Path) -> Optional[int]:
    """The line length the project's formatter keeps to: ``line-length`` of the
    nearest ruff configuration (``.ruff.toml``, ``ruff.toml``, ``[tool.ruff]``) or
    ``[tool.black]`` above ``start``; None when no formatter says (fixes then keep
    the call's own layout, however long)."""
    for folder in (start, *start.parents):
        for name in (".ruff.toml", "ruff.toml", "pyproject.toml"):
            candidate = folder / name
            if not candidate.is_file():
                continue
            try:
                data = _toml(read_regular(candidate).decode("utf-8"))
            except (OSError, ValueError, RecursionError):  # ValueError: undecodable bytes, invalid TOML
                continue  # not ours to report
            tool = data.get("tool") if name == "pyproject.toml" else {"ruff": data}
            if not isinstance(tool, dict):
                continue
            for table in (tool.get("ruff"), tool.get("black")):
                value = table.get("line-length") if isinstance(table, dict) else None
                if isinstance(value, int) and not isinstance(value, bool) and value > 0:
                    return value
    return None


def parse_per_file_ignores(value: Any, catalog: Dict[str, RuleEntry], where: str
                           ) -> Tuple[Tuple[str, Tuple[str, ...]], ...]:
    """``{pattern = [codes]}`` (a table, or ``--per-file-ignores``), validated."""
    if not isinstance(value, dict):
        raise ConfigError(f"{where}: 'per-file-ignores' must be a table of pattern = [codes]")
    pfi = []
    for pattern, codes in value.items():
        codes = validate_codes(_str_list(f"per-file-ignores.{pattern}", codes, where),
                               catalog, f"{where}: 'per-file-ignores.{pattern}'")
        pfi.append((pattern, codes))
    return tuple(pfi)


_SELECTION_KEYS = ("select", "ignore", "extend-select", "extend-ignore")
#: every key of [tool.mplint] besides the rules' options
SETTING_KEYS = (*_SELECTION_KEYS, "extend", "exclude", "extend-exclude", "per-file-ignores",
                "extend-per-file-ignores", "assume-policy", "file-timeout",
                "library", "keras-version", "respect-gitignore", "force-exclude", "cache-dir", "line-length",
                "docs-url")


def _did_you_mean(key: str, options: Iterable[str]) -> str:
    """``; did you mean 'per-file-ignores'?`` for a misspelt key (``per_file_ignores``)."""
    import difflib

    known = [*SETTING_KEYS, *options]
    close = difflib.get_close_matches(key, known, n=1, cutoff=0.6) or \
        difflib.get_close_matches(key.replace("_", "-").lower(), known, n=1, cutoff=0.6)
    return f"; did you mean '{close[0]}'?" if close else ""


def validate_codes(codes: Iterable[str], catalog: Dict[str, RuleEntry], where: str) -> Tuple[str, ...]:
    """Each code must be ALL or a prefix of at least one known rule id."""
    out = []
    for raw in codes:
        code = raw.strip().upper()
        if not code:
            raise ConfigError(f"{where}: an empty rule code ({raw!r}) selects nothing; remove it")
        if code != "ALL" and not any(rule_id.startswith(code) for rule_id in catalog):
            raise ConfigError(f"{where}: unknown rule or prefix {raw!r}")
        out.append(code)
    return tuple(out)


def _best(patterns: Sequence[str], rule_id: str, all_counts: bool = True) -> int:
    """Length of the most specific matching code (ALL counts as 0 when
    ``all_counts``), -1 if none."""
    best = -1
    for p in patterns:
        if p == "ALL":
            if all_counts:
                best = max(best, 0)
        elif rule_id.startswith(p):
            best = max(best, len(p))
    return best


def _updates(catalog: Dict[str, RuleEntry], select: Sequence[str],
             ignore: Sequence[str]) -> Dict[str, bool]:
    """Rule id -> enabled, for the rules a layer's codes name (see ``selected_rules``)."""
    out: Dict[str, bool] = {}
    for rule_id, entry in catalog.items():
        # An opt-in rule (MP900) is enabled only by a code that names it, never by ALL.
        s = _best(select, rule_id, all_counts=not entry.opt_in)
        i = _best(ignore, rule_id)
        if s >= 0 and s > i:
            out[rule_id] = True
        elif i >= 0:
            out[rule_id] = False
    return out


def selected_rules(catalog: Dict[str, RuleEntry], select: Sequence[str],
                   ignore: Sequence[str]) -> List[str]:
    """Rule ids enabled by select/ignore; the more specific code wins, ties go to ignore."""
    return [rule_id for rule_id, on in _updates(catalog, select, ignore).items() if on]


def resolve_rules(catalog: Dict[str, RuleEntry], layers: Sequence[RuleSelection]) -> Tuple[str, ...]:
    """The rule ids enabled by the default selection (``ALL``) and then each layer."""
    enabled = set(selected_rules(catalog, ("ALL",), ()))
    for layer in layers:
        updates = _updates(catalog, (layer.select or ()) + layer.extend_select, layer.ignore)
        if layer.select is not None:
            enabled = {rule_id for rule_id, on in updates.items() if on}
            continue
        for rule_id, on in updates.items():
            (enabled.add if on else enabled.discard)(rule_id)
    return tuple(rule_id for rule_id in catalog if rule_id in enabled)
