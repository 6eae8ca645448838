"""Regular expressions compiled when first used, not when their module is imported.

A module's table of patterns (dependency pins, spellings only one Keras generation
has) is compiled on every start otherwise, though a run answered by the cache, or a
project without such files, never uses most of them; a one-file pre-commit run paid
for all of them.
"""

from __future__ import annotations

import re
from typing import Any, AnyStr, Optional, Pattern, cast


class _Lazy:
    __slots__ = ("_pattern", "_flags", "_compiled")

    def __init__(self, pattern: Any, flags: int) -> None:
        self._pattern = pattern
        self._flags = flags
        self._compiled: Optional[Pattern[Any]] = None

    def __getattr__(self, name: str) -> Any:  # match, search, finditer, pattern, ...
        compiled = self._compiled
        if compiled is None:
            compiled = self._compiled = re.compile(self._pattern, self._flags)
        return getattr(compiled, name)


def lazy_compile(pattern: AnyStr, flags: int = 0) -> "Pattern[AnyStr]":
    """``re.compile(pattern, flags)``, done at the first use of the pattern."""
    return cast("Pattern[AnyStr]", _Lazy(pattern, flags))
