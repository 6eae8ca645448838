"""CPython's own parse of user text (a tree only; nothing runs): the guarded way to
``ast.parse`` anything a user wrote.

It imports nothing heavy (a run answered by the cache never imports libcst), and
turns every way CPython's parser gives up on a file (too deep, out of memory, null
bytes) into a value or :class:`TooDeep`, never a traceback.
"""

from __future__ import annotations

import ast
import sys
from typing import Optional, Tuple, cast

#: CPython's own limits, in the words of each version from 3.9 on; libcst has none and
#: crashes far beyond them.
#: - "parenthes": "too many nested parentheses" (the tokenizer, every version; 3.12's
#:   PEP 701 tokenizer reads an f-string's expressions with it too) and the f-string
#:   parser's "f-string: too many nested parenthesis" (3.9-3.11), on which libcst's own
#:   f-string parser overflows the C stack;
#: - "too many nested f-strings": 3.12's limit of 150 nested f-strings (3.14 adds "or
#:   t-strings"), which 3.9-3.11 cannot write at all (an f-string cannot hold its own quote);
#: - "too complex": "too complex" and the parser's "Python source too complex to parse"
#:   (as a SyntaxError; as a MemoryError it is caught below).
_TOO_DEEP = ("too many nested parenthes", "too many levels of indentation",
             "too many statically nested blocks", "too complex", "too many nested f-strings")


#: CPython 3.12 limits recursion through C code to about 1,500 levels whatever
#: ``sys.setrecursionlimit`` says (3.11 counts it against that limit; 3.13 allows far
#: more), and libcst's code generation (a finding's position, a fix's output) passes
#: through C once per level of the tree: on 3.12 an ``elif`` chain of 800 branches is
#: beyond it, where 3.11 and 3.13 follow 3,000. A file that deep is not checked, and
#: the user is told the version that would check it.
C_RECURSION_CAPPED = sys.version_info[:2] == (3, 12)
#: what a file whose tree the check cannot recurse through is told
TOO_DEEP_TO_CHECK = ("too deeply nested to check on Python 3.12, which limits recursion in C code "
                     "(Python 3.11 or 3.13 checks it)" if C_RECURSION_CAPPED else "too deeply nested to check")


def beyond_limits(message: str) -> bool:
    """Whether CPython's syntax error ``message`` says the text is beyond its limits
    (and so beyond libcst's), not that it is wrong."""
    return any(reason in message for reason in _TOO_DEEP)


class TooDeep(Exception):
    """CPython found the text too deep to parse; the message is one line for the user."""


def python_tree(text: str) -> Tuple[Optional[ast.Module], Optional[str]]:
    """CPython's tree of the text, or None and its syntax error in its words;
    :class:`TooDeep` when the text is beyond CPython's (and so libcst's) limits."""
    try:
        tree = cast(ast.Module, compile(text, "<mplint>", "exec", flags=ast.PyCF_ONLY_AST, dont_inherit=True))
    except SyntaxError as err:
        if beyond_limits(str(err.msg)):
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
