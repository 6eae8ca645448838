"""The README's install and usage commands, run as written, from fresh virtual environments.

The commands are read from README.md, so the README cannot drift from what runs: every
``sh`` block is run here or named in ``ELSEWHERE`` with what runs it, and a new block
fails ``test_every_command_block_is_run`` until it is one or the other.

mplint is not on PyPI and the README cannot name a public address for it, so its blocks
say ``REPO_URL`` (and ``COMMIT_SHA``). Here ``REPO_URL`` is a copy of this working tree
committed to a throwaway git repository, given as ``file://localhost/<path>``: a URL of
the form the README asks for, which pip reads after ``git+`` whatever its version (pip
before 24.1 rejects ``git+file:///path``, as the README says). ``COMMIT_SHA`` is that
commit, as ``git ls-remote`` prints it.

Not run for real: the ``runtime`` extra and the runtime checker's install hint would
install TensorFlow, hundreds of megabytes that CI already installs once for the runtime
tests. Both run with ``pip install --dry-run``, which resolves mplint's extra and
TensorFlow's whole dependency tree from the index, as the real install would, and
installs nothing.

Slow (a minute or so, with pip reaching PyPI): left out unless ``--run-slow``, as in CI.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, List, Mapping, Optional, Sequence, Tuple

import pytest
import yaml

from helpers import ROOT
from mplint.runtime.requirements import INSTALL_HINT, TENSORFLOW_REQUIREMENT, install_command

README = (ROOT / "README.md").read_text(encoding="utf-8")

#: command blocks that run elsewhere, with what runs them
ELSEWHERE = {
    ("Runtime checker", 0): "examples with targets a user has (mypkg.models, saved/model.keras); "
                            "tests/test_runtime_cli.py runs `mplint runtime` on each kind of target, with TensorFlow",
    ("Development", 0): ".ci/run: `pip install -e \".[test]\"` and `python -m pytest --run-slow` in a fresh venv",
}

#: a small project as a user has it: the policy set in the training script, the model in
#: its own module. MP101 (a safe fix) and MP301 (an unsafe one) fire in the model module.
PYPROJECT = '[project]\nname = "demo"\nversion = "0.1"\ndependencies = ["tensorflow>=2.16"]\n'
MODEL = '''\
import tensorflow as tf


def build_model():
    return tf.keras.Sequential([
        tf.keras.Input(shape=(784,)),
        tf.keras.layers.Dense(100, activation="relu"),
        tf.keras.layers.Dense(10, activation="softmax"),
    ])
'''
TRAIN = '''\
import tensorflow as tf

from model import build_model

tf.keras.mixed_precision.set_global_policy("mixed_float16")
model = build_model()
model.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
'''
FIXED_MODEL = MODEL.replace("Dense(100,", "Dense(104,").replace(
    'activation="softmax")', 'activation="softmax", dtype="float32")')
MP301 = "src/model.py:7:31: MP301"
MP101 = "src/model.py:8:9: MP101"

GIT_ENV = {
    "GIT_AUTHOR_NAME": "mplint tests", "GIT_AUTHOR_EMAIL": "tests@example.invalid",
    "GIT_COMMITTER_NAME": "mplint tests", "GIT_COMMITTER_EMAIL": "tests@example.invalid",
    "GIT_CONFIG_NOSYSTEM": "1",
}
#: what a clone would not hold: caches and build output (.gitignore's, and mypy's cache)
IGNORE = shutil.ignore_patterns(".git", "__pycache__", ".pytest_cache", "*.egg-info", "build", "dist", ".venv",
                                ".mplint_cache", ".hypothesis", ".mypy_cache", ".benchmarks")


# -- the README's blocks ---------------------------------------------------------------------
@dataclass(frozen=True)
class Block:
    section: str  # the heading it is under
    index: int  # its place among the blocks of that language in that section
    language: str
    text: str

    def lines(self) -> List[str]:
        return [line for line in self.text.splitlines() if line.strip() and not line.lstrip().startswith("#")]


def readme_blocks(language: str) -> List[Block]:
    blocks: List[Block] = []
    section = ""
    fence: Optional[str] = None
    body: List[str] = []
    counts: Dict[Tuple[str, str], int] = {}
    for line in README.splitlines():
        if fence is None:
            heading = re.match(r"#{2,3} (.+)", line)
            opening = re.match(r"\s*```(\w+)\s*$", line)
            if heading:
                section = heading.group(1).strip()
            elif opening:
                fence, body = opening.group(1), []
        elif re.match(r"\s*```\s*$", line):
            if fence == language:
                index = counts.get((section, language), 0)
                counts[(section, language)] = index + 1
                blocks.append(Block(section, index, language, "\n".join(body)))
            fence = None
        else:
            body.append(line)
    return blocks


def block(section: str, index: int = 0, language: str = "sh") -> Block:
    found = [b for b in readme_blocks(language) if b.section == section and b.index == index]
    assert found, f"README.md has no {language} block {index} under the heading {section!r}"
    return found[0]


def command(line: str) -> str:
    """A line without its trailing comment, as the shell runs it."""
    return re.sub(r"\s+#.*$", "", line)


# -- a shell like a user's -------------------------------------------------------------------
@dataclass
class Step:
    line: str
    rc: int
    out: str
    err: str

    def __str__(self) -> str:
        return f"$ {self.line}\n(exit {self.rc})\n{self.out}{self.err}"


@dataclass
class Repo:
    """mplint's repository, as REPO_URL and COMMIT_SHA name it."""

    path: Path
    url: str
    sha: str

    def substitute(self, text: str) -> str:
        return text.replace("REPO_URL", self.url).replace("COMMIT_SHA", self.sha)


