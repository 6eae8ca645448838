"""CI and editor formats as their consumers read them: SARIF against the official
2.1.0 schema, GitHub workflow commands, JUnit XML, and the stdin/preview modes."""

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import jsonschema
import pytest

from helpers import BAD, GOOD, ROOT, outcome, reported, run_cli
from helpers import write_files as _write
from mplint.rule.catalog import load_catalog
from mplint.core.findings import FileError, Finding
from mplint.output import FORMATTERS, github

SCHEMA = json.loads((Path(__file__).parent / "data" / "sarif-schema-2.1.0.json").read_text(encoding="utf-8"))

UNSAFE = BAD.replace('activation="softmax"', 'activation="softmax", dtype="bfloat16"')


def _validate_sarif(text):
    log = json.loads(text)
    jsonschema.Draft4Validator(SCHEMA, format_checker=jsonschema.FormatChecker()).validate(log)
    return log


def _stdin(args, data, cwd):
    return run_cli(*args, input=data, cwd=cwd)


# -- SARIF --------------------------------------------------------------------------
def test_schema_is_the_official_one():
    assert SCHEMA["title"].startswith("Static Analysis Results Format (SARIF) Version 2.1.0")
    assert SCHEMA["properties"]["version"]["enum"] == ["2.1.0"]


def test_sarif_validates_and_carries_rules_results_and_regions(tmp_path):
    _write(tmp_path, {"src/bad.py": BAD, "src/good.py": GOOD, "src/broken.py": "import keras\ndef f(:\n"})
    result = run_cli("check", "--output-format", "sarif", "src", cwd=tmp_path)
    assert result.returncode == 1  # the finding, and the broken file's syntax error
    log = _validate_sarif(result.stdout)
    run = log["runs"][0]
    driver = run["tool"]["driver"]
    catalog = load_catalog()
    assert [r["id"] for r in driver["rules"]] == list(catalog)
    for rule in driver["rules"]:
        entry = catalog[rule["id"]]
        assert rule["name"] == entry.name
        assert rule["shortDescription"]["text"] == entry.summary
        assert rule["fullDescription"]["text"] == entry.why.strip()
        assert "helpUri" not in rule and entry.why.strip() in rule["help"]["text"]  # no invented address
    res, syntax = sorted(run["results"], key=lambda r: r["ruleId"])
    assert syntax["ruleId"] == "syntax-error" and syntax["message"]["text"] == "invalid syntax"
    assert syntax["locations"][0]["physicalLocation"]["region"]["startLine"] == 2
    assert res["ruleId"] == "MP101" and res["level"] == "error"
    assert driver["rules"][res["ruleIndex"]]["id"] == "MP101"
    loc = res["locations"][0]["physicalLocation"]
    assert loc["artifactLocation"]["uri"] == "src/bad.py"  # relative to the checkout
    assert loc["region"] == {"startLine": 4, "startColumn": 30, "endLine": 4, "endColumn": 77}
    invocation = run["invocations"][0]
    assert invocation["executionSuccessful"] is True and invocation["toolExecutionNotifications"] == []
    # stdout is only the log; the summary does not leak into it
    assert "Found" not in result.stdout


def test_sarif_clean_run_validates(tmp_path):
    _write(tmp_path, {"good.py": GOOD})
    result = run_cli("check", "--output-format", "sarif", ".", cwd=tmp_path)
    assert result.returncode == 0 and result.stderr == "All checks passed!\n"
    log = _validate_sarif(result.stdout)
    assert log["runs"][0]["results"] == []
    assert log["runs"][0]["invocations"][0]["executionSuccessful"] is True


def test_sarif_odd_and_absolute_paths_validate():
    findings = [Finding(path, 1, 1, 1, 5, "MP101", "error", "m", None)
                for path in ("dir with space/a b.py", "./x.py", "/abs/päth/c.py", "w%rd#1.py")]
    log = _validate_sarif(FORMATTERS["sarif"](findings, [FileError("/abs/z.py", "oops", "warning")]))
    uris = [r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in log["runs"][0]["results"]]
    assert uris == ["dir%20with%20space/a%20b.py", "x.py", "file:///abs/p%C3%A4th/c.py", "w%25rd%231.py"]


