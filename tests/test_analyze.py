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
            "through": ["main()", "build()"], "chosen_at": None} in models["functions"]
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


HELPER = ("import keras\n\n\ndef setup(enabled, policy='mixed_float16'):\n    if enabled:\n"
          "        keras.mixed_precision.set_global_policy(policy)\n        return\n"
          "    keras.mixed_precision.set_global_policy('float32')\n")


def test_the_call_site_that_chose_a_helpers_policy_is_shown(tmp_path):
    """A helper judged per call site: each route names the call whose arguments chose it."""
    (tmp_path / "setup.py").write_text("")
    (tmp_path / "gpu.py").write_text(HELPER)
    (tmp_path / "heads.py").write_text("def build_a():\n    pass\n\n\ndef build_b():\n    pass\n")
    for name, argument in (("a", "False"), ("b", "True")):
        (tmp_path / f"train_{name}.py").write_text(
            f"from gpu import setup\nfrom heads import build_{name}\n\n\ndef main():\n"
            f"    setup({argument})\n    build_{name}()\n")
    text = run_cli("analyze", "policy", "heads.py", cwd=tmp_path).stdout
    assert "  build_a(): float32 (set in gpu.py:8 as called at train_a.py:6, reached through main() -> build_a())" \
        in text
    assert "  build_b(): mixed_float16 (set in gpu.py:6 as called at train_b.py:6" in text
    assert "build_a(): mixed_float16" not in text and "build_b(): float32" not in text
    data = json.loads(run_cli("analyze", "policy", "--output-format", "json", "heads.py", cwd=tmp_path).stdout)
    [heads] = [f for f in data["files"] if f["path"] == "heads.py"]
    assert {(f["function"], f["policy"], f["chosen_at"]) for f in heads["functions"]} == {
        ("build_a", "float32", "train_a.py:6"), ("build_b", "mixed_float16", "train_b.py:6")}
    dot = run_cli("analyze", "policy", "--output-format", "dot", "heads.py", cwd=tmp_path).stdout
    assert '"set in gpu.py:8 as called at train_a.py:6" -> "main()" [label="float32"];' in dot
