"""The arithmetic every evaluator shares (``semantic.arithmetic``)."""

import libcst as cst
import pytest

from mplint.semantic.arithmetic import binary, builtin, builtin_name


def test_binary_operators_on_numbers():
    assert binary(cst.Divide(), 2 * 4 * 256, 3) == pytest.approx(682.67, abs=0.01)
    assert binary(cst.Modulo(), 200, 96) == 8
    assert binary(cst.FloorDivide(), 200, 8) == 25


@pytest.mark.parametrize("op,left,right", [
    (cst.Divide(), 1, 0),          # ZeroDivisionError
    (cst.Power(), 2, 1000),        # too large to be a size
    (cst.Power(), -8, 0.5),        # complex
    (cst.Add(), True, 1),          # a bool is no number here
    (cst.Add(), "a", 1),
    (cst.MatrixMultiply(), 2, 3),  # not evaluated
])
def test_binary_unknown(op, left, right):
    assert binary(op, left, right) is None


def test_builtins():
    assert builtin("int", [682.67]) == 682
    assert builtin("round", [150.5]) == 150  # banker's rounding, as Python does
    assert builtin("round", [1.2345, 2]) == 1.23
    assert builtin("max", [8, 40]) == 40
    assert builtin("min", [600, 612]) == 600
    assert builtin("abs", [-24]) == 24
    assert builtin("max", [8]) is None          # max of one number is an iterable's: unknown
    assert builtin("int", ["12"]) is None       # strings are not read
    assert builtin("round", [1.5, 2.0]) is None


def test_builtin_name_reads_plain_calls_only():
    def call(text):
        expr = cst.parse_expression(text)
        assert isinstance(expr, cst.Call)
        return builtin_name(expr)
    assert call("int(a / 3)") == "int"
    assert call("round(a, ndigits=2)") == "round"
    assert call("max(*sizes)") is None
    assert call("int(a, base=2)") is None
    assert call("float(a)") is None
    assert call("math.floor(a)") is None
