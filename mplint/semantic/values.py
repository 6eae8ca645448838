"""Static values a reader could work out: literals, constants, simple arithmetic,
parameter defaults and (when asked) the arguments that calls in the module pass.

Rules use this to read a policy name, a dtype, a number of units or a batch size.
Anything not plainly resolvable is None (unknown), and rules stay silent on unknowns:
the runtime checker measures what static analysis cannot see.
"""

from __future__ import annotations

import itertools
import json
import operator
from dataclasses import dataclass
from typing import Any, Callable, Dict, FrozenSet, List, Mapping, Optional, Sequence, Set, Tuple, Union

import libcst as cst

from mplint.semantic.arithmetic import BINOPS, binary, builtin, builtin_name
from mplint.semantic.call_args import UNREADABLE, _Unreadable, argument_for
from mplint.semantic.config_loads import Written
from mplint.semantic.config_objects import (
    FROM_CALL, field_assigned, field_source, is_config_class, namespace_keyword, string_keyed_entries,
)
from mplint.semantic.config_values import ConfigReads
from mplint.semantic.elsewhere_marks import CONSTRUCTION, ELSEWHERE_UNKNOWN, KEYWORD_SPREAD
from mplint.semantic.mapping_entries import READERS, MappingEntries
from mplint.semantic.names import NameResolver
from mplint.semantic.scopes import (
    Binding, Branches, CallContext, CallFrame, CallIndex, Location, NameWrites, Scope, attributes_of, calls_of,
    class_attribute, class_chain, class_scope_of, function_key, instance_class, method_of, names_written, on_self,
    self_call_key, subclasses_in_file,
)
from mplint.semantic.stored_attributes import NOT_HERE, InstanceAttributes, StoredForm
from mplint.semantic.vocabulary import DTYPE_NAMES, NAMESPACE_CONSTRUCTORS, POLICY_CONSTRUCTORS

Values = FrozenSet[object]


_MAX_DEPTH = 12
#: a value the calls elsewhere make unknowable (distinct from None: no such call)
_UNKNOWN = object()


@dataclass(frozen=True)
class ElsewhereArguments:
    """What the calls of a parameter's function in the project's other modules pass it."""

    #: the literal values passed
    values: FrozenSet[object]
    #: whether some call leaves the parameter out, so its default is used
    defaulted: bool
    #: whether some call passes what is not read (a name, ``*args``, ``**kwargs``)
    unknown: bool
#: no base class of another module stores the attribute
_NOT_STORED = object()
_MAX_VALUES = 16



