"""``train_step=True``: the model's own ``train_step`` runs under the policy and in float32,
and the updates it asks for are compared (real TensorFlow on the CPU, tiny models)."""

import pytest

tf = pytest.importorskip("tensorflow")

from mplint.runtime import check_model  # noqa: E402
from mplint.runtime.keras_env import keras_major  # noqa: E402
from runtime_support import float32_outside, pairs  # noqa: E402,F401

keras = tf.keras
pytestmark = pytest.mark.skipif(keras_major(keras) < 3, reason="Keras 3 train_step semantics")


class GuideModel(keras.Model):
    """The Keras guide's custom train_step: `x, y = data`, loss scaled as Keras 3 wants."""

    def train_step(self, data):
        x, y = data
        with tf.GradientTape() as tape:
            y_pred = self(x, training=True)
            loss = self.compute_loss(y=y, y_pred=y_pred)
            scaled = self.optimizer.scale_loss(loss)
        grads = tape.gradient(scaled, self.trainable_variables)
        self.optimizer.apply(grads, self.trainable_variables)
        return {"loss": loss}


class ForgetsToScale(keras.Model):
    """Differentiates the plain loss; compile() wrapped the optimizer in a LossScaleOptimizer,
    whose apply() divides every gradient by 32768."""

    def train_step(self, data):
        x, y = data
        with tf.GradientTape() as tape:
            loss = self.compute_loss(y=y, y_pred=self(x, training=True))
        grads = tape.gradient(loss, self.trainable_variables)
        self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
        return {"loss": loss}


class UnscalesByHand(keras.Model):
    """Keras 2 habits on Keras 3: scales, then divides by the scale itself, and apply()
    divides again."""

    def train_step(self, data):
        x, y = data
        with tf.GradientTape() as tape:
            loss = self.compute_loss(y=y, y_pred=self(x, training=True))
            scaled = self.optimizer.scale_loss(loss)
        grads = tape.gradient(scaled, self.trainable_variables)
        grads = [g / self.optimizer.dynamic_scale for g in grads]
        self.optimizer.apply(grads, self.trainable_variables)
        return {"loss": loss}


def classifier(cls):
    def build():
        inputs = keras.Input((16,))
        x = keras.layers.Dense(32, activation="relu")(inputs)
        x = keras.layers.Dense(4)(x)
        outputs = keras.layers.Activation("softmax", dtype="float32")(x)
        model = cls(inputs, outputs)
        model.compile(optimizer="sgd", loss="sparse_categorical_crossentropy")
        return model
    return build


def test_guide_style_train_step_runs_and_passes():
    report = check_model(classifier(GuideModel), "mixed_float16", train_step=True)
    assert pairs(report) == [], report.to_text()
    [ts] = report.train_step
    assert ts["data"] == "(x, y)" and ts["applied"] is True
    assert ts["update_ratio"] == pytest.approx(1.0, rel=0.05)
    assert ts["loss_scale"] == 32768


def test_custom_train_step_that_forgets_to_scale_is_mp202():
    report = check_model(classifier(ForgetsToScale), "mixed_float16", train_step=True)
    assert pairs(report) == [("MP202", None)], report.to_text()
    message = report.findings[0].message
    assert "its own train_step" in message and "32768x smaller than in float32" in message
    assert report.train_step[0]["update_ratio"] == pytest.approx(1 / 32768, rel=0.05)
    # Under bfloat16 compile() adds no LossScaleOptimizer: nothing divides, nothing to report.
    report = check_model(classifier(ForgetsToScale), "mixed_bfloat16", train_step=True)
    assert pairs(report) == []


def test_gradients_unscaled_twice_are_mp206():
    report = check_model(classifier(UnscalesByHand), "mixed_float16", train_step=True)
    assert pairs(report) == [("MP206", None)], report.to_text()
    assert "unscaled twice" in report.findings[0].message


