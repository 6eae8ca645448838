"""The runtime checker seeds itself: every run builds the model from the same start (real
TensorFlow on the CPU), unless the user's code chose its own seed, and every generator is
put back afterwards."""

import random
import textwrap

import numpy as np
import pytest

tf = pytest.importorskip("tensorflow")

from mplint.cli import main  # noqa: E402
from mplint.runtime import check_model  # noqa: E402
from runtime_support import float32_outside  # noqa: E402,F401

keras = tf.keras


@pytest.fixture(autouse=True)
def no_seed_outside():
    """Every test starts and ends with TensorFlow unseeded (a user's seed must not leak)."""
    tf.random.set_seed(None)
    yield
    tf.random.set_seed(None)


def recording():
    """A factory that keeps the initial weights of each model it builds."""
    starts = []

    def build():
        inputs = keras.Input((16,))
        x = keras.layers.Dense(32, activation="relu")(inputs)
        model = keras.Model(inputs, keras.layers.Dense(4, activation="softmax", dtype="float32")(x))
        starts.append([w.copy() for w in model.get_weights()])
        return model

    return build, starts


def same(a, b):
    return len(a) == len(b) and all(np.array_equal(x, y) for x, y in zip(a, b))


def test_every_run_and_every_policy_builds_the_model_from_the_same_start():
    build, starts = recording()
    check_model(build)  # both 16-bit policies
    check_model(build)
    assert len(starts) >= 4
    assert all(same(starts[0], later) for later in starts[1:])
    check_model(build, seed=7)
    assert not same(starts[0], starts[-1])  # the seed decides the start


def test_the_generators_are_put_back_as_they_were():
    random.seed(123)
    np.random.seed(123)
    python_before, numpy_before = random.getstate(), np.random.get_state()
    check_model(recording()[0], "mixed_float16")
    assert random.getstate() == python_before
    numpy_after = np.random.get_state()
    assert all(np.array_equal(a, b) for a, b in zip(numpy_before, numpy_after))
    assert tf.compat.v1.random.get_seed(None) == (None, None)  # the caller's code stays unseeded


def test_a_seed_the_users_code_set_is_kept():
    build, starts = recording()
    keras.utils.set_random_seed(11)  # as a target module does when it is loaded
    check_model(build, "mixed_float16")
    keras.utils.set_random_seed(11)
    own = recording()[0]()
    assert same(starts[0], own.get_weights())  # the user's start, not the checker's
    check_model(build, "mixed_float16", seed=0)
    assert not same(starts[0], starts[-1])  # not reseeded: the user's generators went on
    assert tf.compat.v1.random.get_seed(None)[0] == 11  # and stay the user's


TARGET = textwrap.dedent("""
    import os
    import numpy as np
    from tensorflow import keras

    def build():
        inputs = keras.Input((16,))
        x = keras.layers.Dense(32, activation="relu")(inputs)
        model = keras.Model(inputs, keras.layers.Dense(4, activation="softmax", dtype="float32")(x))
        with open(os.environ["MPLINT_TEST_STARTS"], "ab") as handle:
            np.save(handle, model.get_weights()[0])
        return model
""")


def test_the_command_line_seed_decides_the_start(tmp_path, monkeypatch, capsys):
    (tmp_path / "zoo.py").write_text(TARGET)
    record = tmp_path / "starts.npy"
    monkeypatch.setenv("MPLINT_TEST_STARTS", str(record))

    def first_start(*seed):
        record.unlink(missing_ok=True)
        assert main(["runtime", f"{tmp_path / 'zoo.py'}:build", "--policy", "mixed_float16", "--quiet",
                     *seed]) == 0, capsys.readouterr()
        with open(record, "rb") as handle:
            return np.load(handle)

    default = first_start()
    assert np.array_equal(default, first_start("--seed", "0"))
    assert np.array_equal(default, first_start())
    assert not np.array_equal(default, first_start("--seed", "5"))
