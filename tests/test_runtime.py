"""The runtime checker on real TensorFlow (CPU), in this process: one TF import for all.

Every fixture model is checked for exactly the findings it should produce, as
(rule, layer) pairs; the numbers in the messages are the ones a run resolves.
"""

import json
from pathlib import Path

import pytest

tf = pytest.importorskip("tensorflow")

from mplint.runtime import assert_mixed_precision_safe, check_model, hardware  # noqa: E402
from mplint.runtime.check import CheckError  # noqa: E402
from mplint.runtime.keras_env import keras_major  # noqa: E402
from mplint.runtime.report import SCHEMA_PATH  # noqa: E402
from mplint.runtime.target import load_target  # noqa: E402
from runtime_support import float32_outside, pairs  # noqa: E402,F401

ROOT = Path(__file__).resolve().parent.parent
FIX = ROOT / "fixtures" / "runtime"
keras = tf.keras
KERAS3 = keras_major(keras) >= 3


def factory(spec):
    return load_target(str(FIX / spec)).factory


CASES = [
    ("mnist_guide.py:build_incorrect_model", "mixed_float16", {}, [("MP101", "predictions")]),
    ("mnist_guide.py:build_incorrect_model", "mixed_bfloat16", {}, [("MP101", "predictions")]),
    ("mnist_guide.py:build_correct_model", "mixed_float16", {}, []),
    ("mnist_guide.py:build_correct_model", "mixed_bfloat16", {}, []),
    ("cnn_unaligned.py:build_model", "mixed_float16", {},
     [("MP301", "hidden"), ("MP301", "hidden"), ("MP302", "conv_b")]),
    ("cnn_unaligned.py:build_model", "mixed_float16", {"batch_size": 50},
     [("MP301", "hidden"), ("MP301", "hidden"), ("MP302", "conv_b"), ("MP303", None)]),
    ("cnn_unaligned.py:build_model", "float32", {"batch_size": 50}, []),
    ("cnn_unaligned.py:build_aligned_model", "mixed_float16", {}, []),
    ("subclassed.py:build_model", "mixed_float16", {}, [("MP101", None)]),
    ("subclassed.py:build_correct_model", "mixed_float16", {}, []),
    ("attention_mask.py:build_model", "mixed_float16", {}, [("MP501", "attention")]),
    # bfloat16 has float32's range: -1e9 stays finite, nothing to report.
    ("attention_mask.py:build_model", "mixed_bfloat16", {}, []),
    ("attention_mask.py:build_correct_model", "mixed_float16", {}, []),
    ("pure_float16.py:build_model", "mixed_float16", {}, [("MP404", "hidden")]),
    ("pure_float16.py:build_model", "float32", {}, [("MP404", "hidden")]),
    ("hard_coded_float32.py:build_model", "mixed_float16", {}, [("MP504", "noise")]),
    ("hard_coded_float32.py:build_model", "mixed_bfloat16", {}, [("MP504", "noise")]),
    ("hard_coded_float32.py:build_model", "float32", {}, []),
    ("hard_coded_float32.py:build_correct_model", "mixed_float16", {}, []),
]


@pytest.mark.parametrize("spec,policy,kwargs,expected", CASES,
                         ids=[f"{c[0]}-{c[1]}-{c[2]}" for c in CASES])
def test_fixture_models_give_exactly_the_expected_findings(spec, policy, kwargs, expected):
    report = check_model(factory(spec), policy, **kwargs)
    assert pairs(report) == sorted(expected), report.to_text()
    assert report.ok == (not expected)
    assert report.policy == policy and report.policy_source == "argument"


