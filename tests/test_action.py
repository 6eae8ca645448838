"""The GitHub Action (``action.yml``): its shell steps run here as a runner runs
them, with the inputs substituted, on a small project; the SARIF report must be
valid and the step's exit code mplint's."""

from __future__ import annotations

import json
import os
import re
import site
import subprocess
import sys
import sysconfig
import venv
from pathlib import Path
from typing import Dict, List, Mapping, Optional

import jsonschema
import pytest
import yaml

from helpers import BAD, GOOD, ROOT, write_files

ACTION = yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))
SCHEMA = json.loads((ROOT / "tests" / "data" / "sarif-schema-2.1.0.json").read_text(encoding="utf-8"))
_EXPRESSION = re.compile(r"\$\{\{\s*([^}]*?)\s*\}\}")


def _expand(text: str, context: Mapping[str, str]) -> str:
    """GitHub's ``${{ ... }}`` expressions, as far as the action uses them."""

    def value(match: "re.Match[str]") -> str:
        name = match.group(1)
        if name not in context:
            pytest.fail(f"action.yml uses {match.group(0)}, which this test does not provide")
        return context[name]

    return _EXPRESSION.sub(value, text)


def _run_steps(workspace: Path, temp: Path, inputs: Mapping[str, str], names: Optional[List[str]] = None
               ) -> subprocess.CompletedProcess:
    """Run the action's steps (those named ``names``, else all) as a runner does:
    ``bash --noprofile --norc -eo pipefail`` in the workspace, with the step's env
    and the runner's variables; stop at the first step that fails."""
    given = {name: spec.get("default", "") for name, spec in ACTION["inputs"].items()}
    given.update(inputs)
    context = {f"inputs.{k}": v for k, v in given.items()}
    # actions/setup-python's output: the interpreter it set up (here, this one)
    context.update({"github.action_path": str(ROOT), "runner.temp": str(temp),
                    "steps.python.outputs.python-path": sys.executable})
    result = subprocess.CompletedProcess([], 0, "", "")
    for step in ACTION["runs"]["steps"]:
        if names is not None and step["name"] not in names:
            continue
        if "uses" in step:  # a JavaScript action (setup-python): its output is in the context
            continue
        assert step["shell"] == "bash"
        env: Dict[str, str] = {**os.environ, "RUNNER_TEMP": str(temp), "GITHUB_ACTION_PATH": str(ROOT),
                               "GITHUB_WORKSPACE": str(workspace)}
        env.update({k: _expand(str(v), context) for k, v in step.get("env", {}).items()})
        script = temp / "step.sh"
        script.write_text(_expand(step["run"], context), encoding="utf-8")
        result = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)],
                                cwd=workspace, env=env, capture_output=True, text=True, timeout=600)
        if result.returncode != 0:
            break
    return result


def _reported(sarif: Path) -> List[tuple]:
    log = json.loads(sarif.read_text(encoding="utf-8"))
    jsonschema.Draft4Validator(SCHEMA, format_checker=jsonschema.FormatChecker()).validate(log)
    return sorted((r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
                   r["locations"][0]["physicalLocation"]["region"]["startLine"], r["ruleId"])
                  for run in log["runs"] for r in run["results"])


def _venv_seeing_this_interpreter(env_dir: Path) -> Path:
    """A virtual environment whose Python imports what this test process imports:
    this checkout's mplint first, then this interpreter's own site folders (libcst,
    PyYAML; their ``.pth`` files included). It never sees the *base* interpreter's
    packages (``system_site_packages=True`` would: a fresh machine's base Python
    has no mplint, and one that has some other copy would run that copy)."""
    venv.EnvBuilder(system_site_packages=False, with_pip=False).create(env_dir)
    purelib = Path(sysconfig.get_path("purelib", vars={"base": str(env_dir), "platbase": str(env_dir)}))
    ours = [folder for folder in dict.fromkeys(site.getsitepackages() + [sysconfig.get_path("purelib")])
            if Path(folder).is_dir()]
    lines = [str(ROOT)] + [f"import site; site.addsitedir({folder!r})" for folder in ours]
    (purelib / "_mplint_under_test.pth").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return env_dir / ("Scripts" if os.name == "nt" else "bin") / "python"


@pytest.fixture
def runner_temp(tmp_path: Path) -> Path:
    """RUNNER_TEMP holding the environment the install step makes: here, one that
    runs this checkout's mplint, so the check step runs the code under test."""
    temp = tmp_path / "runner-temp"
    _venv_seeing_this_interpreter(temp / "mplint-venv")
    return temp