# -- GitHub annotations ----------------------------------------------------------------
def test_github_annotations(tmp_path):
    _write(tmp_path, {"bad.py": BAD, "nul.py": b"import keras\x00\n"})
    result = run_cli("check", "--output-format", "github", "bad.py", "nul.py", cwd=tmp_path)
    assert result.returncode == 2
    lines = result.stdout.splitlines()
    assert lines[0].startswith("::error file=bad.py,line=4,col=30,endLine=4,endColumn=77,title=MP101::bad.py:4:30: MP101 ")
    assert lines[1] == "::error file=nul.py,title=mplint::nul.py: contains null bytes (binary file?)"
    assert len(lines) == 2


def test_github_escapes_properties_and_data():
    finding = Finding("a,b:c.py", 2, 3, 2, 9, "MP101", "warning", "50% of it\nbroke", "safe")
    [line] = github([finding]).splitlines()
    assert line == ("::warning file=a%2Cb%3Ac.py,line=2,col=3,endLine=2,endColumn=9,title=MP101"
                    "::a,b:c.py:2:3: MP101 50%25 of it%0Abroke")


# -- JUnit ----------------------------------------------------------------------------
def test_junit_xml(tmp_path):
    _write(tmp_path, {"a.py": BAD, "b.py": BAD, "good.py": GOOD, "broken.py": "import keras\nx = (\n"})
    result = run_cli("check", "--output-format", "junit", ".", cwd=tmp_path)
    assert result.returncode == 1
    root = ET.fromstring(result.stdout)
    assert root.tag == "testsuites"
    assert (root.get("tests"), root.get("failures"), root.get("errors")) == ("3", "3", "0")
    suites = {s.get("name"): s for s in root.findall("testsuite")}
    assert set(suites) == {"a.py", "b.py", "broken.py"}
    case = suites["a.py"].find("testcase")
    assert case.get("name") == "mplint.MP101" and case.get("line") == "4"
    assert case.find("failure").get("type") == "MP101"
    failure = suites["broken.py"].find("testcase/failure")
    assert failure.get("type") == "syntax-error" and "was never closed" in failure.get("message")


def test_junit_clean_run_is_one_passing_case(tmp_path):
    _write(tmp_path, {"good.py": GOOD})
    result = run_cli("check", "--output-format", "junit", ".", cwd=tmp_path)
    assert result.returncode == 0
    root = ET.fromstring(result.stdout)
    assert (root.get("tests"), root.get("failures")) == ("1", "0")
    assert root.find("testsuite/testcase").find("failure") is None


def test_every_format_handles_no_findings_and_special_characters():
    finding = Finding("x<&>.py", 1, 1, 1, 2, "MP101", "error", 'a "quoted" <tag> & more', "unsafe")
    for name, formatter in FORMATTERS.items():
        out = formatter([finding], [FileError("y&.py", "bad <thing>")])
        assert out.endswith("\n"), name
        if name == "junit":
            ET.fromstring(out)
        if name in ("json", "sarif"):
            json.loads(out)


# -- statistics, show-fixes, previews -------------------------------------------------------
def test_statistics(tmp_path):
    _write(tmp_path, {"a.py": BAD, "b.py": BAD, "c.py": UNSAFE})
    result = run_cli("check", "--statistics", ".", cwd=tmp_path)
    assert outcome(result) == (1, [])  # counts, not findings
    # two of the three are fixable by `mplint fix`: some, not all ([~], as ruff marks it)
    assert result.stdout.splitlines()[0] == "3\tMP101\t[~] float16-final-softmax"
    as_json = run_cli("check", "--statistics", "--output-format", "json", ".", cwd=tmp_path)
    assert json.loads(as_json.stdout) == [
        {"code": "MP101", "name": "float16-final-softmax", "count": 3, "fixable_count": 2, "fixable": False}]
    unsafe = run_cli("check", "--statistics", "--unsafe-fixes", ".", cwd=tmp_path)
    assert unsafe.stdout.splitlines()[0] == "3\tMP101\t[*] float16-final-softmax"


