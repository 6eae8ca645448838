"""The walk the tensor dtype inference rests on: block paths, operation sites,
returns and calls recorded in one pass, and which binding of a name (or of a ``self``
attribute) reaches a use."""

from __future__ import annotations

from contextlib import contextmanager
from typing import Dict, FrozenSet, Iterator, List, Optional, Set, Tuple

import libcst as cst

from mplint.core.positions import positions_of
from mplint.core.walker import child_nodes

from mplint.analysis.compute_regions import ComputeRegions, Region
from mplint.analysis.tensor_calls import AUG_ARITHMETIC, combining_layout, operand_expressions
from mplint.analysis.tensor_branches import Arm, correlated, rebound, stable_test
from mplint.analysis.tensor_sites import Env, ForeignContext, OperationSite, Path, Where
from mplint.analysis.tensor_syntax import is_none, is_self, self_attribute_path
from mplint.rule.check import Analysis, Context
from mplint.semantic.decided_tests import never_runs
from mplint.semantic.scopes import Binding, Location, Scope


class TensorWalk(Analysis):
    """Records sites, block paths, returns and calls in the walk; the subclasses
    infer kinds from them afterwards."""

    requires = (ComputeRegions,)

    def __init__(self, ctx: Context) -> None:
        super().__init__(ctx)
        self._blocks: List[int] = []
        self._paths: Dict[cst.CSTNode, Path] = {}
        self._not_root: set = set()
        #: arithmetic arguments of combining calls -> the call (its context)
        self._arg_of: Dict[cst.CSTNode, Tuple[cst.Call, Where]] = {}
        self.sites: List[OperationSite] = []
        #: sites entered and not yet left
        self._open: Dict[cst.CSTNode, OperationSite] = {}
        self._kinds: Dict[Tuple[cst.CSTNode, Env], Optional[str]] = {}
        #: kinds the depth limit cut short, by the depth they were asked at (unknown
        #: there and deeper, asked again from a shallower depth); whether the kind being
        #: inferred was cut short
        self._cut_kinds: Dict[Tuple[cst.CSTNode, Env], int] = {}
        self._cut = False
        self._regions: Dict[int, Optional[Region]] = {}
        #: whether the ``if`` arms around a place can run, by scope and arms (see :meth:`region`)
        self._arms_run: Dict[Tuple[int, Tuple[Tuple[int, str], ...]], bool] = {}
        #: the parameters' kinds of the helper whose code is being judged (see ``Env``)
        self._env: Env = ()
        #: the arguments envs point at: the expression, where, and the caller's env
        self._arguments: List[Tuple[cst.BaseExpression, Where, Env]] = []
        self._call_envs: Dict[Tuple[cst.Call, Env], Env] = {}
        #: ``return`` values by the id of their function scope
        self._returns: Dict[int, List[Tuple[cst.BaseExpression, Where]]] = {}
        #: ``self.<attr>.append(value)`` by (id of the class scope, attr)
        self._appends: Dict[Tuple[int, str], List[Tuple[cst.BaseExpression, Where]]] = {}
        #: ``self.<method>(...)`` calls: the method's name and the scope calling it
        self._self_calls: Dict[str, List[Scope]] = {}
        #: calls that may run a function or a layer of this file (``helper(x)``,
        #: ``self.attn(x, mask=m)``), and the callers found for each function scope
        self._calls: List[Tuple[cst.Call, Where]] = []
        self._callers: Optional[Dict[int, List[Tuple[cst.Call, Where, int]]]] = None
        #: calls of a function through a module's name (``utils.dot_product(x, y)``), which
        #: other modules' analyses look up (``tensor_callers``)
        self._dotted_calls: List[Tuple[cst.Call, Where]] = []
        #: what calls in other modules hand each function (by the id of its scope)
        self._foreign: Dict[int, List[ForeignContext]] = {}
        self._functional_callers: Dict[int, Optional[str]] = {}
        #: the envs a function's callers give it, by (id of its scope, calls followed up)
        self._contexts: Dict[Tuple[int, int], List[Env]] = {}
        #: ``if``/``elif``/``else`` chains that end in ``else``: (the chain's own block
        #: path, the ids of its arms' blocks) by the id of the first ``If``; and the
        #: chain each arm's block belongs to
        self._chains: Dict[int, Tuple[Path, Tuple[int, ...]]] = {}
        self._arm_of: Dict[int, int] = {}
        self._elifs: Set[int] = set()
        #: ``if`` statements with one arm and no ``else``, by the id of that arm's block
        self._guards: Dict[int, cst.If] = {}
        #: the arms of ``if`` (and ``if``/``else``) statements with a stable test, by
        #: the id of the arm's block (see :mod:`tensor_branches`); what each function
        #: assigns, by the id of its ``def``
        self._test_arms: Dict[int, Arm] = {}
        self._rebound: Dict[int, FrozenSet[str]] = {}
        #: ``map(lambda t: ..., (q, k, v))`` by the id of its lambda: the call and where
        self._maps: Dict[int, Tuple[cst.Call, Where]] = {}
        #: the ``global``/``nonlocal`` names of each function (by id of its ``def``)
        self._declared: Dict[int, FrozenSet[str]] = {}

    @property
    def regions(self) -> ComputeRegions:
        return self.ctx.get(ComputeRegions)

    def here(self) -> Where:
        return Where(self.ctx.scopes.location(), tuple(self._blocks))

    def visit_IndentedBlock(self, node: cst.IndentedBlock) -> None:
        self._blocks.append(id(node))

    def leave_IndentedBlock(self, node: cst.IndentedBlock) -> None:
        self._blocks.pop()

    def visit_SimpleStatementSuite(self, node: cst.SimpleStatementSuite) -> None:
        self._blocks.append(id(node))

    def leave_SimpleStatementSuite(self, node: cst.SimpleStatementSuite) -> None:
        self._blocks.pop()

    def visit_If(self, node: cst.If) -> None:
        if id(node) in self._elifs:
            return  # an ``elif``: recorded with its chain
        tested = stable_test(node.test, self.ctx.module.code_for_node)
        if tested is not None and not isinstance(node.orelse, cst.If):
            self._test_arms[id(node.body)] = tested
            if isinstance(node.orelse, cst.Else):
                self._test_arms[id(node.orelse.body)] = (tested[0], not tested[1])
        arms: List[int] = []
        current: cst.If = node
        while True:
            arms.append(id(current.body))
            orelse = current.orelse
            if isinstance(orelse, cst.If):
                self._elifs.add(id(orelse))
                current = orelse
                continue
            if isinstance(orelse, cst.Else):
                arms.append(id(orelse.body))
                self._chains[id(node)] = (tuple(self._blocks), tuple(arms))
                for arm in arms:
                    self._arm_of[arm] = id(node)
            elif current is node:
                self._guards[id(node.body)] = node
            return

    def _record_path(self, node: cst.CSTNode) -> None:
        self._paths[node] = tuple(self._blocks)

    # a ``for`` statement binds its target for the body: the body is inside its path
    visit_Assign = visit_AnnAssign = visit_For = _record_path

    def _open_site(self, node: cst.CSTNode) -> None:
        self._open[node] = OperationSite(node, self.here())

    def _close_site(self, node: cst.CSTNode) -> None:
        # sites are listed as they are left: an operation nested in another's
        # arguments (``K.sum(x * m) / K.sum(m)``) comes first, as it runs first
        site = self._open.pop(node, None)
        if site is not None:
            self.sites.append(site)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._record_path(node)
        if isinstance(node.operator, AUG_ARITHMETIC):
            self._open_site(node)

    def leave_AugAssign(self, node: cst.AugAssign) -> None:
        self._close_site(node)

    def visit_BinaryOperation(self, node: cst.BinaryOperation) -> None:
        for child in (node.left, node.right):
            self._not_root.add(child)
        if node not in self._not_root:
            self._open_site(node)

    def leave_BinaryOperation(self, node: cst.BinaryOperation) -> None:
        self._close_site(node)

    def leave_Call(self, node: cst.Call) -> None:
        self._close_site(node)

    def visit_UnaryOperation(self, node: cst.UnaryOperation) -> None:
        if node in self._not_root:
            self._not_root.add(node.expression)

    def visit_Return(self, node: cst.Return) -> None:
        if node.value is not None:
            where = self.here()
            self._returns.setdefault(id(where.loc.scope), []).append((node.value, where))

    def visit_Lambda(self, node: cst.Lambda) -> None:
        where = self.here()
        if where.loc.scope.node is node:  # its body is what it returns
            self._returns.setdefault(id(where.loc.scope), []).append((node.body, where))

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if isinstance(func, cst.Name) or (isinstance(func, cst.Attribute) and is_self(func.value)):
            self._calls.append((node, self.here()))
        elif isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name):
            self._dotted_calls.append((node, self.here()))  # ``utils.dot_product(x, y)``
        if isinstance(func, cst.Name) and func.value == "map" and len(node.args) == 2 \
                and isinstance(node.args[0].value, cst.Lambda) and self.ctx.scopes.current.lookup("map", None) is None:
            self._maps[id(node.args[0].value)] = (node, self.here())
        if isinstance(func, cst.Attribute):
            owner = func.value
            if is_self(owner):
                self._self_calls.setdefault(func.attr.value, []).append(self.ctx.scopes.current)
            elif (func.attr.value == "append" and len(node.args) == 1 and isinstance(owner, cst.Attribute)
                  and is_self(owner.value)):
                cls = self.ctx.scopes.current.enclosing_class()
                if cls is not None:
                    self._appends.setdefault((id(cls), owner.attr.value), []).append((node.args[0].value, self.here()))
        if self.combining(node) is None:
            return
        where = self.here()
        self._open[node] = OperationSite(node, where)
        for arg in node.args:
            if isinstance(arg.value, cst.BinaryOperation):
                self._arg_of[arg.value] = (node, where)

    def combining(self, call: cst.Call) -> Optional[Tuple[str, bool]]:
        """(operand layout, whether mixed dtypes raise) for an op combining tensors."""
        return combining_layout(self.ctx.names.resolve(call.func))

    def operands(self, call: cst.Call) -> List[cst.BaseExpression]:
        """The tensor operands of a combining call (positional arguments)."""
        found = self.combining(call)
        return [] if found is None else operand_expressions(call, found[0])

    def kind(self, expr: cst.BaseExpression, where: Where, depth: int = 0) -> Optional[str]:
        """LOW, F32 or None (unknown): inferred by :class:`DtypeInference`."""
        raise NotImplementedError

    @contextmanager
    def _under(self, env: Env) -> Iterator[None]:
        """Judge code with a helper's parameters bound as ``env`` says."""
        saved, self._env = self._env, env
        try:
            yield
        finally:
            self._env = saved

    def reaching(self, name: cst.Name, where: Where) -> Tuple[Optional[Binding], bool]:
        """The binding of a name at ``where`` and whether it certainly reaches it."""
        binding = where.loc.lookup(name.value)
        if binding is None and where.loc.scope.kind == "lambda":
            # lambda parameters are bound at the lambda's own statement order
            binding = where.loc.scope.lookup(name.value, None)
        if binding is None:
            return None, False
        if binding.kind == "param":
            return binding, True
        path = self._paths.get(binding.node)
        if path is None:
            return binding, False
        return binding, where.path[:len(path)] == path

    def arms_run(self, loc: Location) -> bool:
        """Whether the ``if`` arms around ``loc`` may run (:func:`decided_tests.never_runs`:
        an arm whose test every call decides the other way does not), cached per arms."""
        if not loc.branches:
            return True
        arms = (id(loc.scope), tuple((branch, arm) for branch, arm, _ in loc.branches))
        if arms not in self._arms_run:
            self._arms_run[arms] = not never_runs(loc, self.ctx.values)
        return self._arms_run[arms]

    def candidates(self, name: cst.Name, where: Where) -> List[Binding]:
        """The bindings of a name that may reach ``where``, latest first.

        After ``x = a`` then ``if c: x = b``, both may reach a later use; the list
        ends at the first binding that certainly reaches (same or enclosing block).
        Empty when that cannot be worked out (then the name's kind is unknown).
        """
        binding, reaching = self.reaching(name, where)
        if binding is None:
            return []
        if reaching:
            return [binding]
        scope = binding.scope
        if scope is None or scope is not where.loc.scope:
            return []
        earlier = [b for b in scope.bindings.get(name.value, []) if b.order <= binding.order]
        out: List[Binding] = []
        for candidate in reversed(earlier):
            if candidate.branches and candidate.kind != "param" and not self.arms_run(candidate.location()):
                continue  # bound in an arm no run takes (``if self.norm is not None:``, never built)
            path = self._paths.get(candidate.node)
            same_test = self._same_test(scope, path, where.path) if path is not None else None
            if same_test is False:
                continue  # in the other arm of an ``if`` on the same test as the use's
            out.append(candidate)
            if candidate.kind == "param":
                return out
            if path is None:
                return []
            if same_test:
                return out  # made in an arm that runs whenever the use's arm does
            if where.path[:len(path)] == path or self._every_arm_binds(out, where):
                return out
        # every binding of a function's local name may reach, none certainly: on a path
        # that binds none of them the use raises UnboundLocalError, so when it runs its
        # value is one of them (``if add: e = ...`` ``elif mul: e = ...``)
        return out if scope.kind == "function" and not self._declared_elsewhere(scope, name.value) else []

    def _same_test(self, scope: Scope, binding_path: Path, use_path: Path) -> Optional[bool]:
        """:func:`tensor_branches.correlated` for a function's own stable tests (none
        of which it rebinds)."""
        node = scope.node
        if not isinstance(node, cst.FunctionDef) or not any(b in self._test_arms for b in binding_path):
            return None
        if id(node) not in self._rebound:
            self._rebound[id(node)] = rebound(node.body, self.ctx.module.code_for_node)
        return correlated(self._test_arms, binding_path, use_path, self._rebound[id(node)])

    def _declared_elsewhere(self, scope: Scope, name: str) -> bool:
        """A ``global``/``nonlocal`` name of the function: bound outside it too."""
        node = scope.node
        if not isinstance(node, cst.FunctionDef):
            return True
        if id(node) not in self._declared:
            names: Set[str] = set()
            todo: List[cst.CSTNode] = [node.body]
            while todo:
                current = todo.pop()
                if isinstance(current, (cst.Global, cst.Nonlocal)):
                    names |= {item.name.value for item in current.names}
                todo.extend(child_nodes(current))
            self._declared[id(node)] = frozenset(names)
        return name in self._declared[id(node)]

    def _every_arm_binds(self, bindings: List[Binding], where: Where) -> bool:
        """Whether ``bindings`` bind the name in every arm of an ``if``/``elif``/``else``
        chain that encloses ``where``'s block (each arm's own block, not deeper): after
        ``if c: x = a`` ``else: x = b`` one of them certainly reaches."""
        arms_bound: Dict[int, Set[int]] = {}
        for binding in bindings:
            path = self._paths.get(binding.node)
            chain = self._arm_of.get(path[-1]) if path else None
            if chain is not None and path is not None and path[:-1] == self._chains[chain][0]:
                arms_bound.setdefault(chain, set()).add(path[-1])
        for chain, bound in arms_bound.items():
            at, arms = self._chains[chain]
            if where.path[:len(at)] == at and bound == set(arms):
                return True
        return False

    def assigned(self, name: cst.Name, where: Where, kinds: Optional[Tuple[str, ...]] = ("assign",)
                 ) -> Optional[Tuple[cst.BaseExpression, Where]]:
        """The value the one binding that certainly reaches ``name`` assigns, and where
        (None for a parameter, a loop target, an unpacking, or a binding of another of
        ``kinds``; any kind when None)."""
        binding, reaching = self.reaching(name, where)
        if binding is None or not reaching or binding.value is None \
                or (kinds is not None and binding.kind not in kinds):
            return None
        at = self.binding_where(binding)
        return None if at is None else (binding.value, at)

    def binding_where(self, binding: Binding) -> Optional[Where]:
        if binding.scope is None:
            return None
        return Where(binding.location(), self._paths.get(binding.node, ()))

    def attribute_values(self, expr: cst.BaseExpression, where: Where
                         ) -> Optional[List[Tuple[cst.BaseExpression, Where]]]:
        """:meth:`_attribute_values`, for the analyses that follow values out of the file."""
        return self._attribute_values(expr, where)

    def _attribute_values(self, expr: cst.BaseExpression, where: Where
                          ) -> Optional[List[Tuple[cst.BaseExpression, Where]]]:
        """What the methods of the enclosing class assign to ``self.<attr>``, and where.

        None when it is never assigned in the class or any assignment is not a plain
        one (``self.x += ...``, unpacking). ``self.x = None`` (a value not made yet,
        or an optional one a ``call`` checks for) is left out.
        """
        if not (isinstance(expr, cst.Attribute) and is_self(expr.value)):
            return None
        cls = where.loc.scope.enclosing_class()
        if cls is None:
            return None
        bindings = cls.attributes.get(expr.attr.value, [])
        if not bindings:
            return None
        out: List[Tuple[cst.BaseExpression, Where]] = []
        for binding in self._surviving(bindings, where):
            at = self.binding_where(binding)
            value = binding.value if binding.value is not None else _unpacked_item(binding.node, expr.attr.value)
            if binding.kind != "assign" or value is None or at is None:
                return None
            if not is_none(value):
                out.append((value, at))
        return out or None

    def _surviving(self, bindings: List[Binding], where: Where) -> List[Binding]:
        """The assignments of one ``self`` attribute that another method can see: one
        overwritten later in the same block of the same method
        (``self.activation = activation`` then ``= activations.get(activation)``) is
        dead once that method returns."""
        def block(binding: Binding) -> Tuple[object, Path, object]:
            return (binding.scope, self._paths.get(binding.node, ()), binding.branches)

        return [b for b in bindings if b.scope is where.loc.scope or not any(
            other.order > b.order and block(other) == block(b) for other in bindings)]

    def _self_attribute(self, expr: cst.Attribute, where: Where) -> Optional[Binding]:
        """The single assignment of ``self.<attr>`` in the enclosing class, if there is one."""
        if not (isinstance(expr.value, cst.Name) and expr.value.value == "self"):
            return None
        cls = where.loc.scope.enclosing_class()
        if cls is None:
            return None
        bindings = cls.attributes.get(expr.attr.value, [])
        if len(bindings) != 1 or bindings[0].kind != "assign":
            return None
        return bindings[0]

    def calls(self) -> List[Tuple[cst.Call, Where]]:
        """The calls that may run a function or a layer of the file or of another module."""
        return list(self._calls)

    def lines_of(self, nodes: List[cst.CSTNode]) -> Dict[cst.CSTNode, int]:
        """The first line of each node (none in a notebook, whose lines count per cell)."""
        if not nodes or self.ctx.path.endswith(".ipynb") or not self.ctx.text:
            return {}
        return {node: found.start.line for node, found in positions_of(self.ctx.module, self.ctx.text, nodes).items()}

    def calls_spelled(self, name: str) -> List[Tuple[cst.Call, Where]]:
        """The calls whose function is spelled ``name``, ``module.name`` or ``self.name``
        (what a call site of another module's summary names)."""
        return [(call, where) for call, where in [*self._calls, *self._dotted_calls]
                if (call.func.value if isinstance(call.func, cst.Name)
                    else call.func.attr.value if isinstance(call.func, cst.Attribute) else None) == name]


def _unpacked_item(node: cst.CSTNode, attr: str) -> Optional[cst.BaseExpression]:
    """The item a tuple written out gives ``self.<attr>`` in an unpacking
    (``self.wq, self.wk = None, None``); None for any other value."""
    if not isinstance(node, cst.Assign):
        return None
    for target in node.targets:
        value: cst.BaseExpression = node.value
        path = self_attribute_path(target.target, attr)
        if path is None:
            continue
        for index in path:
            if not isinstance(value, (cst.Tuple, cst.List)) or index >= len(value.elements) \
                    or any(isinstance(e, cst.StarredElement) for e in value.elements[:index + 1]):
                return None
            value = value.elements[index].value
        return value
    return None

