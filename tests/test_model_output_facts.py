"""What a model's output is, asked across modules: a nested model's last layer, where
the finding on it points, and how safe its fix is."""

from pathlib import Path

import libcst as cst

from helpers import ROOT, outcome, run_cli
from mplint.analysis.custom_layers import CustomLayers
from mplint.analysis.imported_layers import analysed

NESTED = ROOT / "fixtures" / "projects" / "nested_generators"


def _calls_named(module: cst.Module, text: str) -> list:
    found = []

    class _Finder(cst.CSTVisitor):
        def visit_Call(self, node: cst.Call) -> None:
            if module.code_for_node(node) == text:
                found.append(node)

    module.visit(_Finder())
    return found


def _layers(path: Path) -> CustomLayers:
    layers = analysed(str(path), CustomLayers)
    assert isinstance(layers, CustomLayers)
    return layers


def test_a_nested_model_call_of_another_modules_builder_has_its_last_layers_dtype():
    layers = _layers(NESTED / "gan" / "pix2pix.py")
    (call,) = _calls_named(layers.ctx.module, "self.gen_model(source)")
    found = layers.model_call_output(call)
    assert found is not None and found.model
    assert (found.name, found.built_in, found.line, found.softmax) == ("Activation", "unet.py", 16, False)


def test_a_nested_model_ending_in_float32_or_cast_after_it_is_not_16_bit():
    layers = _layers(NESTED / "gan" / "pix2pix.py")
    (float32,) = _calls_named(layers.ctx.module, "gen(source)")[-1:]
    assert layers.model_call_output(float32) is None  # build_float32_generator ends in dtype="float32"
    (plain,) = _calls_named(layers.ctx.module, 'Input(shape=(size, size, 3))')
    assert layers.model_call_output(plain) is None  # no model


def test_a_nested_generator_is_reported_at_the_outer_model_and_its_fix_is_unsafe(tmp_path):
    project = tmp_path / "p"
    project.mkdir()
    for source in NESTED.rglob("*"):
        if source.is_file():
            target = project / source.relative_to(NESTED)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(source.read_bytes())
    result = run_cli("check", "--no-cache", ".", cwd=project)
    assert outcome(result) == (1, [("gan/pix2pix.py", 21, "MP102"), ("gan/pix2pix.py", 54, "MP102"),
                                          ("gan/pix2pix.py", 63, "MP101")])
    assert "the Activation built at unet.py:16, the last layer of the model `Unet.build_generator`" in result.stdout
    # gen_out is also concatenated into the discriminator's input: casting it changes that too
    safe = run_cli("fix", "--diff", "--no-cache", "gan/pix2pix.py", cwd=project)
    assert "self.gen_model(source)" not in safe.stdout
    unsafe = run_cli("fix", "--diff", "--unsafe-fixes", "--no-cache", "gan/pix2pix.py", cwd=project)
    assert "gen_out = Activation(\"linear\", dtype=\"float32\")(self.gen_model(source))" in unsafe.stdout


def test_fixing_the_generator_in_its_module_changes_the_next_cached_run(tmp_path):
    project = tmp_path / "p"
    for source in NESTED.rglob("*"):
        if source.is_file():
            target = project / source.relative_to(NESTED)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(source.read_bytes())
    pix2pix = "gan/pix2pix.py"
    assert (pix2pix, 21, "MP102") in outcome(run_cli("check", pix2pix, cwd=project))[1]
    unet = project / "gan" / "unet.py"
    unet.write_text(unet.read_text().replace('out = Activation("tanh")(x)', 'out = Activation("tanh", dtype="float32")(x)'))
    assert (pix2pix, 21, "MP102") not in outcome(run_cli("check", pix2pix, cwd=project))[1]


