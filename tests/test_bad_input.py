"""Bad input never stops a run: each bad file is one clear line on stderr (exit 2)
and every other file is still checked; fixing never damages or overwrites a file
it should not."""

import dataclasses
import os
import shutil
import stat
import subprocess
import time

import pytest

import mplint.core.linter
from helpers import BAD, GOOD, outcome, run_cli
from helpers import syntax_error_line
from helpers import write_files as _write
from mplint import cli
from mplint.rule.catalog import load_catalog
from mplint.rule.check import Analysis, Check, Fix
from mplint.core.source import MAX_PARSE_BYTES, SourceError, write_atomic


def _errors(result):
    lines = result.stderr.strip().splitlines()
    assert "Traceback" not in result.stderr
    return lines


# -- files that cannot be checked ----------------------------------------------------
@pytest.mark.parametrize("source, expected", [
    ("import keras\ndef f(:\n", "syntax error at line 2, column 7: invalid syntax"),
    ("import keras\nprint 'x'\n", "syntax error at line 2, column 1: Missing parentheses in call to 'print'"),
    ("import keras\nif x:\npass\n", "syntax error at line 3, column 1: expected an indented block"),
    ("import keras\nx = '''never closed\n", "syntax error at line 2"),
    (b"import keras\x00\n", "contains null bytes"),
    (b"import keras\nx = '\xff\xfe'\n", "cannot be decoded as utf-8"),
    (b"# -*- coding: klingon -*-\nimport keras\n", "cannot determine encoding"),
    (b"\xef\xbb\xbf# coding: latin-1\nimport keras\n", "cannot determine encoding"),
    (b"# coding: ascii\nimport keras\nx = '\xc3\xa9'\n", "cannot be decoded as ascii"),
    ("import keras\nx = " + "[" * 10000 + "]" * 10000 + "\n", "too deeply nested to parse"),
    ("import keras\nx = " + "lambda: " * 5000 + "1\n", "too deeply nested to parse"),
    ("import keras\nx = " + "-" * 20000 + "1\n", "too deeply nested to parse"),
    # short lines, deep brackets: the cheap depth test still sends it to CPython first
    ("import keras\nx = " + "(\n" * 300 + "1" + ")" * 300 + "\n", "too deeply nested to parse"),
])
def test_each_bad_file_is_one_line_and_the_others_still_run(tmp_path, source, expected):
    _write(tmp_path, {"bad_input.py": source, "model.py": BAD})
    start = time.monotonic()
    result = run_cli("check", ".", cwd=tmp_path)
    assert time.monotonic() - start < 60
    if expected.startswith("syntax error"):  # a finding at its place, as ruff reports it (exit 1)
        assert outcome(result) == (1, [("model.py", 4, "MP101")]) and _errors(result) == []
        [line] = [line for line in result.stdout.splitlines() if line.startswith("bad_input.py:")]
        assert line.startswith(syntax_error_line("bad_input.py", expected)), line
        return
    assert outcome(result) == (2, [("model.py", 4, "MP101")])
    [line] = _errors(result)
    assert line.startswith("mplint: error: bad_input.py: ") and expected in line, line


def test_file_without_tensorflow_is_not_parsed_so_its_errors_do_not_matter(tmp_path):
    # Nothing in it could be a finding; ruff-style prefiltering skips the parse.
    _write(tmp_path, {"other.py": "def f(:\n"})
    result = run_cli("check", ".", cwd=tmp_path)
    assert outcome(result) == (0, []) and result.stderr == ""


def test_directory_named_like_a_source_file(tmp_path):
    _write(tmp_path, {"x.py/inner.py": BAD, "model.py": GOOD})
    named = run_cli("check", "x.py", "model.py", cwd=tmp_path)
    assert outcome(named) == (1, [("x.py/inner.py", 4, "MP101")])
    walked = run_cli("fix", ".", cwd=tmp_path)
    assert outcome(walked) == (0, []) and (tmp_path / "x.py" / "inner.py").read_text() == GOOD


