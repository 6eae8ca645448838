"""A layer's code runs under a program's policy only where a program builds the layer:
importing its module builds nothing. The float16 numerics rules (MP501, MP502, MP504) ask
the program model which policy reaches each function, so a layer that the only
mixed_float16 program never builds is silent, and one it builds through a factory in
another module, a registry named by a config, or a subclass is still found."""

import json

from helpers import run_cli, write_files

#: a layer whose call computes a float16 mask with -1e9 (MP501) and divides by a norm
#: guarded by 1e-12 (MP502); ``{name}`` is the class name
LAYER = """\
import tensorflow as tf


class {name}(tf.keras.layers.Layer):
    def __init__(self, units=8, **kwargs):
        super().__init__(**kwargs)
        self.dense = tf.keras.layers.Dense(units)

    def call(self, x, mask):
        scores = self.dense(x)
        mask = tf.cast(mask, scores.dtype)
        scores = scores * mask + (1.0 - mask) * -1e9
        return scores / (tf.norm(scores) + 1e-12)
"""

#: a program that sets mixed_float16, imports the whole package and builds what ``{build}`` makes
PROGRAM = """\
import tensorflow as tf


def main():
    tf.keras.mixed_precision.set_global_policy("mixed_float16")
    # imported after the policy is set: every module of the package runs under it
    import blocks
    from blocks.factory import make, from_config
    inputs = tf.keras.Input((16,))
    mask = tf.keras.Input((8,))
    x = {build}(inputs, mask)
    model = tf.keras.Model([inputs, mask], x)
    model.compile("adam", "mse")


if __name__ == "__main__":
    main()
"""


def _findings(root, *paths):
    result = run_cli("check", "--no-cache", "--select", "MP501,MP502,MP504", "--output-format", "json",
                     *paths, cwd=root)
    return sorted((f["path"], f["line"], f["rule"]) for f in json.loads(result.stdout))


def _package(root, build):
    write_files(root, {
        "setup.py": "from setuptools import setup\nsetup(name='blocks', install_requires=['tensorflow>=2.12,<2.16'])\n",
        "blocks/__init__.py": "from blocks.used import Used\nfrom blocks.unused import Unused\n"
                              "from blocks.sub import Sub\nfrom blocks.registered import Registered\n",
        "blocks/used.py": LAYER.format(name="Used"),
        "blocks/unused.py": LAYER.format(name="Unused"),
        "blocks/base.py": LAYER.format(name="Base"),
        "blocks/sub.py": "from blocks.base import Base\n\n\nclass Sub(Base):\n    pass\n",
        "blocks/registered.py": LAYER.format(name="Registered"),
        "blocks/factory.py": "from blocks.used import Used\nfrom blocks.registered import Registered\n\n"
                             "LAYERS = {'registered': Registered}\n\n\n"
                             "def make(x, mask):\n    return Used()(x, mask)\n\n\n"
                             "def from_config(config, x, mask):\n    return LAYERS[config['type']]()(x, mask)\n",
        "train.py": PROGRAM.format(build=build),
    })


def test_a_layer_only_imported_by_the_program_is_silent_and_one_its_factory_builds_is_found(tmp_path):
    _package(tmp_path, "make")
    found = _findings(tmp_path, ".")
    # built by make() in another module, after the program sets mixed_float16
    assert ("blocks/used.py", 12, "MP501") in found and ("blocks/used.py", 13, "MP502") in found
    # imported by the package the program imports, never built: not governed
    assert not [f for f in found if f[0] in ("blocks/unused.py", "blocks/base.py", "blocks/registered.py")]


def test_a_subclass_built_by_the_program_puts_its_base_class_method_under_the_policy(tmp_path):
    _package(tmp_path, "blocks.Sub()")
    found = _findings(tmp_path, ".")
    assert ("blocks/base.py", 12, "MP501") in found
    assert not [f for f in found if f[0] in ("blocks/used.py", "blocks/unused.py")]


