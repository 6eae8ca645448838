"""A library's policy switch: a public function of a package module that sets the global
policy from its own parameter (``fe.build(model_fn, mixed_precision=False)`` doing
``if mixed_precision: set_global_policy("mixed_float16")``).

Such a module is no program that sets a policy: the library's users choose it when they
call the function, for the models their callables build. The project stays a library
(:mod:`mplint.run.library`) whose models its users may run under a mixed policy; a call
of the switch inside the project (a script passing ``mixed_precision=True``) is still
followed by the program model as any policy helper is.

Read with :mod:`ast` (the module summary) only for the few files whose bytes name a
policy API.
"""

from __future__ import annotations

import ast
import os
from typing import Iterator, List, Set, Union

from mplint.run.library import is_script
from mplint.run.summaries import BODY, MAIN, summarize
from mplint.semantic.visibility import is_private_name
from mplint.semantic.vocabulary import REWRITE_WORDS


def only_in_library_switches(path: str, raw: bytes) -> bool:
    """Every policy the module sets, and every switch of the graph rewrite it names, is
    set in a public function (or a public method of a public class) of a package module,
    and decided by that function's parameters: the value is a parameter, or the call runs
    under a test that reads one (``if mixed_precision:`` and its ``else``, ``if dtype ==
    tf.float16:``, ``if use_graph_rewrite:``). Never a script, a notebook or a module
    outside a package."""
    if not path.endswith(".py") or is_script(raw):
        return False
    if not os.path.isfile(os.path.join(os.path.dirname(os.path.abspath(path)), "__init__.py")):
        return False
    try:
        text = raw.decode("utf-8", "replace")
        summary = summarize(text)
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    switched = _switched_lines(tree)
    naming = _rewrite_lines(tree)
    if any(number not in switched for number in naming):
        return False
    found = bool(naming)
    for name, function in summary.functions.items():
        if not function.sets:
            continue
        if name in (BODY, MAIN) or any(is_private_name(part) for part in name.split(".")):
            return False
        decided = {line for line, param, guards in function.set_terms if param or guards} \
            | {line for line, _, _, _ in function.set_choices}
        if any(line not in decided and line not in switched for line, _ in function.sets):
            return False
        found = True
    return found


def _rewrite_lines(tree: ast.Module) -> Set[int]:
    """The lines whose code names the graph rewrite: an attribute (``tf.train.experimental.
    enable_mixed_precision_graph_rewrite``), a call of an imported name, or a string (the
    grappler option, the environment switch); a parameter or variable that only carries
    the word (``use_graph_rewrite``) and the import statements do not switch anything."""
    out: Set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            named = node.attr
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            named = node.func.id
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            named = node.value
        else:
            continue
        if any(word in named for word in REWRITE_WORDS):
            out.add(node.lineno)
    return out


def _switched_lines(tree: ast.Module) -> Set[int]:
    """The lines of each call that a public function (or a public method of a public
    class) makes only under an ``if`` whose test reads one of its parameters."""
    out: Set[int] = set()
    for function in _public_functions(tree):
        args = function.args
        params = {a.arg for a in [*args.posonlyargs, *args.args, *args.kwonlyargs]}
        for call in _calls_under_tests(function.body, params, False):
            out.update(range(call.lineno, (call.end_lineno or call.lineno) + 1))
    return out


def _calls_under_tests(body: List[ast.stmt], params: Set[str], tested: bool) -> Iterator[ast.Call]:
    """The calls of ``body`` (nested functions and classes aside) that run only where an
    ``if`` test reading a parameter chose their arm (``tested``: already inside one)."""
    for stmt in body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        if isinstance(stmt, ast.If):
            reads = tested or any(isinstance(n, ast.Name) and n.id in params for n in ast.walk(stmt.test))
            yield from _calls_under_tests(stmt.body, params, reads)
            yield from _calls_under_tests(stmt.orelse, params, reads)
            continue
        if tested:
            yield from (node for node in ast.walk(stmt) if isinstance(node, ast.Call))
            continue
        for field_name in ("body", "orelse", "finalbody"):
            block = getattr(stmt, field_name, None)
            if isinstance(block, list):
                yield from _calls_under_tests(block, params, False)
        for handler in getattr(stmt, "handlers", None) or []:
            yield from _calls_under_tests(handler.body, params, False)


def _public_functions(tree: ast.Module) -> List[Union[ast.FunctionDef, ast.AsyncFunctionDef]]:
    """Each public top-level function and each public method of a public top-level class."""
    out: List[Union[ast.FunctionDef, ast.AsyncFunctionDef]] = []
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and not is_private_name(node.name):
            out.append(node)
        elif isinstance(node, ast.ClassDef) and not is_private_name(node.name):
            out += [item for item in node.body if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef))
                    and not is_private_name(item.name)]
    return out
