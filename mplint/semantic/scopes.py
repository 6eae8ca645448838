"""Scopes and name bindings, recorded in the same walk that runs the checks.

Rules follow values through variables (``x = Dense(10)(x); outputs = x``), find an
optimizer's creation from its use, or read a constant's definition. The tracker
keeps, per scope, every simple binding of a name in statement order, so a check
can ask "what did ``x`` hold just before this statement?" after the walk is over.
"""

from __future__ import annotations


import bisect
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable, Dict, FrozenSet, Iterator, List, Mapping, Optional, Sequence, Set, Tuple, Union

import libcst as cst

from mplint.core.walker import Walker
from mplint.semantic.names import NameResolver, dotted_name, record_alias_assignment
from mplint.semantic.visibility import is_private_name
from mplint.semantic.test_modules import TRAINING_CALL, is_test_path
from mplint.semantic.vocabulary import (
    KERNEL_KILL_FUNCTION, KERNEL_RESET_BUILTINS, KERNEL_RESET_FUNCTIONS, KERNEL_SHUTDOWN_METHOD, OWN_PROCESS_FUNCTION,
)

if TYPE_CHECKING:
    from mplint.semantic.public_reach import PublicReach

ScopeNode = Union[cst.Module, cst.FunctionDef, cst.ClassDef, cst.Lambda]

#: (id of an ``if`` statement, "body" or "else", its test): where a statement sits
Branch = Tuple[int, str, cst.BaseExpression]
Branches = Tuple[Branch, ...]


def _equalities(test: cst.BaseExpression) -> Dict[str, FrozenSet[object]]:
    """What a test needs of named values: ``flag == "a" and mode == "b"`` ->
    {"flag": {"a"}, "mode": {"b"}}; ``mode == "a" or mode == "b"`` -> {"mode": {"a", "b"}}
    (a key only one side of an ``or`` names needs nothing)."""
    if isinstance(test, cst.BooleanOperation):
        first, second = _equalities(test.left), _equalities(test.right)
        if isinstance(test.operator, cst.And):
            out = dict(first)
            for name, values in second.items():
                out[name] = out[name] & values if name in out else values
            return out
        return {name: first[name] | second[name] for name in first.keys() & second.keys()}
    if (
        isinstance(test, cst.Comparison) and len(test.comparisons) == 1
        and isinstance(test.comparisons[0].operator, cst.Equal)
    ):
        left, right = test.left, test.comparisons[0].comparator
        if isinstance(left, (cst.SimpleString, cst.Integer)):
            left, right = right, left
        key = dotted_name(left) if isinstance(left, (cst.Name, cst.Attribute)) else None
        if key is None and isinstance(left, cst.Subscript):
            key = cst.Module([]).code_for_node(left)
        if key is not None and isinstance(right, (cst.SimpleString, cst.Integer)):
            return {key: frozenset({right.evaluated_value})}
    return {}


def exclusive(a: Branches, b: Branches) -> bool:
    """True when at most one of two statements can run: they sit in different arms
    of one ``if``, or under tests that need one value to equal different constants
    (``if impl == "keras": ...`` and later ``if impl == "rewrite": ...``; flags of one
    mutually exclusive argparse group read as such a value, see :class:`_ExclusiveFlags`),
    or in the body of one ``if flag:`` and the ``else`` of another."""
    arms = {key: arm for key, arm, _ in a}
    if any(key in arms and arms[key] != arm for key, arm, _ in b):
        return True
    needs_a: Dict[str, FrozenSet[object]] = {}
    for _, arm, test in a:
        if arm == "body":
            for key, values in _equalities(test).items():
                needs_a[key] = needs_a[key] & values if key in needs_a else values
    for _, arm, test in b:
        if arm == "body":
            for key, values in _equalities(test).items():
                if key in needs_a and not needs_a[key] & values:
                    return True
    truth_a = _truths(a)
    return any(truth_a.get(key, value) != value for key, value in _truths(b).items())


def _truths(branches: Branches) -> Dict[str, bool]:
    """What the arms need of plain flags: ``if amp:`` (``if not amp:``) and its ``else``
    -> {"amp": True} ({"amp": False}): a statement in the body of one ``if amp:`` and
    one in the ``else`` of a later ``if amp:`` never both run."""
    out: Dict[str, bool] = {}
    for _, arm, test in branches:
        wanted = arm == "body"
        if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
            test, wanted = test.expression, not wanted
        key = dotted_name(test) if isinstance(test, (cst.Name, cst.Attribute)) else None
        if key is not None:
            out[key] = wanted
    return out


@dataclass
class Binding:
    """``name`` bound at statement ``order``; ``value`` is the assigned expression
    when it is a plain single-target assignment, else None (unknown)."""

    name: str
    order: int
    value: Optional[cst.BaseExpression]
    node: cst.CSTNode
    kind: str  # assign | annassign | augassign | param | def | class | for | with
    scope: Optional["Scope"] = None
    branches: Branches = ()
    #: the ``try`` statements it is made in, each with its part: 0 the body (or ``else``),
    #: k the k-th ``except`` handler (a binding in a handler never replaces one in the
    #: body or in another handler: either may be the one that ran)
    tries: Tuple[Tuple[int, int], ...] = ()
    #: for a target of ``a, b = value`` whose value is no tuple written out: the value and
    #: the index of the element it takes (``self.g_opt, self.d_opt = optimizers``: 1)
    element: Optional[Tuple[cst.BaseExpression, int]] = None

    def location(self) -> "Location":
        """Where the binding was made (to evaluate its value there)."""
        assert self.scope is not None
        return Location(self.scope, self.order, self.branches)