_MARK = "@@readme-step"


def run_lines(lines: Sequence[str], cwd: Path, env: Mapping[str, str], venv: Optional[Path] = None,
              timeout: int = 600) -> List[Step]:
    """Run ``lines`` one after the other in one bash, as typed into a terminal (a failing
    line does not stop the next), in a shell where ``venv`` is activated if given; each
    line's exit code and output."""
    script = f". {shlex.quote(str(venv / 'bin' / 'activate'))}\n" if venv else ""
    for number, line in enumerate(lines):
        script += (f"{line}\n__rc=$?; printf '\\n{_MARK} {number} %d\\n' $__rc; "
                   f"printf '\\n{_MARK} {number} %d\\n' $__rc >&2\n")
    proc = subprocess.run(["bash", "--noprofile", "--norc", "-c", script], cwd=cwd, env=dict(env),
                          capture_output=True, text=True, timeout=timeout)
    marker = re.compile(rf"\n{_MARK} (\d+) (\d+)\n")
    outs, errs = marker.split(proc.stdout), marker.split(proc.stderr)
    steps = []
    for number, line in enumerate(lines):
        if 3 * number + 2 >= len(outs):
            pytest.fail(f"the shell stopped before {line!r}:\n{proc.stdout}\n{proc.stderr}")
        steps.append(Step(line, int(outs[3 * number + 2]), outs[3 * number], errs[3 * number]))
    return steps


def show(steps: Sequence[Step]) -> str:
    return "\n".join(str(step) for step in steps)


def write_project(folder: Path, model: str = MODEL) -> Path:
    (folder / "src").mkdir(parents=True)
    (folder / "pyproject.toml").write_text(PYPROJECT, encoding="utf-8")
    (folder / "src" / "model.py").write_text(model, encoding="utf-8")
    (folder / "src" / "train.py").write_text(TRAIN, encoding="utf-8")
    return folder


def git(cwd: Path, *args: str, env: Mapping[str, str]) -> str:
    return subprocess.run(["git", *args], cwd=cwd, env=dict(env), check=True, capture_output=True, text=True,
                          timeout=120).stdout


