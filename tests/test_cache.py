"""The result cache, parallel checking and the progress line, through the real CLI."""

import json
import os
import pty
import select
import subprocess
import sys
import textwrap
import time

import pytest

from helpers import BAD, ROOT, outcome, run_cli, run_process
from mplint.rule.catalog import load_catalog
from mplint.core.prefilter import may_matter

MODEL = textwrap.dedent('''\
    import tensorflow as tf

    model = tf.keras.Sequential([tf.keras.layers.Dense(10, activation="softmax")])
''')
#: a model built by a function, so a policy set before the call governs it
MODEL_FN = textwrap.dedent('''\
    import tensorflow as tf

    def build():
        return tf.keras.Sequential([tf.keras.layers.Dense(10, activation="softmax")])
''')


FOUND = [("bad.py", 4, "MP101")]


def _project(tmp_path, files):
    (tmp_path / "setup.cfg").write_text("")
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return tmp_path


def _age(path, seconds=10):
    """Make a file look older than the cache's racy window (as after a real edit)."""
    old = time.time() - seconds
    os.utime(path, (old, old))


def _results_files(root):
    return sorted((root / ".mplint_cache").rglob("results-*.json"))


def test_cache_folder_ignores_itself_and_holds_files_with_findings(tmp_path):
    _project(tmp_path, {"bad.py": BAD, "plain.py": "x = 1\n"})
    first = run_cli("check", ".", cwd=tmp_path)
    assert outcome(first) == (1, FOUND)
    assert (tmp_path / ".mplint_cache" / ".gitignore").read_text().splitlines()[-1] == "*"
    (results,) = _results_files(tmp_path)
    entries = json.loads(results.read_text())
    assert entries[str(tmp_path / "bad.py")][1][0][0]["rule"] == "MP101"
    second = run_cli("check", ".", cwd=tmp_path)
    assert (second.returncode, second.stdout) == (first.returncode, first.stdout)


def test_findings_really_come_from_the_cache(tmp_path):
    """Proof the second run reads the cache: an edited entry shows up."""
    _project(tmp_path, {"bad.py": BAD})
    _age(tmp_path / "bad.py")
    run_cli("check", ".", cwd=tmp_path)
    (results,) = _results_files(tmp_path)
    entries = json.loads(results.read_text())
    entries[str(tmp_path / "bad.py")][1][0][0]["message"] = "from the cache"
    results.write_text(json.dumps(entries))
    assert "MP101 error: from the cache" in run_cli("check", ".", cwd=tmp_path).stdout
    assert "MP101 error: from the cache" not in run_cli("check", "--no-cache", ".", cwd=tmp_path).stdout


def test_no_cache_writes_nothing(tmp_path):
    _project(tmp_path, {"bad.py": BAD})
    assert outcome(run_cli("check", "--no-cache", ".", cwd=tmp_path)) == (1, [("bad.py", 4, "MP101")])
    assert not (tmp_path / ".mplint_cache").exists()


def test_editing_a_file_invalidates_its_entry(tmp_path):
    _project(tmp_path, {"bad.py": BAD})
    assert outcome(run_cli("check", ".", cwd=tmp_path)) == (1, FOUND)
    (tmp_path / "bad.py").write_text(BAD.replace('activation="softmax"', 'activation="softmax", dtype="float32"'))
    assert outcome(run_cli("check", ".", cwd=tmp_path)) == (0, [])
    # Same size, same mtime as before, but within the racy window: the hash decides.
    path = tmp_path / "bad.py"
    st = path.stat()
    path.write_text(BAD.replace("mixed_float16", "mixed_float64"))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert outcome(run_cli("check", ".", cwd=tmp_path)) == (0, [])  # float64 is not mixed
    path.write_text(BAD)
    assert outcome(run_cli("check", ".", cwd=tmp_path)) == (1, FOUND)


def test_changing_config_invalidates(tmp_path):
    _project(tmp_path, {"model.py": MODEL})
    _age(tmp_path / "model.py")
    assert outcome(run_cli("check", ".", cwd=tmp_path)) == (0, [])
    (tmp_path / "pyproject.toml").write_text('[tool.mplint]\nassume-policy = "mixed_float16"\n')
    assert outcome(run_cli("check", ".", cwd=tmp_path)) == (1, [("model.py", 3, "MP101")])
    (tmp_path / "pyproject.toml").write_text('[tool.mplint]\nassume-policy = "float32"\n')
    assert outcome(run_cli("check", ".", cwd=tmp_path)) == (0, [])


def test_changing_rule_selection_invalidates(tmp_path):
    _project(tmp_path, {"bad.py": BAD})
    _age(tmp_path / "bad.py")
    assert outcome(run_cli("check", ".", cwd=tmp_path)) == (1, FOUND)
    assert outcome(run_cli("check", "--ignore", "MP101", ".", cwd=tmp_path)) == (0, [])
    assert outcome(run_cli("check", "--select", "MP101", ".", cwd=tmp_path)) == (1, FOUND)
    assert len(_results_files(tmp_path)) >= 2  # one per selection, all kept
    assert outcome(run_cli("check", "--ignore", "MP101", ".", cwd=tmp_path)) == (0, [])


def test_a_policy_change_in_another_file_invalidates(tmp_path):
    _project(tmp_path, {"model.py": MODEL_FN,
                        "train.py": BAD.splitlines()[0] + "\nimport model\n" + BAD.splitlines()[2]
                        + "\nnet = model.build()\n"})
    _age(tmp_path / "model.py")
    assert outcome(run_cli("check", "model.py", cwd=tmp_path)) == (1, [("model.py", 4, "MP101")])
    (tmp_path / "train.py").write_text("import tensorflow as tf\nimport model\n"
                                       "tf.keras.mixed_precision.set_global_policy('float32')\nnet = model.build()\n")
    assert outcome(run_cli("check", "model.py", cwd=tmp_path)) == (0, [])


