"""Ctrl-C and ``kill -9`` (issue 27, item 16): an interrupted ``fix`` says which files it
already wrote and exits 130 without a traceback; a temporary file a killed mplint left
is removed by the next run, and nothing else is."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from helpers import BAD, GOOD, as_at_a_terminal, run_cli, write_files
from mplint.core import temp_files

#: a file with one safe fix that takes a while to check (a few thousand statements)
SLOW_BAD = BAD + "".join(f"d{i} = tf.keras.layers.Dense({i % 7 + 8}, name='d{i}')\n" for i in range(800))


def _stale_name(pid: int, host: str = "") -> str:
    return f"{temp_files.PREFIX}{host or temp_files._host()}-{pid}-0123abcd{temp_files.SUFFIX}"


def _dead_pid() -> int:
    done = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    return int(done.stdout)


def test_fix_writes_through_a_temporary_file_named_as_its_own(tmp_path, monkeypatch):
    write_files(tmp_path, {"m.py": BAD})
    renamed = []
    replace = os.replace
    monkeypatch.setattr(os, "replace", lambda src, dst: renamed.append(os.path.basename(src)) or replace(src, dst))
    assert run_cli("fix", "--no-cache", "--file-timeout", "0", ".", cwd=tmp_path).returncode == 0
    [name] = renamed
    match = temp_files._NAME.fullmatch(name)
    assert match is not None and int(match["pid"]) == os.getpid() and match["host"] == temp_files._host()
    assert (tmp_path / "m.py").read_text() == GOOD and os.listdir(tmp_path) == ["m.py"]


def test_the_next_run_removes_only_what_a_dead_mplint_left(tmp_path):
    dead = _dead_pid()
    write_files(tmp_path, {"m.py": BAD, "pkg/n.py": BAD, "elsewhere/target.txt": "keep"})
    stale = [tmp_path / _stale_name(dead), tmp_path / "pkg" / _stale_name(dead)]
    kept = [
        tmp_path / _stale_name(os.getpid()),  # a live process: maybe still writing
        tmp_path / _stale_name(dead, host="0badc0de"),  # another machine's (a shared folder)
        tmp_path / ".mplint-abcd1234.tmp",  # an older mplint's: no pid to prove it dead
        tmp_path / f"{temp_files.PREFIX}{temp_files._host()}-{dead}-xyz.tmp",  # not the exact shape
        tmp_path / (_stale_name(dead) + ".bak"),
    ]
    for path in stale + kept:
        path.write_text("half a file")
    link = tmp_path / "pkg" / _stale_name(dead + 1 if dead > 2 else 3)
    link.symlink_to(tmp_path / "elsewhere" / "target.txt")
    folder = tmp_path / "pkg" / _stale_name(dead).replace("0123abcd", "4567abcd")
    folder.mkdir()
    result = run_cli("check", "--no-cache", ".", cwd=tmp_path)
    assert result.returncode == 1
    assert not any(path.exists() for path in stale)
    assert all(path.exists() for path in kept)
    assert link.is_symlink() and folder.is_dir() and (tmp_path / "elsewhere" / "target.txt").read_text() == "keep"


def test_a_file_mplint_cannot_prove_dead_is_kept_by_fix_too(tmp_path):
    write_files(tmp_path, {"m.py": BAD})
    mine = tmp_path / _stale_name(os.getpid())
    mine.write_text("x")
    assert run_cli("fix", "--no-cache", ".", cwd=tmp_path).returncode == 0
    assert mine.exists() and (tmp_path / "m.py").read_text() == GOOD


# -- Ctrl-C ------------------------------------------------------------------------------
def _interrupt_fix(tmp_path, *options: str):
    """``mplint fix`` over 16 slow files, Ctrl-C once the first is written."""
    names = [f"m{i:02}.py" for i in range(16)]
    write_files(tmp_path, {name: SLOW_BAD for name in names})
    process = subprocess.Popen([sys.executable, "-m", "mplint", "fix", "--no-cache", *options, "."], cwd=tmp_path,
                               preexec_fn=as_at_a_terminal,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline and process.poll() is None:
        if any((tmp_path / name).read_text() != SLOW_BAD for name in names):
            break
        time.sleep(0.05)
    process.send_signal(signal.SIGINT)
    stdout, stderr = process.communicate(timeout=120)
    changed = sorted(name for name in names if (tmp_path / name).read_text() != SLOW_BAD)
    return process.returncode, stdout, stderr, changed, names


@pytest.mark.slow
@pytest.mark.parametrize("options", [["--jobs", "1"], ["--jobs", "1", "--file-timeout", "0"], ["--jobs", "2"]],
                         ids=["serial", "in_process", "pool"])
def test_ctrl_c_during_fix_names_the_files_written_and_exits_130(tmp_path, options):
    code, stdout, stderr, changed, names = _interrupt_fix(tmp_path, *options)
    assert code == 130, stderr[-2000:]
    assert "Traceback" not in stderr and stdout == "", (stdout, stderr)
    lines = stderr.splitlines()
    assert lines[-1] == "mplint: interrupted"
    assert lines[:-1] == [f"mplint: fixed {name} before the interruption" for name in changed]
    assert 1 <= len(changed) < len(names)
    assert all((tmp_path / name).read_text() in (SLOW_BAD, SLOW_BAD.replace(BAD, GOOD)) for name in names)
    assert sorted(os.listdir(tmp_path)) == names  # no temporary file, no core file


@pytest.mark.slow
def test_ctrl_c_during_check_is_one_line(tmp_path):
    write_files(tmp_path, {f"m{i:02}.py": SLOW_BAD for i in range(16)})
    process = subprocess.Popen([sys.executable, "-m", "mplint", "check", "--no-cache", "--jobs", "1", "."],
                               cwd=tmp_path, preexec_fn=as_at_a_terminal, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(3)
    process.send_signal(signal.SIGINT)
    stdout, stderr = process.communicate(timeout=120)
    assert process.returncode == 130 and stdout == "" and stderr == "mplint: interrupted\n", stderr[-2000:]


#: runs mplint's console entry point, sending itself a real SIGINT the moment the
#: command-line module starts loading (a loaded machine can take seconds to get there)
_INTERRUPTED_WHILE_LOADING = """
import importlib.abc, os, signal, sys

