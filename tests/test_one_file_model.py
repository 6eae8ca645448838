"""A one-file run (pre-commit, an editor) reports in its file what a whole-project run
reports there: the program model it builds for the named file, summarising only what
may lead to that file, must ask every other module the facts the whole-project model
asks. Checked on every sample project, each file named alone."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Dict, List, Tuple

import pytest

from helpers import PROJECTS, run_cli

pytestmark = pytest.mark.usefixtures("no_installed_keras")

NAMES = sorted(p.name for p in PROJECTS.iterdir() if (p / "pyproject.toml").exists())

Found = List[Tuple[int, int, str, str]]


def _findings(project: Path, *paths: str) -> Dict[str, Found]:
    done = run_cli("check", "--no-cache", "--exit-zero", "--output-format", "json", *paths, cwd=project)
    assert done.returncode == 0, done.stderr
    out: Dict[str, Found] = {}
    for item in json.loads(done.stdout):
        name = Path(item["path"]).as_posix()
        out.setdefault(name, []).append((item["line"], item["col"], item["rule"], item["message"]))
    return {name: sorted(found) for name, found in out.items()}


@pytest.mark.parametrize("name", NAMES)
def test_each_file_named_alone_gets_the_whole_project_findings(name, tmp_path):
    project = tmp_path / name
    shutil.copytree(PROJECTS / name, project)
    whole = _findings(project, ".")
    for path in sorted(project.rglob("*.py")):
        data = path.read_bytes()
        if b"tensorflow" not in data and b"keras" not in data:
            continue  # never read further by either run
        rel = path.relative_to(project).as_posix()
        alone = _findings(project, rel)
        assert alone.get(rel, []) == whole.get(rel, []), rel