@dataclass
class Scope:
    node: ScopeNode
    parent: Optional["Scope"]
    kind: str  # module | function | class | lambda
    bindings: Dict[str, List[Binding]] = field(default_factory=dict)
    #: ``self.<attr> = value`` assignments made in the methods of a class scope
    attributes: Dict[str, List[Binding]] = field(default_factory=dict)
    children: List["Scope"] = field(default_factory=list)
    #: the statement order where the scope's definition stands in its parent
    order: int = 0
    #: a module's top-level kernel resets (``exit()`` in a notebook cell), by order: each
    #: starts a new run of the program, which sees no name bound before it
    resets: List[int] = field(default_factory=list)

    def run_of(self, order: int) -> int:
        return run_of(self.resets, order)

    def top_order(self) -> Optional[int]:
        """The order of the module-level statement holding this scope (None for a module)."""
        scope: Optional[Scope] = self
        while scope is not None and scope.parent is not None and scope.parent.kind != "module":
            scope = scope.parent
        return scope.order if scope is not None and scope.parent is not None else None

    def bind(self, binding: Binding) -> None:
        binding.scope = self
        self.bindings.setdefault(binding.name, []).append(binding)

    def lookup(self, name: str, order: Optional[int] = None,
               branches: Branches = ()) -> Optional[Binding]:
        """The binding of ``name`` visible at ``order`` (None: after the scope ran).

        In this scope, the latest binding made before ``order`` that can have run
        before it (not one in the other arm of an ``if``); otherwise the last binding
        in the nearest enclosing non-class scope, as Python resolves it when the inner
        function runs.
        """
        return self._lookup(name, order, branches, None)

    def _lookup(self, name: str, order: Optional[int], branches: Branches,
                origin: Optional[int]) -> Optional[Binding]:
        # ``origin``: for a module's lookup on behalf of an inner scope, the order of the
        # module-level statement holding that scope (its run decides what it sees)
        found = self.bindings.get(name)
        if found and self.resets:
            at = order if order is not None else origin
            if at is not None:
                found = [b for b in found if self.run_of(b.order) == self.run_of(at)]
        if found:
            if order is None:
                return found[-1]
            earlier = [b for b in found if b.order < order
                       and not (branches and b.branches and exclusive(b.branches, branches))]
            if earlier:
                return earlier[-1]
            if self.kind != "module":
                return None
        child: Scope = self
        parent = self.parent
        while parent is not None and parent.kind == "class":
            child, parent = parent, parent.parent
        if parent is None:
            return None
        return parent._lookup(name, None, (), child.order if parent.parent is None else origin)

    def reaching(self, name: str, order: int, branches: Branches = ()) -> List[Binding]:
        """Every binding of ``name`` whose value may be the one seen at ``order``.

        :meth:`lookup` gives the latest binding; after an ``if``/``else`` that binds
        the name in both arms (``policy = Policy("mixed_bfloat16")`` on a TPU,
        ``Policy("mixed_float16")`` otherwise) either arm's value may arrive. A
        binding is replaced by a later one that runs whenever it ran (same arms, or
        no arm the use is not in), or by later ones in both arms of one ``if``. Only
        this scope's bindings: otherwise the one :meth:`lookup` finds.
        """
        found = [b for b in self.bindings.get(name, ()) if b.order < order
                 and not (branches and b.branches and exclusive(b.branches, branches))
                 and (not self.resets or self.run_of(b.order) == self.run_of(order))]
        if not found:
            single = self.lookup(name, order, branches)
            return [single] if single is not None else []
        at = set(branches)
        out: List[Binding] = []
        for i, binding in enumerate(found):
            later = [b for b in found[i + 1:] if not _other_try_part(binding, b)]
            covered = set(binding.branches) | at
            if any(set(b.branches) <= covered for b in later):
                continue  # rebound on every path from here to the use
            if _both_arms(later, covered):
                continue
            out.append(binding)
        return out

    def all_descendants(self) -> Iterator["Scope"]:
        """Every scope nested in this one, at any depth."""
        stack = list(reversed(self.children))
        while stack:
            scope = stack.pop()
            yield scope
            stack.extend(reversed(scope.children))

    def enclosing_class(self) -> Optional["Scope"]:
        scope: Optional[Scope] = self
        while scope is not None:
            if scope.kind == "class":
                return scope
            scope = scope.parent
        return None


def _other_try_part(earlier: Binding, later: Binding) -> bool:
    """``later`` is made in another part of a ``try`` than ``earlier`` (the body and a
    handler, or two handlers): the ``try`` runs one or the other to its end."""
    parts = dict(earlier.tries)
    return any(key in parts and parts[key] != part for key, part in later.tries)


def _both_arms(later: List[Binding], covered: set) -> bool:
    """Some ``if`` binds the name again in its body and in its ``else``, each arm
    otherwise running whenever the earlier binding and the use do."""
    arms: Dict[int, set] = {}
    for b in later:
        if not b.branches:
            continue
        key, arm, _ = b.branches[-1]
        if set(b.branches[:-1]) <= covered:
            arms.setdefault(key, set()).add(arm)
    return any(len(found) == 2 for found in arms.values())


@dataclass(frozen=True, eq=False)
class CallFrame:
    """One call the analysis followed into a function: ``block(x, "softmax")`` binds
    ``act`` of ``block`` to ``"softmax"`` for what is evaluated inside that call
    (a per-call-site context, so one call's argument decides the layer it builds)."""

    function: cst.CSTNode  # the FunctionDef or Lambda called
    call: cst.Call
    caller: "Location"  # where the call is made (with the caller's own context)
    offset: int = 0  # leading parameters bound already (``self`` of a method)
    #: a call of the function that builds a model, judged once per such call (not a
    #: call the model's output is computed through)
    entry: bool = False


#: the calls followed to reach a location, outermost first
CallContext = Tuple[CallFrame, ...]
#: at most this many nested calls are followed: a deeper chain is judged without them
MAX_CALL_CONTEXT = 6


@dataclass(frozen=True)
class Location:
    """Where a node was seen: its scope and the statement order inside the file, and
    the calls followed to get there (empty: any call of its function)."""

    scope: Scope
    order: int
    branches: Branches = ()
    context: CallContext = ()

    def entering(self, frame: CallFrame) -> "Location":
        """This location inside the call ``frame`` (beyond ``MAX_CALL_CONTEXT``: unchanged)."""
        if len(self.context) >= MAX_CALL_CONTEXT:
            return self
        return Location(self.scope, self.order, self.branches, self.context + (frame,))

    def within(self, context: CallContext) -> "Location":
        """This location seen through the calls ``context`` (a binding's place, read while
        following a value inside those calls)."""
        return self if context == self.context else Location(self.scope, self.order, self.branches, context)

    def frame_of(self, function: cst.CSTNode) -> Optional[Tuple[CallFrame, CallContext]]:
        """The innermost followed call of ``function``, with the context it was made in."""
        for index in range(len(self.context) - 1, -1, -1):
            if self.context[index].function is function:
                return self.context[index], self.context[:index]
        return None

    def lookup(self, name: str) -> Optional[Binding]:
        return self.scope.lookup(name, self.order, self.branches)

    def reaching(self, name: str) -> List[Binding]:
        """Every binding whose value may be ``name``'s here (see :meth:`Scope.reaching`)."""
        return self.scope.reaching(name, self.order, self.branches)


