"""Small libcst edits that several fixes share (adding a keyword argument, quoting)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, List, Mapping, Optional, Sequence, Tuple

import libcst as cst

if TYPE_CHECKING:  # pragma: no cover
    from mplint.semantic.names import NameResolver


def quote_of(call: cst.Call, text: str) -> str:
    """The quote character the code around ``call`` uses, to keep the style: the
    call's own strings', else the file's (``text``, its source) more common one."""
    for arg in call.args:
        if isinstance(arg.value, cst.SimpleString):
            prefix_len = len(arg.value.prefix)
            return arg.value.value[prefix_len]
    return '"' if text.count('"') > text.count("'") else "'"


def with_keyword(call: cst.Call, keyword: str, value: cst.BaseExpression) -> cst.Call:
    """``call`` with ``keyword=value`` set: replaced in place, or added last (before a
    trailing ``**kwargs``), in the call's own layout.

    The new argument goes where the next argument would: on the line after the last
    one at the arguments' indentation when they stand one per line, on the same line
    when they share one. The closing parenthesis keeps its place and its trailing
    comma or lack of one, and a comment after the last argument stays on that
    argument's line.
    """
    args = list(call.args)
    for i, arg in enumerate(args):
        if arg.keyword is not None and arg.keyword.value == keyword:
            args[i] = arg.with_changes(value=value)
            return call.with_changes(args=args)
    new_arg = cst.Arg(
        value=value,
        keyword=cst.Name(keyword),
        equal=cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace("")),
    )
    if not args:
        if _has_comment(call.whitespace_before_args):
            return call.with_changes(args=[new_arg])
        return call.with_changes(args=[new_arg], whitespace_before_args=cst.SimpleWhitespace(""))
    separator = _separator(call, args)
    insert_at = len(args)
    while insert_at > 0 and args[insert_at - 1].star == "**":
        insert_at -= 1  # keywords go before a trailing **kwargs
    if insert_at < len(args):
        args.insert(insert_at, new_arg.with_changes(comma=separator))
        return call.with_changes(args=args)
    last = args[-1]
    if isinstance(last.comma, cst.Comma):  # a trailing comma: the new argument keeps one
        then, closing = _split(last.comma.whitespace_after, separator)
        args[-1] = last.with_changes(comma=last.comma.with_changes(whitespace_after=then))
        args.append(new_arg.with_changes(comma=cst.Comma(whitespace_after=closing)))
    else:  # the whitespace (and comment) before ")" follows the last argument
        then, closing = _split(last.whitespace_after_arg, separator)
        args[-1] = last.with_changes(comma=cst.Comma(whitespace_after=then),
                                     whitespace_after_arg=cst.SimpleWhitespace(""))
        args.append(new_arg.with_changes(whitespace_after_arg=closing))
    return call.with_changes(args=args)


Whitespace = cst.BaseParenthesizableWhitespace


def _split(after: Whitespace, separator: cst.Comma) -> Tuple[Whitespace, Whitespace]:
    """What follows the old last argument's comma, and what follows the new argument,
    from ``after`` (what followed the old last argument: the way to ``)``).

    Arguments one per line: the old one keeps its newline with its comment, indented
    for the new one, which takes the way to ``)`` without the comment. Arguments on
    one line: the new one joins them, and takes the way to ``)`` whole.
    """
    if isinstance(after, cst.ParenthesizedWhitespace) and isinstance(separator.whitespace_after,
                                                                      cst.ParenthesizedWhitespace):
        return after.with_changes(last_line=separator.whitespace_after.last_line), _plain(after)
    return separator.whitespace_after, after


def _has_comment(whitespace: Whitespace) -> bool:
    return isinstance(whitespace, cst.ParenthesizedWhitespace) and (
        whitespace.first_line.comment is not None or any(line.comment for line in whitespace.empty_lines))


def _separator(call: cst.Call, args: Sequence[cst.Arg]) -> cst.Comma:
    """The comma used between arguments, copied from the last one (less its comment
    and blank lines; a trailing comma is not one). With none, a call laid out one
    argument per line gets a newline and the first argument's indentation."""
    for arg in args[-2::-1]:
        if isinstance(arg.comma, cst.Comma):
            return arg.comma.with_changes(whitespace_after=_plain(arg.comma.whitespace_after))
    if isinstance(call.whitespace_before_args, cst.ParenthesizedWhitespace):
        return cst.Comma(whitespace_after=_plain(call.whitespace_before_args))
    return cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))


def _plain(whitespace: Whitespace) -> Whitespace:
    """The whitespace without its comment, trailing spaces or blank lines."""
    if isinstance(whitespace, cst.ParenthesizedWhitespace):
        return whitespace.with_changes(first_line=cst.TrailingWhitespace(newline=whitespace.first_line.newline),
                                       empty_lines=[])
    return whitespace


