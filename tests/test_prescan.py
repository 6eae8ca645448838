"""The prescan never hides a finding.

``Check.may_report`` decides from a file's bytes whether the check can report in it,
and a file no selected check may report in is not parsed at all. A wrong "no" would
lose findings silently, so every fixture and every catalog example is checked with
the prescan off, under several configurations, and each finding's rule must have
said yes to that file. The rest tests what skipping a file keeps: its syntax errors.
"""

from pathlib import Path

import pytest

from helpers import FIXTURES, ROOT, linter_for, outcome
from mplint.api import config_overrides, lint_text, make_linter
from mplint.rule.catalog import load_catalog
from mplint.checks import registry
from mplint.semantic.vocabulary import MIXED_POLICIES, UNKNOWN_POLICY
from mplint.core.prefilter import Prescan
from mplint.core.source_kinds import load_source
from mplint.run.project import MAYBE_MIXED

CHECKS = registry()

pytestmark = pytest.mark.usefixtures("no_installed_keras")


def _cases():
    """(name, code, path, config) for every fixture and catalog example."""
    for path in sorted(FIXTURES.rglob("*.py")):
        yield str(path.relative_to(ROOT)), path.read_text(encoding="utf-8"), path, {}
    for entry in load_catalog().values():
        for i, example in enumerate(entry.examples):
            yield f"{entry.id}-{i}", example.code, Path(example.path), config_overrides(example.config)


#: each sweeps every fixture and example (about two seconds): the default in the
#: quick run, all of them with --run-slow
CONFIGS = [
    pytest.param({}, id="default"),
    pytest.param({"assume_policy": "mixed_float16"}, id="assumed mixed_float16", marks=pytest.mark.slow),
    pytest.param({"keras_version": 2}, id="Keras 2", marks=pytest.mark.slow),
    pytest.param({"keras_version": 3}, id="Keras 3", marks=pytest.mark.slow),
]


@pytest.mark.parametrize("config", CONFIGS)
def test_every_finding_is_in_a_file_its_rule_may_report_in(config):
    reported = 0
    for name, code, path, own in _cases():
        linter = linter_for(path, **{**config, **own})
        linter.prescan = False
        findings, _ = lint_text(code, path=str(path), linter=linter)
        scan = linter.scan(str(path), code.encode("utf-8"))
        for finding in findings:
            assert CHECKS[finding.rule].may_report(scan), f"{name}: {finding}"
        reported += len(findings)
    assert reported > 100  # the test saw real findings


@pytest.mark.slow
def test_skipping_changes_no_result_on_the_fixtures():
    for name, code, path, own in _cases():
        on, off = make_linter(**own), make_linter(**own)
        off.prescan = False
        assert lint_text(code, path=str(path), linter=on) == lint_text(code, path=str(path), linter=off), name


def test_words_are_searched_once_and_anywhere():
    scan = Prescan(b"opt = LossScaleOptimizer(opt)  # set_global_policy later")
    assert scan.has(b"nothing", b"LossScaleOptimizer")
    assert scan.sets_policy and scan.policy  # a comment counts: a false yes only costs a parse
    assert not Prescan(b"import tensorflow as tf").policy
    assert Prescan(b"import tensorflow as tf", policy_elsewhere=True).policy


def test_maybe_mixed_matches_the_facts():
    assert MAYBE_MIXED == MIXED_POLICIES | {UNKNOWN_POLICY}


def test_a_file_no_rule_can_report_in_is_not_parsed_but_its_syntax_is_checked(tmp_path, cli, monkeypatch):
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "plain.py").write_text("import tensorflow as tf\nx = tf.constant(1.0)\n")
    (tmp_path / "broken.py").write_text("import tensorflow as tf\nx = tf.constant(1.0\n")
    result = cli("check", "--no-cache", ".", cwd=tmp_path)
    assert outcome(result) == (1, [])
    assert "broken.py:2:16: SyntaxError: '(' was never closed" in result.stdout
    assert "plain.py" not in result.stderr + result.stdout

    import mplint.core.linter

    parsed = []
    real = mplint.core.linter.parse
    monkeypatch.setattr(mplint.core.linter, "parse", lambda source: parsed.append(source.path) or real(source))
    linter = make_linter()
    plain = str(tmp_path / "plain.py")
    assert linter.check(load_source(plain, (tmp_path / "plain.py").read_bytes())).findings == []
    assert parsed == []
    linter.prescan = False
    linter.check(load_source(plain, (tmp_path / "plain.py").read_bytes()))
    assert parsed == [str(tmp_path / "plain.py")]


def test_a_policy_set_in_a_file_that_imports_this_one_opens_the_policy_rules(tmp_path, cli):
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "model.py").write_text(
        "import tensorflow as tf\n\n\ndef build():\n    inputs = tf.keras.Input((4,))\n"
        "    outputs = tf.keras.layers.Dense(10, activation='softmax')(inputs)\n"
        "    return tf.keras.Model(inputs, outputs)\n")
    (tmp_path / "train.py").write_text(
        "import tensorflow as tf\nimport model\n\n"
        "tf.keras.mixed_precision.set_global_policy('mixed_float16')\nm = model.build()\n")
    # the pre-commit case: only model.py is named; its bytes say nothing of a policy
    result = cli("check", "--no-cache", "model.py", cwd=tmp_path)
    assert outcome(result) == (1, [("model.py", 6, "MP101")]), result.stdout + result.stderr
    assert "model.py:6:15: MP101" in result.stdout