def test_show_fixes_for_check_and_fix(tmp_path):
    _write(tmp_path, {"a.py": BAD, "c.py": UNSAFE})
    check = run_cli("check", "--show-fixes", ".", cwd=tmp_path)
    assert "Fixable with `mplint fix`: 1 finding:\n- a.py:\n    1 \u00d7 MP101\n" in check.stdout
    fixed = run_cli("fix", "--show-fixes", ".", cwd=tmp_path)
    assert "Fixed 1 finding:\n- a.py:\n    1 \u00d7 MP101\n" in fixed.stdout
    assert outcome(fixed) == (1, [("c.py", 4, "MP101")])  # c.py's fix is unsafe, so its finding remains
    again = run_cli("fix", "--show-fixes", "--unsafe-fixes", ".", cwd=tmp_path)
    assert "Fixed 1 finding:\n- c.py:\n    1 \u00d7 MP101\n" in again.stdout and outcome(again) == (0, [])


def test_fix_check_exits_1_when_fixes_would_apply_and_writes_nothing(tmp_path):
    _write(tmp_path, {"a.py": BAD, "c.py": UNSAFE})
    result = run_cli("fix", "--check", ".", cwd=tmp_path)
    assert result.returncode == 1 and "Would fix 1 finding in 1 file" in result.stdout
    assert (tmp_path / "a.py").read_text() == BAD
    (tmp_path / "a.py").write_text(GOOD)
    # only an unsafe fix is left: nothing would apply without --unsafe-fixes
    result = run_cli("fix", "--check", ".", cwd=tmp_path)
    assert outcome(result) == (0, [("c.py", 4, "MP101")])
    assert result.stdout.endswith("Found 1 problem.\n1 fixable with `mplint fix --unsafe-fixes`.\n")
    result = run_cli("fix", "--check", "--unsafe-fixes", ".", cwd=tmp_path)
    assert outcome(result) == (1, []) and "Would fix 1 finding in 1 file; 0 remaining." in result.stdout
    assert (tmp_path / "c.py").read_text() == UNSAFE


def test_diff_shows_unsafe_fixes_only_with_the_flag(tmp_path):
    _write(tmp_path, {"a.py": BAD, "c.py": UNSAFE})
    safe = run_cli("fix", "--diff", ".", cwd=tmp_path)
    assert "+++ b/a.py" in safe.stdout and "c.py" not in safe.stdout
    both = run_cli("fix", "--diff", "--unsafe-fixes", ".", cwd=tmp_path)
    assert "+++ b/a.py" in both.stdout and "+++ b/c.py" in both.stdout
    assert '+model = tf.keras.Sequential([tf.keras.layers.Dense(10, activation="softmax", dtype="float32")])' \
        in both.stdout
    assert both.returncode == 1 and "Would fix 2 findings in 2 files" in both.stderr
    assert (tmp_path / "c.py").read_text() == UNSAFE


# -- stdin -------------------------------------------------------------------------------
def test_check_stdin_uses_stdin_filename_for_messages_and_config(tmp_path):
    _write(tmp_path, {"pkg/tests/x.py": ""})
    (tmp_path / "pyproject.toml").write_text("[tool.mplint]\nper-file-ignores = { 'pkg/tests/*' = ['MP101'] }\n")
    result = _stdin(["check", "-", "--stdin-filename", "pkg/model.py"], BAD.encode(), tmp_path)
    assert outcome(result) == (1, [("pkg/model.py", 4, "MP101")])
    assert result.stdout.startswith("pkg/model.py:4:30: MP101 ")
    ignored = _stdin(["check", "-", "--stdin-filename", "pkg/tests/x.py"], BAD.encode(), tmp_path)
    assert outcome(ignored) == (0, []), ignored.stdout