def test_symlink_loops_and_broken_links(tmp_path):
    _write(tmp_path, {"model.py": BAD})
    os.symlink("b.py", tmp_path / "a.py")
    os.symlink("a.py", tmp_path / "b.py")
    os.symlink("missing.py", tmp_path / "dangling.py")
    os.symlink(".", tmp_path / "self")  # a directory loop: never followed
    walked = run_cli("check", ".", cwd=tmp_path)
    assert outcome(walked) == (2, [("model.py", 4, "MP101")])
    assert sorted(_errors(walked)) == ["mplint: error: a.py: is a symbolic link loop",
                                       "mplint: error: b.py: is a symbolic link loop",
                                       "mplint: error: dangling.py: is a broken symbolic link"]
    named = run_cli("check", "a.py", "dangling.py", "model.py", cwd=tmp_path)
    assert outcome(named) == (2, [("model.py", 4, "MP101")])
    assert _errors(named) == ["mplint: error: a.py: is a symbolic link loop",
                              "mplint: error: dangling.py: is a broken symbolic link"]


def test_a_10mb_generated_file_is_reported_quickly(tmp_path):
    # The policy line makes rules apply to it: without it, no rule could report in the
    # file and it would only be syntax-checked, not parsed.
    lines = ["import tensorflow as tf", "tf.keras.mixed_precision.set_global_policy('mixed_float16')", ""]
    size, i = 0, 0
    while size < 10 * 1024 * 1024:
        line = f"layer_{i} = tf.keras.layers.Dense({i % 512 + 1}, activation='relu', name='dense_{i}')"
        lines.append(line)
        size += len(line) + 1
        i += 1
    _write(tmp_path, {"generated.py": "\n".join(lines) + "\n", "model.py": BAD,
                      "data.py": "TABLE = [\n" + "    0,\n" * 1_500_000 + "]\n"})
    start = time.monotonic()
    result = run_cli("fix", ".", cwd=tmp_path)
    elapsed = time.monotonic() - start
    assert elapsed < 30, f"took {elapsed:.1f}s"
    assert result.returncode == 2
    assert (tmp_path / "model.py").read_text() == GOOD
    # data.py is as big, but cannot hold a finding: skipped without parsing, silently
    [line] = _errors(result)
    assert line.startswith("mplint: error: generated.py: is 10.0 MB, over the 2 MB mplint parses")
    assert "extend-exclude" in line
    assert os.path.getsize(tmp_path / "generated.py") > MAX_PARSE_BYTES


# -- configuration and command line --------------------------------------------------------
@pytest.mark.parametrize("table, expected", [
    ("selekt = ['MP1']", "unknown key 'selekt' in [tool.mplint]"),
    ("select = 'MP1'", "'select' must be a list of strings"),
    ("select = ['MP8']", "'select': unknown rule or prefix 'MP8'"),
    ("ignore = [1]", "'ignore' must be a list of strings"),
    ("exclude = 'build'", "'exclude' must be a list of strings"),
    ("assume-policy = 'float16'", "'assume-policy' must be one of mixed_float16"),
    ("keras-version = '3'", "'keras-version' must be 2 or 3"),
    ("keras-version = true", "'keras-version' must be 2 or 3"),
    ("respect-gitignore = 'no'", "'respect-gitignore' must be true or false"),
    ("per-file-ignores = ['tests/*']", "'per-file-ignores' must be a table"),
    ("per-file-ignores = { 'tests/*' = ['MP999'] }", "'per-file-ignores.tests/*': unknown rule or prefix 'MP999'"),
    ("[tool.mplint.nested]", "unknown key 'nested'"),
    ("select = [", "invalid TOML"),
])
def test_invalid_config_names_the_key(tmp_path, table, expected):
    _write(tmp_path, {"model.py": BAD, "pyproject.toml": f"[tool.mplint]\n{table}\n"})
    result = run_cli("check", ".", cwd=tmp_path)
    assert result.returncode == 2 and result.stdout == ""
    [line] = _errors(result)
    assert line.startswith("mplint: error: ") and "pyproject.toml" in line and expected in line, line