def test_a_layer_a_config_names_and_a_registry_builds_is_found(tmp_path):
    _package(tmp_path, "make")
    write_files(tmp_path, {"train.py": PROGRAM.format(build="from_config").replace(
        "from_config(inputs, mask)", "from_config({'type': 'registered'}, inputs, mask)")})
    found = _findings(tmp_path, ".")
    assert ("blocks/registered.py", 12, "MP501") in found
    assert not [f for f in found if f[0] == "blocks/unused.py"]


def test_a_program_that_sets_only_bfloat16_keeps_large_and_tiny_constants(tmp_path):
    _package(tmp_path, "make")
    write_files(tmp_path, {"train.py": PROGRAM.format(build="make").replace("mixed_float16", "mixed_bfloat16")})
    assert [f for f in _findings(tmp_path, ".") if f[2] in ("MP501", "MP502")] == []


def test_a_library_whose_programs_set_no_policy_keeps_its_public_layers_may_be_mixed(tmp_path):
    _package(tmp_path, "make")
    write_files(tmp_path, {"train.py": PROGRAM.format(build="make").replace(
        '    tf.keras.mixed_precision.set_global_policy("mixed_float16")\n', "")})
    found = _findings(tmp_path, ".")
    assert ("blocks/unused.py", 12, "MP501") in found and ("blocks/used.py", 12, "MP501") in found
    result = run_cli("check", "--no-cache", "--select", "MP501", "blocks/unused.py", cwd=tmp_path)
    assert "a library's code" in result.stdout


def test_an_uncalled_policy_helper_in_an_application_governs_nothing(tmp_path):
    """``setup_mixed_precision`` nothing calls, beside programs that set their own policy:
    dead code, not a switch whose users may run the package's training loops under it."""
    write_files(tmp_path, {
        "setup.py": "",
        "train/__init__.py": "",
        "train/common/__init__.py": "",
        "train/common/gpu.py": "import tensorflow as tf\n\n\ndef setup_mixed_precision(name):\n"
                               "    tf.keras.mixed_precision.set_global_policy(name)\n",
        "train/common/loops.py": "from train.blocks_lib import Masked\n\n\ndef train(x, mask):\n"
                                 "    return Masked()(x, mask)\n",
        "train/run_bf16.py": "import tensorflow as tf\nfrom train.common.loops import train\n\n\n"
                             "def main():\n    tf.keras.mixed_precision.set_global_policy('mixed_bfloat16')\n"
                             "    train(None, None)\n\n\nif __name__ == '__main__':\n    main()\n",
        "train/blocks_lib.py": LAYER.format(name="Masked"),
    })
    # the only program that reaches train() sets bfloat16; the helper's run-time choice is dead
    assert [f for f in _findings(tmp_path, ".") if f[2] in ("MP501", "MP502")] == []


def test_a_policy_named_only_in_a_dead_private_method_keeps_the_repository_a_library(tmp_path):
    """``Trainer._setup_mixed_precision`` whose one call is commented out: no program sets a
    policy, so the package's public layers stay "may be mixed" (library mode)."""
    trainer = ("import tensorflow as tf\n\n\nclass Trainer:\n    def __init__(self, model):\n"
               "        self.model = model\n        # self._setup_mixed_precision()\n\n"
               "    def _setup_mixed_precision(self):\n"
               "        tf.keras.mixed_precision.set_global_policy('mixed_float16')\n")
    write_files(tmp_path, {
        "setup.py": "", "tslib/__init__.py": "", "tslib/trainer.py": trainer,
        "tslib/layers.py": LAYER.format(name="Masked"),
    })
    assert ("tslib/layers.py", 12, "MP501") in _findings(tmp_path, ".")
    # the call live again: an application whose only program builds no layer
    write_files(tmp_path, {"tslib/trainer.py": trainer.replace("# self._setup", "self._setup")})
    assert _findings(tmp_path, ".") == []
