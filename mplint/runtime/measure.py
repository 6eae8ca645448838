"""``--measure``: what mixed precision is worth on this machine, measured in one run.

Times the model's whole compiled training step (forward, backward, and the optimizer's
apply, with loss scaling under mixed_float16) and its compiled forward pass, in float32
and under each mixed policy, and each alignment finding's own matmul or convolution at
its current size and at the aligned size. The recommended policy is the one whose
training step was fastest; the weights and statistics the steps touch are put back. Every figure is the median of several repeats after warm-up; the configurations
take turns in each round, so that the drift of a busy machine spreads evenly, and only
ratios measured in the same run are compared.
"""

from __future__ import annotations

import statistics
import time
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from mplint.runtime import hardware as hw
from mplint.runtime import keras_env, probe, rules

WARMUP = 2
REPEATS = 5
TRAIN_WARMUP = 1  # the first call traces the step
TRAIN_REPEATS = 3
MIN_OP_SECONDS = 0.05  # one timed sample of a single op runs it this long at least
_SAME = 0.1  # within 10%: about the same


def _timed_rounds(functions: Sequence[Callable[[], Any]], repeats: int, warmup: int) -> List[float]:
    """The median seconds of each function, run in turns."""
    for _ in range(warmup):
        for fn in functions:
            fn()
    samples: List[List[float]] = [[] for _ in functions]
    for _ in range(repeats):
        for i, fn in enumerate(functions):
            started = time.perf_counter()
            fn()
            samples[i].append(time.perf_counter() - started)
    return [statistics.median(s) for s in samples]


def _forward(model: Any, x: Any) -> Callable[[], Any]:
    tf = keras_env.tf_module()
    compiled = tf.function(lambda inputs: probe.call_model(model, inputs))

    def run() -> Any:
        out = compiled(x)
        for t in tf.nest.flatten(out):
            t.numpy()  # wait for the result
        return out

    return run


def _train_step(model: Any, x: Any, policy: str) -> Callable[[], Any]:
    """One compiled training step: forward, a loss over every output, backward, and an
    SGD apply with learning rate 0 (LossScaleOptimizer-wrapped under mixed_float16, as
    compile() would)."""
    from mplint.runtime.train_step import _loss_scale_optimizer, is_keras2

    tf = keras_env.tf_module()
    keras_mod = keras_env.package_of(model)
    keras2 = is_keras2(keras_mod)
    variables = list(model.trainable_variables)
    optimizer = keras_mod.optimizers.SGD(learning_rate=0.0)
    if rules.is_float16(policy):
        optimizer = _loss_scale_optimizer(keras_mod, optimizer, 2.0 ** 15, 2000)
    optimizer.build(variables)

    def step(inputs: Any) -> Any:
        with tf.GradientTape() as tape:
            out = probe.call_model(model, inputs, training=True)
            loss = tf.add_n([tf.reduce_mean(tf.square(tf.cast(o, "float32"))) for o in tf.nest.flatten(out)])
            if rules.is_float16(policy):
                scaled = optimizer.get_scaled_loss(loss) if keras2 else optimizer.scale_loss(loss)
            else:
                scaled = loss
        grads = tape.gradient(scaled, variables)
        if rules.is_float16(policy) and keras2:
            grads = optimizer.get_unscaled_gradients(grads)
        optimizer.apply_gradients([(g, v) for g, v in zip(grads, variables) if g is not None])
        return loss

    compiled = tf.function(step)

    def run() -> Any:
        return compiled(x).numpy()

    return run


def verdict(speedup: float) -> str:
    if speedup >= 1 + _SAME:
        return f"{speedup:.2f}x faster than float32 here"
    if speedup <= 1 - _SAME:
        return f"{1 / speedup:.2f}x SLOWER than float32 here"
    return "about as fast as float32 here"


def _models(context: Any, runs: Sequence[Any]) -> Tuple[Dict[str, Any], Any, List[str]]:
    """float32 and each mixed policy's model, with the same weights, and the inputs."""
    from mplint.runtime.rebuild import build as _build
    from mplint.runtime.rebuild import config_clone as _config_clone

    notes: List[str] = []
    first = next((r for r in runs if r.model is not None), None)
    if first is None:
        return {}, None, ["nothing to measure: the model did not run"]
    models: Dict[str, Any] = {r.policy: r.model for r in runs if r.model is not None}
    weights = first.model.get_weights()
    for policy in ("float32", hw.MIXED_FLOAT16, hw.MIXED_BFLOAT16):
        if policy in models:
            continue
        try:
            with keras_env.policy_scope(policy):
                if context.instance or probe.model_kind(first.model) != "subclassed":
                    model = _config_clone(first.model, policy)
                else:
                    model = _build(context.target)
                if model is None:
                    raise ValueError("cannot be rebuilt")
                if len(model.weights) != len(weights):
                    probe.call_model(model, first.x)
                model.set_weights(weights)
            models[policy] = model
        except Exception as exc:
            notes.append(f"not measured under {policy}: {type(exc).__name__}: {probe.first_line(exc)[:120]}")
    return models, first.x, notes