def test_the_check_step_runs_this_checkout_whatever_the_base_interpreter_has(tmp_path, runner_temp):
    """From a folder outside the checkout, the fixture's Python imports this checkout's
    mplint and none of the base interpreter's site-packages."""
    python = runner_temp / "mplint-venv" / "bin" / "python"
    probe = ("import mplint, sys, sysconfig, json; "
             "print(json.dumps([mplint.__file__, sys.path, sysconfig.get_path('purelib', vars={"
             "'base': sys.base_prefix, 'platbase': sys.base_prefix})]))")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    result = subprocess.run([str(python), "-c", probe], cwd=elsewhere, env=env,
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    where, path, base_site = json.loads(result.stdout)
    assert Path(where).resolve() == ROOT / "mplint" / "__init__.py"
    if base_site not in site.getsitepackages():  # this test runs in a venv, as the README asks
        assert base_site not in path


def test_the_action_is_a_composite_action_with_the_documented_inputs():
    assert ACTION["runs"]["using"] == "composite"
    assert {name: spec.get("default") for name, spec in ACTION["inputs"].items()} == {
        "paths": ".", "args": "", "sarif-file": "mplint.sarif"}
    # The inputs reach the scripts through the environment, never as script text.
    assert all("inputs." not in step.get("run", "") for step in ACTION["runs"]["steps"])


def test_python_comes_from_setup_python_and_the_job_s_is_left_alone():
    """Every runner (Linux, macOS, Windows) gets a Python with venv from setup-python,
    which leaves the job's PATH and Python as they were."""
    setup = next(step for step in ACTION["runs"]["steps"] if "uses" in step)
    assert setup["uses"].startswith("actions/setup-python@") and setup["with"]["update-environment"] is False
    install = next(step for step in ACTION["runs"]["steps"] if step["name"] == "Install mplint")
    assert install["env"]["MPLINT_BASE_PYTHON"] == f"${{{{ steps.{setup['id']}.outputs.python-path }}}}"
    # bash runs on every hosted runner (Git Bash on Windows); no python3 from PATH
    assert all(step["shell"] == "bash" and "python3" not in step["run"]
               for step in ACTION["runs"]["steps"] if "run" in step)


def test_the_check_step_finds_a_windows_environment_s_python(tmp_path, runner_temp):
    """A Windows venv keeps its Python in Scripts/python.exe: the step finds it there."""
    env = runner_temp / "mplint-venv"
    (env / "bin").rename(env / "Scripts")
    (env / "Scripts" / "python").rename(env / "Scripts" / "python.exe")
    project = write_files(tmp_path / "repo", {"pyproject.toml": "", "model.py": BAD})
    result = _run_steps(project, runner_temp, {}, names=["Check"])
    assert result.returncode == 1, result.stderr
    assert _reported(project / "mplint.sarif") == [("model.py", 4, "MP101")]


def test_findings_fail_the_step_and_the_sarif_report_is_written(tmp_path, runner_temp):
    project = write_files(tmp_path / "repo", {"pyproject.toml": "", "src/model.py": BAD, "src/clean.py": GOOD})
    result = _run_steps(project, runner_temp, {}, names=["Check"])
    assert result.returncode == 1, result.stderr
    assert _reported(project / "mplint.sarif") == [("src/model.py", 4, "MP101")]
    assert "SARIF report written to mplint.sarif" in result.stdout
    assert "Found 1 problem" in result.stderr


def test_inputs_choose_the_paths_the_arguments_and_the_report(tmp_path, runner_temp):
    project = write_files(tmp_path / "repo", {"pyproject.toml": "", "a/model.py": BAD, "b/model.py": BAD,
                                              "c d/model.py": BAD})
    inputs = {"paths": "a\n  b", "args": "--exit-zero --select MP1 --output-format text",
              "sarif-file": "reports/mplint.sarif"}
    (project / "reports").mkdir()
    result = _run_steps(project, runner_temp, inputs, names=["Check"])
    assert result.returncode == 0, result.stderr  # --exit-zero; and the format stays SARIF
    assert _reported(project / "reports" / "mplint.sarif") == [("a/model.py", 4, "MP101"),
                                                               ("b/model.py", 4, "MP101")]
    # A selection that leaves nothing: a clean, valid report.
    result = _run_steps(project, runner_temp, {"paths": "a", "args": "--select MP3"}, names=["Check"])
    assert result.returncode == 0, result.stderr
    assert _reported(project / "mplint.sarif") == []


def test_a_usage_error_fails_the_step_and_leaves_no_empty_report(tmp_path, runner_temp):
    project = write_files(tmp_path / "repo", {"pyproject.toml": "", "model.py": BAD})
    result = _run_steps(project, runner_temp, {"args": "--select NOPE"}, names=["Check"])
    assert result.returncode == 2
    assert "NOPE" in result.stderr
    assert not (project / "mplint.sarif").exists()


@pytest.mark.slow
def test_the_action_installs_mplint_from_its_checkout_and_checks(tmp_path):
    """Every step, the install from this checkout included (pip builds the wheel)."""
    project = write_files(tmp_path / "repo", {"pyproject.toml": "", "train.py": BAD})
    temp = tmp_path / "runner-temp"
    temp.mkdir()
    result = _run_steps(project, temp, {})
    assert result.returncode == 1, result.stderr
    assert _reported(project / "mplint.sarif") == [("train.py", 4, "MP101")]
    venv_python = temp / "mplint-venv" / "bin" / "python"
    where = subprocess.run([str(venv_python), "-c", "import mplint; print(mplint.__file__)"],
                           cwd=project, capture_output=True, text=True, check=True).stdout
    assert where.startswith(str(temp / "mplint-venv")), where  # the installed copy, not this checkout
    assert sys.executable != str(venv_python)
