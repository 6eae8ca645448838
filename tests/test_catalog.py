"""Every example of every catalog entry: bad fires, good is silent, fixes match and settle.

Adding a rule adds its examples here automatically; this file never changes.
"""

from pathlib import Path

import pytest
import yaml

from mplint.api import config_overrides, fix_text, lint_text, make_linter
from mplint.rule.catalog import CatalogError, load_catalog, load_entry
from mplint.checks import registry

CATALOG = load_catalog()
CASES = [
    pytest.param(entry, i, example, id=f"{entry.id}-{i}-{example.kind}")
    for entry in CATALOG.values()
    for i, example in enumerate(entry.examples)
]


pytestmark = pytest.mark.usefixtures("no_installed_keras")


def _linter(entry, example):
    return make_linter(select=[entry.id], **config_overrides(example.config))


@pytest.mark.parametrize("entry,index,example", CASES)
def test_example(entry, index, example):
    linter = _linter(entry, example)
    findings, errors = lint_text(example.code, path=example.path, linter=linter)
    assert not [e for e in errors if e.kind == "error"], errors
    rules = [f.rule for f in findings]
    if example.kind == "good":
        assert rules == [], f"good example fired: {findings}"
        return
    assert entry.id in rules, f"bad example did not fire {entry.id}"
    if example.fixed is None:
        return
    unsafe = entry.fix_safety == "unsafe" or any(f.fix == "unsafe" for f in findings)
    fixed = fix_text(example.code, path=example.path, unsafe=unsafe, linter=linter)
    assert fixed == example.fixed
    assert fix_text(fixed, path=example.path, unsafe=unsafe, linter=linter) == fixed, "fix is not idempotent"


def test_every_entry_has_a_check_and_every_check_an_entry():
    assert set(CATALOG) == set(registry())


def test_rule_names_are_unique():
    names = [e.name for e in CATALOG.values()]
    assert len(names) == len(set(names))


def _write(tmp_path: Path, data) -> Path:
    path = tmp_path / "MP999.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return path


def _valid():
    return {
        "id": "MP999", "name": "some-rule", "summary": "s", "severity": "error", "why": "w",
        "fix": {"safety": "none", "description": "no fix"},
        "examples": [{"bad": "x = 1\n"}, {"good": "y = 2\n"}],
    }


def test_loader_accepts_a_valid_entry(tmp_path):
    assert load_entry(_write(tmp_path, _valid())).id == "MP999"


@pytest.mark.parametrize("mutate,message", [
    (lambda d: d.pop("why"), "missing key(s): why"),
    (lambda d: d.update(colour="red"), "unknown key(s): colour"),
    (lambda d: d.update(severity="fatal"), "severity"),
    (lambda d: d.update(name="Some_Rule"), "kebab-case"),
    (lambda d: d["fix"].update(safety="maybe"), "fix.safety"),
    (lambda d: d.update(examples=[{"bad": "x\n"}]), "at least one bad and one good"),
    (lambda d: d["examples"].append({"good": "x\n", "fixed": "y\n"}), "'fixed' goes with a 'bad'"),
])
def test_loader_rejects_malformed_entries_naming_the_file(tmp_path, mutate, message):
    data = _valid()
    mutate(data)
    with pytest.raises(CatalogError) as info:
        load_entry(_write(tmp_path, data))
    assert "MP999.yaml" in str(info.value)
    assert message in str(info.value)


def test_fixable_bad_example_needs_expected_fix(tmp_path):
    data = _valid()
    data["fix"] = {"safety": "safe", "description": "d"}
    with pytest.raises(CatalogError, match="needs 'fixed'"):
        load_entry(_write(tmp_path, data))