class InterruptWhenTheCliLoads(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name == "mplint.cli":
            os.kill(os.getpid(), signal.SIGINT)
        return None

sys.meta_path.insert(0, InterruptWhenTheCliLoads())
from mplint.launch import main
sys.exit(main())
"""


def test_ctrl_c_while_mplint_is_still_loading_is_the_same_one_line(tmp_path):
    write_files(tmp_path, {"m.py": BAD})
    done = subprocess.run([sys.executable, "-c", _INTERRUPTED_WHILE_LOADING, "check", "--no-cache", "."],
                          cwd=tmp_path, preexec_fn=as_at_a_terminal, capture_output=True, text=True, timeout=120)
    assert (done.returncode, done.stdout, done.stderr) == (130, "", "mplint: interrupted\n")


def _held_after_writing():
    """A fix whose worker, once its file is written, is held past the interrupt's grace
    (as a loaded machine may hold it), so the parent kills it before it answers."""
    from mplint.api import make_linter
    from mplint.run.runner import FixTask

    class HeldAfterWriting(FixTask):
        def run(self, path, raw):
            outcome = super().run(path, raw)
            time.sleep(60)
            return outcome

    return HeldAfterWriting(make_linter, unsafe=False, write=True)


@pytest.fixture
def sigint_as_at_a_terminal():
    """KeyboardInterrupt on SIGINT in this process, even when the suite was started in
    the background (which hands it SIGINT ignored)."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


@pytest.mark.slow
def test_a_file_written_by_a_worker_killed_before_it_answered_is_still_named(tmp_path, monkeypatch,
                                                                             sigint_as_at_a_terminal):
    import threading

    from mplint.core.results import FixOutcome
    from mplint.run import pool
    from mplint.run.runner import RunInterrupted, run_files

    monkeypatch.setattr(pool, "GRACE", 0.2)
    files = [str(tmp_path / f"m{i:02}.py") for i in range(12)]  # enough for a pool of two
    for path in files:
        Path(path).write_text(BAD)

    def interrupt_once_one_is_written() -> None:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and all(Path(p).read_text() == BAD for p in files):
            time.sleep(0.02)
        os.kill(os.getpid(), signal.SIGINT)

    threading.Thread(target=interrupt_once_one_is_written, daemon=True).start()
    with pytest.raises(RunInterrupted) as stop:
        run_files(files, _held_after_writing(), None, jobs=2)
    written = sorted(r.path for r in stop.value.results if isinstance(r, FixOutcome) and r.written)
    changed = sorted(p for p in files if Path(p).read_text() != BAD)
    assert changed and written == changed
    assert all(Path(p).read_text() == GOOD for p in changed)
