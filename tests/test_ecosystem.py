"""scripts/ecosystem.py: brings pinned repositories from mirrors, runs mplint in each,
records a baseline and reports what appeared and disappeared, and scores labels.

The repositories are small git repositories made here (no network); one module-wide
recorded run (two `mplint check` processes) serves the tests that need real findings.
"""

from __future__ import annotations

import importlib.util
import json
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import List

import pytest

ROOT = Path(__file__).resolve().parent.parent

MODEL = """\
import tensorflow as tf

tf.keras.mixed_precision.set_global_policy("mixed_float16")
inputs = tf.keras.Input(shape=(16,))
outputs = tf.keras.layers.Dense(10, activation="softmax")(inputs)
model = tf.keras.Model(inputs, outputs)
"""
SOFTMAX_LINE = 5


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("ecosystem", ROOT / "scripts" / "ecosystem.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["ecosystem"] = module  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


eco = _load()


def _git(*args: str, cwd: Path) -> str:
    done = subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=cwd,
                          capture_output=True, text=True, check=True)
    return done.stdout.strip()


def _make_mirror(mirrors: Path, name: str, files: dict) -> str:
    """A bare mirror at mirrors/owner+name/repo (the sandbox's layout); returns the commit."""
    work = mirrors.parent / "work" / name.replace("/", "+")
    work.mkdir(parents=True)
    for path, text in files.items():
        (work / path).parent.mkdir(parents=True, exist_ok=True)
        (work / path).write_text(text)
    _git("init", "-q", cwd=work)
    _git("add", "-A", cwd=work)
    _git("commit", "-qm", "code", cwd=work)
    target = mirrors / name.replace("/", "+") / "repo"
    target.parent.mkdir(parents=True)
    _git("clone", "-q", "--bare", str(work), str(target), cwd=mirrors)
    return _git("rev-parse", "HEAD", cwd=work)


def _write_list(path: Path, entries: List[tuple]) -> Path:
    lines = []
    for name, sha in entries:
        lines += ["[[repository]]", f'name = "{name}"', f'sha = "{sha}"', 'why = "test"', ""]
    path.write_text("\n".join(lines))
    return path


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    """One recorded run over a repository with one MP101 finding."""
    base = tmp_path_factory.mktemp("eco")
    mirrors = base / "mirrors"
    mirrors.mkdir()
    sha = _make_mirror(mirrors, "someone/models", {"pyproject.toml": "[project]\nname = 'm'\n",
                                                   "models/train.py": MODEL, "README.md": "hi\n"})
    listing = _write_list(base / "repositories.toml", [("someone/models", sha)])
    args = ["--list", str(listing), "--mirrors", str(mirrors), "--cache", str(base / "cache"),
            "--baseline", str(base / "baseline.json")]
    assert eco.main([*args, "--record"]) == 0
    return base, args, sha


def test_record_writes_both_checkouts_findings_keyed_by_line_text(recorded):
    base, _, sha = recorded
    data = json.loads((base / "baseline.json").read_text())
    repo = data["repositories"]["someone/models"]
    assert repo["sha"] == sha and set(repo["variants"]) == {"git", "nogit"}
    for variant in ("git", "nogit"):
        (finding,) = repo["variants"][variant]["findings"]
        assert (finding["path"], finding["line"], finding["rule"]) == ("models/train.py", SOFTMAX_LINE, "MP101")
        line = MODEL.splitlines()[SOFTMAX_LINE - 1]
        assert finding["text_hash"] == eco.text_hash(line)
    clone = base / "cache" / "git" / f"someone+models@{sha[:12]}"
    copy = base / "cache" / "nogit" / f"someone+models@{sha[:12]}"
    assert (clone / ".git").is_dir() and not (copy / ".git").exists()
    assert (copy / "models" / "train.py").read_text() == MODEL
    assert _git("rev-parse", "HEAD", cwd=clone) == sha


def test_unchanged_run_reports_no_changes_and_check_passes(recorded, capsys):
    _, args, _ = recorded
    assert eco.main([*args, "--check", "--variant", "nogit"]) == 0
    assert "no changes against the baseline" in capsys.readouterr().out


