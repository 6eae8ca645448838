"""What one module says about the program it belongs to, read with CPython's ``ast``.

A summary lists, for the module body and every function and method: the calls it
makes (as the dotted names written, ``trainers.fit``, ``self.model.fit``), the
imports it runs, and where it sets a dtype policy; for each class its bases, methods
and the classes of its ``self.x = Cls(...)`` attributes. It says whether the module
is a script (a ``__main__`` guard or calls at top level). Summaries are plain JSON
data, cached by file content with the project index, and only made for the modules
the program model asks for: CPython's parser costs a tenth of libcst's, and most
modules of a project are never asked for.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Tuple

from mplint.semantic.vocabulary import POLICY_SETTER_WORDS, WHOLE_MODEL_METHODS, WHOLE_MODEL_VARIABLES

#: the module body's name among a summary's functions
BODY = "<module>"
#: a call recorded for an import statement: it runs the imported module's body
IMPORT = "import:"
#: ``v.method`` where ``v`` holds an instance of a known class, ``Class(...).method``
#: and ``super().method``: ``Class#method`` (``super#method``)
METHOD = "#"
POLICY_SETTERS = frozenset(POLICY_SETTER_WORDS)
SUMMARY_VERSION = 4
#: a trained value that is a parameter of the function: ``param:`` + its name
PARAM = "param:"
#: a value a summary cannot name (an expression, ``None``, a loop variable)
UNKNOWN = "?"


@dataclass
class FunctionSummary:
    #: (line, dotted callee) in source order; imports as IMPORT + dotted module
    calls: List[Tuple[int, str]] = field(default_factory=list)
    #: (line, policy name when written as a literal, else None) of each policy set
    sets: List[Tuple[int, Optional[str]]] = field(default_factory=list)
    #: positional parameters, ``self``/``cls`` of methods left out
    params: List[str] = field(default_factory=list)
    #: the dotted callees whose result it returns (``return build(...)``, ``m = Cls(); return m``,
    #: every callee bound to the name), PARAM + a parameter it returns, UNKNOWN for any other
    returns: List[str] = field(default_factory=list)
    #: models it trains or runs as a whole (``m.fit()``, ``m.trainable_variables``): the
    #: dotted callee that made ``m``, ``self.x`` for an attribute, PARAM + a parameter
    trained: List[str] = field(default_factory=list)
    #: (callee, parameter position or keyword, what the argument is: a dotted callee
    #: that made it, PARAM + a parameter of this function, or UNKNOWN), for each
    #: argument of each call; a call with ``*args``/``**kwargs`` passes UNKNOWN as "*"
    passes: List[Tuple[str, str, str]] = field(default_factory=list)


@dataclass
class ClassSummary:
    bases: List[str] = field(default_factory=list)
    methods: List[str] = field(default_factory=list)
    #: ``self.x = Cls(...)``: attribute -> dotted class name
    attributes: Dict[str, str] = field(default_factory=dict)
    #: ``self.x = make(...)`` (any callee) and ``self.x = <parameter>`` (PARAM + its name)
    #: in a method: attribute -> where its value comes from
    sources: Dict[str, str] = field(default_factory=dict)


@dataclass
class ModuleSummary:
    #: a script: ``if __name__ == "__main__":`` or calls at top level
    script: bool = False
    #: local name -> dotted target (relative ones keep their leading dots)
    imports: Dict[str, str] = field(default_factory=dict)
    functions: Dict[str, FunctionSummary] = field(default_factory=dict)
    classes: Dict[str, ClassSummary] = field(default_factory=dict)

    def to_json(self) -> List[Any]:
        return [SUMMARY_VERSION, self.script, self.imports,
                {name: [f.calls, f.sets, f.params, f.returns, f.trained, f.passes]
                 for name, f in self.functions.items()},
                {name: [c.bases, c.methods, c.attributes, c.sources] for name, c in self.classes.items()}]

    @classmethod
    def from_json(cls, data: Any) -> Optional["ModuleSummary"]:
        """The summary, or None for data of another shape or version (a cache miss)."""
        try:
            version, script, imports, functions, classes = data
            if version != SUMMARY_VERSION:
                return None
            return cls(
                bool(script), {str(k): str(v) for k, v in imports.items()},
                {str(name): FunctionSummary([(int(l), str(c)) for l, c in calls],
                                            [(int(l), None if v is None else str(v)) for l, v in sets],
                                            [str(p) for p in params], [str(r) for r in returns],
                                            [str(t) for t in trained],
                                            [(str(c), str(slot), str(a)) for c, slot, a in passes])
                 for name, (calls, sets, params, returns, trained, passes) in functions.items()},
                {str(name): ClassSummary([str(b) for b in bases], [str(m) for m in methods],
                                         {str(k): str(v) for k, v in attributes.items()},
                                         {str(k): str(v) for k, v in sources.items()})
                 for name, (bases, methods, attributes, sources) in classes.items()})
        except (TypeError, ValueError, AttributeError):
            return None


def summarize(text: str) -> ModuleSummary:
    """The summary of a module's source (an empty one when it does not parse)."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return ModuleSummary()
    summary = ModuleSummary()
    try:
        _collect_block(summary, tree.body, BODY, [])
    except RecursionError:
        return ModuleSummary()
    summary.script = any(_is_main_guard(stmt) or _is_top_level_call(stmt) for stmt in tree.body)
    return summary


