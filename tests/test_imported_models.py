"""MP405 across modules: a model built at the top level of a module imported before the
program sets the policy keeps float32 (the import ran the module's code then)."""

from helpers import run_cli, write_files

MODELS = ("import tensorflow as tf\n\nmodel = tf.keras.Sequential([tf.keras.layers.Dense(64), "
          "tf.keras.layers.Dense(10)])\n")
SET = 'tf.keras.mixed_precision.set_global_policy("mixed_float16")\n'


def _mp405(root):
    result = run_cli("check", "--no-cache", "--select", "MP405", "--output-format", "concise", ".", cwd=root)
    return [line for line in result.stdout.splitlines() if ": MP405 " in line]


def test_a_model_imported_before_the_policy_is_set_keeps_float32(tmp_path):
    write_files(tmp_path, {"models.py": MODELS,
                           "train.py": f"import tensorflow as tf\nfrom models import model\n\n{SET}"
                                       "model.compile(optimizer='adam', loss='mse')\n"})
    found = _mp405(tmp_path)
    assert len(found) == 1 and found[0].startswith("train.py:4:") and "top level of models" in found[0]


def test_imported_after_the_policy_or_only_asked_to_predict_is_silent(tmp_path):
    write_files(tmp_path, {"models.py": MODELS,
                           "train.py": f"import tensorflow as tf\n{SET}from models import model\n\n"
                                       "model.compile(optimizer='adam', loss='mse')\n",
                           "infer.py": f"import tensorflow as tf\nfrom models import model\n{SET}"
                                       "print(model.predict(tf.zeros((1, 4))))\n",
                           "build.py": f"import tensorflow as tf\nfrom models import make_model\n{SET}"
                                       "model = make_model()\nmodel.compile(optimizer='adam', loss='mse')\n"})
    assert _mp405(tmp_path) == []
