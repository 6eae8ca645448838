"""``--measure``: float32 against each mixed policy, and each alignment finding's own op at
its current and aligned size, timed in one run (figures are this machine's; the tests
check their shape and wording, never a speed)."""

import json
from pathlib import Path

import pytest

tf = pytest.importorskip("tensorflow")

from mplint.cli import main  # noqa: E402
from mplint.runtime import check_model, measure  # noqa: E402
from mplint.runtime.report import SCHEMA_PATH  # noqa: E402
from mplint.runtime.target import load_target  # noqa: E402

FIX = Path(__file__).resolve().parent.parent / "fixtures" / "runtime"


def test_verdicts_say_plainly_when_mixed_precision_is_slower():
    assert measure.verdict(0.5) == "2.00x SLOWER than float32 here"
    assert measure.verdict(1.8) == "1.80x faster than float32 here"
    assert measure.verdict(1.04) == "about as fast as float32 here"


def test_measure_times_every_policy_and_each_alignment_finding(monkeypatch):
    monkeypatch.setattr(measure, "REPEATS", 3)
    monkeypatch.setattr(measure, "MIN_OP_SECONDS", 0.002)
    report = check_model(load_target(f"{FIX / 'cnn_unaligned.py'}:build_model").factory, measure=True)
    m = report.measure
    assert m["what"] == "compiled training step and forward pass, batch 8" and m["repeats"] == 3
    assert [r["policy"] for r in m["policies"]] == ["float32", "mixed_float16", "mixed_bfloat16"]
    assert m["policies"][0]["speedup"] == 1.0 and m["policies"][0]["verdict"] == "the baseline"
    for row in m["policies"]:
        # Both timings are there (never compared: on a busy machine a training step can time
        # below a forward pass, and a CI run once saw it).
        assert row["train_seconds"] > 0 and row["seconds"] > 0
    for row in m["policies"][1:]:
        assert row["verdict"] == measure.verdict(row["train_speedup"])
    # The advice is the fastest measured training step (float32 unless a policy beats it).
    best = max(m["policies"], key=lambda r: r["train_speedup"])
    expected = best["policy"] if best["train_speedup"] >= 1.1 else "float32"
    assert m["recommended"] == report.advice["policy"] == expected
    assert report.advice["basis"] == "measured"
    text = report.to_text()
    # One verdict per policy, each speed line once.
    for row in m["policies"][1:]:
        policy_lines = [l for l in text.splitlines() if l.startswith(f"Policy: {row['policy']}")]
        assert len(policy_lines) == 1 and f"measured {row['verdict']}" in policy_lines[0], text
        assert sum(l.strip().startswith(f"{row['policy']}:") for l in text.splitlines()) == 1, text
    assert ("fast here" in text) is False and ("SLOW here" in text) is False
    rows = {r["layer"]: r for r in m["alignment"]}
    assert set(rows) == {"conv_b", "hidden"}
    assert rows["hidden"]["current"] == "750x100" and rows["hidden"]["aligned"] == "752x104"
    assert rows["conv_b"]["current"] == "32->30" and rows["conv_b"]["aligned"] == "32->32"
    for row in rows.values():
        assert row["current_ms"] > 0 and row["aligned_ms"] > 0
        assert row["saving"].startswith(("saves ", "saves nothing here"))
    assert "Measured here (compiled training step and forward pass, batch 8; the median of 3 training " \
        "steps after 1 warm-up, of 3 forward passes after 2):" in text
    assert "layer 'hidden' (matmul 8x750 @ 750x100" in text


def test_measure_json_from_the_command_line(monkeypatch, capsys):
    jsonschema = pytest.importorskip("jsonschema")
    monkeypatch.setattr(measure, "REPEATS", 2)
    rc = main(["runtime", f"{FIX / 'mnist_guide.py'}:build_correct_model", "--policy", "mixed_bfloat16",
               "--measure", "--output-format", "json", "--quiet"])
    data = json.loads(capsys.readouterr().out)
    assert rc == 0
    jsonschema.validate(data, json.loads(SCHEMA_PATH.read_text()))
    # One policy checked, every mixed policy measured.
    assert data["policies"] == ["mixed_bfloat16"]
    assert [r["policy"] for r in data["measure"]["policies"]] == ["float32", "mixed_float16", "mixed_bfloat16"]
    assert data["measure"]["alignment"] == []
