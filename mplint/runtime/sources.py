"""Where the user's code constructed each layer, and where each layer sits in its model.

While a factory builds the model, ``Layer.__init__`` of every loaded Keras package is
wrapped: the first frame outside Keras, TensorFlow and mplint that is not the layer's own
``__init__`` chain is the line that made it (``layers.Dense(100)``, or the
``keras.applications.ResNet50(...)`` call for the layers inside). Findings print it as
``path:line``, as ``mplint check`` does, so a runtime finding and the static one for the
same layer read alike.

Both facts are kept beside the layers (weak references), never on the user's objects.
"""

from __future__ import annotations

import contextlib
import os
import sys
import weakref
from types import FrameType
from typing import Any, Iterator, List, Optional, Tuple

Location = Tuple[str, int]

# Packages whose frames are never the user's code.
_LIBRARY_ROOTS = frozenset({"keras", "tf_keras", "tensorflow", "keras_hub", "keras_nlp", "keras_cv",
                            "mplint", "absl", "contextlib", "functools", "importlib"})
_LAYER_CLASSES = (("keras.src.layers.layer", "Layer"), ("tf_keras.src.engine.base_layer", "Layer"))

# Library loaders that size a model from stored settings, not from the user's arguments.
_LOADERS = frozenset({"from_preset", "from_config", "deserialize_keras_object", "load_model"})

_where: "weakref.WeakKeyDictionary[Any, Location]" = weakref.WeakKeyDictionary()
_loaded: "weakref.WeakKeyDictionary[Any, bool]" = weakref.WeakKeyDictionary()
_place: "weakref.WeakKeyDictionary[Any, Tuple[int, ...]]" = weakref.WeakKeyDictionary()


def _display_path(filename: str) -> str:
    """Relative to the current folder when under it (as ``mplint check .`` prints paths)."""
    try:
        absolute = os.path.abspath(filename)
        relative = os.path.relpath(absolute)
    except ValueError:  # another drive on Windows
        return filename
    return absolute if relative.startswith("..") else relative


def _user_frame(frame: Optional[FrameType], layer: Any) -> Tuple[Optional[Location], bool]:
    """(where the user's code made ``layer``, whether a library loader made it on the way:
    ``from_preset``, ``from_config``)."""
    loaded = False
    while frame is not None:
        module = str(frame.f_globals.get("__name__", ""))
        own_init = frame.f_locals.get("self") is layer
        if module.split(".")[0] not in _LIBRARY_ROOTS and not own_init and \
                not frame.f_code.co_filename.startswith("<"):
            return (_display_path(frame.f_code.co_filename), int(frame.f_lineno or 0)), loaded
        loaded = loaded or frame.f_code.co_name in _LOADERS
        frame = frame.f_back
    return None, loaded


def _layer_classes() -> List[type]:
    found = []
    for module_name, attr in _LAYER_CLASSES:
        module = sys.modules.get(module_name)
        cls = getattr(module, attr, None) if module is not None else None
        if isinstance(cls, type):
            found.append(cls)
    return found


@contextlib.contextmanager
def recording() -> Iterator[None]:
    """Record the construction site of every layer made while the scope is open."""
    patched: List[Tuple[type, Any]] = []
    for cls in _layer_classes():
        original = cls.__dict__.get("__init__")
        if original is None or getattr(original, "_mplint_records", False):
            continue

        def init(self: Any, *args: Any, _original: Any = original, **kwargs: Any) -> None:
            if self not in _where:
                found, loaded = _user_frame(sys._getframe(1), self)
                if found is not None:
                    try:
                        _where[self] = found
                        _loaded[self] = loaded
                    except TypeError:  # not weakly referable: no location, no harm
                        pass
            _original(self, *args, **kwargs)

        init._mplint_records = True  # type: ignore[attr-defined]
        type.__setattr__(cls, "__init__", init)
        patched.append((cls, original))
    try:
        yield
    finally:
        for cls, original in reversed(patched):
            type.__setattr__(cls, "__init__", original)


def location(layer: Any) -> Optional[Location]:
    """(path, line) where the user's code made ``layer``; None when it was built elsewhere."""
    try:
        return _where.get(layer)
    except TypeError:
        return None


def sized_by_user(layer: Any) -> bool:
    """Was ``layer`` (a library's model, such as a keras_hub backbone) constructed by the
    user's code with its own arguments, rather than loaded from a preset or a config?"""
    try:
        return layer in _where and not _loaded.get(layer, False)
    except TypeError:
        return False


def _children(node: Any) -> List[Any]:
    flatten = getattr(node, "_flatten_layers", None)
    if flatten is not None:
        return list(flatten(include_self=False, recursive=False))
    return list(getattr(node, "layers", []) or [])


def mark_places(model: Any) -> None:
    """Remember each layer's place in ``model``: the index of it and of each parent among
    its siblings. Two builds of one factory have the same places, whatever Keras names
    their layers (the second build's ``dense_3`` is the first build's ``dense_1``)."""
    stack: List[Tuple[Any, Tuple[int, ...]]] = [(model, ())]
    seen = set()
    while stack:
        node, place = stack.pop()
        for index, child in enumerate(_children(node)):
            if id(child) in seen:
                continue
            seen.add(id(child))
            try:
                _place[child] = place + (index,)
            except TypeError:
                continue
            stack.append((child, place + (index,)))


def place(layer: Any) -> Optional[Tuple[int, ...]]:
    try:
        return _place.get(layer)
    except TypeError:
        return None



def copy_locations(original: Any, clone: Any) -> None:
    """Give the layers of a model rebuilt from ``original``'s config the construction sites
    of the layers in the same places."""
    stack = [(original, clone)]
    while stack:
        left, right = stack.pop()
        for a, b in zip(_children(left), _children(right)):
            found = location(a)
            if found is not None and location(b) is None:
                try:
                    _where[b] = found
                    _loaded[b] = _loaded.get(a, False)
                except TypeError:
                    pass
            stack.append((a, b))
