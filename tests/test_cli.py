"""The command line as a user runs it: exit codes, formats, bad input, fixes on disk."""

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from helpers import BAD, GOOD, ROOT, outcome, run_cli, run_process, write_files

FOUND = [("bad.py", 4, "MP101")]


def _project(tmp_path, files, pyproject=None):
    write_files(tmp_path, files)
    if pyproject is not None:
        (tmp_path / "pyproject.toml").write_text(pyproject, encoding="utf-8")
    return tmp_path


def test_clean_code_exits_0(tmp_path):
    _project(tmp_path, {"good.py": GOOD})
    result = run_cli("check", ".", cwd=tmp_path)
    assert outcome(result) == (0, []), result.stderr
    assert "All checks passed!" in result.stdout


def test_findings_exit_1_with_text_format(tmp_path):
    _project(tmp_path, {"bad.py": BAD})
    result = run_cli("check", ".", cwd=tmp_path)
    assert result.returncode == 1
    first = result.stdout.splitlines()[0]
    assert first.startswith("bad.py:4:30: MP101 ")
    assert first.endswith("[*]")
    assert "Found 1 problem" in result.stdout


def test_exit_zero(tmp_path):
    _project(tmp_path, {"bad.py": BAD})
    assert outcome(run_cli("check", "--exit-zero", ".", cwd=tmp_path)) == (0, FOUND)


def test_version_and_argparse_usage_errors():
    from mplint import __version__

    version = run_cli("--version")
    assert (version.returncode, version.stdout, version.stderr) == (0, f"mplint {__version__}\n", "")
    unknown = run_cli("check", "--no-such-option", ".")
    assert unknown.returncode == 2 and unknown.stdout == ""
    assert unknown.stderr.startswith("usage: mplint ")
    assert unknown.stderr.endswith("mplint: error: unrecognized arguments: --no-such-option\n")
    assert run_cli().returncode == 2  # no command: the help, and a usage error


def test_json_format(tmp_path):
    _project(tmp_path, {"bad.py": BAD})
    result = run_cli("check", "--output-format", "json", "bad.py", cwd=tmp_path)
    data = json.loads(result.stdout)
    assert set(data[0]) == {"path", "line", "col", "end_line", "end_col", "rule", "severity", "message", "fix"}
    assert data[0]["rule"] == "MP101" and data[0]["fix"] == "safe" and data[0]["severity"] == "error"


def test_bad_input_is_one_line_per_file_and_others_still_run(tmp_path):
    _project(tmp_path, {
        "bad.py": BAD,
        "broken.py": "import tensorflow as tf\ndef f(:\n",
        "latin.py": b"import tensorflow\nx = '\xe9'\n",
        "nul.py": b"import keras\x00\n",
    })
    result = run_cli("check", "bad.py", "broken.py", "latin.py", "nul.py", "missing.py", cwd=tmp_path)
    assert result.returncode == 2
    assert "bad.py:4:30: MP101" in result.stdout
    err = result.stderr
    assert "Traceback" not in err
    assert "broken.py:2:" in result.stdout and "SyntaxError" in result.stdout  # a finding, as in ruff
    assert "latin.py: cannot be decoded as utf-8" in err
    assert "nul.py: contains null bytes" in err
    assert "missing.py: no such file or directory" in err
    assert len(err.strip().splitlines()) == 3


def test_config_unknown_key_and_wrong_type_name_the_key(tmp_path):
    _project(tmp_path, {"bad.py": BAD}, "[tool.mplint]\nselekt = ['MP1']\n")
    result = run_cli("check", ".", cwd=tmp_path)
    assert result.returncode == 2 and "unknown key 'selekt'" in result.stderr
    (tmp_path / "pyproject.toml").write_text("[tool.mplint]\nselect = 'MP1'\n")
    result = run_cli("check", ".", cwd=tmp_path)
    assert result.returncode == 2 and "'select' must be a list of strings" in result.stderr
    (tmp_path / "pyproject.toml").write_text("[tool.mplint\n")
    result = run_cli("check", ".", cwd=tmp_path)
    assert result.returncode == 2 and "pyproject.toml" in result.stderr and "Traceback" not in result.stderr


