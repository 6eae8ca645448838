"""A function that sets the policy for the model it builds itself, and that no code of
the project calls or names, is dead code: its policy governs its own code only, not the
other builders of its module that the project's program does call (a course notebook's
``models.py`` with one mixed-precision experiment nobody runs)."""

from __future__ import annotations

from helpers import outcome, run_cli, write_files

PROJECT = "[project]\nname = 'p'\n"
MODELS = ("import tensorflow as tf\n"
          "from tensorflow import keras\n\n\n"
          "def make_fc_model(x, y):\n"
          "    tf.keras.mixed_precision.set_global_policy('mixed_float16')\n"
          "    model = keras.Sequential([keras.layers.Dense(64), keras.layers.Dense(4, activation='softmax')])\n"
          "    model.compile(loss='sparse_categorical_crossentropy')\n"
          "    model.fit(x, y, batch_size=20)\n"
          "    return model\n\n\n"
          "def make_cnn_model(x, y):\n"
          "    model = keras.Sequential([keras.layers.Conv2D(60, 3), keras.layers.Dense(4, activation='softmax')])\n"
          "    model.compile(loss='sparse_categorical_crossentropy')\n"
          "    model.fit(x, y, batch_size=20)\n"
          "    return model\n")
TRAIN = "import models\n\nmodels.make_cnn_model(None, None)\nCALLS\n"


def _findings(tmp_path, train, models=MODELS):
    write_files(tmp_path, {"pyproject.toml": PROJECT, "models.py": models, "train.py": train})
    code, found = outcome(run_cli("check", "--no-cache", ".", cwd=tmp_path))
    assert code in (0, 1)
    return found


def test_a_setter_nothing_calls_governs_only_its_own_code(tmp_path):
    found = _findings(tmp_path, TRAIN.replace("CALLS", ""))
    assert [f for f in found if f[1] >= 13] == []  # make_cnn_model runs in float32
    assert ("models.py", 7, "MP101") in found  # make_fc_model's own model is still judged


def test_a_setter_the_program_calls_governs_what_runs_after_it(tmp_path):
    found = _findings(tmp_path, TRAIN.replace("models.make_cnn_model(None, None)\nCALLS",
                                              "models.make_fc_model(None, None)\nmodels.make_cnn_model(None, None)"))
    assert ("models.py", 14, "MP101") in found


def test_a_setter_named_anywhere_stays_alive(tmp_path):
    # handed on as a value: a callback, a registry, a string for getattr
    for written in ("app_run(models.make_fc_model)", "BUILDERS = {'fc': models.make_fc_model}",
                    "getattr(models, 'make_fc_model')"):
        found = _findings(tmp_path, TRAIN.replace("CALLS", written))
        assert ("models.py", 14, "MP101") in found, written
    # named in its own module (called by another function there)
    calls_itself = MODELS + "\n\ndef run_all(x, y):\n    return make_fc_model(x, y)\n"
    assert ("models.py", 14, "MP101") in _findings(tmp_path, TRAIN.replace("CALLS", ""), calls_itself)


def test_a_library_keeps_its_public_switch(tmp_path):
    # no program in the project: users call the setter before building the other models
    write_files(tmp_path, {"pyproject.toml": PROJECT, "models.py": MODELS})
    code, found = outcome(run_cli("check", "--no-cache", "--config", "library = true", ".", cwd=tmp_path))
    assert ("models.py", 14, "MP101") in found


def test_a_cached_one_file_run_sees_the_setter_called_since(tmp_path):
    write_files(tmp_path, {"pyproject.toml": PROJECT, "models.py": MODELS, "train.py": TRAIN.replace("CALLS", "")})
    cache = ["--cache-dir", str(tmp_path / ".cache")]
    _, before = outcome(run_cli("check", *cache, "models.py", cwd=tmp_path))
    assert ("models.py", 14, "MP101") not in before
    (tmp_path / "train.py").write_text(TRAIN.replace("CALLS", "models.make_fc_model(None, None)"))
    _, after = outcome(run_cli("check", *cache, "models.py", cwd=tmp_path))
    assert ("models.py", 14, "MP101") in after
