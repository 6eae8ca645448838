"""What a ruff user expects of the command line (issue 16): ``[*]`` only where the
current flags would fix, ``--select`` replacing the configured selection,
``--extend-select``/``--extend-ignore``, strict config values, suppression
comments, ``--add-noqa``, output files and cache folders, ``--show-settings`` and
``--show-files``, and the Keras generation read from every way a project pins it."""

from __future__ import annotations

import json

import pytest

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
    assert statistics.stdout.splitlines()[0] == "1\tMP101\t[ ] float16-final-softmax"
    statistics = run_cli("check", "--statistics", "--unsafe-fixes", ".", cwd=tmp_path)
    assert statistics.stdout.splitlines()[0] == "1\tMP101\t[*] float16-final-softmax"


# -- 2. --select replaces the configured selection; --extend-select, --extend-ignore -----------
#: MP101 (line 4) and MP301 (line 5, units 100) in one file
TWO_RULES = BAD + "hidden = tf.keras.layers.Dense(100)\n"
BOTH = [("m.py", 4, "MP101"), ("m.py", 5, "MP301")]


def _configured(tmp_path, table: str):
    write_files(tmp_path, {"m.py": TWO_RULES, "pyproject.toml": "[tool.mplint]\n" + table})
    return tmp_path


def test_select_on_the_command_line_replaces_the_configured_selection(tmp_path):
    _configured(tmp_path, 'select = ["MP1"]\nignore = ["MP301"]\n')
    assert outcome(run_cli("check", ".", cwd=tmp_path)) == (1, BOTH[:1])
    # the table's ignore belongs to its own selection, which --select replaces (as in ruff)
    assert outcome(run_cli("check", "--select", "MP3", ".", cwd=tmp_path)) == (1, BOTH[1:])
    assert outcome(run_cli("check", "--select", "MP3", "--ignore", "MP301", ".", cwd=tmp_path)) == (0, [])


def test_extend_select_and_extend_ignore_on_the_command_line(tmp_path):
    _configured(tmp_path, 'select = ["MP1"]\n')
    assert outcome(run_cli("check", "--extend-select", "MP301", ".", cwd=tmp_path)) == (1, BOTH)
    assert outcome(run_cli("check", "--extend-select", "MP3", "--extend-ignore", "MP101", ".",
                           cwd=tmp_path)) == (1, BOTH[1:])
    bad = run_cli("check", "--extend-select", "MP77", ".", cwd=tmp_path)
    assert bad.returncode == 2 and "--extend-select: unknown rule or prefix 'MP77'" in bad.stderr


def test_extend_select_and_extend_ignore_in_config(tmp_path):
    _configured(tmp_path, 'select = ["MP1"]\nextend-select = ["MP301"]\n')
    assert outcome(run_cli("check", ".", cwd=tmp_path)) == (1, BOTH)
    _configured(tmp_path, 'extend-ignore = ["MP101"]\n')
    assert outcome(run_cli("check", ".", cwd=tmp_path)) == (1, BOTH[1:])
    # the more specific code wins within the table, as for select and ignore
    _configured(tmp_path, 'extend-ignore = ["MP3"]\nextend-select = ["MP301"]\n')
    assert outcome(run_cli("check", ".", cwd=tmp_path)) == (1, BOTH)


# -- 3. config values are validated; a misspelt key gets a suggestion ---------------------------
def _config_error(tmp_path, table: str, *args: str) -> str:
    write_files(tmp_path, {"m.py": TWO_RULES, "pyproject.toml": "[tool.mplint]\n" + table})
    result = run_cli("check", *args, ".", cwd=tmp_path)
    assert result.returncode == 2 and result.stdout == "", result.stdout
    [line] = [line for line in result.stderr.splitlines() if line.startswith("mplint: error:")]
    return line


def test_rule_option_values_are_checked_against_their_declaration(tmp_path):
    assert "'alignment' must be at least 1, got 0" in _config_error(tmp_path, "alignment = 0\n")
    assert "'alignment' must be at least 1, got -8" in _config_error(tmp_path, "alignment = -8\n")
    assert "'vocabulary-threshold' must be at least 1" in _config_error(tmp_path, "vocabulary-threshold = 0\n")
    line = _config_error(tmp_path, 'target-tf-version = "banana"\n')
    assert "'target-tf-version' must be a version such as \"2.8\"" in line and "'banana'" in line
    # good values still work: 2.8 is a version, and alignment 16 still reports units of 100
    write_files(tmp_path, {"pyproject.toml": '[tool.mplint]\ntarget-tf-version = "2.8"\nalignment = 16\n'})
    assert outcome(run_cli("check", ".", cwd=tmp_path)) == (1, BOTH)


