"""The pytest plugin: a user's test suite asserts a model is safe in one line."""

import sys
from pathlib import Path

import pytest

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent
FIX = ROOT / "fixtures" / "runtime"

pytest_plugins = ["pytester"]


def test_entry_point_names_the_plugin_module():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["entry-points"]["pytest11"] == {"mplint": "mplint.runtime.pytest_plugin"}
    import mplint.runtime.pytest_plugin as plugin

    assert callable(plugin.assert_mixed_precision_safe) and callable(plugin.mplint_runtime_check)


def test_loading_the_plugin_does_not_import_tensorflow():
    import subprocess

    code = ("import sys, mplint.runtime.pytest_plugin; "
            "sys.exit(1 if 'tensorflow' in sys.modules else 0)")
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                          env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    assert proc.returncode == 0, proc.stderr


def test_users_suite_passes_and_fails_with_the_report(pytester, monkeypatch):
    pytest.importorskip("tensorflow")
    # Only the plugin under test, whether or not mplint is installed with its entry point.
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    pytester.makepyfile(test_models=f"""
        from mplint.runtime.target import load_target

        def model(name):
            return load_target({str(FIX / 'mnist_guide.py')!r} + ":" + name).factory

        def test_correct(assert_mixed_precision_safe):
            assert_mixed_precision_safe(model("build_correct_model"), policy="mixed_float16")

        def test_incorrect(assert_mixed_precision_safe):
            assert_mixed_precision_safe(model("build_incorrect_model"), policy="mixed_float16")

        def test_report(mplint_runtime_check):
            report = mplint_runtime_check(model("build_incorrect_model"), "mixed_bfloat16")
            assert [f.rule for f in report.findings] == ["MP101"]
    """)
    result = pytester.runpytest("-p", "mplint.runtime.pytest_plugin")
    result.assert_outcomes(passed=2, failed=1)
    out = result.stdout.str()
    assert "mixed-precision problems found:" in out
    assert "MP101 [error] layer 'predictions' (Dense)" in out


def test_users_suite_reads_tool_mplint_and_takes_select_ignore(pytester, monkeypatch):
    import importlib.util

    if importlib.util.find_spec("tensorflow") is None:
        pytest.skip("TensorFlow is not installed")
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    monkeypatch.setenv("TF_CPP_MIN_LOG_LEVEL", "3")
    pytester.makefile(".toml", pyproject='[tool.mplint]\nignore = ["MP101"]\n')
    pytester.makepyfile(test_models=f"""
        from mplint.runtime.target import load_target

        def model(name):
            return load_target({str(FIX / 'mnist_guide.py')!r} + ":" + name).factory

        def test_ignored_by_the_table(assert_mixed_precision_safe):
            assert_mixed_precision_safe(model("build_incorrect_model"), policy="mixed_float16")

        def test_select_argument(mplint_runtime_check):
            report = mplint_runtime_check(model("build_incorrect_model"), "mixed_float16", select=["MP1"])
            assert report.findings == []  # MP101 still ignored by the table

        def test_ignore_argument(mplint_runtime_check):
            report = mplint_runtime_check(model("build_incorrect_model"), "mixed_float16", ignore=["MP3"])
            assert report.ok
    """)
    # A fresh process: TensorFlow cannot be imported twice into this one.
    result = pytester.runpytest_subprocess("-p", "mplint.runtime.pytest_plugin", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=3)
