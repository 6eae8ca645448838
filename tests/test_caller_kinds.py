"""A function is judged with the tensor kinds the calls of other modules hand it
(``analysis.tensor_callers``): ``fixtures/projects/caller_kinds``, whose helpers in
``nets/ops.py`` run on the 16-bit outputs ``nets/model.py`` passes them."""

from __future__ import annotations

import shutil
import subprocess

from helpers import ROOT, reported, run_cli

PROJECT = ROOT / "fixtures" / "projects" / "caller_kinds"


def _check(project, *args):
    result = run_cli("check", "--exit-zero", "--select", "MP504", *args, cwd=project)
    assert result.returncode == 0, result.stderr
    return result.stdout


def _git_init(project):
    # a project of its own: paths and the program model's root are the copy's
    subprocess.run(["git", "init", "-q", str(project)], check=True)


def test_the_message_names_the_caller_that_hands_the_16_bit_tensor(tmp_path):
    project = tmp_path / "caller_kinds"
    shutil.copytree(PROJECT, project)
    _git_init(project)
    out = _check(project, "--no-cache", ".")
    lines = [line for line in out.splitlines() if line.startswith("nets/ops.py:23:")]
    assert len(lines) == 1, out
    assert "called with a float16 tensor from nets/model.py:25" in lines[0]


def test_a_changed_caller_changes_the_callees_cached_result(tmp_path):
    project = tmp_path / "caller_kinds"
    shutil.copytree(PROJECT, project)
    _git_init(project)
    before = reported(_check(project, "."))  # the cache is now warm
    assert ("nets/ops.py", 23, "MP504") in before
    model = project / "nets" / "model.py"
    text = model.read_text(encoding="utf-8")
    # the caller now hands a float32 copy: the helper runs in float32
    model.write_text(text.replace("gram_matrix(features)", "gram_matrix(tf.cast(features, tf.float32))"),
                     encoding="utf-8")
    after = reported(_check(project, "."))
    assert after == reported(_check(project, "--no-cache", "."))
    assert ("nets/ops.py", 23, "MP504") not in after
    # a one-file run of the callee reads the caller too
    assert ("nets/ops.py", 23, "MP504") not in reported(_check(project, "--force-exclude", "nets/ops.py"))
    model.write_text(text, encoding="utf-8")
    assert ("nets/ops.py", 23, "MP504") in reported(_check(project, "--force-exclude", "nets/ops.py"))
    assert reported(_check(project, ".")) == before