def dotted(node: ast.AST) -> Optional[str]:
    """``a.b.c`` for a chain of names, else None."""
    parts: List[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return None


def _is_main_guard(stmt: ast.stmt) -> bool:
    if not isinstance(stmt, ast.If) or not isinstance(stmt.test, ast.Compare):
        return False
    sides = [stmt.test.left, *stmt.test.comparators]
    return any(isinstance(s, ast.Name) and s.id == "__name__" for s in sides) and any(
        isinstance(s, ast.Constant) and s.value == "__main__" for s in sides)


def _is_top_level_call(stmt: ast.stmt) -> bool:
    return isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call)


def _collect_block(summary: ModuleSummary, body: List[ast.stmt], owner: str, classes: List[str]) -> None:
    """Statements of the module body or a class body: definitions get their own
    summaries, everything else is the module body's code (a class body runs on import)."""
    loose: List[ast.stmt] = []
    for stmt in body:
        if isinstance(stmt, ast.ClassDef):
            name = ".".join([*classes, stmt.name])
            summary.classes[name] = ClassSummary([b for b in map(dotted, stmt.bases) if b])
            loose.extend(ast.Expr(value=expr) for expr in (*stmt.bases, *stmt.decorator_list))
            _collect_block(summary, stmt.body, owner, [*classes, stmt.name])
        elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            qualname = ".".join([*classes, stmt.name])
            if classes:
                summary.classes[".".join(classes)].methods.append(stmt.name)
            loose.extend(ast.Expr(value=expr) for expr in stmt.decorator_list)
            function = summary.functions.setdefault(qualname, FunctionSummary())
            function.params = _parameters(stmt, method=bool(classes))
            nodes = _nodes(stmt.body)
            _collect_code(summary, function, nodes, ".".join(classes))
            _collect_models(summary, function, nodes, ".".join(classes))
        else:
            loose.append(stmt)
    nodes = _nodes(loose)
    _collect_code(summary, summary.functions.setdefault(owner, FunctionSummary()), nodes, "")
    _collect_models(summary, summary.functions[owner], nodes, "")


def _nodes(body: List[ast.stmt]) -> List[ast.AST]:
    """Every node of the statements (nested functions and classes fold in): walked
    once, read by both collectors."""
    return [node for stmt in body for node in ast.walk(stmt)]


def _collect_code(summary: ModuleSummary, function: FunctionSummary, nodes: List[ast.AST], cls: str) -> None:
    """Imports, calls and policy sets of ``body`` (nested functions and classes fold
    into it); ``cls`` names the class whose method it is, for ``self.x = Cls()``."""
    instances: Dict[str, str] = {}
    for node in nodes:
        if isinstance(node, ast.Assign):
            made = _constructed(node.value)
            if made is None or not made.split(".")[-1][:1].isupper():
                continue
            for target in node.targets:
                if isinstance(target, ast.Name):
                    instances[target.id] = made
                elif cls and isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) \
                        and target.value.id == "self":
                    summary.classes[cls].attributes.setdefault(target.attr, made)
    calls = function.calls
    for node in nodes:
        if isinstance(node, ast.Call):
            _record_call(function, node, instances)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                local = alias.asname or alias.name.split(".")[0]
                summary.imports.setdefault(local, alias.name if alias.asname else local)
                calls.append((node.lineno, IMPORT + alias.name))
        elif isinstance(node, ast.ImportFrom):
            base = "." * node.level + (node.module or "")
            calls.append((node.lineno, IMPORT + base))
            for alias in node.names:
                if alias.name != "*":
                    joined = base + alias.name if base.endswith(".") else f"{base}.{alias.name}"
                    summary.imports.setdefault(alias.asname or alias.name, joined)
    calls.sort(key=lambda call: call[0])
    function.sets.sort(key=lambda found: found[0])


def _parameters(function: ast.AST, method: bool) -> List[str]:
    """Positional parameter names; a method's first (``self``, ``cls``) left out unless static."""
    assert isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef))
    names = [a.arg for a in [*function.args.posonlyargs, *function.args.args]]
    static = any(dotted(d) == "staticmethod" for d in function.decorator_list)
    return names[1:] if method and not static and names else names


