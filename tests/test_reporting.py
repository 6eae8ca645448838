"""Tell each thing once: one finding per line and rule."""

from mplint.api import fix_text, lint_text

HELPER = """\
import tensorflow as tf

tf.keras.mixed_precision.set_global_policy("mixed_float16")


def block(units):
    return tf.keras.layers.Dense(units, activation="relu")


model = tf.keras.Sequential([block(100), block(30), block(64), tf.keras.layers.Dense(10, dtype="float32")])
"""


def test_sizes_passed_on_one_line_are_one_finding_and_all_get_fixed():
    findings, _ = lint_text(HELPER, select=["MP301"])
    assert [(f.line, f.rule) for f in findings] == [(10, "MP301")]
    assert findings[0].col == 36 and "units=100 (passed to block() as 'units')" in findings[0].message
    # each call site's literal is where the value is written: both are offered for rounding
    fixed = fix_text(HELPER, select=["MP301"], unsafe=True)
    assert "block(104), block(32), block(64)" in fixed
    assert lint_text(fixed, select=["MP301"])[0] == []


def test_two_findings_of_one_rule_on_one_line_are_one():
    code = HELPER.replace("block(100), block(30), block(64)", "tf.keras.layers.Dense(100), tf.keras.layers.Dense(30)")
    findings, _ = lint_text(code, select=["MP301"])
    assert [(f.line, f.col) for f in findings] == [(10, 52)]  # the first on the line
    fixed = fix_text(code, select=["MP301"], unsafe=True)  # the fixer's next pass finds the second
    assert "Dense(104), tf.keras.layers.Dense(32)" in fixed
