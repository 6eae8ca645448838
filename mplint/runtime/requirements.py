"""TensorFlow is the ``runtime`` extra: import it only when a check runs, and say how
to install it when it is missing."""

from __future__ import annotations

INSTALL_HINT = 'the runtime checker needs TensorFlow: pip install "mplint[runtime]"'


class MissingTensorFlow(ImportError):
    def __init__(self) -> None:
        super().__init__(INSTALL_HINT)


def require_tensorflow() -> None:
    """Import TensorFlow, or raise MissingTensorFlow with the install hint."""
    try:
        import tensorflow  # type: ignore[import-untyped]  # noqa: F401
    except ImportError as exc:
        raise MissingTensorFlow() from exc
