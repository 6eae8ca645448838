"""Rule implementations: one module per rule, found here by the registry.

A new rule is a module in this package defining one :class:`mplint.rule.check.Check`
subclass with ``rule_id`` set, plus ``rules/<ID>.yaml``; nothing else changes.
"""

from __future__ import annotations

import functools
import importlib
import pkgutil
from typing import Dict, Type

from mplint.rule.check import Check


@functools.lru_cache(maxsize=None)
def registry() -> Dict[str, Type[Check]]:
    """Every Check subclass in this package, by rule id."""
    found: Dict[str, Type[Check]] = {}
    for info in pkgutil.iter_modules(__path__):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        for value in vars(module).values():
            if (
                isinstance(value, type)
                and issubclass(value, Check)
                and value.rule_id
                and value.__module__ == module.__name__
            ):
                if value.rule_id in found:
                    raise RuntimeError(f"two checks claim {value.rule_id}")
                found[value.rule_id] = value
    return found
