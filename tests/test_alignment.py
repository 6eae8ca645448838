"""MP301-MP304: which sizes fire, which stay silent, what the fix writes."""

import textwrap

import pytest

from helpers import fix, lint, outcome

RULES = ["MP301", "MP302", "MP303", "MP304"]
MIXED = 'import tensorflow as tf\nfrom tensorflow.keras import layers\n\ntf.keras.mixed_precision.set_global_policy("mixed_float16")\n'


def _lint(body, **overrides):
    """The findings of the alignment rules on ``body`` under a mixed_float16 policy."""
    return lint(MIXED + textwrap.dedent(body), *RULES, **overrides)


def _fixed(body, **overrides):
    """``body`` with every alignment fix applied (unsafe ones too)."""
    return fix(MIXED + textwrap.dedent(body), *RULES, **overrides)[len(MIXED):]


BAD = [
    # (id, body, rule, fixed body or None when the finding has no fix)
    ("dense", "h = layers.Dense(100)\n", "MP301", "h = layers.Dense(104)\n"),
    ("lstm-keyword", "h = layers.LSTM(units=100)\n", "MP301", "h = layers.LSTM(units=104)\n"),
    ("gru-in-bidirectional", "h = layers.Bidirectional(layers.GRU(33))\n", "MP301",
     "h = layers.Bidirectional(layers.GRU(40))\n"),
    ("simple-rnn", "h = tf.keras.layers.SimpleRNN(20)\n", "MP301", "h = tf.keras.layers.SimpleRNN(24)\n"),
    ("rnn-cell", "h = layers.RNN(layers.LSTMCell(100))\n", "MP301", "h = layers.RNN(layers.LSTMCell(104))\n"),
    ("einsum-dense", 'h = layers.EinsumDense("abc,cd->abd", output_shape=(None, 100))\n', "MP301",
     'h = layers.EinsumDense("abc,cd->abd", output_shape=(None, 104))\n'),
    ("einsum-dense-ellipsis", 'h = layers.EinsumDense("...b,bc->...c", 300)\n', "MP301",
     'h = layers.EinsumDense("...b,bc->...c", 304)\n'),
    ("embedding", "e = layers.Embedding(input_dim=5000, output_dim=100)\n", "MP301",
     "e = layers.Embedding(input_dim=5000, output_dim=104)\n"),
    ("embedding-output-dim-variable",
     "def embed(x, vocab_size, output_dim):\n    return layers.Embedding(vocab_size, output_dim)(x)\n\ny = embed(x, 9000, 300)\n",
     "MP301", "def embed(x, vocab_size, output_dim):\n    return layers.Embedding(vocab_size, output_dim)(x)\n\ny = embed(x, 9000, 304)\n"),
    ("mha-value-dim", "a = layers.MultiHeadAttention(8, 64, 50)\n", "MP301",
     "a = layers.MultiHeadAttention(8, 64, 56)\n"),
    ("group-query-attention", "a = layers.GroupQueryAttention(head_dim=100, num_query_heads=8, num_key_value_heads=2)\n",
     "MP301", "a = layers.GroupQueryAttention(head_dim=104, num_query_heads=8, num_key_value_heads=2)\n"),
    ("float16-dtype-named", 'h = layers.Dense(100, dtype="mixed_float16")\n', "MP301",
     'h = layers.Dense(104, dtype="mixed_float16")\n'),
    ("large-hidden-is-mp301", "h = layers.Dense(30522)\n", "MP301", "h = layers.Dense(30528)\n"),
    ("conv3d", "c = layers.Conv3D(20, 3)\n", "MP302", "c = layers.Conv3D(24, 3)\n"),
    ("separable-1d", "c = layers.SeparableConv1D(filters=12, kernel_size=3)\n", "MP302",
     "c = layers.SeparableConv1D(filters=16, kernel_size=3)\n"),
    ("convolution-alias", "c = layers.Convolution2DTranspose(30, 2)\n", "MP302",
     "c = layers.Convolution2DTranspose(32, 2)\n"),
    ("conv-lstm", "c = layers.ConvLSTM2D(20, 3)\n", "MP302", "c = layers.ConvLSTM2D(24, 3)\n"),
    ("fit-keyword", "model.fit(x, y, batch_size=50)\n", "MP303", "model.fit(x, y, batch_size=48)\n"),
    ("fit-positional-known-model",
     "model = tf.keras.Sequential([layers.Dense(1)])\nmodel.fit(x, y, 100)\n", "MP303",
     "model = tf.keras.Sequential([layers.Dense(1)])\nmodel.fit(x, y, 104)\n"),
    ("input", "i = tf.keras.Input(shape=(4,), batch_size=60)\n", "MP303",
     "i = tf.keras.Input(shape=(4,), batch_size=64)\n"),
    ("csv-dataset", 'ds = tf.data.experimental.make_csv_dataset("a.csv", 50)\nmodel.fit(ds)\n', "MP303",
     'ds = tf.data.experimental.make_csv_dataset("a.csv", 48)\nmodel.fit(ds)\n'),
    ("input-layer-positional", "i = layers.InputLayer((4,), 20)\n", "MP303", "i = layers.InputLayer((4,), 24)\n"),
    ("dataset-through-variable",
     "ds = tf.data.TFRecordDataset(files)\nds = ds.map(parse)\nds = ds.batch(50)\nmodel.fit(ds.prefetch(1))\n", "MP303",
     "ds = tf.data.TFRecordDataset(files)\nds = ds.map(parse)\nds = ds.batch(48)\nmodel.fit(ds.prefetch(1))\n"),
    ("padded-batch-any-receiver", "ds = pipeline.padded_batch(12)\nfor x, y in ds:\n    train_step(x, y)\n",
     "MP303", "ds = pipeline.padded_batch(16)\nfor x, y in ds:\n    train_step(x, y)\n"),
    ("prefetched-param-pipeline", "def make(ds):\n    return ds.prefetch(2).batch(100)\n\nmodel.fit(x=make(ds))\n",
     "MP303", "def make(ds):\n    return ds.prefetch(2).batch(104)\n\nmodel.fit(x=make(ds))\n"),
    ("default-param", "def block(x, units=100):\n    return layers.Dense(units)(x)\n", "MP301",
     "def block(x, units=104):\n    return layers.Dense(units)(x)\n"),
    ("call-site-keyword",
     "def block(x, units=64):\n    return layers.Dense(units)(x)\n\ny = block(x, units=90)\n", "MP301",
     "def block(x, units=64):\n    return layers.Dense(units)(x)\n\ny = block(x, units=96)\n"),
    ("init-through-class",
     "class Block(tf.keras.layers.Layer):\n    def __init__(self, filters):\n        super().__init__()\n"
     "        self.conv = layers.Conv2D(filters, 3)\n\nb = Block(20)\n", "MP302",
     "class Block(tf.keras.layers.Layer):\n    def __init__(self, filters):\n        super().__init__()\n"
     "        self.conv = layers.Conv2D(filters, 3)\n\nb = Block(24)\n"),
    ("constant-used-elsewhere-no-fix", "WIDTH = 100\nh = layers.Dense(WIDTH)\nprint(WIDTH)\n", "MP301", None),
    ("function-constant", "def build():\n    width = 100\n    return layers.Dense(width)\n", "MP301",
     "def build():\n    width = 104\n    return layers.Dense(width)\n"),
    ("arithmetic-no-fix", "BASE = 25\nh = layers.Dense(BASE * 4)\n", "MP301", None),
    ("mp304-sequential", "m = tf.keras.Sequential([layers.Dense(256), layers.Dense(1001)])\n", "MP304",
     "m = tf.keras.Sequential([layers.Dense(256), layers.Dense(1008)])\n"),
    ("mp304-vocab-name", "VOCAB = 50257\nhead = layers.Dense(VOCAB)\nemb = layers.Embedding(VOCAB, 768)\n", "MP304",
     "VOCAB = 50264\nhead = layers.Dense(VOCAB)\nemb = layers.Embedding(VOCAB, 768)\n"),
]


