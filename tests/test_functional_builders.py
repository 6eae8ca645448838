"""Model builders: functions that apply layers to the KerasTensors functional model
code hands them (``fixtures/projects/functional_builders``). A function called from
functional code, in its module or another, is functional code too; a function of
another module called under a mixed policy builds its layers under it, so what it
returns is 16-bit there; and a float32 tensor the builder makes and hands on meets
them in a helper of a third module (the UNet3+ classification gate, issue #24)."""

from __future__ import annotations

import shutil
import subprocess

from helpers import PROJECTS, reported, run_cli

PROJECT = PROJECTS / "functional_builders"


def _copy(tmp_path):
    project = tmp_path / "functional_builders"
    shutil.copytree(PROJECT, project)
    # a project of its own: paths and the program model's root are the copy's
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    return project


def _check(project, *args):
    result = run_cli("check", "--exit-zero", "--no-cache", "--select", "MP504", *args, cwd=project)
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_the_gate_is_reported_where_it_is_made_naming_the_helper_and_the_decoder_dtype(tmp_path):
    out = _check(_copy(tmp_path), ".")
    lines = [line for line in out.splitlines() if line.startswith("segnet/heads.py:12:")]
    assert len(lines) == 1, out
    assert "passes as `cls` to gate (segnet/blocks.py:19)" in lines[0]
    assert "reached through main() -> prepare_model() -> gated_head()" in lines[0]
    assert "create it in the compute dtype (d1.dtype)" in lines[0]


def test_without_a_mixed_policy_the_builders_are_float32(tmp_path):
    project = _copy(tmp_path)
    train = project / "train.py"
    train.write_text(train.read_text(encoding="utf-8").replace(
        'tf.keras.mixed_precision.set_global_policy("mixed_float16")', "pass"), encoding="utf-8")
    assert reported(_check(project, ".")) == []


def test_a_one_file_run_of_the_builder_module_reads_its_callers(tmp_path):
    project = _copy(tmp_path)
    found = reported(_check(project, "--force-exclude", "segnet/heads.py"))
    assert ("segnet/heads.py", 12, "MP504") in found
    assert ("segnet/heads.py", 19, "MP504") in found


def test_a_float32_decoder_layer_in_the_builder_module_keeps_the_gate_silent(tmp_path):
    project = _copy(tmp_path)
    heads = project / "segnet" / "heads.py"
    text = heads.read_text(encoding="utf-8")
    # the gated head's decoder pinned to float32 as a whole: the gate meets float32 maps
    pinned = text.replace(
        "    d1 = conv_block(d1, classes, n=1, is_bn=False)\n    return gate(d1, cls)",
        "    d1 = k.layers.Conv2D(classes, 1, dtype=\"float32\")(d1)\n    return gate(d1, cls)")
    assert pinned != text
    heads.write_text(pinned, encoding="utf-8")
    assert ("segnet/heads.py", 12, "MP504") not in reported(_check(project, "."))


def test_a_keras_3_project_promotes_its_functional_keras_tensors(tmp_path):
    project = _copy(tmp_path)
    pyproject = project / "pyproject.toml"
    pyproject.write_text(pyproject.read_text(encoding="utf-8").replace("tensorflow==2.12.0", "tensorflow==2.16.1"),
                         encoding="utf-8")
    before = reported(_check(_copy(tmp_path / "k2"), "."))
    assert ("segnet/heads.py", 39, "MP504") in before  # the keras.applications backbone's features
    assert ("segnet/heads.py", 39, "MP504") not in reported(_check(project, "."))
