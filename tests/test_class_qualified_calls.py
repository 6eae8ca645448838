"""Calls through a class rather than an instance: ``Net.build(10)`` from another module
runs that classmethod (a class with one method is not taken for its construction),
``cls._head(x, n)`` in a classmethod and ``Net._head(x, n)`` run the static helper
whose return is the model's output, and a Sequential whose layers are the list a
function of another module returns ends in that list's last layer."""

import helpers

NET = """import tensorflow as tf


class Net:
    @classmethod
    def build(cls, n):
        inputs = tf.keras.Input((32,))
        x = tf.keras.layers.Dense(64)(inputs)
        return tf.keras.Model(inputs, {head})

    @staticmethod
    def _head(x, n):
        return tf.keras.layers.Dense(n, activation="softmax"{dtype})(x)
"""

TRAIN = """import tensorflow as tf
from net import Net

tf.keras.mixed_precision.set_global_policy("mixed_float16")
model = Net.build(10)
model.compile("adam", "sparse_categorical_crossentropy")
"""

LAYERS = """import tensorflow as tf


def classifier_layers(n):
    return [tf.keras.layers.Dense(64, activation="relu"), tf.keras.layers.Dense(n, activation="softmax"{dtype})]
"""

SEQUENTIAL = """import tensorflow as tf
from layers_lib import classifier_layers

tf.keras.mixed_precision.set_global_policy("mixed_float16")
model = tf.keras.Sequential([tf.keras.Input((32,))] + classifier_layers(10))
model.compile("adam", "sparse_categorical_crossentropy")
"""


def test_classmethod_of_an_imported_class_runs_its_static_head(tmp_path):
    files = {"net.py": NET.format(head="cls._head(x, n)", dtype=""), "train.py": TRAIN}
    assert helpers.project_findings(tmp_path, files, "MP101") == [("net.py", 13, "MP101")]


def test_static_head_named_by_its_class(tmp_path):
    files = {"net.py": NET.format(head="Net._head(x, n)", dtype=""), "train.py": TRAIN}
    assert helpers.project_findings(tmp_path, files, "MP101") == [("net.py", 13, "MP101")]


def test_float32_static_head_is_silent(tmp_path):
    files = {"net.py": NET.format(head="cls._head(x, n)", dtype=', dtype="float32"'), "train.py": TRAIN}
    assert helpers.project_findings(tmp_path, files, "MP101") == []


def test_one_method_class_called_by_its_method_is_not_built(tmp_path):
    net = ("import tensorflow as tf\n\n\nclass Net:\n    @classmethod\n    def build(cls, n):\n"
           "        inputs = tf.keras.Input((32,))\n"
           "        return tf.keras.Model(inputs, tf.keras.layers.Dense(n, activation=\"softmax\")(inputs))\n")
    assert helpers.project_findings(tmp_path, {"net.py": net, "train.py": TRAIN}, "MP101") == [("net.py", 8, "MP101")]


def test_sequential_of_a_list_another_module_returns(tmp_path):
    files = {"layers_lib.py": LAYERS.format(dtype=""), "train.py": SEQUENTIAL}
    assert helpers.project_findings(tmp_path, files, "MP101") == [("train.py", 5, "MP101")]


def test_sequential_of_a_list_ending_in_float32_is_silent(tmp_path):
    files = {"layers_lib.py": LAYERS.format(dtype=', dtype="float32"'), "train.py": SEQUENTIAL}
    assert helpers.project_findings(tmp_path, files, "MP101") == []


def test_sequential_of_a_list_grown_after_it_is_made_is_silent(tmp_path):
    grown = ("import tensorflow as tf\n\n\ndef classifier_layers(n, extra=()):\n"
             "    out = [tf.keras.layers.Dense(64), tf.keras.layers.Dense(n, activation=\"softmax\")]\n"
             "    out.extend(extra)\n    return out\n")
    assert helpers.project_findings(tmp_path, {"layers_lib.py": grown, "train.py": SEQUENTIAL}, "MP101") == []


def test_static_helper_called_on_self_binds_no_self():
    code = '''
    import tensorflow as tf

    tf.keras.mixed_precision.set_global_policy("mixed_float16")


    class Builder:
        @staticmethod
        def head(x, n, act):
            return tf.keras.layers.Dense(n, activation=act)(x)

        def build(self):
            inputs = tf.keras.Input((32,))
            return tf.keras.Model(inputs, self.head(inputs, 10, "softmax"))


    Builder().build().fit(None, None)
    '''
    # ``act`` is the third argument, not the second: no ``self`` to skip
    assert helpers.fired(code, "MP101", "MP102") == [(10, "MP101")]
