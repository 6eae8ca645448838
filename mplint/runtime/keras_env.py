"""The Keras packages in play, their versions, and a policy scope that always restores.

Each Keras package keeps its own global policy (``keras`` 3 and ``tf_keras`` do not share
one), so the scope sets it in every package the user's code has loaded and puts each
one back afterwards, whatever happens.
"""

from __future__ import annotations

import contextlib
import sys
from types import ModuleType
from typing import Any, Dict, Iterator, List, Tuple


def tf_module() -> ModuleType:
    import tensorflow as tf  # type: ignore[import-untyped]

    return tf


def keras_modules() -> List[ModuleType]:
    """``tf.keras`` plus ``keras`` and ``tf_keras`` when loaded, without duplicates."""
    tf = tf_module()
    found: List[ModuleType] = []
    seen = set()
    candidates = [tf.keras] + [sys.modules[n] for n in ("keras", "tf_keras") if n in sys.modules]
    for mod in candidates:
        key = id(getattr(mod, "mixed_precision", None) and mod.mixed_precision.set_global_policy)
        if key not in seen:
            seen.add(key)
            found.append(mod)
    return found


def keras_version(keras_module: Any) -> str:
    """``tf.keras`` of TF <= 2.15 (``keras.api._v2.keras``) has no version: ask its package."""
    version = getattr(keras_module, "__version__", None)
    if version is None and callable(getattr(keras_module, "version", None)):
        version = keras_module.version()
    if version is None:
        root = sys.modules.get(keras_module.__name__.split(".")[0])
        version = getattr(root, "__version__", None)
    return str(version or "unknown")


def keras_major(keras_module: Any) -> int:
    head = keras_version(keras_module).split(".")[0]
    return int(head) if head.isdigit() else 3


def package_of(model: Any) -> Any:
    """The Keras package a model (or layer) was built with: ``keras`` 3, or ``tf_keras``
    (``keras`` 2.x under TF <= 2.15); a user's subclass is told by its Keras base class."""
    for cls in type(model).__mro__:
        root = cls.__module__.split(".")[0]
        if root in ("keras", "tf_keras") and root in sys.modules:
            return sys.modules[root]
    return tf_module().keras


def versions(model: Any = None) -> Dict[str, Any]:
    """TensorFlow's version and the Keras of ``model`` (``tf.keras`` without one)."""
    tf = tf_module()
    keras = package_of(model) if model is not None else tf.keras
    found = {"tensorflow": tf.__version__, "keras": keras_version(keras), "keras_major": keras_major(keras)}
    if keras.__name__.split(".")[0] == "tf_keras":
        found["keras_package"] = "tf_keras"
    return found


@contextlib.contextmanager
def python_warnings_quiet() -> Iterator[None]:
    """TensorFlow's Python logger at ERROR while the check runs: Keras 2's compatibility
    check and its "You forgot to call get_scaled_loss" are the checker's own doing (its
    probe optimizer), not the user's."""
    logger = tf_module().get_logger()
    level = logger.level
    logger.setLevel("ERROR")
    try:
        yield
    finally:
        logger.setLevel(level)


def global_policy_name(keras_module: Any = None) -> str:
    mod = keras_module or tf_module().keras
    return mod.mixed_precision.global_policy().name


# The open policy scopes, innermost last: (policy, [(package, its policy before)]).
_open_scopes: List[Tuple[str, List[Tuple[Any, Any]]]] = []


@contextlib.contextmanager
def policy_scope(policy: str) -> Iterator[None]:
    """Set ``policy`` globally in every loaded Keras package; restore the old ones after."""
    saved: List[Tuple[Any, Any]] = []
    entry = (policy, saved)
    try:
        for mod in keras_modules():
            saved.append((mod, mod.mixed_precision.global_policy()))
            mod.mixed_precision.set_global_policy(policy)
        _open_scopes.append(entry)
        yield
    finally:
        if entry in _open_scopes:
            _open_scopes.remove(entry)
        for mod, old in reversed(saved):
            mod.mixed_precision.set_global_policy(old)


def cover_new_packages() -> bool:
    """Set the innermost scope's policy in the Keras packages loaded since it opened (a
    factory that runs ``import tf_keras`` itself); True when one of them took a new policy,
    so that what the factory built under the old one must be built again."""
    if not _open_scopes:
        return False
    policy, saved = _open_scopes[-1]
    known = {id(mod) for mod, _ in saved}
    changed = False
    for mod in keras_modules():
        if id(mod) in known:
            continue
        old = mod.mixed_precision.global_policy()
        saved.append((mod, old))
        if old.name != policy:
            mod.mixed_precision.set_global_policy(policy)
            changed = True
    return changed


@contextlib.contextmanager
def functions_run_eagerly() -> Iterator[None]:
    """Run ``tf.function`` bodies eagerly, so every layer output is a concrete value."""
    tf = tf_module()
    before = tf.config.functions_run_eagerly()
    tf.config.run_functions_eagerly(True)
    try:
        yield
    finally:
        tf.config.run_functions_eagerly(before)


@contextlib.contextmanager
def watch_library_models() -> Iterator[None]:
    """Mark Functional models that ``keras.applications`` builds while the scope is open
    (``probe.LIBRARY_MARK``): their layers' sizes are not the user's to change."""
    try:
        from keras.src.models.functional import Functional  # type: ignore[import-untyped]  # Keras 3
    except Exception:
        yield
        return
    original = Functional.__init__

    def init(self: Any, *args: Any, **kwargs: Any) -> None:
        original(self, *args, **kwargs)
        frame = sys._getframe(1)
        for _ in range(6):
            if frame is None:
                break
            module = str(frame.f_globals.get("__name__", ""))
            if module.startswith("keras.src.applications."):
                origin = f"keras.applications {getattr(self, 'name', '')}".strip()
                # The layers too: a user's Model(app.input, head(app.output)) holds them directly.
                for holder in [self] + list(getattr(self, "layers", []) or []):
                    try:
                        object.__setattr__(holder, "_mplint_library", origin)
                    except Exception:
                        pass
                break
            frame = frame.f_back  # type: ignore[assignment]

    Functional.__init__ = init  # type: ignore[method-assign]
    try:
        yield
    finally:
        Functional.__init__ = original  # type: ignore[method-assign]