class Evaluator:
    """Evaluates expressions seen at a location to the set of values they may hold.

    With ``call_sites`` (an index of the module's calls by callee name), a function
    parameter also takes the arguments that calls in this module pass to it
    (``conv_block(x, 50)``), and its default only when some call leaves it out.
    Without it, a parameter holds its default, as before.
    """

    def __init__(self, names: NameResolver, call_sites: Optional[CallIndex] = None) -> None:
        self.names = names
        self.call_sites = call_sites
        #: whether ``args.<dest>`` is a command-line flag that is always true (the
        #: scope tracker's answer, see ``ScopeTracker.always_on``; set by the facts collector)
        self.always_on: Callable[[str], bool] = lambda dest: False
        #: the string default of the flag ``args.<dest>`` (``ScopeTracker.flag_default``)
        self.flag_default: Callable[[str], Optional[str]] = lambda dest: None
        #: per function (``scopes.function_key``), the arguments calls in the project's
        #: other modules pass it (``ModuleFacts.project_arguments``; set by the linter)
        self.elsewhere: Mapping[str, Sequence[Mapping[str, str]]] = {}
        #: whether this file's calls of its public functions are all their calls (a
        #: script or a notebook); else only its private functions' are, unless the
        #: program model hands the calls other modules make (``elsewhere``)
        self.script = True
        #: scope node's id -> the names changed in place in it (one walk per scope)
        self._in_place: Dict[int, FrozenSet[str]] = {}
        self._entries = MappingEntries(self)
        #: how a base class of another module stores ``self.<attr>`` for an instance of
        #: the class (``stored_attributes``; set by the linter, which can read that module)
        self.inherited_store: Optional[Callable[[Scope, str], Optional[StoredForm]]] = None
        #: the string or number constant a name or ``module.NAME`` that another module of
        #: the project binds holds (``config.POLICY``; set by the linter, which can read it)
        self.imported_literal: Optional[Callable[[cst.BaseExpression], object]] = None
        #: the value at a key path of a configuration file the file loads (set by the
        #: linter, which finds and reads the file): ``cfg.model.lr`` (:mod:`config_values`)
        self.config_value: Optional[Callable[[Written, Sequence[str]], object]] = None
        #: the value at a key path of the file a loader function of another module returns
        #: for a call of the file (``load_config("configs/train.yaml")``; set by the linter)
        self.loader_value: Optional[Callable[[cst.Call, Sequence[str], Callable[[cst.BaseExpression],
                                                                                   Optional[str]]], object]] = None
        self._configs = ConfigReads(self)
        #: by a call's id, the instance a subclass in another module builds, for a method of
        #: this module it runs on itself (``self.build_head(x)`` inherited): that module
        #: answers ``self.<attr>`` inside the call (:meth:`instance_of_call`)
        self._instances: Dict[int, Tuple[cst.Call, InstanceAttributes]] = {}
        #: the field of a config object a construction of a class of another module of the
        #: project makes (``ModelConfig(units=64)``, ``from config import ModelConfig``):
        #: (FROM_CALL, the argument) to read here, or (FROM_CLASS, the default's value);
        #: set by the linter, which reads that module (``module_constants.imported_field``)
        #: ``home``: (module path relative to the root, class) of a construction another
        #: module makes (:meth:`_constructed_elsewhere`), else None (found by the file's imports)
        self.imported_field: Optional[Callable[[Optional[cst.Call], str, Callable[[cst.BaseExpression], Optional[
            Mapping[str, cst.BaseExpression]]], Optional[Tuple[str, str]]], Optional[Tuple[str, object]]]] = None
        #: the attributes the program's code sets on objects other than ``self``
        #: (``ModuleFacts.project_set_fields``; set by the linter)
        self.fields_set: FrozenSet[str] = frozenset()
        #: by a rebuilt call's id, the call and the class of another module it builds (or a
        #: name's, the module constant it stands for)
        self._remote: Dict[int, Tuple[cst.BaseExpression, Tuple[str, str]]] = {}
        #: scope node's id -> the names whose object may change in it (:meth:`_object_changed`)
        self._objects: Dict[int, FrozenSet[str]] = {}
        #: a module's source text by its node's id (which attributes some code sets)
        self._texts: Dict[int, str] = {}

    def values(self, expr: cst.BaseExpression, loc: Optional[Location], depth: int = 0) -> Optional[Values]:
        if depth > _MAX_DEPTH:
            return None
        if isinstance(expr, (cst.SimpleString, cst.ConcatenatedString, cst.Integer, cst.Float)):
            value = expr.evaluated_value
            return None if value is None else frozenset({value})
        if isinstance(expr, cst.Name):
            if expr.value in ("True", "False", "None"):
                return frozenset({{"True": True, "False": False, "None": None}[expr.value]})
            dtype = self._dtype(expr)
            if dtype is not None:
                return dtype
            if loc is None:
                return None
            if self.imported_literal is not None and not loc.reaching(expr.value):
                return self._imported(expr)  # ``from config import POLICY``: bound by no statement here
            return self._reaching_values(loc, expr.value, depth)
        if isinstance(expr, cst.Attribute):
            if isinstance(expr.value, cst.Name) and self.always_on(expr.attr.value):
                return frozenset({True})  # `--amp` with action="store_true", default=True
            dtype = self._dtype(expr)
            if dtype is None and loc is not None and isinstance(expr.value, cst.Name):
                if expr.value.value == "self":
                    return self._attribute_values(loc, expr.attr.value, depth)
                instance = self._instance_values(expr.value, expr.attr.value, loc, depth)
                if instance is not None:
                    return instance
                if self.imported_literal is not None and not loc.reaching(expr.value.value):
                    return self._imported(expr)  # ``config.POLICY`` of an imported module
                return self._namespace_values(loc, expr.value.value, expr.attr.value, depth) \
                    or self._object_field(expr, loc, depth) \
                    or self._configs.read(expr, loc)  # ``cfg.policy`` of ``cfg = EasyDict(yaml.safe_load(...))``
            if dtype is None and loc is not None:
                if self._unbound_chain(expr, loc):
                    return self._imported(expr)  # ``cfg.model.epsilon`` of a config another module loads
                return self._object_field(expr, loc, depth) or self._configs.read(expr, loc)
            return dtype
        if isinstance(expr, cst.UnaryOperation):
            inner = self.values(expr.expression, loc, depth + 1)
            if inner is None:
                return None
            if isinstance(expr.operator, cst.Minus):
                return _map(inner, operator.neg)
            if isinstance(expr.operator, cst.Plus):
                return inner
            if isinstance(expr.operator, cst.Not):
                return frozenset(not value for value in inner)
            return None
        if isinstance(expr, cst.BinaryOperation):
            if type(expr.operator) not in BINOPS:
                return None
            left = self.values(expr.left, loc, depth + 1)
            right = self.values(expr.right, loc, depth + 1)
            if left is None or right is None:
                return None
            out: Set[object] = set()
            for a, b in itertools.product(left, right):
                if isinstance(expr.operator, cst.Add) and isinstance(a, str) and isinstance(b, str):
                    out.add(a + b)
                    continue
                found = binary(expr.operator, a, b)
                if found is None:
                    return None
                out.add(found)
            return frozenset(out) if len(out) <= _MAX_VALUES else None
        if isinstance(expr, cst.IfExp):
            test = self.values(expr.test, loc, depth + 1)
            truths = {bool(v) for v in test} if test else set()
            if len(truths) == 1:  # every value the test may hold picks the same arm
                return self.values(expr.body if truths.pop() else expr.orelse, loc, depth + 1)
            body = self.values(expr.body, loc, depth + 1)
            orelse = self.values(expr.orelse, loc, depth + 1)
            if body is None or orelse is None:
                return None
            return body | orelse
        if isinstance(expr, cst.Subscript) and loc is not None:
            item = self._item_values(expr, loc, depth)
            if item is None and self._unbound_chain(expr, loc):
                return self._imported(expr)  # ``config.CFG["lr"]`` of another module
            return item if item is not None else self._configs.read(expr, loc)
        if isinstance(expr, cst.Call):
            name = builtin_name(expr)
            if name is not None and not self.names.resolve(expr.func) \
                    and (loc is None or not loc.reaching(name)):
                return self._builtin_values(name, expr, loc, depth)  # ``int(2 * DIM / 3)``
            if self.names.resolve(expr.func) & POLICY_CONSTRUCTORS and expr.args:
                first = expr.args[0]
                if first.keyword is None or first.keyword.value == "name":
                    return self.values(first.value, loc, depth + 1)
            if loc is not None and isinstance(expr.func, cst.Attribute) and expr.func.attr.value in READERS:
                return self._entries.read(expr, loc, depth + 1)  # ``kwargs.pop("act", "softmax")``
            return None
        return None

    def _builtin_values(self, name: str, call: cst.Call, loc: Optional[Location], depth: int) -> Optional[Values]:
        """``int(x)``, ``round(x, 2)``, ``max(a, b)`` over every combination of the values
        its arguments may hold (:mod:`semantic.arithmetic`)."""
        argument_values = []
        for arg in call.args:
            found = self.values(arg.value, loc, depth + 1)
            if found is None:
                return None
            argument_values.append(found)
        out: Set[object] = set()
        for combination in itertools.product(*argument_values):
            value = builtin(name, combination)
            if value is None:
                return None
            out.add(value)
        return frozenset(out) if len(out) <= _MAX_VALUES else None

    def _unbound_chain(self, expr: cst.BaseExpression, loc: Location) -> bool:
        """``a.b.c`` or ``a.b["k"]`` whose first name no statement here binds (an
        imported name): what it reads is another module's to say."""
        if self.imported_literal is None:
            return False
        while isinstance(expr, (cst.Attribute, cst.Subscript)):
            expr = expr.value
        return isinstance(expr, cst.Name) and expr.value != "self" and not loc.reaching(expr.value)

    def _imported(self, expr: cst.BaseExpression) -> Optional[Values]:
        """The one value another module of the project binds ``expr`` to, when it is a
        plain string or number constant there (None: unknown)."""
        assert self.imported_literal is not None
        found = self.imported_literal(expr)
        return None if found is None else frozenset({found})

    def chosen(self, expr: cst.BaseExpression, loc: Optional[Location], depth: int = 0) -> cst.BaseExpression:
        """The operand ``a or b``, ``a and b`` or ``x if t else y`` evaluates to, where the
        values of its test decide it (``head_fn = head_fn or make_head(n, "softmax")`` with
        ``head_fn`` None in every call: the right side); else ``expr`` itself."""
        if depth > _MAX_DEPTH:
            return expr
        if isinstance(expr, cst.BooleanOperation) and isinstance(expr.operator, (cst.Or, cst.And)):
            truth = self._truth(expr.left, loc)
            if truth is None:
                return expr
            first = truth if isinstance(expr.operator, cst.Or) else not truth
            return self.chosen(expr.left if first else expr.right, loc, depth + 1)
        if isinstance(expr, cst.IfExp):
            truth = self._truth(expr.test, loc)
            if truth is None:
                return expr
            return self.chosen(expr.body if truth else expr.orelse, loc, depth + 1)
        return expr

    def _truth(self, expr: cst.BaseExpression, loc: Optional[Location]) -> Optional[bool]:
        """Whether every value ``expr`` may hold is true (True) or every one false (False);
        None when unknown or mixed."""
        found = self.values(expr, loc)
        truths = {bool(v) for v in found} if found else set()
        return next(iter(truths)) if len(truths) == 1 else None

    def value(self, expr: cst.BaseExpression, loc: Optional[Location]) -> object:
        """The single value of ``expr``, or None when unknown or ambiguous."""
        found = self.values(expr, loc)
        if found is None or len(found) != 1:
            return None
        return next(iter(found))

    def _dtype(self, expr: cst.BaseExpression) -> Optional[Values]:
        for name in self.names.resolve(expr):
            dtype = DTYPE_NAMES.get(name)
            if dtype is not None:
                return frozenset({dtype})
        return None

    def _reaching_values(self, loc: Location, name: str, depth: int) -> Optional[Values]:
        """The values of ``name`` at ``loc``: of every binding that may reach it (both
        arms of an ``if`` that binds it in each)."""
        bindings = loc.reaching(name)
        if len(bindings) <= 1:
            return self._binding_values(bindings[0] if bindings else None, depth, loc)
        out: Set[object] = set()
        for binding in bindings:
            found = self._binding_values(binding, depth, loc)
            if found is None:
                return None
            out |= found
        return frozenset(out) if len(out) <= _MAX_VALUES else None

    def instance_of_call(self, call: cst.Call, attributes: InstanceAttributes) -> None:
        """Inside ``call`` (made on the instance by a subclass of another module), and the
        calls it makes on ``self``, ``self.<attr>`` is what ``attributes`` answers."""
        self._instances[id(call)] = (call, attributes)

    def instance_attribute(self, loc: Location, attr: str) -> object:
        """``self.<attr>`` of the instance built at ``loc``, for a base's module: its values
        (None: unknown), or NOT_HERE when no class here stores or binds it and no base of
        another module stores it by a method called here."""
        cls = instance_class(loc)
        if cls is None:
            return None
        if not attributes_of(cls, attr) and class_attribute(cls, attr) is None \
                and self._inherited_values(cls, loc, attr, 0) is _NOT_STORED:
            return NOT_HERE
        return self._attribute_values(loc, attr, 0)

    def _foreign_instance(self, loc: Location) -> Optional[InstanceAttributes]:
        for index, frame in enumerate(loc.context):
            found = self._instances.get(id(frame.call))
            if found is not None and found[0] is frame.call:
                if all(on_self(later.call.func) for later in loc.context[index + 1:]):
                    return found[1]
                return None
        return None

    def _attribute_values(self, loc: Location, attr: str, depth: int) -> Optional[Values]:
        """``self.<attr>`` in a method: the values of every ``self.<attr> = value`` the
        instance's class (:func:`scopes.instance_class`) and its bases make
        (``self.head_act = head_act`` in ``__init__``, the parameter bound at the
        construction calls). Unknown when any assignment is not a plain one."""
        foreign = self._foreign_instance(loc) if self._instances else None
        if foreign is not None:
            answer = foreign(attr)
            if answer is not NOT_HERE:
                return answer  # type: ignore[return-value]
        cls = instance_class(loc)
        if cls is None:
            return None
        bindings = attributes_of(cls, attr)
        if not bindings:
            inherited = self._inherited_values(cls, loc, attr, depth)
            if inherited is not _NOT_STORED:
                return inherited  # type: ignore[return-value]
            return self._class_attribute_values(cls, attr, depth)
        out: Set[object] = set()
        for binding in bindings:
            if binding.kind not in ("assign", "annassign") or binding.value is None or binding.scope is None:
                return None
            # read inside the calls followed here: a construction followed into
            # ``__init__`` (``ProjectionHead(n, activation="softmax")``) binds its parameters
            found = self.values(binding.value, binding.location().within(loc.context), depth + 1)
            if found is None:
                return None
            out |= found
        return frozenset(out) if len(out) <= _MAX_VALUES else None

    def _inherited_values(self, cls: Scope, loc: Location, attr: str, depth: int) -> object:
        """``self.<attr>`` that a method of a base class of another module stores
        (``self.set_properties(kwargs)``): the store's form, asked of that module
        (``inherited_store``), bound to what each call here of that method on the
        instance hands it. _NOT_STORED when the base stores no such attribute."""
        form = self.inherited_store(cls, attr) if self.inherited_store is not None else None
        if form is None:
            return _NOT_STORED
        name = form.method.name.value
        found = method_of(cls, name)
        if found is not None or self.call_sites is None:
            return None  # overridden here: the base's store does not run
        chain = class_chain(cls)
        sites = [(call, where) for call, where in self.call_sites.get(self_call_key(name, False), ())
                 if any(where.scope.enclosing_class() is c for c in chain)]
        if not sites:
            return None  # only the base's own code calls it, with what it hands
        out: Set[object] = set()
        for call, where in sites:
            followed = loc.frame_of(where.scope.node)
            if followed is not None:
                where = where.within(followed[1] + (followed[0],))
            values = self._stored_values(form, call, where, depth)
            if values is None:
                return None
            out |= values
        return frozenset(out) if len(out) <= _MAX_VALUES else None

    def _stored_values(self, form: StoredForm, call: cst.Call, where: Location, depth: int) -> Optional[Values]:
        """What one call ``self.<method>(...)`` makes the method store, by ``form``."""
        if form.constant is not None:
            return form.constant
        assert form.param is not None
        expr = self.bound_argument(form.method, form.param, call, 1, where)
        if expr is UNREADABLE:
            return None
        if form.key is None:
            if isinstance(expr, cst.BaseExpression):
                return self.values(expr, where, depth + 1)
            return form.default
        if not isinstance(expr, cst.Name):
            return None
        entry = self._entries.handed_entry(expr.value, form.key, where, depth + 1, call)
        if entry is None:
            return None
        values, absent = entry
        if absent:
            if form.default is None:
                return None
            values = values | form.default
        return values

    def _class_attribute_values(self, cls: Scope, attr: str, depth: int) -> Optional[Values]:
        """A class attribute read through an instance (``self.head_activation`` with
        ``head_activation = "softmax"`` in the class body or a base's): the nearest
        binding in the class's bases, and every value a subclass of the file gives it
        (the instance may be one). Unknown unless each is a plain constant."""
        out: Set[object] = set()
        for owner in [cls, *subclasses_in_file(cls)]:
            binding = class_attribute(owner, attr)
            if binding is None:
                if owner is cls:
                    return None
                continue
            if not is_constant(binding):
                return None
            assert binding.value is not None
            found = self.values(binding.value, binding.location(), depth + 1)
            if found is None:
                return None
            out |= found
        return frozenset(out) if len(out) <= _MAX_VALUES else None

    def _instance_values(self, name: cst.Name, attr: str, loc: Location, depth: int) -> Optional[Values]:
        """``cfg.activation`` where ``cfg = HeadConfig(...)`` builds a class of the file,
        bound once and never changed (no attribute set on it, not handed to a call): a
        dataclass field takes the argument the construction passes, else its default;
        another class's attribute is what its ``__init__`` sets from that call's
        arguments, else its class attribute."""
        bindings = loc.reaching(name.value)
        if len(bindings) != 1 or not is_constant(bindings[0]) or not isinstance(bindings[0].value, cst.Call):
            return None
        binding = bindings[0]
        assert binding.scope is not None and isinstance(binding.value, cst.Call)
        call, where = binding.value, binding.location().within(loc.context)
        cls = class_scope_of(call.func, where)
        if cls is None or len(binding.scope.bindings.get(name.value, ())) != 1 \
                or self._changed_in_place(binding.scope, name.value):
            return None
        if self._is_dataclass(cls):
            if attributes_of(cls, attr):
                return None  # ``__post_init__`` or a method sets it again
            return self._field_values(cls, call, attr, where, depth)
        init = method_of(cls, "__init__")
        if attributes_of(cls, attr) and init is not None and isinstance(init.node, cst.FunctionDef):
            inside = where.entering(CallFrame(init.node, call, where, 1))
            out: Set[object] = set()
            for set_at in attributes_of(cls, attr):
                if set_at.kind not in ("assign", "annassign") or set_at.value is None or set_at.scope is None:
                    return None
                found = self.values(set_at.value, set_at.location().within(inside.context), depth + 1)
                if found is None:
                    return None
                out |= found
            return frozenset(out) if len(out) <= _MAX_VALUES else None
        if attributes_of(cls, attr):
            return None
        return self._class_attribute_values(cls, attr, depth)

    def _field_values(self, cls: Scope, call: cst.Call, attr: str, where: Location,
                      depth: int) -> Optional[Values]:
        """The field ``attr`` of the config object ``call`` builds of the class ``cls`` of
        this file (:func:`config_objects.field_source`), read where it is written."""
        assert isinstance(cls.node, cst.ClassDef)
        found = field_source(cls.node, call, attr, self.names.resolve, lambda e: self._spread_entries(e, where, depth))
        if found is None:
            return None
        if found[1] == FROM_CALL:
            return self.values(found[0], where, depth + 1)
        bound = cls.bindings.get(attr)
        return self.values(found[0], bound[0].location() if bound else None, depth + 1)

    def _object_field(self, expr: cst.Attribute, loc: Location, depth: int) -> Optional[Values]:
        """``cfg.norm_eps``, ``self.cfg.head_act``, ``ModelConfig(units=64).units``: the field
        of each config object the expression before the dot may hold (a construction
        bound once, a parameter every call passes one, ``self.<attr>`` stored once, a
        config object of another module), read where that object is written. Unknown when
        some code of the file sets such an attribute (``cfg.norm_eps = args.eps``)."""
        attr = expr.attr.value
        if depth > _MAX_DEPTH:
            return None
        sources = self._object_sources(expr.value, loc, depth)
        if not sources:
            return None
        out: Set[object] = set()
        for source, where in sources:
            found = self._source_field(source, where, attr, depth + 1)
            if found is None:
                return None
            out |= found
        if len(out) > _MAX_VALUES or self._field_set(loc, attr):  # (the file's text read only for an answer)
            return None
        return frozenset(out)

    def _source_field(self, source: cst.BaseExpression, where: Location, attr: str,
                      depth: int) -> Optional[Values]:
        remote = self._remote.get(id(source))
        home = remote[1] if remote is not None and remote[0] is source else None
        if home is not None and not isinstance(source, cst.Call):  # ``build(CFG)`` in another module
            found = self.imported_field(None, attr, lambda e: None, home) if self.imported_field else None
            return None if found is None else frozenset({found[1]})
        if not isinstance(source, cst.Call):  # another name for an object: read the field on it
            return self.values(cst.Attribute(value=source, attr=cst.Name(attr)), where, depth + 1)
        cls = class_scope_of(source.func, where) if id(source) not in self._remote else None
        if cls is not None:
            if not isinstance(cls.node, cst.ClassDef) or attributes_of(cls, attr) or not self._is_dataclass(cls) \
                    and method_of(cls, "__init__") is not None:
                return None  # a plain class's ``__init__`` stores it: :meth:`_instance_values` reads those
            return self._field_values(cls, source, attr, where, depth)
        if self.imported_field is not None and (home is not None or not (
                isinstance(source.func, cst.Name) and where.reaching(source.func.value))):
            found = self.imported_field(source, attr, lambda e: self._spread_entries(e, where, depth), home)
            if found is not None:
                if found[0] == FROM_CALL:
                    assert isinstance(found[1], cst.BaseExpression)
                    return self.values(found[1], where, depth + 1)
                return frozenset({found[1]})
        keyword = namespace_keyword(source, attr, self.names.resolve, lambda e: self._spread_entries(e, where, depth))
        return None if keyword is None else self.values(keyword, where, depth + 1)

    def _object_sources(self, expr: cst.BaseExpression, loc: Location,
                        depth: int) -> Optional[List[Tuple[cst.BaseExpression, Location]]]:
        """The expressions an object expression may be bound to, each with where it is
        written: the construction itself, the value of a name bound once (every binding
        that reaches the use), each argument a parameter may take, or each ``self.<attr> =``
        of the instance's class; None when any is unknown."""
        if isinstance(expr, cst.Call):
            return [(expr, loc)]
        if isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name) and expr.value.value == "self":
            cls = instance_class(loc)
            bindings = attributes_of(cls, expr.attr.value) if cls is not None else []
            if not bindings or any(b.kind not in ("assign", "annassign") or b.value is None or b.scope is None
                                   for b in bindings):
                return None
            return [(b.value, b.location().within(loc.context)) for b in bindings
                    if b.value is not None]
        if not isinstance(expr, cst.Name):
            return None
        bindings = loc.reaching(expr.value)
        if not bindings:
            return None
        out: List[Tuple[cst.BaseExpression, Location]] = []
        for binding in bindings:
            if binding.scope is None:
                return None
            if binding.kind == "param":
                found = self._param_objects(binding, loc)
                if found is None:
                    return None
                out += found
            elif is_constant(binding) and binding.value is not None \
                    and isinstance(binding.value, (cst.Call, cst.Name, cst.Attribute)):
                out.append((binding.value, binding.location().within(loc.context)))
            else:
                return None
            if self._object_changed(binding.scope, expr.value):
                return None
        return out

    def _object_changed(self, scope: Scope, name: str) -> bool:
        """Whether the object ``name`` holds may be changed in its scope: an item or an
        attribute set on it, a method called on it, or handed to a call of something not
        defined in this file (whose code the file's field check does not read)."""
        root = scope
        while root.parent is not None:
            root = root.parent
        local = frozenset(n for n, bound in root.bindings.items() if any(b.kind in ("def", "class") for b in bound))
        return name in names_written(self._objects, scope, lambda: _ObjectChanges(local))

    def _param_objects(self, binding: Binding, loc: Location) -> Optional[List[Tuple[cst.BaseExpression, Location]]]:
        """What a parameter holding an object is bound to: inside a followed call, that
        call's argument; else every call of the module's (none from another module)."""
        scope, param = binding.scope, binding.node
        assert scope is not None and isinstance(param, cst.Param)
        followed = loc.frame_of(scope.node) if loc.context else None
        if followed is not None:
            frame = followed[0]
            passed = self.bound_argument(frame.function, param, frame.call, frame.offset, frame.caller)
            if isinstance(passed, cst.BaseExpression):
                return [(passed, frame.caller)]
            if passed is None and param.default is not None:
                return [(param.default, Location(scope.parent or scope, binding.order))]
            return None
        out: List[Tuple[cst.BaseExpression, Location]] = []
        if self.arguments_elsewhere(binding) is not None:  # calls of other modules pass it too
            remote = self._constructed_elsewhere(binding, loc)
            if remote is None:
                return None
            out += remote
            if not self._calls_of(binding):
                return out
        sources = self.param_sources(binding)
        if sources is None:
            return None
        return out + [(expr, where) for expr, where, _call in sources]

    def _constructed_elsewhere(self, binding: Binding, loc: Location) -> Optional[List[Tuple[cst.BaseExpression, Location]]]:
        """The objects the calls of other modules pass a parameter, each a construction of
        a project class with literal arguments (``build(ModelConfig(units=64))`` in
        ``train.py``), rebuilt here as a call that :meth:`_source_field` asks that class
        about; the default where a call leaves it out. None when any call passes another
        thing."""
        scope, param = binding.scope, binding.node
        assert scope is not None and isinstance(param, cst.Param) and isinstance(scope.node, cst.FunctionDef)
        params = scope.node.params
        if param is params.star_arg or param is params.star_kwarg:
            return None
        positional = [*params.posonly_params, *params.params]
        offset = 1 if scope.parent is not None and scope.parent.kind == "class" and not _is_static(scope.node) else 0
        slot = str(positional.index(param) - offset) if param in positional else None
        out: List[Tuple[cst.BaseExpression, Location]] = []
        for site in self.elsewhere.get(function_key(scope), ()):
            if "*" in site:
                return None
            key = slot if slot is not None and slot in site else param.name.value
            if key not in site:
                if param.default is None:
                    return None
                out.append((param.default, Location(scope.parent or scope, binding.order)))
                continue
            record = site.get(CONSTRUCTION + key)
            if record is None:
                return None
            found = json.loads(record)
            rebuilt: cst.BaseExpression = _rebuilt_call(found[1], found[2]) if len(found) == 3 else cst.Name(found[1])
            self._remote[id(rebuilt)] = (rebuilt, (found[0], found[1]))
            out.append((rebuilt, loc))
        return out

    def _field_set(self, loc: Location, attr: str) -> bool:
        """Some code of the file sets the attribute ``attr`` on an object other than
        ``self`` (``cfg.norm_eps = args.eps``), or by name (``setattr``)."""
        if attr in self.fields_set or "*" in self.fields_set:
            return True  # set by the program's code in another module
        root = loc.scope
        while root.parent is not None:
            root = root.parent
        if not isinstance(root.node, cst.Module):
            return True
        key = id(root.node)
        if key not in self._texts:
            self._texts[key] = root.node.code
        return field_assigned(self._texts[key], attr, on_self=False)

    def _is_dataclass(self, cls: Scope) -> bool:
        return isinstance(cls.node, cst.ClassDef) and is_config_class(cls.node, self.names.resolve)

    def values_by_branch(self, expr: cst.BaseExpression, loc: Location) -> Optional[List[Tuple[Values, Branches]]]:
        """The values of ``expr``, each with the ``if`` arms that choose it: ``policy``
        bound to one policy on a TPU branch and to another in the ``else`` gives two
        entries. A value not chosen by a branch comes with ``()``; None when unknown."""
        if isinstance(expr, cst.Call) and self.names.resolve(expr.func) & POLICY_CONSTRUCTORS and expr.args \
                and (expr.args[0].keyword is None or expr.args[0].keyword.value == "name"):
            expr = expr.args[0].value
        if isinstance(expr, cst.Name) and expr.value not in ("True", "False", "None") and self._dtype(expr) is None:
            bindings = loc.reaching(expr.value)
            if len(bindings) > 1 and all(is_constant(b) for b in bindings):
                out: List[Tuple[Values, Branches]] = []
                for binding in bindings:
                    assert binding.value is not None
                    found = self.values(binding.value, binding.location())
                    if found is None:
                        return None
                    out.append((found, binding.branches))
                return out
        found = self.values(expr, loc)
        return None if found is None else [(found, ())]

    def _binding_values(self, binding: Optional[Binding], depth: int,
                        seen_from: Optional[Location] = None) -> Optional[Values]:
        """The values of one binding; ``seen_from`` (the use) carries the calls followed
        to get there, so a parameter of a followed call takes that call's argument."""
        if binding is None or binding.scope is None:
            return None
        context = seen_from.context if seen_from is not None else ()
        if binding.kind == "param" and context:
            followed = seen_from.frame_of(binding.scope.node) if seen_from is not None else None
            if followed is not None:
                return self._argument_values(binding, followed[0], followed[1], depth)
        if binding.kind == "param":
            elsewhere = self._passed_elsewhere(binding, depth)
            if elsewhere is _UNKNOWN:
                return None
            out: set = set()
            if elsewhere is None or self._calls_of(binding):
                sources = self.param_sources(binding)
                if sources is None:
                    return None
                for expr, where, _call in sources:
                    found = self.values(expr, where, depth + 1)
                    if found is None:
                        return None
                    out |= found
            if isinstance(elsewhere, frozenset):
                out |= elsewhere
            return frozenset(out) if len(out) <= _MAX_VALUES else None
        if not is_constant(binding):
            return None
        assert binding.value is not None
        return self.values(binding.value, binding.location().within(context), depth + 1)

    def _argument_values(self, binding: Binding, frame: CallFrame, outer: CallContext,
                         depth: int) -> Optional[Values]:
        """A parameter inside one followed call: what that call passes, else the default."""
        param, scope = binding.node, binding.scope
        assert isinstance(param, cst.Param) and scope is not None
        expr = self.bound_argument(frame.function, param, frame.call, frame.offset, frame.caller)
        if expr is UNREADABLE:
            return None
        if isinstance(expr, cst.BaseExpression):
            return self.values(expr, frame.caller, depth + 1)
        if param.default is None:
            return None
        return self.values(param.default, Location(scope.parent or scope, binding.order, (), outer), depth + 1)

    def bound_argument(self, function: cst.CSTNode, param: cst.Param, call: cst.Call, offset: int,
                       caller: Location) -> Union[cst.BaseExpression, None, _Unreadable]:
        """:func:`argument_for`, reading ``**spread`` arguments whose keys are known where
        the call is made (``build(**cfg)`` with ``cfg = {"act": "softmax"}`` never changed
        afterwards). A ``*args`` or a spread that cannot be read stays UNREADABLE."""
        found = argument_for(function, param, call, offset)
        if found is not UNREADABLE or not isinstance(function, (cst.FunctionDef, cst.Lambda)):
            return found
        params = function.params
        if param is params.star_arg or param is params.star_kwarg or param in params.posonly_params:
            return UNREADABLE
        if any(arg.star == "*" for arg in call.args):
            return UNREADABLE
        written = argument_for(function, param, call.with_changes(args=[a for a in call.args if not a.star]),
                               offset)
        entries: Dict[str, cst.BaseExpression] = {}
        for arg in call.args:
            if arg.star == "**":
                spread = self._spread_entries(arg.value, caller, 0)
                if spread is None:
                    # ``build(act=act, **kwargs)``: a spread that also held ``act`` would be a
                    # TypeError, so the program that runs binds the written argument
                    return UNREADABLE if written is None else written
                entries.update(spread)
        if written is not None:
            return UNREADABLE if param.name.value in entries else written  # given twice: a TypeError
        return entries.get(param.name.value)

    def _spread_entries(self, expr: cst.BaseExpression, loc: Location,
                        depth: int) -> Optional[Dict[str, cst.BaseExpression]]:
        """The keys and values of a dict spread into a call: a literal with string keys,
        the builtin ``dict(key=value)``, or a name bound once to one and never changed."""
        found = self.spread(expr, loc, depth)
        return None if found is None else found[0]

    def spread_argument(self, call: cst.Call, keyword: str,
                        loc: Location) -> Optional[Tuple[cst.BaseExpression, Location]]:
        """``keyword``'s value when only a ``**spread`` of ``call`` can hold it
        (``Conv2D(**CONV)`` with ``CONV = dict(filters=30, kernel_size=3)`` bound once and
        never changed), with where the dict is written. None when the call writes it
        itself, has a ``*args``, or any spread cannot be read (it might hold the key)."""
        if any(arg.star == "*" or (arg.keyword is not None and arg.keyword.value == keyword)
               for arg in call.args):
            return None
        found: Optional[Tuple[cst.BaseExpression, Location]] = None
        for arg in call.args:
            if arg.star != "**":
                continue
            spread = self.spread(arg.value, loc, 0)
            if spread is None:
                return None
            if keyword in spread[0]:
                if found is not None:
                    return None  # given twice: a TypeError at run time
                found = (spread[0][keyword], spread[1])
        return found

    def spread(self, expr: cst.BaseExpression, loc: Location,
               depth: int = 0) -> Optional[Tuple[Dict[str, cst.BaseExpression], Location]]:
        """:meth:`_spread_entries` with the location its values are written at."""
        if depth > _MAX_DEPTH:
            return None
        if isinstance(expr, cst.Dict):
            entries = string_keyed_entries(expr)
            return None if entries is None else (entries, loc)
        if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name) and expr.func.value == "dict" \
                and loc.lookup("dict") is None:
            if any(arg.keyword is None for arg in expr.args):
                return None
            return {arg.keyword.value: arg.value for arg in expr.args if arg.keyword is not None}, loc
        if isinstance(expr, cst.Name):
            binding = loc.lookup(expr.value)
            if binding is None or not is_constant(binding) or binding.value is None or binding.scope is None \
                    or len(binding.scope.bindings.get(expr.value, ())) != 1 \
                    or self._changed_in_place(binding.scope, expr.value):
                return None
            return self.spread(binding.value, binding.location(), depth + 1)
        return None

    def _item_values(self, expr: cst.Subscript, loc: Location, depth: int) -> Optional[Values]:
        """``PRECISION["bf16"]``: the value a container literal holds under a key known
        here (:meth:`item`); unknown for any other subscript."""
        found = self.item(expr, loc, depth)
        if found is None:
            passed = self._single_source(expr.value, loc, depth)
            if passed is None:
                return None
            # ``cfg["head"]`` in ``build(cfg)``, every call passing ``CONFIG`` of another
            # module: the same subscript read where the argument is written
            keys = self.values(expr.slice[0].slice.value, loc, depth + 1) \
                if len(expr.slice) == 1 and isinstance(expr.slice[0].slice, cst.Index) else None
            if keys is None or len(keys) != 1 or not isinstance(next(iter(keys)), (str, int)) \
                    or isinstance(next(iter(keys)), bool):
                return None
            key = next(iter(keys))
            index: cst.BaseExpression = cst.SimpleString(repr(key)) if isinstance(key, str) else _int_literal(key)
            return self.values(expr.with_changes(value=passed[0], slice=[cst.SubscriptElement(cst.Index(index))]),
                               passed[1], depth + 1)
        return self.values(found[0], found[1], depth + 1)

    def _single_source(self, expr: cst.BaseExpression, loc: Location,
                       depth: int) -> Optional[Tuple[cst.BaseExpression, Location]]:
        """The one argument every call passes a parameter ``expr`` names, with where it is
        written (no other module's call passing another); None for anything else."""
        if not isinstance(expr, cst.Name) or depth > _MAX_DEPTH:
            return None
        bindings = loc.reaching(expr.value)
        if len(bindings) != 1 or bindings[0].kind != "param" or bindings[0].scope is None \
                or self._changed_in_place(bindings[0].scope, expr.value):
            return None
        followed = loc.frame_of(bindings[0].scope.node) if loc.context else None
        if followed is not None:  # inside one followed call: what that call passes
            frame = followed[0]
            param = bindings[0].node
            assert isinstance(param, cst.Param)
            passed = self.bound_argument(frame.function, param, frame.call, frame.offset, frame.caller)
            return (passed, frame.caller) if isinstance(passed, (cst.Name, cst.Attribute)) else None
        sources = self.param_sources(bindings[0])
        if sources is None or len(sources) != 1 or self._passed_elsewhere(bindings[0], depth) is not None:
            return None
        source, where, _call = sources[0]
        return (source, where) if isinstance(source, (cst.Name, cst.Attribute)) else None

    def item(self, expr: cst.Subscript, loc: Location,
             depth: int = 0) -> Optional[Tuple[cst.BaseExpression, Location]]:
        """The element ``container[key]`` reads, with where it was written: a dict,
        list or tuple literal bound once and never changed in place (a variable, or a
        ``self.<attr>`` its class sets once and never changes), under a key (or index)
        known here. None for anything else."""
        if depth > _MAX_DEPTH or len(expr.slice) != 1 or not isinstance(expr.slice[0].slice, cst.Index):
            return None
        keys = self.values(expr.slice[0].slice.value, loc, depth + 1)
        container = self._container(expr.value, loc, depth + 1)
        if keys is None or len(keys) != 1 or container is None:
            return None
        literal, where = container
        key = next(iter(keys))
        if isinstance(literal, (cst.List, cst.Tuple)):
            if not isinstance(key, int) or isinstance(key, bool) \
                    or any(isinstance(e, cst.StarredElement) for e in literal.elements) \
                    or not -len(literal.elements) <= key < len(literal.elements):
                return None
            return literal.elements[key].value, where
        for element in literal.elements:
            if not isinstance(element, cst.DictElement):
                return None  # ``{**base, ...}``: what the spread holds is not followed
            found = self.values(element.key, where, depth + 1)
            if found is None:
                return None
            if found == keys:
                return element.value, where
        return None

    def choices(self, expr: cst.Subscript, loc: Location) -> Optional[List[Tuple[cst.BaseExpression, Location]]]:
        """Every element ``container[key]`` may pick, with where each is written: the one
        under a key known here (:meth:`item`), else every value of the container literal
        (``OPTIMIZERS[args.optimizer]`` with ``OPTIMIZERS = {"adam": Adam, "sgd": SGD}``
        bound once and never changed). None when the container is not such a literal or
        holds a ``**spread`` or a starred element (what it holds is not followed)."""
        if len(expr.slice) != 1 or not isinstance(expr.slice[0].slice, cst.Index):
            return None
        known = self.item(expr, loc)
        if known is not None:
            return [known]
        container = self._container(expr.value, loc)
        if container is None:
            return None
        literal, where = container
        out: List[Tuple[cst.BaseExpression, Location]] = []
        for element in literal.elements:
            if not isinstance(element, (cst.DictElement, cst.Element)):
                return None  # ``{**base, ...}``, ``[*more]``
            out.append((element.value, where))
        return out or None

    def _container(self, expr: cst.BaseExpression, loc: Location,
                   depth: int = 0) -> Optional[Tuple[Union[cst.Dict, cst.List, cst.Tuple], Location]]:
        """The literal a container expression holds, when bound once and never changed:
        a name bound to it (or to an item of another such container, ``head = cfg["head"]``),
        a parameter every call of the module passes one such container, or an item of one."""
        literals = (cst.Dict, cst.List, cst.Tuple)
        if depth > _MAX_DEPTH:
            return None
        if isinstance(expr, literals):
            return expr, loc
        if isinstance(expr, cst.Subscript):  # ``cfg["model"]["head"]``: a container inside one
            found = self.item(expr, loc, depth + 1)
            return None if found is None else self._container(found[0], found[1], depth + 1)
        if isinstance(expr, cst.Name):
            bindings = loc.reaching(expr.value)
            if len(bindings) != 1:
                return None
            binding = bindings[0]
            if binding.scope is None or self._changed_in_place(binding.scope, expr.value):
                return None
            if binding.kind == "param":  # ``build(cfg)``: the one container every call passes
                sources = self.param_sources(binding)
                if sources is None or len(sources) != 1 or self._passed_elsewhere(binding, depth) is not None:
                    return None
                return self._container(sources[0][0], sources[0][1], depth + 1)
            if binding.kind not in ("assign", "annassign") or binding.value is None \
                    or not isinstance(binding.value, (*literals, cst.Subscript)):
                return None
            return self._container(binding.value, binding.location().within(loc.context), depth + 1)
        if isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name) and expr.value.value == "self":
            cls = instance_class(loc)
            bindings = attributes_of(cls, expr.attr.value) if cls is not None else []
            if len(bindings) != 1 or not isinstance(bindings[0].value, literals) or bindings[0].scope is None:
                return None
            owner = bindings[0].scope.enclosing_class()
            if owner is None or any(self._changed_in_place(c, "self." + expr.attr.value)
                                    for c in [owner, *subclasses_in_file(owner)]):
                return None
            return bindings[0].value, bindings[0].location().within(loc.context)
        return None

    def _namespace_values(self, loc: Location, name: str, attr: str, depth: int) -> Optional[Values]:
        """``cfg.precision`` where ``cfg = types.SimpleNamespace(precision="mixed_float16")``
        (or ``argparse.Namespace``, ``EasyDict``), bound once
        and never changed in place (no ``cfg.x = ...``, not handed to a call)."""
        bindings = loc.reaching(name)
        if len(bindings) != 1:
            return None
        binding = bindings[0]
        call = binding.value
        if binding.kind not in ("assign", "annassign") or not isinstance(call, cst.Call) or binding.scope is None \
                or not self.names.resolve(call.func) & NAMESPACE_CONSTRUCTORS \
                or len(binding.scope.bindings.get(name, ())) != 1 or self._changed_in_place(binding.scope, name):
            return None
        found = next((arg.value for arg in call.args if arg.keyword is not None and arg.keyword.value == attr), None)
        return None if found is None else self.values(found, binding.location(), depth + 1)

    def changed_in_place(self, scope: Scope, name: str) -> bool:
        """:meth:`_changed_in_place`, for the analyses that read an item of a value
        bound once (``parts = build(x)`` then ``parts[1]``)."""
        return self._changed_in_place(scope, name)

    def _changed_in_place(self, scope: Scope, name: str) -> bool:
        """Whether ``name`` may be changed without being rebound in its scope: an item
        set or deleted, a method called on it (``cfg.update(...)``), or handed to a call."""
        return name in names_written(self._in_place, scope, _InPlaceChanges)

    def _passed_elsewhere(self, binding: Binding, depth: int) -> object:
        """The values the calls in other modules of the project pass for a parameter
        (with its default where a call leaves it out); None when no such call is known,
        ``_UNKNOWN`` when one passes something that is not a literal."""
        passed = self.arguments_elsewhere(binding)
        if passed is None:
            return None
        if passed.unknown:
            return _UNKNOWN
        out: Set[object] = set(passed.values)
        if passed.defaulted:
            param, scope = binding.node, binding.scope
            assert isinstance(param, cst.Param) and scope is not None
            outer = scope.parent or scope
            found = None if param.default is None else \
                self.values(param.default, Location(outer, binding.order), depth + 1)
            if found is None:
                return _UNKNOWN
            out |= found
        return frozenset(out)

    def arguments_elsewhere(self, binding: Binding) -> Optional[ElsewhereArguments]:
        """What the calls in other modules of the project (the program model's
        summaries) pass for a parameter; None when no such call is known. The one
        place a rule learns whether a default is ever left in place by those calls."""
        param, scope = binding.node, binding.scope
        if not self.elsewhere or not isinstance(param, cst.Param) or scope is None \
                or not isinstance(scope.node, cst.FunctionDef) or not _named_from_module(scope):
            return None
        sites = self.elsewhere.get(function_key(scope))
        if not sites:
            return None
        params = scope.node.params
        if param is params.star_arg or param is params.star_kwarg:
            return ElsewhereArguments(frozenset(), False, True)
        positional = [*params.posonly_params, *params.params]
        offset = 1 if scope.parent is not None and scope.parent.kind == "class" and not _is_static(scope.node) else 0
        slot = str(positional.index(param) - offset) if param in positional else None
        out: Set[object] = set()
        defaulted = False
        for site in sites:
            if "*" in site and KEYWORD_SPREAD not in site:
                return ElsewhereArguments(frozenset(out), defaulted, True)  # ``*args``: not read
            written = site.get(slot) if slot is not None else None
            if written is None:
                written = site.get(param.name.value)
            if written is None and KEYWORD_SPREAD in site:
                return ElsewhereArguments(frozenset(out), defaulted, True)  # maybe in ``**kwargs``
            if written is None:  # left out: the default
                defaulted = True
            elif written == ELSEWHERE_UNKNOWN:
                return ElsewhereArguments(frozenset(out), defaulted, True)
            else:
                out.add(json.loads(written))
        return ElsewhereArguments(frozenset(out), defaulted, False)

    def param_sources(self, binding: Binding) -> Optional[List[Tuple[cst.BaseExpression, Location, Optional[cst.Call]]]]:
        """Expressions a parameter may be bound to: ``(expr, where, call)``.

        ``call`` is the call that passes ``expr``, None for the default. None when a
        call passes something unreadable (``*args``, ``**kwargs``) or nothing is known.
        """
        param, scope = binding.node, binding.scope
        if not isinstance(param, cst.Param) or scope is None or binding.kind != "param":
            return None
        outer = scope.parent or scope
        default = None if param.default is None else (param.default, Location(outer, binding.order), None)
        calls = self._calls_of(binding)
        if not calls:
            return None if default is None else [default]
        out: List[Tuple[cst.BaseExpression, Location, Optional[cst.Call]]] = []
        uses_default = False
        for call, where, offset in calls:
            expr = self.bound_argument(scope.node, param, call, offset, where)
            if expr is UNREADABLE:
                return None
            if expr is None:
                uses_default = True
            elif isinstance(expr, cst.BaseExpression):
                out.append((expr, where, call))
        if uses_default:
            if default is None:
                return None
            out.append(default)
        return out

    def callers_unread(self, binding: Binding) -> bool:
        """A parameter whose calls mplint does not see all of, so its default is not all
        it holds: a library module's public function other modules may call too (see
        :meth:`_calls_of`), or a method other than ``__init__`` (``obj.build(amp=True)`` is
        not followed to its class), unless the program model hands the calls of other
        modules, or the pass reads no calls at all. A script's function that nothing
        calls holds its default."""
        scope = binding.scope
        if scope is None or binding.kind != "param" or not isinstance(scope.node, cst.FunctionDef):
            return False
        if self.call_sites is None:
            return True  # a pass that reads no calls (the project index): none is known
        if self._calls_of(binding) or function_key(scope) in self.elsewhere:
            return False
        name = scope.node.name.value
        owner = scope.parent if scope.parent is not None and scope.parent.kind == "class" else None
        method = owner is not None and name != "__init__"
        if owner is not None and name == "__init__" and isinstance(owner.node, cst.ClassDef):
            name = owner.node.name.value  # a constructor is as public as its class
        return method or bool(calls_of(self.call_sites, scope)) \
            or (not self.script and not name.startswith("_") and _named_from_module(scope))

    def _calls_of(self, binding: Binding) -> List[Tuple[cst.Call, Location, int]]:
        """Calls in this module of the function that declares a parameter
        (:func:`scopes.calls_of`), unless other modules may call it too: a library
        module's public function whose other calls the program model does not hand."""
        if self.call_sites is None or binding.scope is None:
            return []
        sites = calls_of(self.call_sites, binding.scope)
        called = sites[0][0].func if sites else None
        if isinstance(called, cst.Name) and not self.script and not called.value.startswith("_") \
                and _named_from_module(binding.scope) and function_key(binding.scope) not in self.elsewhere \
                and not self._run_by_handed(sites):
            return []  # a library module's public function: other modules call it too
        return sites

    def _run_by_handed(self, sites: List[Tuple[cst.Call, Location, int]]) -> bool:
        """Every call is made in a function the program model hands the calls of (``encoder(
        dtype=dtype)`` inside ``build_model``, which ``train.py`` calls): the calls run in
        that program, with what its calls pass, whoever else may call the function."""
        for _call, where, _offset in sites:
            scope: Optional[Scope] = where.scope
            while scope is not None and not (isinstance(scope.node, cst.FunctionDef) and _named_from_module(scope)):
                scope = scope.parent
            if scope is None or function_key(scope) not in self.elsewhere:
                return False
        return bool(sites)


