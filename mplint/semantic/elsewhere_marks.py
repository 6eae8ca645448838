"""How the program model's summaries (``run.summaries``) write the arguments that calls
in other modules pass, as the evaluator reads them (``ModuleFacts.project_arguments``)."""

from typing import Optional, Tuple

#: an argument that is not a literal
ELSEWHERE_UNKNOWN = "?"
#: a call that spreads ``**kwargs`` (no ``*args``)
KEYWORD_SPREAD = "**"
#: before a slot: the object the argument builds, a construction of a project class with
#: literal arguments (``build(ModelConfig(units=64))``): JSON ``[module path relative to
#: the root, class name, {slot: JSON literal or ELSEWHERE_UNKNOWN}]``, or a name another
#: module binds at its top level (``build(CFG)``): ``[module path, name]``; the slot itself
#: stays ELSEWHERE_UNKNOWN for every other reader
CONSTRUCTION = "="
#: where the call is written: ``folder/caller.py:42``, relative to the project root
#: (the tensor analysis judges the argument there: ``analysis.tensor_callers``); not a slot
CALLER_AT = "@"
#: between a call's place and the attribute it is spelled by, for a call of a callable
#: the caller's class picked by name (``self._gate(x)``: ``caller.py:42|_gate``)
_SPELLED = "|"


def caller_at(path: str, line: int, spelled: Optional[str] = None) -> str:
    """The CALLER_AT mark of a call written at ``path:line``; ``spelled``: the attribute it
    calls when that is not the callee's own name (``run.picked_callables``)."""
    return f"{path}:{line}" + (_SPELLED + spelled if spelled else "")


def read_caller_at(at: str) -> Tuple[str, Optional[int], Optional[str]]:
    """(path, line or None, the attribute spelled or None) of a CALLER_AT mark."""
    place, _, spelled = at.partition(_SPELLED)
    path, _, line = place.rpartition(":")
    return path, int(line) if line.isdigit() else None, spelled or None
