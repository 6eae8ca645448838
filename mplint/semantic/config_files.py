"""The values a configuration file of the project holds (``configs/train.yaml``,
``params.json``), for a program that loads it from a path written in its code.

A program that reads ``yaml.safe_load(open("configs/train.yaml"))`` or
``json.load(f)`` makes a container whose keys the file decides; ``cfg["lr"]`` and
``cfg.model.epsilon`` (through an EasyDict, DotMap, Munch or OmegaConf wrapper) read
them. Which calls load a file and which wrap a loaded dict are facts about APIs
(``vocabulary.CONFIG_LOADERS``, ``CONFIG_FILE_LOADERS``, ``CONFIG_WRAPPERS``); this
module only finds the file and reads a key path in it.

The file is read through :mod:`core.reads`, so a cached result is keyed by its
content: editing the yaml re-checks the files whose findings it decided. YAML is
parsed with PyYAML's safe loader (a dependency, imported only when a file is read).
A file that cannot be found, read or parsed, a key that is missing and a value that
is not a string, number or boolean are all unknown (None): the rules stay silent.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Dict, Iterable, Optional, Sequence, Tuple, Union

from mplint.core import reads

#: the largest configuration file read (bigger ones are data, not settings)
_MAX_BYTES = 500_000
#: (path, content digest) -> the parsed document (None: unparsable)
_PARSED: Dict[Tuple[str, str], object] = {}
_SUFFIXES = (".yaml", ".yml", ".json")

Scalar = Union[int, float, str, bool]


def candidates(written: str, folders: Iterable[Path]) -> Sequence[str]:
    """The files a relative path written in code may name: relative to each folder
    given (the module's own, the project's root), existing ones only, each once."""
    if not written.endswith(_SUFFIXES):
        return ()
    if os.path.isabs(written):
        return (written,) if os.path.isfile(written) else ()
    out = []
    for folder in folders:
        path = os.path.normpath(str(folder / written))
        if path in out:
            continue
        if os.path.isfile(path):
            out.append(path)
        else:
            reads.read(path, _MAX_BYTES)  # its absence is noted: creating it re-checks
    return out


def document(path: str) -> object:
    """The parsed content of a yaml or json file (None when unreadable or unparsable)."""
    found = reads.read(path, _MAX_BYTES)
    if found is None:
        return None
    raw, digest = found
    if (path, digest) not in _PARSED:
        _PARSED[(path, digest)] = _parse(path, raw)
    return _PARSED[(path, digest)]


def _parse(path: str, raw: bytes) -> object:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return None
    if path.endswith(".json"):
        try:
            return json.loads(text)
        except ValueError:
            return None
    import yaml  # only when a program's yaml file is read

    try:
        return yaml.safe_load(text)
    except yaml.YAMLError:
        return None


def lookup(data: object, keys: Sequence[str]) -> Optional[Scalar]:
    """The string, number or boolean at ``keys`` in a parsed document (None when a key
    is missing or the value is a container or null)."""
    for key in keys:
        if not isinstance(data, dict) or key not in data:
            return None
        data = data[key]
    if isinstance(data, (str, int, float, bool)):
        return data
    return None


def value(paths: Sequence[str], keys: Sequence[str]) -> Optional[Scalar]:
    """The one value every file a path may name holds at ``keys`` (None when they
    differ, or any is unknown)."""
    found: Optional[Scalar] = None
    for path in paths:
        here = lookup(document(path), keys)
        if here is None or (found is not None and (here != found or type(here) is not type(found))):
            return None
        found = here
    return found