@pytest.fixture(scope="module")
def shell_env(tmp_path_factory: pytest.TempPathFactory) -> Dict[str, str]:
    """A user's environment: no virtual environment active, no PYTHONPATH (so only what pip
    installed is imported), ``python3`` the interpreter under test, git without the
    machine's configuration."""
    base = tmp_path_factory.mktemp("user-env")
    (base / "bin").mkdir()
    python3 = base / "bin" / "python3"
    python3.write_text(f"#!/bin/sh\nexec {shlex.quote(sys.executable)} \"$@\"\n")
    python3.chmod(0o755)
    (base / "gitconfig").write_text("[commit]\n\tgpgsign = false\n[init]\n\tdefaultBranch = main\n")
    env = {k: v for k, v in os.environ.items()
           if k not in ("VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP", "PRE_COMMIT_HOME")}
    env.update(GIT_ENV, GIT_CONFIG_GLOBAL=str(base / "gitconfig"), PATH=f"{base / 'bin'}{os.pathsep}{env['PATH']}")
    return env


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory, shell_env: Dict[str, str]) -> Repo:
    """This working tree, committed to a throwaway repository (the state under test, not
    the last commit)."""
    path = tmp_path_factory.mktemp("origin") / "mplint"
    shutil.copytree(ROOT, path, ignore=IGNORE, symlinks=True)
    git(path, "init", "-q", env=shell_env)
    git(path, "add", "-A", env=shell_env)
    git(path, "commit", "-q", "-m", "snapshot", env=shell_env)
    return Repo(path, f"file://localhost{path}", git(path, "rev-parse", "HEAD", env=shell_env).strip())


@dataclass
class User:
    project: Path
    venv: Path
    install: List[Step]


@pytest.fixture(scope="module")
def user(tmp_path_factory: pytest.TempPathFactory, repo: Repo, shell_env: Dict[str, str]) -> User:
    """The Install section's first block, run in a project with findings: a fresh venv in
    the project, mplint installed from REPO_URL, the project checked."""
    project = write_project(tmp_path_factory.mktemp("user") / "project")
    lines = [repo.substitute(line) for line in block("Install", 0).lines()]
    return User(project, project / ".venv", run_lines(lines, project, shell_env))


# -- what every run needs to find ------------------------------------------------------------
def test_every_command_block_is_run_here_or_elsewhere():
    here = {("Install", 0), ("Install", 1), ("Install", 2), ("Check and fix your code", 0), ("Editors", 0)}
    found = {(b.section, b.index) for b in readme_blocks("sh")}
    assert found == here | set(ELSEWHERE), (
        "a README command block is neither run by this file nor named in ELSEWHERE: "
        f"{sorted(found - here - set(ELSEWHERE))}; gone: {sorted((here | set(ELSEWHERE)) - found)}")
    assert [b.section for b in readme_blocks("yaml")] == ["pre-commit", "GitHub Actions", "GitHub Actions"]