def test_messages_carry_the_resolved_numbers():
    report = check_model(factory("cnn_unaligned.py:build_model"), "mixed_float16", batch_size=50)
    messages = sorted(f.message for f in report.findings)
    assert any("filters=30" in m and "use 32" in m for m in messages)
    assert any("units=100" in m and "use 104" in m for m in messages)
    # 5 x 5 x 30 after Flatten: in no line of the source.
    assert any("750 input features" in m and "752" in m for m in messages)
    assert any("batch size 50" in m and "56" in m for m in messages)
    rows = {r["name"]: r for r in report.layers}
    assert rows["hidden"]["dims"] == {"units": 100, "input_features": 750}
    assert rows["conv_b"]["dims"] == {"filters": 30, "input_channels": 32}
    assert rows["hidden"]["compute_dtype"] == "float16"
    assert rows["hidden"]["variable_dtype"] == "float32"
    assert rows["predictions"]["output_dtype"] == "float32"


def test_output_dtypes_come_from_a_real_forward_pass():
    report = check_model(factory("mnist_guide.py:build_incorrect_model"), "mixed_float16")
    assert report.outputs == [{"index": 0, "shape": [8, 10], "dtype": "float16",
                               "layer": "predictions", "softmax": True}]
    report = check_model(factory("mnist_guide.py:build_correct_model"), "mixed_bfloat16")
    assert report.outputs[0]["dtype"] == "float32"
    assert report.model["inputs"] == [{"shape": [8, 784], "dtype": "float32"}]


def test_non_softmax_16bit_output_is_mp102():
    def regression():
        inputs = keras.Input((16,))
        x = keras.layers.Dense(32, activation="relu")(inputs)
        return keras.Model(inputs, keras.layers.Dense(1, name="price")(x))

    report = check_model(regression, "mixed_float16")
    assert pairs(report) == [("MP102", "price")]
    assert "float16, not float32" in report.findings[0].message


def test_the_nan_layer_is_named_and_float32_is_compared():
    report = check_model(factory("attention_mask.py:build_model"), "mixed_float16")
    rows = {r["name"]: r for r in report.layers}
    assert rows["attention"]["finite"] is False
    assert rows["attention"]["finite_float32"] is True
    assert rows["embed"]["finite"] is True  # before the mask: fine
    assert "but is finite in float32" in report.findings[0].message


def test_inf_in_float32_too_is_not_a_precision_problem():
    class Overflow(keras.layers.Layer):
        def call(self, x):
            return x * 1e39  # beyond float32 too

    def build():
        inputs = keras.Input((8,))
        return keras.Model(inputs, keras.layers.Dense(8, dtype="float32")(Overflow(name="boom")(inputs)))

    report = check_model(build, "mixed_float16")
    assert pairs(report) == []
    assert any("'boom' outputs inf/NaN in float32 too" in n for n in report.notes)


def test_policy_restored_after_the_factory_raises():
    keras.mixed_precision.set_global_policy("mixed_bfloat16")
    seen = []

    def broken():
        seen.append(keras.mixed_precision.global_policy().name)
        keras.layers.Dense(4)
        raise RuntimeError("factory broke")

    try:
        with pytest.raises(RuntimeError, match="factory broke"):
            check_model(broken, "mixed_float16")
        assert seen == ["mixed_float16"]
        assert keras.mixed_precision.global_policy().name == "mixed_bfloat16"
    finally:
        keras.mixed_precision.set_global_policy("float32")


class NoisyLayer(keras.layers.Layer):
    """The most reported pitfall: float32 noise added to float16 inputs."""

    def call(self, x):
        return x + tf.random.normal(tf.shape(x))


class Wrapper(keras.Model):
    def __init__(self, layer):
        super().__init__()
        self.inner = layer

    def call(self, x):
        return self.inner(x)


def test_hard_coded_float32_in_a_layer_is_mp504_with_the_layer():
    report = check_model(lambda: Wrapper(NoisyLayer(name="noise")), "mixed_float16", input_shape=(8,))
    assert pairs(report) == [("MP504", "noise")]
    assert "runs in float32" in report.findings[0].message
    assert "half" in report.findings[0].message or "float16" in report.findings[0].message
    assert report.model["inputs"] == [{"shape": [8, 8], "dtype": "float32"}]
    assert keras.mixed_precision.global_policy().name == "float32"


