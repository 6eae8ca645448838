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

import os

from mplint.run.library import is_script
from mplint.run.summaries import BODY, MAIN, summarize
from mplint.semantic.visibility import is_private_name
from mplint.semantic.vocabulary import REWRITE_WORDS


def only_in_library_switches(path: str, raw: bytes) -> bool:
    """Every policy the module sets is set in a public function (or a public method of a
    public class) of a package module, and decided by that function's parameters: the
    value is a parameter, or the set runs under a test of one (``if mixed_precision:``
    and its ``else``). Never a script, a notebook, a module outside a package or one that
    names the graph rewrite."""
    if not path.endswith(".py") or is_script(raw) or any(word.encode() in raw for word in REWRITE_WORDS):
        return False
    if not os.path.isfile(os.path.join(os.path.dirname(os.path.abspath(path)), "__init__.py")):
        return False
    try:
        summary = summarize(raw.decode("utf-8", "replace"))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    found = False
    for name, function in summary.functions.items():
        if not function.sets:
            continue
        if name in (BODY, MAIN) or any(is_private_name(part) for part in name.split(".")):
            return False
        decided = {line for line, param, guards in function.set_terms if param or guards} \
            | {line for line, _, _, _ in function.set_choices}
        if any(line not in decided for line, _ in function.sets):
            return False
        found = True
    return found