@pytest.mark.parametrize("option, value", [("--select", "MP999"), ("--ignore", "MP1,XYZ"), ("--select", "E501")])
def test_unknown_rule_on_the_command_line(tmp_path, option, value):
    _write(tmp_path, {"model.py": BAD})
    result = run_cli("check", option, value, ".", cwd=tmp_path)
    assert result.returncode == 2
    [line] = _errors(result)
    assert line.startswith(f"mplint: error: {option}: unknown rule or prefix")


def test_suppression_naming_an_unknown_rule_is_a_warning(tmp_path):
    clean = GOOD.replace('dtype="float32")])', 'dtype="float32")])  # noqa: MP998')
    noisy = BAD + "# mplint: noqa: MP9999\n"
    _write(tmp_path, {"clean.py": clean, "noisy.py": noisy})
    result = run_cli("check", "clean.py", cwd=tmp_path)
    assert outcome(result) == (0, [])
    assert _errors(result) == ["mplint: warning: clean.py: line 4: unknown rule MP998 in a suppression comment"]
    result = run_cli("check", "noisy.py", cwd=tmp_path)
    assert outcome(result) == (1, [("noisy.py", 4, "MP101")])
    assert _errors(result) == ["mplint: warning: noisy.py: line 5: unknown rule MP9999 in a suppression comment"]


# -- a rule that crashes --------------------------------------------------------------------
class _CrashOnCall(Check):
    """Fails on files whose name contains 'boom' (in a visit)."""

    rule_id = "MP998"

    def visit_Call(self, node):
        if "boom" in self.ctx.path:
            raise ValueError("synthetic failure")


class _CrashInFinish(Check):
    rule_id = "MP997"

    def finish(self):
        if "boom" in self.ctx.path:
            raise KeyError("late failure")


class _BrokenFix(Check):
    """Offers a fix libcst cannot apply: a replacement that is not a node."""

    rule_id = "MP996"

    def visit_Call(self, node):
        if "boom" in self.ctx.path and not self.ctx.reports.get(self.rule_id):
            self.report(node, "broken fix", Fix({node: "not a node"}))


class _BrokenAnalysis(Analysis):
    def visit_Module(self, node):
        if "boom" in self.ctx.path:
            raise IndexError("analysis failure")


class _NeedsBrokenAnalysis(Check):
    """Reports every call, from an analysis that may fail: its findings must go too."""

    rule_id = "MP995"
    requires = (_BrokenAnalysis,)

    def visit_Call(self, node):
        self.report(node, "a call")


CRASHING = (_CrashOnCall, _CrashInFinish, _BrokenFix, _NeedsBrokenAnalysis)


@pytest.fixture
def crashing_rules(monkeypatch):
    """Register real (crashing) checks through the seam the engine reads."""
    catalog = dict(load_catalog())
    base = catalog["MP101"]
    for cls in CRASHING:
        catalog[cls.rule_id] = dataclasses.replace(base, id=cls.rule_id, name=f"crash-{cls.rule_id.lower()}")
    checks = dict(mplint.core.linter.registry())
    checks.update({cls.rule_id: cls for cls in CRASHING})
    monkeypatch.setattr(cli, "load_catalog", lambda: catalog)
    monkeypatch.setattr(mplint.core.linter, "registry", lambda: checks)


