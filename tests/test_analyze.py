"""`mplint analyze policy`: the program model shown, in text, JSON and dot."""

import json
import shutil

from helpers import ROOT, run_cli

PROJECTS = ROOT / "fixtures" / "projects"


def _copy(name, tmp_path):
    target = tmp_path / name
    shutil.copytree(PROJECTS / name, target)
    return target


def test_policy_routes_in_every_format(tmp_path):
    project = _copy("call_site_values", tmp_path)
    text = run_cli("analyze", "policy", cwd=project)
    assert text.returncode == 0, text.stderr
    assert "zoo/models.py\n" in text.stdout
    assert "  build(): mixed_float16 (set in train.py:10, reached through main() -> build())" in text.stdout
    assert "  Classifier.__init__(): mixed_float16" in text.stdout
    data = json.loads(run_cli("analyze", "policy", "--output-format", "json", cwd=project).stdout)
    assert data["library"] is False and data["root"] == str(project)
    models = next(f for f in data["files"] if f["path"] == "zoo/models.py")
    assert {"function": "build", "policy": "mixed_float16", "set_in": "train.py:10",
            "through": ["main()", "build()"]} in models["functions"]
    dot = run_cli("analyze", "policy", "--output-format", "dot", cwd=project).stdout
    assert dot.startswith("digraph policy {")
    assert '"set in train.py:10" -> "main()" [label="mixed_float16"];' in dot
    assert '"main()" -> "zoo/models.py: build()" [label="mixed_float16"];' in dot


def test_a_library_says_so_and_nothing_reaches(tmp_path):
    project = _copy("layer_library", tmp_path)
    result = run_cli("analyze", "policy", cwd=project)
    assert result.returncode == 0
    assert "library: no program here sets a policy" in result.stdout
    assert "No policy set in the project reaches any function." in result.stdout


def test_a_missing_path_is_one_line_and_exit_2(tmp_path):
    result = run_cli("analyze", "policy", "nowhere", cwd=tmp_path)
    assert result.returncode == 2 and result.stderr.strip() == "mplint: error: nowhere: no such file or folder"