@pytest.mark.parametrize("body,rule,fixed", [b[1:] for b in BAD], ids=[b[0] for b in BAD])
def test_bad_fires_once_and_fixes(body, rule, fixed):
    findings = _lint(body)
    assert [f.rule for f in findings] == [rule], findings
    if fixed is None:
        assert findings[0].fix is None
        assert _fixed(body) == textwrap.dedent(body)
    else:
        assert findings[0].fix == "unsafe"
        assert _fixed(body) == fixed


GOOD = [
    ("aligned", "h = layers.Dense(128)\nc = layers.Conv2D(filters=48, kernel_size=3)\nmodel.fit(x, y, batch_size=128)\n"),
    ("depthwise", "d = layers.DepthwiseConv2D(3, depth_multiplier=3)\n"),
    ("small-task-sizes", "score = layers.Dense(1)\nbox = layers.Dense(4)\nrgb = layers.Conv2D(3, 1)\n"),
    ("mha-num-heads", "a = layers.MultiHeadAttention(num_heads=12, key_dim=64)\n"),
    ("functional-10-classes",
     "i = tf.keras.Input((8,))\nh = layers.Dense(64)(i)\no = layers.Dense(10)(h)\nm = tf.keras.Model(i, o)\n"),
    ("output-through-cast",
     "i = tf.keras.Input((8,))\no = layers.Dense(37)(i)\nm = tf.keras.Model(i, tf.cast(o, tf.float32))\n"),
    ("output-named-logits", 'h = layers.Dense(13, name="logits")\n'),
    ("output-assigned-to-logits", "logits = layers.Dense(13)(features)\n"),
    ("output-attribute-classifier", "class M(tf.keras.Model):\n    def __init__(self):\n        self.classifier = layers.Dense(13)\n"),
    ("output-num-classes-param", "def head(x, num_classes):\n    return layers.Dense(num_classes)(x)\n\ny = head(x, 21)\n"),
    ("detection-head-from-class-count",
     "NUM_ANCHORS = 3\nNUM_CLASSES = 80\nhead = layers.Conv2D(NUM_ANCHORS * (5 + NUM_CLASSES), 1)\n"),
    ("custom-layer-as-output",
     "class Head(tf.keras.layers.Layer):\n    def __init__(self, units):\n        super().__init__()\n"
     "        self.dense = layers.Dense(units)\n\ni = tf.keras.Input((4,))\no = Head(12)(i)\nm = tf.keras.Model(i, o)\n"),
    ("large-class-count-aligned", "m = tf.keras.Sequential([layers.Dense(1000)])\n"),
    ("default-overridden-everywhere",
     "def block(x, units=100):\n    return layers.Dense(units)(x)\n\na = block(x, 64)\nb = block(x, units=128)\n"),
    ("batch-of-one", "p = model.predict(x, batch_size=1)\nds = tf.data.Dataset.range(9).batch(1)\n"),
    ("batch-below-the-alignment", "model.fit(x, y, batch_size=2)\nds = tf.data.Dataset.range(9).batch(6)\n"
                                  "i = tf.keras.Input(shape=(4,), batch_size=4)\n"),
    ("sequence-windows-batched-again",
     "SEQ = 100\nids = tf.data.Dataset.from_tensor_slices(all_ids)\nseqs = ids.batch(50, drop_remainder=True)\n"
     "ds = seqs.map(split).shuffle(1000).batch(64)\n"),
    ("sequence-plus-target", "SEQ = 100\nseqs = tf.data.Dataset.range(9999).batch(SEQ + 1, drop_remainder=True)\n"),
    ("batched-then-unbatched", "x = tf.data.Dataset.range(99).batch(13).map(f).unbatch().batch(64)\n"),
    ("batch-unknown-receiver", "rows = loader.batch(50)\n"),
    ("fit-positional-unknown-receiver", "trainer.fit(x, y, 50)\n"),
    ("einsum-two-kernel-dims", 'p = layers.EinsumDense("abc,cde->abde", output_shape=(None, 12, 50))\n'),
    ("einsum-unknown-equation", "p = layers.EinsumDense(equation, output_shape=(None, 100))\n"),
    ("not-keras", "from mylib import Dense\nh = Dense(100)\n"),
    ("star-args-unknown", "def block(x, units):\n    return layers.Dense(units)(x)\n\ny = block(*args)\n"),
    ("float32-layer", 'h = layers.Dense(100, dtype="float32")\nc = layers.Conv2D(30, 3, dtype=tf.float32)\n'),
    ("unreadable-dtype", "h = layers.Dense(100, dtype=some_policy)\n"),
    ("conditionally-reassigned", "BATCH = 64\nif debug:\n    BATCH = 50\nds = tf.data.Dataset.range(9).batch(BATCH)\n"),
    ("float-value", "h = layers.Dense(100.0)\n"),
]