def string(value: str, quote: str) -> cst.SimpleString:
    return cst.SimpleString(f"{quote}{value}{quote}")


def cast(value: cst.BaseExpression, function: str, dtype: cst.BaseExpression) -> cst.Call:
    """``<function>(value, dtype)``, e.g. ``tf.cast(x, tf.float32)``; ``function`` is
    dotted source text such as ``"tf.cast"`` or ``"keras.ops.cast"``."""
    return cst.Call(
        func=cst.parse_expression(function),
        args=[
            cst.Arg(value, comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))),
            cst.Arg(dtype),
        ],
    )

Import = Tuple[str, Optional[str], Optional[str]]


def spell(qualified: str, names: "NameResolver") -> Optional[Tuple[cst.BaseExpression, Tuple[Import, ...]]]:
    """An expression naming the fully qualified API ``qualified`` in this file.

    Uses the longest module-level import alias that is a prefix of it
    (``tf`` for ``tensorflow.keras...``); without one, the fix adds
    ``import tensorflow as tf`` (or ``import <root>``) and spells the name from it.
    None when the name it would need is taken by something else.
    """
    best: Optional[Tuple[str, str]] = None
    for local, targets in names.module_scope.aliases.items():
        if len(targets) != 1:
            continue
        target = next(iter(targets))
        if (qualified == target or qualified.startswith(target + ".")) and (
            best is None or len(target) > len(best[1])
        ):
            best = (local, target)
    if best is not None:
        local, target = best
        return cst.parse_expression(local + qualified[len(target):]), ()
    root, _, rest = qualified.partition(".")
    local = "tf" if root == "tensorflow" else root
    if local in names.module_scope.aliases:
        return None
    text = local + ("." + rest if rest else "")
    return cst.parse_expression(text), ((root, None, local if local != root else None),)


def import_spec(local: str, module: cst.Module) -> Optional[Import]:
    """``(module, name, asname)`` of the top-level import that binds ``local``.

    The shape ``Fix.remove_imports`` takes, to drop an import a fix leaves unused.
    """
    for stmt in module.body:
        if not isinstance(stmt, cst.SimpleStatementLine):
            continue
        for small in stmt.body:
            if isinstance(small, cst.ImportFrom) and not small.relative and small.module is not None \
                    and not isinstance(small.names, cst.ImportStar):
                for alias in small.names:
                    if alias.evaluated_alias == local or (alias.asname is None and alias.evaluated_name == local):
                        return (_dotted(small.module), alias.evaluated_name, alias.evaluated_alias)
            elif isinstance(small, cst.Import):
                for alias in small.names:
                    if alias.evaluated_alias == local:
                        return (alias.evaluated_name, None, local)
                    if alias.asname is None and alias.evaluated_name == local:
                        return (local, None, None)
    return None


def _dotted(node: cst.BaseExpression) -> str:
    if isinstance(node, cst.Attribute):
        return _dotted(node.value) + "." + node.attr.value
    assert isinstance(node, cst.Name)
    return node.value


def arg_index(args: Sequence[cst.Arg], position: int, keyword: str) -> Optional[int]:
    """Index in ``args`` of the argument at ``position`` or named ``keyword``, if any."""
    positional = 0
    for i, arg in enumerate(args):
        if arg.star:
            return None
        if arg.keyword is None:
            if positional == position:
                return i
            positional += 1
        elif arg.keyword.value == keyword:
            return i
    return None


def without_arg(args: List[cst.Arg], index: int) -> List[cst.Arg]:
    """``args`` less one; a removed last argument hands its comma (or none) and the
    whitespace before ``)`` to the new last, so a closing parenthesis on its own line
    stays there."""
    out = args[:index] + args[index + 1:]
    if index == len(args) - 1 and out:
        removed = args[index]
        out[-1] = out[-1].with_changes(comma=removed.comma, whitespace_after_arg=removed.whitespace_after_arg)
    return out


def replace_arg(args: List[cst.Arg], index: int,
                keywords: List[Tuple[str, cst.BaseExpression]]) -> List[cst.Arg]:
    """``args`` with ``args[index]`` replaced by keyword arguments, keeping the layout."""
    separator = next((a.comma.with_changes(whitespace_after=_plain(a.comma.whitespace_after))
                      for a in args[:index][::-1] if isinstance(a.comma, cst.Comma)),
                     cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
    equal = cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace(""))
    new = [cst.Arg(value=v, keyword=cst.Name(k), equal=equal, comma=separator) for k, v in keywords]
    new[-1] = new[-1].with_changes(comma=args[index].comma)
    return args[:index] + new + args[index + 1:]


