"""The runtime checker's result: plain data, JSON-ready, no TensorFlow.

``Report.to_dict()`` follows ``report.schema.json`` (shipped next to this module and
documented in the README); the text form is what ``mplint runtime`` prints.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

SCHEMA_ID = "mplint-runtime-report/2"
SCHEMA_PATH = Path(__file__).with_name("report.schema.json")

# Severities of the static rules these findings share an id with (the catalog's, kept
# equal by tests/test_runtime.py; not read from it, so that the runtime checker imports
# nothing from the rest of mplint).
_DEFAULT_SEVERITY = {
    "MP101": "error", "MP102": "warning", "MP201": "error", "MP202": "error", "MP205": "error",
    "MP206": "error", "MP301": "warning", "MP302": "warning", "MP303": "warning", "MP304": "warning",
    "MP403": "error", "MP404": "error", "MP405": "error", "MP501": "error", "MP504": "error",
}


def severity_of(rule: str) -> str:
    return _DEFAULT_SEVERITY.get(rule, "warning")


@dataclass(frozen=True)
class RuntimeFinding:
    """One problem seen while running the model; ``layer`` is None for model-wide ones.

    ``path``/``line`` are where the user's code constructed the layer (as the
    static checker would point to it); ``key`` says which layer it is by its place in the
    model (the indices of its parents), so that builds under two policies, whose
    generated names differ, match the same layer."""

    rule: str
    severity: str
    message: str
    layer: Optional[str] = None
    layer_class: Optional[str] = None
    policy: Optional[str] = None  # seen only under this policy; None: under every one checked
    policies: Tuple[str, ...] = ()  # the policies it was seen under
    path: Optional[str] = None
    line: Optional[int] = None
    key: Optional[Tuple[int, ...]] = field(default=None, compare=False)

    @property
    def location(self) -> Optional[str]:
        """``path:line`` of the layer's construction, as ``mplint check`` starts its lines."""
        if self.path is None or self.line is None:
            return None
        return f"{self.path}:{self.line}"

    def to_dict(self) -> Dict[str, Any]:
        return {"rule": self.rule, "severity": self.severity, "message": self.message,
                "layer": self.layer, "layer_class": self.layer_class, "policy": self.policy,
                "policies": list(self.policies), "path": self.path, "line": self.line}


@dataclass
class Report:
    """Everything ``check_model`` learned. ``ok`` is True when there are no findings."""

    target: str
    policy: str  # the policy, or "mixed_float16+mixed_bfloat16" when both were checked
    policy_source: str  # "argument", "default" (both 16-bit types) or "model" (a built model's own)
    hardware: Dict[str, Any]
    versions: Dict[str, Any]
    policies: List[str] = field(default_factory=list)
    model: Dict[str, Any] = field(default_factory=dict)
    outputs: List[Dict[str, Any]] = field(default_factory=list)
    layers: List[Dict[str, Any]] = field(default_factory=list)
    findings: List[RuntimeFinding] = field(default_factory=list)
    train_step: Optional[List[Dict[str, Any]]] = None  # one section per policy
    measure: Optional[Dict[str, Any]] = None
    advice: Dict[str, Any] = field(default_factory=dict)  # the policy to train with here, and why
    notes: List[str] = field(default_factory=list)
    elapsed_s: float = 0.0

    @property
    def ok(self) -> bool:
        return not self.findings

    def to_dict(self) -> Dict[str, Any]:
        return {
            "schema": SCHEMA_ID,
            "ok": self.ok,
            "target": self.target,
            "policy": self.policy,
            "policy_source": self.policy_source,
            "policies": list(self.policies or [self.policy]),
            "hardware": self.hardware,
            "versions": self.versions,
            "model": self.model,
            "outputs": self.outputs,
            "layers": self.layers,
            "findings": [f.to_dict() for f in self.findings],
            "train_step": self.train_step,
            "measure": self.measure,
            "advice": self.advice,
            "notes": list(self.notes),
            "elapsed_s": round(self.elapsed_s, 3),
        }

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2) + "\n"

    def to_text(self) -> str:
        return format_text(self)

    def __str__(self) -> str:
        return self.to_text()


def _shape(shape: Any) -> str:
    return "(" + ", ".join("None" if d is None else str(d) for d in shape) + ")"