def test_unknown_rule_in_select_is_a_usage_error(tmp_path):
    _project(tmp_path, {"bad.py": BAD})
    result = run_cli("check", "--select", "MP999", ".", cwd=tmp_path)
    assert result.returncode == 2 and "MP999" in result.stderr


def test_select_and_ignore(tmp_path):
    _project(tmp_path, {"bad.py": BAD})
    assert outcome(run_cli("check", "--ignore", "MP1", ".", cwd=tmp_path)) == (0, [])
    assert outcome(run_cli("check", "--select", "MP101", ".", cwd=tmp_path)) == (1, FOUND)
    # the more specific code wins, as in ruff
    assert outcome(run_cli("check", "--select", "MP101", "--ignore", "MP1", ".", cwd=tmp_path)) == (1, FOUND)


def test_config_select_per_file_ignores_and_assume_policy(tmp_path):
    no_policy = BAD.replace('tf.keras.mixed_precision.set_global_policy("mixed_float16")\n', "")
    _project(tmp_path, {"a.py": no_policy, "tests/t.py": BAD},
             "[tool.mplint]\nassume-policy = 'mixed_float16'\n"
             "per-file-ignores = { 'tests/*' = ['MP101'] }\n")
    assert outcome(run_cli("check", ".", cwd=tmp_path)) == (1, [("a.py", 3, "MP101")])


def test_exclude_gitignore_and_force_exclude(tmp_path):
    _project(tmp_path, {"gen/bad.py": BAD, "vendored/bad.py": BAD, ".gitignore": "vendored/\n"},
             "[tool.mplint]\nextend-exclude = ['gen/']\n")
    assert outcome(run_cli("check", ".", cwd=tmp_path)) == (0, [])
    # an explicitly named file is checked, unless --force-exclude (pre-commit)
    assert outcome(run_cli("check", "gen/bad.py", cwd=tmp_path)) == (1, [("gen/bad.py", 4, "MP101")])
    assert outcome(run_cli("check", "gen/", cwd=tmp_path)) == (1, [("gen/bad.py", 4, "MP101")])
    assert outcome(run_cli("check", "--force-exclude", "gen/", cwd=tmp_path)) == (0, [])
    assert outcome(run_cli("check", "--force-exclude", "gen/bad.py", cwd=tmp_path)) == (0, [])


def test_noqa_and_unknown_code_warning(tmp_path):
    text = BAD.replace('"softmax")])', '"softmax")])  # noqa: MP101, MP999')
    _project(tmp_path, {"bad.py": text})
    result = run_cli("check", ".", cwd=tmp_path)
    assert outcome(result) == (0, [])
    assert "bad.py: line 4: unknown rule MP999" in result.stderr


def test_file_level_noqa(tmp_path):
    _project(tmp_path, {"bad.py": "# mplint: noqa: MP101\n" + BAD})
    assert outcome(run_cli("check", ".", cwd=tmp_path)) == (0, [])


