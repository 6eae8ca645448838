"""``mplint runtime`` as a user runs it: in this process where TensorFlow is shared, and
in two subprocesses: one with the real console entry, one with TensorFlow hidden."""

import json
import os
import shlex
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from mplint.cli import main

ROOT = Path(__file__).resolve().parent.parent
FIX = ROOT / "fixtures" / "runtime"

# A meta-path finder that makes TensorFlow (and Keras) look uninstalled.
HIDE_TF = textwrap.dedent("""
    import sys
    class HideTensorFlow:
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] in ("tensorflow", "keras", "tf_keras"):
                raise ModuleNotFoundError(f"No module named {name!r}", name=name)
            return None
    sys.meta_path.insert(0, HideTensorFlow())
    from mplint.cli import main
    sys.exit(main(sys.argv[1:]))
""")


def _env():
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    return env


def test_without_tensorflow_one_line_says_how_to_install_and_exits_2():
    proc = subprocess.run([sys.executable, "-c", HIDE_TF, "runtime",
                           f"{FIX / 'mnist_guide.py'}:build_correct_model"],
                          capture_output=True, text=True, env=_env(), timeout=120)
    assert proc.returncode == 2, proc.stderr
    assert proc.stdout == ""
    # the command installs TensorFlow with the interpreter that runs mplint (here, this one)
    assert proc.stderr.strip().splitlines() == [
        "mplint: error: the runtime checker needs TensorFlow (mplint's runtime extra): "
        f'{shlex.quote(sys.executable)} -m pip install "tensorflow>=2.12"']


def test_static_commands_still_work_without_tensorflow():
    proc = subprocess.run([sys.executable, "-c", HIDE_TF, "rules"],
                          capture_output=True, text=True, env=_env(), timeout=120)
    assert proc.returncode == 0 and "MP101" in proc.stdout


def test_runtime_help_lists_its_options(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["runtime", "--help"])
    assert exc.value.code == 0
    out = capsys.readouterr().out
    for option in ("--policy", "--input-shape", "--batch-size", "--train-step", "--output-format"):
        assert option in out


tf = pytest.importorskip("tensorflow")  # everything below runs the checker


def test_console_entry_json_end_to_end():
    proc = subprocess.run([sys.executable, "-m", "mplint", "runtime",
                           f"{FIX / 'mnist_guide.py'}:build_incorrect_model", "--output-format", "json"],
                          capture_output=True, text=True, env=_env(), timeout=300)
    assert proc.returncode == 1, proc.stderr
    data = json.loads(proc.stdout)
    assert [(f["rule"], f["layer"]) for f in data["findings"]] == [("MP101", "predictions")]
    assert data["policies"] == ["mixed_float16", "mixed_bfloat16"] and data["policy_source"] == "default"
    assert data["ok"] is False


def test_text_report_and_exit_code_1(capsys):
    rc = main(["runtime", f"{FIX / 'cnn_unaligned.py'}:build_model", "--policy", "mixed_float16",
               "--batch-size", "50"])
    out = capsys.readouterr().out
    assert rc == 1
    assert "MP302 [warning] layer 'conv_b' (Conv2D): filters=30" in out
    assert "Found 4 problems (MP301: 2, MP302: 1, MP303: 1)" in out
    assert "Policy: mixed_float16 (argument): SLOW here" in out


def test_clean_model_exits_0(capsys):
    rc = main(["runtime", f"{FIX / 'mnist_guide.py'}:build_correct_model", "--train-step"])
    out = capsys.readouterr().out
    assert rc == 0, out
    assert "No mixed-precision problems found" in out
    assert "Train step (mixed_float16): own train_step on (x, y)" in out
    assert "Train step (mixed_bfloat16): own train_step on (x, y)" in out


def test_exit_zero(capsys):
    assert main(["runtime", f"{FIX / 'pure_float16.py'}:build_model", "--exit-zero"]) == 0
    assert "MP404" in capsys.readouterr().out


def test_module_target_from_the_current_directory(tmp_path, monkeypatch, capsys):
    pkg = tmp_path / "mymodels"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "zoo.py").write_text(textwrap.dedent("""
        from tensorflow import keras

        def build():
            inputs = keras.Input((16,))
            x = keras.layers.Dense(32, activation="relu")(inputs)
            return keras.Model(inputs, keras.layers.Dense(3, activation="softmax", name="probs")(x))
    """))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))
    rc = main(["runtime", "mymodels.zoo:build", "--output-format", "json"])
    data = json.loads(capsys.readouterr().out)
    assert rc == 1 and [(f["rule"], f["layer"]) for f in data["findings"]] == [("MP101", "probs")]


