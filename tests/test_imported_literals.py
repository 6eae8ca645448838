"""A name another module of the project binds to a string or number constant holds
that value where it is read (``set_global_policy(config.POLICY)``): the policy rules
judge the policy it names instead of one "chosen at run time"."""

from __future__ import annotations

import json

import pytest

import helpers

LOOP = """\
import keras
import tensorflow as tf

{imports}

keras.mixed_precision.set_global_policy({policy})

model = keras.Sequential([keras.Input((16,)), keras.layers.Dense(64), keras.layers.Dense(1, dtype="float32")])
optimizer = keras.optimizers.Adam(1e-3)


@tf.function
def step(x, y):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(x) - y))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    return loss
"""


def _check(folder, cache=False):
    args = ["check", "--select", "MP201", "--output-format", "json", *([] if cache else ["--no-cache"]), "."]
    result = helpers.run_cli(*args, cwd=folder)
    assert result.returncode in (0, 1), result.stderr
    return [(f["path"], f["line"], f["message"]) for f in json.loads(result.stdout)]


@pytest.mark.parametrize("imports, policy", [
    ("import config", "config.POLICY"),
    ("from config import POLICY", "POLICY"),
    ("from settings import config", "config.POLICY"),
])
@pytest.mark.parametrize("value, found", [("mixed_bfloat16", False), ("float32", False), ("mixed_float16", True)])
def test_a_policy_named_by_a_config_module_s_constant(tmp_path, imports, policy, value, found):
    config = f'POLICY = "{value}"\nLR = 3e-4\n'
    files = {".git/HEAD": "", "train.py": LOOP.format(imports=imports, policy=policy)}
    files["settings/config.py" if imports.startswith("from settings") else "config.py"] = config
    if imports.startswith("from settings"):
        files["settings/__init__.py"] = ""
    rows = _check(helpers.write_files(tmp_path, files))
    assert bool(rows) == found
    if found:
        assert "chosen at run time" not in rows[0][2]


@pytest.mark.parametrize("config", [
    'import os\nPOLICY = os.environ.get("POLICY", "mixed_float16")\n',  # a run-time value
    'POLICY = "float32"\nif FAST:\n    POLICY = "mixed_float16"\n',  # bound under a condition
    'POLICY = "float32"\nPOLICY = "mixed_float16"\n',  # bound twice
])
def test_a_constant_that_is_not_one_value_stays_a_run_time_choice(tmp_path, config):
    files = {".git/HEAD": "", "config.py": config, "train.py": LOOP.format(imports="import config", policy="config.POLICY")}
    [(_, _, message)] = _check(helpers.write_files(tmp_path, files))
    assert "chosen at run time" in message


def test_the_checked_file_assigning_the_constant_makes_it_a_run_time_choice(tmp_path):
    files = {".git/HEAD": "", "config.py": 'POLICY = "mixed_bfloat16"\n',
             "train.py": LOOP.format(imports="import config, sys\nconfig.POLICY = sys.argv[1]", policy="config.POLICY")}
    [(_, _, message)] = _check(helpers.write_files(tmp_path, files))
    assert "chosen at run time" in message


def test_editing_the_config_module_changes_the_cached_result(tmp_path):
    files = {".git/HEAD": "", "config.py": 'POLICY = "mixed_bfloat16"\n',
             "train.py": LOOP.format(imports="import config", policy="config.POLICY")}
    folder = helpers.write_files(tmp_path, files)
    assert _check(folder, cache=True) == []
    (folder / "config.py").write_text('POLICY = "mixed_float16"\n')
    assert len(_check(folder, cache=True)) == 1


SETUP = "import keras\nfrom pkg import config\n\n\ndef setup():\n    keras.mixed_precision.set_global_policy(config.POLICY)\n"
MAIN = LOOP.replace("{imports}\n\nkeras.mixed_precision.set_global_policy({policy})", "from pkg.env import setup\n\nsetup()")


@pytest.mark.parametrize("value, found", [("mixed_bfloat16", False), ("float32", False), ("mixed_float16", True)])
@pytest.mark.parametrize("named", [[], ["train.py"]])  # the whole project, and the one file (pre-commit)
def test_a_helper_of_another_module_sets_the_policy_a_config_module_names(tmp_path, value, found, named):
    files = {".git/HEAD": "", "pkg/__init__.py": "", "pkg/config.py": f'POLICY = "{value}"\n', "pkg/env.py": SETUP,
             "train.py": MAIN}
    folder = helpers.write_files(tmp_path, files)
    result = helpers.run_cli("check", "--no-cache", "--select", "MP201", "--output-format", "json", *(named or ["."]),
                             cwd=folder)
    rows = json.loads(result.stdout)
    assert bool(rows) == found
    if found:
        assert "pkg/env.py:6" in rows[0]["message"]


def test_the_summary_keeps_only_names_bound_once_to_a_literal():
    from mplint.run.summaries import summarize

    summary = summarize('import os\nPOLICY = "mixed_bfloat16"\nA = "x"\nA = "y"\nif X:\n    B = "z"\n'
                        'C: str = "c"\nD = os.environ["P"]\nfor E in []:\n    pass\nE = "e"\nF = G = "f"\n'
                        'USE_AMP = False\nWIDTH = -64\nH = [1]\n')
    assert summary.constants == {"POLICY": '"mixed_bfloat16"', "C": '"c"', "USE_AMP": "false", "WIDTH": "-64"}