def is_script(module: cst.Module) -> bool:
    """A module run as a program: a ``__main__`` guard, or a call as a statement at its
    top level (``main()``, ``model.fit(...)``), as a module summary's ``script`` says
    (``run.summaries``, read with CPython's ast); its functions are called from here."""
    for statement in module.body:
        if isinstance(statement, cst.If) and "__main__" in module.code_for_node(statement.test):
            return True
        if isinstance(statement, cst.SimpleStatementLine) and any(
                isinstance(small, cst.Expr) and isinstance(small.value, cst.Call) for small in statement.body):
            return True
    return False


def _named_from_module(scope: Scope) -> bool:
    """A function at the module's top level or a method of a top-level class: one the
    program model knows by its ``function_key`` (a nested function folds into another)."""
    parent = scope.parent
    while parent is not None and parent.kind == "class":
        parent = parent.parent
    return parent is not None and parent.kind == "module"


def _is_static(function: cst.FunctionDef) -> bool:
    return any(isinstance(d.decorator, cst.Name) and d.decorator.value == "staticmethod"
               for d in function.decorators)


def is_constant(binding: Binding) -> bool:
    """A plain assignment of a name that is never rebound otherwise in its scope.

    A loop variable or a later ``x += 1`` makes the value a run-time matter.
    """
    if binding.value is None or binding.scope is None or binding.kind not in ("assign", "annassign"):
        return False
    all_bindings = binding.scope.bindings.get(binding.name, [])
    return all(b.kind in ("assign", "annassign") for b in all_bindings)