def test_a_crashing_rule_is_reported_and_the_rest_still_runs(tmp_path, crashing_rules):
    _write(tmp_path, {"boom.py": BAD, "fine.py": BAD})
    result = run_cli("check", "--select", "MP101,MP997,MP998", "boom.py", "fine.py", cwd=tmp_path)
    assert outcome(result) == (2, [("boom.py", 4, "MP101"), ("fine.py", 4, "MP101")])
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 2
    assert lines[0].startswith("mplint: error: boom.py: internal error in rule MP997: KeyError: 'late failure'.")
    assert lines[1].startswith("mplint: error: boom.py: internal error in rule MP998: ValueError: synthetic failure.")
    assert all("Please report this to mplint's maintainers" in line for line in lines)


def test_a_crashing_analysis_takes_down_only_the_rules_that_read_it(tmp_path, crashing_rules):
    _write(tmp_path, {"boom.py": BAD, "fine.py": BAD})
    result = run_cli("check", "--select", "MP101,MP995", "boom.py", "fine.py", cwd=tmp_path)
    # boom.py keeps MP101 and loses every MP995 finding: no half-informed findings
    assert outcome(result) == (2, [("boom.py", 4, "MP101"), ("fine.py", 3, "MP995"), ("fine.py", 4, "MP995"),
                                   ("fine.py", 4, "MP101")])  # one finding per line and rule
    assert "fine.py:4:9: MP995 error: a call" in result.stdout
    [line] = result.stderr.strip().splitlines()
    assert line.startswith("mplint: error: boom.py: internal error in rule MP995: "
                           "RuntimeError: in analysis _BrokenAnalysis: IndexError: analysis failure.")


def test_a_fix_that_cannot_be_rendered_is_reported_and_other_files_are_fixed(tmp_path, crashing_rules):
    _write(tmp_path, {"boom.py": BAD, "fine.py": BAD})
    result = run_cli("fix", "--select", "MP101,MP996", "boom.py", "fine.py", cwd=tmp_path)
    err = result.stderr
    assert result.returncode == 2
    assert (tmp_path / "boom.py").read_text() == BAD  # nothing half-applied
    assert (tmp_path / "fine.py").read_text() == GOOD
    assert "boom.py: internal error in the fix for MP101, MP996" in err and "Please report" in err


# -- writing safely -----------------------------------------------------------------------------
def test_write_refuses_a_file_changed_since_it_was_read(tmp_path):
    path = tmp_path / "m.py"
    path.write_text("edited by the user\n")
    with pytest.raises(SourceError, match="changed on disk"):
        write_atomic(str(path), b"fixed\n", expected=b"original\n")
    assert path.read_text() == "edited by the user\n"
    assert os.listdir(tmp_path) == ["m.py"]  # no temporary file left behind


def test_fix_does_not_overwrite_a_file_saved_while_it_ran(tmp_path, monkeypatch):
    """An editor saves the file between mplint's read and its write."""
    _write(tmp_path, {"a.py": BAD, "b.py": BAD})
    real = mplint.core.linter.Linter.fix

    def fix_then_user_saves(linter, src, unsafe):
        outcome = real(linter, src, unsafe)
        if src.path.endswith("a.py"):
            (tmp_path / "a.py").write_text(BAD + "# saved by the user\n")
        return outcome

    monkeypatch.setattr(mplint.core.linter.Linter, "fix", fix_then_user_saves)
    result = run_cli("fix", "a.py", "b.py", cwd=tmp_path)
    err = result.stderr
    assert result.returncode == 2
    assert (tmp_path / "a.py").read_text() == BAD + "# saved by the user\n"
    assert (tmp_path / "b.py").read_text() == GOOD
    assert "mplint: error: a.py: changed on disk while mplint was fixing it; not written" in err


