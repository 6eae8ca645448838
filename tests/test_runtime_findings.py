"""One finding per problem, and where it is in the user's code (real TensorFlow, CPU):
layers are matched across the two policies' builds by their place in the model, and every
finding about a layer built from source carries the ``path:line`` that built it."""

import json
from pathlib import Path

import pytest

tf = pytest.importorskip("tensorflow")

from mplint.runtime import check_model, hardware  # noqa: E402
from mplint.runtime.command import main  # noqa: E402
from mplint.runtime.target import load_target  # noqa: E402
from runtime_support import float32_outside  # noqa: E402,F401

ROOT = Path(__file__).resolve().parent.parent
FIX = ROOT / "fixtures" / "runtime"
keras = tf.keras
layers = keras.layers


def line_of(name, text):
    lines = (FIX / name).read_text().splitlines()
    return next(i for i, line in enumerate(lines, 1) if text in line)


def auto_named():
    inputs = keras.Input((64,))
    x = layers.Dense(100, activation="relu")(inputs)  # no name: dense, then dense_2 in the next build
    x = layers.Dense(100, activation="relu")(x)
    return keras.Model(inputs, layers.Dense(10, activation="softmax")(x))


def test_default_mode_reports_each_problem_once_under_both_policies(monkeypatch):
    # a machine with no matrix unit for 16-bit floats (the CPU's flags are the seam: this
    # one may have AVX512-BF16 or AMX, whose advice differs under mixed_bfloat16)
    monkeypatch.setattr(hardware, "query_devices", lambda: [hardware.Device("CPU", "/physical_device:CPU:0")])
    monkeypatch.setattr(hardware, "read_cpu_flags", lambda path="/proc/cpuinfo": frozenset({"avx2", "fma"}))
    report = check_model(auto_named)
    # Two hidden layers of 100 units and a float16/bfloat16 softmax head: three problems.
    assert [(f.rule, f.policy, f.policies) for f in report.findings] == [
        ("MP101", None, ("mixed_float16", "mixed_bfloat16")),
        ("MP301", None, ("mixed_float16", "mixed_bfloat16")),
        ("MP301", None, ("mixed_float16", "mixed_bfloat16"))], report.to_text()
    # The names are the first build's, each layer once.
    assert len({f.layer for f in report.findings}) == 3
    assert "[mixed_float16 and mixed_bfloat16]" in report.to_text()
    assert "Found 3 problems" in report.to_text()
    # One message for both: general words where only the type differs, else both reasons.
    mp301 = report.findings[1].message
    assert mp301.endswith("(this machine has no matrix unit for 16-bit floats)"), mp301
    mp101 = report.findings[0].message
    assert "computed in float16: float16 overflows" in mp101
    assert "; under mixed_bfloat16: the model output is a softmax computed in bfloat16" in mp101


def test_a_finding_under_one_policy_only_says_which():
    report = check_model(load_target(str(FIX / "attention_mask.py:build_model")).factory)
    assert [(f.rule, f.layer, f.policy) for f in report.findings] == [
        ("MP501", "attention", "mixed_float16")], report.to_text()
    assert "[mixed_float16 only]" in report.to_text()


def test_findings_carry_the_line_that_built_the_layer(capsys):
    spec = f"{FIX / 'cnn_unaligned.py'}:build_model"
    report = check_model(load_target(spec).factory, "mixed_float16")
    where = {(f.rule, f.layer): (Path(f.path).name, f.line) for f in report.findings}
    assert where == {("MP302", "conv_b"): ("cnn_unaligned.py", line_of("cnn_unaligned.py", 'name="conv_b"')),
                     ("MP301", "hidden"): ("cnn_unaligned.py", line_of("cnn_unaligned.py", '"hidden"'))}
    # The text starts each finding with path:line, as `mplint check` does; JSON has both.
    text = report.to_text()
    conv_line = line_of("cnn_unaligned.py", 'name="conv_b"')
    assert any(l.endswith(f"cnn_unaligned.py:{conv_line}: MP302 [warning] layer 'conv_b' (Conv2D): "
                          "filters=30 is not a multiple of 8 (use 32): on NVIDIA GPUs Tensor Cores stay "
                          "idle (this machine has no matrix unit for float16)")
               for l in text.splitlines()), text
    assert main([spec, "--policy", "mixed_float16", "--output-format", "json", "--quiet"]) == 1
    data = json.loads(capsys.readouterr().out)
    rows = {f["layer"]: f for f in data["findings"]}
    assert rows["conv_b"]["line"] == conv_line and rows["conv_b"]["path"].endswith("cnn_unaligned.py")
    assert rows["conv_b"]["policies"] == ["mixed_float16"]


def test_a_model_built_before_the_policy_keeps_its_lines_after_the_rebuild():
    def float32_model():
        inputs = keras.Input((16,))
        x = layers.Dense(100, name="hidden")(inputs)
        return keras.Model(inputs, layers.Dense(8, dtype="float32", name="head")(x))

    report = check_model(float32_model, "mixed_bfloat16")  # built in float32, rebuilt from its config
    assert [(f.rule, f.layer) for f in report.findings] == [("MP301", "hidden")], report.to_text()
    assert Path(report.findings[0].path).name == "test_runtime_findings.py"
    assert report.findings[0].line == float32_model.__code__.co_firstlineno + 2


def test_inf_in_a_users_attention_block_names_the_users_layer_and_the_inner_one():
    class Attention(layers.Layer):
        """A hand-written attention: a -1e9 mask overflows float16 in its score layer."""

        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.query = layers.Dense(16)
            self.scores = layers.Lambda(lambda s: s - 1e9 * 0.0 + s * 1e5)

        def call(self, x):
            return self.scores(self.query(x))

    def build():
        inputs = keras.Input((8, 16))
        x = Attention(name="my_attention")(inputs)
        x = layers.GlobalAveragePooling1D()(x)
        return keras.Model(inputs, layers.Dense(8, dtype="float32", name="head")(x))

    report = check_model(build, "mixed_float16")
    assert [(f.rule, f.layer, f.layer_class) for f in report.findings] == [
        ("MP501", "my_attention", "Attention")], report.to_text()
    assert "my_attention/" in report.findings[0].message
