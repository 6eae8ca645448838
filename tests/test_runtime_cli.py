"""``mplint runtime`` as a user runs it: in this process where TensorFlow is shared, and
in two subprocesses: one with the real console entry, one with TensorFlow hidden."""

import json
import os
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
    assert proc.stderr.strip().splitlines() == [
        'mplint: error: the runtime checker needs TensorFlow: pip install "mplint[runtime]"']


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