class _ExclusiveFlags:
    """Command-line flags argparse makes mutually exclusive (``--fp16`` vs ``--auto16``
    in one ``add_mutually_exclusive_group()``): ``if args.fp16:`` and ``if args.auto16:``
    cannot both run. Each such test is rewritten as ``<group> == "fp16"``, which
    :func:`exclusive` already compares; a ``store_const`` member too
    (``args.float_type == tf.float16`` for ``--fp16`` storing tf.float16 in
    ``float_type``), and an ``or`` of members (``args.keras16 or args.float_type ==
    tf.float16``) needs one of them. Only members that are false (or unset) unless
    given count: at most one of a group is given.

    Also the ``store_true`` flags that are always on: ``default=True`` and no
    ``--no-...`` flag (nor ``store_false``) writing the same destination."""

    def __init__(self) -> None:
        self.groups: Dict[str, str] = {}  # group variable -> its key
        self.flags: Dict[str, str] = {}  # flag dest -> the key of its group
        #: (dest, the constant's code) -> (the key of its group, the member's name)
        self.consts: Dict[Tuple[str, str], Tuple[str, str]] = {}
        #: store_true flags given ``default=True``, and every dest a flag may clear
        self._default_true: set = set()
        self._cleared: set = set()
        #: dest -> the string default of the one flag writing it (None: several, or not a string)
        self._string_defaults: Dict[str, Optional[str]] = {}

    def note_assign(self, node: cst.Assign) -> None:
        value = node.value
        if isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) \
                and value.func.attr.value == "add_mutually_exclusive_group" and len(node.targets) == 1:
            name = dotted_name(node.targets[0].target)
            if name:
                self.groups[name] = f"__mplint_group_{len(self.groups)}"

    def note_statement(self, node: cst.SimpleStatementLine) -> None:
        call = node.body[0].value if isinstance(node.body[0], cst.Expr) else None
        if not (isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute)
                and call.func.attr.value == "add_argument"):
            return
        group = self.groups.get(dotted_name(call.func.value) or "")
        keywords = {a.keyword.value: a.value for a in call.args if a.keyword is not None}
        action = keywords.get("action")
        kind = action.evaluated_value if isinstance(action, cst.SimpleString) else None
        dest = _flag_dest(call, keywords)
        if dest is None:
            return
        default = keywords.get("default")
        text = default.evaluated_value if isinstance(default, cst.SimpleString) and action is None else None
        self._string_defaults[dest] = text if isinstance(text, str) and dest not in self._string_defaults else None
        if kind == "store_true" and isinstance(default, cst.Name) and default.value == "True":
            self._default_true.add(dest)
        elif kind in ("store_false", "store_const") or kind is None and action is not None:
            self._cleared.add(dest)  # store_false, BooleanOptionalAction, a custom action
        if dest.startswith("no_"):
            self._cleared.add(dest[3:])  # `--no-amp` next to `--amp`
        if group is None:
            return
        if kind == "store_true" and default is None:
            self.flags[dest] = group
        elif kind == "store_const" and "const" in keywords and default is None:
            const = cst.Module([]).code_for_node(keywords["const"])
            self.consts[(dest, const)] = (group, f"{dest}={const}")

    def always_on(self, dest: str) -> bool:
        """A ``store_true`` flag given ``default=True`` that no other flag clears."""
        return dest in self._default_true and dest not in self._cleared

    def string_default(self, dest: str) -> Optional[str]:
        """The string default of the one flag storing ``dest`` (``--config
        configs/train.yaml``), or None."""
        return self._string_defaults.get(dest)

    def test_for(self, test: cst.BaseExpression) -> cst.BaseExpression:
        """``args.fp16`` -> ``<group> == "fp16"`` for a flag of a group, else ``test``."""
        if not (self.flags or self.consts):
            return test
        if isinstance(test, cst.BooleanOperation):
            return test.with_changes(left=self.test_for(test.left), right=self.test_for(test.right))
        if isinstance(test, cst.Attribute) and test.attr.value in self.flags:
            return _member(self.flags[test.attr.value], test.attr.value)
        if (isinstance(test, cst.Comparison) and len(test.comparisons) == 1
                and isinstance(test.comparisons[0].operator, cst.Equal) and isinstance(test.left, cst.Attribute)):
            const = cst.Module([]).code_for_node(test.comparisons[0].comparator)
            found = self.consts.get((test.left.attr.value, const))
            if found is not None:
                return _member(*found)
        return test


def _member(group: str, name: str) -> cst.Comparison:
    return cst.Comparison(left=cst.Name(group), comparisons=[
        cst.ComparisonTarget(operator=cst.Equal(), comparator=cst.SimpleString(repr(name)))])


def _flag_dest(call: cst.Call, keywords: Dict[str, cst.BaseExpression]) -> Optional[str]:
    """Where argparse stores a flag: ``dest=``, or its first ``--long`` name."""
    dest = keywords.get("dest")
    if isinstance(dest, cst.SimpleString):
        return str(dest.evaluated_value)
    for arg in call.args:
        if arg.keyword is None and isinstance(arg.value, cst.SimpleString) \
                and str(arg.value.evaluated_value).startswith("--"):
            return str(arg.value.evaluated_value)[2:].replace("-", "_")
    return None


def enclosing_test(scope: Optional[Scope]) -> Optional[Scope]:
    """The ``test*`` function holding ``scope`` (a unittest or pytest test), if any."""
    while scope is not None:
        if isinstance(scope.node, cst.FunctionDef) and scope.node.name.value.startswith("test"):
            return scope
        scope = scope.parent
    return None


