"""``mplint check --show-settings FILE``: the settings that file is checked with, as
``key = value`` lines (ruff's ``--show-settings``), so a user can see which config
was read, which rules run there, and which Keras generation its fixes assume.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence

from mplint.rule.catalog import RuleEntry
from mplint.run.config import Settings


def _value(value: Any) -> str:
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (str, Path)):
        return f'"{value}"'
    return str(value)


def _list(items: Sequence[str]) -> str:
    if not items:
        return "[]"
    return "[\n" + "".join(f"\t{item},\n" for item in items) + "]"


def render(path: str, settings: Settings, catalog: Dict[str, RuleEntry], rule_ids: Sequence[str],
           ignored_here: Sequence[str], excluded: bool, project_root: Optional[Path],
           cache_dir: Path, keras: Dict[str, Optional[int]]) -> str:
    """The settings of one file; ``rule_ids`` are the run's rules, ``ignored_here``
    those ``per-file-ignores`` takes away for this file, ``keras`` the Keras
    generation's sources (``setting``, ``project``, ``installed``, ``file``)."""
    enabled = [r for r in rule_ids if r not in ignored_here]
    lines: List[str] = [
        f'Resolved settings for: "{path}"',
        f"Settings path: {_value(settings.config_path) if settings.config_path else 'none (defaults)'}",
        *[f"Extends: {_value(base)}" for base in settings.extends],
        "",
        f"project-root = {_value(project_root)}",
        f"excluded = {_value(excluded)}",
        f"rules.enabled = {_list([f'{r} ({catalog[r].name})' for r in enabled])}",
        f"rules.ignored-here (per-file-ignores) = {_list(list(ignored_here))}",
        f"exclude = {_list(list(settings.exclude))}",
        f"per-file-ignores = {_list([f'{p} = {list(c)}' for p, c in settings.per_file_ignores])}",
        f"respect-gitignore = {_value(settings.respect_gitignore)}",
        f"force-exclude = {_value(settings.force_exclude)}",
        f"line-length = {_value(settings.line_length)}",
        f"docs-url = {_value(settings.docs_url)}",
        f"file-timeout = {_value(settings.file_timeout)}",
        f"assume-policy = {_value(settings.assume_policy)}",
        f"keras-version = {_value(settings.keras_version)}",
        f"keras-version.declared-by-project = {_value(keras.get('project'))}",
        f"keras-version.installed = {_value(keras.get('installed'))}",
        f"keras-version.for-this-file = {_value(keras.get('file'))}",
    ]
    lines += [f"{name} = {_value(value)}" for name, value in settings.options]
    lines.append(f"cache-dir = {_value(cache_dir)}")
    return "\n".join(lines) + "\n"