@pytest.mark.parametrize("body", [g[1] for g in GOOD], ids=[g[0] for g in GOOD])
def test_good_is_silent(body):
    assert _lint(body) == []


def test_silent_without_a_mixed_policy():
    code = "import tensorflow as tf\nh = tf.keras.layers.Dense(100)\ntf.data.Dataset.range(9).batch(50)\n"
    assert lint(code, *RULES) == []


def test_assume_policy_enables_the_rules():
    code = "import tensorflow as tf\nh = tf.keras.layers.Dense(100)\n"
    assert [(f.line, f.rule) for f in lint(code, *RULES, assume_policy="mixed_float16")] == [(2, "MP301")]


def test_message_reports_value_next_multiple_and_provenance():
    findings = _lint("HIDDEN = 100\nh = layers.Dense(HIDDEN)\n")
    assert findings[0].message.startswith("Dense units=100 (from HIDDEN) is not a multiple of 8")
    assert "use 104" in findings[0].message
    findings = _lint("def block(x, f):\n    return layers.Conv2D(f, 3)(x)\n\ny = block(x, 50)\n")
    assert findings[0].line == 8  # the call that passes 50, where a reader changes it
    assert "(passed to block() as 'f')" in findings[0].message


def test_bfloat16_policy_and_run_time_policy_are_named():
    code = ('import tensorflow as tf\ntf.keras.mixed_precision.set_global_policy("mixed_bfloat16")\n'
            "h = tf.keras.layers.Dense(100)\n")
    [finding] = lint(code, *RULES)
    assert "bfloat16 matrix multiplies" in finding.message
    code = "import tensorflow as tf\ntf.keras.mixed_precision.set_global_policy(policy)\nh = tf.keras.layers.Dense(100)\n"
    [finding] = lint(code, *RULES)
    assert "chosen at run time" in finding.message