def test_a_misspelt_key_names_the_closest_one(tmp_path):
    line = _config_error(tmp_path, "per_file_ignores = {}\n")
    assert line.endswith("unknown key 'per_file_ignores' in [tool.mplint]; did you mean 'per-file-ignores'?")
    assert _config_error(tmp_path, "alignmnet = 8\n").endswith("did you mean 'alignment'?")
    assert _config_error(tmp_path, "colour = 'red'\n").endswith("unknown key 'colour' in [tool.mplint]")


def test_config_without_a_mplint_table_is_an_error_when_named(tmp_path):
    write_files(tmp_path, {"m.py": TWO_RULES, "other.toml": "[tool.black]\nline-length = 100\n"})
    result = run_cli("check", "--config", "other.toml", ".", cwd=tmp_path)
    assert result.returncode == 2 and result.stdout == ""
    assert "mplint: error: other.toml: has no [tool.mplint] table" in result.stderr


def test_no_python_files_is_a_warning_not_a_clean_bill(tmp_path):
    write_files(tmp_path, {"docs/readme.md": "# hi\n"})
    result = run_cli("check", "docs", cwd=tmp_path)
    assert (result.returncode, result.stdout) == (0, "")
    assert result.stderr == "mplint: warning: No Python files found under the given paths\n"
    excluded = run_cli("check", "--force-exclude", "build/m.py", cwd=write_files(tmp_path, {"build/m.py": BAD}))
    assert (excluded.returncode, excluded.stdout) == (0, "") and "No Python files found" in excluded.stderr


# -- 4. suppression: bare # noqa, MP900 (unused codes), --add-noqa -------------------------------
def test_a_bare_noqa_suppresses_every_finding_on_its_line(tmp_path):
    line = 'model = tf.keras.Sequential([tf.keras.layers.Dense(10, activation="softmax")])'
    write_files(tmp_path, {"m.py": TWO_RULES.replace(line, line + "  # noqa"),
                           "n.py": TWO_RULES.replace(line, line + "  # NOQA:")})
    assert outcome(run_cli("check", ".", cwd=tmp_path)) == (1, [("m.py", 5, "MP301"), ("n.py", 5, "MP301")])


#: MP101's line carries its own code, MP301's a stale one, a misspelt one and another tool's
NOQA = TWO_RULES.replace('"softmax")])', '"softmax")])  # noqa: MP101, MP101').replace(
    "Dense(100)", "Dense(100)  # noqa: MP301").replace(
    "import tensorflow as tf", "import tensorflow as tf  # noqa: E402, MP1O1, MP303")


def test_unused_noqa_is_opt_in_and_reports_codes_that_suppress_nothing(tmp_path):
    write_files(tmp_path, {"m.py": NOQA.replace("Dense(100)", "Dense(104)")})
    plain = run_cli("check", ".", cwd=tmp_path)
    assert outcome(plain) == (0, [])  # not in the default selection, nor in ALL
    assert "unknown rule MP1O1 in a suppression comment" in plain.stderr
    assert outcome(run_cli("check", "--select", "ALL", ".", cwd=tmp_path)) == (0, [])
    result = run_cli("check", "--extend-select", "MP900", ".", cwd=tmp_path)
    assert outcome(result) == (1, [("m.py", 1, "MP900"), ("m.py", 4, "MP900"), ("m.py", 5, "MP900")])
    messages = [line.split(" MP900 warning: ", 1)[1] for line in result.stdout.splitlines() if " MP900 " in line]
    assert messages == ["unused `noqa` directive (unused: `MP303`; unknown: `MP1O1`) [*]",
                        "unused `noqa` directive (duplicated: `MP101`) [*]",
                        "unused `noqa` directive (unused: `MP301`) [*]"]
    assert "unknown rule" not in result.stderr  # MP900 reports it instead
    assert result.stdout.startswith("m.py:1:26: MP900 ")  # at the directive


