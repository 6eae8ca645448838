"""Which methods of a plain class run under the policy that governs its construction.

A Keras layer or model captures the policy when it is built and runs it whenever any
of its methods runs, so building one on a governed path governs all its methods. A
plain class (no base but ``object``, ``abc.ABC`` or other plain classes of the project)
captures nothing: ``ModelInterface(cfg)`` built in ``main()`` under ``mixed_float16``
runs its ``__init__`` there, but its ``export()`` runs only where someone calls it, and
a program that sets no policy (``predict.py``) may be the only one that does. So
building a plain class governs what Python runs by itself (``__init__`` and the other
dunder methods: ``obj(x)``, ``with obj:``, iteration), and each other method waits until
governed code calls a method of that name on a receiver the model cannot name
(``model.export()`` where ``model`` is what a factory returned). A call the model
resolves (``v = Cls(); v.fit()``, ``self.x.fit()``) is an edge of its own.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Dict, List, Optional, Tuple

from mplint.run.summaries import IMPORT, METHOD, REGISTRY
from mplint.semantic.vocabulary import PLAIN_BASE_CLASSES

if TYPE_CHECKING:
    from mplint.run.program import Node, ProgramModel, Route


def is_dunder(name: str) -> bool:
    """``__init__``, ``__call__``: a method Python runs by itself, not by its name."""
    return len(name) > 4 and name.startswith("__") and name.endswith("__")


def method_name(callee: str) -> str:
    """The method a call written ``callee`` names (``fit`` of ``model.fit``, ``Cls#fit``)."""
    return callee.rpartition(METHOD)[2].rpartition(".")[2]


def names_a_method(callee: str) -> bool:
    """``model.fit``, ``self.model.export``: a call on a receiver (not an import, a
    registry or ``super()``)."""
    return ("." in callee or METHOD in callee) and not callee.startswith(IMPORT) \
        and not callee.endswith(REGISTRY) and not callee.startswith("super" + METHOD)


class InstanceMethods:
    """The plain classes the spread builds and the method names governed code calls,
    per policy (one per :meth:`ProgramModel.build`)."""

    def __init__(self, model: "ProgramModel") -> None:
        self._model = model
        self._plain: Dict["Node", bool] = {}
        #: policy -> method name governed code calls on a receiver it cannot resolve ->
        #: the route to the first such caller
        self._called: Dict[str, Dict[str, "Route"]] = {}
        #: (policy, method name) -> methods of plain classes built under it, waiting
        self._waiting: Dict[Tuple[str, str], List["Node"]] = {}
        #: (policy, method name) -> the classes whose governed methods call it on ``self``,
        #: with the route to the first such call (:meth:`dispatched`)
        self._self_called: Dict[Tuple[str, str], Dict["Node", "Route"]] = {}

    def is_plain(self, cls: "Node") -> bool:
        """A class whose every base (through the project's classes) is ``object`` or a
        base that adds no behaviour; a class with a base the model cannot see (a Keras
        layer, a third-party base) is not."""
        if cls not in self._plain:
            self._plain[cls] = True  # a base cycle: judged by the rest
            self._plain[cls] = self._plain_bases(cls)
        return self._plain[cls]

    def _plain_bases(self, cls: "Node") -> bool:
        model = self._model
        for owner in model._bases(cls):
            summary = model.summary(owner[0])
            info = summary.classes.get(owner[1])
            for base in info.bases if info is not None else ():
                head, _, rest = base.partition(".")
                imported = summary.imports.get(head)
                full = base if imported is None else imported + ("." + rest if rest else "")
                if base == "object" or full in PLAIN_BASE_CLASSES:
                    continue
                found = model._class(owner[0], base)
                if found is None or not self.is_plain(found):
                    return False
        return True

    def built(self, path: str, callee: str, targets: List["Node"]) -> Tuple[List["Node"], List["Node"]]:
        """Split what a call written ``callee`` in ``path`` runs into what runs now and
        the methods of a plain class it builds that wait for a call by name."""
        if not targets or callee.startswith(IMPORT) or METHOD in callee or callee.endswith(REGISTRY):
            return targets, []
        cls = self._model._class(path, callee)
        if cls is None or not self.is_plain(cls) or set(targets) != set(self._model._class_nodes(cls)):
            return targets, []
        now = [t for t in targets if is_dunder(t[1].rpartition(".")[2])]
        return now, [t for t in targets if not is_dunder(t[1].rpartition(".")[2])]

    def offer(self, method: "Node", policy: str) -> "Optional[Route]":
        """A method of a plain class built under ``policy``: the route of the governed
        code that already called a method of its name (govern it through that call),
        else None, and it waits for such a call."""
        name = method[1].rpartition(".")[2]
        caller = self._called.get(policy, {}).get(name)
        if caller is None:
            caller = self._dispatching(method, policy, name)
        if caller is None:
            self._waiting.setdefault((policy, name), []).append(method)
        return caller

    def dispatched(self, owner: "Node", name: str, policy: str, caller: "Route") -> List["Node"]:
        """Governed code of a method of the class ``owner`` (reached by ``caller``) calls
        ``self.<name>()``: on an instance of a subclass built under ``policy`` that runs
        the subclass's own ``name`` (virtual dispatch), so the methods of that name
        waiting under ``policy`` whose class derives from ``owner`` are governed through
        that call; a subclass built later is governed when it is offered."""
        self._self_called.setdefault((policy, name), {}).setdefault(owner, caller)
        waiting = self._waiting.get((policy, name), [])
        released = [m for m in waiting if self._derives(m, owner)]
        if released:
            self._waiting[(policy, name)] = [m for m in waiting if m not in released]
        return released

    def _dispatching(self, method: "Node", policy: str, name: str) -> "Optional[Route]":
        """The route of a governed ``self.<name>()`` call in a base class of the method's
        class (see :meth:`dispatched`), else None."""
        for owner, route in self._self_called.get((policy, name), {}).items():
            if self._derives(method, owner):
                return route
        return None

    def _derives(self, method: "Node", owner: "Node") -> bool:
        """The class of ``method`` (``(path, "Cls.m")``) is ``owner`` or derives from it
        through the project's classes."""
        cls = (method[0], method[1].rsplit(".", 1)[0])
        return owner in self._model._bases(cls)

    def called(self, name: str, policy: str, caller: "Route") -> List["Node"]:
        """Governed code (reached by ``caller``) calls a method ``name`` on a receiver
        it cannot resolve: the methods of that name waiting under ``policy``, to govern
        through that call."""
        self._called.setdefault(policy, {}).setdefault(name, caller)
        return self._waiting.pop((policy, name), [])
