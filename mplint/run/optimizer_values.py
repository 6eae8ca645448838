"""Optimizers across modules: what a project's optimizer factories return, and what
the code that calls a training function passes for its optimizer parameter.

A training loop in ``trainer.py`` applies gradients with an optimizer that
``optimizers.make_optimizer(cfg)`` made in another module, or that a script passed
to ``train(model, opt)``. Within one file that value cannot be followed; with the
program model's summaries it can: a function whose every ``return`` is a Keras
optimizer constructor (``plain``), a ``LossScaleOptimizer(...)`` (``lso``) or another
such factory, and a parameter whose every argument, at every call site in the
summarised code, is one of those. Anything else (a parameter returned, an
expression, ``*args``, a TF1 optimizer) leaves the value unknown, and the
loss-scaling rules stay silent on it.
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Dict, FrozenSet, List, Optional, Set, Tuple

from mplint.run.summaries import (
    BODY, IMPORT, METHOD, PARAM, PART, UNKNOWN, FunctionSummary, returned_part, split_part,
)
from mplint.semantic.vocabulary import (
    DISTRIBUTED_OPTIMIZERS, DISTRIBUTED_TAPES, LOSS_SCALE_OPTIMIZERS, is_optimizer_class, is_optimizer_constructor,
)

if TYPE_CHECKING:  # pragma: no cover
    from mplint.run.program import Node, ProgramModel

#: the origin kinds of ``analysis.training`` (PLAIN, LSO): a test holds them equal
PLAIN, LSO = "plain", "lso"
#: a "kind" that says the call *is* an API call: API + its canonical name, for a project
#: function that hands its arguments on to a wrapper of the vocabulary and returns what
#: it makes (``dmp.DistributedGradientTape(tape)`` returning ``hvd.DistributedGradientTape(*args)``)
API = "api:"
#: the vocabulary's wrappers a project function may stand for (they wrap their first argument)
FORWARDED_APIS = DISTRIBUTED_OPTIMIZERS | DISTRIBUTED_TAPES
#: how an optimizer factory's name reads (``make_optimizer``, ``get_opt``, ``build_optim``),
#: or a tape wrapper's: only such calls are followed into other modules, which keeps the model cheap
_NAMES_AN_OPTIMIZER = re.compile(r"opt|tape", re.IGNORECASE)
#: words of every optimizer update (``apply_gradients``, Keras 3's ``apply``, ``minimize``)
_APPLY_WORDS = (b"apply_gradients", b".apply(", b"minimize(")
_MAX_DEPTH = 8
#: how many functions up an optimizer handed on from parameter to parameter is followed
_MAX_PARAM_DEPTH = 3

Kinds = FrozenSet[str]
#: what a call site's literal arguments make of a factory's parameters: (parameter, truth)
Truths = FrozenSet[Tuple[str, bool]]


def applies_gradients(raw: bytes) -> bool:
    """Whether a module's bytes may update a model with an optimizer (where an
    optimizer's kind matters)."""
    return any(word in raw for word in _APPLY_WORDS)


def judges_optimizers(raw: bytes) -> bool:
    """Whether a module's bytes may use an optimizer's kind: to update a model, or to
    wrap it in a LossScaleOptimizer (``LossScaleOptimizer(make_optimizer())`` wraps
    twice when the factory wrapped it already)."""
    return applies_gradients(raw) or b"LossScaleOptimizer" in raw