def test_no_install_line_names_a_package_index_or_an_invented_address():
    """mplint is not on PyPI: ``pip install "mplint[...]"`` without ``@ git+`` works only
    with the pip of an environment that already has mplint (any other looks it up on the
    index and finds nothing, or another package), and no made-up URL stands in for the
    real one."""
    texts = {"README.md": README, "CONTRIBUTING.md": (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8"),
             "the runtime checker's hint": INSTALL_HINT}
    for name, text in texts.items():
        for package in re.findall(r'pip install (?:--?[\w-]+ )*("[^"]*"|\S+)', text):
            if package.strip('"').startswith("mplint"):
                assert " @ git+REPO_URL" in package, (name, package)
        assert "github.com/mplint" not in text, name
    assert "REPO_URL` below\nstands for" in README  # the placeholder is explained where it first appears


def test_the_runtime_hint_installs_what_the_runtime_extra_adds():
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    extra = re.search(r"^runtime = \[(.*)\]$", pyproject, re.M)
    assert extra is not None
    assert [part.strip().strip('"') for part in extra.group(1).split(",")] == [TENSORFLOW_REQUIREMENT]
    assert INSTALL_HINT.endswith(install_command())
    assert shlex.split(install_command()) == [sys.executable, "-m", "pip", "install", TENSORFLOW_REQUIREMENT]
    assert f"`runtime` adds TensorFlow (`{TENSORFLOW_REQUIREMENT}`)" in README


# -- the Install section ---------------------------------------------------------------------
@pytest.mark.slow
def test_install_from_the_repository_url_then_check(user: User, shell_env: Dict[str, str]):
    venv_step, install, check = user.install
    assert (venv_step.rc, install.rc) == (0, 0), show(user.install)
    assert "Successfully installed" in install.out and "mplint-" in install.out, install
    # `mplint check src/`: "exits 1 when it finds problems"
    assert check.rc == 1, check
    assert MP301 in check.out and MP101 in check.out, check
    # the mplint that ran is the one pip installed in the venv, not this checkout
    where = run_lines(["python -c 'import mplint; print(mplint.__file__)'", "command -v mplint"],
                      user.project, shell_env, venv=user.venv)
    assert all(step.out.startswith(str(user.venv)) for step in where), show(where)
    # "... 0 when it finds none"
    clean = write_project(user.project.parent / "clean", FIXED_MODEL)
    [again] = run_lines([command(user.install[2].line)], clean, shell_env, venv=user.venv)
    assert again.rc == 0 and "All checks passed!" in again.out, again


@pytest.mark.slow
def test_install_from_a_clone(tmp_path: Path, repo: Repo, shell_env: Dict[str, str]):
    lines = [repo.substitute(line) for line in block("Install", 1).lines()]
    steps = run_lines(lines, tmp_path, shell_env)
    assert [step.rc for step in steps] == [0] * len(steps), show(steps)
    clone = tmp_path / "mplint"
    assert git(clone, "rev-parse", "HEAD", env=shell_env).strip() == repo.sha
    project = write_project(tmp_path / "project")
    steps = run_lines(["python -c 'import mplint; print(mplint.__file__)'", "mplint check src/"], project,
                      shell_env, venv=clone / ".venv")
    assert steps[0].out.startswith(str(clone / ".venv" / "lib")), show(steps)  # installed, not the clone's folder
    assert steps[1].rc == 1 and MP101 in steps[1].out, show(steps)


@pytest.mark.slow
def test_the_extras(user: User, repo: Repo, shell_env: Dict[str, str]):
    """``lsp`` installed for real: before it, ``mplint server`` says what it lacks; after
    it, the server answers an LSP client. ``runtime`` resolved with ``--dry-run``: pip
    would install TensorFlow."""
    [before] = run_lines(["mplint server < /dev/null"], user.project, shell_env, venv=user.venv)
    assert before.rc == 2 and "pygls" in before.err, before

    lines = block("Install", 2).lines()
    assert [line for line in lines if "[runtime]" in line] == ['pip install "mplint[runtime] @ git+REPO_URL"']
    lines = [repo.substitute(line.replace("pip install ", "pip install --dry-run ") if "[runtime]" in line else line)
             for line in lines]
    lsp, runtime = run_lines(lines, user.project, shell_env, venv=user.venv)
    assert lsp.rc == 0 and "pygls" in lsp.out, lsp
    assert runtime.rc == 0, runtime
    would = next(line for line in runtime.out.splitlines() if line.startswith("Would install"))
    assert re.search(r"\btensorflow-2\.\d+", would), would  # plain tensorflow, as the extra says

    # an LSP client's first exchange with `mplint server`, over stdio
    def message(payload: dict) -> bytes:
        body = json.dumps(payload).encode()
        return b"Content-Length: %d\r\n\r\n" % len(body) + body

    exchange = (message({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                         "params": {"processId": None, "rootUri": user.project.as_uri(), "capabilities": {}}})
                + message({"jsonrpc": "2.0", "method": "initialized", "params": {}})
                + message({"jsonrpc": "2.0", "id": 2, "method": "shutdown"})
                + message({"jsonrpc": "2.0", "method": "exit"}))
    server = subprocess.run([str(user.venv / "bin" / "mplint"), "server"], input=exchange, cwd=user.project,
                            env=shell_env, capture_output=True, timeout=120)
    assert server.returncode == 0, server.stderr.decode(errors="replace")
    replies = [json.loads(part) for part in re.split(rb"Content-Length: \d+\r\n(?:[^\r\n]+\r\n)*\r\n",
                                                      server.stdout) if part]
    initialized = next(reply for reply in replies if reply.get("id") == 1)
    assert initialized["result"]["serverInfo"]["name"] == "mplint"
    assert "source.fixAll.mplint" in initialized["result"]["capabilities"]["codeActionProvider"]["codeActionKinds"]


@pytest.mark.slow
def test_the_runtime_checkers_hint_is_a_command_that_works(user: User, shell_env: Dict[str, str]):
    """In a venv without TensorFlow, ``mplint runtime`` prints how to install it: that
    command, as printed, resolves TensorFlow into this venv (``--dry-run``)."""
    [run] = run_lines(["mplint runtime src/model.py:build_model"], user.project, shell_env, venv=user.venv)
    assert run.rc == 2 and run.out == "", run
    [line] = run.err.strip().splitlines()
    prefix = "mplint: error: the runtime checker needs TensorFlow (mplint's runtime extra): "
    assert line.startswith(prefix), line
    printed = shlex.split(line[len(prefix):])
    assert Path(printed[0]).parent == user.venv / "bin", printed  # the venv's python, not one on PATH
    assert printed[1:4] == ["-m", "pip", "install"], printed
    [dry] = run_lines([shlex.join([*printed[:4], "--dry-run", *printed[4:]])], user.project, shell_env)
    assert dry.rc == 0, dry
    assert re.search(r"^Would install .*\btensorflow-2\.\d+", dry.out, re.M), dry


# -- using it --------------------------------------------------------------------------------
#: the exit code of each command of "Check and fix your code", run in order on the project
#: (MP101 safe, MP301 unsafe); the README's comments say why
CHECK_AND_FIX = {
    "mplint check src/": 1,
    "mplint check --output-format json src/": 1,
    "mplint check --statistics src/": 1,
    "mplint fix src/": 1,  # MP101 fixed; MP301's fix is unsafe, so it remains
    "mplint fix --diff src/": 0,  # no safe fix left to show
    "mplint fix --check src/": 0,
    "mplint fix --unsafe-fixes src/": 0,  # MP301 fixed too: nothing remains
    "mplint rule MP101": 0,
    "mplint rules": 0,
}


@pytest.mark.slow
def test_check_and_fix_your_code(user: User, tmp_path: Path, shell_env: Dict[str, str]):
    project = write_project(tmp_path / "project")
    lines = block("Check and fix your code").lines()
    unknown = [command(line) for line in lines if command(line) not in CHECK_AND_FIX]
    assert not unknown, f"new commands in the README block: give each its exit code in CHECK_AND_FIX: {unknown}"
    steps = run_lines(lines, project, shell_env, venv=user.venv)
    assert [(command(s.line), s.rc) for s in steps] == [(command(line), CHECK_AND_FIX[command(line)])
                                                          for line in lines], show(steps)
    by_command = {command(s.line): s for s in steps}
    report = json.loads(by_command["mplint check --output-format json src/"].out)
    assert sorted((f["path"], f["line"], f["rule"], f["fix"]) for f in report) == [
        ("src/model.py", 7, "MP301", "unsafe"), ("src/model.py", 8, "MP101", "safe")]
    assert "Fixed 1 finding in 1 file; 1 remaining." in by_command["mplint fix src/"].out
    assert by_command["mplint rule MP101"].out.startswith("MP101 (float16-final-softmax)")
    assert "MP301" in by_command["mplint rules"].out
    assert (project / "src" / "model.py").read_text(encoding="utf-8") == FIXED_MODEL
    assert (project / "src" / "train.py").read_text(encoding="utf-8") == TRAIN


@pytest.mark.slow
def test_editors_stdin(user: User, tmp_path: Path, shell_env: Dict[str, str]):
    """stdin checked inside its project: the policy set in train.py counts in model.py."""
    project = write_project(tmp_path / "project")
    check, fix = run_lines(block("Editors").lines(), project, shell_env, venv=user.venv)
    assert check.rc == 1 and MP101 in check.out and "src/train.py:5" in check.out, check
    assert fix.rc == 1 and "1 remaining" in fix.err, fix  # MP301's fix is unsafe
    assert (project / "fixed.py").read_text(encoding="utf-8") == MODEL.replace(
        'activation="softmax")', 'activation="softmax", dtype="float32")')
    assert (project / "src" / "model.py").read_text(encoding="utf-8") == MODEL  # stdin in, stdout out


# -- pre-commit and CI -----------------------------------------------------------------------
@pytest.mark.slow
def test_the_pre_commit_configuration_as_written(tmp_path: Path, repo: Repo, shell_env: Dict[str, str]):
    """The README's .pre-commit-config.yaml, with its own way of finding the sha, run by the
    real pre-commit (tests/test_pre_commit.py runs both hooks with try-repo)."""
    pytest.importorskip("pre_commit")
    snippet = block("pre-commit", language="yaml").text
    [ls_remote] = re.findall(r"`(git ls-remote [^`]+)`", snippet)
    [listed] = run_lines([repo.substitute(ls_remote)], tmp_path, shell_env)
    assert listed.rc == 0 and listed.out.split() == [repo.sha, "HEAD"], listed
    project = write_project(tmp_path / "project")
    git(project, "init", "-q", env=shell_env)
    config = project / ".pre-commit-config.yaml"
    config.write_text(repo.substitute(snippet) + "\n", encoding="utf-8")
    hooks = yaml.safe_load(config.read_text(encoding="utf-8"))["repos"][0]
    assert (hooks["repo"], hooks["rev"], [h["id"] for h in hooks["hooks"]]) == (repo.url, repo.sha, ["mplint"])
    git(project, "add", "-A", env=shell_env)
    env = {**shell_env, "PRE_COMMIT_HOME": str(tmp_path / "pre-commit-home")}

    def pre_commit(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "pre_commit", *args], cwd=project, env=env,
                              capture_output=True, text=True, timeout=900)

    check = pre_commit("run", "--all-files")
    output = check.stdout + check.stderr
    assert check.returncode == 1 and MP101 in output and MP301 in output, output
    assert (project / "src" / "model.py").read_text(encoding="utf-8") == MODEL

    # the commented-out hook, switched on
    config.write_text(repo.substitute(snippet).replace("# - id: mplint-fix", "- id: mplint-fix") + "\n",
                      encoding="utf-8")
    fix = pre_commit("run", "mplint-fix", "--all-files")
    output = fix.stdout + fix.stderr
    assert fix.returncode == 1 and "files were modified by this hook" in output, output
    assert 'activation="softmax", dtype="float32")' in (project / "src" / "model.py").read_text(encoding="utf-8")