def enclosing_fixture(scope: Optional[Scope]) -> Optional[Tuple[Scope, str]]:
    """The pytest fixture holding ``scope`` (``@pytest.fixture`` without ``autouse=True``)
    and the name tests request it by; None elsewhere (an autouse fixture is every test's)."""
    while scope is not None:
        node = scope.node
        if isinstance(node, cst.FunctionDef):
            for decorator in node.decorators:
                call = decorator.decorator if isinstance(decorator.decorator, cst.Call) else None
                written = dotted_name(call.func if call is not None else decorator.decorator)
                if written not in ("pytest.fixture", "fixture"):
                    continue
                name = node.name.value
                for arg in call.args if call is not None else ():
                    keyword = arg.keyword.value if arg.keyword is not None else None
                    if keyword == "autouse" and not (isinstance(arg.value, cst.Name) and arg.value.value == "False"):
                        return None
                    if keyword == "name" and isinstance(arg.value, cst.SimpleString):
                        name = str(arg.value.evaluated_value)
                return scope, name
        scope = scope.parent
    return None


def requests_fixture(scope: Scope, fixture: str, module: cst.Module) -> bool:
    """Whether code at ``scope`` may run while the fixture ``fixture`` is active: a test
    that takes it as a parameter, a helper that such a test calls by name, or any code of
    a module that names it in a string (``usefixtures("name")``, unread: may)."""
    if re.search(r"""["']""" + re.escape(fixture) + r"""["']""", module.code):
        return True
    test = enclosing_test(scope)
    if test is not None:
        return _takes(test, fixture)
    unit = scope
    while unit.parent is not None and unit.parent.kind not in ("module", "class"):
        unit = unit.parent
    name = getattr(getattr(unit.node, "name", None), "value", None)
    if unit.kind != "function" or not name:
        return False  # module-level code: runs at import, before any fixture
    call = re.compile(r"(?:\bself\.|\bcls\.|(?<![\w.]))" + re.escape(name) + r"\(")
    return any(other.kind == "function" and isinstance(other.node, cst.FunctionDef)
               and other.node.name.value.startswith("test") and _takes(other, fixture)
               and call.search(module.code_for_node(other.node))
               for other in _module_of(unit).all_descendants())


def _takes(test: Scope, fixture: str) -> bool:
    node = test.node
    assert isinstance(node, cst.FunctionDef)
    params = node.params
    return any(p.name.value == fixture for p in [*params.posonly_params, *params.params, *params.kwonly_params])


def function_key(scope: Scope) -> str:
    """The name the program model knows a scope's code by: ``Class.method`` or
    ``function`` for the outermost function holding it (nested functions and classes
    fold into it), ``<module>`` for top-level code and class bodies."""
    chain: List[Scope] = []
    current: Optional[Scope] = scope
    while current is not None and current.kind != "module":
        chain.append(current)
        current = current.parent
    names: List[str] = []
    for item in reversed(chain):
        if item.kind == "lambda":
            break
        names.append(getattr(getattr(item.node, "name", None), "value", "?"))
        if item.kind == "function":
            return ".".join(names)
    return "<module>"


def separate_options(a: Branches, a_scope: Scope, b: Branches, b_scope: Scope) -> bool:
    """Each of two statements runs under a parameter of its own function
    (``def configure(opt, use_float16, use_graph_rewrite)``: ``if use_float16:`` and
    ``if use_graph_rewrite:``; ``def set_policy(dtype)``: ``if dtype == tf.float16:``):
    whether a caller sets both is the callers' matter, not these functions'. Flags of
    a parsed command line (``args.amp``) are not parameters: both may be given."""
    first, second = set(a) - set(b), set(b) - set(a)
    mine, theirs = _options(first, a_scope), _options(second, b_scope)
    return bool(first) and bool(second) and mine is not None and theirs is not None and not mine & theirs


def _options(branches: set, scope: Scope) -> Optional[set]:
    """The parameters the ``if`` arms test (``if p:``, ``if p == x:``, their ``else``), or
    None when an arm tests anything else."""
    found = set()
    for _, arm, test in branches:
        if isinstance(test, cst.Comparison):
            test = test.left
        if not isinstance(test, cst.Name) \
                or not any(b.kind == "param" for b in scope.bindings.get(test.value, ())):
            return None
        found.add(test.value)
    return found


def local_function(call: cst.Call, loc: Location) -> Optional[Binding]:
    """The ``def`` of this file a call runs: ``helper(...)`` or ``self.method(...)``."""
    return local_def(call.func, loc)


def local_def(func: cst.BaseExpression, loc: Location) -> Optional[Binding]:
    """The ``def`` of this file a call target names: ``helper``, or ``self.method`` looked
    up from the instance's class (:func:`instance_class`) through its bases, so an
    override wins (not when the class sets ``self.method = ...``: the attribute wins)."""
    binding: Optional[Binding] = None
    if isinstance(func, cst.Name):
        binding = loc.lookup(func.value)
    elif isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == "self":
        cls = instance_class(loc)
        binding = method_of(cls, func.attr.value) if cls is not None else None
    elif isinstance(func, cst.Attribute) and is_super(func.value):
        # ``super().call(x)``: the next definition after the method's own class
        own = loc.scope.enclosing_class()
        chain = class_chain(own)[1:] if own is not None else []
        binding = next((c.bindings[func.attr.value][-1] for c in chain if c.bindings.get(func.attr.value)), None)
    elif isinstance(func, cst.Attribute):
        # ``Net.create(n)``, or ``cls._head(x)`` in a classmethod: looked up on the class
        named = class_scope_of(func.value, loc) or _classmethod_class(func.value, loc)
        binding = class_attribute(named, func.attr.value) if named is not None else None
    if binding is None or binding.kind != "def" or not isinstance(binding.node, cst.FunctionDef):
        return None
    return binding


def _classmethod_class(expr: cst.BaseExpression, loc: Location) -> Optional[Scope]:
    """The class ``expr`` is when it names the first parameter of the classmethod
    enclosing ``loc`` (``cls``)."""
    if not isinstance(expr, cst.Name):
        return None
    scope: Optional[Scope] = loc.scope
    while scope is not None and scope.kind != "function":
        scope = scope.parent
    if scope is None or scope.parent is None or scope.parent.kind != "class":
        return None
    node = scope.node
    if not isinstance(node, cst.FunctionDef) or decorator_kind(node) != "classmethod":
        return None
    params = list(node.params.posonly_params) + list(node.params.params)
    return scope.parent if params and params[0].name.value == expr.value else None


