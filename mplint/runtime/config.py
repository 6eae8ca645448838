"""The runtime checker's part of ``[tool.mplint]``: ``select``, ``ignore``, ``alignment`` and
``vocabulary-threshold``, read from the nearest ``pyproject.toml`` that has the table.

Read here rather than through the static checker's configuration, so that the runtime
checker stays independent of the rest of mplint; the other keys of the table are the
static checker's and are left alone.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


class ConfigError(Exception):
    """A wrong value in [tool.mplint] (one line for the user, exit 2)."""


@dataclass
class RuntimeConfig:
    select: List[str] = field(default_factory=list)
    ignore: List[str] = field(default_factory=list)
    alignment: Optional[int] = None
    vocabulary_threshold: Optional[int] = None
    path: Optional[Path] = None  # the pyproject.toml read, if any


def find_pyproject(start: Path) -> Optional[Path]:
    """The nearest pyproject.toml with a [tool.mplint] table at or above ``start``."""
    here = start.resolve()
    if here.is_file():
        here = here.parent
    for folder in [here, *here.parents]:
        candidate = folder / "pyproject.toml"
        if candidate.is_file():
            try:
                text = candidate.read_text(encoding="utf-8")
                data = tomllib.loads(text)
            except (OSError, UnicodeDecodeError):
                continue
            except tomllib.TOMLDecodeError:
                if "tool.mplint" in text:
                    return candidate  # load() says what is wrong
                continue
            if isinstance(data.get("tool"), dict) and "mplint" in data["tool"]:
                return candidate
    return None


def _codes(table: Dict[str, Any], key: str, path: Path) -> List[str]:
    value = table.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{path}: [tool.mplint] {key} must be a list of rule ids or prefixes")
    return [v.strip().upper() for v in value if v.strip()]


def _positive(table: Dict[str, Any], key: str, path: Path) -> Optional[int]:
    value = table.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ConfigError(f"{path}: [tool.mplint] {key} must be a positive integer")
    return value


def load(path: Optional[Path] = None, start: Optional[Path] = None) -> RuntimeConfig:
    """Read ``path``, or the nearest pyproject.toml with [tool.mplint] above ``start``."""
    if path is None:
        path = find_pyproject(start or Path.cwd())
        if path is None:
            return RuntimeConfig()
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"{path}: {exc.strerror or exc}") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from None
    table = data.get("tool", {}).get("mplint", {})
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: [tool.mplint] must be a table")
    return RuntimeConfig(_codes(table, "select", path), _codes(table, "ignore", path),
                         _positive(table, "alignment", path),
                         _positive(table, "vocabulary-threshold", path), path)


def split_codes(text: Optional[str]) -> Optional[List[str]]:
    """``"MP1, MP201"`` -> ``["MP1", "MP201"]``; None stays None."""
    if text is None:
        return None
    return [c.strip().upper() for c in text.split(",") if c.strip()]


def check_codes(codes: Sequence[str], what: str) -> None:
    for code in codes:
        if not (code.startswith("MP") and code[2:].isdigit() and len(code) <= 5) and code != "ALL":
            raise ConfigError(f"{what}: {code!r} is not a rule id or prefix (e.g. MP1, MP201)")