def test_hard_coded_float32_found_while_keras_traces_a_functional_model():
    def build():
        inputs = keras.Input((8,))
        x = NoisyLayer(name="noise")(keras.layers.Dense(8)(inputs))
        return keras.Model(inputs, keras.layers.Dense(1, dtype="float32")(x))

    report = check_model(build, "mixed_float16")
    assert [f.rule for f in report.findings] == ["MP504"]
    assert report.findings[0].layer_class == "NoisyLayer"
    assert report.ok is False and report.policy == "mixed_float16"
    assert check_model(build, "float32").ok  # the same model is fine in float32


def test_policy_restored_after_a_failing_forward_pass_and_after_success():
    class Broken(keras.layers.Layer):
        def call(self, x):
            raise ValueError("broken on purpose")

    with pytest.raises(CheckError, match="forward pass failed under mixed_float16: ValueError: broken on purpose"):
        check_model(lambda: Wrapper(Broken()), "mixed_float16", input_shape=(8,))
    assert keras.mixed_precision.global_policy().name == "float32"
    check_model(factory("mnist_guide.py:build_correct_model"), "mixed_float16")
    assert keras.mixed_precision.global_policy().name == "float32"


def test_a_built_model_is_checked_as_built_and_compared_via_its_config():
    keras.mixed_precision.set_global_policy("mixed_float16")
    try:
        model = factory("attention_mask.py:build_model")()
        incorrect = factory("mnist_guide.py:build_incorrect_model")()
    finally:
        keras.mixed_precision.set_global_policy("float32")
    report = check_model(model)
    assert report.policy == "mixed_float16" and report.policy_source == "model"
    assert pairs(report) == [("MP501", "attention")]
    assert "but is finite in float32" in report.findings[0].message
    assert pairs(check_model(incorrect)) == [("MP101", "predictions")]
    # Its call methods are its own again.
    assert "call" not in vars(model.get_layer("attention"))


def test_subclassed_model_without_known_inputs_asks_for_the_shape():
    class Tiny(keras.Model):
        def __init__(self):
            super().__init__()
            self.dense = keras.layers.Dense(16, name="out")

        def call(self, x):
            return self.dense(x)

    with pytest.raises(CheckError, match="input shape"):
        check_model(Tiny, "mixed_float16")
    report = check_model(Tiny, "mixed_float16", input_shape=(12,))
    assert report.model["inputs"] == [{"shape": [8, 12], "dtype": "float32"}]
    # 16 units: the output width is the data's; 12 input features are not aligned.
    assert pairs(report) == [("MP102", "out"), ("MP301", "out")]
    assert "receives 12 input features" in report.findings[1].message


def test_large_output_vocabulary_is_mp304_small_one_silent():
    def lm(vocab):
        def build():
            tokens = keras.Input((8,), dtype="int32")
            x = keras.layers.Embedding(vocab, 64)(tokens)
            x = keras.layers.Dense(vocab, name="vocab_logits")(x)
            return keras.Model(tokens, keras.layers.Activation("softmax", dtype="float32")(x))
        return build

    assert pairs(check_model(lm(30001), "mixed_float16")) == [("MP304", "vocab_logits")]
    assert pairs(check_model(lm(10), "mixed_float16")) == []


def _tiny_loss_model(auto_scale_loss=True):
    def build():
        # Linear and seeded: a relu unit whose float16 pre-activation rounds to the other side of
        # zero gets no update where float32's does, by chance of the initial weights, not underflow.
        inputs = keras.Input((8,))
        x = keras.layers.Dense(16, kernel_initializer=keras.initializers.GlorotUniform(seed=1))(inputs)
        out = keras.layers.Dense(1, name="out", kernel_initializer=keras.initializers.GlorotUniform(seed=2))(x)
        # float16 output: dL/dy is float16 and underflows
        model = keras.Model(inputs, out)
        kwargs = {} if auto_scale_loss else {"auto_scale_loss": False}
        model.compile(optimizer="sgd", loss=lambda y, p: 1e-8 * tf.reduce_mean(
            tf.square(tf.cast(y, tf.float32) - tf.cast(p, tf.float32))), **kwargs)
        return model
    return build


