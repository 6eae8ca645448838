"""A library's policy switch (a public function setting the policy from its parameter) is
no program that sets a policy; anything else that sets one is."""

import pytest

from mplint.run.policy_switches import only_in_library_switches

SWITCH = (
    "import tensorflow as tf\n\n"
    "def build(model_fn, mixed_precision=False):\n"
    "    if mixed_precision:\n"
    "        tf.keras.mixed_precision.set_global_policy('mixed_float16')\n"
    "    else:\n"
    "        tf.keras.mixed_precision.set_global_policy('float32')\n"
    "    return model_fn()\n"
)

DTYPE_SWITCH = (
    "import tensorflow as tf\n\n"
    "def set_mixed_precision_policy(dtype, loss_scale=None):\n"
    "    if dtype == tf.float16:\n"
    "        policy = tf.keras.mixed_precision.experimental.Policy('mixed_float16', loss_scale=loss_scale)\n"
    "        tf.keras.mixed_precision.experimental.set_policy(policy)\n"
    "    elif dtype == tf.float32:\n"
    "        tf.keras.mixed_precision.experimental.set_policy('float32')\n"
    "    else:\n"
    "        raise ValueError(dtype)\n"
)
#: ``use_graph_rewrite`` carries the word but switches nothing itself
REWRITE_SWITCH = (
    "\nimport tensorflow as tf\n\n"
    "def configure_optimizer(optimizer, use_graph_rewrite=False):\n"
    "    if use_graph_rewrite:\n"
    "        optimizer = tf.train.experimental.enable_mixed_precision_graph_rewrite(\n"
    "            optimizer)\n"
    "    return optimizer\n"
)


@pytest.mark.parametrize("text, switch", [
    (SWITCH, True),
    # the value is the parameter itself
    ("import keras\n\nclass Trainer:\n    def setup(self, policy):\n"
     "        keras.mixed_precision.set_global_policy(policy)\n", True),
    # a set no parameter decides: the module sets the policy for whoever imports it
    ("import keras\n\ndef build(model_fn):\n    keras.mixed_precision.set_global_policy('mixed_float16')\n"
     "    return model_fn()\n", False),
    # set at the top level, or in a private helper (the module's own program)
    ("import keras\n\nkeras.mixed_precision.set_global_policy('mixed_float16')\n", False),
    ("import keras\n\ndef _setup(mp):\n    if mp:\n        keras.mixed_precision.set_global_policy('mixed_float16')\n",
     False),
    # a script: its guard runs the switch with the values it chooses
    (SWITCH + "\nif __name__ == '__main__':\n    build(f, True)\n", False),
    # names the policy API but sets nothing: not a switch (stays a mention)
    ("import keras\n\ndef show():\n    return keras.mixed_precision.global_policy()\n", False),
    # the policy chosen by comparing a parameter (Transformer-With-TensorFlow2's performance.py)
    (DTYPE_SWITCH, True),
    # the graph rewrite switched on by a parameter, beside the policy switch
    (DTYPE_SWITCH + REWRITE_SWITCH, True),
    (REWRITE_SWITCH, True),
    # the rewrite switched on whatever the caller passes, or at the top level: a program's choice
    (REWRITE_SWITCH.replace("    if use_graph_rewrite:\n    ", ""), False),
    ("import tensorflow as tf\n\nopt = tf.train.experimental.enable_mixed_precision_graph_rewrite(opt)\n", False),
    # the grappler option under a parameter, as a string
    ("import tensorflow as tf\n\ndef configure(amp):\n    if amp:\n"
     "        tf.config.optimizer.set_experimental_options({'auto_mixed_precision': True})\n", True),
    # in a private helper: the module's own program
    (REWRITE_SWITCH.replace("def configure_optimizer", "def _configure_optimizer"), False),
])
def test_library_switch(tmp_path, text, switch):
    (tmp_path / "__init__.py").write_text("")
    (tmp_path / "network.py").write_text(text)
    assert only_in_library_switches(str(tmp_path / "network.py"), text.encode()) is switch


def test_a_switch_outside_a_package_is_a_program(tmp_path):
    (tmp_path / "network.py").write_text(SWITCH)
    assert not only_in_library_switches(str(tmp_path / "network.py"), SWITCH.encode())


def test_summary_records_the_callables_a_call_hands_on():
    from mplint.run.summaries import summarize

    text = ("import functools\n\ndef main():\n"
            "    build(model_fn=LeNet, mixed_precision=True)\n"
            "    build(lambda: UNet(channels=2))\n"
            "    build(model_fn=functools.partial(SegNet, classes=3))\n"
            "    build(model_fn=make_model())\n")  # built before build() runs: not handed
    handed = summarize(text).functions["main"].handed
    assert handed == [(4, "build", "model_fn", "LeNet"), (5, "build", "0", "UNet"),
                      (6, "build", "model_fn", "SegNet")]
