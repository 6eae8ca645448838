"""The hooks in .pre-commit-hooks.yaml, run by the real pre-commit.

``pre-commit try-repo`` installs this checkout into a fresh virtual environment
(pip, from PyPI) exactly as a user's ``.pre-commit-config.yaml`` would, then runs
the hook on a throwaway git repository holding a bad file. Slow (one environment,
shared by both hooks), but it is the only test that proves the hooks work.
"""

import os
import shutil
import subprocess
import sys

import pytest

from helpers import BAD, GOOD, ROOT

# pip installs this checkout into a fresh environment: half a minute and more
pytestmark = pytest.mark.slow

GIT_ENV = {
    "GIT_AUTHOR_NAME": "mplint tests", "GIT_AUTHOR_EMAIL": "tests@example.invalid",
    "GIT_COMMITTER_NAME": "mplint tests", "GIT_COMMITTER_EMAIL": "tests@example.invalid",
    "GIT_CONFIG_NOSYSTEM": "1",
}
IGNORE = shutil.ignore_patterns(".git", "__pycache__", ".pytest_cache", "*.egg-info", "build", "dist",
                                ".venv", ".mplint_cache", ".hypothesis")


def _git(cwd, *args, env):
    subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True, timeout=120)


@pytest.fixture(scope="module")
def hook_repo(tmp_path_factory):
    """This checkout as a one-commit git repository (committed state = working tree)."""
    base = tmp_path_factory.mktemp("precommit")
    repo = base / "mplint-repo"
    shutil.copytree(ROOT, repo, ignore=IGNORE, symlinks=True)
    (base / "gitconfig").write_text("[commit]\n\tgpgsign = false\n")
    # the user's global git config (hooks, signing) stays out of it; pip's does not
    env = {**os.environ, **GIT_ENV, "GIT_CONFIG_GLOBAL": str(base / "gitconfig")}
    _git(repo, "init", "-q", env=env)
    _git(repo, "add", "-A", env=env)
    _git(repo, "commit", "-q", "-m", "snapshot", env=env)
    return repo, {**env, "PRE_COMMIT_HOME": str(base / "cache")}


def _try_repo(hook_repo, target, hook, *files):
    repo, env = hook_repo
    return subprocess.run(
        [sys.executable, "-m", "pre_commit", "try-repo", str(repo), hook, "--files", *files],
        cwd=target, env=env, capture_output=True, text=True, timeout=900,
    )


def test_hooks_fail_on_the_finding_and_fix_repairs_it(hook_repo, tmp_path):
    _, env = hook_repo
    target = tmp_path / "project"
    target.mkdir()
    (target / "train.py").write_text(BAD)
    (target / "clean.py").write_text(GOOD)
    _git(target, "init", "-q", env=env)
    _git(target, "add", "-A", env=env)

    check = _try_repo(hook_repo, target, "mplint", "train.py", "clean.py")
    output = check.stdout + check.stderr
    assert check.returncode == 1, output
    assert "train.py:4:30: MP101" in output
    assert "clean.py" not in output.replace("--files", "")
    assert (target / "train.py").read_text() == BAD  # the check hook writes nothing

    fix = _try_repo(hook_repo, target, "mplint-fix", "train.py", "clean.py")
    output = fix.stdout + fix.stderr
    assert fix.returncode == 1, output  # pre-commit fails a hook that modified files
    assert "files were modified by this hook" in output
    assert (target / "train.py").read_text() == GOOD
    assert (target / "clean.py").read_text() == GOOD

    again = _try_repo(hook_repo, target, "mplint", "train.py", "clean.py")
    assert again.returncode == 0, again.stdout + again.stderr