def format_text(report: Report) -> str:
    hw = report.hardware
    lines = [f"mplint runtime: {report.target}"]
    lines.append(f"Hardware: {hw.get('summary', '?')}")
    v = report.versions
    keras = f"tf_keras {v.get('keras')} (Keras 2)" if v.get("keras_package") == "tf_keras" else \
        f"Keras {v.get('keras')}"
    lines.append(f"Software: TensorFlow {v.get('tensorflow')}, {keras}")
    policies = report.policies or [report.policy]
    verdicts = hw.get("verdicts") or {report.policy: {"fast": hw.get("policy_fast"),
                                                      "reason": hw.get("policy_reason", "")}}
    source = {"default": "default: both 16-bit types"}.get(report.policy_source, report.policy_source)
    measured = {row["policy"]: row for row in (report.measure or {}).get("policies", [])}
    for name in policies:
        verdict = verdicts.get(name, {})
        row = measured.get(name)
        if row and row.get("verdict"):
            # What was measured decides: one verdict per policy, never two that disagree.
            what = "training step" if "train_speedup" in row else "forward pass"
            lines.append(f"Policy: {name} ({source}): measured {row['verdict']} ({what}; the hardware "
                         f"facts: {verdict.get('reason', '')})")
            continue
        speed = {True: "fast here", False: "SLOW here", None: "no 16-bit compute"}[verdict.get("fast")]
        lines.append(f"Policy: {name} ({source}): {speed}: {verdict.get('reason', '')}")
    if report.advice:
        lines.append(f"Advice: {report.advice['text']}")
    m = report.model
    if m:
        inputs = ", ".join(f"{_shape(i['shape'])} {i['dtype']}" for i in m.get("inputs", []))
        lines.append(f"Model: {m.get('kind')} '{m.get('name')}' ({m.get('class')}), "
                     f"{m.get('layers')} layers, {m.get('parameters'):,} parameters, "
                     f"batch {m.get('batch_size')}, inputs {inputs}")
    for out in report.outputs:
        src = f" from '{out['layer']}'" if out.get("layer") else ""
        lines.append(f"Output {out['index']}: {_shape(out['shape'])} {out['dtype']}{src}")
    for ts in report.train_step or []:
        lines.append(_train_step_line(ts))
    if report.measure:
        lines += _measure_lines(report.measure)
    for note in report.notes:
        lines.append(f"note: {note}")
    lines.append("")
    for f in report.findings:
        lines.append(finding_line(f, len(policies) > 1))
    n = len(report.findings)
    if n:
        counts: Dict[str, int] = {}
        for f in report.findings:
            counts[f.rule] = counts.get(f.rule, 0) + 1
        by_rule = ", ".join(f"{k}: {c}" for k, c in sorted(counts.items()))
        lines.append(f"Found {n} problem{'s' * (n != 1)} ({by_rule}) in {report.elapsed_s:.1f} s.")
    else:
        lines.append(f"No mixed-precision problems found in {report.elapsed_s:.1f} s.")
    return "\n".join(lines) + "\n"


def finding_line(f: RuntimeFinding, several_policies: bool = False) -> str:
    """One finding, led by ``path:line:`` where the user's code built the layer, as
    ``mplint check`` prints a static finding."""
    at = f"{f.location}: " if f.location else ""
    where = f"layer '{f.layer}' ({f.layer_class}): " if f.layer else ""
    if f.policy:
        seen = f"[{f.policy} only] "
    elif several_policies and len(f.policies) > 1:
        seen = f"[{' and '.join(f.policies)}] "
    else:
        seen = ""
    return f"{at}{f.rule} [{f.severity}] {seen}{where}{f.message}"


def _pct(x: Optional[float]) -> str:
    return "n/a" if x is None else f"{100 * x:.1f}%"


def _train_step_line(ts: Dict[str, Any]) -> str:
    policy = ts.get("policy", "")
    if ts.get("skipped"):
        return f"Train step ({policy}): skipped: {ts['skipped']}"
    scales = "scales the loss" if ts["optimizer_scales_loss"] else "does NOT scale the loss"
    scale = f" (loss scale {ts['loss_scale']:g})" if ts.get("loss_scale") else ""
    ratio = ts.get("update_ratio")
    ratio_text = "n/a" if ratio is None else f"{ratio:.4g}x"
    zero = ts.get("zero_update_fraction") or {}
    loss = ts.get("loss") or {}
    return (f"Train step ({policy}): own train_step on {ts['data']}, batch {ts['batch_size']}, "
            f"{ts['steps']} step{'s' * (ts['steps'] != 1)}; updates {ratio_text} those in float32 "
            f"over {ts['variables_compared']} variables; no update for {_pct(zero.get('policy'))} of "
            f"weight elements (float32: {_pct(zero.get('float32'))}); optimizer {ts['optimizer']} "
            f"{scales}{scale}; loss {loss.get('policy')} (float32 {loss.get('float32')})")


def _measure_lines(measure: Dict[str, Any]) -> List[str]:
    lines = [f"Measured here ({measure.get('what', '')}; the median of {measure.get('train_repeats')} "
             f"training steps after {measure.get('train_warmup')} warm-up, of {measure.get('repeats')} "
             f"forward passes after {measure.get('warmup')}):"]
    for row in measure.get("policies", []):
        parts = []
        if row.get("train_seconds") is not None:
            ratio = f" ({row['train_speedup']:.2f}x float32's speed)" if "train_speedup" in row else ""
            parts.append(f"training step {row['train_seconds'] * 1000:.1f} ms{ratio}")
        ratio = f" ({row['speedup']:.2f}x)" if "speedup" in row else ""
        parts.append(f"forward pass {row['seconds'] * 1000:.1f} ms{ratio}")
        lines.append(f"  {row['policy']}: {', '.join(parts)}")
    for row in measure.get("alignment", []):
        lines.append(f"  layer '{row['layer']}' ({row['op']}): {row['current']} -> {row['aligned']}: "
                     f"{row['current_ms']:.3f} ms -> {row['aligned_ms']:.3f} ms per call")
    for line in measure.get("summary", []):
        lines.append(f"  {line}")
    for note in measure.get("notes", []):
        lines.append(f"  note: {note}")
    return lines
