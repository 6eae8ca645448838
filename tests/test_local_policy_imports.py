"""A policy setter whose module is imported inside its function
(``def set_policy(): from tensorflow.keras import mixed_precision``): the policy it is
given is read with that function's imports, also when read again at the end of the
module (a parameter's values come from calls further down)."""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers import fired, reported, run_cli, write_files

SETTER = ("import tensorflow as tf\n"
          "def setup():\n"
          "    from tensorflow.keras import mixed_precision\n"
          "    policy = mixed_precision.Policy(NAME)\n"
          "    mixed_precision.set_global_policy(policy)\n")

LOOP = ("def train(ds):\n"
        "    model = tf.keras.Sequential([tf.keras.layers.Dense(10)])\n"
        "    opt = tf.keras.optimizers.Adam()\n"
        "    for x, y in ds:\n"
        "        with tf.GradientTape() as tape:\n"
        "            loss = tf.reduce_mean(tf.cast(model(x), tf.float32) - y)\n"
        "        grads = tape.gradient(loss, model.trainable_variables)\n"
        "        opt.apply_gradients(zip(grads, model.trainable_variables))\n")


@pytest.mark.parametrize(("name", "expected"), [
    ("'mixed_bfloat16'", []),  # bfloat16 needs no loss scaling
    ("'mixed_float16'", [(14, "MP201")]),
])
def test_a_policy_built_with_a_function_local_import_is_read(name: str, expected: list) -> None:
    code = SETTER.replace("NAME", name) + "setup()\n" + LOOP
    assert fired(code, "MP201") == expected


def test_the_message_says_mixed_float16_for_certain_not_chosen_at_run_time() -> None:
    from helpers import lint
    code = SETTER.replace("NAME", "'mixed_float16'") + "setup()\n" + LOOP
    (finding,) = lint(code, "MP201")
    assert "chosen at run time" not in finding.message


def test_a_setter_given_a_parameter_with_a_local_import_takes_the_call_sites_value() -> None:
    code = ("import tensorflow as tf\n"
            "def setup(name):\n"
            "    from tensorflow.keras import mixed_precision\n"
            "    mixed_precision.set_global_policy(mixed_precision.Policy(name))\n"
            "setup(NAME)\n" + LOOP)
    assert fired(code.replace("NAME", "'mixed_bfloat16'"), "MP201") == []
    assert fired(code.replace("NAME", "'mixed_float16'"), "MP201") == [(13, "MP201")]
    # a value read at run time: may be mixed, still reported
    assert fired(code.replace("NAME", "args.policy"), "MP201") == [(13, "MP201")]


def test_a_setter_in_another_module_with_a_local_import(tmp_path: Path) -> None:
    """The shape of a trainer that calls ``utils.set_policy`` (a real diffusion project):
    only mixed_bfloat16 is ever set, so its unscaled loop is right."""
    utils = ("def set_policy(policy_name, device_type):\n"
             "    from tensorflow.keras import mixed_precision\n"
             "    if device_type == 'TPU' and policy_name == 'mixed_bfloat16':\n"
             "        policy = mixed_precision.Policy(NAME)\n"
             "        mixed_precision.set_global_policy(policy)\n"
             "    elif policy_name == 'mixed_float16':\n"
             "        raise NotImplementedError('no loss scaling yet')\n")
    trainer = ("import tensorflow as tf\n"
               "from utils import set_policy\n"
               "import sys\n"
               "set_policy(sys.argv[1], sys.argv[2])\n" + LOOP +
               "if __name__ == '__main__':\n"
               "    train(None)\n")
    write_files(tmp_path, {"pyproject.toml": "", "utils.py": utils.replace("NAME", "'mixed_bfloat16'"),
                           "trainer.py": trainer})
    assert reported(run_cli("check", "--no-cache", "--exit-zero", ".", cwd=tmp_path).stdout) == []
    write_files(tmp_path, {"utils.py": utils.replace("NAME", "'mixed_float16'")})
    assert reported(run_cli("check", "--no-cache", "--exit-zero", ".", cwd=tmp_path).stdout) == [
        ("trainer.py", 12, "MP201")]