class OptimizerValues:
    """Optimizer kinds of factory calls and of parameters, for the governed files."""

    def __init__(self, model: "ProgramModel") -> None:
        self.model = model
        self._returns: Dict[Tuple["Node", Optional[int], Truths], Optional[Tuple[Kinds, FrozenSet[str]]]] = {}
        self._params: Dict[Tuple["Node", int], Optional[Dict[str, Kinds]]] = {}

    def factories(self, path: str) -> Dict[str, List[str]]:
        """Callee as written in ``path`` -> the kinds of optimizer its call returns, for
        calls of project functions whose every return is known."""
        found: Dict[str, Optional[Kinds]] = {}
        for name, function in self.model.summary(path).functions.items():
            for line, callee in function.calls:
                if callee.startswith(IMPORT) or METHOD in callee or not _NAMES_AN_OPTIMIZER.search(callee):
                    continue
                truths = self._site_truths(path, name, (path, line), callee)
                kinds = self._project_call(path, name, callee, 0, truths) or self._forwarded(path, name, callee)
                if kinds is None:
                    continue
                if found.get(callee, kinds) != kinds:
                    found[callee] = None  # the same spelling means two things here
                else:
                    found[callee] = kinds
        return {callee: sorted(kinds) for callee, kinds in found.items() if kinds}

    def parameters(self, paths: Set[str]) -> Dict[str, Dict[str, Dict[str, List[str]]]]:
        """path -> function -> parameter -> the optimizer kinds every call site in the
        summarised code passes for it (functions of ``paths``); ``param@1``: element 1 of
        the tuple or list every call passes for it (``Trainer(model, (opt_g, opt_d))``)."""
        found: Dict[str, Dict[str, Dict[str, List[str]]]] = {}
        for path in sorted(paths):
            for name, function in self.model.summary(path).functions.items():
                for param, kinds in (self._parameter_kinds((path, name), 0) or {}).items():
                    if kinds:
                        found.setdefault(path, {}).setdefault(name, {})[param] = sorted(kinds)
        return found

    def _site_truths(self, path: str, function: str, site: Tuple[str, int], callee: str) -> Truths:
        """The truth of each parameter of the one function ``callee`` names that the call
        at ``site`` decides: a literal argument (or a constant of another module), else
        the parameter's literal default. Empty when the call spreads ``*args``/``**kwargs``."""
        nodes = [n for n in self.model._resolve(path, function, callee) if n[1] != BODY]
        caller = self.model.summary(path).functions.get(function)
        target = self.model.summary(nodes[0][0]).functions.get(nodes[0][1]) if len(nodes) == 1 else None
        if target is None or caller is None or not target.return_terms:
            return frozenset()
        slots = self.model._site_slots(caller, site, callee)
        if slots is None or "*" in slots:
            return frozenset()
        found: Set[Tuple[str, bool]] = set()
        for param in {p for _, guards in target.return_terms for p, _ in guards}:
            position = str(target.params.index(param)) if param in target.params else None
            value = slots.get(position, UNKNOWN) if position in slots else \
                slots.get(param, target.defaults.get(param, UNKNOWN))
            if value != UNKNOWN:
                found.add((param, bool(json.loads(value))))
        return frozenset(found)

    def _parameter_kinds(self, node: "Node", depth: int) -> Optional[Dict[str, Kinds]]:
        """Parameter -> the optimizer kinds every call of the function passes for it,
        for the parameters every call passes a known optimizer; an argument that is a
        parameter of the calling function (``train(model, opt)`` calling
        ``generator_step(model, opt, x)`` in another module) takes that parameter's
        kinds in turn, up to ``_MAX_PARAM_DEPTH`` functions up. None: a call with
        ``*args``/``**kwargs`` (or the chain too deep or recursive)."""
        key = (node, depth)
        if key in self._params:
            return self._params[key]
        self._params[key] = None  # in progress: a recursive chain is unknown
        function = self.model.summary(node[0]).functions.get(node[1])
        if function is None or not function.params or depth > _MAX_PARAM_DEPTH:
            return None
        sites: Dict[str, List[Optional[Kinds]]] = {}
        for slot, caller, caller_function, argument in self.model.call_sites(node):
            if slot == "*":
                return None
            slot, index = split_part(slot)  # ``2@1``: element 1 of a tuple passed for the third
            param = function.params[int(slot)] if slot.isdigit() and int(slot) < len(function.params) else slot
            if index is not None:
                if param not in function.params:
                    continue
                param = f"{param}{PART}{index}"
            elif self._round_trip(node, param, argument):
                continue  # ``self.compile(opt=self.opt)``: the value compile() stored, handed back
            sites.setdefault(param, []).append(self._argument_kinds(caller, caller_function, argument, depth))
        out: Dict[str, Kinds] = {}
        for param, every in sites.items():
            whole, index = split_part(param)
            if index is not None and whole in sites:
                continue  # some call passes the parameter as something else than a tuple written out
            if whole in function.params and every and all(kinds is not None for kinds in every):
                out[param] = frozenset().union(*[kinds for kinds in every if kinds is not None])
        self._params[key] = out
        return out

    def _round_trip(self, node: "Node", param: str, argument: str) -> bool:
        """The argument is the attribute the method itself stores the parameter in
        (``compile_from_config`` calling ``self.compile(critic_optimizer=self.critic_optimizer)``
        where ``compile`` does ``self.critic_optimizer = critic_optimizer``): it adds no
        value the other calls do not pass. ``argument`` is ``self.x`` only for a call of
        a method of the same object (``summaries.FunctionSummary.passes``)."""
        if not argument.startswith("self.") or "." not in node[1]:
            return False
        info = self.model.summary(node[0]).classes.get(node[1].rsplit(".", 1)[0])
        return info is not None and info.sources.get(argument[len("self."):]) == PARAM + param

    def _argument_kinds(self, path: str, function: str, argument: str, depth: int) -> Optional[Kinds]:
        """The kinds of one argument a call in ``function`` passes: a call's result, or
        the calling function's own parameter's kinds."""
        if argument == UNKNOWN or argument.startswith("self."):
            return None
        if argument.startswith(PARAM):
            if depth >= _MAX_PARAM_DEPTH:
                return None
            caller = self._parameter_kinds((path, function), depth + 1)
            return None if caller is None else caller.get(argument[len(PARAM):])
        return self._written(path, function, argument, 0)

    def _forwarded(self, path: str, function: str, written: str) -> Optional[Kinds]:
        """{API + name} when the call ``written(...)`` runs one project function that
        returns a call of a vocabulary wrapper (``FORWARDED_APIS``) given the function's
        own first argument, or all of them (``def DistributedOptimizer(*args, **kwargs):
        opt = hvd.DistributedOptimizer(*args, **kwargs); ...; return opt``)."""
        nodes = [n for n in self.model._resolve(path, function, written) if n[1] != BODY]
        if len(nodes) != 1 or self.model._class(path, written) is not None:
            return None
        callee = self.model.summary(nodes[0][0]).functions.get(nodes[0][1])
        if callee is None:
            return None
        found: Set[str] = set()
        # Only a wrapper's own returns and UNKNOWN ones (a nested helper's, which the
        # summary counts too); a parameter handed back or another callee: not a wrapper.
        for returned in callee.returns:
            if returned == UNKNOWN:
                continue
            name = self._canonical(nodes[0][0], returned)
            if name is None or name not in FORWARDED_APIS or not _forwards(callee, returned):
                return None
            found.add(name)
        return frozenset({API + found.pop()}) if len(found) == 1 else None

    # -- kinds -------------------------------------------------------------------------
    def _written(self, path: str, function: str, written: str, depth: int) -> Optional[Kinds]:
        """The kinds a call written ``written(...)`` in ``function`` of ``path`` returns."""
        name = self._canonical(path, written)
        if name is not None:
            if name in LOSS_SCALE_OPTIMIZERS:
                return frozenset({LSO})
            if name in DISTRIBUTED_OPTIMIZERS:
                return None  # as the optimizer it wraps: not followed here
            if is_optimizer_constructor(name):
                return frozenset({PLAIN})
        return self._project_call(path, function, written, depth)

    def _project_call(self, path: str, function: str, written: str, depth: int,
                      truths: Truths = frozenset()) -> Optional[Kinds]:
        """The kinds a call ``written(...)`` in ``function`` returns: its function's own
        returns, and for a parameter it returns (``configure(opt)`` wrapping ``opt`` or
        handing it back), what this function passes for it: what it was passed in
        turn, when that is this function's own parameter. ``written`` may name a part
        of the result (``load_state@2`` for ``model, opt = load_state(model, opt)``).
        ``truths``: what the call's literal arguments make of the callee's parameters (a
        ``return`` whose ``if`` tests they contradict does not run)."""
        written, index = split_part(written)
        cls = self.model._class(path, written) if index is None else None
        if cls is not None:
            return self._class_kinds(cls)
        nodes = [n for n in self.model._resolve(path, function, written) if n[1] != BODY]
        if len(nodes) != 1 or depth > _MAX_DEPTH:
            return None
        if index is None:
            keyed = self._keyed(nodes[0], path, function, written, depth)
            if keyed is not None:
                return keyed
        found = self._returned(nodes[0], depth + 1, index, truths)
        if found is None:
            return None
        kinds, params = found
        out = set(kinds)
        callee = self.model.summary(nodes[0][0]).functions.get(nodes[0][1])
        caller = self.model.summary(path).functions.get(function)
        for param in params:
            if callee is None or caller is None or param not in callee.params:
                return None
            slots = (str(callee.params.index(param)), param)
            passed = [a for c, slot, a in caller.passes if c == written and slot in slots]
            if not passed or any(c == written and slot == "*" for c, slot, _ in caller.passes):
                return None
            for argument in passed:
                more = None if argument == UNKNOWN else self._argument_kinds(path, function, argument, depth + 1) \
                    if argument.startswith(PARAM) else self._written(path, function, argument, depth + 1)
                if more is None:
                    return None
                out |= more
        return frozenset(out)

    def _keyed(self, node: "Node", path: str, function: str, written: str, depth: int) -> Optional[Kinds]:
        """The kinds a call of a registry getter returns (``def get(name, lr): return
        REGISTRY[name](lr)``, its one return) where every call of it in ``function``
        passes a string literal for the key: the entries of those keys, as written in the
        registry's module. None when any key is not a literal or not in the registry."""
        callee = self.model.summary(node[0]).functions.get(node[1])
        caller = self.model.summary(path).functions.get(function)
        if callee is None or caller is None or len(callee.keyed_returns) != 1 or len(callee.returns) != 1:
            return None
        registry, param = callee.keyed_returns[0]
        entries = self.model.summary(node[0]).keyed.get(registry)
        sites = [slots for _, c, slots in caller.arguments if c == written]
        if not entries or not sites or param not in callee.params:
            return None
        out: Set[str] = set()
        for slots in sites:
            key = _string_literal(slots.get(str(callee.params.index(param)), slots.get(param, UNKNOWN)))
            entry = entries.get(key) if key is not None else None
            kinds = None if entry is None else self._written(node[0], BODY, entry, depth + 1)
            if kinds is None:
                return None
            out |= kinds
        return frozenset(out)

    def _class_kinds(self, cls: "Node") -> Optional[Kinds]:
        """A project class: a plain optimizer when it derives from a Keras optimizer (a
        custom optimizer, ``class SGLD(keras.optimizers.Optimizer)``), a wrapped one when
        from a LossScaleOptimizer; None for any other class or a base not known."""
        found: Optional[Kinds] = None
        for owner in self.model._bases(cls):
            info = self.model.summary(owner[0]).classes.get(owner[1])
            for base in info.bases if info is not None else ():
                if self.model._class(owner[0], base) is not None:
                    continue  # a project class: its own bases are read in turn
                name = self._canonical(owner[0], base)
                if name is None or name == "object":
                    continue
                if name in LOSS_SCALE_OPTIMIZERS:
                    return frozenset({LSO})
                if not is_optimizer_class(name):
                    return None  # a mixin or a class of another library: not followed
                found = frozenset({PLAIN})
        return found

    def _returned(self, node: "Node", depth: int, index: Optional[int] = None,
                  truths: Truths = frozenset()) -> Optional[Tuple[Kinds, FrozenSet[str]]]:
        """The kinds a project function returns (element ``index`` of the tuple it
        returns, when given), and the parameters it returns as they came (None unless
        every other return is known); the returns ``truths`` rule out left out."""
        key = (node, index, truths)
        if key in self._returns:
            return self._returns[key]
        self._returns[key] = None  # in progress: recursion gives unknown
        function = self.model.summary(node[0]).functions.get(node[1])
        if function is None or depth > _MAX_DEPTH:
            return None
        returned = function.returns if index is None else returned_part(function, index)
        if not returned:
            return None
        if index is None and truths:
            returned = _running_returns(function, truths)
        out: Set[str] = set()
        params: Set[str] = set()
        for written in returned:
            if written.startswith(PARAM):
                params.add(written[len(PARAM):])
                continue
            kinds = None if written == UNKNOWN else self._written(node[0], node[1], written, depth)
            if kinds is None:
                return None
            out |= kinds
        self._returns[key] = (frozenset(out), frozenset(params))
        return self._returns[key]

    def _canonical(self, path: str, written: str) -> Optional[str]:
        """The canonical API name of a dotted name through the module's imports."""
        from mplint.semantic.names import canonical  # libcst comes with it: only when needed

        head, _, rest = written.partition(".")
        target = self.model.summary(path).imports.get(head)
        if target is None or target.startswith("."):
            return None
        return canonical(target + ("." + rest if rest else ""))


