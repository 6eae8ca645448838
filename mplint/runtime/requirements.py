"""TensorFlow is the ``runtime`` extra: import it only when a check runs, and say how
to install it when it is missing."""

from __future__ import annotations

import shlex
import sys

#: what the ``runtime`` extra adds (pyproject.toml; tests/test_readme_commands.py keeps them equal)
TENSORFLOW_REQUIREMENT = "tensorflow>=2.12"


def install_command() -> str:
    """The command that installs TensorFlow where mplint runs: this interpreter's pip, not
    whichever ``pip`` comes first on PATH, and TensorFlow itself. (``pip install
    "mplint[runtime]"`` works only with the pip of mplint's own environment: mplint is not
    on PyPI, so any other pip looks it up there and finds nothing, or another package.)"""
    return f'{shlex.quote(sys.executable or "python3")} -m pip install "{TENSORFLOW_REQUIREMENT}"'


INSTALL_HINT = f"the runtime checker needs TensorFlow (mplint's runtime extra): {install_command()}"


class MissingTensorFlow(ImportError):
    def __init__(self) -> None:
        super().__init__(INSTALL_HINT)


def require_tensorflow() -> None:
    """Import TensorFlow, or raise MissingTensorFlow with the install hint."""
    try:
        import tensorflow  # type: ignore[import-untyped]  # noqa: F401
    except ImportError as exc:
        raise MissingTensorFlow() from exc