def test_train_step_with_the_loss_scale_optimizer_updates_as_float32_does():
    report = check_model(_tiny_loss_model(), "mixed_float16", train_step=True)
    [ts] = report.train_step
    # Keras 2 names it LossScaleOptimizerV3.
    assert ts["optimizer"].startswith("LossScaleOptimizer") and ts["optimizer_scales_loss"] is True
    assert ts["data"] == "(x, y)" and ts["batch_size"] == 2 and ts["applied"] is True
    assert 0.9 < ts["update_ratio"] < 1.1, ts
    assert ts["zero_update_fraction"]["policy"] < 0.01, ts
    assert pairs(report) == [("MP102", "out")]


@pytest.mark.skipif(not KERAS3, reason="compile(auto_scale_loss=...) is Keras 3")
def test_train_step_underflow_without_loss_scaling_is_mp201_with_the_measured_zeros():
    report = check_model(_tiny_loss_model(auto_scale_loss=False), "mixed_float16", train_step=True)
    [ts] = report.train_step
    assert ts["zero_update_fraction"]["policy"] > 0.5, ts  # gradients flushed to zero in float16
    assert ts["zero_update_fraction"]["float32"] < 0.5, ts
    mp201 = [f for f in report.findings if f.rule == "MP201"]
    assert len(mp201) == 1 and "get no update where float32's is not zero" in mp201[0].message


@pytest.mark.skipif(not KERAS3, reason="compile(auto_scale_loss=...) is Keras 3")
def test_train_step_without_loss_scaling_is_mp201():
    def build():
        model = factory("mnist_guide.py:build_correct_model")()
        model.compile(optimizer="sgd", loss="sparse_categorical_crossentropy", auto_scale_loss=False)
        return model

    report = check_model(build, "mixed_float16", train_step=True)
    assert pairs(report) == [("MP201", None)]
    assert report.train_step[0]["optimizer_scales_loss"] is False
    # bfloat16 needs no loss scaling.
    assert pairs(check_model(build, "mixed_bfloat16", train_step=True)) == []


@pytest.mark.skipif(not KERAS3, reason="Keras 2 refuses to wrap twice")
def test_train_step_double_wrapped_optimizer_is_mp205():
    def build():
        model = factory("mnist_guide.py:build_correct_model")()
        lso = keras.mixed_precision.LossScaleOptimizer
        model.compile(optimizer=lso(lso(keras.optimizers.SGD())), loss="sparse_categorical_crossentropy")
        return model

    report = check_model(build, "mixed_float16", train_step=True)
    assert pairs(report) == [("MP205", None)]
    # Measured, not only seen on the type: the inner scale divides the updates.
    assert "updates 32768x too small" in report.findings[0].message
    assert report.train_step[0]["update_ratio"] == pytest.approx(1 / 32768, rel=0.1)


def test_train_step_needs_a_compiled_model():
    def build():
        inputs = keras.Input((4,))
        return keras.Model(inputs, keras.layers.Dense(8, dtype="float32")(inputs))

    report = check_model(build, "mixed_float16", train_step=True)
    assert "not compiled" in report.train_step[0]["skipped"]