def _running_returns(function: FunctionSummary, truths: Truths) -> List[str]:
    """``function.returns`` less what only returns whose parameter tests ``truths``
    contradict give (``if scaled: return LossScaleOptimizer(opt)`` under ``scaled=False``)."""
    known = dict(truths)
    dropped: Dict[str, int] = {}
    for origins, guards in function.return_terms:
        if any(param in known and known[param] != truth for param, truth in guards):
            for origin in origins:
                dropped[origin] = dropped.get(origin, 0) + 1
    kept: List[str] = []
    for origin in function.returns:
        if dropped.get(origin, 0) > 0:
            dropped[origin] -= 1
        else:
            kept.append(origin)
    return kept


def _string_literal(text: str) -> Optional[str]:
    """The string a call-site slot holds (``FunctionSummary.arguments``: JSON, as
    ``summaries`` writes it, or UNKNOWN); None for anything else."""
    value = None if text == UNKNOWN else json.loads(text)
    return value if isinstance(value, str) else None


def _forwards(function: FunctionSummary, callee: str) -> bool:
    """The function hands its arguments to ``callee``: all of them (``*args`` of a
    function with no named positional parameter), or its first parameter as the first."""
    passed = [(slot, argument) for c, slot, argument in function.passes if c == callee]
    if not function.params:
        return any(slot == "*" for slot, _ in passed)
    return ("0", PARAM + function.params[0]) in passed
