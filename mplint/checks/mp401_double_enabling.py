"""MP401: a mixed Keras policy and the graph rewrite switched on in one program."""

from __future__ import annotations

from typing import Dict, List, Optional

import libcst as cst

from mplint.analysis.references import References
from mplint.rule.check import Check, Fix, Needs, Replacement
from mplint.rule.levels import Safety
from mplint.rule.statements import remove_statements, statement_path
from mplint.semantic.call_args import positional_or_keyword
from mplint.semantic.facts import PolicyCall, PolicyState, SwitchSite
from mplint.semantic.names import dotted_name
from mplint.semantic.scopes import Location, exclusive, function_key, separate_options, separate_tests
from mplint.semantic.vocabulary import GRAPH_REWRITE_FUNCTIONS, MIXED_POLICIES

_MECHANISM = {
    "call": "the mixed precision graph rewrite is enabled here",
    "grappler": "the grappler option auto_mixed_precision=True turns on the graph rewrite here",
    "env": "TF_ENABLE_AUTO_MIXED_PRECISION=1 turns on the graph rewrite here",
}


class DoubleEnabling(Check):
    rule_id = "MP401"
    requires = (References,)

    #: reported where the file switches the graph rewrite on
    needs = Needs((b"graph_rewrite", b"auto_mixed_precision", b"TF_ENABLE_AUTO_MIXED_PRECISION"))

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self._line: Optional[cst.SimpleStatementLine] = None
        #: id(rewrite call) -> the statement line holding it
        self._lines: Dict[int, cst.SimpleStatementLine] = {}
        #: id(assignment) -> its line, when it is the line's only statement
        self._statements: Dict[int, cst.SimpleStatementLine] = {}

    def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> None:
        self._line = node
        if len(node.body) == 1 and isinstance(node.body[0], cst.Assign):
            self._statements[id(node.body[0])] = node

    def visit_Call(self, node: cst.Call) -> None:
        if self._line is not None and self.names.resolve(node.func) & GRAPH_REWRITE_FUNCTIONS:
            self._lines[id(node)] = self._line

    def finish(self) -> None:
        facts = self.facts
        # disable_mixed_precision_graph_rewrite() anywhere: the program switches
        # mechanisms on purpose and the order is a run-time matter; stay silent.
        if not facts.rewrite_sites or facts.rewrite_disables:
            return
        mixed = [c for c in facts.policy_calls if c.values and c.values & MIXED_POLICIES]
        for site in facts.rewrite_sites:
            # A policy and a rewrite in different branches of one `if` is the
            # usual either/or switch (`--amp=keras|graph`): at most one runs.
            conflicting = [c for c in mixed if not exclusive(c.branches, site.branches)
                           and not separate_tests(c.location.scope, site.location.scope)
                           and not separate_options(c.branches, c.location.scope,
                                                    site.branches, site.location.scope)]
            governing = None if facts.policy_calls else self._governing(site)
            if not conflicting and governing is None:
                continue
            self.report(site.node, self._message(site, conflicting, governing), self._fix(site))

    def _governing(self, site: SwitchSite) -> Optional[PolicyState]:
        """The mixed policy set elsewhere (or assumed) that governs the rewrite's code.
        A rewrite chosen at run time (inside an ``if``) and a policy that is a run-time
        choice too (``set_policy(dtype)`` that may set float32) are two options of the
        program, like ``--dtype=fp16`` and ``--fp16_implementation=graph_rewrite``:
        whether a user picks both is not the code's mistake."""
        state = self.facts.mixed_policy(site.location.scope)
        if state is None:
            # Both mechanisms in one program, whatever their order: a program that sets
            # the policy after it ran this switch (``configure_runtime()`` first).
            program = self.facts.project_rewrite_programs.get(function_key(site.location.scope))
            if program is not None:
                state = PolicyState(frozenset({program[0]}), certain=True, source=program[1])
        if state is None or (site.branches and not state.certain):
            return None
        return state

    def _message(self, site: SwitchSite, conflicting: List[PolicyCall], governing: Optional[PolicyState]) -> str:
        if conflicting:
            policy = f"`{self.ctx.module.code_for_node(conflicting[0].node)}` also sets a mixed Keras policy"
        else:
            assert governing is not None
            name = sorted(governing.names)[0]
            if not governing.certain:
                policy = f"the project may set a mixed Keras policy ({name}): {governing.uncertainty}"
            elif governing.source:
                policy = f"the project sets a mixed Keras policy ({name}) in {governing.source}"
            else:
                policy = f"the project's Keras policy is {name}"
        # Only the rewrite function checks for a policy (Keras 2); the grappler option
        # and the environment switch are never checked, in any generation.
        runs = "Keras 2 raises ValueError, Keras 3 runs both" if site.kind == "call" else "both run"
        mechanism = _MECHANISM[site.kind]
        if not site.certain:
            mechanism = "the grappler option auto_mixed_precision, chosen at run time, may turn on the graph rewrite here"
        return (
            f"{mechanism} and {policy}: {runs} and the rewrite casts float32 "
            f"layers (such as the output) to float16; use only the Keras policy"
        )

    def _fix(self, site: SwitchSite) -> Optional[Fix]:
        """Replace the rewrite call by its optimizer: Keras wraps it under a mixed policy.

        ``opt = rewrite(opt)`` (or a bare ``rewrite(opt)``) goes whole, with an ``if``
        it alone filled and a loss-scale variable only it read; no fix when that would
        leave dead code behind (``x = x``, an empty loop body)."""
        if site.kind != "call":
            return None
        call = site.node
        assert isinstance(call, cst.Call)
        opt = positional_or_keyword(call, 0, "opt")
        if opt is None:
            return None
        module = self.ctx.module
        line = self._lines.get(id(call))
        stmt = line.body[0] if line is not None and len(line.body) == 1 else None
        dead = [self._loss_scale_line(call, site.location)]
        if isinstance(stmt, cst.Expr) and stmt.value is call or (
                isinstance(stmt, cst.Assign) and stmt.value is call and len(stmt.targets) == 1
                and module.code_for_node(stmt.targets[0].target) == module.code_for_node(opt)):
            assert line is not None
            removal = remove_statements(module, [s for s in dead if s is not None] + _announcements(module, line) + [line])
            return None if removal is None else Fix(removal, safety=Safety.UNSAFE)
        if line is not None and len(line.body) > 1 and any(
                isinstance(s, cst.Assign) and s.value is call for s in line.body):
            return None  # ``a = 1; opt = rewrite(opt)``: a human tidies that line
        replacements: Dict[cst.CSTNode, Replacement] = {call: opt}
        scaler = dead[0]
        if scaler is not None:
            removal = remove_statements(module, [scaler])
            if removal is not None and not any(_contains(node, call) for node in removal):
                replacements.update(removal)
        return Fix(replacements, safety=Safety.UNSAFE)

    def _loss_scale_line(self, call: cst.Call, where: Location) -> Optional[cst.SimpleStatementLine]:
        """The line ``scale = ...`` that assigns the rewrite's ``loss_scale`` variable,
        when this call is the variable's only reader (the fix drops the argument)."""
        scale = positional_or_keyword(call, 1, "loss_scale")
        if not isinstance(scale, cst.Name):
            return None
        binding = where.lookup(scale.value)
        if binding is None or binding.scope is None or binding.scope.kind != "function" \
                or binding.kind != "assign" or not isinstance(binding.node, cst.Assign) \
                or len(binding.scope.bindings.get(scale.value, ())) != 1:
            return None  # a module-level name may be imported elsewhere
        reads = [r for r in self.ctx.get(References).get(scale.value)
                 if not r.store and r.location.lookup(scale.value) is binding]
        if len(reads) != 1 or reads[0].node is not scale:
            return None
        return self._statements.get(id(binding.node))


