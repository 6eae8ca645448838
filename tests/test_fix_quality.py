"""Fixes a reviewer would merge as they are (issue 27, item 20): no dead code left by
MP401, no version-compatibility branch collapsed by MP402, no MP303 fix of a batch
that does not feed training, and MP102 judging every arm that assigns the output."""

import pytest

from helpers import fired, fix, lint

pytestmark = pytest.mark.usefixtures("no_installed_keras")

POLICY = 'import tensorflow as tf\ntf.keras.mixed_precision.set_global_policy("mixed_float16")\n'
REWRITE = "tf.compat.v1.mixed_precision.enable_mixed_precision_graph_rewrite"


# -- MP401: the rewrite goes, and what only it needed goes with it ---------------------------
def test_mp401_drops_an_if_the_rewrite_alone_filled_and_keeps_a_section_comment():
    code = POLICY + f"""
def build(opt, amp):
    # Optimizer

    if amp:
        # the rewrite wants a float32 model
        opt = {REWRITE}(opt)
    return opt
"""
    assert fix(code, "MP401") == POLICY + """
def build(opt, amp):
    # Optimizer

    return opt
"""


def test_mp401_drops_the_loss_scale_variable_only_the_rewrite_read():
    code = POLICY + f"""
def build(opt):
    scale = tf.compat.v1.mixed_precision.DynamicLossScale()  # the rewrite scales the loss
    opt = {REWRITE}(opt, loss_scale=scale)
    return opt

def other(opt):
    scale = 128.0
    opt2 = {REWRITE}(opt, scale)
    print(scale)
    return opt2
"""
    assert fix(code, "MP401") == POLICY + """
def build(opt):
    return opt

def other(opt):
    scale = 128.0
    opt2 = opt
    print(scale)
    return opt2
"""


def test_mp401_never_leaves_a_self_assignment_or_an_empty_else():
    code = POLICY + f"""
class Trainer:
    def setup(self, amp):
        self.opt = {REWRITE}(self.opt)
        if amp:
            print("amp")
        else:
            self.opt = {REWRITE}(self.opt)
"""
    assert fix(code, "MP401") == POLICY + """
class Trainer:
    def setup(self, amp):
        if amp:
            print("amp")
"""


@pytest.mark.parametrize("body", [
    # the ``if`` would keep only its ``else``
    f"    if amp:\n        opt = {REWRITE}(opt)\n    else:\n        print(1)\n",
    # a loop body would be empty
    f"    for _ in range(2):\n        opt = {REWRITE}(opt)\n",
    # the test calls something: dropping the ``if`` would drop the call
    f"    if check(amp):\n        opt = {REWRITE}(opt)\n",
    # two statements on one line
    f"    n = 1; opt = {REWRITE}(opt)\n",
])
def test_mp401_offers_no_fix_rather_than_dead_code(body):
    code = POLICY + "def f(opt, amp):\n" + body + "    return opt\n"
    findings = lint(code, "MP401")
    assert [f.rule for f in findings] == ["MP401"]
    assert findings[0].fix is None


# -- MP402: compatibility branches stay as they are ----------------------------------------
@pytest.mark.parametrize("code", [
    # a conditional expression on a version tuple with no "version" in its test
    'import tensorflow as tf\n'
    'opt = tf.keras.mixed_precision.LossScaleOptimizer(opt) if ver >= (2, 4) '
    'else tf.keras.mixed_precision.experimental.LossScaleOptimizer(opt, "dynamic")\n',
    # a feature flag whose other arm calls the current API
    'import tensorflow as tf\n'
    'if NEW_TF:\n    tf.keras.mixed_precision.set_global_policy("mixed_float16")\n'
    'else:\n    tf.keras.mixed_precision.experimental.set_policy("mixed_float16")\n',
    # the same with the import of the removed module in the old arm
    'import tensorflow as tf\n'
    'if NEW_TF:\n    from tensorflow.keras import mixed_precision\n'
    'else:\n    from tensorflow.keras.mixed_precision import experimental as mixed_precision\n',
    # try the new API, fall back on the old
    'import tensorflow as tf\n'
    'try:\n    tf.keras.mixed_precision.set_global_policy("mixed_float16")\n'
    'except AttributeError:\n    tf.keras.mixed_precision.experimental.set_policy("mixed_float16")\n',
])
def test_mp402_leaves_compatibility_branches_alone(code):
    assert lint(code, "MP402") == []


