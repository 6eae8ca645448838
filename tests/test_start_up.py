"""What a one-file run (pre-commit) loads before it checks anything.

The parsed rule catalog and the exclude patterns' regex are kept in the user's cache
folder, keyed by what they were derived from; the installed Keras and TensorFlow
versions are read from their metadata folders. Each must give what the slow path
gives, and a stale or broken stored value must never be served.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest

from helpers import BAD, ROOT, run_process, write_files
from mplint.core import user_cache
from mplint.rule import catalog
from mplint.run import discovery
from mplint.semantic import distributions


@pytest.fixture
def cache_home(tmp_path, monkeypatch):
    home = tmp_path / "xdg"
    monkeypatch.setenv("XDG_CACHE_HOME", str(home))
    return home / "mplint"


def _fresh_catalog(directory: Path):
    catalog.load_catalog.cache_clear()
    try:
        return catalog.load_catalog(str(directory))
    finally:
        catalog.load_catalog.cache_clear()


def test_the_stored_catalog_equals_the_yaml_and_follows_an_edit(cache_home, tmp_path):
    rules = tmp_path / "rules"
    rules.mkdir()
    for path in sorted(catalog.catalog_dir().glob("MP*.yaml")):
        (rules / path.name).write_bytes(path.read_bytes())
    parsed = _fresh_catalog(rules)
    assert [p.name for p in cache_home.glob("catalog-*.json")] != []
    assert _fresh_catalog(rules) == parsed  # read back from the store
    entry = rules / "MP101.yaml"
    entry.write_text(entry.read_text(encoding="utf-8").replace("summary: ", "summary: Edited. ", 1), encoding="utf-8")
    edited = _fresh_catalog(rules)
    assert edited["MP101"].summary.startswith("Edited. ")
    assert len(list(cache_home.glob("catalog-*.json"))) == 2


def test_a_broken_or_foreign_stored_catalog_is_a_miss(cache_home, tmp_path):
    rules = tmp_path / "rules"
    rules.mkdir()
    source = catalog.catalog_dir() / "MP101.yaml"
    (rules / "MP101.yaml").write_bytes(source.read_bytes())
    parsed = _fresh_catalog(rules)
    [stored] = cache_home.glob("catalog-*.json")
    for planted in ("{not json", json.dumps({"MP101": "x"}), json.dumps([["MP999"] * 3])):
        stored.write_text(planted, encoding="utf-8")
        assert _fresh_catalog(rules) == parsed
    stored.unlink()
    stored.mkdir()  # not a file: read as a miss, never raised
    assert _fresh_catalog(rules) == parsed


def test_a_broken_entry_is_reported_whatever_was_stored(cache_home, tmp_path):
    rules = tmp_path / "rules"
    rules.mkdir()
    (rules / "MP101.yaml").write_text("id: MP101\n", encoding="utf-8")
    with pytest.raises(catalog.CatalogError, match="missing key"):
        _fresh_catalog(rules)
    with pytest.raises(catalog.CatalogError, match="no rule catalog entries"):
        _fresh_catalog(tmp_path)


def _run_python(code: str, env_home: Path, cwd: Path) -> str:
    env = dict(os.environ, XDG_CACHE_HOME=str(env_home.parent), PYTHONPATH=str(ROOT))
    done = subprocess.run([sys.executable, "-c", code], cwd=cwd, env=env, capture_output=True, text=True, check=True)
    return done.stdout.strip()


def test_a_one_file_run_imports_no_yaml_pathspec_or_metadata_once_stored(cache_home, tmp_path):
    project = write_files(tmp_path / "p", {"pyproject.toml": "[project]\nname = 'p'\n", "m.py": "x = 1\n"})
    code = ("import sys; from mplint.cli import main; main(['check', '-q', '--exit-zero', 'm.py']); "
            "print(sorted(m for m in ('yaml', 'pathspec', 'importlib.metadata', 'multiprocessing', 'libcst') "
            "if m in sys.modules))")
    _run_python(code, cache_home, project)  # stores the catalog and the patterns' regex
    assert _run_python(code, cache_home, project).endswith("[]")


def test_the_stored_exclude_regex_matches_as_pathspec_does(cache_home, tmp_path):
    tree = write_files(tmp_path / "t", {
        "a.py": "", "build/b.py": "", "pkg/c_test.py": "", "pkg/d.py": "", "keep/e.py": "", "keep/x/f.py": "",
    })
    cases = {
        ("build", "*_test.py"): ["a.py", "keep/e.py", "keep/x/f.py", "pkg/d.py"],
        ("keep/", "!keep/e.py"): ["a.py", "build/b.py", "pkg/c_test.py", "pkg/d.py"],  # git never looks inside
        ("/keep/x",): ["a.py", "build/b.py", "keep/e.py", "pkg/c_test.py", "pkg/d.py"],
        (): ["a.py", "build/b.py", "keep/e.py", "keep/x/f.py", "pkg/c_test.py", "pkg/d.py"],
    }
    for patterns, kept in cases.items():
        discovery._combined_source.cache_clear()
        first = discovery.discover([str(tree)], tree, patterns).files  # pathspec translates them
        discovery._combined_source.cache_clear()
        again = discovery.discover([str(tree)], tree, patterns).files  # from the store
        assert first == again == [str(tree / rel) for rel in kept], patterns
    assert len(list(cache_home.glob("exclude-*.json"))) >= len(cases)  # and one per pattern where "!" narrows


def _site(tmp_path: Path, folders: dict) -> Path:
    site = tmp_path / "site"
    for name, metadata_text in folders.items():
        folder = site / name
        folder.mkdir(parents=True)
        (folder / ("PKG-INFO" if name.endswith(".egg-info") else "METADATA")).write_text(metadata_text, encoding="utf-8")
    return site


@pytest.mark.parametrize("name", ["keras", "Keras", "tf-nightly", "tf_nightly", "tensorflow", "tensorflow-cpu", "absent"])
def test_installed_versions_are_those_importlib_metadata_finds(tmp_path, monkeypatch, name):
    site = _site(tmp_path, {
        "keras-3.1.0.dist-info": "Metadata-Version: 2.1\nName: keras\nVersion: 3.1.0\n\nVersion: 9\n",
        "tf_nightly-2.17.0.dev1.dist-info": "Metadata-Version: 2.1\nName: tf-nightly\nVersion: 2.17.0.dev1\n",
        "tensorflow_cpu-2.15.1.egg-info": "Metadata-Version: 1.0\nName: tensorflow-cpu\nVersion: 2.15.1\n",
    })
    later = _site(tmp_path / "later", {"tensorflow-2.12.0.dist-info": "Name: tensorflow\nVersion: 2.12.0\n",
                                       "keras-2.12.0.dist-info": "Name: keras\nVersion: 2.12.0\n"})
    monkeypatch.setattr(sys, "path", [str(site), str(tmp_path / "missing"), str(later)])
    monkeypatch.setattr(distributions, "_LISTINGS", {})
    try:
        expected = metadata.version(name)
    except metadata.PackageNotFoundError:
        expected = None
    assert distributions.installed_version(name) == expected
    assert expected is not None or name == "absent"


def test_a_zip_on_the_path_is_left_to_importlib_metadata(tmp_path, monkeypatch):
    archive = tmp_path / "deps.zip"
    import zipfile

    with zipfile.ZipFile(archive, "w") as handle:
        handle.writestr("keras-3.2.0.dist-info/METADATA", "Name: keras\nVersion: 3.2.0\n")
    monkeypatch.setattr(sys, "path", [str(archive)])
    monkeypatch.setattr(distributions, "_LISTINGS", {})
    assert distributions.installed_version("keras") == "3.2.0"


def test_the_user_cache_needs_an_absolute_home(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/folder")
    monkeypatch.setenv("HOME", "relative")
    assert user_cache.cache_home() is None
    user_cache.store("catalog", "k", [1])  # nothing written, nothing raised
    assert user_cache.load("catalog", "k", list) is None
    assert not (Path.cwd() / "relative").exists()


@pytest.mark.parametrize("module", ["argparse", "json", "tokenize", "typing", "ast"])
def test_python_m_mplint_never_imports_the_checked_trees_own_modules(tmp_path, module):
    # `python -m` puts the current folder first on sys.path: the tree's own argparse.py
    # would be imported, and run, in place of the standard library's
    write_files(tmp_path, {f"{module}.py": 'open("ran", "w").write("x")\nraise SystemExit(3)\n', "m.py": BAD})
    result = run_process("check", ".", cwd=tmp_path)
    assert not (tmp_path / "ran").exists()
    assert result.returncode == 1 and b"m.py:4:30: MP101" in result.stdout_bytes
