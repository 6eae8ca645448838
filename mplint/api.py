"""In-memory entry points: lint or fix a string (tests, editors).

They take the same path as every other caller: a source of the kind its name
says (a notebook for ``.ipynb``), then the linter's ``check`` or ``fix``.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence, Tuple

from mplint.core.findings import FileError, Finding
from mplint.core.linter import Linter
from mplint.core.source_kinds import load_source
from mplint.rule.catalog import load_catalog
from mplint.run.config import Settings, load_settings, selected_rules
from mplint.run.session import Environment


def make_linter(select: Optional[Sequence[str]] = None, settings: Optional[Settings] = None,
                **overrides: Any) -> Linter:
    """A linter with default settings, optional rule selection and setting overrides.

    ``overrides`` use Settings field names (``assume_policy="mixed_float16"``) or
    rule option names (``alignment=128``). The installed Keras generation is read
    now, as a run session reads it.
    """
    catalog = load_catalog()
    settings = settings or load_settings(None, catalog)
    options = settings.option_map()
    fields = {}
    for key, value in overrides.items():
        if key in options:
            options[key] = value
        else:
            fields[key] = value
    settings = settings.with_overrides(options=tuple(sorted(options.items())), **fields)
    rules = selected_rules(catalog, tuple(select) if select else settings.select, settings.ignore)
    return Linter(settings, catalog, rules, installed_keras=Environment.detect().keras_generation)


def lint_text(text: str, path: str = "<string>", linter: Optional[Linter] = None,
              **kwargs: Any) -> Tuple[List[Finding], List[FileError]]:
    linter = linter or make_linter(**kwargs)
    result = linter.check(load_source(path, text.encode("utf-8")))
    return result.findings, result.errors


def fix_text(text: str, path: str = "<string>", unsafe: bool = False,
             linter: Optional[Linter] = None, **kwargs: Any) -> str:
    linter = linter or make_linter(**kwargs)
    raw = text.encode("utf-8")
    outcome = linter.fix(load_source(path, raw), unsafe)
    return (outcome.fixed or raw).decode("utf-8")


def config_overrides(config: Dict[str, Any]) -> Dict[str, Any]:
    """Catalog example ``config`` keys (kebab-case, as in pyproject) to overrides."""
    return {key.replace("-", "_") if key in _SETTING_KEYS else key: value
            for key, value in config.items()}


_SETTING_KEYS = {"assume-policy", "keras-version", "library"}