def test_mp402_still_rewrites_an_if_whose_arms_both_use_the_old_api():
    code = (
        'import tensorflow as tf\n'
        'if amp:\n    tf.keras.mixed_precision.experimental.set_policy("mixed_float16")\n'
        '    opt = tf.keras.mixed_precision.LossScaleOptimizer(opt)\n'
        'else:\n    tf.keras.mixed_precision.experimental.set_policy("float32")\n'
    )
    assert fired(code, "MP402") == [(3, "MP402"), (6, "MP402")]


def test_mp402_dropped_last_argument_keeps_the_closing_parenthesis_on_its_line():
    code = (
        "import tensorflow as tf\n"
        "opt = tf.keras.mixed_precision.experimental.LossScaleOptimizer(\n"
        '    opt, "dynamic"\n'
        ")\n"
    )
    assert fix(code, "MP402") == (
        "import tensorflow as tf\n"
        "opt = tf.keras.mixed_precision.LossScaleOptimizer(\n"
        "    opt\n"
        ")\n"
    )


# -- MP303: only batches that feed training ------------------------------------------------
def test_mp303_reports_a_pipeline_that_a_train_loop_reads_through_a_helper():
    code = POLICY + """
def make_dataset(files):
    ds = tf.data.TFRecordDataset(files).map(parse)
    return ds.shuffle(1000).batch(100).prefetch(1)

@tf.function
def train_step(x, y):
    with tf.GradientTape() as tape:
        loss = loss_fn(y, model(x))
    opt.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))

for epoch in range(3):
    for x, y in make_dataset(files):
        train_step(x, y)
"""
    assert fired(code, "MP303") == [(6, "MP303")]
    assert "batch(104)" in fix(code, "MP303")


def test_mp303_reports_a_dataset_iterated_through_next_in_a_distributed_loop():
    code = POLICY + """
train = strategy.experimental_distribute_dataset(tf.data.Dataset.range(100).batch(50))
it = iter(train)
while step < 100:
    strategy.run(train_step, args=(next(it),))
"""
    assert fired(code, "MP303") == [(4, "MP303")]


@pytest.mark.parametrize("code", [
    # a grid of 9 images to show
    "for images, labels in train_ds.unbatch().batch(9).take(1):\n    show(images)\n",
    # rows to print, then the same pipeline evaluated
    "ds = tf.data.Dataset.range(100).batch(10)\nfor rows in ds.take(2):\n    print(rows)\nmodel.evaluate(ds)\n",
    # a timing loop over a padded batch
    "mel_ds = tf.data.Dataset.from_generator(gen, tf.float32).padded_batch(10)\n"
    "for batch in mel_ds.take(5):\n    griffin_lim(batch)\n",
    # prediction and evaluation batch sizes
    "p = model.predict(x, batch_size=30)\nmodel.evaluate(x, y, batch_size=100)\n",
    # returned to another module: where it goes cannot be followed
    "def get_dataset():\n    return tf.data.Dataset.range(9).batch(20)\n",
])
def test_mp303_silent_on_batches_that_do_not_feed_training(code):
    assert lint(POLICY + code, "MP303") == []


def test_mp303_silent_in_tests_even_where_the_test_sets_the_policy():
    code = POLICY + "model.fit(x, y, batch_size=10)\n"
    assert fired(code, "MP303") == [(3, "MP303")]
    assert lint(code, "MP303", path="tests/test_model.py") == []


# -- MP102: every arm that assigns the output ----------------------------------------------
BUILD = POLICY + """from tensorflow.keras import layers

def build(task):
    inputs = tf.keras.Input((16,))
    x = layers.Dense(64)(inputs)
{arms}    model = tf.keras.Model(inputs, out)
    model.compile(optimizer="adam", loss="mse")
    return model
"""


