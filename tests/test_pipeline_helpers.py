"""MP503 follows a mapped function into the helpers of the file it calls: a notebook's
``ds.map(lambda x, y: (normalize(x), y))`` runs ``normalize`` in the input pipeline."""

import json

from helpers import outcome, run_cli

POLICY = "import tensorflow as tf\nfrom tensorflow import keras\n\nkeras.mixed_precision.set_global_policy('mixed_float16')\n"
HELPER = ("def normalize(images):\n"
          "    images = tf.cast(images, tf.float16)\n"
          "    return images / 127.5 - 1.0\n")
MAPPED = ("ds = keras.utils.image_dataset_from_directory('data', image_size=(160, 160), batch_size=64)\n"
          "ds = ds.map(lambda x, y: (normalize(x), y))\n")
NOT_MAPPED = ("xs = [tf.zeros((2, 2))]\n"
              "ys = list(map(lambda x: normalize(x), xs))\n")


def _notebook(*sources):
    cells = [{"cell_type": "code", "metadata": {}, "source": s, "execution_count": None, "outputs": []}
             for s in sources]
    return json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5})


def test_a_helper_a_mapped_lambda_calls_in_a_notebook(tmp_path):
    (tmp_path / "nb.ipynb").write_text(_notebook("!pip install -q tensorflow", POLICY, HELPER + "\n\n" + MAPPED))
    assert outcome(run_cli("check", "--no-cache", ".", cwd=tmp_path)) == (1, [("nb.ipynb:cell 3", 2, "MP503")])


def test_a_helper_only_a_list_map_calls_is_no_pipeline(tmp_path):
    (tmp_path / "nb.ipynb").write_text(_notebook(POLICY, HELPER + "\n\n" + NOT_MAPPED))
    assert outcome(run_cli("check", "--no-cache", ".", cwd=tmp_path)) == (0, [])


def test_a_helper_of_another_module_is_reported_at_its_call(tmp_path):
    (tmp_path / "preprocessing.py").write_text("import tensorflow as tf\n\n\n" + HELPER)
    mapped = MAPPED.replace("normalize(x)", "preprocessing.normalize(x)")
    (tmp_path / "nb.ipynb").write_text(_notebook(POLICY + "import preprocessing\n", mapped))
    assert outcome(run_cli("check", "--no-cache", ".", cwd=tmp_path)) == (1, [("nb.ipynb:cell 2", 2, "MP503")])
    # the same helper casting to float32: silent
    (tmp_path / "preprocessing.py").write_text("import tensorflow as tf\n\n\n" + HELPER.replace("float16", "float32"))
    assert outcome(run_cli("check", "--no-cache", ".", cwd=tmp_path)) == (0, [])
