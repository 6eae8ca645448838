"""MP402: the experimental mixed-precision API (removed in TF 2.9) and friends.

A codemod to the current API, like ``tf_upgrade_v2``: renames are safe, moved
arguments are unsafe. Import statements of removed modules are rewritten in place
(keeping the local name), so usages keep their spelling and no import is left
behind. Code that guards the old API (``try``/``except``, version checks) is left
alone: it already runs on both generations.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, Iterator, List, Optional, Sequence, Set, Tuple, Union

import libcst as cst

from mplint.analysis.references import References
from mplint.core.prefilter import Prescan
from mplint.core.walker import child_nodes
from mplint.rule.check import Check, Fix
from mplint.rule.edits import Import, arg_index, replace_arg, spell, without_arg
from mplint.rule.levels import Safety, Severity
from mplint.semantic.call_args import positional_or_keyword
from mplint.semantic.migrations import Migration, migrate, parse_version
from mplint.semantic.names import dotted_name
from mplint.semantic.vocabulary import GRAPH_REWRITE_FUNCTIONS, TF1_ONLY_NAMES

_LOSS_SCALE_CLASSES = ("DynamicLossScale", "FixedLossScale")
_GUARD_WORDS = ("version", "hasattr", "experimental", "VERSION")
#: members of the current mixed-precision modules that replace a removed one
_CURRENT_MEMBERS = frozenset({"Policy", "set_global_policy", "global_policy", "LossScaleOptimizer",
                              "enable_mixed_precision_graph_rewrite", "DynamicLossScale", "FixedLossScale"})

ImportNode = Union[cst.Import, cst.ImportFrom]
#: (full dotted name, local name, asname or None) of one imported name
Alias = Tuple[str, str, Optional[str]]

#: Keras optimizers became new-style in TF 2.11; the graph rewrite refuses them since
#: (reference, section 4). Before that a TF2 Keras optimizer was accepted.
_KERAS_OPTIMIZERS_REJECTED = Migration("keras.optimizers.*", None, (2, 11), (2, 11))


@dataclass
class _Ref:
    """A use of a removed name: a chain (``tf.keras...set_policy``) or a call."""

    node: cst.BaseExpression
    dotted: str
    qualified: str
    head_target: str
    call: Optional[cst.Call] = None
    consumed: List[Tuple[str, str]] = field(default_factory=list)  # (head, head target)


class RemovedMixedPrecisionApi(Check):
    rule_id = "MP402"
    requires = (References,)

    @classmethod
    def may_report(cls, file: Prescan) -> bool:
        # Every removed name is spelled with "experimental" and with "mixed_precision"
        # or "LossScale" (a two-part condition Needs cannot say); the rest are rewrite calls.
        return file.has(b"graph_rewrite") or (file.has(b"experimental") and file.has(b"mixed_precision", b"LossScale"))

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self._guard = 0
        self._in_import = 0
        self._skip: Set[int] = set()
        self._imports: List[ImportNode] = []
        self._guarded_locals: Set[str] = set()
        #: the statement blocks being walked, each with the guards its early exits opened
        self._blocks: List[Tuple[Sequence[cst.BaseStatement], List[int]]] = []
        self._specs: Dict[str, Import] = {}
        self._refs: List[_Ref] = []
        self._tf1 = False
        #: graph rewrite calls handed a (non-legacy) Keras optimizer
        self._keras_rewrites: List[cst.Call] = []
        # Every removed name is spelled with "experimental" somewhere in the file
        # (in the import or the dotted use): without it, no name needs resolving.
        self._has_removed_names = "experimental" in ctx.text
        self._may_report = self._has_removed_names or "graph_rewrite" in ctx.text

    # -- guards: try/except around the import, version checks ------------------------
    def visit_Try(self, node: cst.Try) -> None:
        if node.handlers:
            self._guard += 1

    def leave_Try(self, node: cst.Try) -> None:
        if node.handlers:
            self._guard -= 1

    def visit_Module(self, node: cst.Module) -> None:
        self._blocks.append((node.body, [0]))

    def leave_Module(self, node: cst.Module) -> None:
        self._leave_block()

    def visit_IndentedBlock(self, node: cst.IndentedBlock) -> None:
        self._blocks.append((node.body, [0]))

    def leave_IndentedBlock(self, node: cst.IndentedBlock) -> None:
        self._leave_block()

    def _leave_block(self) -> None:
        _, opened = self._blocks.pop()
        self._guard -= opened[0]

    def visit_If(self, node: cst.If) -> None:
        arms = _if_arms(node)
        rest = self._after_early_exit(node, arms)
        self._enter_branch(node, node.test, arms + rest)
        if rest and id(node) in self._skip:
            # ``if new_version: return new_api()`` then the old API: the statements
            # after the ``if`` run only where its test fails, as an ``else`` would
            self._guard += 1
            self._blocks[-1][1][0] += 1

    def _after_early_exit(self, node: cst.If, arms: List[cst.CSTNode]) -> List[cst.CSTNode]:
        """The statements after an ``if`` whose every arm returns or raises (and no
        ``else``): what runs only when its tests fail."""
        if not self._blocks or not all(_exits(arm) for arm in arms) or _has_else(node):
            return []
        body = self._blocks[-1][0]
        for index, statement in enumerate(body):
            if statement is node:
                return list(body[index + 1:])
        return []

    def leave_If(self, node: cst.If) -> None:
        self._leave_branch(node)

    def visit_IfExp(self, node: cst.IfExp) -> None:
        self._enter_branch(node, node.test, [node.body, node.orelse])

    def leave_IfExp(self, node: cst.IfExp) -> None:
        self._leave_branch(node)

    def _enter_branch(self, node: cst.CSTNode, test: cst.BaseExpression, arms: List[cst.CSTNode]) -> None:
        """A version or feature check (``if tf.__version__ < "2.4"``, ``hasattr``), or
        an ``if`` whose arms split the old API from the current one (``new if ok else
        old``): compatibility code that already runs on both generations."""
        if any(word in name for name in _names_in(test) for word in _GUARD_WORDS) or (
                self._has_removed_names and self._splits_old_from_new(arms)):
            self._skip.add(id(node))
            self._guard += 1

    def _leave_branch(self, node: cst.CSTNode) -> None:
        if id(node) in self._skip:
            self._guard -= 1

    def _splits_old_from_new(self, arms: List[cst.CSTNode]) -> bool:
        """One arm names a removed mixed-precision API and another only current ones."""
        kinds = [self._api_kinds(arm) for arm in arms]
        return any("old" in a for a in kinds) and any(k == {"new"} for k in kinds)

    def _api_kinds(self, node: cst.CSTNode) -> Set[str]:
        found: Set[str] = set()
        stack = [node]
        while stack:
            current = stack.pop()
            if isinstance(current, (cst.Attribute, cst.Name)):
                for name in self.names.qualified(current):
                    if migrate(name) is not None:
                        found.add("old")
                    elif _current_api(name):
                        found.add("new")
            if isinstance(current, (cst.Import, cst.ImportFrom)):
                for full, _, _ in _aliases(current):
                    is_current = _current_api(full) or full.endswith(".mixed_precision")  # the module itself
                    found.add("old" if migrate(full) is not None else "new" if is_current else "")
                continue  # its names are declared here, not used
            stack.extend(child_nodes(current))
        found.discard("")
        return found

    # -- imports -------------------------------------------------------------------
    def visit_Import(self, node: cst.Import) -> None:
        self._import(node)

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        self._import(node)

    def leave_Import(self, node: cst.Import) -> None:
        self._in_import -= 1

    def leave_ImportFrom(self, node: cst.ImportFrom) -> None:
        self._in_import -= 1

    def _import(self, node: ImportNode) -> None:
        self._in_import += 1
        for full, local, asname in _aliases(node):
            module, _, obj = full.rpartition(".") if isinstance(node, cst.ImportFrom) else (full, "", "")
            self._specs[local] = (module, obj or None, asname) if obj else (full, None, asname)
            if self._guard and migrate(full) is not None:
                self._guarded_locals.add(local)
        if not self._guard and any(migrate(full) for full, _, _ in _aliases(node)):
            self._imports.append(node)

    # -- references ------------------------------------------------------------------
    def visit_Call(self, node: cst.Call) -> None:
        if self.names.resolve(node.func) & GRAPH_REWRITE_FUNCTIONS and self._keras_optimizer(positional_or_keyword(node, 0, "opt")):
            self._keras_rewrites.append(node)
        ref = self._reference(node.func)
        if ref is None:
            return
        ref.call = node
        member = ref.qualified.rpartition(".")[2]
        if member == "LossScaleOptimizer":
            scale = positional_or_keyword(node, 1, "loss_scale")
            if isinstance(scale, cst.Call) and dotted_name(scale.func):
                names = {q.rpartition(".")[2] for q in self.names.qualified(scale.func)}
                if names & set(_LOSS_SCALE_CLASSES):
                    head = dotted_name(scale.func).split(".")[0]  # type: ignore[union-attr]
                    ref.consumed.append((head, next(iter(self.names.qualified(cst.Name(head))), "")))
                    self._skip_chain(scale.func)

    def _keras_optimizer(self, expr: Optional[cst.BaseExpression]) -> bool:
        """A current Keras optimizer (``keras.optimizers.Adam(...)``, not ``legacy``)."""
        if isinstance(expr, cst.Name):
            binding = self.ctx.scopes.location().lookup(expr.value)
            expr = binding.value if binding is not None and binding.kind == "assign" else None
        if not isinstance(expr, cst.Call):
            return False
        return any(
            n.startswith("keras.optimizers.") and n.count(".") == 2 and n[17:18].isupper()
            and not n.endswith("LossScaleOptimizer")
            for n in self.names.resolve(expr.func)
        )

    def visit_Attribute(self, node: cst.Attribute) -> None:
        # Every prefix of a chain is visited as its own Attribute: exact names suffice.
        # (TF1 use only silences findings, so only files that may have some look.)
        if self._may_report and not self._tf1 and self.names.resolve(node) & TF1_ONLY_NAMES:
            self._tf1 = True
        if self._has_removed_names:
            self._reference(node)

    def visit_Name(self, node: cst.Name) -> None:
        # keywords, parameters, attribute names and declared names are not references
        if self._has_removed_names and self.ctx.get(References).is_variable(node):
            self._reference(node)

    def _reference(self, node: cst.BaseExpression) -> Optional[_Ref]:
        if self._in_import or self._guard or id(node) in self._skip:
            return None
        # Every removed name's canonical form says "experimental": a cached, cheap filter.
        if not any("experimental" in n for n in self.names.resolve(node)):
            return None
        dotted = dotted_name(node)
        if dotted is None:
            return None
        qualified = self.names.qualified(node)
        # Several candidates (a try/except import) with a current one: compat code.
        if not qualified or any(migrate(q) is None for q in qualified):
            return None
        head = dotted.split(".")[0]
        if head in self._guarded_locals or self.ctx.scopes.location().lookup(head) is not None:
            return None  # guarded, or a variable that shadows the import
        self._skip_chain(node)
        q = sorted(qualified)[0]
        ref = _Ref(node, dotted, q, next(iter(self.names.qualified(cst.Name(head))), ""))
        self._refs.append(ref)
        return ref

    def _skip_chain(self, node: cst.BaseExpression) -> None:
        while isinstance(node, cst.Attribute):
            self._skip.add(id(node))
            self._skip.add(id(node.attr))
            node = node.value
        self._skip.add(id(node))

    # -- decide -----------------------------------------------------------------------
    def finish(self) -> None:
        if self._tf1:
            return  # TF 1.x code: the experimental API is the current one there
        removed_calls = {id(ref.call) for ref in self._refs if ref.call is not None}
        for call in self._keras_rewrites:
            severity, why = self._severity(_KERAS_OPTIMIZERS_REJECTED)
            # One finding per call: a removed name is reported first (and fixed), the
            # rejected optimizer on the renamed call after that.
            if severity is not None and id(call) not in removed_calls:
                self.report(call, "the graph rewrite is a TF1 API that rejects Keras optimizers "
                            "since TF 2.11 (ValueError: \"opt\" must be an instance of a "
                            f"tf.train.Optimizer{'; ' + why if why else ''}); use "
                            "set_global_policy('mixed_float16') instead, which wraps the optimizer itself",
                            None, severity)
        renamed: Dict[str, Tuple[str, str]] = {}
        for node in self._imports:
            self._report_import(node, renamed)
        for ref in self._refs:
            self._report_ref(ref, renamed)

    def _severity(self, migration: Migration) -> Tuple[Optional[Severity], str]:
        """error/warning by the TensorFlow the code runs on (None: it predates the new
        API), and where that version came from ("" for a setting or the default).

        A configured ``keras-version = 3`` means TF 2.16 or later; then the
        ``target-tf-version`` option; then the TensorFlow the file's versions say (the
        project's pins: a project pinned to TF 2.2 runs the experimental API, one that
        allows ``tensorflow>=2.2`` may install the latest); else the latest. The
        experimental names this rule judges are no evidence of the version.

        Pins that reach no release without the API (``tensorflow-gpu==2.7.0``) leave
        the rule silent: the code runs as written on the TensorFlow it installs, and the
        pin is what a later upgrade changes. Only a ``target-tf-version`` the user sets
        asks for the deprecation warnings.
        """
        if self.facts.configured_keras_version == 3:
            return "error", ""
        target = parse_version(str(self.option("target-tf-version")))
        if target is not None:
            if target >= migration.removed:
                return "error", ""
            return ("warning" if target >= migration.since else None), ""
        answer = self.facts.versions.tensorflow()
        if answer is None:
            return "error", ""
        if answer.range.reaches(migration.removed + (0,)):
            return "error", answer.why
        return None, answer.why

    def _report_import(self, node: ImportNode, renamed: Dict[str, Tuple[str, str]]) -> None:
        aliases = list(_aliases(node))
        migrations = [migrate(full) for full, _, _ in aliases]
        first = next(m for m in migrations if m is not None)
        severity, why = self._severity(first)
        if severity is None:
            return
        old = ", ".join(sorted({m.old for m in migrations if m is not None}))
        message = f"`{old}` {_status(first, severity, 'the import fails', why)}; import the current API instead"
        new_node = self._new_import(node, aliases, migrations, renamed)
        fix = Fix({node: new_node}, safety=Safety.SAFE) if new_node is not None else None
        self.report(node, message, fix, severity)

    def _new_import(self, node: ImportNode, aliases: List[Alias], migrations: List[Optional[Migration]],
                    renamed: Dict[str, Tuple[str, str]]) -> Optional[ImportNode]:
        if isinstance(node, cst.Import):
            new_names = []
            for alias, (full, local, asname), m in zip(node.names, aliases, migrations):
                if m is None:
                    new_names.append(alias)
                    continue
                if m.new is None:
                    return None
                new_names.append(alias.with_changes(name=cst.parse_expression(m.new)))
                if asname:
                    renamed[local] = (local, m.new)
            return node.with_changes(names=new_names)
        targets = [m.new for m in migrations if m is not None and m.new is not None]
        if len(targets) != len(migrations) or isinstance(node.names, cst.ImportStar):
            return None  # a mix of current and removed names: split it by hand
        parents = {new.rpartition(".")[0] for new in targets}
        if len(parents) != 1:
            return None
        parent = parents.pop()
        new_names = []
        for alias, (full, local, asname), new in zip(node.names, aliases, targets):
            leaf = new.rpartition(".")[2]
            new_local = local if asname else leaf
            if new_local != local and new_local in self.names.module_scope.aliases:
                return None
            renamed[local] = (new_local, new)
            changes: Dict[str, object] = {"name": cst.Name(leaf)}
            if asname == leaf:
                changes["asname"] = None
            new_names.append(alias.with_changes(**changes))
        if new_names and not isinstance(node.names[-1].comma, cst.Comma):
            new_names[-1] = new_names[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
        return node.with_changes(module=cst.parse_expression(parent), names=new_names)

    def _respell(self, ref_dotted: str, head_target: str, new: str,
                 renamed: Dict[str, Tuple[str, str]]) -> Optional[Tuple[cst.BaseExpression, Tuple[Import, ...], Tuple[Import, ...]]]:
        """The new spelling of a chain, with imports to add and to drop if unused."""
        head = ref_dotted.split(".")[0]
        if head in renamed:
            local, target = renamed[head]
        elif migrate(head_target) is None:
            local, target = head, head_target
        else:
            return None  # the head's import is removed but could not be rewritten
        if new == target or new.startswith(target + "."):
            return cst.parse_expression(local + new[len(target):]), (), ()
        spelled = spell(new, self.names)
        if spelled is None:
            return None
        expr, imports = spelled
        spec = self._specs.get(head)
        return expr, imports, ((spec,) if spec and head not in renamed else ())

    def _report_ref(self, ref: _Ref, renamed: Dict[str, Tuple[str, str]]) -> None:
        m = migrate(ref.qualified)
        if m is None:
            return
        severity, why = self._severity(m)
        if severity is None:
            return
        member = ref.qualified.rpartition(".")[2]
        message = f"`{ref.dotted}` {_status(m, severity, 'AttributeError', why)}"
        if m.new is None:
            if ref.call is not None and member == "get_layer_policy":
                self._layer_policy(ref, message, severity)
            else:
                self.report(ref.node, message + "; no mechanical replacement", None, severity)
            return
        spelled = self._respell(ref.dotted, ref.head_target, m.new, renamed)
        new_member = m.new.rpartition(".")[2]
        if ref.call is not None and new_member in ("Policy", "LossScaleOptimizer"):
            self._call(ref, m, spelled, message, severity)
            return
        if spelled is None:
            self.report(ref.node, message, None, severity)
            return
        expr, imports, removals = spelled
        if self.ctx.module.code_for_node(expr) == ref.dotted:
            return  # only its import changes, and that has its own finding
        text = self.ctx.module.code_for_node(expr)
        self.report(ref.node, f"{message}; use `{text}`",
                    Fix({ref.node: expr}, Safety.SAFE, imports, removals), severity)

    def _layer_policy(self, ref: _Ref, message: str, severity: Severity) -> None:
        call = ref.call
        assert call is not None
        layer = positional_or_keyword(call, 0, "layer")
        fix = None
        if isinstance(layer, (cst.Name, cst.Attribute, cst.Subscript, cst.Call)) and len(call.args) == 1:
            fix = Fix({call: cst.Attribute(value=layer, attr=cst.Name("dtype_policy"))}, Safety.SAFE)
        self.report(call, f"{message}; use `layer.dtype_policy`", fix, severity)

    def _call(self, ref: _Ref, m: Migration, spelled, message: str, severity: Severity) -> None:
        """Policy / LossScaleOptimizer: rename, and move the ``loss_scale`` argument."""
        call = ref.call
        assert call is not None
        member = m.new.rpartition(".")[2]  # type: ignore[union-attr]
        args = list(call.args)
        index = arg_index(args, 1, "loss_scale")
        safety, note = Safety.SAFE, ""
        removals: Tuple[Import, ...] = ()
        if index is not None:
            value = args[index].value
            literal = self.ctx.values.values(value, None)
            if member == "Policy":
                note = "; the policy no longer carries a loss scale (compile() adds one under mixed_float16)"
                keeps = literal in (frozenset({"auto"}), frozenset({"dynamic"}))
                if literal == frozenset({None}):
                    name = positional_or_keyword(call, 0, "name")
                    names = self.ctx.values.values(name, None) if name is not None else None
                    if names and "mixed_float16" not in names:
                        keeps = True  # compile() scales only under mixed_float16: nothing changes
                    else:  # an explicit opt-out that no current Policy argument keeps
                        # No fix: dropping it switches loss scaling on, and the usual
                        # ``if loss_scale: Policy(n) else: Policy(n, loss_scale=None)``
                        # would end with the same call in both arms.
                        self.report(call, message + "; `loss_scale=None` turned loss scaling off, which "
                                    "the current Policy cannot do: compile() would wrap the optimizer in a "
                                    "LossScaleOptimizer; keep it off by hand (a LossScaleOptimizer with "
                                    "dynamic=False, initial_scale=1)", None, severity)
                        return
                if not keeps:
                    safety = Safety.UNSAFE
                args = without_arg(args, index)
            else:
                moved = self._loss_scale_args(value, literal)
                if moved is None:
                    self.report(call, message + "; move its loss_scale argument by hand", None, severity)
                    return
                if moved:
                    safety = Safety.UNSAFE
                    note = "; `loss_scale` became `dynamic=`/`initial_scale=`/`dynamic_growth_steps=`"
                    args = replace_arg(args, index, moved)
                else:
                    args = without_arg(args, index)
                removals = self._consumed_imports(ref)
        if spelled is None:
            self.report(call, message + note, None, severity)
            return
        expr, imports, drop = spelled
        new_call = call.with_changes(func=expr, args=args)
        text = self.ctx.module.code_for_node(expr)
        if text == ref.dotted and index is None:
            return  # only its import changes, and that has its own finding
        use = f"; use `{text}`" if text != ref.dotted else ""
        self.report(call, f"{message}{use}{note}",
                    Fix({call: new_call}, safety, imports, drop + removals), severity)

    def _loss_scale_args(self, value: cst.BaseExpression, literal) -> Optional[List[Tuple[str, cst.BaseExpression]]]:
        """Keyword arguments of the current LossScaleOptimizer for an old ``loss_scale``.

        [] when the old value was the default ("dynamic"); None when there is no
        equivalent (a fixed scale under Keras 3, a custom multiplier, a LossScale object).
        """
        if literal == frozenset({"dynamic"}):
            return []
        fixed_false = cst.Name("False")
        if literal is not None and len(literal) == 1 and isinstance(next(iter(literal)), (int, float)):
            if self.facts.keras_version == 3:
                return None  # Keras 3 has no fixed loss scale
            return [("dynamic", fixed_false), ("initial_scale", value)]
        if isinstance(value, cst.Call):
            kind = {q.rpartition(".")[2] for q in self.names.qualified(value.func)} & set(_LOSS_SCALE_CLASSES)
            if kind == {"FixedLossScale"}:
                scale = positional_or_keyword(value, 0, "loss_scale_value")
                if scale is None or self.facts.keras_version == 3 or len(value.args) != 1:
                    return None
                return [("dynamic", fixed_false), ("initial_scale", scale)]
            if kind == {"DynamicLossScale"}:
                out = []
                initial = positional_or_keyword(value, 0, "initial_loss_scale")
                period = positional_or_keyword(value, 1, "increment_period")
                multiplier = positional_or_keyword(value, 2, "multiplier")
                if multiplier is not None and self.ctx.values.values(multiplier, None) not in (frozenset({2}), frozenset({2.0})):
                    return None
                if any(a.star for a in value.args):
                    return None
                if initial is not None:
                    out.append(("initial_scale", initial))
                if period is not None:
                    out.append(("dynamic_growth_steps", period))
                return out
        return None

    def _consumed_imports(self, ref: _Ref) -> Tuple[Import, ...]:
        """Imports of a DynamicLossScale/FixedLossScale class the fix no longer uses."""
        out: List[Import] = []
        for head, target in ref.consumed:
            spec = self._specs.get(head)
            if spec is None or spec[1] is None:
                continue
            out.append(spec)
            m = migrate(target)
            if m is not None and m.new is not None:
                module, _, obj = m.new.rpartition(".")
                out.append((module, obj, spec[2]))
        return tuple(out)


def _aliases(node: ImportNode) -> Iterator[Alias]:
    """(full dotted name, local name, asname or None) for each imported name."""
    if isinstance(node, cst.ImportFrom):
        if node.relative or node.module is None or isinstance(node.names, cst.ImportStar):
            return
        module = dotted_name(node.module)
        for alias in node.names:
            name = dotted_name(alias.name) or ""
            asname = alias.asname.name.value if alias.asname and isinstance(alias.asname.name, cst.Name) else None
            yield f"{module}.{name}", asname or name, asname
    else:
        for alias in node.names:
            full = dotted_name(alias.name) or ""
            asname = alias.asname.name.value if alias.asname and isinstance(alias.asname.name, cst.Name) else None
            yield full, asname or full.split(".")[0], asname


def _if_arms(node: cst.If) -> List[cst.CSTNode]:
    """The bodies of an ``if``, its ``elif``s and its ``else``."""
    arms: List[cst.CSTNode] = [node.body]
    orelse = node.orelse
    while isinstance(orelse, cst.If):
        arms.append(orelse.body)
        orelse = orelse.orelse
    if isinstance(orelse, cst.Else):
        arms.append(orelse.body)
    return arms


def _exits(arm: cst.CSTNode) -> bool:
    """An ``if`` arm whose last statement returns or raises."""
    body = arm.body if isinstance(arm, (cst.IndentedBlock, cst.SimpleStatementSuite)) else ()
    if not body:
        return False
    last = body[-1]
    small = last.body[-1:] if isinstance(last, cst.SimpleStatementLine) else [last]
    return bool(small) and isinstance(small[-1], (cst.Return, cst.Raise))


def _has_else(node: cst.If) -> bool:
    orelse = node.orelse
    while isinstance(orelse, cst.If):
        orelse = orelse.orelse
    return isinstance(orelse, cst.Else)


def _current_api(qualified: str) -> bool:
    """A current mixed-precision API (``keras.mixed_precision.LossScaleOptimizer``,
    ``keras.config.set_dtype_policy``), the target of some migration."""
    parts = qualified.split(".")
    return "experimental" not in parts and (
        "mixed_precision" in parts[:-1] and parts[-1] in _CURRENT_MEMBERS
        or parts[-1] == "set_dtype_policy")


def _names_in(expr: cst.CSTNode):
    """Identifiers and string contents in an ``if`` test (``tf.__version__``, ``hasattr``)."""
    if isinstance(expr, cst.Name):
        yield expr.value
    elif isinstance(expr, cst.SimpleString):
        yield expr.value
    elif isinstance(expr, cst.Attribute):
        yield expr.attr.value
        yield from _names_in(expr.value)
    elif isinstance(expr, cst.Call):
        yield from _names_in(expr.func)
        for arg in expr.args:
            yield from _names_in(arg.value)
    elif isinstance(expr, cst.Comparison):
        yield from _names_in(expr.left)
        for target in expr.comparisons:
            yield from _names_in(target.comparator)
    elif isinstance(expr, cst.BooleanOperation):
        yield from _names_in(expr.left)
        yield from _names_in(expr.right)
    elif isinstance(expr, cst.UnaryOperation):
        yield from _names_in(expr.expression)
    elif isinstance(expr, cst.Subscript):
        yield from _names_in(expr.value)


def _v(version: Tuple[int, int]) -> str:
    return f"{version[0]}.{version[1]}"


def _status(m: Migration, severity: Severity, failure: str, why: str = "") -> str:
    """``was removed in TF 2.9 (AttributeError; TensorFlow 2.12 pinned in setup.py:9)``."""
    if severity == "error":
        return f"was removed in TF {_v(m.removed)} ({failure}{'; ' + why if why else ''})"
    return f"is deprecated since TF {_v(m.since)} and removed in TF {_v(m.removed)}{f' ({why})' if why else ''}"