# -- the project's line length -------------------------------------------------------------
def fit_line_length(module: cst.Module, new_nodes: Sequence[cst.CSTNode], line_length: Optional[int]
                    ) -> cst.Module:
    """``module`` with each call among a fix's ``new_nodes`` that now runs past
    ``line_length`` wrapped as black and ruff's formatter wrap one: the arguments on a
    line of their own, indented one level, the closing parenthesis back at the call's
    indentation; one argument a line, with a trailing comma, when that line is too long
    too. Calls already spread over lines keep their layout (:func:`with_keyword`)."""
    calls = [node for node in new_nodes if isinstance(node, cst.Call) and node.args]
    if line_length is None or not calls:
        return module
    from libcst.metadata import MetadataWrapper, PositionProvider

    positions = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    lines = module.code.split("\n")
    wrapped: dict = {}
    for call in calls:
        where = positions.get(call)
        if where is None:
            continue
        if where.start.line != where.end.line:
            exploded = _exploded_if_too_long(call, positions, lines, line_length)
            if exploded is not None:
                wrapped[id(call)] = exploded
            continue
        line = lines[where.start.line - 1].rstrip("\r")
        if len(line.expandtabs()) <= line_length:
            continue
        indent = line[: len(line) - len(line.lstrip())]
        wrapped[id(call)] = _wrapped(call, indent, indent + module.default_indent, line_length)
    if not wrapped:
        return module
    return module.visit(_ById(wrapped))


def _newline(to: str) -> cst.ParenthesizedWhitespace:
    return cst.ParenthesizedWhitespace(first_line=cst.TrailingWhitespace(), empty_lines=[], indent=False,
                                       last_line=cst.SimpleWhitespace(to))


def _exploded_if_too_long(call: cst.Call, positions: Mapping[cst.CSTNode, Any], lines: List[str],
                          line_length: int) -> Optional[cst.Call]:
    """A call whose arguments share a line of their own between ``(`` and ``)`` on
    lines of their own, where that line is now too long: one argument a line, with
    a trailing comma, at the same indentation (as black lays it out)."""
    first, last = positions.get(call.args[0]), positions.get(call.args[-1])
    if first is None or last is None or first.start.line != last.end.line:
        return None
    before_close = call.args[-1].comma.whitespace_after if isinstance(call.args[-1].comma, cst.Comma) \
        else call.args[-1].whitespace_after_arg
    if not (isinstance(call.whitespace_before_args, cst.ParenthesizedWhitespace)
            and isinstance(before_close, cst.ParenthesizedWhitespace)
            and not _has_comment(call.whitespace_before_args) and not _has_comment(before_close)
            and not any(_has_comment(a.comma.whitespace_after) for a in call.args if isinstance(a.comma, cst.Comma))):
        return None
    line = lines[first.start.line - 1].rstrip("\r")
    if len(line.expandtabs()) <= line_length:
        return None
    inner = line[: len(line) - len(line.lstrip())]
    closing = lines[positions[call].end.line - 1]
    indent = closing[: len(closing) - len(closing.lstrip())]
    apart = [a.with_changes(comma=cst.Comma(whitespace_after=_newline(inner)),
                            whitespace_after_arg=cst.SimpleWhitespace("")) for a in call.args[:-1]]
    apart.append(call.args[-1].with_changes(comma=cst.Comma(whitespace_after=_newline(indent)),
                                            whitespace_after_arg=cst.SimpleWhitespace("")))
    return call.with_changes(args=apart)


def _wrapped(call: cst.Call, indent: str, inner: str, line_length: int) -> cst.Call:
    newline = _newline

    args = list(call.args)
    last = args[-1]
    one_line = [a.with_changes(whitespace_after_arg=cst.SimpleWhitespace("")) for a in args[:-1]]
    one_line.append(last.with_changes(comma=cst.MaybeSentinel.DEFAULT, whitespace_after_arg=newline(indent)))
    together = call.with_changes(whitespace_before_args=newline(inner), args=one_line)
    args_line = cst.Module(body=[]).code_for_node(together).split("\n")[1]
    if len(args_line.expandtabs()) <= line_length:
        return together
    apart = [a.with_changes(comma=cst.Comma(whitespace_after=newline(inner)), whitespace_after_arg=cst.SimpleWhitespace(""))
             for a in args[:-1]]
    apart.append(last.with_changes(comma=cst.Comma(whitespace_after=newline(indent)),
                                   whitespace_after_arg=cst.SimpleWhitespace("")))
    return call.with_changes(whitespace_before_args=newline(inner), args=apart)


class _ById(cst.CSTTransformer):
    def __init__(self, replacements: dict) -> None:
        super().__init__()
        self.replacements = replacements

    def on_leave(self, original_node, updated_node):
        return self.replacements.get(id(original_node), updated_node)