def _collect_models(summary: ModuleSummary, function: FunctionSummary, nodes: List[ast.AST], cls: str) -> None:
    """What the code returns, trains as a whole and passes on, named by the callees
    that made the values: the facts that follow a model or an optimizer from the
    function that makes it to the code that uses it (see the program model)."""
    params = set(function.params)
    sources = summary.classes[cls].sources if cls else {}
    #: id of a Name bound by ``name = callee(...)`` -> (callee, the call)
    assigned: Dict[int, Tuple[str, ast.AST]] = {}
    for node in nodes:
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and isinstance(node.value, ast.Call):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            callee = dotted(node.value.func)
            for target in targets:
                if isinstance(target, ast.Name) and callee is not None:
                    assigned[id(target)] = (callee, node.value)
                elif cls and callee is not None and _is_self_attribute(target):
                    sources.setdefault(cast_attribute(target).attr, callee)
        elif cls and isinstance(node, ast.Assign) and isinstance(node.value, ast.Name) \
                and node.value.id in params:
            for target in node.targets:
                if _is_self_attribute(target):
                    sources.setdefault(cast_attribute(target).attr, PARAM + node.value.id)
    #: local name -> what each of its bindings holds, and the call that made it
    made: Dict[str, List[Tuple[str, Optional[ast.AST]]]] = {}
    for node in nodes:
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            made.setdefault(node.id, []).append(assigned.get(id(node), (UNKNOWN, None)))

    def origins(value: Optional[ast.AST], at: Optional[ast.AST] = None) -> List[str]:
        """What ``value`` may hold; ``at``: the call it is an argument of, whose own
        result (``opt = wrap(opt)``) is not what it is given."""
        if isinstance(value, ast.Call):
            return [dotted(value.func) or UNKNOWN]
        if isinstance(value, ast.Name):
            found = [callee for callee, call in made.get(value.id, []) if at is None or call is not at]
            if value.id in params:
                found.append(PARAM + value.id)
            return found or [UNKNOWN]
        if cls and value is not None and _is_self_attribute(value):
            return ["self." + cast_attribute(value).attr]
        return [UNKNOWN]

    call_functions = {id(node.func) for node in nodes if isinstance(node, ast.Call)}
    for node in nodes:
        if isinstance(node, ast.Return):
            function.returns += [o if not o.startswith("self.") else UNKNOWN for o in origins(node.value)]
        elif isinstance(node, ast.Attribute) and (
                node.attr in WHOLE_MODEL_VARIABLES
                or (node.attr in WHOLE_MODEL_METHODS and id(node) in call_functions)):
            function.trained += [o for o in origins(node.value) if o != UNKNOWN]
        elif isinstance(node, ast.Call):
            callee = dotted(node.func)
            if callee is None:
                continue
            if any(isinstance(a, ast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords):
                function.passes.append((callee, "*", UNKNOWN))
            slots = [(str(i), a) for i, a in enumerate(node.args) if not isinstance(a, ast.Starred)] + [
                (k.arg, k.value) for k in node.keywords if k.arg is not None]
            for slot, arg in slots:
                function.passes += [(callee, slot, o if not o.startswith("self.") else UNKNOWN)
                                    for o in origins(arg, node)]


def cast_attribute(node: ast.AST) -> ast.Attribute:
    assert isinstance(node, ast.Attribute)
    return node


def _is_self_attribute(node: ast.AST) -> bool:
    return isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self"


def _constructed(value: ast.AST) -> Optional[str]:
    """``Cls`` from ``Cls(...)``, ``[Cls(...) for ...]`` or ``[Cls(...), ...]``."""
    if isinstance(value, (ast.ListComp, ast.GeneratorExp)):
        value = value.elt
    elif isinstance(value, (ast.List, ast.Tuple)) and value.elts:
        value = value.elts[0]
    return dotted(value.func) if isinstance(value, ast.Call) else None


def _record_call(function: FunctionSummary, node: ast.Call, instances: Dict[str, str]) -> None:
    callee = dotted(node.func)
    if callee is None and isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Call):
        # `super().fit(...)`, `Trainer(cfg).fit(...)`: a method of that class
        owner = dotted(node.func.value.func)
        if owner is not None:
            callee = owner + METHOD + node.func.attr
    if callee is None:
        return
    head, _, rest = callee.partition(".")
    if rest and head in instances:
        callee = instances[head] + METHOD + rest
    function.calls.append((node.lineno, callee))
    if callee.split(".")[-1].split(METHOD)[-1] in POLICY_SETTERS:
        function.sets.append((node.lineno, _policy_literal(node)))
    # A function handed to another (`app.run(main)`, `strategy.run(step)`) runs there.
    for arg in [*node.args, *(k.value for k in node.keywords)]:
        if isinstance(arg, (ast.Name, ast.Attribute)):
            name = dotted(arg)
            if name is not None:
                function.calls.append((node.lineno, name))


def _policy_literal(call: ast.Call) -> Optional[str]:
    """``"mixed_float16"`` from ``set_global_policy("mixed_float16")`` or
    ``set_global_policy(Policy("mixed_float16"))``; None for anything else."""
    value: Optional[ast.AST] = call.args[0] if call.args else next(
        (k.value for k in call.keywords if k.arg in ("policy", "dtype_policy", "value")), None)
    if isinstance(value, ast.Call) and value.args:
        value = value.args[0]
    if isinstance(value, ast.Constant) and isinstance(value.value, str):
        return value.value
    return None
