"""Discovery: the same files whatever folder mplint is started from."""

import os
import shutil
import subprocess

import pytest

from helpers import outcome, run_cli, write_files
from mplint.run import discovery
from mplint.run.discovery import discover

BAD = ('import tensorflow as tf\ntf.keras.mixed_precision.set_global_policy("mixed_float16")\n'
       'model = tf.keras.Sequential([tf.keras.layers.Dense(10, activation="softmax")])\n')


def test_a_gitignore_far_above_a_named_tree_does_not_hide_it(tmp_path):
    (tmp_path / "top").mkdir()
    (tmp_path / "top" / ".gitignore").write_text("*.py\n")  # e.g. ~/.pyenv/.gitignore
    project = tmp_path / "top" / "mid" / "proj"
    project.mkdir(parents=True)
    (project / "a.py").write_text(BAD)
    (tmp_path / "elsewhere").mkdir()
    inside = run_cli("check", ".", cwd=project)
    outside = run_cli("check", "../top/mid/proj", cwd=tmp_path / "elsewhere")
    assert outcome(inside) == (1, [("a.py", 3, "MP101")])
    assert outcome(outside) == (1, [("../top/mid/proj/a.py", 3, "MP101")])


def test_a_gitignore_inside_the_named_tree_still_applies(tmp_path):
    project = tmp_path / "proj"
    (project / "vendored").mkdir(parents=True)
    (project / "vendored" / "bad.py").write_text(BAD)
    (project / ".gitignore").write_text("vendored/\n")
    (tmp_path / "elsewhere").mkdir()
    assert outcome(run_cli("check", "../proj", cwd=tmp_path / "elsewhere")) == (0, [])
    assert outcome(run_cli("check", ".", cwd=project)) == (0, [])


# -- .gitignore files (with "!" negations) as git itself reads them ------------------------
# Each case is a layout's .gitignore files and the Python files git lists as untracked and
# not ignored (``git ls-files --others --exclude-standard``, checked with git 2.39).

TREE = ["main.py", "setup.py", "lib/a.py", "lib/model/b.py", "build/c.py", "build/keep.py",
        "foo/top.py", "foo/bar/x.py", "foo/baz/y.py", "data/d.py", "data/keep/k.py",
        "data/keep/sub/s.py", "data/other/o.py", "node_modules/pkg/m.py", "pkg/build/p.py"]
ALL = sorted(TREE)

GITIGNORE_CASES = {
    # deepfakes/faceswap: ignore everything, then re-include folders and their sources
    "faceswap": ({".gitignore": "*\n!*/\n!lib/\n!lib/**/\n!lib/**/*.py\n!setup.py\n"},
                 ["lib/a.py", "lib/model/b.py", "setup.py"]),
    "faceswap_without_every_folder": ({".gitignore": "*\n!lib/\n!lib/**/\n!lib/**/*.py\n!setup.py\n"},
                                      ["lib/a.py", "lib/model/b.py", "setup.py"]),
    "everything_but_python": ({".gitignore": "*\n!*/\n!*.py\n"}, ALL),
    "every_folder": ({".gitignore": "*/\n"}, ["main.py", "setup.py"]),
    "plain_folder": ({".gitignore": "build/\nnode_modules/\n"},
                     [f for f in ALL if not f.startswith(("build/", "node_modules/", "pkg/build/"))]),
    # git cannot re-include a file whose folder is excluded
    "negation_under_an_ignored_folder": (
        {".gitignore": "build/\n!build/keep.py\n"},
        [f for f in ALL if not f.startswith(("build/", "pkg/build/"))]),
    # the example in git's own documentation: only foo/bar is left
    "gitignore_documentation": ({".gitignore": "/*\n!/foo\n/foo/*\n!/foo/bar\n"}, ["foo/bar/x.py"]),
    # data/* matches data/keep, not what is inside it once it is re-included
    "re_included_subfolder": ({".gitignore": "data/*\n!data/keep/\n"},
                              [f for f in ALL if f not in ("data/d.py", "data/other/o.py")]),
    # a deeper .gitignore overrides a shallower one
    "nested_negation": ({".gitignore": "build/\n*.py\n", "pkg/.gitignore": "!build/\n!*.py\n"},
                        ["pkg/build/p.py"]),
    "nested_ignore_all": ({".gitignore": "*\n!*/\n", "lib/.gitignore": "!*.py\n"},
                          ["lib/a.py", "lib/model/b.py"]),
    "anchored_double_star": ({".gitignore": "lib/**\n!lib/model/\n"},
                             [f for f in ALL if not f.startswith("lib/")]),
    # what pathspec 1.1 misreads without any "!": the folders below lib/, not lib/ itself
    "folders_below": ({".gitignore": "lib/**/\n"}, [f for f in ALL if f != "lib/model/b.py"]),
    "posix_class": ({".gitignore": "[[:lower:]].py\n"},
                    ["build/keep.py", "foo/top.py", "main.py", "setup.py"]),
    "character_classes": ({".gitignore": "*\n!*/\n![a-c]*.py\n![!a-z]*.py\n!f[[:alpha:]]o/\n"},
                          ["build/c.py", "lib/a.py", "lib/model/b.py"]),
}


