"""Module facts: which dtype policy is set, whether the graph rewrite is on.

Collected in the same walk as the checks; checks read them in ``finish()``, when
the whole file has been seen (a policy set at the bottom of ``main()`` still
governs a model built in a function above it). Facts from the rest of the project
and from config (``assume-policy``) are merged in here, so rules ask one object.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, FrozenSet, List, Optional, Set, Tuple, Union

import libcst as cst

from mplint.run.summaries import BODY, MAIN
from mplint.semantic.names import AliasScope, NameResolver
from mplint.semantic.versions import Versions
from mplint.semantic.scopes import (
    Branches, Location, Scope, ScopeTracker, enclosing_fixture, enclosing_test, function_key, requests_fixture,
    run_of, separate_tests,
)
from mplint.semantic.values import Evaluator
from mplint.semantic.vocabulary import (
    AMP_ENV_VAR, DISABLE_REWRITE_FUNCTIONS, ENV_SETTERS, ENV_UPDATES, ENVIRON, GRAPH_REWRITE_FUNCTIONS,
    GLOBAL_POLICY_FUNCTIONS, GRAPPLER_AMP_OPTION, GRAPPLER_OPTIONS_FUNCTIONS, LEGACY_KERAS_ENV_VAR, MAYBE_MIXED,
    MIXED_POLICIES,
    SET_FLOATX_FUNCTIONS, SET_POLICY_FUNCTIONS, TPU_NAMES, UNKNOWN_POLICY, amp_env_enabled,
    legacy_keras_env_enabled,
)

#: how a switch site turns the graph rewrite on (``SwitchSite.kind``)
REWRITE_CALL, REWRITE_GRAPPLER, REWRITE_ENV = "call", "grappler", "env"


@dataclass
class SwitchSite:
    """Where a mixed-precision switch is flipped: the node, its scope and its branches.

    ``kind`` tells the mechanism apart (``call``, ``grappler``, ``env`` for the
    graph rewrite; the API name otherwise); ``values`` holds the static values of
    its argument when they matter (set_floatx), None when unknown.
    """

    node: cst.CSTNode
    location: Location
    kind: str
    branches: Branches = ()
    values: Optional[FrozenSet[object]] = None
    #: False when a run-time value decides it (``{"auto_mixed_precision": args.amp}``):
    #: it *may* be on, under the condition added to ``branches``
    certain: bool = True

    @property
    def note(self) -> str:
        """Suffix for messages when the switch is chosen at run time."""
        return "" if self.certain else " (chosen at run time)"


@dataclass
class PolicyCall:
    """A call that sets the global policy; ``values`` is None when unresolvable."""

    node: cst.Call
    values: Optional[FrozenSet[str]]
    location: Location
    origins: FrozenSet[str]
    #: the ``if`` branches the call sits in (see :func:`exclusive`)
    branches: Branches = ()
    #: each value with the ``if`` arms that choose it, when a name bound in several
    #: arms is passed (``policy = ...`` on the TPU branch and in the ``else``);
    #: None when ``values`` is None
    value_branches: Optional[Tuple[Tuple[FrozenSet[str], Branches], ...]] = None
    #: the tests of the ``if`` statements around the call, with the arm it is in
    conditions: Tuple[Tuple[cst.BaseExpression, str], ...] = ()
    #: the import scopes visible at the call (``Names.snapshot``), to read it again later
    alias_scopes: Tuple[AliasScope, ...] = ()

    def choices(self) -> Tuple[Tuple[FrozenSet[str], Branches], ...]:
        """The values this call may set, each with every ``if`` arm it needs (the
        call's own and the arms choosing the value)."""
        if self.values is None:
            return ()
        if not self.value_branches:
            return ((self.values, self.branches),)
        return tuple((values, self.branches + arms) for values, arms in self.value_branches)


@dataclass(frozen=True)
class PolicyState:
    """The mixed policies that may be in effect, and whether that is certain."""

    names: FrozenSet[str]
    certain: bool
    #: project files that set the policy, when this file sets none itself
    source: str = ""
    #: the policy is picked at run time (a flag, a parameter); False: this file's own
    #: literal calls set a mixed policy and float32 both
    chosen: bool = False
    #: no program of the project sets one: a library's code, whose users may
    #: (``ModuleFacts.library_policy``)
    library: bool = False

    @property
    def float16(self) -> bool:
        return "mixed_float16" in self.names

    @property
    def note(self) -> str:
        """Suffix for messages when the policy is chosen at run time."""
        if not self.certain:
            return f" ({self.uncertainty})"
        return f" (the mixed policy is set in {self.source})" if self.source else ""

    @property
    def uncertainty(self) -> str:
        """Why the policy only may be mixed."""
        if self.library:
            return "a library's code: its users may run it under a mixed policy"
        if self.chosen:
            return "the policy is chosen at run time and may be mixed"
        return "the policy may be mixed here: float32 is set too"


@dataclass
class ModuleFacts:
    """Facts about one file, completed by the end of the walk."""

    assumed_policy: Optional[str] = None
    keras_version: Optional[int] = None
    #: the ``keras-version`` setting itself (keras_version may come from detection)
    configured_keras_version: Optional[int] = None
    #: the file's TensorFlow version and Keras generation, with where each came from
    #: (``versions.keras(ignoring=...)`` for a rule that judges some of the evidence)
    versions: Versions = field(default_factory=Versions)
    #: policies set elsewhere in the project (project facts; UNKNOWN_POLICY for run-time
    #: choices, float32 too), and the project-relative files that set them
    project_policies: FrozenSet[str] = frozenset()
    project_policy_files: Tuple[str, ...] = ()
    #: a Keras backend without dtype policies that the module imports (vocabulary's
    #: POLICYLESS_BACKENDS): the policies set elsewhere do not reach its code
    policyless_backend: Optional[str] = None
    #: project-relative files elsewhere that enable the graph rewrite (the rewrite
    #: call, grappler's auto_mixed_precision or TF_ENABLE_AUTO_MIXED_PRECISION)
    project_rewrite_files: Tuple[str, ...] = ()
    #: per function (``scopes.function_key``) of a file that may switch the graph rewrite
    #: on: the mixed policy a program running it sets in another file, before or after
    #: the call, and where (``program.Governance.rewrite_programs``)
    project_rewrite_programs: Dict[str, Tuple[str, str]] = field(default_factory=dict)
    #: per function (see ``scopes.function_key``): the policies set elsewhere that
    #: reach it, and where; None when the project gave no program model
    project_by_function: Optional[Dict[str, Tuple[FrozenSet[str], Tuple[str, ...]]]] = None
    #: functions of this file (``scopes.function_key``) that some policy, this file's
    #: own included, reaches on a path the program model follows; None without one
    program_reached: Optional[FrozenSet[str]] = None
    #: functions of this file that set a policy by calling a helper in another file
    project_setter_functions: FrozenSet[str] = frozenset()
    #: top-level functions of this file that set a policy and that no project code calls
    #: or names (``program.Governance.dead_setters``)
    project_dead_setters: FrozenSet[str] = frozenset()
    #: classes of this file that a class elsewhere builds as a part (a block)
    project_part_classes: FrozenSet[str] = frozenset()
    #: classes and functions (builders) of this file whose model code elsewhere trains
    #: or runs as a whole (see ``program.TrainedModels``)
    project_trained_models: FrozenSet[str] = frozenset()
    #: optimizers made in other modules (see ``run.optimizer_values``): a factory call
    #: as written here -> the origin kinds of what it returns; and per function
    #: (``scopes.function_key``) and parameter, the kinds every call site passes
    project_optimizer_factories: Dict[str, Tuple[str, ...]] = field(default_factory=dict)
    project_optimizer_params: Dict[str, Dict[str, Tuple[str, ...]]] = field(default_factory=dict)
    #: methods (``scopes.function_key``) overriding a base method that scales the loss,
    #: without scaling: -> ("base_file:line" of its scaling call, "Base.method", the
    #: optimizer it scales as written there)
    project_scaling_overrides: Dict[str, Tuple[str, str, str]] = field(default_factory=dict)
    #: a loss-scaling call in another module that this module's code may run
    #: ("file:line"), such as a trainer class that wraps its optimizer
    project_scaling_reached: Optional[str] = None
    #: per function (``scopes.function_key``), the arguments each call in another module
    #: passes it: slot -> JSON literal or "?" (see ``ProgramModel.arguments``)
    project_arguments: Dict[str, List[Dict[str, str]]] = field(default_factory=dict)
    #: the attributes the program's code sets on objects other than ``self``
    #: (``Governance.set_fields``): a config object's field among them is unknown
    project_set_fields: FrozenSet[str] = frozenset()
    #: function -> each call in another module made where a mixed policy is in effect
    #: (``program.Governance.mixed_calls``, under mixed_float16): its place, and parameter -> JSON literal or "?"
    project_mixed_calls: Dict[str, List[Tuple[str, Dict[str, str]]]] = field(default_factory=dict)
    #: the Keras packages of the layers and models that code in other modules builds under
    #: a mixed policy this file sets (see ``program.Governance.layer_packages``)
    project_layer_packages: FrozenSet[str] = frozenset()
    #: the file's public layers and models are a library's (``ProjectFacts.library_for``)
    library: bool = False
    #: the project's root folder, where imports of the project's own modules resolve
    project_root: Optional[str] = None
    #: where the project is judged as a library, its Python files (absolute paths;
    #: ``ProjectFacts.python_files``)
    project_files: Tuple[str, ...] = ()

    policy_calls: List[PolicyCall] = field(default_factory=list)
    #: the orders of the file's top-level kernel resets (``Scope.resets``, ``run_of``)
    kernel_resets: Tuple[int, ...] = ()
    #: every way the graph rewrite is switched on (the one detector: the project index
    #: reads it too): the rewrite call (REWRITE_CALL), the grappler option
    #: ``{'auto_mixed_precision': True}`` (REWRITE_GRAPPLER) and
    #: TF_ENABLE_AUTO_MIXED_PRECISION=1 (REWRITE_ENV)
    rewrite_sites: List[SwitchSite] = field(default_factory=list)
    #: ``disable_mixed_precision_graph_rewrite()`` calls
    rewrite_disables: List[SwitchSite] = field(default_factory=list)
    #: ``set_floatx(...)`` calls, with the values of their argument
    floatx_calls: List[SwitchSite] = field(default_factory=list)
    #: TPUStrategy / TPUClusterResolver uses: the program runs on TPUs
    tpu_sites: List[SwitchSite] = field(default_factory=list)
    #: TF_USE_LEGACY_KERAS=1 set from Python: tf.keras is tf_keras
    legacy_keras_env: List[SwitchSite] = field(default_factory=list)

    def main_guard_mixed(self) -> bool:
        """Whether the module's ``__main__`` guard runs under a mixed (or run-time) policy
        when the module is the program: one the file sets or assumes, or one a helper sets
        that its top level or guard calls. A policy that reaches the module only because a
        program imports it does not count: imported, the guard does not run."""
        return bool(self.policy_values() & MAYBE_MIXED) or self.assumed_policy in MIXED_POLICIES \
            or bool({BODY, MAIN} & self.project_setter_functions)

    def sets_policy_itself(self, at: Scope) -> bool:
        """Whether the code at ``at`` sets a mixed (or run-time) policy itself: a policy
        call in its own function, or a call there to a helper that sets one."""
        return bool(self.policy_values(at) & MAYBE_MIXED) \
            or function_key(at) in self.project_setter_functions

    def runs_before_policies(self, at: Location) -> bool:
        """Module-level code that runs before the file sets any policy, in a file no
        other policy reaches: it computes in float32 (a script's or notebook's float32
        baseline, trained before it turns mixed precision on)."""
        if at.scope.kind != "module" or self.assumed_policy in MIXED_POLICIES or self.project_policies \
                or not self.policy_calls or any(c.location.scope.kind != "module" for c in self.policy_calls):
            return False
        return at.order < min(c.location.order for c in self.policy_calls)

    @property
    def policy_from_elsewhere(self) -> bool:
        """Whether the only mixed policy reaching this file is set in another file: its
        code is a module of a bigger program (a model zoo, a library's networks)."""
        return (self.project_by_function is not None and not self.policy_calls
                and self.assumed_policy not in MIXED_POLICIES)

    @property
    def enables_rewrite(self) -> bool:
        """Whether this file switches the graph rewrite on, by any mechanism."""
        return bool(self.rewrite_sites)

    def rewrite_sites_of(self, kind: str) -> List[SwitchSite]:
        """The rewrite sites of one mechanism (REWRITE_CALL, REWRITE_GRAPPLER, REWRITE_ENV)."""
        return [site for site in self.rewrite_sites if site.kind == kind]

    def policy_values(self, at: Optional[Scope] = None, order: Optional[int] = None) -> FrozenSet[str]:
        """Every policy name this module may set; UNKNOWN_POLICY for unresolvable ones.

        ``at``: only the calls that may govern code in that scope (a call in another
        test function does not). ``order``: the judged code's statement order, when the
        rule knows it; in a notebook with kernel resets, only the calls of the same run
        govern it (a function's scope places it where it is defined).
        """
        if order is None and at is not None:
            order = at.top_order()
        run = run_of(self.kernel_resets, order) if order is not None and self.kernel_resets else None
        out: Set[str] = set()
        for call in self.policy_calls:
            if run is not None and run_of(self.kernel_resets, call.location.order) != run:
                continue
            if at is None or self._governs(call, at):
                out |= call.values if call.values is not None else {UNKNOWN_POLICY}
        return frozenset(out)

    def mixed_calls_governing(self, at: Scope) -> Optional[List[PolicyCall]]:
        """This file's calls that may set a mixed (or unknown) policy for ``at``'s code;
        None when a policy from elsewhere (another file, ``assume-policy``) may govern it."""
        if self.assumed_policy is not None or self.policy_from_project(at):
            return None
        return [call for call in self.policy_calls if self._governs(call, at)
                and (call.values is None or bool(call.values & MIXED_POLICIES))]

    def policy_from_project(self, at: Scope) -> bool:
        """Whether a policy set in another file reaches ``at``."""
        if self.project_by_function is not None:
            return bool(self.project_by_function.get(function_key(at), (frozenset(), ()))[0])
        return bool(self.project_policies)

    def _governs(self, call: PolicyCall, at: Scope) -> bool:
        """Whether ``call`` may set the policy ``at``'s code runs under (see :meth:`policy_values`)."""
        return not (separate_tests(call.location.scope, at) or self._not_reached(call, at)
                    or self._outside_fixture(call, at))

    def _outside_fixture(self, call: PolicyCall, at: Scope) -> bool:
        """A policy set in a pytest fixture governs only the tests that request it (and
        the helpers they call), not the other tests of the file: pytest runs it for them
        alone, and a fixture that restores the policy after ``yield`` ends it there."""
        fixture = enclosing_fixture(call.location.scope)
        if fixture is None or enclosing_fixture(at) is not None:
            return False
        module = _module_node(at)
        return module is not None and not requests_fixture(at, fixture[1], module)

    def _not_reached(self, call: PolicyCall, at: Scope) -> bool:
        """Code the program model does not reach from a policy, where the policy call
        governs only what it reaches: one set inside a test function, for code outside any
        test (a helper another test calls under the default float32 policy); one a helper
        sets from its own parameter (``def use_policy(name): set_global_policy(name)``),
        for any code outside the helper: the program model binds it at each call site, and
        what reaches that code comes with the project's facts."""
        if self.program_reached is None:
            return False
        if sets_its_parameter(call):  # each call site's value reaches its code (project_by_function)
            return function_key(at) != function_key(call.location.scope)
        if call.location.scope.kind == "module" and _in_unbuilt_class(at, self.program_reached):
            return True
        setter = function_key(call.location.scope)
        if not self.library and setter in self.project_dead_setters and function_key(at) != setter:
            return True  # an application's setter that nothing calls: its policy stays inside it
        return function_key(at) not in self.program_reached and enclosing_test(call.location.scope) is not None \
            and enclosing_test(at) is None

    def mixed_policy(self, at: Optional[Scope] = None, order: Optional[int] = None) -> Optional[PolicyState]:
        """The mixed policy in effect for this module's code, or None.

        ``at`` is the scope of the code being judged, when the rule knows it: a policy
        set inside one test function is that test's own, not its neighbours'. ``order``:
        see :meth:`policy_values`.
        """
        values = self.policy_values(at, order)
        project, project_files = self.project_policies, self.project_policy_files
        if at is not None and self.project_by_function is not None:
            # Only what reaches this function's code counts, not the whole file's.
            project, project_files = self.project_by_function.get(function_key(at), (frozenset(), ()))
        if self.policyless_backend is not None:
            project, project_files = frozenset(), ()
        source = ""
        if not values and project:
            # The file sets no policy itself: the one set elsewhere governs it.
            values = project
            source = ", and in ".join(project_files)
        certain = UNKNOWN_POLICY not in values and len(values) > 0
        names = set(values & MIXED_POLICIES)
        if UNKNOWN_POLICY in values:
            names |= MIXED_POLICIES
        if self.assumed_policy in MIXED_POLICIES:
            names.add(self.assumed_policy)
            certain, source = True, ""
        names |= project & MIXED_POLICIES
        if not names:
            return None
        # Setting float32 somewhere too (a reset in tests, a CLI switch) leaves
        # mixed possible but not certain.
        if values - MIXED_POLICIES - {UNKNOWN_POLICY}:
            certain = self.assumed_policy in MIXED_POLICIES
        # Only literal calls of this file, each setting one policy, set mixed and float32
        # apart (a test that builds under mixed_float16 and resets to float32); a call
        # with a value mplint reads as several, or a setter elsewhere, chooses.
        chosen = UNKNOWN_POLICY in values or bool(source) or any(
            call.values is None or len(call.values) > 1 for call in self.policy_calls)
        return PolicyState(frozenset(names), certain, source if certain else "", chosen)


    def library_policy(self, at: Optional[Scope] = None) -> Optional[PolicyState]:
        """:meth:`mixed_policy`, or for a library's module that no policy reaches, the
        mixed policies its users may set: for rules about a crash or a wrong result
        under mixed precision, not about speed or training loops."""
        found = self.mixed_policy(at)
        if found is not None or not self.library or self.assumed_policy is not None or self.policy_calls:
            return found
        return PolicyState(MIXED_POLICIES, certain=False, library=True)


def _in_unbuilt_class(at: Scope, reached: FrozenSet[str]) -> bool:
    """``at`` is code of a top-level class that nothing builds: the program model reaches
    other code of the file but no method of this class (nor of a subclass, which reaches
    these methods under their own names) and nothing hands the class on as a value. A
    decorated class may be built from its registered name (a saved model's config). The
    class body itself runs where it is defined."""
    scope: Optional[Scope] = at
    while scope is not None and scope.parent is not None and scope.parent.kind != "module":
        scope = scope.parent
    if scope is None or scope is at or scope.kind != "class" or not isinstance(scope.node, cst.ClassDef) \
            or scope.node.decorators or not reached:
        return False
    prefix = scope.node.name.value + "."
    return not any(key.startswith(prefix) for key in reached)


class FactsCollector:
    """Visitor that records policy and graph-rewrite calls into ModuleFacts."""

    def __init__(self, facts: ModuleFacts, names: NameResolver, tracker: ScopeTracker,
                 evaluator: Evaluator) -> None:
        self.facts = facts
        self.names = names
        self.tracker = tracker
        self.evaluator = evaluator
        evaluator.always_on = tracker.always_on
        evaluator.flag_default = tracker.flag_default

    # -- if/else branches (a policy chosen by a hardware check is not a conflict) --
    def branches(self) -> Branches:
        return self.tracker.branches()

    def _site(self, node: cst.CSTNode, kind: str,
              values: Optional[FrozenSet[object]] = None) -> SwitchSite:
        return SwitchSite(node, self.tracker.location(), kind, self.branches(), values)

    # -- TF_ENABLE_AUTO_MIXED_PRECISION set from Python ------------------------------
    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            sub = target.target
            if (isinstance(sub, cst.Subscript) and self.names.resolve(sub.value) & ENVIRON
                    and len(sub.slice) == 1 and isinstance(sub.slice[0].slice, cst.Index)):
                self._env(node, sub.slice[0].slice.value, node.value)

    def _env(self, node: cst.CSTNode, key: cst.BaseExpression, value: cst.BaseExpression) -> None:
        loc = self.tracker.location()
        name = self.evaluator.values(key, loc)
        if name not in (frozenset({AMP_ENV_VAR}), frozenset({LEGACY_KERAS_ENV_VAR})):
            return
        found = self.evaluator.values(value, loc)
        if not found:
            return
        if name == frozenset({AMP_ENV_VAR}):
            if all(amp_env_enabled(v) for v in found):
                self.facts.rewrite_sites.append(self._site(node, REWRITE_ENV))
        elif all(legacy_keras_env_enabled(v) for v in found):
            self.facts.legacy_keras_env.append(self._site(node, "env"))

    def visit_Call(self, node: cst.Call) -> None:
        resolved = self.names.resolve(node.func)
        if not resolved:
            return
        if resolved & ENV_SETTERS and len(node.args) >= 2:
            self._env(node, node.args[0].value, node.args[1].value)
        elif resolved & ENV_UPDATES:
            for arg in node.args:
                if arg.keyword is not None:
                    self._env(node, cst.SimpleString(repr(arg.keyword.value)), arg.value)
                elif isinstance(arg.value, cst.Dict) and not arg.star:
                    for element in arg.value.elements:
                        if isinstance(element, cst.DictElement):
                            self._env(node, element.key, element.value)
        elif resolved & DISABLE_REWRITE_FUNCTIONS:
            self.facts.rewrite_disables.append(self._site(node, "disable"))
        elif resolved & SET_FLOATX_FUNCTIONS:
            floatx = self.evaluator.values(node.args[0].value, self.tracker.location()) if node.args else None
            self.facts.floatx_calls.append(self._site(node, "floatx", floatx))
        elif resolved & TPU_NAMES or any(n.rpartition(".")[0] in TPU_NAMES for n in resolved):
            # only a call (construction, ``.connect()``) says the program runs on a TPU
            self.facts.tpu_sites.append(self._site(node, "tpu"))
        if resolved & SET_POLICY_FUNCTIONS:
            loc = self.tracker.location()
            values, by_branch = self._policy_values(node, loc)
            self.facts.policy_calls.append(
                PolicyCall(node, values, loc, self.names.origins(node.func), self.branches(), by_branch,
                           self.tracker.open_conditions(), self.names.snapshot())
            )
        elif resolved & GRAPH_REWRITE_FUNCTIONS:
            self.facts.rewrite_sites.append(self._site(node, REWRITE_CALL))
        elif resolved & GRAPPLER_OPTIONS_FUNCTIONS:
            enabled = self._enables_amp(node.args[0].value) if node.args else False
            if enabled is True:
                self.facts.rewrite_sites.append(self._site(node, REWRITE_GRAPPLER))
            elif enabled:  # on when a run-time value holds: may be on, under that condition
                site = self._site(node, REWRITE_GRAPPLER)
                site.branches += (self.tracker.condition(enabled),)
                site.certain = False
                self.facts.rewrite_sites.append(site)

    def _policy_values(self, node: cst.Call, loc: Location
                       ) -> Tuple[Optional[FrozenSet[str]], Optional[Tuple[Tuple[FrozenSet[str], Branches], ...]]]:
        """The policies a setter call may set (None: unknown), and each with the arms
        choosing it when a name bound in several arms is passed."""
        if not node.args:
            return None, None
        found = self.evaluator.values(node.args[0].value, loc)
        if found is None or not all(isinstance(v, str) for v in found):
            return None, None
        split = self.evaluator.values_by_branch(node.args[0].value, loc)
        by_branch = None if split is None or len(split) <= 1 else \
            tuple((frozenset(str(v) for v in vs), arms) for vs, arms in split)
        return frozenset(str(v) for v in found), by_branch

    def leave_Module(self, node: cst.Module) -> None:
        """A parameter passed to the setter takes the values of the calls of its
        function, some of them further down the file: read again once all are seen."""
        kept = []
        for call in self.facts.policy_calls:
            with self.names.within(call.alias_scopes):  # its function's own imports
                if not self._never_runs(call) and not self._restores(call):
                    call.values, call.value_branches = self._policy_values(call.node, call.location)
                    kept.append(call)
        self.facts.policy_calls = _live(kept)
        self.facts.kernel_resets = tuple(self.tracker.module_scope.resets)

    def _restores(self, call: PolicyCall) -> bool:
        """``set_global_policy(previous)`` where every binding of ``previous`` read the
        policy in force (``previous = global_policy().name``), or a setter given
        ``global_policy()`` itself: it puts back what was set, and sets nothing new."""
        if not call.node.args:
            return False
        value = call.node.args[0].value
        if self._reads_policy(value):
            return True
        if not isinstance(value, cst.Name):
            return False
        bindings = call.location.reaching(value.value)
        return bool(bindings) and all(
            binding.kind in ("assign", "annassign") and self._reads_policy(binding.value) for binding in bindings)

    def _reads_policy(self, value: Optional[cst.BaseExpression]) -> bool:
        """``global_policy()`` or its ``.name`` (Keras 3's ``dtype_policy()`` too)."""
        if isinstance(value, cst.Attribute) and value.attr.value == "name":
            value = value.value
        return isinstance(value, cst.Call) and bool(self.names.resolve(value.func) & GLOBAL_POLICY_FUNCTIONS)

    def _never_runs(self, call: PolicyCall) -> bool:
        """A setter under an ``if`` that no value reaching it takes: ``if mp:`` in
        ``config_gpu(mp=False)``, called only with ``mp=False``."""
        for test, arm in call.conditions:
            negated = isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not)
            if isinstance(test, cst.UnaryOperation) and negated:
                test = test.expression
            flag = call.location.lookup(test.value) if isinstance(test, cst.Name) else None
            if flag is not None and self.evaluator.callers_unread(flag):
                continue  # ``Trainer(model, amp=True)`` here, and other modules may pass it too
            found = self.evaluator.values(test, call.location)
            if not found or not all(isinstance(v, (bool, int, str, type(None))) for v in found):
                continue
            truths = {bool(v) != negated for v in found}
            if truths == {arm != "body"}:
                return True
        return False

    def _enables_amp(self, options: cst.BaseExpression) -> Union[bool, cst.BaseExpression]:
        """``{'auto_mixed_precision': True}`` (a literal, or a name assigned one): True;
        a value read at run time (``args.amp``, ``FLAGS.amp == "auto"``): that value,
        the condition under which it is on; False otherwise."""
        loc = self.tracker.location()
        if isinstance(options, cst.Name):
            binding = loc.lookup(options.value)
            if binding is None or binding.kind not in ("assign", "annassign") or binding.scope is None \
                    or binding.value is None:
                return False
            options = binding.value
            loc = binding.location()
        if not isinstance(options, cst.Dict):
            return False
        for element in options.elements:
            if (isinstance(element, cst.DictElement)
                    and self.evaluator.values(element.key, loc) == frozenset({GRAPPLER_AMP_OPTION})):
                value = element.value
                found = self.evaluator.values(value, loc)
                if found == frozenset({True}):
                    return True
                if found is not None and True not in found:
                    return False
                if isinstance(value, cst.IfExp):
                    body, orelse = (self.evaluator.values(v, loc) for v in (value.body, value.orelse))
                    if body == frozenset({True}) and orelse == frozenset({False}):
                        return value.test
                    return False
                return value if isinstance(value, (cst.Name, cst.Attribute, cst.Comparison,
                                                   cst.BooleanOperation, cst.Subscript)) else False
        return False


def _module_node(scope: Scope) -> Optional[cst.Module]:
    while scope.parent is not None:
        scope = scope.parent
    return scope.node if isinstance(scope.node, cst.Module) else None


def _live(calls: List[PolicyCall]) -> List[PolicyCall]:
    """The calls whose policy some code may run under: a set that the very next statement
    of the same scope and ``if`` arm sets again (a notebook cell that goes back to
    float32 right after the cell that chose mixed_float16) governs nothing."""
    return [call for call in calls
            if not any(later.location.scope is call.location.scope
                       and later.location.order == call.location.order + 1
                       and later.location.branches == call.location.branches for later in calls)]


def sets_its_parameter(call: PolicyCall) -> bool:
    """``set_global_policy(name)`` where ``name`` is a parameter of the function holding it."""
    value = next((a.value for a in call.node.args
                  if a.keyword is None or a.keyword.value in ("policy", "dtype_policy")), None)
    if not isinstance(value, cst.Name) or call.location.scope.kind != "function":
        return False
    binding = call.location.lookup(value.value)
    return binding is not None and binding.kind == "param"
