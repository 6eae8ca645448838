"""A policy set inside one test: which code of the test file it governs, and when a
model built under it is the test's subject rather than a training program's output."""

import json
import os
from pathlib import Path

from mplint import cli

HELPERS = '''import keras


def _plain_model():
    inp = keras.Input(shape=(8,))
    out = keras.layers.Dense(3)(inp)
    return keras.Model(inp, out)


def _mixed_model():
    inp = keras.Input(shape=(8,))
    out = keras.layers.Dense(3)(inp)
    return keras.Model(inp, out)


def test_plain():
    model = _plain_model()
    model.fit(x, y)


def test_mixed():
    keras.mixed_precision.set_global_policy("mixed_float16")
    try:
        model = _mixed_model()
        model.fit(x, y)
    finally:
        keras.mixed_precision.set_global_policy("float32")
'''


def _mp102_lines(root: Path, files, capsys):
    """(file name, line) of each MP102 of ``mplint check .`` in a project of ``files``."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "setup.py").write_text("")
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    here = os.getcwd()
    os.chdir(root)
    try:
        capsys.readouterr()
        cli.main(["check", "--no-cache", "--output-format", "json", "."])
        found = json.loads(capsys.readouterr().out)
    finally:
        os.chdir(here)
    return sorted((Path(f["path"]).name, f["line"]) for f in found if f["rule"] == "MP102")


def test_a_policy_set_in_one_test_governs_the_helpers_that_test_calls_only(tmp_path, capsys):
    """``_plain_model`` serves a test under the default float32 policy: the program model
    does not reach it from the test that sets mixed_float16, so it is float32."""
    assert _mp102_lines(tmp_path, {"tests/test_models.py": HELPERS}, capsys) == [("test_models.py", 12)]


def test_a_model_built_for_a_test_that_trains_nothing_is_its_subject(tmp_path, capsys):
    """Built on purpose under mixed_float16 for a test that checks the code under test
    survives 16 bits (no fit, no gradient): its 16-bit output is what the test exercises."""
    subject = HELPERS.replace("        model.fit(x, y)\n    finally", "        assert penalty(model).dtype == 'float32'\n    finally")
    assert _mp102_lines(tmp_path, {"tests/test_models.py": subject}, capsys) == []
    # the same file outside tests/: a program's helper, judged as any builder
    assert _mp102_lines(tmp_path / "other", {"models_check.py": subject}, capsys) != []


def test_a_helper_whose_test_runs_a_training_loop_is_judged(tmp_path, capsys):
    """A test that hands the model to a library's loop (``self.run_training()``,
    ``run_customized_training_loop(...)``) trains it, though no ``fit`` is written."""
    looped = HELPERS.replace("        model.fit(x, y)\n    finally", "        run_customized_training_loop(model)\n    finally")
    assert _mp102_lines(tmp_path, {"tests/test_models.py": looped}, capsys) == [("test_models.py", 12)]


CONTEXT_HELPER = '''import contextlib
import keras


@contextlib.contextmanager
def global_dtype_policy(name):
    previous = keras.mixed_precision.global_policy().name
    keras.mixed_precision.set_global_policy(name)
    try:
        yield name
    finally:
        keras.mixed_precision.set_global_policy(previous)


def test_float64_oracle():
    with global_dtype_policy("float64"):
        inp = keras.Input(shape=(8,))
        model = keras.Model(inp, keras.layers.Dense(3)(inp))
        model.fit(x, y)


def test_training():
    inp = keras.Input(shape=(8,))
    model = keras.Model(inp, keras.layers.Dense(3)(inp))
    model.fit(x, y)


def test_mixed():
    with global_dtype_policy("mixed_float16"):
        inp = keras.Input(shape=(8,))
        model = keras.Model(inp, keras.layers.Dense(3)(inp))
        model.fit(x, y)
'''


def test_a_helper_that_sets_the_policy_it_is_given_governs_per_call_site(tmp_path, capsys):
    """``with global_dtype_policy("float64")`` in one test, ``"mixed_float16"`` in
    another, nothing in a third: only the second is mixed (the helper's own call sets
    "a policy chosen at run time" to the file's facts, which no longer speaks for all)."""
    assert _mp102_lines(tmp_path, {"tests/test_ctx.py": CONTEXT_HELPER}, capsys) == [("test_ctx.py", 31)]


FIXTURE = '''import keras
import pytest


@pytest.fixture
def mixed_policy():
    previous = keras.mixed_precision.global_policy()
    keras.mixed_precision.set_global_policy("mixed_float16")
    yield
    keras.mixed_precision.set_global_policy(previous)


def _model():
    inp = keras.Input(shape=(8,))
    return keras.Model(inp, keras.layers.Dense(3)(inp))


def test_plain_fit():
    inp = keras.Input(shape=(8,))
    model = keras.Model(inp, keras.layers.Dense(3)(inp))
    model.fit(x, y)


def test_fit_under_mixed(mixed_policy):
    model = _model()
    model.fit(x, y)
'''


def test_a_policy_set_in_a_fixture_governs_only_the_tests_that_request_it(tmp_path, capsys):
    # test_plain_fit runs under float32; the test that requests the fixture fits the
    # helper's model on purpose in 16 bits: the test's subject
    assert _mp102_lines(tmp_path, {"tests/test_layer.py": FIXTURE}, capsys) == []
    # an autouse fixture is every test's: both models are judged as a program's
    autouse = FIXTURE.replace("@pytest.fixture\n", "@pytest.fixture(autouse=True)\n")
    assert _mp102_lines(tmp_path / "a", {"tests/test_layer.py": autouse}, capsys) == [
        ("test_layer.py", 15), ("test_layer.py", 20)]
    # requested through usefixtures: may be governed (and the fixture's, so a subject)
    marked = FIXTURE.replace("def test_plain_fit():", "@pytest.mark.usefixtures('mixed_policy')\ndef test_plain_fit():")
    assert _mp102_lines(tmp_path / "b", {"tests/test_layer.py": marked}, capsys) == []


def test_a_helper_built_for_a_16_bit_test_that_trains_nothing_is_its_subject_though_float32_tests_train_it(
        tmp_path, capsys):
    shared = HELPERS.replace("model = _plain_model()", "model = _mixed_model()").replace(
        "        model.fit(x, y)\n    finally", "        assert penalty(model).dtype == 'float32'\n    finally")
    assert _mp102_lines(tmp_path, {"tests/test_models.py": shared}, capsys) == []
    # the 16-bit test trains it: judged
    trained = HELPERS.replace("model = _plain_model()", "model = _mixed_model()")
    assert _mp102_lines(tmp_path / "t", {"tests/test_models.py": trained}, capsys) == [("test_models.py", 12)]