def decorator_kind(node: cst.FunctionDef) -> Optional[str]:
    """``classmethod`` or ``staticmethod`` when the def is decorated so, else None."""
    for decorator in node.decorators:
        name = decorator.decorator
        if isinstance(name, cst.Name) and name.value in ("classmethod", "staticmethod"):
            return name.value
    return None


def bound_leading(func: cst.BaseExpression, node: cst.CSTNode) -> int:
    """How many leading parameters of the def ``node`` a call through ``func`` binds
    before its arguments: ``self`` of ``self.method(x)``, ``cls`` of a classmethod
    however it is called; none for a staticmethod or ``Net.method(obj, x)``."""
    kind = decorator_kind(node) if isinstance(node, cst.FunctionDef) else None
    if kind == "staticmethod":
        return 0
    if kind == "classmethod":
        return 1
    return 1 if on_self(func) else 0


def is_super(expr: cst.BaseExpression) -> bool:
    """``super()`` with no arguments, as a method calls it."""
    return isinstance(expr, cst.Call) and not expr.args and isinstance(expr.func, cst.Name) \
        and expr.func.value == "super"


def on_self(func: cst.BaseExpression) -> bool:
    """``self.method`` or ``super().method``: a call that keeps the instance."""
    return isinstance(func, cst.Attribute) and (
        (isinstance(func.value, cst.Name) and func.value.value == "self") or is_super(func.value))


def class_chain(cls: Scope) -> List[Scope]:
    """A class and the bases of it this file defines, in the order Python looks up an
    attribute for single inheritance (depth first, left to right, each once)."""
    out: List[Scope] = []
    pending = [cls]
    while pending:
        current = pending.pop(0)
        if any(current is seen for seen in out):
            continue
        out.append(current)
        bases: List[Scope] = []
        node, parent = current.node, current.parent
        for base in node.bases if isinstance(node, cst.ClassDef) and parent is not None else ():
            if not isinstance(base.value, cst.Name):
                continue
            binding = parent.lookup(base.value.value, current.order)  # type: ignore[union-attr]
            if binding is not None and binding.kind == "class" and binding.scope is not None:
                found = next((c for c in binding.scope.children if c.node is binding.node), None)
                if found is not None:
                    bases.append(found)
        pending = bases + pending
    return out


def instance_class(loc: Location) -> Optional[Scope]:
    """The class of ``self`` at ``loc``: the enclosing class, or, inside methods reached
    through ``self.method(...)`` calls, the class of the method that made the first of
    them (``Net.__init__`` calling ``self.build_head`` of its base ``Base``: a ``Net``),
    or the class a followed construction builds (``SoftmaxNet()`` running the
    ``__init__`` and ``call`` it inherits from ``Base``)."""
    own = loc.scope.enclosing_class()
    if own is None:
        return None
    found = own
    for frame in reversed(loc.context):
        if not on_self(frame.call.func):
            # ``SoftmaxNet()`` building the instance whose inherited method runs here
            built = class_scope_of(frame.call.func, frame.caller)
            if built is not None and any(c is found for c in class_chain(built)):
                found = built
            break
        caller = frame.caller.scope.enclosing_class()
        if caller is None:
            break
        found = caller
    if found is not own and not any(c is own for c in class_chain(found)):
        return own  # not a subclass of the method's class: the context is not this one's
    return found


def method_of(cls: Scope, name: str) -> Optional[Binding]:
    """What ``self.<name>`` is in the class: the nearest binding through its bases;
    None when an instance attribute of that name is set anywhere on the way."""
    chain = class_chain(cls)
    if any(c.attributes.get(name) for c in chain):
        return None
    for current in chain:
        found = current.bindings.get(name)
        if found:
            return found[-1]
    return None


def class_attribute(cls: Scope, name: str) -> Optional[Binding]:
    """The class-body binding ``name`` has for an instance of ``cls``: the nearest one
    through the class's bases in this file (``head_activation = "softmax"``)."""
    for current in class_chain(cls):
        found = current.bindings.get(name)
        if found:
            return found[-1]
    return None


def subclasses_in_file(cls: Scope) -> List[Scope]:
    """The classes of the file that derive from ``cls``, directly or through others."""
    module = cls
    while module.parent is not None:
        module = module.parent
    out: List[Scope] = []
    pending = list(module.children)
    while pending:
        current = pending.pop()
        pending += current.children
        if current.kind == "class" and current is not cls and any(c is cls for c in class_chain(current)):
            out.append(current)
    return out


def class_scope_of(func: cst.BaseExpression, loc: Location) -> Optional[Scope]:
    """The scope of the class of this file a name denotes (``HeadConfig`` in ``HeadConfig()``)."""
    if not isinstance(func, cst.Name):
        return None
    binding = loc.lookup(func.value)
    if binding is None or binding.kind != "class" or binding.scope is None:
        return None
    return next((c for c in binding.scope.children if c.node is binding.node), None)


def attributes_of(cls: Scope, name: str) -> List[Binding]:
    """Every ``self.<name> = ...`` the class and its bases in this file make."""
    return [b for c in class_chain(cls) for b in c.attributes.get(name, [])]


def self_call_key(method: str, through_super: bool) -> str:
    """The key under which ``ScopeTracker.calls`` holds the calls of a method on the
    instance: ``self.<method>`` or ``super().<method>``."""
    return ("super()." if through_super else "self.") + method


#: calls of plain names by the name called (and of methods on the instance, by
#: :func:`self_call_key`), with where each is made (``ScopeTracker.calls``)
CallIndex = Mapping[str, Sequence[Tuple[cst.Call, "Location"]]]


def calls_of(calls: CallIndex, scope: Scope) -> List[Tuple[cst.Call, Location, int]]:
    """The file's calls of the function ``scope`` is, by its name: a plain function, or
    a class whose ``__init__`` it is (``self`` bound already: offset 1). Other methods:
    none (``obj.method(...)`` is not followed to its class)."""
    function, definer = scope.node, scope.parent
    if not isinstance(function, cst.FunctionDef) or definer is None:
        return []
    target: cst.CSTNode = function
    offset = 0
    if definer.kind == "class":
        if function.name.value != "__init__":
            return []
        target, offset = definer.node, 1
    name = getattr(getattr(target, "name", None), "value", None)
    if not isinstance(name, str):
        return []
    out = []
    for call, where in calls.get(name, ()):
        found = where.lookup(name)
        if found is not None and found.node is target:
            out.append((call, where, offset))
    return out