def _rebuilt_call(name: str, args: Mapping[str, str]) -> cst.Call:
    """``name(...)`` with the arguments a summary wrote (JSON literals; ``...`` for what it
    could not read, which the evaluator does not know)."""
    def literal(written: str) -> cst.BaseExpression:
        if written == ELSEWHERE_UNKNOWN:
            return cst.Ellipsis()
        return cst.parse_expression(repr(json.loads(written)))
    positional = sorted((int(k), v) for k, v in args.items() if k.isdigit())
    return cst.Call(func=cst.Name(name), args=[
        *(cst.Arg(literal(v)) for _, v in positional),
        *(cst.Arg(literal(v), keyword=cst.Name(k)) for k, v in args.items() if not k.isdigit()),
    ])


def _map(values: Values, fn: Callable[[Any], object]) -> Optional[Values]:
    try:
        return frozenset(fn(v) for v in values)
    except TypeError:
        return None


#: builtins that read a container handed to them and never change it
_READING_BUILTINS = frozenset({"sorted", "len", "list", "tuple", "set", "frozenset", "repr", "str", "print",
                               "iter", "enumerate", "any", "all", "min", "max", "isinstance"})


class _InPlaceChanges(NameWrites):
    """The names whose value a scope changes without rebinding them (see
    :meth:`Evaluator._changed_in_place`), ``self.heads`` written so; a ``**name`` spread
    and reads are no change. One walk collects them all."""

    def _add(self, expr: cst.BaseExpression) -> None:
        if isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name):  # ``self.heads``
            self.changed.add(f"{expr.value.value}.{expr.attr.value}")
        elif isinstance(expr, cst.Name):
            self.changed.add(expr.value)

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        if isinstance(node.target, (cst.Subscript, cst.Attribute)):
            self._add(node.target.value)  # ``cfg["x"] = ...``, ``cfg.x = ...``

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        if isinstance(node.target, cst.Subscript):
            self._add(node.target.value)

    def visit_Del(self, node: cst.Del) -> None:
        if isinstance(node.target, cst.Subscript):
            self._add(node.target.value)

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value not in ("get", "keys", "items", "values", "copy"):
            self._add(func.value)
        if isinstance(func, cst.Name) and func.value in _READING_BUILTINS:
            return  # ``sorted(HEADS)`` in an error message reads it
        for arg in node.args:
            if arg.star != "**":
                self._add(arg.value)


class _ObjectChanges(_InPlaceChanges):
    """:class:`_InPlaceChanges` for a config object: handed to a function or class this
    file defines (``build_model(cfg)``, ``Trainer(cfg)``, ``self.make_head(cfg)``) it is
    read, not changed (an assignment of its fields there is seen by the file's field
    check); handed to anything else, it may be."""

    def __init__(self, local: FrozenSet[str]) -> None:
        super().__init__()
        self.local = local

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if isinstance(func, cst.Name) and func.value in self.local \
                or isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == "self":
            return
        super().visit_Call(node)


def _int_literal(value: object) -> cst.BaseExpression:
    """The literal an int is written as: ``-1`` is a minus sign before ``1``."""
    assert isinstance(value, int)
    return cst.Integer(str(value)) if value >= 0 else cst.UnaryOperation(cst.Minus(), cst.Integer(str(-value)))