def test_alignment_option_for_tpus():
    body = "h = layers.Dense(64)\nds = tf.data.Dataset.range(9).batch(200)\nmodel.fit(ds)\n"
    assert [(f.line, f.rule) for f in _lint(body, alignment=128)] == [(5, "MP301"), (6, "MP303")]
    assert _fixed(body, alignment=128) == "h = layers.Dense(128)\nds = tf.data.Dataset.range(9).batch(256)\nmodel.fit(ds)\n"


def test_vocabulary_threshold_option():
    body = "m = tf.keras.Sequential([layers.Dense(64), layers.Dense(500)])\n"
    assert _lint(body) == []
    assert [(f.line, f.rule) for f in _lint(body, **{"vocabulary-threshold": 400})] == [(5, "MP304")]


def test_mp301_and_mp304_never_report_the_same_layer():
    body = ("VOCAB_SIZE = 30522\ni = tf.keras.Input((None,))\nh = layers.Dense(300)(i)\n"
            "o = layers.Dense(VOCAB_SIZE)(h)\nm = tf.keras.Model(i, o)\n")
    assert sorted((f.line, f.rule) for f in _lint(body)) == [(7, "MP301"), (8, "MP304")]


def test_constant_fixed_once_for_all_its_uses():
    body = "HIDDEN = 100\na = layers.Dense(HIDDEN)\nb = layers.LSTM(HIDDEN)\n"
    findings = _lint(body)
    assert [(f.line, f.rule, f.fix) for f in findings] == [(6, "MP301", "unsafe"), (7, "MP301", "unsafe")]
    assert _fixed(body) == "HIDDEN = 104\na = layers.Dense(HIDDEN)\nb = layers.LSTM(HIDDEN)\n"


