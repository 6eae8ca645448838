"""Turn a TARGET (``pkg.module:factory``, ``path/file.py:factory``, ``model.keras``) into a factory."""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
from dataclasses import dataclass
from typing import Any, Callable

SAVED_SUFFIXES = (".keras", ".h5", ".hdf5")


class TargetError(Exception):
    """The target cannot be found or loaded (one line for the user, exit 2)."""


@dataclass(frozen=True)
class Target:
    label: str
    factory: Callable[[], Any]
    saved_file: bool = False


def load_target(spec: str) -> Target:
    if spec.endswith(SAVED_SUFFIXES) and ":" not in os.path.basename(spec):
        if not os.path.isfile(spec):
            raise TargetError(f"{spec}: no such file")
        return Target(spec, lambda: load_saved_model(spec), saved_file=True)
    module_part, sep, attr = spec.rpartition(":")
    if not sep or not module_part or not attr:
        raise TargetError(f"{spec!r}: expected pkg.module:factory, path/to/file.py:factory "
                          f"or a saved .keras file")
    module = _load_module(module_part)
    obj: Any = module
    for part in attr.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise TargetError(f"{spec}: {module_part} has no attribute {attr!r}{_candidates(module, attr)}") \
                from None
    if not callable(obj):
        raise TargetError(f"{spec}: {attr!r} is not callable (expected a zero-argument factory)")
    return Target(spec, obj)


def _load_module(name: str) -> Any:
    if name.endswith(".py") or os.sep in name or "/" in name:
        path = os.path.abspath(name)
        if not os.path.isfile(path):
            raise TargetError(f"{name}: no such file")
        mod_name = "mplint_runtime_target_" + os.path.splitext(os.path.basename(path))[0]
        spec = importlib.util.spec_from_file_location(mod_name, path)
        if spec is None or spec.loader is None:
            raise TargetError(f"{name}: cannot be imported")
        module = importlib.util.module_from_spec(spec)
        # The file's own folder first, as `python file.py` would have it.
        sys.path.insert(0, os.path.dirname(path))
        sys.modules[mod_name] = module
        try:
            spec.loader.exec_module(module)
        finally:
            sys.path.remove(os.path.dirname(path))
        return module
    if os.getcwd() not in sys.path and "" not in sys.path:
        sys.path.insert(0, os.getcwd())
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as exc:
        # Only the module asked for (or a package above it) is "not found"; a module found
        # whose own import fails says what it failed on.
        if exc.name and (name == exc.name or name.startswith(exc.name + ".")):
            raise TargetError(f"{name}: module not found") from None
        raise TargetError(f"{name}: importing it failed: ModuleNotFoundError: {exc}") from None
    except Exception as exc:
        first = (str(exc).strip().splitlines() or [""])[0][:200]
        raise TargetError(f"{name}: importing it raised {type(exc).__name__}: {first}") from None


def _candidates(module: Any, wanted: str) -> str:
    """"; did you mean ...? its functions: ..." for a factory name that is not there: the
    functions and classes the module defines itself, closest first."""
    import difflib

    own = sorted(name for name, value in vars(module).items()
                 if callable(value) and not name.startswith("_")
                 and getattr(value, "__module__", None) == module.__name__)
    if not own:
        return ""
    close = difflib.get_close_matches(wanted, own, n=1)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    shown = ", ".join(own[:12]) + (", ..." if len(own) > 12 else "")
    return f"{hint} it defines: {shown}"


def load_saved_model(path: str) -> Any:
    """Keras 3 ``keras.saving.load_model``; Keras 2 ``tf.keras.models.load_model``."""
    import tensorflow as tf  # type: ignore[import-untyped]

    loader = getattr(getattr(tf.keras, "saving", None), "load_model", None) or tf.keras.models.load_model
    return loader(path, compile=True)
