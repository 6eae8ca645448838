"""A bounded call string for the arguments a call passes on: ``unet_2d(...,
output_activation="Softmax")`` calling ``CONV_output(X, activation=output_activation)``
in another module passes ``CONV_output`` what ``unet_2d``'s own calls pass it, or its
default where a call leaves it out or nobody in the project calls it (a library's
public function: its users call it with its defaults).

A parameter's values are the join over every call that reaches it: a literal at the
call, the default where the call leaves it out, and, where the call hands on a
parameter of its own function (``_body(x, activation)`` inside ``build(activation=
"softmax")``), that parameter's values in turn, up to ``_MAX_DEPTH`` functions up; where
it hands on a name unpacked from another call's returned tuple (``strategy, dtype =
configure(args)``), the literals that element holds (:mod:`returned_values`).
They are read from the summaries alone; anything else (a deeper chain, ``*args``, a
value computed at run time, a name rebound before the call) leaves the slot unknown,
and rules stay silent on it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Dict, List, Optional, Set, Tuple

from mplint.run.returned_values import part_values
from mplint.run.summaries import PARAM, UNKNOWN, FunctionSummary, split_part
from mplint.semantic.visibility import is_private_name

if TYPE_CHECKING:
    from mplint.run.program import ProgramModel

#: how many values one forwarded slot may take before it is unknown
_MAX_VALUES = 4
#: how many calls of the passing function are read before its parameter is unknown
_MAX_CALLS = 32
#: how many functions up a parameter handed on from parameter to parameter is followed
_MAX_DEPTH = 3


#: (caller path, caller function, callee as written, slots) of one call
IncomingCall = Tuple[str, str, str, Dict[str, str]]


def handed_parameter(function: FunctionSummary, callee: str, slot: str) -> Optional[str]:
    """The parameter of ``function`` that its call ``callee(...)`` hands on in ``slot``
    (``_body(x, activation)``), when that is all the slot may hold; None when it is
    rebound before the call, computed, or not a parameter."""
    origins = {o for c, s, o in function.passes if c == callee and s == slot}
    if len(origins) != 1 or not next(iter(origins)).startswith(PARAM):
        return None
    return next(iter(origins))[len(PARAM):]


class ForwardedArguments:
    """Expands a call's slots whose argument is a parameter of the calling function."""

    def __init__(self, model: "ProgramModel") -> None:
        self._model = model
        self._calls: Optional[Dict[str, List[tuple]]] = None  # spelled name -> (path, function, callee, slots)
        self._values: Dict[tuple, Optional[Set[str]]] = {}

    def expand(self, path: str, name: str, function: FunctionSummary, callee: str,
               slots: Dict[str, str]) -> List[Dict[str, str]]:
        """The call's sites, one per value each forwarded parameter may hold."""
        sites = [slots]
        for slot, value in slots.items():
            if value != UNKNOWN or slot == "*" or slot == "**":
                continue
            param = handed_parameter(function, callee, slot)
            values = self._unpacked(path, name, function, callee, slot) if param is None \
                else self._param_values(path, name, function, param, 1)
            if values is None:
                continue
            sites = [{**site, slot: v} for site in sites for v in sorted(values)]
        return sites

    def _param_values(self, path: str, name: str, function: FunctionSummary, param: str,
                      depth: int) -> Optional[Set[str]]:
        """The values ``param`` of ``function`` takes, ``depth`` functions up the chain
        (None: unknown)."""
        key = (path, name, param, depth)
        if key not in self._values:
            self._values[key] = None  # in progress: a recursive chain is unknown
            self._values[key] = self._read(path, name, function, param, depth)
        return self._values[key]

    def _read(self, path: str, name: str, function: FunctionSummary, param: str, depth: int) -> Optional[Set[str]]:
        default = function.defaults.get(param)
        calls = self._incoming(path, name)
        if calls is None:
            return None
        if not calls:  # nobody in the project calls it: a public function runs with its defaults
            private = any(is_private_name(part) for part in name.split("."))
            return None if private or default is None else {default}
        out: Set[str] = set()
        index = str(function.params.index(param)) if param in function.params else None
        for caller, caller_function, callee, slots in calls:
            slot = index if index is not None and index in slots else param
            written = slots.get(slot)
            if written is None:
                if "*" in slots:
                    return None  # ``*args``/``**kwargs`` may hold it
                written = default
            if written == UNKNOWN:
                handed = self._handed_on(caller, caller_function, callee, slot, depth)
                if handed is None:
                    return None
                out |= handed
                continue
            if written is None:
                return None
            out.add(written)
        return out if len(out) <= _MAX_VALUES else None

    def _handed_on(self, path: str, name: str, callee: str, slot: str, depth: int) -> Optional[Set[str]]:
        """The values of the caller's own parameter that a call hands on in ``slot``
        (``_body(x, activation)``), when that is all the slot may hold."""
        function = self._model.summary(path).functions.get(name)
        if function is None or depth >= _MAX_DEPTH:
            return None
        param = handed_parameter(function, callee, slot)
        if param is None:
            return self._unpacked(path, name, function, callee, slot)
        return self._param_values(path, name, function, param, depth + 1)

    def _unpacked(self, path: str, name: str, function: FunctionSummary, callee: str,
                  slot: str) -> Optional[Set[str]]:
        """The literals a call hands on in ``slot`` when its argument is a name unpacked
        from another call's returned tuple (``strategy, dtype = configure(args)`` then
        ``build(dtype=dtype)``; :mod:`returned_values`)."""
        origins = {o for c, s, o in function.passes if c == callee and s == slot}
        if len(origins) != 1:
            return None
        made, index = split_part(next(iter(origins)))
        if index is None or made == UNKNOWN or made.startswith(PARAM):
            return None
        return part_values(self._model, path, name, made, index)

    def _incoming(self, path: str, name: str) -> Optional[List[IncomingCall]]:
        """(caller path, caller function, callee as written, slots) of every call of the
        function in the summarised code, None when too many."""
        parts = name.split(".")
        spelled = parts[-2] if parts[-1] == "__init__" and len(parts) > 1 else parts[-1]
        found: List[IncomingCall] = []
        for caller, function, callee, slots in self._by_name().get(spelled, []):
            if (path, name) in self._model.call_targets(caller, function, callee):
                found.append((caller, function, callee, slots))
                if len(found) > _MAX_CALLS:
                    return None
        return found

    def _by_name(self) -> Dict[str, List[tuple]]:
        if self._calls is None:
            self._calls = {}
            for caller in sorted(self._model.summaries()):
                for function, summary in self._model.summary(caller).functions.items():
                    for _, callee, slots in summary.arguments:
                        self._calls.setdefault(callee.rsplit(".", 1)[-1], []).append((caller, function, callee, slots))
        return self._calls