def _op_timer(fn: Callable[[], Any]) -> Callable[[], Any]:
    """Run ``fn`` enough times per sample that one sample lasts MIN_OP_SECONDS."""
    fn()
    started = time.perf_counter()
    fn()
    once = max(time.perf_counter() - started, 1e-6)
    count = max(1, int(MIN_OP_SECONDS / once))

    def run() -> None:
        for _ in range(count):
            fn()

    run.count = count  # type: ignore[attr-defined]
    return run


def _align(value: int, alignment: int) -> int:
    return -(-value // alignment) * alignment


def _layer_ops(layer: Any, dims: Dict[str, int], input_shape: Sequence[Optional[int]], dtype: str,
               alignment: int) -> Optional[Tuple[str, Callable[[], Any], Callable[[], Any], str, str]]:
    """(label, current op, aligned op, current size, aligned size) for one layer."""
    tf = keras_env.tf_module()
    names = set(probe.class_names(layer))
    shape = [1 if d is None else int(d) for d in input_shape]
    if "units" in dims and ("Dense" in names or names & rules.RNN_CLASSES):
        rows = 1
        for d in shape[:-1]:
            rows *= d
        k = dims.get("input_features", shape[-1])
        n = dims["units"]
        if "Dense" not in names:
            n *= 4 if "LSTM" in names else 3 if "GRU" in names else 1  # the gates' matmul
        ka, na = _align(k, alignment), _align(n, alignment)

        def matmul(k: int, n: int) -> Callable[[], Any]:
            a = tf.random.normal((rows, k), dtype=dtype)
            b = tf.random.normal((k, n), dtype=dtype)
            fn = tf.function(lambda: tf.matmul(a, b))
            return lambda: fn().numpy()

        return (f"matmul {rows}x{k} @ {k}x{n}", matmul(k, n), matmul(ka, na), f"{k}x{n}", f"{ka}x{na}")
    if "filters" in dims and names & rules.CONV_CLASSES and len(shape) == 4:
        cin = dims.get("input_channels", shape[-1])
        f = dims["filters"]
        kernel = tuple(getattr(layer, "kernel_size", (3, 3)))
        strides = tuple(getattr(layer, "strides", (1, 1)))
        padding = str(getattr(layer, "padding", "valid")).upper()
        ca, fa = (_align(cin, alignment) if cin >= 8 else cin), _align(f, alignment)

        def conv(c: int, f: int) -> Callable[[], Any]:
            x = tf.random.normal((shape[0], shape[1], shape[2], c), dtype=dtype)
            w = tf.random.normal(kernel + (c, f), dtype=dtype)
            fn = tf.function(lambda: tf.nn.conv2d(x, w, strides=strides, padding=padding))
            return lambda: fn().numpy()

        size = "x".join(str(d) for d in shape[:3])
        return (f"conv {kernel[0]}x{kernel[1]} on {size}x{cin} -> {f}", conv(cin, f), conv(ca, fa),
                f"{cin}->{f}", f"{ca}->{fa}")
    return None


def measure_runs(context: Any, runs: Sequence[Any], hardware: hw.Hardware) -> Dict[str, Any]:
    """The ``measure`` section of the report (see the README's runtime section)."""
    from mplint.runtime.train_step import Snapshot

    opts = context.options
    models, x, notes = _models(context, runs)
    out: Dict[str, Any] = {"what": "", "warmup": WARMUP, "repeats": REPEATS, "train_warmup": TRAIN_WARMUP,
                           "train_repeats": TRAIN_REPEATS, "policies": [],
                           "alignment": [], "summary": [], "notes": notes, "recommended": None}
    if x is None:
        return out
    batch = int(keras_env.tf_module().nest.flatten(x)[0].shape[0])
    out["what"] = f"compiled training step and forward pass, batch {batch}"
    order = [p for p in ("float32", hw.MIXED_FLOAT16, hw.MIXED_BFLOAT16) if p in models]
    forward, train, trainable = [], [], []
    for policy in order:
        with keras_env.policy_scope(policy):
            forward.append(_forward(models[policy], x))
            try:
                train.append(_train_step(models[policy], x, policy))
                trainable.append(policy)
            except Exception as exc:
                notes.append(f"training step not timed under {policy}: {type(exc).__name__}: "
                             f"{probe.first_line(exc)[:120]}")
    snapshot = Snapshot([models[p] for p in order])
    try:
        with keras_env.policy_scope("float32"):
            seconds = _timed_rounds(forward, REPEATS, WARMUP)
            try:
                train_seconds = _timed_rounds(train, TRAIN_REPEATS, TRAIN_WARMUP)
            except Exception as exc:
                notes.append(f"training step not timed: {type(exc).__name__}: {probe.first_line(exc)[:120]}")
                train_seconds, trainable = [], []
    finally:
        snapshot.restore()
    train_of = dict(zip(trainable, train_seconds))
    base = seconds[0] if order and order[0] == "float32" else None
    train_base = train_of.get("float32")
    for policy, took in zip(order, seconds):
        row: Dict[str, Any] = {"policy": policy, "seconds": took, "train_seconds": train_of.get(policy)}
        if base:
            row["speedup"] = base / took
        if train_base and policy in train_of:
            row["train_speedup"] = train_base / train_of[policy]
        ratio = row.get("train_speedup", row.get("speedup"))
        if ratio is not None:
            row["verdict"] = "the baseline" if policy == "float32" else verdict(ratio)
        out["policies"].append(row)
    out["recommended"] = _recommended(out["policies"])
    out["alignment"] = _alignment_rows(runs, hardware, opts.alignment, base)
    for row in out["alignment"]:
        out["summary"].append(f"{row['layer']}: padding {row['current']} to {row['aligned']} "
                              f"{row['saving']}")
    return out


def _recommended(rows: Sequence[Dict[str, Any]]) -> Optional[str]:
    """The policy whose training step (else forward pass) was fastest, by more than the
    noise of a busy machine; float32 when no mixed policy is."""
    key = "train_speedup" if all("train_speedup" in r for r in rows) else "speedup"
    if not rows or not all(key in r for r in rows):
        return None
    best = max(rows, key=lambda r: r[key])
    return best["policy"] if best[key] >= 1 + _SAME else "float32"


def _alignment_rows(runs: Sequence[Any], hardware: hw.Hardware, alignment: int,
                    forward_seconds: Optional[float]) -> List[Dict[str, Any]]:
    rows: List[Dict[str, Any]] = []
    seen = set()
    # Timed under the policy the hardware runs fastest when it was checked, else the first.
    checked = [r for r in runs if r.model is not None]
    preferred = [r for r in checked if r.policy == hardware.default_policy()]
    for run in (preferred or checked)[:1]:
        dtype = hw.compute_type(run.policy) or "float32"
        calls = {}
        flagged = {f.layer for f in run.findings if f.rule in ("MP301", "MP302", "MP304") and f.layer}
        for layer, dims in run.alignment_layers:
            if layer.name not in flagged or layer.name in seen:
                continue
            row = next((r for r in run.layers if r["name"] == layer.name), None)
            if row is None or not row.get("input_shape"):
                continue
            calls[layer.name] = (layer, dims, row["input_shape"])
        for name, (layer, dims, input_shape) in calls.items():
            ops = _layer_ops(layer, dims, input_shape, dtype, alignment)
            if ops is None:
                continue
            label, current, aligned, size, padded = ops
            if size == padded:
                continue
            timed = [_op_timer(current), _op_timer(aligned)]
            counts = [getattr(t, "count", 1) for t in timed]
            current_s, aligned_s = (s / c for s, c in zip(_timed_rounds(timed, REPEATS, 1), counts))
            saved = current_s - aligned_s
            if saved > 0.02 * current_s:
                share = f"; {100 * saved / forward_seconds:.1f}% of the forward pass" \
                    if forward_seconds else ""
                saving = f"saves {saved * 1000:.3f} ms per call ({100 * saved / current_s:.0f}%{share})"
            else:
                saving = f"saves nothing here ({aligned_s / current_s:.2f}x the time: more work, no faster path)"
            rows.append({"layer": name, "op": f"{label}, {dtype}", "current": size, "aligned": padded,
                         "current_ms": current_s * 1000, "aligned_ms": aligned_s * 1000,
                         "saving": saving, "saving_ms": max(saved, 0.0) * 1000})
            seen.add(name)
    return rows
