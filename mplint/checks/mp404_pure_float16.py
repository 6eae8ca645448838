"""MP404: pure float16 (float16 variables) instead of the mixed_float16 policy."""

from __future__ import annotations

from typing import Dict, List, Optional, Set, Tuple

import libcst as cst

from mplint.rule.check import Check, Fix, Needs
from mplint.rule.edits import Import, import_spec, quote_of, spell, string
from mplint.rule.levels import Safety
from mplint.semantic.call_args import positional_or_keyword
from mplint.semantic.names import dotted_name
from mplint.semantic.scopes import Location, enclosing_test, inference_only, separate_tests, trains_nothing
from mplint.semantic.test_modules import is_test_path
from mplint.semantic.vocabulary import (
    INPUT_LAYERS, LIBRARY_FLOAT16_SWITCHES, MIXED_POLICIES, POLICY_CONSTRUCTORS, VARIABLE_CREATOR_SCOPES,
    VARIABLE_SCOPES,
)

_FLOATX_SUFFIXES = (".backend.set_floatx", ".config.set_floatx")


def _keeps_float32_weights(item: cst.BaseExpression, check: Check) -> bool:
    """``tf.variable_creator_scope(...)`` or ``variable_scope(..., custom_getter=...)``."""
    if not isinstance(item, cst.Call):
        return False
    resolved = check.names.resolve(item.func)
    if resolved & VARIABLE_CREATOR_SCOPES:
        return True
    return bool(resolved & VARIABLE_SCOPES) and any(
        a.keyword is not None and a.keyword.value == "custom_getter" for a in item.args)


_WHY = "variables become float16, updates underflow and training diverges; "


def _named_value(node: cst.CSTNode) -> Optional[cst.BaseExpression]:
    """The argument of a ``set_floatx`` call when it is not a string written there
    (``hparams.COMPUTE_DTYPE``): its value is decided where that name is bound."""
    value = positional_or_keyword(node, 0, "value") if isinstance(node, cst.Call) else None
    return None if value is None or isinstance(value, cst.SimpleString) else value