def test_unused_noqa_leaves_codes_of_rules_that_did_not_run(tmp_path):
    write_files(tmp_path, {"m.py": NOQA.replace("Dense(100)", "Dense(104)")})
    # MP3 is not selected: its codes may well be needed where it runs
    result = run_cli("check", "--select", "MP1,MP900", ".", cwd=tmp_path)
    assert outcome(result) == (1, [("m.py", 1, "MP900"), ("m.py", 4, "MP900")])
    assert "(unknown: `MP1O1`)" in result.stdout


def test_fixing_unused_noqa_keeps_other_codes_and_drops_empty_comments(tmp_path):
    write_files(tmp_path, {"m.py": NOQA.replace("Dense(100)", "Dense(104)")})
    result = run_cli("fix", "--extend-select", "MP900", ".", cwd=tmp_path)
    assert outcome(result) == (0, []), result.stdout + result.stderr
    assert (tmp_path / "m.py").read_text() == TWO_RULES.replace("Dense(100)", "Dense(104)").replace(
        '"softmax")])', '"softmax")])  # noqa: MP101').replace(
        "import tensorflow as tf", "import tensorflow as tf  # noqa: E402")
    again = run_cli("fix", "--extend-select", "MP900", ".", cwd=tmp_path)
    assert "All checks passed!" in again.stdout and "Fixed" not in again.stdout


def test_add_noqa_suppresses_every_finding_once_keeping_existing_codes(tmp_path):
    multi = ('import tensorflow as tf\n\ntf.keras.mixed_precision.set_global_policy("mixed_float16")\n'
             'layer = tf.keras.layers.Dense(100, name="""a\nb""")\n'  # a comment here would be in the string
             "wide = tf.keras.layers.Dense(100)  # a comment, kept\n")
    write_files(tmp_path, {"m.py": TWO_RULES.replace("import tensorflow as tf", "import tensorflow as tf  # noqa: E402")
                           .replace("Dense(100)", "Dense(100)  # noqa: E501"),
                           "multi.py": multi, "good.py": GOOD})
    before = outcome(run_cli("check", ".", cwd=tmp_path))
    assert before == (1, [("m.py", 4, "MP101"), ("m.py", 5, "MP301"), ("multi.py", 4, "MP301"),
                          ("multi.py", 6, "MP301")])
    added = run_cli("check", "--add-noqa", ".", cwd=tmp_path)
    assert (added.returncode, added.stdout) == (0, "Added 4 noqa directives in 2 files.\n"), added.stderr
    assert (tmp_path / "m.py").read_text() == TWO_RULES.replace(
        "import tensorflow as tf", "import tensorflow as tf  # noqa: E402").replace(
        '"softmax")])', '"softmax")])  # noqa: MP101').replace("Dense(100)", "Dense(100)  # noqa: E501, MP301")
    assert (tmp_path / "multi.py").read_text() == multi.replace('b""")', 'b""")  # noqa: MP301').replace(
        "# a comment, kept\n", "# a comment, kept  # noqa: MP301\n")
    assert outcome(run_cli("check", ".", cwd=tmp_path)) == (0, [])
    again = run_cli("check", "--add-noqa", ".", cwd=tmp_path)
    assert again.stdout == "Added 0 noqa directives in 0 files.\n"


# -- 5. --output-file, --exit-non-zero-on-fix, the cache folder ----------------------------------
def test_output_file_holds_the_report(tmp_path):
    write_files(tmp_path, {"m.py": TWO_RULES})
    result = run_cli("check", "--output-file", "reports/mplint.json", "--output-format", "json", ".", cwd=tmp_path)
    assert (result.returncode, result.stdout) == (1, "")
    data = json.loads((tmp_path / "reports" / "mplint.json").read_text())
    assert [(d["path"], d["line"], d["rule"]) for d in data] == BOTH
    text = run_cli("check", "-o", "report.txt", ".", cwd=tmp_path)
    assert (text.returncode, text.stdout) == (1, "")
    written = (tmp_path / "report.txt").read_text()
    assert reported(written) == BOTH and "Found 2 problems" in written
    folder = run_cli("check", "-o", ".", ".", cwd=tmp_path)
    assert folder.returncode == 2 and "--output-file .: cannot be written" in folder.stderr


def test_exit_non_zero_on_fix(tmp_path):
    write_files(tmp_path, {"m.py": BAD})
    assert outcome(run_cli("fix", "--exit-non-zero-on-fix", ".", cwd=tmp_path)) == (1, [])
    assert (tmp_path / "m.py").read_text() == GOOD
    assert outcome(run_cli("fix", "--exit-non-zero-on-fix", ".", cwd=tmp_path)) == (0, [])  # nothing left to fix