def test_full_cache_hit_does_not_import_libcst(tmp_path):
    _project(tmp_path, {"bad.py": BAD, "model.py": MODEL})
    _age(tmp_path / "bad.py")
    _age(tmp_path / "model.py")
    probe = ("import sys\nfrom mplint.cli import main\nrc = main(['check', '.'])\n"
             "print('LIBCST', 'libcst' in sys.modules, rc)\n")
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    runs = [subprocess.run([sys.executable, "-c", probe], cwd=tmp_path, capture_output=True, text=True, env=env)
            for _ in range(2)]
    assert "LIBCST True 1" in runs[0].stdout
    assert "LIBCST False 1" in runs[1].stdout
    assert runs[0].stdout.split("LIBCST")[0] == runs[1].stdout.split("LIBCST")[0]


@pytest.mark.slow
def test_parallel_and_serial_runs_agree(tmp_path):
    files = {f"pkg/m{i:02d}.py": (f"from pkg import m{i + 1:02d}\n" + BAD + f"m{i + 1:02d}.build()\n"
                                  if i % 3 == 0 else MODEL_FN if i % 3 == 1 else "import keras\nx = 1\n")
             for i in range(30)}
    files["pkg/broken.py"] = "import tensorflow as tf\ndef f(:\n"
    _project(tmp_path, files)
    # real processes: the pool forks the process it runs in
    serial = run_process("check", "--no-cache", "--jobs", "1", ".", cwd=tmp_path)
    parallel = run_process("check", "--no-cache", "--jobs", "2", ".", cwd=tmp_path)
    assert serial.returncode == parallel.returncode == 1  # a syntax error is a finding, as in ruff
    # each BAD file sets the policy and calls a MODEL file's build(): it governs it (project facts)
    assert serial.stdout == parallel.stdout and "Found 21 problems (MP101: 20, syntax-error: 1)" in serial.stdout
    assert "pkg/broken.py:2:7: SyntaxError: invalid syntax" in serial.stdout
    assert serial.stderr == parallel.stderr


@pytest.mark.slow
def test_progress_only_on_a_terminal(tmp_path):
    _project(tmp_path, {f"m{i:02d}.py": MODEL for i in range(60)})
    piped = run_cli("check", "--no-cache", ".", cwd=tmp_path)
    assert piped.stderr == ""
    master, slave = pty.openpty()
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    env.pop("CI", None)
    proc = subprocess.Popen([sys.executable, "-m", "mplint", "check", "--no-cache", "."], cwd=tmp_path,
                            stdout=subprocess.PIPE, stderr=slave, env=env)
    os.close(slave)
    out, _ = proc.communicate(timeout=300)
    seen = b""
    while select.select([master], [], [], 0.5)[0]:
        try:
            chunk = os.read(master, 4096)
        except OSError:
            break
        if not chunk:
            break
        seen += chunk
    os.close(master)
    assert b"/60 files" in seen
    assert b"files" not in out  # stdout stays clean


def test_prefilter_keeps_every_example_that_must_fire():
    """The byte prefilter never skips code that a rule reports."""
    for entry in load_catalog().values():
        for example in entry.examples:
            if example.kind == "bad":
                assert may_matter(example.code.encode()), entry.id
    for path in (ROOT / "fixtures").rglob("*.py"):
        raw = path.read_bytes()
        if b"# expect:" in raw:
            assert may_matter(raw), path


def test_prefilter_matches_every_import_spelling_the_resolver_knows():
    """A canonical name needs an import from one of these packages, spelled in the file."""
    from mplint.semantic.names import _API_ROOTS, _PREFIXES

    roots = {p.split(".")[0] for p, _ in _PREFIXES} | (_API_ROOTS - {"numpy"})
    for root in roots:
        assert may_matter(f"import {root}\n".encode()), root
        assert may_matter(f"from {root}.x import y\n".encode()), root


def test_a_one_file_run_writes_only_the_index_entries_it_changed(tmp_path, monkeypatch):
    """After an edit elsewhere, a pre-commit run writes the changed entries beside the
    index (``index-delta.json``), not the whole index again; the next run reads them
    (the edited file's bytes are not scanned again), and a run that changes many
    entries writes the whole index and drops the delta."""
    import mplint.run.project as project_module

    files = {"setup.py": "", "model.py": BAD, **{f"util_{n}.py": f"X = {n}\n" for n in range(20)}}
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    run_cli("check", ".", cwd=tmp_path)
    time.sleep(2.1)  # past the racy window: the index trusts its stamps
    run_cli("check", ".", cwd=tmp_path)
    [index] = list((tmp_path / ".mplint_cache").rglob("index.json"))
    whole = index.read_bytes()
    (tmp_path / "util_3.py").write_text("X = 33\n")
    first = run_cli("check", "model.py", cwd=tmp_path)
    delta = index.with_name("index-delta.json")
    assert index.read_bytes() == whole and delta.exists()
    assert os.path.abspath(tmp_path / "util_3.py") in json.loads(delta.read_text())
    scanned = []
    real = project_module.exports_of
    monkeypatch.setattr(project_module, "exports_of", lambda raw: scanned.append(raw) or real(raw))
    again = run_cli("check", "model.py", cwd=tmp_path)
    monkeypatch.undo()
    assert scanned == [] and again.stdout == first.stdout
    for n in range(20):
        (tmp_path / f"util_{n}.py").write_text(f"X = {n + 100}\n")
    run_cli("check", ".", cwd=tmp_path)
    assert not delta.exists() and index.read_bytes() != whole
