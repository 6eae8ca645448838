"""Wording that findings share."""

from __future__ import annotations

from typing import Optional


def snippet(code: str, limit: Optional[int] = None) -> str:
    """Source code quoted on one line in a message, cut to ``limit`` characters."""
    code = " ".join(code.split())
    return code if limit is None or len(code) <= limit else code[: limit - 3] + "..."
