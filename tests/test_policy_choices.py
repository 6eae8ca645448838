"""A policy a helper chooses by the truth of its parameter
(``set_global_policy("mixed_float16" if amp else "float32")``, or through a name bound
once to that choice): each call site's argument decides which policy it sets, in the
helper's own module and from another module, like ``if amp: set(...)`` does."""

import json

import pytest

import helpers
from mplint.run.summaries import summarize

HELPER = """import tensorflow as tf


def configure(use_amp):
    {body}
"""

DIRECT = 'tf.keras.mixed_precision.set_global_policy("mixed_float16" if use_amp else "float32")'
NAMED = ('policy = "mixed_float16" if use_amp else "float32"\n'
         '    tf.keras.mixed_precision.set_global_policy(policy)')
NEGATED = 'tf.keras.mixed_precision.set_global_policy("float32" if not use_amp else "mixed_float16")'

LOOP = """
opt = tf.keras.optimizers.Adam(1e-3)
model = tf.keras.Sequential([tf.keras.layers.Dense(64), tf.keras.layers.Dense(1, dtype="float32")])


@tf.function
def step(x, y):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(x) - y))
    grads = tape.gradient(loss, model.trainable_variables)
    opt.apply_gradients(zip(grads, model.trainable_variables))
"""


@pytest.mark.parametrize("body", [DIRECT, NAMED, NEGATED])
@pytest.mark.parametrize("amp, found", [("True", True), ("False", False)])
def test_the_argument_of_the_only_call_decides_the_policy(body, amp, found):
    code = HELPER.format(body=body) + f"\n\nconfigure({amp})\n" + LOOP
    assert bool(helpers.fired(code, "MP201")) is found


def test_the_summary_keeps_each_choice_with_the_truth_it_needs():
    function = summarize(HELPER.format(body=NAMED)).functions["configure"]
    assert sorted(function.sets) == [(6, "float32"), (6, "mixed_float16")]
    assert sorted(function.set_choices) == [(6, "float32", "use_amp", False), (6, "mixed_float16", "use_amp", True)]
    # a choice of anything but two policy strings by a parameter is no choice
    other = summarize(HELPER.format(body='tf.keras.mixed_precision.set_global_policy(use_amp or "float32")'))
    assert other.functions["configure"].set_choices == []


def _cross_file(tmp_path, amp):
    folder = helpers.write_files(tmp_path, {
        "pyproject.toml": "[project]\nname = 'choices'\n",
        "setup_env.py": HELPER.format(body=DIRECT),
        "train.py": ("import tensorflow as tf\n\nfrom setup_env import configure\n\n"
                     f"configure(use_amp={amp})\n"
                     "model = tf.keras.Sequential([tf.keras.layers.Dense(10, activation='softmax')])\n"
                     "model.compile('adam', 'sparse_categorical_crossentropy')\n"
                     "model.fit(None, None)\n"),
    })
    result = helpers.run_cli("check", "--select", "MP101", "--output-format", "json", "--no-cache", ".",
                             cwd=folder)
    assert result.returncode in (0, 1), result.stderr
    return [(f["path"], f["line"], f["message"]) for f in json.loads(result.stdout)]


def test_a_call_in_another_module_binds_the_choice(tmp_path):
    [(path, line, message)] = _cross_file(tmp_path / "on", "True")
    assert (path, line) == ("train.py", 6)
    assert "may be mixed" not in message  # the call decides it: certain
    assert _cross_file(tmp_path / "off", "False") == []
