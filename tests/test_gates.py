"""The rules' gates as data (``mplint/rule/gate_table.py``) say what the checks say.

A run decides from the table, without importing the checks, whether a file needs them
(:mod:`mplint.core.gatekeeper`): a gate narrower than its check would skip a file the
check reports in. So every gate is compared with its check's ``may_report`` over every
combination of the atoms either asks about, and the table with what
``scripts/gates.py`` writes today.
"""

import os
import runpy
import subprocess
import sys

import pytest

from helpers import ROOT
from mplint.checks import registry
from mplint.core.prefilter import Prescan
from mplint.core.source_kinds import load_source
from mplint.rule.gate_table import GATES
from mplint.rule.gates import derive, gate_open, truth_table

CHECKS = registry()


@pytest.mark.parametrize("rule_id", sorted(CHECKS))
def test_the_gate_answers_as_the_check_for_every_combination(rule_id):
    check = CHECKS[rule_id]
    assert rule_id in GATES, f"{rule_id} has no gate: run python scripts/gates.py"
    gate = GATES[rule_id]
    atoms, table = truth_table(lambda scan: (check.may_report(scan), gate_open(gate, scan)))
    assert len(table) == 2 ** len(atoms)
    for true, (says, opens) in table.items():
        assert bool(says) == opens, f"{rule_id} with {sorted(true, key=repr)}: check {says}, gate {opens}"


def test_the_table_is_what_the_script_writes():
    script = runpy.run_path(str(ROOT / "scripts" / "gates.py"))
    assert script["TABLE"].read_text(encoding="utf-8") == script["render"](), "run python scripts/gates.py"


def test_a_gate_is_derived_for_every_check():
    assert all(derive(check) is not None for check in CHECKS.values())


def test_a_gate_from_a_custom_may_report_is_its_minimal_combinations():
    gate = GATES["MP402"]  # graph_rewrite, or experimental with mixed_precision or LossScale
    assert gate_open(gate, Prescan(b"x.graph_rewrite"))
    assert gate_open(gate, Prescan(b"tf.keras.mixed_precision.experimental"))
    assert not gate_open(gate, Prescan(b"tf.compat.v1.experimental"))


def test_a_gate_reads_the_prescan_flags():
    assert not gate_open(GATES["MP501"], Prescan(b"x = 1e5"))
    assert gate_open(GATES["MP501"], Prescan(b"x = 1e5", policy_elsewhere=True))
    assert gate_open(GATES["MP501"], Prescan(b"x = 1e5", library=True))
    assert gate_open(GATES["MP202"], Prescan(b"", drops_base_scaling=True))


def test_a_rule_the_table_lacks_may_always_report():
    from mplint.rule.gates import may_report

    assert may_report({}, ["MP999"], Prescan(b""))
    assert not may_report(GATES, ["MP501"], Prescan(b"import tensorflow as tf"))


def _check(tmp_path, code, *args):
    path = tmp_path / "one.py"
    path.write_text(code, encoding="utf-8")
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    probe = ("import sys, runpy; sys.argv = ['mplint', 'check', '--no-cache', '--output-format', 'concise', "
             + ", ".join(repr(a) for a in [*args, str(path)]) + "]\n"
             "try:\n    runpy.run_module('mplint', run_name='__main__')\n"
             "except SystemExit:\n    pass\n"
             "print('LIBCST', 'libcst' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=tmp_path, env=env)
    return done.stdout + done.stderr


def test_a_file_no_rule_may_report_in_is_checked_without_libcst(tmp_path):
    out = _check(tmp_path, "import tensorflow as tf\nx = tf.zeros([3])  # noqa: MP999\n")
    assert "LIBCST False" in out
    assert "unknown rule MP999" in out  # a misspelt code is still warned of


def test_a_syntax_error_is_still_reported_without_the_checks(tmp_path):
    out = _check(tmp_path, "import tensorflow as tf\ndef f(:\n")
    assert "syntax error" in out.lower() or "invalid syntax" in out.lower(), out


def test_a_file_a_rule_may_report_in_is_checked_with_them(tmp_path):
    code = ("import tensorflow as tf\ntf.keras.mixed_precision.set_global_policy('mixed_float16')\n"
            "model = tf.keras.Sequential([tf.keras.layers.Dense(10, activation='softmax')])\n")
    out = _check(tmp_path, code)
    assert "LIBCST True" in out and "MP101" in out


def test_the_unparsed_check_is_the_linters(tmp_path):
    """What the gatekeeper finds in a file the checks skip is what the linter finds."""
    from helpers import linter_for

    code = "import tensorflow as tf\nx = tf.zeros([3])  # noqa: MP101, MP777\n"
    path = tmp_path / "one.py"
    linter = linter_for(path)
    src = load_source(str(path), code.encode("utf-8"))
    alone = linter.gate.check_unparsed(src)
    assert alone is not None
    assert alone.errors == linter.check(load_source(str(path), code.encode("utf-8"))).errors
    assert [e.message for e in alone.errors] == ["line 2: unknown rule MP777 in a suppression comment"]
