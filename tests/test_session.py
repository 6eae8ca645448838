"""The run session: every input of a result is owned by it, and every caller
(files, stdin, notebooks) takes the same path through a file."""

import json

import pytest

import mplint.semantic.keras_version as keras_version
from helpers import run_cli

# Keras 2's loss-scaling API, which Keras 3's LossScaleOptimizer does not have (MP207).
KERAS2_LOOP = """\
import tensorflow as tf

tf.keras.mixed_precision.set_global_policy("mixed_float16")
optimizer = tf.keras.mixed_precision.LossScaleOptimizer(tf.keras.optimizers.Adam())

def step(model, x, y):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(model(x) - y)
        scaled = optimizer.get_scaled_loss(loss)
    grads = optimizer.get_unscaled_gradients(tape.gradient(scaled, model.trainable_variables))
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
"""

MODEL = """\
import tensorflow as tf

def build():
    return tf.keras.Sequential([tf.keras.layers.Dense(8), tf.keras.layers.Dense(10, activation="softmax")])
"""

TRAIN = """\
import tensorflow as tf
from proj import model

tf.keras.mixed_precision.set_global_policy("mixed_float16")
net = model.build()
"""


def _run(argv, cwd, stdin=None):
    result = run_cli(*argv, cwd=cwd, input=stdin)
    return result.returncode, result.stdout, result.stderr


def _rules_by_line(out):
    found = []
    for line in out.splitlines():
        parts = line.split(": ", 1)
        if len(parts) == 2 and parts[1][:2] == "MP":
            found.append((parts[0], parts[1].split()[0]))
    return found


def test_the_cache_is_stale_after_the_installed_keras_generation_changes(tmp_path, monkeypatch):
    # A loop that spells neither generation's API: the installed packages decide.
    loop = KERAS2_LOOP.replace("        scaled = optimizer.get_scaled_loss(loss)\n", "").replace(
        "optimizer.get_unscaled_gradients(tape.gradient(scaled, model.trainable_variables))",
        "tape.gradient(loss, model.trainable_variables)")
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "loop.py").write_text(loop)
    monkeypatch.setattr(keras_version, "installed_generation", lambda: 2)
    code, out, _ = _run(["check", "loop.py"], tmp_path)
    assert (code, _rules_by_line(out)) == (1, [("loop.py:10:5", "MP202")])
    assert "Keras 3 divides" not in out
    # `pip install -U tensorflow` moves Keras 2 to 3: the cached answer must not be served.
    monkeypatch.setattr(keras_version, "installed_generation", lambda: 3)
    code, out, _ = _run(["check", "loop.py"], tmp_path)
    assert (code, _rules_by_line(out)) == (1, [("loop.py:10:5", "MP202")])
    assert "Keras 3 divides every gradient" in out
    code_uncached, out_uncached, _ = _run(["check", "--no-cache", "loop.py"], tmp_path)
    assert (code_uncached, out_uncached) == (code, out)


def test_code_spelled_for_keras_2_is_judged_as_keras_2_whatever_is_installed(tmp_path, monkeypatch):
    """The packages installed where mplint runs (a CI runner, pre-commit's environment)
    are not the program's: a loop written with get_scaled_loss is Keras 2 code."""
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "loop.py").write_text(KERAS2_LOOP)
    monkeypatch.setattr(keras_version, "installed_generation", lambda: 3)
    assert _run(["check", "--no-cache", "loop.py"], tmp_path)[0] == 0
    # A pin in the project's dependencies says Keras 3: then it is a bug.
    (tmp_path / "requirements.txt").write_text("tensorflow>=2.16\n")
    code, out, _ = _run(["check", "--no-cache", "loop.py"], tmp_path)
    assert code == 1 and ("loop.py:9:18", "MP207") in _rules_by_line(out)