def test_saved_keras_file(tmp_path, capsys):
    keras = tf.keras
    keras.mixed_precision.set_global_policy("mixed_float16")
    try:
        inputs = keras.Input((16,))
        x = keras.layers.Dense(24, activation="relu")(inputs)
        model = keras.Model(inputs, keras.layers.Dense(3, activation="softmax", name="probs")(x))
    finally:
        keras.mixed_precision.set_global_policy("float32")
    path = tmp_path / "model.keras"
    model.save(path)
    rc = main(["runtime", str(path), "--output-format", "json"])
    data = json.loads(capsys.readouterr().out)
    assert rc == 1
    assert data["policy"] == "mixed_float16" and data["policy_source"] == "model"
    assert [(f["rule"], f["layer"]) for f in data["findings"]] == [("MP101", "probs")]
    assert keras.mixed_precision.global_policy().name == "float32"


@pytest.mark.parametrize("args,message", [
    (["nothing_here"], "expected pkg.module:factory"),
    ([f"{FIX / 'missing.py'}:build"], "no such file"),
    ([f"{FIX / 'mnist_guide.py'}:nope"], "has no attribute 'nope'"),
    ([f"{FIX / 'mnist_guide.py'}:NUM_UNITS"], "is not callable"),
    ([f"{FIX / 'mnist_guide.py'}:_compile"], "TypeError"),
    (["no_such_pkg.models:build"], "module not found"),
    ([f"{FIX / 'missing.keras'}"], "no such file"),
    (["x.py:f", "--batch-size", "0"], "--batch-size must be positive"),
])
def test_errors_are_one_line_and_exit_2(args, message, capsys):
    rc = main(["runtime", *args])
    err = capsys.readouterr().err
    assert rc == 2
    assert len(err.strip().splitlines()) == 1 and message in err, err


def test_input_shape_option(capsys):
    rc = main(["runtime", f"{FIX / 'subclassed.py'}:build_correct_model", "--input-shape", "784",
               "--batch-size", "16", "--output-format", "json"])
    data = json.loads(capsys.readouterr().out)
    assert rc == 0 and data["model"]["inputs"] == [{"shape": [16, 784], "dtype": "float32"}]


def _lines(err):
    """stderr without the progress lines."""
    return [l for l in err.strip().splitlines() if l and not l.startswith("mplint runtime: ")]


def test_select_and_ignore_options(capsys):
    target = f"{FIX / 'cnn_unaligned.py'}:build_model"
    rc = main(["runtime", target, "--policy", "mixed_float16", "--batch-size", "50", "--ignore", "MP301,MP303",
               "--output-format", "json", "--quiet"])
    data = json.loads(capsys.readouterr().out)
    assert rc == 1 and [f["rule"] for f in data["findings"]] == ["MP302"]
    rc = main(["runtime", target, "--policy", "mixed_float16", "--select", "MP303", "--batch-size", "50",
               "--output-format", "json", "--quiet"])
    assert rc == 1 and [f["rule"] for f in json.loads(capsys.readouterr().out)["findings"]] == ["MP303"]


def test_tool_mplint_table_is_read_from_the_targets_project(tmp_path, capsys):
    (tmp_path / "pyproject.toml").write_text(
        '[tool.mplint]\nignore = ["MP302"]\nalignment = 16\nassume-policy = "mixed_float16"\n')
    (tmp_path / "models.py").write_text((FIX / "cnn_unaligned.py").read_text())
    rc = main(["runtime", f"{tmp_path / 'models.py'}:build_aligned_model", "--policy", "mixed_float16",
               "--output-format", "json", "--quiet"])
    data = json.loads(capsys.readouterr().out)
    # alignment 16: conv_a's 32 filters pass, the aligned model's conv_b (32) too; nothing at 8.
    assert rc == 0 and data["findings"] == []
    rc = main(["runtime", f"{tmp_path / 'models.py'}:build_model", "--policy", "mixed_float16",
               "--output-format", "json", "--quiet"])
    data = json.loads(capsys.readouterr().out)
    found = sorted((f["rule"], f["layer"]) for f in data["findings"])
    assert ("MP302", "conv_b") not in found  # ignored by the table
    assert any("not a multiple of 16" in f["message"] for f in data["findings"])
    # --select replaces the table's choice; --ignore adds to it.
    rc = main(["runtime", f"{tmp_path / 'models.py'}:build_model", "--policy", "mixed_float16",
               "--ignore", "MP301", "--output-format", "json", "--quiet"])
    assert json.loads(capsys.readouterr().out)["findings"] == [] and rc == 0