def test_constant_shared_by_batch_and_units_is_not_rounded():
    body = "N = 50\nh = layers.Dense(N)\nds = tf.data.Dataset.range(9).batch(N)\nmodel.fit(ds)\n"
    findings = _lint(body)
    assert sorted((f.line, f.rule, f.fix) for f in findings) == [(6, "MP301", None), (7, "MP303", None)]


def test_constant_passed_through_a_helper_is_rounded_when_all_uses_align():
    body = ("F = 50\n\ndef block(x, filters):\n    x = layers.Conv2D(filters, 3)(x)\n"
            "    return layers.SeparableConv2D(filters, 3)(x)\n\ny = block(x, F)\n")
    assert [f.rule for f in _lint(body)] == ["MP302"]
    assert _fixed(body).startswith("F = 56\n")


def test_helper_parameter_with_other_uses_is_not_rounded():
    body = ("def block(x, filters):\n    x = layers.Conv2D(filters, 3)(x)\n"
            "    return layers.Reshape((filters, -1))(x)\n\ny = block(x, 50)\n")
    assert [(f.rule, f.fix) for f in _lint(body)] == [("MP302", None)]


def test_options_come_from_pyproject(cli, tmp_path):
    (tmp_path / "pyproject.toml").write_text(
        '[tool.mplint]\nalignment = 128\nvocabulary-threshold = 500\nassume-policy = "mixed_bfloat16"\n')
    (tmp_path / "model.py").write_text(
        "import tensorflow as tf\n"
        "model = tf.keras.Sequential([tf.keras.layers.Dense(64), tf.keras.layers.Dense(600)])\n")
    result = cli("check", "--select", "MP3", "model.py", cwd=tmp_path)
    assert outcome(result) == (1, [("model.py", 2, "MP301"), ("model.py", 2, "MP304")]), result.stderr
    assert "MP301" in result.stdout and "use 128" in result.stdout
    assert "MP304" in result.stdout and "pad the vocabulary to 640" in result.stdout
    (tmp_path / "pyproject.toml").write_text("[tool.mplint]\nalignment = \"eight\"\n")
    result = cli("check", "model.py", cwd=tmp_path)
    assert outcome(result) == (2, []) and "alignment" in result.stderr


def test_size_written_again_in_a_reshape_target_is_a_data_dimension():
    """Conv2D(36) then Reshape((36, t, -1)): the 36 mel features of the data, pinned
    by the reshape (rounding one literal breaks the other)."""
    body = ("def generator(x, t):\n    x = layers.Conv2D(36, (5, 15), padding='same')(x)\n"
            "    x = layers.Reshape((36, t, -1))(x)\n    y = tf.reshape(x, [-1, 44])\n"
            "    return layers.Conv2D(1, 7)(x)\n")
    assert _lint(body) == []
    # the reshape sits in another function: the width is not pinned here
    other = ("def generator(x):\n    return layers.Conv2D(36, 3)(x)\n\n"
             "def head(x):\n    return layers.Reshape((36, -1))(x)\n")
    assert [f.rule for f in _lint(other)] == ["MP302"]
    # a reshape's tensor argument is not a shape: tf.reshape(36-wide x, ...) pins nothing
    ops = "def block(x):\n    x = layers.Dense(44)(x)\n    return tf.reshape(x, [-1, 2, 22])\n"
    assert [f.rule for f in _lint(ops)] == ["MP301"]
