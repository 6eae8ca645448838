"""A model's head made in another module of the project: a function there returns a
Keras layer's output, or a layer class there returns the output of a layer it holds,
and this module makes it a Keras model's output. Judged in the head's module, reported
at the functional model whose output it becomes (the head alone is no bug: inside a
bigger network its 16-bit output is right), naming the layer to fix."""

import json

from helpers import run_cli, write_files

PROJECT = "[project]\nname = 'p'\n"
HEADS = ("from tensorflow import keras\n\n\n"
         "def make_head(x, num_classes=10, activation='softmax', dtype=None):\n"
         "    x = keras.layers.Dense(64, activation='relu')(x)\n"
         "    return keras.layers.Dense(num_classes, activation=activation, dtype=dtype)(x)\n")
TRAIN = ("import pkg\nfrom tensorflow import keras\n\n"
         "keras.mixed_precision.set_global_policy('mixed_float16')\n\n"
         "inputs = keras.Input(shape=(32,))\n"
         "outputs = pkg.make_head(inputs{args})\n"
         "model = keras.Model(inputs, outputs)\n"
         "model.compile(loss='categorical_crossentropy', optimizer='adam')\n")


def _findings(folder):
    result = run_cli("check", "--no-cache", "--output-format", "json", ".", cwd=folder)
    assert result.returncode in (0, 1), result.stderr
    return [(f["path"], f["line"], f["rule"], f["message"]) for f in json.loads(result.stdout)]


def _project(tmp_path, args="", heads=HEADS, train=None):
    write_files(tmp_path, {"pyproject.toml": PROJECT, "pkg/__init__.py": "from .heads import make_head\n",
                           "pkg/heads.py": heads, "train.py": train or TRAIN.format(args=args)})
    return [f[:3] for f in _findings(tmp_path)]


def test_a_head_function_re_exported_by_its_package_is_judged_in_its_module(tmp_path):
    write_files(tmp_path, {"pyproject.toml": PROJECT, "pkg/__init__.py": "from .heads import make_head\n",
                           "pkg/heads.py": HEADS, "train.py": TRAIN.format(args="")})
    found = _findings(tmp_path)
    assert [f[:3] for f in found] == [("train.py", 8, "MP101")]
    assert "the Dense built at heads.py:6, whose output `make_head` returns" in found[0][3]


def test_a_head_imported_from_its_module_by_name(tmp_path):
    train = TRAIN.format(args="").replace("import pkg\n", "from pkg.heads import make_head\n") \
        .replace("pkg.make_head", "make_head")
    assert _project(tmp_path, train=train) == [("train.py", 8, "MP101")]


def test_the_calls_literal_arguments_decide_the_heads_activation(tmp_path):
    # a sigmoid or linear head is no softmax (not MP101's), but still a 16-bit output
    assert _project(tmp_path, ", activation='sigmoid'") == [("train.py", 8, "MP102")]
    assert _project(tmp_path, ", activation='linear'") == [("train.py", 8, "MP102")]
    assert _project(tmp_path, ", 1, 'sigmoid'") == [("train.py", 8, "MP102")]


def test_a_float32_head_is_silent(tmp_path):
    assert _project(tmp_path, ", dtype='float32'") == []
    assert _project(tmp_path, heads=HEADS.replace("dtype=dtype", "dtype='float32'")) == []


def test_a_float32_layer_or_cast_after_the_head_is_silent(tmp_path):
    after = TRAIN.format(args="").replace(
        "model = keras.Model(inputs, outputs)",
        "outputs = keras.layers.Activation('linear', dtype='float32')(outputs)\n"
        "model = keras.Model(inputs, outputs)")
    # a float32 linear Activation only casts the rounded softmax: still MP101's, at the model
    assert _project(tmp_path, train=after) == [("train.py", 9, "MP101")]
    lambda_cast = TRAIN.format(args="").replace(
        "model = keras.Model(inputs, outputs)",
        "outputs = keras.layers.Lambda(lambda t: t, dtype='float32')(outputs)\n"
        "model = keras.Model(inputs, outputs)")
    assert _project(tmp_path, train=lambda_cast) == []
    in_the_head = HEADS.replace(
        "    return keras.layers.Dense(num_classes, activation=activation, dtype=dtype)(x)\n",
        "    x = keras.layers.Dense(num_classes, activation=activation, dtype=dtype)(x)\n"
        "    return keras.layers.Activation('linear', dtype='float32')(x)\n")
    assert _project(tmp_path, ", activation=None", heads=in_the_head) == []