def _layout(tmp_path, gitignores):
    write_files(tmp_path, {**{name: "" for name in TREE}, **gitignores})


def _discovered(tmp_path, monkeypatch, exclude=(), respect_gitignore=True):
    monkeypatch.chdir(tmp_path)
    return discover(["."], tmp_path, list(exclude), respect_gitignore).files


def _git_untracked_python(folder):
    env = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull,
           "HOME": str(folder)}
    subprocess.run(["git", "init", "-q", "."], cwd=folder, env=env, check=True)
    listed = subprocess.run(["git", "ls-files", "-z", "--others", "--exclude-standard"], cwd=folder,
                            env=env, check=True, capture_output=True, text=True).stdout
    return sorted(name for name in listed.split("\0") if name.endswith(".py"))


@pytest.mark.parametrize("case", sorted(GITIGNORE_CASES))
def test_gitignore_negations_select_the_files_git_does(tmp_path, monkeypatch, case):
    gitignores, expected = GITIGNORE_CASES[case]
    _layout(tmp_path, gitignores)
    assert _discovered(tmp_path, monkeypatch) == sorted(expected)
    assert _discovered(tmp_path, monkeypatch, respect_gitignore=False) == ALL


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
@pytest.mark.parametrize("case", sorted(GITIGNORE_CASES))
def test_the_expected_files_are_what_git_lists(tmp_path, case):
    gitignores, expected = GITIGNORE_CASES[case]
    _layout(tmp_path, gitignores)
    assert _git_untracked_python(tmp_path) == sorted(expected)


def test_a_gitignore_that_ignores_all_then_re_includes_sources_is_checked(tmp_path):
    """deepfakes/faceswap: "All checks passed!" after checking 4 of ~300 files."""
    write_files(tmp_path, {".gitignore": "*\n!*/\n!lib/\n!lib/**/\n!lib/**/*.py\n!setup.py\n",
                           "lib/model/bad.py": BAD, "lib/notes.txt": "", "other/bad.py": BAD,
                           "setup.py": ""})
    assert outcome(run_cli("check", ".", cwd=tmp_path)) == (1, [("lib/model/bad.py", 3, "MP101")])
    listed = run_cli("check", "--show-files", ".", cwd=tmp_path).stdout.split()
    assert listed == ["lib/model/bad.py", "setup.py"]


@pytest.mark.parametrize("gitignore", ["build/\nnode_modules/\n", "build/\nnode_modules/\n!*.py\n",
                                       "*\n!*/\nbuild/\nnode_modules/\n!*.py\n"])
def test_an_ignored_folder_is_not_walked(tmp_path, monkeypatch, gitignore):
    _layout(tmp_path, {".gitignore": gitignore})
    listed = []
    scandir = os.scandir

    def recording(path):
        listed.append(os.path.relpath(path, tmp_path))
        return scandir(path)

    monkeypatch.setattr(discovery.os, "scandir", recording)
    found = _discovered(tmp_path, monkeypatch)
    assert "main.py" in found and "lib/model/b.py" in found
    assert not [folder for folder in listed if folder.split(os.sep)[0] in ("build", "node_modules")]
    assert "pkg/build" not in listed


def test_a_named_file_and_exclude_still_apply_with_negations(tmp_path, monkeypatch):
    _layout(tmp_path, {".gitignore": "*\n!*/\n!lib/**/*.py\n"})
    assert _discovered(tmp_path, monkeypatch) == ["lib/a.py", "lib/model/b.py"]
    assert _discovered(tmp_path, monkeypatch, exclude=["model/"]) == ["lib/a.py"]
    assert discover(["main.py"], tmp_path, []).files == ["main.py"]
    assert discovery.is_excluded("main.py", tmp_path, [])
    assert not discovery.is_excluded("lib/model/b.py", tmp_path, [])
    assert discover(["main.py"], tmp_path, [], force_exclude=True).files == []
    assert discover(["lib"], tmp_path, []).files == ["lib/a.py", "lib/model/b.py"]
    (tmp_path / ".gitignore").write_text("build/\n!build/keep.py\n")
    assert discover(["build"], tmp_path, []).files == []
    assert discovery.is_excluded("build/keep.py", tmp_path, [])


def test_git_info_exclude_yields_to_gitignore(tmp_path, monkeypatch):
    _layout(tmp_path, {".git/info/exclude": "*.py\n", ".gitignore": "!main.py\n!lib/\n"})
    assert _discovered(tmp_path, monkeypatch) == ["main.py"]
    if shutil.which("git") is not None:
        assert _git_untracked_python(tmp_path) == ["main.py"]