def run_of(resets: Sequence[int], order: int) -> int:
    """Which run of a module (0 before any kernel reset) the code at ``order`` is in,
    given the orders of its top-level resets (``Scope.resets``)."""
    return bisect.bisect_left(resets, order) if resets else 0


def separate_tests(a: Optional[Scope], b: Optional[Scope]) -> bool:
    """Two different test functions: a test module sets up each case on its own (and
    resets the global policy in tearDown), so what one test does is not another's."""
    ta, tb = enclosing_test(a), enclosing_test(b)
    return ta is not None and tb is not None and ta is not tb


class ScopeTracker:
    """First visitor of every walk: keeps scopes, bindings and the import aliases."""

    def __init__(self, module: cst.Module, names: NameResolver) -> None:
        self.names = names
        self.module_scope = Scope(module, None, "module")
        self.current = self.module_scope
        self.order = 0
        #: open ``if`` statements: [id, arm being walked, node, its test as compared]
        self._ifs: List[list] = []
        #: the ``try`` statements the walk is in: [the statement, the part it is in (0 the body
        #: or ``else``, k the k-th handler, -1 ``finally``)]
        self._tries: List[list] = []
        self._branches: Branches = ()
        self._flags = _ExclusiveFlags()
        #: calls of plain names by the name called (``block(x, 50)`` under "block"), with
        #: where each is made: the call sites a parameter's value is read from
        self.calls: Dict[str, List[Tuple[cst.Call, Location]]] = {}
        #: which code the file's public surface runs, built once after the walk by
        #: :func:`mplint.semantic.public_reach.public_reach` (kept here, released with the scopes)
        self.reach: Optional["PublicReach"] = None
        #: names some function declares ``global``: a module-level binding of one may be
        #: replaced at run time, however often the module binds it
        self.global_names: Set[str] = set()

    def _bind(self, binding: Binding) -> None:
        binding.branches = self.branches()
        binding.tries = tuple((id(node), part) for node, part in self._tries if part >= 0)
        self.current.bind(binding)

    # -- where are we ---------------------------------------------------------
    def location(self) -> Location:
        return Location(self.current, self.order, self._branches)

    def branches(self) -> Branches:
        return self._branches

    def open_conditions(self) -> Tuple[Tuple[cst.BaseExpression, str], ...]:
        """The tests of the ``if`` statements the walk is inside, each with the arm
        ("body" or "else") it is in: what must hold for the code here to run."""
        return tuple((node.test, arm) for _, arm, node, _ in self._ifs)

    def condition(self, expr: cst.BaseExpression) -> Branch:
        """A run-time value that switches something on, as the ``if`` arm it amounts
        to (``{"auto_mixed_precision": args.amp}`` runs as under ``if args.amp:``), so
        :func:`exclusive` compares it with the tests of other flags."""
        return (id(expr), "body", self._flags.test_for(expr))

    def always_on(self, dest: str) -> bool:
        """Whether ``args.<dest>`` is a ``store_true`` flag that is always true."""
        return self._flags.always_on(dest)

    def flag_default(self, dest: str) -> Optional[str]:
        """The string default of the flag ``args.<dest>`` (what a run given no value reads)."""
        return self._flags.string_default(dest)

    def all_scopes(self) -> Iterator[Scope]:
        """Every scope of the file, the module's first (after the walk: all of them)."""
        stack = [self.module_scope]
        while stack:
            scope = stack.pop()
            yield scope
            stack.extend(reversed(scope.children))

    def release(self) -> None:
        """Unlink the scopes (see ``Context.release``); the tracker is done with."""
        for scope in list(self.all_scopes()):
            scope.parent = None
            scope.children.clear()
            scope.bindings.clear()
            scope.attributes.clear()
        self.calls.clear()
        self.reach = None

    def _arms_changed(self) -> None:
        # Kept as one tuple: every binding and location reads it, arms change rarely.
        self._branches = tuple((key, arm, test) for key, arm, _, test in self._ifs)

    def _push(self, node: ScopeNode, kind: str) -> None:
        scope = Scope(node, self.current, kind, order=self.order)
        self.current.children.append(scope)
        self.current = scope
        self.names.push()

    def _pop(self) -> None:
        assert self.current.parent is not None
        self.current = self.current.parent
        self.names.pop()

    # -- statements advance the order --------------------------------------------
    def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> None:
        self.order += 1
        self._flags.note_statement(node)
        if self.current is self.module_scope and not self._ifs and any(
                isinstance(small, cst.Expr) and isinstance(small.value, cst.Call)
                and self._resets_kernel(small.value) for small in node.body):
            self.module_scope.resets.append(self.order)

    def _resets_kernel(self, call: cst.Call) -> bool:
        """``exit()``, ``os.kill(os.getpid(), 9)``, ``...kernel.do_shutdown(True)``: the
        interpreter ends here, and a notebook's later cells run in a fresh one."""
        func = call.func
        if isinstance(func, cst.Name) and func.value in KERNEL_RESET_BUILTINS:
            return func.value not in self.module_scope.bindings and not self.names.resolve(func)
        if isinstance(func, cst.Attribute) and func.attr.value == KERNEL_SHUTDOWN_METHOD:
            return True
        called = self.names.resolve(func)
        if called & KERNEL_RESET_FUNCTIONS:
            return True
        if KERNEL_KILL_FUNCTION in called and call.args:
            first = call.args[0].value
            return isinstance(first, cst.Call) and OWN_PROCESS_FUNCTION in self.names.resolve(first.func)
        return False

    def _compound(self, node: cst.CSTNode) -> None:
        self.order += 1

    visit_While = visit_With = _compound

    # -- try/except parts ----------------------------------------------------------
    def visit_Try(self, node: cst.Try) -> None:
        self.order += 1
        self._tries.append([node, 0])

    def visit_ExceptHandler(self, node: cst.ExceptHandler) -> None:
        if self._tries and self._tries[-1][1] >= 0:
            self._tries[-1][1] += 1

    def visit_Finally(self, node: cst.Finally) -> None:
        if self._tries:
            self._tries[-1][1] = -1  # runs whichever part ran

    def leave_Try(self, node: cst.Try) -> None:
        if self._tries:
            self._tries.pop()

    # -- if/else arms ----------------------------------------------------------------
    def visit_If(self, node: cst.If) -> None:
        self.order += 1
        if self._ifs and self._ifs[-1][2].orelse is node:  # an elif: the parent's else
            self._ifs[-1][1] = "else"
        self._ifs.append([id(node), "body", node, self._flags.test_for(node.test)])
        self._arms_changed()

    def visit_Else(self, node: cst.Else) -> None:
        if self._tries and self._tries[-1][0].orelse is node:
            self._tries[-1][1] = 0  # a try's ``else`` runs after its body, as the body
        if self._ifs and self._ifs[-1][2].orelse is node:
            self._ifs[-1][1] = "else"
            self._arms_changed()

    def leave_If(self, node: cst.If) -> None:
        self._ifs.pop()
        self._arms_changed()

    # -- scopes --------------------------------------------------------------------
    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.order += 1
        self._bind(Binding(node.name.value, self.order, None, node, "def"))
        self._push(node, "function")
        for param in _all_params(node.params):
            self._bind(Binding(param.name.value, self.order, None, param, "param"))

    def leave_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._pop()

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self.order += 1
        self._bind(Binding(node.name.value, self.order, None, node, "class"))
        self._push(node, "class")

    def leave_ClassDef(self, node: cst.ClassDef) -> None:
        self._pop()

    def visit_Lambda(self, node: cst.Lambda) -> None:
        self._push(node, "lambda")
        for param in _all_params(node.params):
            self._bind(Binding(param.name.value, self.order, None, param, "param"))

    def leave_Lambda(self, node: cst.Lambda) -> None:
        self._pop()

    def visit_Call(self, node: cst.Call) -> None:
        if isinstance(node.func, cst.Name):
            self.calls.setdefault(node.func.value, []).append((node, self.location()))
        elif on_self(node.func):
            # ``self.set_properties(kwargs)``, ``super().__init__(**kwargs)``: under a dotted
            # key (``self_call_key``), which no plain name's lookup meets
            assert isinstance(node.func, cst.Attribute)
            key = self_call_key(node.func.attr.value, is_super(node.func.value))
            self.calls.setdefault(key, []).append((node, self.location()))

    # -- imports -------------------------------------------------------------------
    def visit_Import(self, node: cst.Import) -> None:
        if self.current.kind != "module":
            self.names.add_import(node)

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        if self.current.kind != "module":
            self.names.add_import(node)

    def visit_Global(self, node: cst.Global) -> None:
        self.global_names.update(item.name.value for item in node.names)

    # -- bindings ------------------------------------------------------------------
    def visit_Assign(self, node: cst.Assign) -> None:
        self._flags.note_assign(node)
        single = len(node.targets) == 1
        for target in node.targets:
            self._bind_target(target.target, node.value if single else None, node, "assign")
        if self.current.kind != "module":
            record_alias_assignment(node, self.names)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        if node.value is not None:
            self._bind_target(node.target, node.value, node, "annassign")

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._bind_target(node.target, None, node, "augassign")

    def visit_For(self, node: cst.For) -> None:
        self.order += 1
        self._bind_target(node.target, None, node, "for")

    def visit_WithItem(self, node: cst.WithItem) -> None:
        if node.asname is not None:
            self._bind_target(node.asname.name, None, node, "with")

    def _bind_target(
        self, target: cst.BaseExpression, value: Optional[cst.BaseExpression],
        node: cst.CSTNode, kind: str, element: Optional[Tuple[cst.BaseExpression, int]] = None,
    ) -> None:
        if isinstance(target, cst.Name):
            self._bind(Binding(target.value, self.order, value, node, kind, element=element))
        elif isinstance(target, (cst.Tuple, cst.List)):
            values = _unpacked(target, value)
            whole = value if values is None and value is not None and kind in ("assign", "annassign") \
                and not any(isinstance(e, cst.StarredElement) for e in target.elements) else None
            for index, element_node in enumerate(target.elements):
                inner = element_node.value
                if isinstance(inner, cst.StarredElement):
                    inner = inner.value
                self._bind_target(inner, values[index] if values is not None else None, node, kind,
                                  (whole, index) if whole is not None else None)
        elif (
            isinstance(target, cst.Attribute)
            and isinstance(target.value, cst.Name)
            and target.value.value == "self"
        ):
            cls = self.current.enclosing_class()
            if cls is not None:
                cls.attributes.setdefault(target.attr.value, []).append(
                    Binding(target.attr.value, self.order, value, node, kind, self.current,
                            self.branches(), element=element)
                )