def _caches(folder):
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("CACHEDIR.TAG"))


def test_cache_folder_setting_variable_and_default(tmp_path):
    project = write_files(tmp_path / "proj", {"m.py": BAD, "pyproject.toml": "[tool.mplint]\ncache-dir = 'var/cache'\n"})
    assert outcome(run_cli("check", ".", cwd=project)) == (1, [("m.py", 4, "MP101")])
    assert _caches(tmp_path) == ["proj/var/cache/CACHEDIR.TAG"]
    elsewhere = tmp_path / "elsewhere"
    run_cli("check", ".", cwd=project, env={"MPLINT_CACHE_DIR": str(elsewhere)})
    assert "elsewhere/CACHEDIR.TAG" in _caches(tmp_path)
    run_cli("check", "--cache-dir", "flag", ".", cwd=project, env={"MPLINT_CACHE_DIR": str(elsewhere)})
    assert "proj/flag/CACHEDIR.TAG" in _caches(tmp_path)  # the option wins over the variable
    # a path outside any project: its own folder, never the current one
    loose = write_files(tmp_path / "loose", {"x.py": BAD})
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    assert outcome(run_cli("check", str(loose / "x.py"), cwd=cwd))[0] == 1
    assert "loose/.mplint_cache/CACHEDIR.TAG" in _caches(tmp_path) and not _caches(cwd)


# -- 6. --show-settings and --show-files ------------------------------------------------------------
def test_show_settings_for_one_file(tmp_path):
    write_files(tmp_path, {"src/m.py": TWO_RULES, "tests/t.py": BAD, "pyproject.toml":
                           "[tool.mplint]\nselect = ['MP1', 'MP3']\nkeras-version = 2\nalignment = 16\n"
                           "per-file-ignores = { 'tests/*' = ['MP101'] }\n"})
    result = run_cli("check", "--show-settings", "tests/t.py", cwd=tmp_path)
    assert (result.returncode, result.stderr) == (0, "")
    lines = result.stdout.splitlines()
    assert lines[0] == 'Resolved settings for: "tests/t.py"'
    assert lines[1] == f'Settings path: "{tmp_path / "pyproject.toml"}"'
    enabled = result.stdout.split("rules.enabled = [\n", 1)[1].split("]", 1)[0]
    assert [line.strip().split()[0] for line in enabled.splitlines()] == \
        ["MP102", "MP301", "MP302", "MP303", "MP304"]  # MP101 is ignored for tests/*
    assert "rules.ignored-here (per-file-ignores) = [\n\tMP101,\n]" in result.stdout
    assert "keras-version = 2" in lines and "alignment = 16" in lines and "keras-version.for-this-file = 2" in lines
    assert f'project-root = "{tmp_path}"' in lines and "excluded = false" in lines
    both = run_cli("check", "--show-settings", "src/m.py", "tests/t.py", cwd=tmp_path)
    assert both.returncode == 2 and "--show-settings needs exactly one file" in both.stderr


def test_show_files_lists_what_would_be_checked(tmp_path):
    write_files(tmp_path, {"a.py": "", "pkg/b.ipynb": "{}", "build/c.py": "", "notes.txt": "", ".gitignore": "gen/\n",
                           "gen/d.py": ""})
    result = run_cli("check", "--show-files", ".", cwd=tmp_path)
    assert (result.returncode, result.stdout.split()) == (0, ["a.py", "pkg/b.ipynb"])


def test_add_noqa_in_a_notebook_edits_only_the_cell(tmp_path):
    cells = [{"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [],
              "source": ["%time x = 1\n", "import tensorflow as tf\n",
                         "tf.keras.mixed_precision.set_global_policy('mixed_float16')\n",
                         "model = tf.keras.Sequential([tf.keras.layers.Dense(10, activation='softmax')])"]}]
    text = json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}, indent=1) + "\n"
    write_files(tmp_path, {"nb.ipynb": text})
    assert run_cli("check", "--add-noqa", ".", cwd=tmp_path).stdout == "Added 1 noqa directive in 1 file.\n"
    assert (tmp_path / "nb.ipynb").read_text() == text.replace("'softmax')])\"", "'softmax')])  # noqa: MP101\"")
    assert outcome(run_cli("check", ".", cwd=tmp_path)) == (0, [])