def test_hardware_decides_only_the_advice_not_the_hazards(monkeypatch):
    """On a V100 host, on a TPU host and on this CPU, no policy given: both 16-bit types
    are checked, so a float16-only bug (a -1e9 mask) is found everywhere."""
    machines = {
        "v100": [hardware.Device("CPU", "/physical_device:CPU:0"),
                 hardware.Device("GPU", "/physical_device:GPU:0",
                                 {"device_name": "Tesla V100-SXM2-16GB", "compute_capability": (7, 0)})],
        "tpu": [hardware.Device("CPU", "/physical_device:CPU:0"),
                hardware.Device("TPU", "/physical_device:TPU:0")],
        "this cpu": None,
    }
    real = hardware.query_devices
    for name, devices in machines.items():
        monkeypatch.setattr(hardware, "query_devices", (lambda d=devices: list(d)) if devices else real)
        report = check_model(factory("attention_mask.py:build_model"))
        assert report.policies == ["mixed_float16", "mixed_bfloat16"], name
        assert report.policy_source == "default"
        # -1e9 is -inf in float16 only: a finding under mixed_float16, tagged as such.
        assert [(f.rule, f.layer, f.policy) for f in report.findings] == [
            ("MP501", "attention", "mixed_float16")], (name, report.to_text())
        verdicts = report.hardware["verdicts"]
        assert set(verdicts) == {"mixed_float16", "mixed_bfloat16"}
    monkeypatch.setattr(hardware, "query_devices", machines["v100"].copy)
    assert check_model(factory("mnist_guide.py:build_correct_model")).hardware["default_policy"] == \
        "mixed_float16"
    monkeypatch.setattr(hardware, "query_devices", machines["tpu"].copy)
    report = check_model(factory("mnist_guide.py:build_correct_model"), "mixed_float16")
    assert pairs(report) == [("MP403", None)]
    # Asked for by default (not by the user), float16 on a TPU host is no MP403.
    assert pairs(check_model(factory("mnist_guide.py:build_correct_model"))) == []


def test_findings_under_both_policies_are_reported_once():
    report = check_model(factory("mnist_guide.py:build_incorrect_model"))
    assert [(f.rule, f.layer, f.policy) for f in report.findings] == [("MP101", "predictions", None)]
    assert report.hardware["accelerator"] == "cpu"
    assert report.hardware["devices"][0]["type"] == "CPU"
    assert "Policy: mixed_float16 (default: both 16-bit types)" in report.to_text()
    assert "Policy: mixed_bfloat16 (default: both 16-bit types)" in report.to_text()