def _unpacked(target: Union[cst.Tuple, cst.List], value: Optional[cst.BaseExpression]
              ) -> Optional[List[cst.BaseExpression]]:
    """The value each element of ``a, b = x, y`` takes (``self.p, self.eps = p, eps``):
    a tuple or list written out with as many items, none starred, and none a name the
    targets rebind (``a, b = b, a`` reads the old values, which the new bindings hide)."""
    if not isinstance(value, (cst.Tuple, cst.List)) or len(value.elements) != len(target.elements):
        return None
    if any(isinstance(e, cst.StarredElement) for e in (*target.elements, *value.elements)):
        return None
    rebound = {e.value.value for e in target.elements if isinstance(e.value, cst.Name)}
    if any(isinstance(e.value, cst.Name) and e.value.value in rebound for e in value.elements):
        return None
    return [e.value for e in value.elements]


def _all_params(params: cst.Parameters) -> List[cst.Param]:
    out = list(params.posonly_params) + list(params.params) + list(params.kwonly_params)
    if isinstance(params.star_arg, cst.Param):
        out.append(params.star_arg)
    if params.star_kwarg is not None:
        out.append(params.star_kwarg)
    return out


#: what code that trains calls (one pattern for the scopes and the program model)
_TRAINING_CALL = TRAINING_CALL
_CALLED = re.compile(r"(?:\bself\.|\bcls\.|(?<![\w.]))([A-Za-z_]\w*)\(")


