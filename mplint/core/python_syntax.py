"""CPython's own parse of user text (a tree only; nothing runs): the guarded way to
``ast.parse`` anything a user wrote.

It imports nothing heavy (a run answered by the cache never imports libcst), and
turns every way CPython's parser gives up on a file (too deep, out of memory, null
bytes) into a value or :class:`TooDeep`, never a traceback.
"""

from __future__ import annotations

import ast
from typing import Optional, Tuple, cast

#: CPython's own limits; libcst has none and crashes far beyond them. "parenthes"
#: covers the f-string parser's "f-string: too many nested parenthesis" (3.9-3.11),
#: on which libcst's own f-string parser overflows the C stack.
_TOO_DEEP = ("too many nested parenthes", "too many levels of indentation",
             "too many statically nested blocks", "too complex")


class TooDeep(Exception):
    """CPython found the text too deep to parse; the message is one line for the user."""


def python_tree(text: str) -> Tuple[Optional[ast.Module], Optional[str]]:
    """CPython's tree of the text, or None and its syntax error in its words;
    :class:`TooDeep` when the text is beyond CPython's (and so libcst's) limits."""
    try:
        tree = cast(ast.Module, compile(text, "<mplint>", "exec", flags=ast.PyCF_ONLY_AST, dont_inherit=True))
    except SyntaxError as err:
        if any(reason in str(err.msg) for reason in _TOO_DEEP):
            raise TooDeep(f"too deeply nested to parse (line {err.lineno}: {err.msg})") from None
        return None, f"syntax error at line {err.lineno or 1}, column {err.offset or 1}: {err.msg}"
    except (RecursionError, MemoryError):
        raise TooDeep("too deeply nested to parse (Python itself cannot compile it)") from None
    except ValueError as err:  # e.g. source code string cannot contain null bytes
        return None, f"cannot be parsed: {err}"
    return tree, None


def tree_or_none(text: str) -> Optional[ast.Module]:
    """CPython's tree of the text, or None when it does not parse for any reason."""
    try:
        return python_tree(text)[0]
    except TooDeep:
        return None
