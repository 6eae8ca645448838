"""scripts/add_rule.py writes a new rule's module, catalog entry and README row."""

import importlib.util
import shutil
from pathlib import Path

import pytest

from mplint.rule.catalog import load_entry
from mplint.rule.check import Check

ROOT = Path(__file__).resolve().parent.parent


def _load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("fix", ["safe", "none"])
def test_add_rule_writes_a_module_an_entry_and_a_row(tmp_path, fix):
    (tmp_path / "mplint" / "checks").mkdir(parents=True)
    shutil.copytree(ROOT / "rules", tmp_path / "rules")
    (tmp_path / "README.md").write_text("# x\n<!-- rules:start -->\n<!-- rules:end -->\nrest\n")
    add_rule = _load(ROOT / "scripts" / "add_rule.py", "add_rule")
    assert add_rule.main(["MP599", "float16-cumsum", "--summary", "A cumulative sum runs in float16",
                          "--fix", fix, "--root", str(tmp_path)]) == 0

    entry = load_entry(tmp_path / "rules" / "MP599.yaml")  # the catalog's own validation
    assert (entry.id, entry.name, entry.fix_safety) == ("MP599", "float16-cumsum", fix)
    assert {e.kind for e in entry.examples} == {"bad", "good"}
    readme = (tmp_path / "README.md").read_text()
    assert "| MP599 | float16-cumsum | warning | " + fix + " | A cumulative sum runs in float16. |" in readme
    assert readme.endswith("<!-- rules:end -->\nrest\n")
    module = _load(tmp_path / "mplint" / "checks" / "mp599_float16_cumsum.py", "mp599")
    assert issubclass(module.Float16Cumsum, Check) and module.Float16Cumsum.rule_id == "MP599"

    with pytest.raises(SystemExit, match="exists already"):
        add_rule.main(["MP599", "other-name", "--summary", "x", "--root", str(tmp_path)])