def test_read_only_file_is_reported_and_left_alone(tmp_path):
    _write(tmp_path, {"locked.py": BAD, "open.py": BAD})
    locked = tmp_path / "locked.py"
    locked.chmod(0o444)
    try:
        result = run_cli("fix", ".", cwd=tmp_path)
        assert result.returncode == 2
        assert _errors(result) == ["mplint: error: locked.py: is read-only; not written"]
        assert locked.read_text() == BAD and stat.S_IMODE(locked.stat().st_mode) == 0o444
        assert (tmp_path / "open.py").read_text() == GOOD
        # not written, so not fixed: its finding remains, and the totals say so
        assert outcome(result) == (2, [("locked.py", 4, "MP101")])
        assert "Fixed 1 finding in 1 file; 1 remaining." in result.stdout
    finally:
        locked.chmod(0o644)


def _lock_folder(folder):
    """Make a folder refuse new files, as root too when chattr can; else skip."""
    if os.geteuid() != 0:
        folder.chmod(0o555)
        return lambda: folder.chmod(0o755)
    chattr = shutil.which("chattr")
    if chattr and subprocess.run([chattr, "+i", str(folder)], capture_output=True).returncode == 0:
        return lambda: subprocess.run([chattr, "-i", str(folder)], check=True)
    pytest.skip("running as root without chattr: cannot make a folder unwritable")


def test_permission_error_on_write_is_reported_per_file(tmp_path):
    _write(tmp_path, {"locked/m.py": BAD, "open/m.py": BAD})
    unlock = _lock_folder(tmp_path / "locked")
    try:
        result = run_cli("fix", ".", cwd=tmp_path)
        assert result.returncode == 2
        [line] = _errors(result)
        assert line.startswith("mplint: error: locked/m.py: cannot be written: ")
        assert (tmp_path / "locked" / "m.py").read_text() == BAD
    finally:
        unlock()
    assert (tmp_path / "open" / "m.py").read_text() == GOOD
    assert os.listdir(tmp_path / "locked") == ["m.py"]


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads every file")
def test_unreadable_file_is_reported_per_file(tmp_path):
    _write(tmp_path, {"secret.py": BAD, "model.py": BAD})
    (tmp_path / "secret.py").chmod(0)
    try:
        result = run_cli("check", ".", cwd=tmp_path)
    finally:
        (tmp_path / "secret.py").chmod(0o644)
    assert outcome(result) == (2, [("model.py", 4, "MP101")])
    assert _errors(result) == ["mplint: error: secret.py: cannot be read: Permission denied"]


def test_fix_through_a_symlink_keeps_the_link_and_the_mode(tmp_path):
    _write(tmp_path, {"real/m.py": BAD})
    (tmp_path / "real" / "m.py").chmod(0o640)
    os.symlink("real/m.py", tmp_path / "link.py")
    result = run_cli("fix", "link.py", cwd=tmp_path)
    assert outcome(result) == (0, []), result.stderr
    assert os.path.islink(tmp_path / "link.py")
    assert (tmp_path / "real" / "m.py").read_text() == GOOD
    assert stat.S_IMODE((tmp_path / "real" / "m.py").stat().st_mode) == 0o640


def test_write_to_a_vanished_file_is_an_error(tmp_path):
    with pytest.raises(SourceError, match="cannot be written: No such file"):
        write_atomic(str(tmp_path / "gone.py"), b"x\n", expected=b"y\n")


# -- the parser's trees are not validated node by node; everything else is -----------
def test_parsing_skips_node_validation_and_restores_it():
    import libcst as cst

    from mplint.core.source import parse_text

    def subclasses(cls):
        for sub in cls.__subclasses__():
            yield sub
            yield from subclasses(sub)

    # The switch covers every node only while no libcst class has its own __post_init__.
    assert not [c.__name__ for c in subclasses(cst.CSTNode) if "__post_init__" in vars(c)]
    text = "import keras\nx = keras.layers.Dense(10)  # a comment\n"
    assert parse_text(text).code == text
    with pytest.raises(cst.ParserSyntaxError):
        parse_text("def f(:\n")
    # After a parse, and after a failed one, a node built by hand is validated again.
    with pytest.raises(cst.CSTValidationError):
        cst.Name("not a name")