def test_mp102_judges_every_arm_that_assigns_the_output():
    code = BUILD.format(arms=(
        '    if task == "regression":\n'
        "        out = layers.Dense(1)(x)\n"
        '    elif task == "binary":\n'
        '        out = layers.Dense(1, activation="sigmoid", dtype="float32")(x)\n'
        "    else:\n"
        "        out = layers.Dense(4)(x)\n"))
    assert fired(code, "MP102") == [(9, "MP102"), (13, "MP102")]
    fixed = fix(code, "MP102")
    assert 'out = layers.Dense(1, dtype="float32")(x)' in fixed
    assert 'out = layers.Dense(4, dtype="float32")(x)' in fixed


def test_mp101_judges_the_head_arm_after_a_loop_of_blocks_and_other_arms():
    # a model zoo's constructor: blocks in a loop, then a head, the backbone's features
    # or a pooling chosen by flags; no arm keeps the output in float32, so none overrides
    code = BUILD.format(arms=(
        "    features = [x]\n"
        "    for _ in range(2):\n"
        "        x = layers.Dense(64)(x)\n"
        "        features.append(x)\n"
        "    if task == 'top':\n"
        "        x = layers.Dense(64)(x)\n"
        "        x = layers.Dense(10, activation='softmax')(x)\n"
        "    elif task == 'backbone':\n"
        "        x = features\n"
        "    out = x\n"))
    assert fired(code, "MP101") == [(14, "MP101")]


def test_mp102_silent_when_a_conditional_float32_layer_overrides_the_output():
    # the override's condition may hold whenever the policy is mixed: not the same as two arms
    code = BUILD.format(arms=(
        "    out = layers.Dense(1)(x)\n"
        "    if task:\n"
        '        out = layers.Activation("linear", dtype="float32")(out)\n'))
    assert lint(code, "MP102") == []


# -- MP201's fix (loss_scale_fixes): never half a fix ---------------------------------------
STEP = POLICY + """
def train(model, gpu):
{create}
    @tf.function
    def step(x):
        with tf.GradientTape() as tape:
            loss = model(x)
        gradients = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(gradients, model.trainable_variables))
"""


def test_mp201_wraps_no_optimizer_when_another_arm_makes_another():
    # wrapping only one would call get_scaled_loss on a plain SGD on the other path
    both = STEP.format(create="    if gpu:\n        optimizer = tf.keras.optimizers.SGD(1.)\n"
                              "    else:\n        optimizer = tf.keras.optimizers.SGD(1.)\n")
    keras2 = {"keras_version": 2}
    [finding] = lint(both, "MP201", **keras2)
    assert finding.fix is None
    one = STEP.format(create="    optimizer = tf.keras.optimizers.SGD(1.)\n")
    assert "LossScaleOptimizer(tf.keras.optimizers.SGD(1.))" in fix(one, "MP201", **keras2)


BLOCK = POLICY + """
class DownBlock(tf.keras.Model):
    def __init__(self, filters):
        super().__init__()
        self.conv = tf.keras.layers.Conv2D(filters, 3, activation="relu")
        self.pool = tf.keras.layers.MaxPool2D()

    def call(self, inputs):
        skip = self.conv(inputs)
        return self.pool(skip), skip
"""


def test_mp102_offers_no_fix_inside_a_model_class_never_run_as_a_whole():
    # another module builds a UNet from these blocks: float32 layers here are no fix
    findings = lint(BLOCK, "MP102")
    assert findings and all(f.fix is None for f in findings)
    trained = BLOCK + "\nblock = DownBlock(64)\nblock.compile(optimizer='adam', loss='mse')\n"
    assert {f.fix for f in lint(trained, "MP102")} == {"safe"}


def test_mp401_drops_the_message_that_announced_the_rewrite():
    code = POLICY + f"""
def build(optimizer, flags):
    # Enable mixed precision training
    if flags.automatic_mixed_precision:
        log_info("Enabling automatic mixed precision training.")
        optimizer = {REWRITE}(optimizer)
    if flags.verbose:
        print("rewrite")
        optimizer = {REWRITE}(optimizer)
        optimizer.minimize(loss)
    return optimizer
"""
    assert fix(code, "MP401") == POLICY + """
def build(optimizer, flags):
    if flags.verbose:
        print("rewrite")
        optimizer.minimize(loss)
    return optimizer
"""