# -- 10. the Keras generation without TensorFlow installed (pre-commit) ------------------------------
LOOP = """import tensorflow as tf

opt = tf.keras.mixed_precision.LossScaleOptimizer(tf.keras.optimizers.Adam())


def step(model, x, y):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(model(x) - y)
    grads = tape.gradient(loss, model.trainable_variables)
    opt.apply_gradients(zip(grads, model.trainable_variables))
"""


@pytest.mark.parametrize("name, text, version", [
    ("pyproject.toml", '[tool.poetry.dependencies]\npython = "^3.10"\ntensorflow = "^2.16"\n', 3),
    ("pyproject.toml", '[tool.poetry.dependencies]\ntensorflow = { version = "~2.15", extras = ["and-cuda"] }\n', 2),
    ("pyproject.toml", '[tool.poetry.dependencies]\ntensorflow = "^2.15"\n', None),  # 2.15 up to 3: either
    ("pyproject.toml", '[tool.poetry.group.ml.dependencies]\nkeras = ">=3.0"\n', 3),
    ("environment.yml", "name: train\ndependencies:\n  - python=3.10\n  - tensorflow=2.15\n", 2),
    ("environment.yml", "dependencies:\n  - conda-forge::keras>=3\n  - pip:\n    - tensorflow>=2.16\n", 3),
    ("environment.yml", "dependencies:\n  - tensorflow 2.16.*\n", 3),
    ("setup.cfg", "[options]\ninstall_requires =\n    numpy\n    tensorflow>=2.12,<2.16\n", 2),
    ("setup.cfg", "[options]\ninstall_requires = tensorflow~=2.15.1\n", 2),
    ("setup.py", 'setup(\n    install_requires=[\n        "numpy",\n        "tensorflow>=2.16",\n    ],\n)\n', 3),
    ("requirements/base.txt", "tensorflow-cpu==2.16.1\n", 3),
    ("docker/requirements.txt", "keras<3\n", 2),
    ("requirements-dev.txt", "tensorflow>=2.16  # the training image\n", 3),
    ("docs/readme.txt", "tensorflow<2.16\n", None),  # not a requirements file
])
def test_keras_generation_from_every_kind_of_pin(tmp_path, name, text, version):
    from mplint.run.dependency_pins import declared_keras_version

    write_files(tmp_path, {name: text})
    assert declared_keras_version(tmp_path) == version


def test_unknown_generation_is_said_once_with_the_setting_that_fixes_it(tmp_path, no_installed_keras):
    minimize = LOOP.replace("    grads = tape.gradient(loss, model.trainable_variables)\n", "").replace(
        "opt.apply_gradients(zip(grads, model.trainable_variables))",
        "opt.minimize(loss, model.trainable_variables, tape=tape)")  # MP207 on Keras 3 only
    write_files(tmp_path, {"pyproject.toml": "[project]\nname = 'p'\n", "a.py": LOOP, "b.py": LOOP, "c.py": BAD,
                           "d.py": minimize})
    result = run_cli("check", ".", cwd=tmp_path)
    assert outcome(result) == (1, [("a.py", 10, "MP202"), ("b.py", 10, "MP202"), ("c.py", 4, "MP101")])
    notes = [line for line in result.stderr.splitlines() if line.startswith("mplint: note:")]
    assert notes == ["mplint: note: the Keras generation (2 or 3) is unknown, so the loss-scaling rules that "
                     "depend on it (MP202's fix, MP206, MP207) could not fully check the code; set "
                     "`keras-version = 3` (or 2) under [tool.mplint], or pin tensorflow or keras in the "
                     "project's dependencies (3 files: a.py, b.py, d.py)"]
    assert run_cli("check", ".", cwd=tmp_path).stderr == result.stderr  # the cache keeps the note
    # a pin in a requirements file tells it: no note, and MP202 can now offer its fix
    write_files(tmp_path, {"requirements/train.txt": "tensorflow>=2.16\n"})
    pinned = run_cli("check", "--unsafe-fixes", ".", cwd=tmp_path)
    assert "mplint: note:" not in pinned.stderr
    assert ("d.py", 9, "MP207") in reported(pinned.stdout)
    assert [line.endswith("[*]") for line in pinned.stdout.splitlines() if " MP202 " in line] == [True, True]
