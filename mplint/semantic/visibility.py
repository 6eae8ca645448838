"""Whether a name is kept to itself by its owner, by Python's convention.

Kept apart from :mod:`mplint.semantic.names` so that the paths that run on a full
cache hit (the library surface, program routes) can ask it without importing libcst.
"""

from __future__ import annotations


def is_private_name(name: str) -> bool:
    """``_helper``, ``__mangled``, ``_model_unet`` (a module's stem): a name its owner
    keeps to itself. A dunder (``__init__``, ``__call__``, ``__main__``) is not
    private: Python itself calls it."""
    dunder = name.startswith("__") and name.endswith("__") and len(name) > 4
    return name.startswith("_") and not dunder
