"""Small libcst edits that several fixes share (adding a keyword argument, quoting)."""

from __future__ import annotations

import libcst as cst


def quote_of(call: cst.Call, module: cst.Module) -> str:
    """The quote character the code around ``call`` uses, to keep the style."""
    for arg in call.args:
        if isinstance(arg.value, cst.SimpleString):
            prefix_len = len(arg.value.prefix)
            return arg.value.value[prefix_len]
    return '"' if module.code.count('"') > module.code.count("'") else "'"


def with_keyword(call: cst.Call, keyword: str, value: cst.BaseExpression) -> cst.Call:
    """``call`` with ``keyword=value`` set: replaced in place, or appended last.

    Appending keeps the call's layout: the new argument takes over the old last
    argument's trailing comma (and its newline), and the old last argument gets the
    separator the others use.
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
        return call.with_changes(args=[new_arg])
    last = args[-1]
    # Insert before **kwargs / *args-after-keywords? Keywords may follow *args and
    # precede **kwargs; put it before a trailing **kwargs so the call stays valid.
    insert_at = len(args)
    while insert_at > 0 and args[insert_at - 1].star == "**":
        insert_at -= 1
    if insert_at < len(args):
        separator = _separator(call, args, insert_at)
        args.insert(insert_at, new_arg.with_changes(comma=separator))
        return call.with_changes(args=args)
    separator = _separator(call, args, len(args) - 1)
    args[-1] = last.with_changes(comma=separator)
    args.append(new_arg.with_changes(comma=last.comma))
    return call.with_changes(args=args)


def _separator(call: cst.Call, args: list, index: int) -> cst.Comma:
    """The comma used between arguments, copied from a neighbour when there is one.

    With no neighbour, a call laid out one argument per line gets a comma followed
    by the same newline and indentation as its first argument.
    """
    for arg in args[:index][::-1]:
        if isinstance(arg.comma, cst.Comma):
            return arg.comma
    if isinstance(call.whitespace_before_args, cst.ParenthesizedWhitespace):
        return cst.Comma(whitespace_after=call.whitespace_before_args)
    return cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))


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
