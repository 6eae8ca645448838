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

#: the module body's name among a summary's functions
BODY = "<module>"
#: a call recorded for an import statement: it runs the imported module's body
IMPORT = "import:"
#: ``v.method`` where ``v`` holds an instance of a known class, ``Class(...).method``
#: and ``super().method``: ``Class#method`` (``super#method``)
METHOD = "#"
POLICY_SETTERS = frozenset({"set_global_policy", "set_policy", "set_dtype_policy"})
SUMMARY_VERSION = 1


@dataclass
class FunctionSummary:
    #: (line, dotted callee) in source order; imports as IMPORT + dotted module
    calls: List[Tuple[int, str]] = field(default_factory=list)
    #: (line, policy name when written as a literal, else None) of each policy set
    sets: List[Tuple[int, Optional[str]]] = field(default_factory=list)


@dataclass
class ClassSummary:
    bases: List[str] = field(default_factory=list)
    methods: List[str] = field(default_factory=list)
    #: ``self.x = Cls(...)``: attribute -> dotted class name
    attributes: Dict[str, str] = field(default_factory=dict)


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
                {name: [f.calls, f.sets] for name, f in self.functions.items()},
                {name: [c.bases, c.methods, c.attributes] for name, c in self.classes.items()}]

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
                                            [(int(l), None if v is None else str(v)) for l, v in sets])
                 for name, (calls, sets) in functions.items()},
                {str(name): ClassSummary([str(b) for b in bases], [str(m) for m in methods],
                                         {str(k): str(v) for k, v in attributes.items()})
                 for name, (bases, methods, attributes) in classes.items()})
        except (TypeError, ValueError, AttributeError):
            return None


def summarize(text: str) -> ModuleSummary:
    """The summary of a module's source (an empty one when it does not parse)."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return ModuleSummary()
    collector = _Collector()
    try:
        collector.visit(tree)
    except RecursionError:
        return ModuleSummary()
    summary = collector.summary
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


class _Collector(ast.NodeVisitor):
    """One pass: functions (nested ones folded into the outermost), classes, calls."""

    def __init__(self) -> None:
        self.summary = ModuleSummary()
        self.current = self.summary.functions.setdefault(BODY, FunctionSummary())
        self.class_stack: List[str] = []
        self.depth = 0  # function nesting
        #: local variable -> dotted class it was constructed from, in the current function
        self.instances: Dict[str, str] = {}

    # -- definitions ---------------------------------------------------------------
    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        if self.depth:  # a class inside a function belongs to that function
            self.generic_visit(node)
            return
        name = ".".join([*self.class_stack, node.name])
        self.summary.classes[name] = ClassSummary([b for b in map(dotted, node.bases) if b])
        for base in node.bases:
            self.visit(base)
        self.class_stack.append(node.name)
        for stmt in node.body:
            self.visit(stmt)
        self.class_stack.pop()

    def _function(self, node: Any) -> None:
        if self.depth:
            self.depth += 1
            self.generic_visit(node)
            self.depth -= 1
            return
        qualname = ".".join([*self.class_stack, node.name])
        if self.class_stack:
            self.summary.classes[".".join(self.class_stack)].methods.append(node.name)
        outer, outer_instances = self.current, self.instances
        for decorator in node.decorator_list:
            self.visit(decorator)
        self.current = self.summary.functions.setdefault(qualname, FunctionSummary())
        self.instances = {}
        self.depth += 1
        for stmt in node.body:
            self.visit(stmt)
        self.depth -= 1
        self.current, self.instances = outer, outer_instances

    visit_FunctionDef = _function
    visit_AsyncFunctionDef = _function

    # -- imports run the imported module ---------------------------------------------
    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            local = alias.asname or alias.name.split(".")[0]
            self.summary.imports.setdefault(local, alias.name if alias.asname else local)
            self.current.calls.append((node.lineno, IMPORT + alias.name))

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        base = "." * node.level + (node.module or "")
        self.current.calls.append((node.lineno, IMPORT + base))
        for alias in node.names:
            if alias.name == "*":
                continue
            joined = base + alias.name if base.endswith(".") else f"{base}.{alias.name}"
            self.summary.imports.setdefault(alias.asname or alias.name, joined)

    # -- values ------------------------------------------------------------------------
    def visit_Assign(self, node: ast.Assign) -> None:
        self.generic_visit(node)
        if not isinstance(node.value, ast.Call):
            return
        cls = dotted(node.value.func)
        if cls is None or not cls.split(".")[-1][:1].isupper():
            return
        for target in node.targets:
            if isinstance(target, ast.Name):
                self.instances[target.id] = cls
            elif isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) \
                    and target.value.id == "self" and self.class_stack:
                self.summary.classes[".".join(self.class_stack)].attributes.setdefault(target.attr, cls)

    def visit_Call(self, node: ast.Call) -> None:
        self.generic_visit(node)
        callee = dotted(node.func)
        if callee is None and isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Call):
            # `super().fit(...)`, `Trainer(cfg).fit(...)`: a method of that class
            owner = dotted(node.func.value.func)
            if owner is not None:
                callee = owner + METHOD + node.func.attr
        if callee is None:
            return
        head, _, rest = callee.partition(".")
        if rest and head in self.instances:
            callee = self.instances[head] + METHOD + rest
        self.current.calls.append((node.lineno, callee))
        if callee.split(".")[-1].split(METHOD)[-1] in POLICY_SETTERS:
            self.current.sets.append((node.lineno, _policy_literal(node)))
        # A function handed to another (`app.run(main)`, `strategy.run(step)`) runs there.
        for arg in [*node.args, *(k.value for k in node.keywords)]:
            if isinstance(arg, (ast.Name, ast.Attribute)):
                name = dotted(arg)
                if name is not None:
                    self.current.calls.append((node.lineno, name))


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