def test_report_json_follows_the_documented_schema():
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads(SCHEMA_PATH.read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    for report in (
        check_model(factory("cnn_unaligned.py:build_model"), "mixed_float16", batch_size=50,
                    train_step=True),
        check_model(factory("attention_mask.py:build_model"), "mixed_float16"),
        check_model(factory("subclassed.py:build_model"), "mixed_bfloat16"),
    ):
        data = json.loads(report.to_json())
        jsonschema.validate(data, schema)
        assert data["ok"] is report.ok and data["schema"] == "mplint-runtime-report/2"


def test_assert_helper_raises_with_the_readable_report():
    assert_mixed_precision_safe(factory("mnist_guide.py:build_correct_model"), "mixed_float16")
    with pytest.raises(AssertionError, match="MP101"):
        assert_mixed_precision_safe(factory("mnist_guide.py:build_incorrect_model"), "mixed_float16")


@pytest.mark.skipif(KERAS3, reason="Keras 2 (TF <= 2.15 or TF_USE_LEGACY_KERAS) only")
def test_keras2_guide_model():
    report = check_model(factory("mnist_guide.py:build_incorrect_model"), "mixed_float16", train_step=True)
    assert pairs(report) == [("MP101", "predictions")]
    assert report.train_step[0]["optimizer_scales_loss"] is True


def test_recurrent_attention_model_dims():
    layers = keras.layers

    def build():
        tokens = keras.Input((20,), dtype="int32")
        x = layers.Embedding(500, 50, name="embed")(tokens)
        x = layers.Bidirectional(layers.LSTM(30, return_sequences=True), name="bi")(x)
        x = layers.MultiHeadAttention(num_heads=2, key_dim=20, name="mha")(x, x)
        x = layers.GRU(64, name="gru")(x)
        return keras.Model(tokens, layers.Dense(3, activation="softmax", dtype="float32")(x))

    report = check_model(build, "mixed_float16")
    found = {(f.rule, f.layer_class): f.message for f in report.findings}
    assert set(found) == {("MP301", "Embedding"), ("MP301", "LSTM"), ("MP301", "MultiHeadAttention"),
                          ("MP301", "GRU")}, report.to_text()
    assert "output_dim=50" in found[("MP301", "Embedding")]
    assert "units=30" in found[("MP301", "LSTM")]
    assert "key_dim=20" in found[("MP301", "MultiHeadAttention")]  # value_dim defaults to it: once
    assert "60 input features" in found[("MP301", "GRU")]  # 2 x 30 from the Bidirectional concat
    assert len(report.findings) == 4  # the backward LSTM is the same size: not again


def test_dict_inputs_and_a_model_that_ignores_the_policy():
    layers = keras.layers

    def build():
        a, b = keras.Input((16,), name="a"), keras.Input((4, 2), name="b")
        x = layers.Concatenate()([layers.Dense(16)(a), layers.Flatten()(b)])
        return keras.Model({"a": a, "b": b}, layers.Dense(1, dtype="float32")(x))

    report = check_model(build, "mixed_float16")
    assert report.ok and [i["shape"] for i in report.model["inputs"]] == [[8, 16], [8, 4, 2]]

    prebuilt = build()  # built under float32, before any policy: rebuilt, never a silent pass
    report = check_model(lambda: prebuilt, "mixed_float16")
    assert report.ok, report.to_text()  # its Dense(1, dtype="float32") head stays float32
    assert any("checked a copy rebuilt under mixed_float16" in n for n in report.notes)
    rows = {r["class"]: r for r in report.layers}
    assert rows["Concatenate"]["compute_dtype"] == "float16"


def test_alignment_messages_name_the_unit_of_the_hardware(monkeypatch):
    cpu = hardware.Device("CPU", "/physical_device:CPU:0")
    v100 = hardware.Device("GPU", "/physical_device:GPU:0",
                           {"device_name": "Tesla V100-SXM2-16GB", "compute_capability": (7, 0)})
    xpu = hardware.Device("XPU", "/physical_device:XPU:0", {})
    monkeypatch.setattr(hardware, "query_devices", lambda: [cpu, v100])
    message = check_model(factory("cnn_unaligned.py:build_model"), "mixed_float16").findings[0].message
    assert message.endswith("Tensor Cores stay idle")
    monkeypatch.setattr(hardware, "query_devices", lambda: [cpu, xpu])
    message = check_model(factory("cnn_unaligned.py:build_model"), "mixed_bfloat16").findings[0].message
    assert message.endswith("XMX engines run padded, wasting work") and "Tensor Cores" not in message


def test_mp101_under_bfloat16_speaks_of_precision_not_overflow():
    f16 = check_model(factory("mnist_guide.py:build_incorrect_model"), "mixed_float16").findings[0].message
    bf16 = check_model(factory("mnist_guide.py:build_incorrect_model"), "mixed_bfloat16").findings[0].message
    assert "overflows" in f16
    assert "overflow" not in bf16 and "8 bits of precision" in bf16


def test_runtime_severities_match_the_static_catalog():
    catalog = pytest.importorskip("mplint.rule.catalog")
    from mplint.runtime.report import _DEFAULT_SEVERITY

    entries = catalog.load_catalog()
    for rule, severity in _DEFAULT_SEVERITY.items():
        entry = entries.get(rule)
        assert entry is not None and entry.severity == severity, rule


def test_the_runtime_checker_imports_nothing_else_of_mplint():
    import subprocess
    import sys

    code = ("import sys, mplint.runtime.check, mplint.runtime.command, mplint.runtime.measure, "
            "mplint.runtime.pytest_plugin; "
            "other = sorted(m for m in sys.modules if m.startswith('mplint.') "
            "and not m.startswith('mplint.runtime')); print(other); sys.exit(1 if other else 0)")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                          env={**__import__("os").environ, "TF_CPP_MIN_LOG_LEVEL": "3"})
    assert proc.returncode == 0, proc.stdout + proc.stderr
