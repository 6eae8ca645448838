"""Call-site values that flow down a chain of calls into another module: a parameter
handed on from parameter to parameter takes the values of the calls at the top of the
chain (their literals, or the public default), bounded in depth; anything the chain
cannot follow leaves the value unknown, and MP101 stays silent (MP102 may still say
the output is float16, which it is whatever the activation)."""

import json

from helpers import run_cli, write_files

HEADS = ("import keras\n\n\ndef make_model(act):\n    inputs = keras.Input((8,))\n"
         "    return keras.Model(inputs, keras.layers.Dense(16, activation=act)(inputs))\n")
TRAIN = ("import keras\n\nfrom net import build\n\n"
         "keras.mixed_precision.set_global_policy('mixed_float16')\nmodel = build()\nmodel.fit(None)\n")


def _rules(tmp_path, net, train=TRAIN):
    write_files(tmp_path, {"pyproject.toml": "[project]\nname = 'p'\n", "heads.py": HEADS, "net.py": net,
                           "train.py": train})
    result = run_cli("check", "--no-cache", "--output-format", "json", ".", cwd=tmp_path)
    return [(f["path"], f["line"], f["rule"]) for f in json.loads(result.stdout)]


def _chain(levels, default='"softmax"', top_call=""):
    """``build(activation=default)`` handing ``activation`` down ``levels`` private
    functions before ``make_model`` in heads.py."""
    lines = ["from heads import make_model\n"]
    for level in range(levels, 0, -1):
        callee = "make_model" if level == levels else f"_level{level + 1}"
        lines.append(f"\n\ndef _level{level}(activation):\n    return {callee}(activation)\n")
    first = "_level1" if levels else "make_model"
    lines.append(f"\n\ndef build(activation={default}):\n    return {first}(activation{top_call})\n")
    return "".join(lines)


def test_a_public_default_handed_down_two_functions_reaches_the_head(tmp_path):
    assert _rules(tmp_path, _chain(1)) == [("heads.py", 6, "MP101")]


def test_a_chain_of_three_functions_is_followed(tmp_path):
    assert _rules(tmp_path, _chain(2)) == [("heads.py", 6, "MP101")]


def test_a_chain_deeper_than_the_bound_is_unknown(tmp_path):
    assert _rules(tmp_path, _chain(4)) == [("heads.py", 6, "MP102")]


def test_the_callers_literal_decides_not_the_default(tmp_path):
    train = TRAIN.replace("build()", "build(activation='sigmoid')")
    assert _rules(tmp_path, _chain(1), train) == [("heads.py", 6, "MP102")]
    train = TRAIN.replace("model = build()", "model = build('softmax')")
    assert _rules(tmp_path, _chain(1, default='"linear"'), train) == [("heads.py", 6, "MP101")]


def test_calls_passing_softmax_and_sigmoid_are_joined_as_one_level_joins_them(tmp_path):
    train = TRAIN + "other = build('sigmoid')\nother.fit(None)\n"
    direct = _rules(tmp_path, _chain(0), train)
    assert _rules(tmp_path, _chain(1), train) == direct == [("heads.py", 6, "MP102")]


def test_a_parameter_rebound_before_the_call_is_unknown(tmp_path):
    net = _chain(1).replace("    return make_model(activation)\n",
                            "    activation = pick(activation)\n    return make_model(activation)\n")
    assert _rules(tmp_path, net) == [("heads.py", 6, "MP102")]


def test_a_spread_of_an_unknown_dict_is_unknown(tmp_path):
    net = _chain(1).replace("def _level1(activation):", "def _level1(activation, **kw):") \
        .replace("return _level1(activation)", "return _level1(**settings())")
    assert _rules(tmp_path, net) == [("heads.py", 6, "MP102")]


def test_a_recursive_chain_stays_bounded_and_unknown(tmp_path):
    net = ("from heads import make_model\n\n\ndef _a(activation):\n    if activation:\n"
           "        return _b(activation)\n    return make_model(activation)\n\n\n"
           "def _b(activation):\n    return _a(activation)\n")
    train = TRAIN.replace("from net import build", "from net import _a as build")
    assert ("heads.py", 6, "MP101") not in _rules(tmp_path, net, train)


STEPS = ("import tensorflow as tf\n\n\ndef generator_step(model, optimizer, x):\n"
         "    with tf.GradientTape() as tape:\n        loss = tf.reduce_mean(model(x))\n"
         "    grads = tape.gradient(loss, model.trainable_variables)\n"
         "    optimizer.apply_gradients(zip(grads, model.trainable_variables))\n    return loss\n")
LOOP = ("from steps import generator_step\n\n\ndef train(model, optimizer, data):\n    for x in data:\n"
        "        generator_step(model, optimizer, x)\n")
MAIN = ("import keras\nfrom keras import mixed_precision\n\nfrom loop import train\n\n"
        "keras.mixed_precision.set_global_policy('mixed_float16')\n"
        "model = keras.Sequential([keras.layers.Dense(8, dtype='float32')])\n"
        "optimizer = mixed_precision.LossScaleOptimizer(keras.optimizers.Adam())\n"
        "train(model, optimizer, [])\n")


def _optimizer_rules(tmp_path, loop=LOOP, main=MAIN):
    write_files(tmp_path, {"pyproject.toml": "[project]\nname = 'p'\n[tool.mplint]\nkeras-version = 3\n",
                           "steps.py": STEPS, "loop.py": loop, "main.py": main})
    result = run_cli("check", "--no-cache", "--output-format", "json", ".", cwd=tmp_path)
    return [(f["path"], f["line"], f["rule"]) for f in json.loads(result.stdout)]


def test_a_wrapped_optimizer_handed_through_a_parameter_into_a_third_module_is_known(tmp_path):
    assert _optimizer_rules(tmp_path) == [("steps.py", 8, "MP202")]


def test_a_plain_optimizer_handed_down_is_no_mp202(tmp_path):
    main = MAIN.replace("mixed_precision.LossScaleOptimizer(keras.optimizers.Adam())", "keras.optimizers.Adam()")
    assert ("steps.py", 8, "MP202") not in _optimizer_rules(tmp_path, main=main)


def test_an_optimizer_rebound_before_it_is_handed_on_is_unknown(tmp_path):
    loop = LOOP.replace("    for x in data:\n", "    optimizer = restore(optimizer)\n    for x in data:\n")
    assert _optimizer_rules(tmp_path, loop=loop) == []


def test_an_optimizer_from_args_is_unknown(tmp_path):
    loop = LOOP.replace("generator_step(model, optimizer, x)", "generator_step(model, *extra)") \
        .replace("def train(model, optimizer, data):", "def train(model, optimizer, data, *extra):")
    assert _optimizer_rules(tmp_path, loop=loop) == []
