"""The literal values the elements of a function's returned tuple hold, as a summary
notes them, and what a caller's name unpacked from such a call holds.

``strategy, dtype = configure_environment(args)`` then ``build(hparams, dtype=dtype)``:
``build`` is called with the second element of what ``configure_environment`` returns.
Where every ``return`` of it writes out a tuple whose element there is a string, a
number, ``None`` or a float dtype (``tf.float16``), or a local name bound only to those
(``dtype = tf.float16``, also ``x if t else y`` of them: both values), the caller's
argument holds those values, one call site each (``forwarded_arguments``). Anything
else (a parameter, a name bound by a loop or a call, returns of different lengths)
leaves it unknown, and rules stay silent.
"""

from __future__ import annotations

import ast
import json
from typing import TYPE_CHECKING, Any, Dict, List, Mapping, Optional, Sequence, Set

from mplint.run.dotted import dotted

if TYPE_CHECKING:  # pragma: no cover
    from mplint.run.program import ProgramModel
    from mplint.run.summaries import FunctionSummary

#: how many values one element may hold before it is unknown
_MAX_VALUES = 4


def element_values(element: ast.AST, assigns: Sequence[Any], stores: Mapping[str, int], params: Sequence[str],
                   dtypes: Mapping[str, str], truths: Optional[Mapping[str, bool]] = None) -> List[str]:
    """The JSON literals one element of a returned tuple may hold; [] when unknown.
    ``stores``: how often each name is bound in the function (every kind of binding);
    ``truths``: the parameters whose truth decides the mixed policy the function sets
    (:func:`policy_truths`): ``x if p else y`` holds the arm that runs with it."""
    truths = truths or {}
    if isinstance(element, ast.Name) and dotted(element) not in dtypes:
        name = element.id
        if name in params:
            return []
        bound = [node.value for node in assigns if isinstance(node, ast.Assign) and len(node.targets) == 1
                 and isinstance(node.targets[0], ast.Name) and node.targets[0].id == name]
        if not bound or len(bound) != stores.get(name, 0):
            return []  # bound by a loop, an unpacking, ``with ... as``, or not here at all
        found: Set[str] = set()
        for value in bound:
            values = _literal_values(value, dtypes, truths)
            if not values:
                return []
            found.update(values)
        return sorted(found) if len(found) <= _MAX_VALUES else []
    return sorted(_literal_values(element, dtypes, truths))


def policy_truths(function: "FunctionSummary") -> Dict[str, bool]:
    """Parameter -> the truth it needs for the function to set its mixed policy, where one
    parameter alone decides every set (``if fp16_run: set_policy(Policy("mixed_float16"))``):
    what the function returns beside is judged under that policy, as the code it governs
    is (``dtype = tf.float16 if fp16_run else tf.float32``: float16). Empty otherwise (a
    set of a policy named by a parameter, of a non-mixed literal, or under two tests)."""
    if not function.set_terms or len(function.set_terms) != len(function.sets):
        return {}
    policies = dict(function.sets)
    found: Dict[str, bool] = {}
    for line, param, guards in function.set_terms:
        policy = policies.get(line)
        if param or len(guards) != 1 or (policy is not None and not policy.startswith("mixed")):
            return {}
        name, truth = guards[0]
        if found.get(name, truth) != truth:
            return {}
        found[name] = truth
    return found if len(found) == 1 else {}


def _literal_values(value: ast.AST, dtypes: Mapping[str, str], truths: Mapping[str, bool]) -> Set[str]:
    """A literal, a float dtype's name, or ``a if t else b`` of them: their JSON; else empty.
    ``t`` a parameter of ``truths`` (``p`` or ``not p``): only the arm that runs with it."""
    if isinstance(value, ast.IfExp):
        test, wanted = value.test, True
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            test, wanted = test.operand, False
        if isinstance(test, ast.Name) and test.id in truths:
            arm = value.body if truths[test.id] == wanted else value.orelse
            return _literal_values(arm, dtypes, truths)
        body, orelse = _literal_values(value.body, dtypes, truths), _literal_values(value.orelse, dtypes, truths)
        return body | orelse if body and orelse else set()
    written = dotted(value) if isinstance(value, (ast.Name, ast.Attribute)) else None
    if written is not None and written in dtypes:
        return {json.dumps(dtypes[written])}
    if isinstance(value, ast.Constant) and (value.value is None or isinstance(value.value, (str, int, float))):
        return {json.dumps(value.value)}
    return set()


def part_values(model: "ProgramModel", path: str, function: str, made: str, index: int) -> Optional[Set[str]]:
    """The literals element ``index`` of what the call written ``made`` in ``function`` of
    ``path`` returns may hold, over every function it may run; None when unknown."""
    targets = model.call_targets(path, function, made)
    if not targets:
        return None
    out: Set[str] = set()
    for target_path, name in targets:
        summary: Optional["FunctionSummary"] = model.summary(target_path).functions.get(name)
        if summary is None or not summary.part_values:
            return None
        lengths = {len(parts) for parts in summary.part_values}
        if len(lengths) != 1 or not 0 <= index < lengths.pop():
            return None
        for parts in summary.part_values:
            if not parts[index]:
                return None
            out.update(parts[index])
    return out if len(out) <= _MAX_VALUES else None


def element_stores(names: Sequence[ast.Name]) -> Dict[str, int]:
    """How often each name is bound in some code (``ast.Store`` contexts)."""
    counts: Dict[str, int] = {}
    for name in names:
        if isinstance(name.ctx, ast.Store):
            counts[name.id] = counts.get(name.id, 0) + 1
    return counts