def trains_nothing(scope: Scope, module: cst.Module, path: str) -> bool:
    """A unit test that trains nothing: code in a ``test*`` function (or, in a test
    file, in a helper or fixture function) that reaches no training call, in its own
    body or in the functions of its file it calls (``self._train()``, ``fit_model()``,
    two calls deep). A dtype check, a check that a setup is refused: nothing trains,
    so float16 there is not a training program's."""
    unit = enclosing_test(scope)
    if unit is None and is_test_path(path):
        unit = scope
        while unit.parent is not None and unit.parent.kind != "module" and unit.parent.kind != "class":
            unit = unit.parent
        if unit.kind != "function":
            return False  # module-level code of a test file: not one test's
    if unit is None:
        return False
    return _reaches_no_training(unit, module)


#: a function that only runs a model: ``predict_with_dir``, ``run_inference``, ``export_model``
_INFERENCE_NAME = re.compile(r"(?:^|_)(?:predict|prediction|infer|inference|evaluate|evaluation|export|serve|"
                             r"serving)(?:_|$)", re.I)


def inference_only(scope: Scope, module: cst.Module) -> bool:
    """Code of a function named for running a model (``predict_with_dir``, ``export``)
    that reaches no training call (:func:`trains_nothing`'s walk): a 16-bit setting
    there is for speed at inference, with no optimizer updating the variables."""
    unit: Optional[Scope] = scope
    while unit is not None and unit.kind != "function":
        unit = unit.parent
    while unit is not None and unit.parent is not None and unit.parent.kind == "function":
        unit = unit.parent  # the outermost function: a closure runs as part of it
    if unit is None or not isinstance(unit.node, cst.FunctionDef) \
            or not _INFERENCE_NAME.search(unit.node.name.value):
        return False
    return _reaches_no_training(unit, module)


def _reaches_no_training(unit: Scope, module: cst.Module) -> bool:
    """No training call in ``unit``'s code or the functions of its file it calls, two
    calls deep."""
    seen = {id(unit.node)}
    work = [(unit, 0)]
    while work:
        current, depth = work.pop()
        code = module.code_for_node(current.node)
        if _TRAINING_CALL.search(code):
            return False
        if depth >= 2:
            continue
        for name in set(_CALLED.findall(code)):
            for owner in (current.enclosing_class(), _module_of(current)):
                binding = owner.lookup(name) if owner is not None else None
                if binding is not None and binding.kind == "def" and id(binding.node) not in seen:
                    callee = next((c for c in owner.children if c.node is binding.node), None) \
                        if owner is not None else None
                    if callee is not None:
                        seen.add(id(binding.node))
                        work.append((callee, depth + 1))
    return True


def built_for_tests_that_train_nothing(scope: Scope, module: cst.Module, path: str) -> bool:
    """Code of a test file that builds a test's subject, and no test that uses it trains:
    a test that trains nothing itself (:func:`trains_nothing`), or a helper function of
    the file that trains nothing, every test calling which trains nothing either. A
    model built so under a mixed policy is what the test checks (its dtype, that the code
    under test survives 16 bits), not a training program's output."""
    if not is_test_path(path) or not trains_nothing(scope, module, path):
        return False
    unit = scope
    while unit.parent is not None and unit.parent.kind not in ("module", "class"):
        unit = unit.parent
    if unit.kind != "function" or enclosing_test(unit) is not None:
        return unit.kind == "function"
    name = getattr(getattr(unit.node, "name", None), "value", None)
    if not name:
        return False
    call = re.compile(r"(?:\bself\.|\bcls\.|(?<![\w.]))" + re.escape(name) + r"\(")
    for test in _module_of(unit).all_descendants():
        if test.kind == "function" and isinstance(test.node, cst.FunctionDef) \
                and test.node.name.value.startswith("test") \
                and call.search(module.code_for_node(test.node)) \
                and not test_trains_nothing(test, module, path):
            return False  # a caller trains, or calls what may (``self.run_training()``)
    return True


def test_trains_nothing(test: Scope, module: cst.Module, path: str) -> bool:
    """:func:`trains_nothing`, and the test calls nothing whose name says it trains
    (``self.run_training()``, ``run_customized_training_loop(...)``)."""
    return trains_nothing(test, module, path) and not _TRAINING_BY_NAME.search(module.code_for_node(test.node))


#: a call whose name says it trains: a library's loop (``run_customized_training_loop(...)``)
_TRAINING_BY_NAME = re.compile(r"\w*(?:train|fit)\w*\(", re.I)


def _module_of(scope: Scope) -> Scope:
    while scope.parent is not None:
        scope = scope.parent
    return scope


def is_public(scope: Scope) -> bool:
    """Code of a function or class a library's user may call: defined at the module's
    top level (or a method of such a class), with no name that starts with ``_``;
    not the module's own top-level code (a script's)."""
    names: List[str] = []
    current: Optional[Scope] = scope
    while current is not None and current.kind != "module":
        name = getattr(getattr(current.node, "name", None), "value", None)
        if current.kind == "lambda" or not isinstance(name, str):
            return False
        names.append(name)
        current = current.parent
    return bool(names) and not any(is_private_name(n) for n in names)


class NameWrites:
    """A walk that collects, in ``changed``, the names a scope writes some way: its
    ``visit_<Node>`` methods, called by the read-only walker (:mod:`mplint.core.walker`,
    not libcst's ``visit``, which rebuilds every node it leaves)."""

    def __init__(self) -> None:
        self.changed: Set[str] = set()


def names_written(memo: Dict[int, FrozenSet[str]], scope: Scope, finder: Callable[[], NameWrites]) -> FrozenSet[str]:
    """What ``finder``'s walk of ``scope`` collects, walked once per scope (``memo``):
    one walk answers the question for every name of the scope."""
    changed = memo.get(id(scope.node))
    if changed is None:
        walk = finder()
        Walker([walk], _raise).walk(scope.node)
        changed = memo[id(scope.node)] = frozenset(walk.changed)
    return changed


def _raise(owner: object, exc: BaseException) -> None:
    """A walk of one question has no other visitor to go on with: its error is the caller's."""
    raise exc
