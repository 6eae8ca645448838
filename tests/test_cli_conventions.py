"""What a ruff user expects of the command line (issue 16): ``[*]`` only where the
current flags would fix, ``--select`` replacing the configured selection,
``--extend-select``/``--extend-ignore``, strict config values, suppression
comments, ``--add-noqa``, output files and cache folders, ``--show-settings`` and
``--show-files``, and the Keras generation read from every way a project pins it."""

from __future__ import annotations

import json

from helpers import BAD, GOOD, outcome, reported, run_cli, write_files

#: MP101 with only an unsafe fix (bfloat16, so MP404 stays out of it)
UNSAFE = BAD.replace('activation="softmax"', 'activation="softmax", dtype="bfloat16"')


def _lines(text: str, rule: str):
    return [line for line in text.splitlines() if f" {rule} " in line]


# -- 1. [*] marks what the current flags would fix ------------------------------------------
def test_star_marks_only_fixes_the_flags_apply(tmp_path):
    write_files(tmp_path, {"safe.py": BAD, "unsafe.py": UNSAFE})
    plain = run_cli("check", ".", cwd=tmp_path)
    assert outcome(plain) == (1, [("safe.py", 4, "MP101"), ("unsafe.py", 4, "MP101")])
    safe_line, unsafe_line = _lines(plain.stdout, "MP101")
    assert safe_line.endswith("[*]") and not unsafe_line.endswith("[*]")
    assert "[*] 1 fixable with `mplint fix`." in plain.stdout
    assert "1 more fixable with `mplint fix --unsafe-fixes`." in plain.stdout

    both = run_cli("check", "--unsafe-fixes", ".", cwd=tmp_path)
    assert all(line.endswith("[*]") for line in _lines(both.stdout, "MP101"))
    assert "[*] 2 fixable with `mplint fix --unsafe-fixes`." in both.stdout
    assert "more fixable" not in both.stdout


def test_fix_marks_agree_with_what_fix_would_apply(tmp_path):
    write_files(tmp_path, {"unsafe.py": UNSAFE})
    result = run_cli("fix", "--check", ".", cwd=tmp_path)
    assert outcome(result) == (0, [("unsafe.py", 4, "MP101")])
    assert not _lines(result.stdout, "MP101")[0].endswith("[*]")
    statistics = run_cli("check", "--statistics", ".", cwd=tmp_path)
    assert statistics.stdout.splitlines()[0] == "1\tMP101\t    float16-final-softmax"
    statistics = run_cli("check", "--statistics", "--unsafe-fixes", ".", cwd=tmp_path)
    assert statistics.stdout.splitlines()[0] == "1\tMP101\t[*] float16-final-softmax"