def test_default_train_step_with_dict_outputs_and_different_losses():
    def build():
        inputs = {"image": keras.Input((8, 8, 3), name="image"), "meta": keras.Input((8,), name="meta")}
        x = keras.layers.Conv2D(8, 3, activation="relu")(inputs["image"])
        x = keras.layers.Concatenate()([keras.layers.GlobalAveragePooling2D()(x), inputs["meta"]])
        x = keras.layers.Dense(16, activation="relu")(x)
        label = keras.layers.Activation("softmax", dtype="float32", name="label")(keras.layers.Dense(5)(x))
        box = keras.layers.Dense(4, dtype="float32", name="box")(x)
        present = keras.layers.Dense(1, activation="sigmoid", dtype="float32", name="present")(x)
        model = keras.Model(inputs, {"label": label, "box": box, "present": present})
        model.compile(optimizer="adam", loss={"label": "sparse_categorical_crossentropy", "box": "mse",
                                              "present": "binary_crossentropy"})
        return model

    report = check_model(build, "mixed_float16", train_step=True)
    assert pairs(report) == [], report.to_text()
    [ts] = report.train_step
    assert ts["data"] == "(x, y) with dicts"
    assert ts["update_ratio"] == pytest.approx(1.0, rel=0.05)
    assert ts["variables_compared"] == 10


def test_multi_output_list_with_a_list_of_losses():
    def build():
        inputs = keras.Input((16,))
        x = keras.layers.Dense(16, activation="relu")(inputs)
        a = keras.layers.Dense(3, activation="softmax", dtype="float32")(x)
        b = keras.layers.Dense(2, dtype="float32")(x)
        model = keras.Model(inputs, [a, b])
        model.compile(optimizer="sgd", loss=["categorical_crossentropy", "mae"])
        return model

    report = check_model(build, "mixed_float16", train_step=True)
    assert pairs(report) == [] and report.train_step[0]["applied"] is True, report.to_text()


class BlowsUpWhenTraining(keras.layers.Layer):
    """Finite at inference, beyond float16's range in training mode."""

    def call(self, x, training=False):
        return x * 1e6 if training else x


def test_inf_in_the_training_step_names_the_first_layer():
    def build():
        inputs = keras.Input((8,))
        x = keras.layers.Dense(16)(inputs)
        x = BlowsUpWhenTraining(name="boom")(x)
        x = keras.layers.Dense(4, name="head")(x)
        model = keras.Model(inputs, keras.layers.Activation("softmax", dtype="float32")(x))
        model.compile(optimizer="sgd", loss="sparse_categorical_crossentropy", auto_scale_loss=False)
        return model

    report = check_model(build, "mixed_float16", train_step=True)
    mp501 = [f for f in report.findings if f.rule == "MP501"]
    assert [(f.layer, f.layer_class) for f in mp501] == [("boom", "BlowsUpWhenTraining")], report.to_text()
    assert "training step" in mp501[0].message
    assert report.train_step[0]["loss_finite"] is False
    # bfloat16 has float32's range: finite.
    assert pairs(check_model(build, "mixed_bfloat16", train_step=True)) == []


def test_a_built_model_keeps_its_weights_and_optimizer():
    keras.mixed_precision.set_global_policy("mixed_float16")
    try:
        model = classifier(GuideModel)()
    finally:
        keras.mixed_precision.set_global_policy("float32")
    before = [w.copy() for w in model.get_weights()]
    optimizer = model.optimizer
    report = check_model(model, train_step=True)
    assert report.policy == "mixed_float16" and report.policy_source == "model"
    assert report.train_step[0]["update_ratio"] == pytest.approx(1.0, rel=0.05)
    assert model.optimizer is optimizer and not model.run_eagerly
    assert all((a == b).all() for a, b in zip(before, model.get_weights()))


class WantsSampleWeights(keras.Model):
    """A train_step that unpacks three items: (x, y) fails, (x, y, sample_weight) runs."""

    def train_step(self, data):
        x, y, sample_weight = data
        with tf.GradientTape() as tape:
            loss = self.compute_loss(y=y, y_pred=self(x, training=True), sample_weight=sample_weight)
            scaled = self.optimizer.scale_loss(loss)
        self.optimizer.apply(tape.gradient(scaled, self.trainable_variables), self.trainable_variables)
        return {"loss": loss}


def test_a_train_step_that_wants_sample_weights_gets_them():
    report = check_model(classifier(WantsSampleWeights), "mixed_float16", train_step=True)
    [ts] = report.train_step
    assert ts["data"] == "(x, y, sample_weight)", ts
    assert ts["update_ratio"] == pytest.approx(1.0, rel=0.05) and pairs(report) == []