def test_a_head_whose_result_is_no_output_is_silent(tmp_path):
    inner = TRAIN.format(args="").replace(
        "model = keras.Model(inputs, outputs)",
        "model = keras.Model(inputs, keras.layers.Dense(3, dtype='float32')(outputs))")
    assert _project(tmp_path, train=inner) == []


def test_a_head_that_returns_one_of_several_layers_is_silent(tmp_path):
    branches = HEADS.replace(
        "    return keras.layers.Dense(num_classes, activation=activation, dtype=dtype)(x)\n",
        "    if num_classes > 1:\n"
        "        return keras.layers.Dense(num_classes, activation='softmax')(x)\n"
        "    return keras.layers.Dense(1, activation='sigmoid', dtype='float32')(x)\n")
    assert _project(tmp_path, heads=branches) == []


def test_a_head_module_that_does_not_parse_leaves_the_output_unknown(tmp_path):
    # the broken module gets its own one-line finding; the model's module stays silent
    assert _project(tmp_path, heads=HEADS.replace("def make_head(x,", "def make_head(x")) \
        == [("pkg/heads.py", 4, "syntax-error")]


HEAD_LAYER = ("import tensorflow as tf\n\n\n"
              "class ClassificationHead(tf.keras.layers.Layer):\n"
              "    def __init__(self, num_labels=1):\n"
              "        super().__init__()\n"
              "        self.pooling = tf.keras.layers.GlobalAveragePooling1D()\n"
              "        self.classifier = tf.keras.layers.Dense(num_labels, activation='softmax')\n\n"
              "    def call(self, inputs):\n"
              "        return self.classifier(self.pooling(inputs))\n")
TASK = ("import tensorflow as tf\nfrom heads import ClassificationHead\n\n"
        "tf.keras.mixed_precision.set_global_policy('mixed_float16')\n\n\n"
        "class AutoModel:\n"
        "    def __init__(self, model, config):\n"
        "        self.model = model\n"
        "        self.head = ClassificationHead(num_labels=config.num_labels)\n\n"
        "    def build_model(self, inputs):\n"
        "        logits = self.head(self.model(inputs))\n"
        "        return tf.keras.Model(inputs, logits)\n")


def test_a_layer_class_of_another_module_returning_a_layer_it_holds(tmp_path):
    write_files(tmp_path, {"pyproject.toml": PROJECT, "heads.py": HEAD_LAYER, "task.py": TASK})
    found = _findings(tmp_path)
    assert [f[:3] for f in found] == [("task.py", 14, "MP101")]
    assert "the Dense built at heads.py:8, whose output `ClassificationHead` returns" in found[0][3]


def test_a_layer_class_whose_dense_is_float32_is_silent(tmp_path):
    float32 = HEAD_LAYER.replace("activation='softmax')", "activation='softmax', dtype='float32')")
    write_files(tmp_path, {"pyproject.toml": PROJECT, "heads.py": float32, "task.py": TASK})
    assert _findings(tmp_path) == []


def test_a_subclassed_model_whose_forward_pass_is_dunder_call(tmp_path):
    model = ("import tensorflow as tf\n\n"
             "tf.keras.mixed_precision.set_global_policy('mixed_float16')\n\n\n"
             "class Net(tf.keras.Model):\n"
             "    def __init__(self):\n"
             "        super().__init__()\n"
             "        self.fc = tf.keras.layers.Dense(10, dtype='float32')\n"
             "        self.softmax = tf.keras.layers.Activation('softmax')\n\n"
             "    def __call__(self, x, training=False):\n"
             "        return self.softmax(self.fc(x))\n\n\n"
             "model = Net()\nmodel.compile(loss='sparse_categorical_crossentropy')\n")
    write_files(tmp_path, {"pyproject.toml": PROJECT, "net.py": model})
    assert [f[:3] for f in _findings(tmp_path)] == [("net.py", 10, "MP101")]
    write_files(tmp_path, {"net.py": model.replace("Activation('softmax')", "Activation('softmax', dtype='float32')")})
    assert _findings(tmp_path) == []