def test_check_fails_and_names_what_appeared_and_disappeared(recorded, tmp_path, capsys):
    base, args, _ = recorded
    data = json.loads((base / "baseline.json").read_text())
    findings = data["repositories"]["someone/models"]["variants"]["git"]["findings"]
    gone = dict(findings[0], rule="MP303", message="batch size 7 is not a multiple of 8", line=9, col=1)
    findings[:] = [gone]  # the MP101 finding is new now; the MP303 one disappears
    edited = tmp_path / "baseline.json"
    edited.write_text(json.dumps(data))
    args = [a if a != str(base / "baseline.json") else str(edited) for a in args]

    assert eco.main([*args, "--check", "--variant", "git"]) == 1
    out = capsys.readouterr().out
    assert "someone/models [git]: +1 -1" in out
    assert "MP101: +1 -0" in out and "+ models/train.py:5:" in out
    assert "MP303: +0 -1" in out and "- models/train.py:9:1: batch size 7 is not a multiple of 8" in out
    assert "in all: MP101 +1 -0, MP303 +0 -1" in out


def test_a_finding_that_moved_is_the_same_finding():
    def finding(line: int, text: str) -> object:
        return eco.Finding(path="a.py", line=line, col=1, rule="MP101", message="m", text_hash=eco.text_hash(text))

    then = eco.RepoResult("o/r", "0" * 40, {"git": eco.VariantResult(1.0, 1, [finding(5, "x = f(1)")])})
    moved = eco.RepoResult("o/r", "0" * 40, {"git": eco.VariantResult(1.0, 1, [finding(9, "    x = f(1)")])})
    twice = eco.RepoResult("o/r", "0" * 40, {"git": eco.VariantResult(1.0, 1, [finding(9, "x = f(1)"),
                                                                                finding(12, "x = f(1)")])})
    assert eco.compare({"o/r": then}, [moved]) == []
    (change,) = eco.compare({"o/r": then}, [twice])  # the same line text twice: one more than before
    assert (change.sign, change.rule) == ("+", "MP101")


def test_repinned_or_new_repository_is_a_difference_not_a_comparison():
    result = eco.RepoResult("o/r", "1" * 40, {"git": eco.VariantResult(1.0, 0)})
    (new,) = eco.compare({}, [result])
    (repinned,) = eco.compare({"o/r": eco.RepoResult("o/r", "2" * 40)}, [result])
    assert new.rule == "new" and repinned.rule == "sha" and "run --record" in repinned.message


def test_labels_score_recall_false_findings_and_precision(recorded, tmp_path, capsys):
    base, args, sha = recorded
    labels = tmp_path / "labels.toml"
    labels.write_text(f"""
[[label]]
repo = "someone/models"
sha = "{sha}"
path = "models/train.py"
line = {SOFTMAX_LINE}
rules = ["MP101"]
kind = "MP101"
why = "float16 softmax head"

[[label]]
repo = "someone/models"
sha = "{sha}"
path = "models/other.py"
line = 3
also = ["models/helper.py:1-4"]
bug = true
kind = "MP504"
why = "a bug mplint misses"
cross_file = true

[[label]]
repo = "someone/models"
sha = "{sha}"
path = "models/train.py"
line = 3
bug = false
kind = "policy"
why = "the policy line is right"
""")
    assert eco.main([*args, "--labels", str(labels), "--from-baseline"]) == 0
    out = capsys.readouterr().out
    assert "someone/models: 1/2 bugs found, 0 findings on 1 correct cases" in out
    assert "recall 1/2 = 0.50 (cross-file 0/1); 0 findings on 1 labelled correct cases" in out
    assert "precision 1/1 = 1.00 of judged findings; 0 findings not judged yet" in out
    assert "missed someone/models models/other.py:3 [MP504] a bug mplint misses" in out


def test_label_on_a_correct_case_that_a_finding_hits_is_counted_false(recorded, tmp_path, capsys):
    base, args, sha = recorded
    labels = tmp_path / "labels.toml"
    labels.write_text(f"""
[[label]]
repo = "someone/models"
sha = "{sha}"
path = "models/train.py"
line = 4
end_line = 6
bug = false
kind = "head"
why = "judged correct"

[[verdict]]
repo = "someone/models"
path = "models/train.py"
line = {SOFTMAX_LINE}
rule = "MP101"
right = false
why = "judged wrong"
""")
    assert eco.main([*args, "--labels", str(labels), "--from-baseline"]) == 0
    out = capsys.readouterr().out
    assert "1 findings on 1 labelled correct cases" in out
    assert "precision 0/1 = 0.00" in out and "wrong someone/models models/train.py:5:" in out


