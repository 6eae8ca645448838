"""Library mode judges the private code its public surface runs: a public model builder
that returns a private (or name-mangled) builder's model, a public model class whose
``__init__`` calls a private method that makes the head, a private layer class a public
model uses. Private code no public function or class reaches stays the library's own:
silent."""

import json

from helpers import run_cli, write_files

#: a packaged library (no program sets a policy): its users may run it under mixed_float16
SETUP = "from setuptools import setup\nsetup(name='zoo', install_requires=['tensorflow>=2.12,<2.16'])\n"

BUILDERS = """\
import tensorflow as tf


def ResNetTiny(classes=10, include_top=True):
    return _create_resnet(classes, include_top)


def ResNeXtTiny(classes=10):
    return __create_res_next(classes)


def _create_resnet(classes, include_top):
    inputs = tf.keras.Input((32, 32, 3))
    x = tf.keras.layers.Conv2D(16, 3)(inputs)
    x = tf.keras.layers.GlobalAveragePooling2D()(x)
    if include_top:
        x = tf.keras.layers.Dense(classes, activation="softmax")(x)
    return tf.keras.Model(inputs, x)


def __create_res_next(classes):
    inputs = tf.keras.Input((32, 32, 3))
    x = tf.keras.layers.GlobalAveragePooling2D()(inputs)
    outputs = tf.keras.layers.Dense(classes, activation="softmax")(x)
    return tf.keras.Model(inputs, outputs)


def _unused_builder(classes):
    # kept for an experiment; nothing public calls it
    inputs = tf.keras.Input((32, 32, 3))
    x = tf.keras.layers.GlobalAveragePooling2D()(inputs)
    outputs = tf.keras.layers.Dense(classes, activation="softmax")(x)
    return tf.keras.Model(inputs, outputs)


def _called_only_by_private(classes):
    return _also_private(classes)


def _also_private(classes):
    inputs = tf.keras.Input((8,))
    outputs = tf.keras.layers.Dense(classes, activation="softmax")(inputs)
    return tf.keras.Model(inputs, outputs)
"""

#: private layers: one a public model builds, one nothing public builds (MP501 at line 9 and 15)
LAYERS = """\
import tensorflow as tf


class _Masked(tf.keras.layers.Layer):
    def call(self, x, keep):
        scores = tf.matmul(x, x, transpose_b=True)
        keep = tf.cast(keep, scores.dtype)
        # masked positions get a huge negative score
        return scores * keep + (1.0 - keep) * -1e9


class _Forgotten(tf.keras.layers.Layer):
    def call(self, x, keep):
        keep = tf.cast(keep, x.dtype)
        return x * keep + (1.0 - keep) * -1e9


class Attention(tf.keras.layers.Layer):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.inner = self._make_inner()

    def _make_inner(self):
        return _Masked()

    def call(self, x, keep):
        return self.inner(x, keep)
"""


def _findings(root):
    result = run_cli("check", "--no-cache", "--select", "MP101,MP501", "--output-format", "json", ".", cwd=root)
    return sorted((f["path"], f["line"], f["rule"]) for f in json.loads(result.stdout))


def test_private_builders_that_public_entries_call_are_judged_and_the_rest_stay_silent(tmp_path):
    write_files(tmp_path, {"setup.py": SETUP, "zoo/__init__.py": "from zoo.models import *\n",
                           "zoo/models.py": BUILDERS})
    assert _findings(tmp_path) == [("zoo/models.py", 17, "MP101"), ("zoo/models.py", 24, "MP101")]


def test_a_private_layer_a_public_layer_builds_through_a_private_method_is_judged(tmp_path):
    write_files(tmp_path, {"setup.py": SETUP, "zoo/__init__.py": "from zoo.layers import Attention\n",
                           "zoo/layers.py": LAYERS})
    assert _findings(tmp_path) == [("zoo/layers.py", 9, "MP501")]


def test_an_application_that_sets_float32_keeps_private_builders_silent(tmp_path):
    """Not a library: a program of the project chooses float32, so nothing is judged as
    a user's possible mixed policy."""
    write_files(tmp_path, {"setup.py": SETUP, "zoo/__init__.py": "", "zoo/models.py": BUILDERS,
                           "train.py": "import tensorflow as tf\nfrom zoo.models import ResNetTiny\n\n"
                                       "tf.keras.mixed_precision.set_global_policy('float32')\n"
                                       "model = ResNetTiny()\nmodel.compile('adam', 'mse')\n"})
    assert _findings(tmp_path) == []



#: a public layer's ``call`` runs a private helper through ``self``, which runs another;
#: a private method only an unused private method calls stays silent (MP501 at line 11)
CHAINED = """\
import tensorflow as tf


class Masked(tf.keras.layers.Layer):
    def call(self, x, keep):
        return self._scores(x, keep)

    def _scores(self, x, keep):
        return self.__fill(x, tf.cast(keep, x.dtype))

    def __fill(self, x, keep):
        return x * keep + (1.0 - keep) * -1e9

    def _unused(self, x, keep):
        return self._forgotten(x, tf.cast(keep, x.dtype))

    def _forgotten(self, x, keep):
        return x * keep + (1.0 - keep) * -1e9
"""


def test_private_helpers_a_public_call_runs_through_self_are_judged(tmp_path):
    write_files(tmp_path, {"setup.py": SETUP, "zoo/__init__.py": "from zoo.masks import Masked\n",
                           "zoo/masks.py": CHAINED})
    assert _findings(tmp_path) == [("zoo/masks.py", 12, "MP501")]