#: a packaged library whose public builders hand their own ``include_top`` on (default
#: False) to the builder that adds the softmax head under ``if include_top:``
ZOO_LIBRARY = {
    "setup.py": "from setuptools import setup\n\nsetup(name='zoo', packages=['zoo'])\n",
    "zoo/__init__.py": "from .nets import Net18\n",
    "zoo/nets.py": (
        "import tensorflow as tf\n\n\n"
        "def _build(include_top=False, classes=10):\n"
        "    inputs = tf.keras.Input((32, 32, 3))\n"
        "    x = tf.keras.layers.Conv2D(32, 3)(inputs)\n"
        "    x = tf.keras.layers.GlobalAveragePooling2D()(x)\n"
        "    if include_top:\n"
        "        x = tf.keras.layers.Dense(classes, activation='softmax')(x)\n"
        "    return tf.keras.Model(inputs, x)\n\n\n"
        "def Net18(include_top=False, classes=10):\n"
        "    return _build(include_top=include_top, classes=classes)\n\n\n"
        "setattr(Net18, '__doc__', _build.__doc__)\n"),
}


def test_a_public_builders_default_does_not_decide_the_head_its_users_choose(tmp_path):
    """``Net18(include_top=False)`` hands its parameter on: its users pass True, so the
    head arm runs for them (the module's top-level ``setattr`` does not make it a program
    whose calls are all its calls). A call in the library that passes False decides."""
    for name, text in ZOO_LIBRARY.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    assert outcome(run_cli("check", "--select", "MP101", ".", cwd=tmp_path)) == (1, [("zoo/nets.py", 9, "MP101")])
    nets = tmp_path / "zoo" / "nets.py"
    nets.write_text(ZOO_LIBRARY["zoo/nets.py"].replace("_build(include_top=include_top", "_build(include_top=False"))
    assert outcome(run_cli("check", "--select", "MP101", "--no-cache", ".", cwd=tmp_path)) == (0, [])


#: a custom loop that trains a model of another module; its loss helper casts the
#: model's outputs to float32 before the loss (or, in the twin, does not)
CAST_IN_LOSS_HELPER = {
    "pyproject.toml": "[project]\nname = 'pose'\n",
    "nets.py": ("import tensorflow as tf\n\n\ndef build():\n    inputs = tf.keras.Input((8,))\n"
                "    return tf.keras.Model(inputs, tf.keras.layers.Dense(17)(inputs))\n"),
    "train.py": ("import tensorflow as tf\n\nfrom nets import build\n\n\n"
                 "def mse_loss(model, x, y):\n    heatmaps = model(x, training=True)\n"
                 "    heatmaps = tf.cast(heatmaps, tf.float32)\n    return tf.reduce_mean(tf.square(heatmaps - y))\n\n\n"
                 "def train(data):\n    tf.keras.mixed_precision.set_global_policy('mixed_float16')\n"
                 "    model = build()\n"
                 "    opt = tf.keras.mixed_precision.LossScaleOptimizer(tf.keras.optimizers.Adam())\n"
                 "    for x, y in data:\n        with tf.GradientTape() as tape:\n"
                 "            loss = opt.get_scaled_loss(mse_loss(model, x, y))\n"
                 "        grads = opt.get_unscaled_gradients(tape.gradient(loss, model.trainable_variables))\n"
                 "        opt.apply_gradients(zip(grads, model.trainable_variables))\n\n\n"
                 "if __name__ == '__main__':\n    train([])\n"),
}


def test_outputs_cast_to_float32_in_the_loss_helper_the_model_is_handed_to(tmp_path):
    """The loop hands the model to ``mse_loss``, which casts its outputs before the loss:
    the float16 outputs never reach it (MP102 silent). Without the cast, MP102."""
    for name, text in CAST_IN_LOSS_HELPER.items():
        (tmp_path / name).write_text(text)
    assert outcome(run_cli("check", "--select", "MP102", "--no-cache", ".", cwd=tmp_path)) == (0, [])
    train = tmp_path / "train.py"
    train.write_text(train.read_text().replace("    heatmaps = tf.cast(heatmaps, tf.float32)\n", ""))
    assert outcome(run_cli("check", "--select", "MP102", "--no-cache", ".", cwd=tmp_path)) == (1, [("nets.py", 6, "MP102")])
