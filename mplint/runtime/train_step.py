"""``--train-step``: does loss scaling matter for this model, and does its optimizer do it?

Gradients of the compiled loss are taken three ways on one synthetic batch: under the
policy without loss scaling, under the policy with the loss scaled by 2**15 (the
LossScaleOptimizer default), and in float32 with the same weights. The fraction of
gradient elements that are exactly zero shows underflow. Then one real
``train_on_batch`` runs with the compiled optimizer.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple

import numpy as np

from mplint.runtime import keras_env, probe, rules
from mplint.runtime.report import RuntimeFinding

LOSS_SCALE = 2.0 ** 15
_MATTERS = 0.01  # one more gradient element in a hundred flushed to zero


def is_compiled(model: Any) -> bool:
    return bool(getattr(model, "compiled", False) or getattr(model, "_is_compiled", False))


def optimizer_scales_loss(optimizer: Any) -> Tuple[bool, int]:
    """(scales the loss, how many LossScaleOptimizer wrappers deep)."""
    depth, opt = 0, optimizer
    while opt is not None and "LossScaleOptimizer" in " ".join(probe.class_names(opt)):
        depth += 1
        opt = getattr(opt, "inner_optimizer", None)
    factor = getattr(optimizer, "loss_scale_factor", None)  # Keras 3, any optimizer
    return depth > 0 or bool(factor and factor != 1), depth


def _loss_names(model: Any) -> str:
    loss = getattr(model, "loss", None)
    items = loss.values() if isinstance(loss, dict) else (loss if isinstance(loss, (list, tuple)) else [loss])
    return " ".join(str(getattr(i, "name", None) or getattr(i, "__name__", None) or i) for i in items)


def synthetic_targets(model: Any, outputs: List[Any], seed: int) -> Any:
    rng = np.random.default_rng(seed + 1)
    sparse = "sparse" in _loss_names(model).lower()
    targets = []
    for out in outputs:
        shape = tuple(int(d) for d in out.shape)
        classes = shape[-1] if len(shape) > 1 else 1
        if sparse:
            targets.append(rng.integers(0, max(classes, 2), size=shape[:-1]).astype("int32"))
        elif rules.looks_like_probabilities(out):
            targets.append(np.eye(classes, dtype="float32")[rng.integers(0, classes, size=shape[:-1])])
        else:
            targets.append(rng.random(shape).astype("float32"))
    return targets[0] if len(targets) == 1 else targets


def _loss(model: Any, x: Any, y: Any, pred: Any) -> Any:
    if hasattr(model, "compute_loss") and keras_env.keras_major(keras_env.tf_module().keras) >= 3:
        return model.compute_loss(x=x, y=y, y_pred=pred, training=True)
    return model.compiled_loss(y, pred, regularization_losses=model.losses)  # Keras 2


def zero_fraction(model: Any, x: Any, y: Any, scale: float = 1.0) -> Optional[float]:
    tf = keras_env.tf_module()
    variables = model.trainable_variables
    y = tf.nest.map_structure(tf.convert_to_tensor, y)  # Keras 2 losses want tensors
    with tf.GradientTape() as tape:
        pred = model(x, training=True)
        loss = tf.cast(_loss(model, x, y, pred), tf.float32) * scale
    grads = tape.gradient(loss, variables)
    zeros = total = 0
    for g in grads:
        if g is None:
            continue
        g = tf.convert_to_tensor(g)
        zeros += int(tf.size(g)) - int(tf.math.count_nonzero(g))
        total += int(tf.size(g))
    return zeros / total if total else None


def run_train_step(model: Any, twin: Any, x: Any, result: probe.ForwardResult, policy: str,
                   seed: int) -> Tuple[Dict[str, Any], List[RuntimeFinding]]:
    if not is_compiled(model):
        return {"skipped": "the model is not compiled: have the factory call compile() with the "
                           "loss and optimizer it trains with"}, []
    y = synthetic_targets(model, result.outputs, seed)
    unscaled = zero_fraction(model, x, y)
    scaled = zero_fraction(model, x, y, LOSS_SCALE)
    float32 = None
    if twin is not None:
        with keras_env.policy_scope("float32"):
            float32 = zero_fraction(twin, x, y)
    scales, depth = optimizer_scales_loss(model.optimizer)
    loss = model.train_on_batch(x, y)
    loss = float(np.asarray(loss[0] if isinstance(loss, (list, tuple)) else loss))
    matters = None
    if unscaled is not None and float32 is not None:
        matters = unscaled - float32 > _MATTERS
    section = {
        "zero_gradient_fraction": {"policy_unscaled": unscaled, "policy_scaled": scaled,
                                   "float32": float32},
        "loss_scale": LOSS_SCALE,
        "optimizer": type(model.optimizer).__name__,
        "optimizer_scales_loss": scales,
        "loss_scaling_matters": matters,
        "loss": loss if np.isfinite(loss) else None,  # JSON has no NaN
        "loss_finite": bool(np.isfinite(loss)),
    }
    found: List[RuntimeFinding] = []
    float16 = "float16" in policy and "bfloat16" not in policy
    if float16 and not scales:
        measured = ""
        if unscaled is not None and float32 is not None:
            measured = (f" (on this batch {100 * unscaled:.1f}% of gradient elements are zero in "
                        f"float16 without scaling, {100 * float32:.1f}% in float32)")
        found.append(rules.finding("MP201", f"the optimizer {type(model.optimizer).__name__} does not "
                                            f"scale the loss under {policy}: gradients below float16's "
                                            f"smallest value (6e-8) flush to zero{measured}; wrap it in "
                                            f"a LossScaleOptimizer"))
    if depth > 1:
        found.append(rules.finding("MP205", f"the optimizer is wrapped in a LossScaleOptimizer {depth} "
                                            f"times: the loss is scaled once but unscaled {depth} times"))
    return section, found
