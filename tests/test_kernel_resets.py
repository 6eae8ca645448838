"""A notebook restarted from a cell (``exit()`` after ``!pip install``, Colab's
``os.kill(os.getpid(), 9)``) runs its later cells in a fresh interpreter: the policy
and the names of the cells before the reset do not reach them, nor theirs the cells
before."""

from __future__ import annotations

import json

from helpers import fired, outcome, run_cli

POLICY = "import tensorflow as tf\ntf.keras.mixed_precision.set_global_policy('mixed_float16')\n"
MODEL = ("import tensorflow as tf\nm = tf.keras.Sequential([tf.keras.layers.Dense(10, activation='softmax')])\n"
         "m.compile(loss='mse')\nm.fit(x, y)\n")


def _notebook(*cells: str) -> str:
    return json.dumps({"cells": [{"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
                                  "source": cell} for cell in cells],
                       "metadata": {"kernelspec": {"language": "python", "name": "python3"}},
                       "nbformat": 4, "nbformat_minor": 5})


def test_a_policy_set_before_a_restart_does_not_govern_the_cells_after_it(tmp_path):
    (tmp_path / "nb.ipynb").write_text(_notebook(POLICY, "exit()\n", MODEL))
    assert outcome(run_cli("check", "nb.ipynb", cwd=tmp_path)) == (0, [])
    # without the restart, the same cells are one run
    (tmp_path / "nb.ipynb").write_text(_notebook(POLICY, "print('ready')\n", MODEL))
    assert outcome(run_cli("check", "nb.ipynb", cwd=tmp_path)) == (1, [("nb.ipynb:cell 3", 2, "MP101")])


def test_each_run_keeps_its_own_policy():
    # a policy and a model before the reset, a float32 run after it
    assert fired(POLICY + MODEL + "import os\nos.kill(os.getpid(), 9)\n" + MODEL, "MP101") == [(4, "MP101")]
    # the policy set after the restart governs what follows it, not what came before
    assert fired(MODEL + "quit()\n" + POLICY + MODEL, "MP101") == [(9, "MP101")]
    assert fired(MODEL + "get_ipython().kernel.do_shutdown(True)\n" + POLICY + MODEL, "MP101") == [(9, "MP101")]


def test_names_bound_before_a_restart_are_gone_after_it():
    # `act` after the restart is not the string bound before it: nothing is known
    code = ("act = 'softmax'\nexit()\n" + POLICY
            + "m = tf.keras.Sequential([tf.keras.layers.Dense(10, activation=act)])\nm.compile(loss='mse')\n")
    assert fired(code, "MP101") == []
    assert fired(code.replace("exit()", "print()"), "MP101") == [(5, "MP101")]
    # a function defined after the restart sees the names of its own run only
    code = ("import tensorflow as tf\nact = 'softmax'\nexit()\nimport tensorflow as tf\nact = 'relu'\n"
            "tf.keras.mixed_precision.set_global_policy('mixed_float16')\n"
            "def build():\n    return tf.keras.Sequential([tf.keras.layers.Dense(10, activation=act)])\n"
            "m = build()\nm.compile(loss='mse')\nm.fit(x, y)\n")
    assert fired(code, "MP101") == []


def test_sys_exit_and_a_guarded_exit_are_no_restart():
    # sys.exit() raises SystemExit, which a kernel catches; exit() under an `if` may not run
    assert fired(POLICY + "import sys\nsys.exit()\n" + MODEL, "MP101") == [(6, "MP101")]
    assert fired(POLICY + "if done:\n    exit()\n" + MODEL, "MP101") == [(6, "MP101")]
    # a program's own exit function is not the builtin
    assert fired(POLICY + "def exit():\n    pass\nexit()\n" + MODEL, "MP101") == [(7, "MP101")]


def test_a_cell_that_goes_back_to_float32_right_away_leaves_no_mixed_policy(tmp_path):
    back = "# NaNs with float16: back to float32\ntf.keras.mixed_precision.set_global_policy('float32')\n"
    (tmp_path / "nb.ipynb").write_text(_notebook(POLICY, back, MODEL))
    assert outcome(run_cli("check", "nb.ipynb", cwd=tmp_path)) == (0, [])
    # the model built between the two cells ran under mixed_float16
    (tmp_path / "nb.ipynb").write_text(_notebook(POLICY, MODEL, back))
    assert outcome(run_cli("check", "nb.ipynb", cwd=tmp_path))[1] == [("nb.ipynb:cell 2", 2, "MP101")]


def test_only_the_very_next_statement_of_the_same_arm_overwrites_a_policy():
    reset = "tf.keras.mixed_precision.set_global_policy('float32')\n"
    dense = "m = tf.keras.Sequential([tf.keras.layers.Dense(100), tf.keras.layers.Dense(1)])\n"
    assert fired(POLICY + reset + dense, "MP301") == []
    # an `if` arm's float32 does not undo the mixed policy set before it: it may not run
    assert fired(POLICY + "if debug:\n    " + reset + dense, "MP301") == [(5, "MP301")]
    # a call between the two may build under mixed_float16: both stand
    assert fired(POLICY + "warm_up()\n" + reset + dense, "MP301") == [(5, "MP301")]
    # inside a function too
    code = ("import tensorflow as tf\ndef main():\n    tf.keras.mixed_precision.set_global_policy('mixed_float16')\n"
            "    tf.keras.mixed_precision.set_global_policy('float32')\n"
            "    m = tf.keras.Sequential([tf.keras.layers.Dense(100), tf.keras.layers.Dense(1)])\n")
    assert fired(code, "MP301") == []
    assert fired(code.replace("('mixed_float16')\n", "('mixed_float16')\n    warm_up()\n"), "MP301") == [(6, "MP301")]