class PureFloat16(Check):
    rule_id = "MP404"

    #: float16 spelled out: set_floatx, a policy or a layer dtype (tf.half too); or a
    #: set_floatx or policy call whose value another module decides (``hparams.DTYPE``);
    #: or a mixed policy governing a module whose layer dtype the program's calls hand in
    #: (``build(dtype=dtype)`` of ``strategy, dtype = configure(args)`` in ``train.py``)
    needs = Needs((b"float16", b"half", b"set_floatx"), policy_call=True, mixed_policy=True)

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self._layer_dtypes: List[Tuple[cst.Arg, Location]] = []
        #: open ``with`` blocks that keep float32 master weights, and ``try`` blocks
        #: whose ``finally`` restores floatx
        self._creator_scopes = 0
        self._restoring_tries: List[bool] = []
        #: ids of set_floatx calls made where float16 is temporary or keeps float32 weights
        self._not_training: Set[int] = set()
        #: where each set_floatx call is, and those made in a ``finally:`` (restores)
        self._floatx_at: Dict[int, Location] = {}
        self._finally_depth = 0
        self._restores: List[Tuple[cst.Call, Location]] = []
        #: a library's own float16 switch (``dde.config.set_default_float("float16")``)
        self._library_switches: List[Tuple[cst.Call, str, Location]] = []

    def visit_With(self, node: cst.With) -> None:
        if any(_keeps_float32_weights(item.item, self) for item in node.items):
            self._creator_scopes += 1

    def leave_With(self, node: cst.With) -> None:
        if any(_keeps_float32_weights(item.item, self) for item in node.items):
            self._creator_scopes -= 1

    def visit_Try(self, node: cst.Try) -> None:
        final = node.finalbody
        self._restoring_tries.append(final is not None and "set_floatx" in self.ctx.module.code_for_node(final))

    def leave_Try(self, node: cst.Try) -> None:
        self._restoring_tries.pop()

    def visit_Finally(self, node: cst.Finally) -> None:
        self._finally_depth += 1

    def leave_Finally(self, node: cst.Finally) -> None:
        self._finally_depth -= 1

    def visit_Call(self, node: cst.Call) -> None:
        if any(n.endswith(_FLOATX_SUFFIXES) for n in self.names.resolve(node.func)):
            self._floatx_at[id(node)] = self.ctx.scopes.location()
            if self._finally_depth:
                self._restores.append((node, self.ctx.scopes.location()))
        if any(n.endswith(_FLOATX_SUFFIXES) for n in self.names.resolve(node.func)) and (
                self._creator_scopes or any(self._restoring_tries) or self._in_test_that_trains_nothing()):
            self._not_training.add(id(node))
        resolved = self.names.resolve(node.func)
        for name in resolved & LIBRARY_FLOAT16_SWITCHES.keys():
            self._library_switches.append((node, name, self.ctx.scopes.location()))
        if not any(n.startswith("keras.layers.") for n in resolved) or resolved & INPUT_LAYERS:
            return
        for arg in node.args:
            if arg.keyword is not None and arg.keyword.value == "dtype":
                self._layer_dtypes.append((arg, self.ctx.scopes.location()))

    def finish(self) -> None:
        facts = self.facts
        for site in facts.floatx_calls:
            # (a policy another test function sets is that test's own)
            mixed_set = any(c.values and c.values & MIXED_POLICIES
                            and not separate_tests(c.location.scope, site.location.scope)
                            for c in facts.policy_calls)
            # A mixed policy set too decides the layers' dtypes: not pure float16. Nor
            # is float16 for a while (restored in a `finally`), under a variable
            # creator or custom getter that keeps float32 master weights, in a test
            # that trains nothing (a dtype check), or in a predict/export function that
            # trains nothing (16-bit inference is a speed choice).
            if id(site.node) in self._not_training or inference_only(site.location.scope, self.ctx.module):
                continue
            if site.values == frozenset({"float16"}) and not mixed_set:
                named = _named_value(site.node)
                # a value read from a name is decided there (``hparams.py``): nothing to rewrite here
                said = "set_floatx('float16')" if named is None else \
                    f"set_floatx({self.ctx.module.code_for_node(named)}), 'float16' here,"
                fix = self._floatx_fix(site.node) if named is None else None
                self.report(site.node, f"{said} makes every layer pure float16: "
                            + _WHY + "use the 'mixed_float16' policy", fix)
        for call in facts.policy_calls:
            if call.values == frozenset({"float16"}) and not self._in_test_that_trains_nothing(call.location):
                literal = _policy_literal(call.node, self)
                fix = None
                if literal is not None:
                    fix = Fix({literal: _restring(literal, "mixed_float16")}, safety=Safety.UNSAFE)
                self.report(call.node, "the global policy 'float16' is pure float16: " + _WHY
                            + "use 'mixed_float16'", fix)
        for switch, name, loc in self._library_switches:
            value = positional_or_keyword(switch, 0, "value")
            if value is None or self.ctx.values.values(value, loc) != frozenset({LIBRARY_FLOAT16_SWITCHES[name]}):
                continue
            if self.facts.mixed_policy(loc.scope) is not None or self._in_test_that_trains_nothing(loc):
                continue  # a mixed policy set too decides the layers' dtypes
            library = name.split(".", 1)[0]
            # No fix: the library's other settings (float32, or its own "mixed") change
            # what the program trains with in ways only its author can choose.
            self.report(switch, f"{name.rsplit('.', 1)[-1]}({self.ctx.module.code_for_node(value)}) makes "
                                f"every {library} variable float16 (pure float16): " + _WHY
                        + f"train in float32, or with mixed precision that keeps float32 variables and "
                          f"scales the loss")
        for arg, loc in self._layer_dtypes:
            if self.ctx.values.values(arg.value, loc) != frozenset({"float16"}):
                continue
            if self._in_test_that_trains_nothing(loc) or self._dtype_test(loc):
                continue
            quote = quote_of(cst.Call(func=cst.Name("f"), args=[arg]), self.ctx.text)
            self.report(arg.value, "a layer with dtype float16 keeps float16 variables: " + _WHY
                        + "use dtype='mixed_float16' (or the global policy)",
                        Fix({arg.value: string("mixed_float16", quote)}, safety=Safety.UNSAFE))

    def _in_test_that_trains_nothing(self, loc: Optional[Location] = None) -> bool:
        scope = (loc or self.ctx.scopes.location()).scope
        return trains_nothing(scope, self.ctx.module, self.ctx.path)

    def _dtype_test(self, loc: Location) -> bool:
        """A test that gives its layers different explicit dtypes checks how Keras
        mixes them (``Dense(2, dtype="float32")`` next to ``Dense(2, dtype="float16")``):
        a unit test of dtypes, not a float16 training program."""
        if not is_test_path(self.ctx.path):
            return False
        test = enclosing_test(loc.scope)
        if test is None:
            return False
        for arg, where in self._layer_dtypes:
            if enclosing_test(where.scope) is test:
                values = self.ctx.values.values(arg.value, where)
                if values and values != frozenset({"float16"}):
                    return True
        return False

    def _floatx_fix(self, node: cst.CSTNode) -> Optional[Fix]:
        """``set_global_policy('mixed_float16')`` for ``set_floatx('float16')``, and the
        policy restored where floatx was: a later ``set_floatx(old)`` in a ``finally:``
        of the same function becomes ``set_global_policy(old)``, or the mixed policy
        would leak out of it (into the next test)."""
        assert isinstance(node, cst.Call)
        quote = quote_of(node, self.ctx.text)
        made = self._as_policy_call(node, string("mixed_float16", quote))
        if made is None:
            return None
        replacements: Dict[cst.CSTNode, cst.CSTNode] = {node: made[0]}
        imports, removals = list(made[1]), list(made[2])
        at = self._floatx_at.get(id(node))
        for restore, where in self._restores:
            if at is None or where.scope is not at.scope or where.order <= at.order or len(restore.args) != 1:
                continue
            again = self._as_policy_call(restore, restore.args[0].value)
            if again is None:
                return None  # a restore it cannot rewrite: better no fix than a leak
            replacements[restore] = again[0]
            imports += [i for i in again[1] if i not in imports]
            removals += [r for r in again[2] if r not in removals]
        return Fix(replacements, Safety.UNSAFE, tuple(imports), tuple(removals))

    def _as_policy_call(self, node: cst.Call, value: cst.BaseExpression
                        ) -> Optional[Tuple[cst.Call, Tuple[Import, ...], Tuple[Import, ...]]]:
        """``<keras>.mixed_precision.set_global_policy(value)`` for the set_floatx call
        ``node``, in the same Keras package; the imports it needs, and the one it may
        leave unused."""
        for qualified in sorted(self.names.qualified(node.func)):
            for suffix in _FLOATX_SUFFIXES:
                if qualified.endswith(suffix):
                    root = qualified[: -len(suffix)]
                    spelled = spell(root + ".mixed_precision.set_global_policy", self.names)
                    if spelled is None or len(node.args) != 1:
                        return None
                    expr, imports = spelled
                    arg = node.args[0].with_changes(value=value, keyword=None, equal=cst.MaybeSentinel.DEFAULT)
                    head = (dotted_name(node.func) or "").split(".")[0]
                    spec = import_spec(head, self.ctx.module)  # dropped only if left unused
                    return node.with_changes(func=expr, args=[arg]), imports, (spec,) if spec else ()
        return None


def _policy_literal(call: cst.CSTNode, check: Check) -> Optional[cst.SimpleString]:
    """The string literal naming the policy in ``set_global_policy('x')`` or ``Policy('x')``."""
    assert isinstance(call, cst.Call)
    literal = positional_or_keyword(call, 0, "policy")
    if isinstance(literal, cst.Call) and check.names.resolve(literal.func) & POLICY_CONSTRUCTORS:
        literal = positional_or_keyword(literal, 0, "name")
    return literal if isinstance(literal, cst.SimpleString) else None


def _restring(literal: cst.SimpleString, value: str) -> cst.SimpleString:
    quote = literal.value[len(literal.prefix)]
    return literal.with_changes(value=f"{literal.prefix}{quote}{value}{quote}")