@pytest.mark.slow
def test_the_step_by_step_workflows_commands(tmp_path: Path, repo: Repo, shell_env: Dict[str, str]):
    """The workflow's ``run:`` steps, in a fresh venv: the pinned install from REPO_URL,
    then the SARIF report (tests/test_action.py runs the action's own steps)."""
    workflow = yaml.safe_load(block("GitHub Actions", 1, language="yaml").text)
    runs = [step["run"] for step in workflow["jobs"]["mplint"]["steps"] if "run" in step]
    assert len(runs) == 2 and runs[0].startswith("pip install"), runs
    project = write_project(tmp_path / "project")
    # the runner's Python (setup-python's): a fresh environment whose pip and scripts come first on PATH
    subprocess.run([sys.executable, "-m", "venv", str(tmp_path / "runner")], check=True, timeout=300)
    steps = run_lines([repo.substitute(run) for run in runs], project,
                      {**shell_env, "PATH": f"{tmp_path / 'runner' / 'bin'}{os.pathsep}{shell_env['PATH']}"})
    install, check = steps
    assert install.rc == 0 and repo.sha in install.out + install.err, show(steps)
    assert check.rc == 1, show(steps)  # findings: the step fails, the upload step runs `if: always()`
    log = json.loads((project / "mplint.sarif").read_text(encoding="utf-8"))
    assert sorted(r["ruleId"] for r in log["runs"][0]["results"]) == ["MP101", "MP301"]