#: calls that only write a message (``log_info("Enabling automatic mixed precision")``)
_MESSAGE_FUNCTIONS = frozenset({"print", "log_info", "info", "debug", "warning", "warn", "log"})


def _announcements(module: cst.Module, line: cst.SimpleStatementLine) -> List[cst.SimpleStatementLine]:
    """The other lines of ``line``'s block when each only logs a constant message: they
    announced the rewrite (``if amp: log_info("Enabling AMP"); opt = rewrite(opt)``)
    and would announce nothing once it is gone. Empty when the block does anything else."""
    path = statement_path(module, line)
    block = path[-2] if path is not None and len(path) > 2 else None
    if not isinstance(block, cst.IndentedBlock):
        return []
    others = [s for s in block.body if s is not line]
    if not others or not all(_only_logs(s) for s in others):
        return []
    return [s for s in others if isinstance(s, cst.SimpleStatementLine)]


def _only_logs(statement: cst.BaseStatement) -> bool:
    if not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1:
        return False
    expr = statement.body[0]
    if not isinstance(expr, cst.Expr) or not isinstance(expr.value, cst.Call):
        return False
    call = expr.value
    name = dotted_name(call.func)
    return (name is not None and name.rpartition(".")[2] in _MESSAGE_FUNCTIONS and bool(call.args)
            and all(isinstance(a.value, (cst.SimpleString, cst.ConcatenatedString)) for a in call.args))


def _contains(node: object, inner: cst.CSTNode) -> bool:
    """``inner`` is ``node`` or lies inside it."""
    if node is inner:
        return True
    return isinstance(node, cst.CSTNode) and any(_contains(child, inner) for child in node.children)