def test_fix_writes_and_second_run_changes_nothing(tmp_path):
    _project(tmp_path, {"bad.py": BAD})
    result = run_cli("fix", ".", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Fixed 1 finding in 1 file; 0 remaining." in result.stdout
    assert (tmp_path / "bad.py").read_text() == GOOD
    again = run_cli("fix", ".", cwd=tmp_path)
    assert again.returncode == 0 and again.stdout == "All checks passed!\n"
    assert (tmp_path / "bad.py").read_text() == GOOD


def test_fix_diff_writes_nothing(tmp_path):
    _project(tmp_path, {"bad.py": BAD})
    result = run_cli("fix", "--diff", "bad.py", cwd=tmp_path)
    assert result.returncode == 1
    assert '+model = tf.keras.Sequential([tf.keras.layers.Dense(10, activation="softmax", dtype="float32")])' in result.stdout
    assert (tmp_path / "bad.py").read_text() == BAD


def test_fix_keeps_crlf_bom_and_declared_encoding(tmp_path):
    crlf = BAD.replace("\n", "\r\n").encode()
    bom = b"\xef\xbb\xbf" + BAD.encode()
    latin = ("# -*- coding: latin-1 -*-\n# caf\xe9\n" + BAD).encode("latin-1")
    _project(tmp_path, {"crlf.py": crlf, "bom.py": bom, "latin.py": latin})
    result = run_cli("fix", ".", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "crlf.py").read_bytes() == GOOD.replace("\n", "\r\n").encode()
    assert (tmp_path / "bom.py").read_bytes() == b"\xef\xbb\xbf" + GOOD.encode()
    assert (tmp_path / "latin.py").read_bytes() == ("# -*- coding: latin-1 -*-\n# caf\xe9\n" + GOOD).encode("latin-1")


def test_unsafe_fix_needs_the_flag(tmp_path):
    # bfloat16, not float16: a float16 layer dtype is also MP404's (pure float16)
    text = BAD.replace('activation="softmax"', 'activation="softmax", dtype="bfloat16"')
    _project(tmp_path, {"bad.py": text})
    result = run_cli("fix", ".", cwd=tmp_path)
    assert result.returncode == 1
    assert "Found 1 problem.\n1 fixable with `mplint fix --unsafe-fixes`." in result.stdout
    assert (tmp_path / "bad.py").read_text() == text
    assert outcome(run_cli("fix", "--unsafe-fixes", ".", cwd=tmp_path)) == (0, [])
    assert (tmp_path / "bad.py").read_text() == GOOD


def test_rule_and_rules_commands():
    result = run_cli("rule", "MP101")
    assert result.returncode == 0
    assert result.stdout.startswith("MP101 (float16-final-softmax)")
    for heading in ("Why", "Fix (safe)", "Example", "Use instead"):
        assert heading in result.stdout
    unknown = run_cli("rule", "MP999")
    assert (unknown.returncode, unknown.stdout) == (2, "")
    assert unknown.stderr == "mplint: error: unknown rule 'MP999'; `mplint rules` lists them\n"
    listing = run_cli("rules")
    assert listing.returncode == 0 and "float16-final-softmax" in listing.stdout


@pytest.mark.slow  # every fixture through every rule, in a process of its own
def test_static_path_does_not_import_tensorflow():
    # --no-cache: answered from the cache, no rule would run at all
    code = (
        "import sys; from mplint.cli import main; "
        f"rc = main(['check', '--exit-zero', '--no-cache', {str(ROOT / 'fixtures')!r}]); "
        "bad = [m for m in ('tensorflow', 'keras', 'tf_keras') if m in sys.modules]; "
        "sys.exit(3 if bad else rc)"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


def test_the_console_script_and_python_m_behave_as_the_in_process_run(tmp_path):
    """The process the other tests stand in for: same exit code, same bytes out."""
    _project(tmp_path, {"bad.py": BAD, "broken.py": "import keras\ndef f(:\n"})
    script = shutil.which("mplint", path=str(Path(sys.executable).parent)) or shutil.which("mplint")
    if script is None:
        pytest.skip("the mplint console script is not installed")
    console = subprocess.run([script, "check", "."], cwd=tmp_path, capture_output=True, timeout=300)
    module = run_process("check", ".", cwd=tmp_path)
    here = run_cli("check", ".", cwd=tmp_path)
    assert (console.returncode, console.stdout, console.stderr) == (module.returncode, module.stdout_bytes,
                                                                     module.stderr_bytes)
    assert (module.returncode, module.stdout_bytes, module.stderr_bytes) == (here.returncode, here.stdout_bytes,
                                                                             here.stderr_bytes)
    assert outcome(here) == (1, FOUND) and "broken.py:2:7: SyntaxError: invalid syntax" in here.stdout


def test_pre_commit_hooks_match_the_console_script():
    hooks = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    pyproject = (ROOT / "pyproject.toml").read_text()
    assert 'mplint = "mplint.launch:main"' in pyproject
    by_id = {h["id"]: h for h in hooks}
    assert set(by_id) >= {"mplint", "mplint-fix"}
    for hook in hooks:
        assert hook["language"] == "python"
        assert hook["entry"].split()[0] == "mplint"
        assert {"python", "pyi"} <= set(hook["types_or"])
        assert hook["require_serial"] is True
    assert by_id["mplint"]["entry"] == "mplint check --force-exclude"
    assert by_id["mplint-fix"]["entry"].startswith("mplint fix")


def test_readme_rule_table_matches_the_catalog():
    from mplint.docs import render

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert render(readme) == readme, "run `python -m mplint.docs` to regenerate the table"