def test_blobs_missing_from_a_snapshot_are_left_out_not_fatal(tmp_path):
    mirrors = tmp_path / "mirrors"
    mirrors.mkdir()
    sha = _make_mirror(mirrors, "o/big", {"a.py": "import tensorflow as tf\n", "weights.bin": "x" * 100})
    git_dir = mirrors / "o+big" / "repo"
    blob = _git("--git-dir", str(git_dir), "rev-parse", f"{sha}:weights.bin", cwd=tmp_path)
    loose = git_dir / "objects" / blob[:2] / blob[2:]
    if not loose.is_file():
        pytest.skip("the clone packed its objects")
    loose.unlink()
    repo = eco.Repository("o/big", sha, "test")
    tree = eco.checkout(repo, git_dir, tmp_path / "cache", "nogit")
    assert (tree / "a.py").is_file() and not (tree / "weights.bin").exists()
    assert tree.with_name(tree.name + ".missing").read_text() == "weights.bin\n"


def test_mirror_layouts(tmp_path):
    repo = eco.Repository("o/r", "0" * 40, "test")
    for layout in ("o+r/repo", "o+r/repo/.git", "o+r.git", "o/r.git", "o/r"):
        mirrors = tmp_path / layout.replace("/", "_")
        _git("init", "-q", "--bare", str(mirrors / layout), cwd=tmp_path)
        assert eco.mirror_git_dir(mirrors, repo) == mirrors / layout
    assert eco.mirror_git_dir(tmp_path / "empty", repo) is None


def test_list_errors_are_one_line(tmp_path, capsys):
    bad = tmp_path / "repositories.toml"
    bad.write_text('[[repository]]\nname = "o/r"\nsha = "abc"\n')
    assert eco.main(["--list", str(bad), "--from-baseline"]) == 2
    assert "needs name = 'owner/name' and a 40-digit sha" in capsys.readouterr().err
    twice = _write_list(tmp_path / "twice.toml", [("o/r", "0" * 40), ("o/r", "1" * 40)])
    assert eco.main(["--list", str(twice), "--from-baseline"]) == 2
    assert "listed twice: o/r" in capsys.readouterr().err
    one = _write_list(tmp_path / "one.toml", [("o/r", "0" * 40)])
    assert eco.main(["--list", str(one), "--only", "nope", "--from-baseline"]) == 2
    assert "not in the list: nope" in capsys.readouterr().err


def test_a_repository_without_a_mirror_is_reported_and_the_others_run(recorded, tmp_path, capsys):
    base, args, sha = recorded
    listing = _write_list(tmp_path / "repositories.toml", [("someone/models", sha), ("nobody/gone", "3" * 40)])
    args = [a if a != str(base / "repositories.toml") else str(listing) for a in args]
    assert eco.main([*args, "--variant", "git"]) == 0  # without --check, differences only print
    captured = capsys.readouterr()
    assert "nobody/gone: unavailable: no mirror of nobody/gone" in captured.err
    assert "nobody/gone: no mirror of nobody/gone" in captured.out
    assert "someone/models [git]" not in captured.out  # unchanged


def test_the_pinned_list_is_valid_and_large_enough():
    repositories = eco.load_repositories(ROOT / "ecosystem" / "repositories.toml")
    assert len(repositories) >= 40 and all(r.why for r in repositories)
    labels, _ = eco.load_labels(ROOT / "ecosystem" / "labels.toml")
    pinned = {r.name: r.sha for r in repositories}
    assert all(pinned.get(label.repo) == label.sha for label in labels)
    assert len({label.repo for label in labels}) >= 8


def test_labels_with_only_score_the_repositories_run(recorded, tmp_path, capsys):
    # A whole labels file scored with --only: labels of repositories not asked for are left
    # out, not an error (a helper scores its own set from the shared file).
    base, args, sha = recorded
    labels = tmp_path / "labels.toml"
    labels.write_text(f"""
[[label]]
repo = "someone/models"
sha = "{sha}"
path = "models/train.py"
line = {SOFTMAX_LINE}
rules = ["MP101"]
kind = "MP101"
why = "float16 softmax head"

[[label]]
repo = "elsewhere/other"
sha = "{sha}"
path = "x.py"
line = 1
kind = "MP101"
why = "a repository not run"
""")
    assert eco.main([*args, "--labels", str(labels), "--from-baseline", "--only", "someone/models"]) == 0
    out = capsys.readouterr().out
    assert "recall 1/1 = 1.00" in out and "elsewhere/other" not in out
    assert eco.main([*args, "--labels", str(labels), "--from-baseline"]) == 2  # without --only: an error
