"""MP403: ``mixed_float16`` in a program that runs on TPUs."""

from __future__ import annotations

from typing import Dict, List, Optional, Set, Tuple

import libcst as cst

from mplint.analysis.imported_tpu import imported_tpu_helper
from mplint.rule.check import Check, Fix, Needs
from mplint.rule.levels import Safety
from mplint.semantic.call_args import UNREADABLE, argument_for, positional_or_keyword
from mplint.semantic.facts import PolicyCall, SwitchSite, sets_its_parameter
from mplint.semantic.scopes import Branches, Location, Scope, exclusive
from mplint.semantic.vocabulary import POLICY_CONSTRUCTORS


_ON_TPU = ("mixed_float16 in a program that uses a TPU (TPUStrategy/TPUClusterResolver): "
           "TPUs compute in bfloat16 and need no loss scaling; use 'mixed_bfloat16'")


class Float16OnTpu(Check):
    rule_id = "MP403"

    #: a policy call (the TPU may be used by a helper of another module, by any name)
    needs = Needs(policy_call=True)

    def __init__(self, ctx: object) -> None:
        super().__init__(ctx)  # type: ignore[arg-type]
        #: open ``try`` statements: [id, walking its handlers]
        self._tries: List[List[object]] = []
        #: call id -> (try id, in a handler) for every try holding the call
        self._in_try: Dict[int, Tuple[Tuple[int, bool], ...]] = {}
        #: ``helper(...)`` calls by name, to find where a helper that builds the TPU
        #: strategy runs (``if FLAGS.tpu: strategy = connect_to_tpu()``)
        self._calls: Dict[str, List[Tuple[cst.Call, Location]]] = {}
        #: ``try`` statements with an ``except``: a TPU looked for there may not be found
        self._probes: Set[int] = set()
        #: ``module.helper(...)`` calls: a helper of another module may use the TPU
        self._module_calls: List[Tuple[cst.Call, Location]] = []

    def visit_Try(self, node: cst.Try) -> None:
        self._tries.append([id(node), False])
        if node.handlers:
            self._probes.add(id(node))

    def leave_Try(self, node: cst.Try) -> None:
        self._tries.pop()

    def visit_ExceptHandler(self, node: cst.ExceptHandler) -> None:
        if self._tries:
            self._tries[-1][1] = True

    def visit_Call(self, node: cst.Call) -> None:
        if self._tries:
            self._in_try[id(node)] = tuple((int(t), bool(h)) for t, h in self._tries)  # type: ignore[call-overload]
        if isinstance(node.func, cst.Name):
            self._calls.setdefault(node.func.value, []).append((node, self.ctx.scopes.location()))
        elif isinstance(node.func, cst.Attribute) and isinstance(node.func.value, cst.Name):
            self._module_calls.append((node, self.ctx.scopes.location()))

    def _after_failed_probe(self, call: cst.CSTNode, tpu: cst.CSTNode) -> bool:
        """The policy is set in an ``except`` of the ``try`` that looks for the TPU:
        it runs only when there is none (``try: TPUClusterResolver() ... except:``)."""
        handlers = {t for t, handler in self._in_try.get(id(call), ()) if handler}
        return any(t in handlers for t, handler in self._in_try.get(id(tpu), ()) if not handler)

    def _tpu_arms(self, site: SwitchSite) -> List[Branches]:
        """The ``if`` arms under which a TPU use runs: its own, and where it sits in a
        helper of this file, those of every call of the helper (two levels up)."""
        out: List[Branches] = []
        work: List[Tuple[Location, Branches, int]] = [(site.location, site.branches, 0)]
        while work:
            loc, arms, depth = work.pop()
            scope: Optional[Scope] = loc.scope
            while scope is not None and scope.kind not in ("function", "module"):
                scope = scope.parent
            function = scope.node if scope is not None else None
            callers = []
            if depth < 3 and isinstance(function, cst.FunctionDef) and scope is not None \
                    and scope.parent is not None and scope.parent.kind != "class":
                callers = [where for call, where in self._calls.get(function.name.value, ())
                           if (b := where.lookup(function.name.value)) is not None and b.node is function]
            if not callers:
                out.append(arms)  # top-level code, a method, or a helper called from elsewhere
                continue
            for where in callers:
                work.append((where, where.branches + arms, depth + 1))
        return out

    def _tpu_sites(self) -> List[SwitchSite]:
        """The file's TPU uses: its own calls of the TPU APIs, and its calls of a
        function another module of the project defines that always makes one
        (``strategy = get_strategy(args.tpu)``), where the policy is set."""
        sites = list(self.facts.tpu_sites)
        if not self.facts.policy_calls:
            return sites
        calls = [c for found in self._calls.values() for c in found] + self._module_calls
        for call, where in calls:
            if imported_tpu_helper(self.ctx, call.func):
                sites.append(SwitchSite(call, where, "tpu", where.branches))
        return sites

    def finish(self) -> None:
        facts = self.facts
        if not facts.policy_calls:
            return
        tpu_sites = self._tpu_sites()
        if not tpu_sites:
            return
        if any(c.values is None for c in facts.policy_calls):
            return  # a policy chosen at run time: may follow the hardware
        tpus = [(tpu, arms) for tpu in tpu_sites for arms in self._tpu_arms(tpu)]
        #: where a bfloat16 policy is chosen (`'mixed_bfloat16' if tpu else ...` too)
        bfloat16 = [arms for c in facts.policy_calls for values, arms in c.choices() if "mixed_bfloat16" in values]
        for call in facts.policy_calls:
            sites = self._helper_sites(call)
            if sites:
                # A helper that sets the policy it is given: the call that gives it
                # mixed_float16 is what to change, not the helper every caller shares.
                for site, literal, arms in sites:
                    if self._with_tpu(call, arms, tpus, bfloat16) and not self._probed_all(call, arms, tpus):
                        self.report(site, _ON_TPU, self._literal_fix(literal))
                continue
            # Each value with the arms that choose it: `policy = Policy("mixed_bfloat16")`
            # in the TPU branch and `Policy("mixed_float16")` in the else are two choices.
            found = [tpu for values, arms in call.choices() if values == frozenset({"mixed_float16"})
                     for tpu in self._with_tpu(call, arms, tpus, bfloat16)]
            if not found:
                continue
            if all(self._probed(tpu) for tpu in found):
                # A TPU is used when one is found, else another strategy: float16 is
                # right on the GPUs, so the policy must follow the hardware, not swap.
                self.report(
                    call.node,
                    "mixed_float16 also where this program finds a TPU (it looks for one and falls back "
                    "to another strategy): TPUs compute in bfloat16 and need no loss scaling; choose "
                    "'mixed_bfloat16' when the TPU is found and 'mixed_float16' otherwise",
                    severity="warning",
                )
                continue
            self.report(call.node, _ON_TPU, self._fix(call.node))

    def _helper_sites(self, call: PolicyCall) -> List[Tuple[cst.Call, cst.BaseExpression, Branches]]:
        """For a set of the enclosing function's own parameter (``def setup(name):
        set_global_policy(name)``), each call of that function in this file that passes
        mixed_float16: the call, its argument and its ``if`` arms. Empty for any other set,
        or when the file never calls the helper (its callers are elsewhere)."""
        if not sets_its_parameter(call):
            return []
        function = call.location.scope.node
        value = call.node.args[0].value if call.node.args else None
        if not isinstance(function, cst.FunctionDef) or not isinstance(value, cst.Name):
            return []
        param = next((p for p in [*function.params.posonly_params, *function.params.params,
                                  *function.params.kwonly_params] if p.name.value == value.value), None)
        if param is None:
            return []
        found: List[Tuple[cst.Call, cst.BaseExpression, Branches]] = []
        for site, where in self._calls.get(function.name.value, ()):
            binding = where.lookup(function.name.value)
            if binding is None or binding.node is not function:
                continue
            given = argument_for(function, param, site)
            if given is UNREADABLE:
                return []  # a caller this file cannot read: the set itself stays judged
            argument = given if isinstance(given, cst.BaseExpression) else param.default
            if argument is not None and self.ctx.values.values(argument, where) == frozenset({"mixed_float16"}):
                found.append((site, argument, where.branches))
        return found

    def _probed_all(self, call: PolicyCall, arms: Branches, tpus: List[Tuple[SwitchSite, Branches]]) -> bool:
        """Every TPU use the call site runs with is a probe that falls back (MP403's
        other message, at the set): left to the set's own judgement."""
        return all(self._probed(tpu) for tpu in self._with_tpu(call, arms, tpus, []))

    def _probed(self, tpu: SwitchSite) -> bool:
        """The TPU use sits in the body of a ``try`` with an ``except``: a probe."""
        return any(t in self._probes and not handler for t, handler in self._in_try.get(id(tpu.node), ()))

    def _with_tpu(self, call: PolicyCall, arms: Branches, tpus: List[Tuple[SwitchSite, Branches]],
                  bfloat16: List[Branches]) -> List[SwitchSite]:
        """The TPU uses float16, chosen under ``arms``, runs with: on a path of the TPU
        use (not in the other arm of its ``if``, not in the ``except`` of a failed TPU
        probe) where no bfloat16 choice is made instead (a policy picked by a hardware
        test next to an unconditional TPU use follows the hardware)."""
        return [tpu for tpu, tpu_arms in tpus
                if not exclusive(arms, tpu_arms) and not self._after_failed_probe(call.node, tpu.node)
                and all(exclusive(b, tpu_arms) for b in bfloat16)]

    def _fix(self, call: cst.CSTNode) -> Optional[Fix]:
        """Swap the literal for 'mixed_bfloat16' when the call spells it out."""
        assert isinstance(call, cst.Call)
        return self._literal_fix(positional_or_keyword(call, 0, "policy"))

    def _literal_fix(self, literal: Optional[cst.BaseExpression]) -> Optional[Fix]:
        if isinstance(literal, cst.Call) and self.names.resolve(literal.func) & POLICY_CONSTRUCTORS:
            literal = positional_or_keyword(literal, 0, "name")
        if not isinstance(literal, cst.SimpleString) or literal.evaluated_value != "mixed_float16":
            return None
        quote = literal.value[len(literal.prefix)]
        new = literal.with_changes(value=f"{literal.prefix}{quote}mixed_bfloat16{quote}")
        return Fix({literal: new}, safety=Safety.SAFE)