def test_fix_stdin_writes_fixed_code_to_stdout_keeping_bytes(tmp_path):
    crlf = b"\xef\xbb\xbf" + BAD.replace("\n", "\r\n").encode()
    result = _stdin(["fix", "-", "--stdin-filename", "m.py"], crlf, tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout_bytes == b"\xef\xbb\xbf" + GOOD.replace("\n", "\r\n").encode()
    # unchanged code comes back byte for byte, with the remaining finding on stderr
    same = _stdin(["fix", "-"], UNSAFE.encode(), tmp_path)
    assert same.stdout_bytes == UNSAFE.encode() and same.returncode == 1
    assert reported(same.stderr) == [("-", 4, "MP101")]


def test_fix_stdin_with_a_syntax_error_echoes_the_input(tmp_path):
    broken = b"import keras\ndef f(:\n"
    result = _stdin(["fix", "-"], broken, tmp_path)
    assert result.returncode == 1 and result.stdout_bytes == broken
    assert "-:2:7: SyntaxError: invalid syntax" in result.stderr


def test_stdin_diff_and_force_exclude(tmp_path):
    result = _stdin(["fix", "--diff", "-", "--stdin-filename", "m.py"], BAD.encode(), tmp_path)
    assert result.returncode == 1 and "+++ b/m.py" in result.stdout
    (tmp_path / "pyproject.toml").write_text("[tool.mplint]\nextend-exclude = ['gen/']\n")
    excluded = _stdin(["fix", "--force-exclude", "-", "--stdin-filename", "gen/m.py"], BAD.encode(), tmp_path)
    assert excluded.returncode == 0 and excluded.stdout_bytes == BAD.encode()


@pytest.mark.parametrize("args", [["check", "-", "x.py"], ["check", "--stdin-filename", "a.py", "x.py"],
                                  ["check", "--statistics", "--output-format", "sarif", "."]])
def test_stdin_usage_errors(tmp_path, args):
    result = run_cli(*args, cwd=tmp_path)
    assert result.returncode == 2 and result.stderr.startswith("mplint: error: ")
    assert "Traceback" not in result.stderr


def test_the_validator_rejects_a_broken_log():
    finding = Finding("a.py", 1, 1, 1, 2, "MP101", "error", "m", None)
    log = json.loads(FORMATTERS["sarif"]([finding]))
    log["runs"][0]["results"][0]["level"] = "fatal"
    with pytest.raises(jsonschema.ValidationError):
        _validate_sarif(json.dumps(log))
    del log["runs"][0]["results"][0]["message"]
    log["runs"][0]["results"][0]["level"] = "error"
    with pytest.raises(jsonschema.ValidationError):
        _validate_sarif(json.dumps(log))


def test_readme_workflow_example_is_valid_and_uses_real_options():
    import re

    import yaml

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme[readme.index("## GitHub Actions"):]
    blocks = [yaml.safe_load(b) for b in re.findall(r"```yaml\n(.*?)```", section, re.S)]
    # The action: its inputs are the action.yml's, and the SARIF it writes is uploaded.
    action = yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))
    uses = next(s for s in blocks[0]["steps"] if s.get("uses", "").startswith("mplint/mplint@"))
    assert set(uses["with"]) <= set(action["inputs"])
    upload = next(s for s in blocks[0]["steps"] if "upload-sarif" in s.get("uses", ""))
    assert upload["with"]["sarif_file"] == action["inputs"]["sarif-file"]["default"]
    workflow = blocks[1]
    steps = workflow["jobs"]["mplint"]["steps"]
    run = next(s["run"] for s in steps if s.get("name") == "mplint")
    upload = next(s for s in steps if "upload-sarif" in s.get("uses", ""))
    assert upload["with"]["sarif_file"] in run
    assert workflow["jobs"]["mplint"]["permissions"]["security-events"] == "write"
    args = run.split(">")[0].split()[1:]
    assert args[:3] == ["check", "--output-format", "sarif"]
    from mplint.cli import build_parser

    parsed = build_parser().parse_args(args)  # exits (fails the test) on an unknown option
    assert parsed.output_format == "sarif" and parsed.paths == ["src/"]
