"""Registry objects that decorators fill: ``BACKBONES = Registry("backbones")``, then
``@BACKBONES.register`` (``@BACKBONES.register("alias")``, ``@MODELS.register_module()``)
on classes and functions across the project, which a builder later looks up by a name
from the configuration: ``BACKBONES[cfg.name](**kw)``, ``BACKBONES.get(name)``,
``MODELS.build(cfg)`` or ``build_from_cfg(cfg, BACKBONES)``.

The key is chosen at run time, so whatever reaches the lookup may run any entry: a
registered class is reached by whatever reaches its registry. A registry nothing looks
up reaches nothing (registering a class at import builds nothing).

Registries written by a decorator function of their module (``@register_model`` storing
into ``_MODELS[name]``) and dicts of callables are the program model's own
(``ProgramModel._registry``); this module answers for registry *objects*, named by the
decorators' heads. It reads summaries, and bytes first, so a name that no module uses as
a decorator's head costs a few ``bytes.find``.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Dict, FrozenSet, List, Optional, Tuple

from mplint.run.module_paths import absolute_import

if TYPE_CHECKING:
    from mplint.run.program import Node, ProgramModel

#: methods of a registry object that look an entry up or build it (mmcv/mmengine's
#: ``Registry.get``/``build``, detectron2's ``get``, the ``__getitem__`` of a hand-written
#: one): a call of one reaches every entry. ``register*`` and the like run nothing.
LOOKUP_METHODS = frozenset({"get", "build", "build_from_cfg", "create", "get_module", "__getitem__", "instantiate"})
#: registered definitions a lookup is followed into, at most (a detection zoo registers
#: a hundred backbones; their shared base classes' methods count once)
MAX_ENTRIES = 256

#: a registry's identity: (project file, name bound at its top level)
Home = Tuple[str, str]


class RegistryObjects:
    """Answers "which project code may a lookup of this registry object run?" for one
    program model (memoised per registry)."""

    def __init__(self, model: "ProgramModel") -> None:
        self._model = model
        self._entries: Dict[Home, List["Node"]] = {}
        self._assigned: Dict[str, FrozenSet[str]] = {}

    def lookup(self, path: str, written: str) -> List["Node"]:
        """What ``written`` in ``path`` runs when it is a registry object's lookup:
        ``REG`` handed to a call (``build_from_cfg(cfg, REG)``) or subscripted and called
        (``REG[name]()``, the caller strips the subscript), or ``REG.get``/``REG.build``;
        nothing for any other name."""
        head, _, rest = written.partition(".")
        if rest and (rest not in LOOKUP_METHODS):
            return []
        home = self._home(path, head)
        return [] if home is None else self._entries_of(home)

    def filled_by(self, path: str) -> List[str]:
        """The modules holding a registry object that the definitions of ``path`` enter
        (``@BACKBONES.register`` with ``BACKBONES`` from ``builder.py``): a lookup there
        runs their code, so a run naming ``path`` alone summarises them too."""
        found: List[str] = []
        for decorator in self._model.summary(path).decorated:
            owner, _, _ = decorator.rpartition(".")
            home = self._names(path, owner) if owner else None
            if home is not None and home[1] in self._top_names(home[0]) and home[0] not in found:
                found.append(home[0])
        return found

    def _home(self, path: str, head: str) -> Optional[Home]:
        """The project module and top-level name ``head`` stands for in ``path``: through
        the import that binds it (``from ..builder import BACKBONES``), else its own."""
        model = self._model
        target = model.summary(path).imports.get(head)
        if target is None:
            return (path, head) if head not in model.summary(path).functions else None
        owner, _, name = absolute_import(target, path, model.root).rpartition(".")
        module = model._module(path, owner) if owner else None
        return None if module is None else (module, name)

    def _entries_of(self, home: Home) -> List["Node"]:
        found = self._entries.get(home)
        if found is None:
            found = self._find_entries(home)
            if self._model._restrict is None:  # an answer under the restriction may widen later
                self._entries[home] = found
        return found

    def _find_entries(self, home: Home) -> List["Node"]:
        """The definitions decorated by ``@NAME.<anything>`` in the registry's module and
        in the modules that import it, ``NAME`` standing for the registry there."""
        module, name = home
        model = self._model
        model.sought.setdefault(module, set()).add(name)  # read in bytes the model may not summarise
        if name not in self._top_names(module):
            return []  # no module-level object of that name: a class, a function, a module
        found: Dict["Node", None] = {}  # in order, once each
        definitions = 0
        mark = re.compile(rb"@(?:\w+\.)*" + re.escape(name.encode()) + rb"\.")
        for other in [module, *model._importers(module)]:
            model.sought.setdefault(other, set()).add(name)
            if not mark.search(model._read(other) or b""):
                continue  # no decorator names it here
            restrict = model._restrict
            if restrict is not None and other not in restrict and other not in model._summaries:
                continue
            summary = model.summary(other)
            for decorator, names in sorted(summary.decorated.items()):
                owner, _, _ = decorator.rpartition(".")
                if owner and self._names(other, owner) == home:
                    for entry in names[:MAX_ENTRIES - definitions]:
                        found.update(dict.fromkeys(model._local(other, entry)))
                    definitions += len(names)
            if definitions >= MAX_ENTRIES:
                break
        return list(found)

    def _top_names(self, path: str) -> FrozenSet[str]:
        """The names ``path`` binds by an assignment at its top level (read once)."""
        found = self._assigned.get(path)
        if found is None:
            found = self._assigned[path] = top_level_names(self._model._read(path) or b"")
        return found

    def _names(self, path: str, written: str) -> Optional[Home]:
        """The registry a decorator's owner names: ``BACKBONES`` or ``builder.BACKBONES``."""
        head, _, rest = written.partition(".")
        if not rest:
            return self._home(path, head)
        target = self._model.summary(path).imports.get(head)
        if target is None:
            return None
        module = self._model._module(path, target)
        owner, _, name = rest.rpartition(".")
        if module is None or owner:
            return None
        return (module, name)


#: ``NAME = ...`` or ``NAME: T = ...`` at the start of a line: a name the module binds
_TOP_ASSIGNMENT = re.compile(rb"^([A-Za-z_]\w*)[ \t]*(?::[^=\n]*)?=(?!=)", re.M)


def top_level_names(raw: bytes) -> FrozenSet[str]:
    """The names a module's bytes bind by an assignment at the start of a line."""
    return frozenset(m.group(1).decode("ascii", "replace") for m in _TOP_ASSIGNMENT.finditer(raw))