def test_stdin_named_as_a_notebook_is_checked_as_a_notebook(tmp_path):
    cells = ["import tensorflow as tf\n",
             "tf.keras.mixed_precision.set_global_policy('mixed_float16')\n",
             "m = tf.keras.Sequential([tf.keras.layers.Dense(10, activation='softmax')])\n"]
    book = {"cells": [{"cell_type": "markdown", "source": ["# title"], "metadata": {}},
                      {"cell_type": "code", "source": cells, "metadata": {}, "outputs": [],
                       "execution_count": None}],
            "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    raw = json.dumps(book, indent=1).encode()
    code, out, _ = _run(["check", "-", "--stdin-filename", "nb.ipynb"], tmp_path, stdin=raw)
    assert code == 1
    assert _rules_by_line(out) == [("nb.ipynb:cell 2:3:26", "MP101")]
    code, out, err = _run(["fix", "-", "--stdin-filename", "nb.ipynb"], tmp_path, stdin=raw)
    fixed = json.loads(out)
    assert fixed["cells"][1]["source"][2].endswith("activation='softmax', dtype='float32')])\n")
    assert fixed["cells"][0] == book["cells"][0]
    assert "Fixed 1 finding in 1 file; 0 remaining." in err


def test_stdin_sees_the_policy_another_file_of_its_project_sets(tmp_path):
    (tmp_path / "pyproject.toml").write_text("")
    package = tmp_path / "src" / "proj"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "train.py").write_text(TRAIN)
    (package / "model.py").write_text(MODEL)
    code, out, _ = _run(["check", "-", "--stdin-filename", "src/proj/model.py"], tmp_path,
                        stdin=MODEL.encode())
    assert code == 1
    assert _rules_by_line(out) == [("src/proj/model.py:4:59", "MP101")]
    assert "the mixed policy is set in src/proj/train.py" in out
    # The same file as CI sees it.
    code, out_ci, _ = _run(["check", "--no-cache", "src/proj/model.py"], tmp_path)
    assert _rules_by_line(out_ci) == _rules_by_line(out)


def test_an_unsaved_buffer_is_judged_by_its_own_content(tmp_path):
    """The editor's buffer, not the file on disk, decides what it imports."""
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "model.py").write_text(MODEL)
    (tmp_path / "train.py").write_text(TRAIN.replace("from proj import model", "import model"))
    edited = MODEL.replace('activation="softmax")', 'activation="softmax", dtype="float32")')
    code, out, _ = _run(["check", "-", "--stdin-filename", "model.py"], tmp_path, stdin=edited.encode())
    assert (code, _rules_by_line(out)) == (0, [])


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_fix_takes_the_parallel_cached_path(tmp_path, jobs):
    (tmp_path / "pyproject.toml").write_text("")
    for n in range(10):
        (tmp_path / f"m{n}.py").write_text(TRAIN.replace("from proj import model\n", "") + MODEL)
    code, out, _ = _run(["fix", "--jobs", jobs, "."], tmp_path)
    assert code == 0
    assert "Fixed 10 findings in 10 files; 0 remaining." in out
    assert all('dtype="float32"' in (tmp_path / f"m{n}.py").read_text() for n in range(10))
    # A second run is answered by the cache: nothing to fix, nothing parsed.
    code, out, _ = _run(["fix", "--jobs", jobs, "."], tmp_path)
    assert (code, out.strip()) == (0, "All checks passed!")


@pytest.mark.parametrize("fmt", ["json", "sarif", "github", "junit"])
def test_machine_formats_keep_stdout_parseable_and_summarise_on_stderr(tmp_path, fmt):
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "m.py").write_text(TRAIN.replace("from proj import model\n", "") + MODEL)
    code, out, err = _run(["check", "--no-cache", "--output-format", fmt, "m.py"], tmp_path)
    assert code == 1
    assert "Found 1 problem (MP101: 1)." in err and "Found" not in out
    if fmt in ("json", "sarif"):
        json.loads(out)