@pytest.mark.parametrize("table,message", [
    ('select = "MP1"', "select must be a list"),
    ("alignment = 0", "alignment must be a positive integer"),
    ('ignore = ["XYZ"]', "'XYZ' is not a rule id or prefix"),
    ("select = [", "not valid TOML"),
])
def test_bad_tool_mplint_values_are_one_line(tmp_path, capsys, table, message):
    (tmp_path / "pyproject.toml").write_text(f"[tool.mplint]\n{table}\n")
    (tmp_path / "models.py").write_text("")
    rc = main(["runtime", f"{tmp_path / 'models.py'}:build", "--quiet"])
    err = _lines(capsys.readouterr().err)
    assert rc == 2 and len(err) == 1 and message in err[0], err


@pytest.mark.parametrize("args,message", [
    (["--time-budget", "0"], "--time-budget must be a positive number of seconds"),
    (["--select", "MP1,bogus"], "'BOGUS' is not a rule id or prefix"),
    (["--alignment", "-8"], "--alignment must be positive"),
])
def test_bad_options_are_one_line(args, message, capsys):
    rc = main(["runtime", f"{FIX / 'mnist_guide.py'}:build_correct_model", *args])
    err = _lines(capsys.readouterr().err)
    assert rc == 2 and len(err) == 1 and err[0].startswith("mplint: error: ") and message in err[0], err


def test_time_budget_skips_the_optional_stages(capsys):
    rc = main(["runtime", f"{FIX / 'mnist_guide.py'}:build_incorrect_model", "--train-step",
               "--time-budget", "0.001", "--output-format", "json", "--quiet"])
    data = json.loads(capsys.readouterr().out)
    assert rc == 1 and [f["rule"] for f in data["findings"]] == ["MP101"]  # the first policy's checks
    assert data["policies"] == ["mixed_float16", "mixed_bfloat16"]
    assert any("the check under mixed_bfloat16 skipped: the time budget of 0.001 s was spent" in n
               for n in data["notes"])
    assert data["train_step"] == [{"policy": "mixed_float16", "skipped": "the time budget was spent"}]


def test_progress_lines_on_stderr_for_a_long_check(capsys, monkeypatch):
    from mplint.runtime import command

    class Immediate(command.StderrProgress):
        """The real progress printer, live from the start (a real check waits 2 s first)."""

        def __init__(self, delay=2.0):
            super().__init__(delay=3600)
            self._go_live()

    monkeypatch.setattr(command, "StderrProgress", Immediate)
    rc = main(["runtime", f"{FIX / 'mnist_guide.py'}:build_correct_model", "--policy", "mixed_bfloat16"])
    err = capsys.readouterr().err.splitlines()
    assert rc == 0
    assert any(l.startswith("mplint runtime: building the model under mixed_bfloat16 (") for l in err), err
    assert any(l.startswith("mplint runtime: running the forward pass under mixed_bfloat16") for l in err)
    assert all(l.startswith("mplint runtime: ") for l in err)


# Simulated at the import seam: a finder that writes a native TensorFlow log line to file
# descriptor 2 (as the CUDA initialisation does on a machine without a GPU) or raises
# KeyboardInterrupt (Ctrl-C) while TensorFlow is imported.
IMPORT_SEAM = textwrap.dedent("""
    import os, sys
    class Seam:
        def find_spec(self, name, path=None, target=None):
            if name == "tensorflow":
                sys.meta_path.remove(self)
                if MODE == "interrupt":
                    raise KeyboardInterrupt
                os.write(2, b"E0000 00:00:1751234567.123456   12345 cuda_executor.cc:1228] "
                            b"INTERNAL: CUDA error: Failed call to cuInit: UNKNOWN ERROR (303)\\n")
                os.write(2, b"a line the user's own code wrote\\n")
            return None
    MODE = sys.argv.pop(1)
    sys.meta_path.insert(0, Seam())
    from mplint.cli import main
    sys.exit(main(sys.argv[1:]))
""")


def test_native_start_up_lines_stay_off_stderr():
    env = _env()
    env.pop("TF_CPP_MIN_LOG_LEVEL", None)
    proc = subprocess.run([sys.executable, "-c", IMPORT_SEAM, "log", "runtime", "--quiet", "--policy",
                           "mixed_bfloat16", f"{FIX / 'mnist_guide.py'}:build_correct_model"],
                          capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "cuInit" not in proc.stderr and "oneDNN" not in proc.stderr
    assert proc.stderr.splitlines() == ["a line the user's own code wrote"]
    assert "No mixed-precision problems found" in proc.stdout


def test_ctrl_c_while_tensorflow_loads_exits_cleanly():
    proc = subprocess.run([sys.executable, "-c", IMPORT_SEAM, "interrupt", "runtime", "--quiet",
                           f"{FIX / 'mnist_guide.py'}:build_correct_model"],
                          capture_output=True, text=True, env=_env(), timeout=300)
    assert proc.returncode == 130
    assert proc.stderr.splitlines() == ["mplint: interrupted"]
