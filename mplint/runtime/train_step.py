"""``--train-step``: run the model's own ``train_step`` under the policy and in float32, and
compare what each variable would be updated by.

Each optimizer the model holds (compile()'s, and any other attribute set to one: a GAN's
``g_optimizer`` and ``d_optimizer``) is swapped, for the check only, for a probe with the
same loss scaling (the same LossScaleOptimizer wrappers with their current scale, the same
``loss_scale_factor`` and clipping) whose innermost optimizer records the gradient it
is asked to apply instead of applying it. Whatever the ``train_step`` does (the default
one, a guide-style override with ``x, y = data``, a custom loss), the recorded gradient is
the update it would make, before the learning rate. The float32 build with the same
weights runs the same step on the same batch; the ratio of the two updates shows loss
scaling mistakes exactly (a loss never scaled while the optimizer unscales it: updates
32768 times too small), zeros where float32 has none show underflow, and inf/NaN is
traced to the first layer that produced it. Each optimizer is judged on the variables it
updates. Every variable of the models and of their optimizers is put back afterwards
(batch-norm statistics move in a training step). Keras 2 (tf_keras) gets probes of its own
optimizer API and its LossScaleOptimizer, whose ``apply_gradients`` unscales nothing.

The steps run eagerly: tracing ``train_step`` into a graph costs more than one step
does (ResNet50: 17 s to trace, 1 s per eager step on a 2-core CPU).
"""

from __future__ import annotations

import inspect
import math
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np

from mplint.runtime import keras_env, probe, rules
from mplint.runtime.report import RuntimeFinding

MAX_STEPS = 3  # a dynamic loss scale halves per skipped step: 32768 -> 8192
RETRY_SCALE = 16.0  # then one step at a small scale, which still tells 1/scale from 1
_ZERO_MATTERS = 0.01  # one weight element in a hundred gets no update where float32's does
LOSS_SCALE = 2.0 ** 15  # LossScaleOptimizer's initial scale, to measure what scaling rescues
_TINY = 1e-30


class TrainStepError(Exception):
    """The training step raised; ``error`` is what the user's code raised."""

    def __init__(self, error: BaseException) -> None:
        super().__init__(str(error))
        self.error = error


def is_compiled(model: Any) -> bool:
    return bool(getattr(model, "compiled", False) or getattr(model, "_is_compiled", False))


def is_loss_scale_optimizer(opt: Any) -> bool:
    return opt is not None and "LossScaleOptimizer" in " ".join(probe.class_names(opt))


def optimizer_scales_loss(optimizer: Any) -> Tuple[bool, int]:
    """(scales the loss, how many LossScaleOptimizer wrappers deep)."""
    depth, opt = 0, optimizer
    while is_loss_scale_optimizer(opt):
        depth += 1
        opt = getattr(opt, "inner_optimizer", None)
    factor = getattr(optimizer, "loss_scale_factor", None)  # Keras 3, any optimizer
    return depth > 0 or bool(factor and factor != 1), depth


def current_scale(lso: Any) -> float:
    """A LossScaleOptimizer's scale now (its initial scale until it is built)."""
    for name in ("dynamic_scale", "loss_scale"):
        value = getattr(lso, name, None)
        if value is not None and not callable(value):
            try:
                return float(np.asarray(value))
            except (TypeError, ValueError):
                pass
    return float(getattr(lso, "initial_scale", None) or 2.0 ** 15)


# -- synthetic targets -------------------------------------------------------------------
def _loss_name(loss: Any) -> str:
    if loss is None:
        return ""
    if isinstance(loss, str):
        return loss
    return str(getattr(loss, "name", None) or getattr(loss, "__name__", None) or type(loss).__name__)


def _losses_by_output(model: Any, preds: Any) -> Any:
    """The compiled loss of each model output, in the structure of the predictions."""
    tf = keras_env.tf_module()
    loss = getattr(model, "loss", None)
    names = list(getattr(model, "output_names", None) or [])
    flat = tf.nest.flatten(preds)
    if isinstance(preds, dict):
        keys = list(preds)
        if isinstance(loss, dict):
            return {k: loss.get(k) for k in keys}
        if isinstance(loss, (list, tuple)) and len(loss) == len(keys):
            return dict(zip(keys, loss))
        return {k: loss for k in keys}
    if isinstance(loss, dict):
        per = [loss.get(names[i]) if i < len(names) else None for i in range(len(flat))]
    elif isinstance(loss, (list, tuple)) and len(loss) == len(flat):
        per = list(loss)
    else:
        per = [loss] * len(flat)
    return tf.nest.pack_sequence_as(preds, per)


def _target(pred: Any, loss: Any, rng: Any, sparse_guess: bool) -> Any:
    shape = tuple(int(d) for d in pred.shape)
    classes = shape[-1] if len(shape) > 1 else 1
    name = _loss_name(loss).lower()
    probabilities = rules.looks_like_probabilities(pred)
    if "sparse" in name or (not name and probabilities and sparse_guess):
        return rng.integers(0, max(classes, 2), size=shape[:-1]).astype("int32")
    if "binary" in name or "hinge" in name:
        return (rng.random(shape) > 0.5).astype("float32")
    if "categorical" in name or "kl" in name or "crossentropy" in name or (not name and probabilities):
        return np.eye(classes, dtype="float32")[rng.integers(0, classes, size=shape[:-1])]
    return rng.random(shape).astype("float32")


def synthetic_targets(model: Any, preds: Any, seed: int, sparse_guess: bool = True) -> Any:
    """Targets shaped like the predictions, in their structure, each fit for its own loss."""
    tf = keras_env.tf_module()
    rng = np.random.default_rng(seed + 1)
    losses = tf.nest.flatten(_losses_by_output(model, preds), expand_composites=False)
    flat = tf.nest.flatten(preds)
    if len(losses) != len(flat):
        losses = [None] * len(flat)
    targets = [_target(p, l, rng, sparse_guess) for p, l in zip(flat, losses)]
    return tf.nest.pack_sequence_as(preds, targets)


# -- the probe optimizer -----------------------------------------------------------------
_RECORDER_CLASSES: Dict[int, type] = {}


def is_keras2(keras_mod: Any) -> bool:
    """Keras 2 (``tf_keras``, or ``keras`` 2.x): ``get_scaled_loss`` and an ``apply_gradients``
    that does not unscale."""
    return keras_env.keras_major(keras_mod) < 3


def _recorder_class(keras_mod: Any) -> type:
    """An optimizer of ``keras_mod`` that records each gradient it is given and changes nothing."""
    cls = _RECORDER_CLASSES.get(id(keras_mod))
    if cls is None:
        cls = _keras2_recorder(keras_mod) if is_keras2(keras_mod) else _keras3_recorder(keras_mod)
        _RECORDER_CLASSES[id(keras_mod)] = cls
    return cls


def _keras3_recorder(keras_mod: Any) -> type:
    class GradientRecorder(keras_mod.optimizers.Optimizer):  # type: ignore[name-defined,misc]
        def __init__(self, **kwargs: Any) -> None:
            super().__init__(learning_rate=0.0, name="mplint_gradient_recorder", **kwargs)
            self.recorded: List[Any] = []
            self.seen: List[Any] = []
            self.variable_ids: List[int] = []

        def build(self, variables: Any) -> None:
            if self.built:
                return
            super().build(variables)
            self.variable_ids = [id(v) for v in variables]
            self.recorded = [self.add_variable_from_reference(v, name="recorded") for v in variables]
            self.seen = [self.add_variable((), initializer="zeros", dtype="float32", name="seen")
                         for _ in variables]

        def update_step(self, gradient: Any, variable: Any, learning_rate: Any) -> None:
            index = self._get_variable_index(variable)
            self.recorded[index].assign(keras_mod.ops.cast(gradient, self.recorded[index].dtype))
            self.seen[index].assign(1.0)

    return GradientRecorder


def _keras2_recorder(keras_mod: Any) -> type:
    tf = keras_env.tf_module()

    class GradientRecorder(keras_mod.optimizers.Optimizer):  # type: ignore[name-defined,misc]
        def __init__(self, **kwargs: Any) -> None:
            super().__init__(name="mplint_gradient_recorder", jit_compile=False, **kwargs)
            self._learning_rate = self._build_learning_rate(0.0)
            self.recorded: List[Any] = []
            self.seen: List[Any] = []
            self.variable_ids: List[int] = []

        def build(self, var_list: Any) -> None:
            if self.recorded:  # apply_gradients builds again with only the variables it updates
                return
            super().build(var_list)
            self.variable_ids = [id(v) for v in var_list]
            self.recorded = [self.add_variable_from_reference(v, "recorded") for v in var_list]
            self.seen = [tf.Variable(0.0, trainable=False) for _ in var_list]

        def update_step(self, gradient: Any, variable: Any) -> None:
            index = self._index_dict[self._var_key(variable)]
            self.recorded[index].assign(tf.cast(gradient, self.recorded[index].dtype))
            self.seen[index].assign(1.0)

    return GradientRecorder


def _loss_scale_optimizer(keras_mod: Any, inner: Any, scale: float, growth_steps: int) -> Any:
    if is_keras2(keras_mod):
        return keras_mod.mixed_precision.LossScaleOptimizer(inner, dynamic=True, initial_scale=scale,
                                                            dynamic_growth_steps=growth_steps)
    return keras_mod.optimizers.LossScaleOptimizer(inner, initial_scale=scale,
                                                   dynamic_growth_steps=growth_steps)


def probe_optimizer(optimizer: Any, keras_mod: Any, scale: Optional[float] = None,
                    bare: bool = False, force: bool = False) -> Tuple[Any, Any]:
    """(the probe to put in the model's place, its recording innermost optimizer): the same
    LossScaleOptimizer wrappers as ``optimizer``, at their current scale or at ``scale``
    (1 for the float32 reference, which records the true gradient), the same
    ``loss_scale_factor`` and clipping. ``bare``: no loss scaling at all, so that inf/NaN
    gradients are recorded instead of skipped."""
    chain = []
    opt = optimizer
    while is_loss_scale_optimizer(opt):
        chain.append(opt)
        opt = getattr(opt, "inner_optimizer", None)
    if bare:
        chain = []
    elif force and not chain:
        chain = [None]  # a LossScaleOptimizer where the user has none
    kwargs: Dict[str, Any] = {}
    names: Tuple[str, ...] = ("clipnorm", "clipvalue", "global_clipnorm")
    if scale is None and not bare and not is_keras2(keras_mod):
        names += ("loss_scale_factor",)
    for name in names:
        value = getattr(opt, name, None)
        if value is not None:
            kwargs[name] = value
    recorder = _recorder_class(keras_mod)(**kwargs)
    outer = recorder
    for wrapper in reversed(chain):
        outer = _loss_scale_optimizer(keras_mod, outer,
                                      scale if scale is not None else current_scale(wrapper),
                                      getattr(wrapper, "dynamic_growth_steps", None) or 2000)
    return outer, recorder


def is_optimizer(value: Any) -> bool:
    return value is not None and callable(getattr(value, "apply_gradients", None)) and \
        any(name.endswith("Optimizer") for name in probe.class_names(value))


def optimizer_slots(model: Any) -> Dict[str, Any]:
    """Every optimizer the model holds, by attribute: compile()'s ``optimizer`` and any other
    attribute set to one (a GAN's ``g_optimizer`` and ``d_optimizer``)."""
    slots: Dict[str, Any] = {}
    seen = set()
    candidates = [("optimizer", getattr(model, "optimizer", None))] + sorted(vars(model).items())
    for name, value in candidates:
        if name.startswith("_") or id(value) in seen or not is_optimizer(value):
            continue
        seen.add(id(value))
        slots[name] = value
    return slots


def _variables_of(obj: Any) -> List[Any]:
    value = getattr(obj, "variables", None)
    if callable(value):  # Keras 2 legacy optimizers
        value = value()
    return list(value or [])


class Snapshot:
    """Every variable of the models and of their optimizers (weights, batch-norm statistics,
    metrics, optimizer slots and iterations, loss scales), put back after the check: the
    training step runs the user's code, which may reach an optimizer or a variable the
    probes do not replace."""

    def __init__(self, objects: Sequence[Any]) -> None:
        self.saved: List[Tuple[Any, Any]] = []
        seen = set()
        for obj in objects:
            variables = _variables_of(obj) + list(getattr(obj, "metrics_variables", None) or [])
            counter = getattr(obj, "_train_counter", None)  # Keras 2
            variables += [counter] if counter is not None else []
            for v in variables:
                if id(v) in seen or not callable(getattr(v, "assign", None)):
                    continue
                seen.add(id(v))
                try:
                    self.saved.append((v, np.array(v.numpy())))
                except Exception:  # a variable that cannot be read is one that was not used
                    pass

    def restore(self) -> None:
        for variable, value in self.saved:
            try:
                variable.assign(value)
            except Exception:
                pass


# -- one model's steps ------------------------------------------------------------------------
@dataclass
class StepRun:
    """What one optimizer was asked to apply during a model's training steps."""

    grads: List[Optional[np.ndarray]]  # per model.trainable_variables, None: no gradient
    losses: List[Optional[float]]  # the loss of each step run
    steps: int
    applied: bool  # False: every step was skipped (non-finite gradients)
    final_scale: Optional[float]
    scale_calls: int = 0  # calls of the optimizer's scale_loss/get_scaled_loss during the steps
    asked: int = 0  # calls of its apply/apply_gradients/minimize (a skipped step is asked too)


@dataclass
class StepRuns:
    """What every optimizer of the model (by attribute) was asked to apply."""

    slots: Dict[str, StepRun]
    owners: List[Optional[str]]  # per trainable variable: the optimizer that updated it
    losses: List[Optional[float]]
    steps: int

    @property
    def used(self) -> List[str]:
        """The optimizers the training step called."""
        return [name for name in self.slots if name in self.owners]

    @property
    def applied(self) -> bool:
        """Every optimizer the step asked to apply did (a LossScaleOptimizer that skipped
        every step, its gradients inf/NaN, did not)."""
        asked = [run for run in self.slots.values() if run.asked]
        return bool(asked) and all(run.applied for run in asked)

    def view(self, slot: str, owners: Optional[Sequence[Optional[str]]] = None) -> StepRun:
        """One optimizer's run, with the gradients of the variables ``owners`` gives it."""
        run = self.slots[slot]
        owners = self.owners if owners is None else owners
        grads = [g if owner == slot else None for g, owner in zip(run.grads, owners)]
        return replace(run, grads=grads, losses=self.losses, steps=self.steps)

    def all_grads(self) -> List[Optional[np.ndarray]]:
        return [self.slots[o].grads[i] if o is not None else None for i, o in enumerate(self.owners)]


SCALING_METHODS = ("scale_loss", "get_scaled_loss")
APPLYING_METHODS = ("apply_gradients", "apply", "minimize")


def _count_calls(optimizer: Any, methods: Sequence[str], counter: List[int]) -> None:
    """Count the train_step's calls of these methods (the steps run eagerly)."""
    for name in methods:
        method = getattr(optimizer, name, None)
        if not callable(method):
            continue

        def counting(*args: Any, _method: Any = method, **kwargs: Any) -> Any:
            counter[0] += 1
            return _method(*args, **kwargs)

        object.__setattr__(optimizer, name, counting)


def _swap(model: Any, attrs: Dict[str, Any]) -> Dict[str, Any]:
    old = {}
    for name, value in attrs.items():
        old[name] = getattr(model, name, None)
        object.__setattr__(model, name, value) if name.startswith("_") else setattr(model, name, value)
    return old


def _loss_of(logs: Any) -> Optional[float]:
    if isinstance(logs, dict):
        value = logs.get("loss")
        if value is None:
            value = next((v for k, v in logs.items() if "loss" in str(k)), None)
        if value is None:
            return None
        try:
            return float(np.asarray(value))
        except (TypeError, ValueError):
            return None
    return None


def run_steps(model: Any, data: Tuple[Any, ...], keras_mod: Any, optimizers: Dict[str, Any],
              deadline: Optional[Callable[[], bool]] = None, scale: Optional[float] = None,
              bare: bool = False, max_steps: int = MAX_STEPS, force: bool = False) -> StepRuns:
    """Run ``model.train_step`` eagerly with a probe in place of each of ``optimizers`` (by
    attribute) until each one it calls applies once (a dynamic loss scale skips steps with
    inf/NaN gradients and halves itself)."""
    probes = {name: probe_optimizer(opt, keras_mod, scale, bare, force) for name, opt in optimizers.items()}
    variables = list(model.trainable_variables)
    counters: Dict[str, List[int]] = {}
    asked: Dict[str, List[int]] = {}
    for name, (outer, recorder) in probes.items():
        recorder.build(variables)
        if not is_keras2(keras_mod):
            outer.build(variables)
        counters[name], asked[name] = [0], [0]
        _count_calls(outer, SCALING_METHODS, counters[name])
        _count_calls(outer, APPLYING_METHODS, asked[name])
    swapped: Dict[str, Any] = {name: outer for name, (outer, _) in probes.items()}
    swapped.update({"_run_eagerly": True, "train_function": None})
    saved = _swap(model, swapped)
    losses: List[Optional[float]] = []
    steps = 0
    tf = keras_env.tf_module()

    def settled() -> bool:
        """Every optimizer the step called has applied once (none skipped its step)."""
        return all(int(np.asarray(recorder.iterations)) > 0 for name, (_, recorder) in probes.items()
                   if asked[name][0])

    # As fit() hands them over: tensors (Keras 2's compiled loss reads ``.shape.rank``).
    data = tf.nest.map_structure(tf.convert_to_tensor, data)
    try:
        model.make_train_function(force=True)
        while steps < max_steps:
            steps += 1
            try:
                logs = model.train_function(iter([data]) if is_keras2(keras_mod) else [data])
            except Exception as exc:
                raise TrainStepError(exc) from exc
            losses.append(_loss_of(tf.nest.map_structure(
                lambda t: t.numpy() if hasattr(t, "numpy") else t, logs)))
            if settled() or (deadline is not None and deadline()):
                break
    finally:
        _swap(model, saved)
    owners: List[Optional[str]] = [None] * len(variables)
    slots: Dict[str, StepRun] = {}
    for name, (outer, recorder) in probes.items():
        index = {vid: i for i, vid in enumerate(recorder.variable_ids)}
        grads: List[Optional[np.ndarray]] = []
        for k, v in enumerate(variables):
            i = index.get(id(v))
            if i is None or float(np.asarray(recorder.seen[i])) == 0.0:
                grads.append(None)
            else:
                grads.append(np.asarray(recorder.recorded[i]).astype("float64"))
            if grads[-1] is not None and owners[k] is None:
                owners[k] = name
        applied = int(np.asarray(recorder.iterations)) > 0
        final = current_scale(outer) if is_loss_scale_optimizer(outer) else None
        slots[name] = StepRun(grads, losses, steps, applied, final, counters[name][0], asked[name][0])
    return StepRuns(slots, owners, losses, steps)


# -- comparison -------------------------------------------------------------------------------
@dataclass
class Comparison:
    compared: int = 0  # variables with a gradient in both
    ratio: Optional[float] = None  # median |policy update| / |float32 update|
    zero_policy: Optional[float] = None  # fraction of elements 0 under the policy, not in float32
    zero_float32: Optional[float] = None  # fraction of elements 0 in float32 (of all)
    nonfinite: List[int] = field(default_factory=list)  # variable indices with inf/NaN updates
    missing: List[int] = field(default_factory=list)  # gradient in float32, none under the policy


def compare(policy_grads: Sequence[Optional[np.ndarray]],
            float32_grads: Sequence[Optional[np.ndarray]]) -> Comparison:
    out = Comparison()
    logs: List[np.ndarray] = []
    zero_p = zero_f = total = 0
    for i, (gp, gf) in enumerate(zip(policy_grads, float32_grads)):
        if gf is None:
            continue
        if gp is None:
            out.missing.append(i)
            continue
        if gp.shape != gf.shape:
            continue
        out.compared += 1
        if not np.all(np.isfinite(gp)):
            out.nonfinite.append(i)
            continue
        live = np.isfinite(gf) & (np.abs(gf) > _TINY)
        total += gf.size
        zero_f += int(gf.size - np.count_nonzero(live))
        zero_p += int(np.count_nonzero(live & (gp == 0)))
        both = live & (gp != 0)
        if np.any(both):
            sample = np.log2(np.abs(gp[both]) / np.abs(gf[both]))
            if sample.size > 4096:
                sample = sample[:: sample.size // 4096 + 1]
            logs.append(sample)
    if logs:
        out.ratio = float(2.0 ** np.median(np.concatenate(logs)))
    if total:
        out.zero_policy = zero_p / total
        out.zero_float32 = zero_f / total
    return out


def factor(value: float) -> str:
    """32768 for 32773.2 (a power of two within 1%), else three digits."""
    if value > 0:
        power = 2.0 ** round(math.log2(value))
        if abs(value / power - 1) < 0.01 and power >= 2:
            return f"{power:.0f}"
    return f"{value:.3g}"


def _near(value: float, target: float, octaves: float = 1.0) -> bool:
    """Within ``octaves`` powers of two (a factor of two by default)."""
    return value > 0 and target > 0 and abs(math.log2(value) - math.log2(target)) < octaves


def _off_by_scale(ratio: float, factor: float, scale: float) -> bool:
    """Whether updates ``ratio`` times float32's are off by ``factor`` (the loss scale or its
    inverse). One step's median ratio spreads about the exact factor (a GAN's float16
    discriminator moves the generator's gradients: 2^-13.2 to 2^-16.2 for 1/32768 over 60
    random starts), so it may be two powers of two off, but stays nearer that hypothesis
    than to 1 (log2(scale)/3 octaves: 1.33 at a retry scale of 16)."""
    return _near(ratio, factor, min(2.0, math.log2(scale) / 3))


def _train_step_source(model: Any) -> Optional[str]:
    """The user's own ``train_step`` source, or None when it is Keras's."""
    method = getattr(type(model), "train_step", None)
    module = getattr(method, "__module__", "") or ""
    if module.split(".")[0] in ("keras", "tf_keras", "tensorflow"):
        return None
    try:
        return inspect.getsource(method)  # type: ignore[arg-type]
    except (OSError, TypeError):
        return ""


def _variable_owner(model: Any, variable: Any) -> Any:
    """The innermost layer that owns ``variable``."""
    owner = None
    for layer in probe.sublayers(model):
        if any(w is variable for w in getattr(layer, "weights", [])):
            owner = layer  # later entries are deeper in the pre-order
    return owner


def _scale_text(value: Optional[float]) -> str:
    return "none" if value is None else f"{value:g}"


def findings_for(model: Any, policy: str, optimizer: Any, run: StepRun, reference: StepRun,
                 cmp: Comparison, nonfinite_layer: Any, zero_scaled: Optional[float] = None,
                 keras2: bool = False, attribute: str = "optimizer"
                 ) -> Tuple[List[RuntimeFinding], List[str]]:
    """Findings (MP201, MP202, MP205, MP206, MP501) from the two runs' updates of one
    optimizer; ``keras2``: the model is Keras 2's (``get_scaled_loss`` and
    ``get_unscaled_gradients``; its ``apply_gradients`` does not unscale)."""
    found: List[RuntimeFinding] = []
    notes: List[str] = []
    float16 = rules.is_float16(policy)
    scale_call = f"self.{attribute}.get_scaled_loss(loss)" if keras2 else f"self.{attribute}.scale_loss(loss)"
    unscale_call = f"self.{attribute}.get_unscaled_gradients(grads)"
    scales, depth = optimizer_scales_loss(optimizer)
    lso_scale = (run.final_scale if run.applied and run.final_scale else current_scale(optimizer)) \
        if depth else None
    source = _train_step_source(model)
    own = "its own train_step" if source is not None else "Keras's train_step"
    if depth > 1:
        found.append(rules.finding("MP205", f"the optimizer is wrapped in a LossScaleOptimizer {depth} "
                                            f"times: the loss is scaled once but unscaled {depth} times"
                                            + (f" (measured: updates {factor(1 / cmp.ratio)}x too small)"
                                               if cmp.ratio and cmp.ratio < 0.5 else "")))
    if not run.applied and not cmp.nonfinite:
        notes.append(f"training step: every one of {run.steps} steps under {policy} had inf/NaN "
                     f"gradients and was skipped by the loss scale (now {_scale_text(run.final_scale)})")
    ratio = cmp.ratio
    if ratio is not None and depth <= 1:
        scale = lso_scale or float(getattr(optimizer, "loss_scale_factor", None) or 0) or None
        if scale and scale > 1 and _off_by_scale(ratio, 1.0 / scale, scale):
            if run.scale_calls:
                found.append(rules.finding("MP206", f"{own} under {policy}: weight updates are {scale:.0f}x "
                                                    f"smaller than in float32 (measured: {ratio:.3g}x): "
                                                    f"the gradients are unscaled twice (by hand and by "
                                                    f"the LossScaleOptimizer's apply, which unscales in "
                                                    f"Keras 3); drop the manual division"))
            else:
                found.append(rules.finding("MP202", f"{own} under {policy}: weight updates are {scale:.0f}x "
                                                    f"smaller than in float32 (measured: {ratio:.3g}x): "
                                                    f"the loss is never scaled, but the "
                                                    f"LossScaleOptimizer divides the gradients by its "
                                                    f"scale; use loss = {scale_call} inside the tape"
                                                    + (f" and {unscale_call}" if keras2 else "")))
        elif scale and scale > 1 and _off_by_scale(ratio, scale, scale):
            found.append(rules.finding("MP206", f"{own} under {policy}: weight updates are {scale:.0f}x "
                                                f"larger than in float32 (measured: {ratio:.3g}x): the "
                                                f"loss is scaled but the gradients are never unscaled"))
        elif not _near(ratio, 1.0) and (ratio > 8 or ratio < 1 / 8):
            notes.append(f"training step: updates under {policy} are {ratio:.3g}x those in float32")
    elif ratio is not None and depth > 1 and not found:
        pass
    if float16 and depth == 1 and source is not None and ratio is not None and _near(ratio, 1.0) and \
            not run.scale_calls and keras2:
        found.append(rules.finding("MP202", f"{own} never scales the loss, and Keras 2's "
                                            f"LossScaleOptimizer does not do it for you: no loss scaling "
                                            f"under {policy}, small gradients flush to zero; use "
                                            f"{scale_call} inside the tape and {unscale_call}"))
    if float16 and not scales and not any(f.rule in ("MP202", "MP206") for f in found):
        # Underflow: zeros that scaling the loss brings back (zeros it does not are rounding
        # at ReLU boundaries and the like, not underflow).
        lost = cmp.zero_policy
        rescued = None if lost is None or zero_scaled is None else max(lost - zero_scaled, 0.0)
        measured = ""
        if lost is not None:
            measured = f" (on this batch {100 * lost:.1f}% of weight elements get no update where float32's " \
                       f"is not zero"
            measured += ")" if zero_scaled is None else \
                f"; {100 * zero_scaled:.1f}% with the loss scaled by {LOSS_SCALE:g})"
        if source is None or rescued is None or rescued > _ZERO_MATTERS:
            found.append(rules.finding("MP201", f"the optimizer {type(optimizer).__name__} does not scale "
                                                f"the loss under {policy}: gradients below float16's "
                                                f"smallest value (6e-8) flush to zero{measured}; wrap it "
                                                f"in a LossScaleOptimizer (compile() does, unless "
                                                f"auto_scale_loss=False)"))
        else:
            notes.append(f"training step: nothing scales the loss under {policy}, and scaling it "
                         f"brings back no update on this batch{measured}")
    if cmp.nonfinite or (run.losses and run.losses[-1] is not None and not math.isfinite(run.losses[-1])
                         and reference.losses and reference.losses[-1] is not None
                         and math.isfinite(reference.losses[-1])):
        where = nonfinite_layer
        if where is None and cmp.nonfinite:
            variable = model.trainable_variables[cmp.nonfinite[-1]]
            owner = _variable_owner(model, variable)
            where = probe.user_layer(owner, probe.parents(model), model) if owner is not None else None
            what = "the layer nearest the output whose gradients hold inf/NaN"
        else:
            what = "the first layer whose output holds inf/NaN in the training step"
        skipped = "" if run.applied else \
            f" (every step was skipped, the loss scale fell to {_scale_text(run.final_scale)}: the model never trains)"
        found.append(rules.finding("MP501", f"training step under {policy}: {what}, while float32 stays "
                                            f"finite{skipped}: a value beyond the 16-bit range", where))
    return found, notes


def section(policy: str, optimizer: Any, data_form: str, batch: int, run: StepRun, reference: StepRun,
            cmp: Comparison, note: Optional[str] = None) -> Dict[str, Any]:
    scales, depth = optimizer_scales_loss(optimizer)

    def finite(x: Optional[float]) -> Optional[float]:
        return x if x is not None and math.isfinite(x) else None

    loss_p = run.losses[-1] if run.losses else None
    loss_f = reference.losses[-1] if reference.losses else None
    return {
        "policy": policy,
        "data": data_form,
        "batch_size": batch,
        "optimizer": type(optimizer).__name__,
        "optimizer_scales_loss": scales,
        "loss_scale": (run.final_scale if run.applied and run.final_scale else current_scale(optimizer))
        if depth else None,
        "steps": run.steps,
        "applied": run.applied,
        "variables_compared": cmp.compared,
        "update_ratio": cmp.ratio,
        "zero_update_fraction": {"policy": cmp.zero_policy, "float32": cmp.zero_float32},
        "loss": {"policy": finite(loss_p), "float32": finite(loss_f)},
        "loss_finite": loss_p is None or math.isfinite(loss_p),
        "reduced_inputs": note,
    }


# The forms of ``data`` tried, in order, until the float32 step runs: targets as class ids
# where the loss is unknown, then one-hot, then with sample weights, then the inputs alone
# (a GAN's train_step takes real images only).
DATA_FORMS = (("sparse", False), ("one-hot", False), ("sparse", True), ("x", False))


def prepare_data(model: Any, x: Any, seed: int, form: str = "sparse",
                 sample_weight: bool = False) -> Tuple[Any, str]:
    if form == "x":
        return x, "x alone"
    preds = probe.call_model(model, x, training=False)
    y = synthetic_targets(model, preds, seed, form == "sparse")
    dicts = " with dicts" if isinstance(y, dict) or isinstance(x, dict) else ""
    if sample_weight:
        batch = int(keras_env.tf_module().nest.flatten(x)[0].shape[0])
        return (x, y, np.ones((batch,), "float32")), f"(x, y, sample_weight){dicts}"
    return (x, y), f"(x, y){dicts}"


def check_train_step(model: Any, twin: Any, x: Any, policy: str, seed: int,
                     deadline: Optional[Callable[[], bool]] = None,
                     nonfinite_layer_of: Optional[Callable[[Any, Any], Any]] = None,
                     reduced: Optional[str] = None
                     ) -> Tuple[Dict[str, Any], List[RuntimeFinding], List[str]]:
    """Run both models' own ``train_step`` on one batch and compare the updates of each
    optimizer the step uses. Every variable of both models and their optimizers is put
    back afterwards."""
    if not is_compiled(model):
        return {"skipped": "the model is not compiled: have the factory call compile() with the "
                           "loss and optimizer it trains with"}, [], []
    keras_mod = keras_env.package_of(model)
    if twin is None:
        return {"skipped": "no float32 build to compare with"}, [], []
    if not is_compiled(twin):
        config = model.get_compile_config() if hasattr(model, "get_compile_config") else None
        if not config:
            return {"skipped": "the float32 build could not be compiled like the model"}, [], []
        with keras_env.policy_scope("float32"):
            twin.compile_from_config(config)
    optimizers = optimizer_slots(model)
    if not optimizers:
        return {"skipped": "the model holds no optimizer"}, [], []
    snapshot = Snapshot([model, twin] + list(optimizers.values()) + list(optimizer_slots(twin).values()))
    try:
        return _check(model, twin, x, policy, seed, deadline, nonfinite_layer_of, reduced, keras_mod,
                      optimizers)
    finally:
        snapshot.restore()


def _check(model: Any, twin: Any, x: Any, policy: str, seed: int,
           deadline: Optional[Callable[[], bool]], nonfinite_layer_of: Optional[Callable[[Any, Any], Any]],
           reduced: Optional[str], keras_mod: Any, optimizers: Dict[str, Any]
           ) -> Tuple[Dict[str, Any], List[RuntimeFinding], List[str]]:
    notes: List[str] = []
    last: Optional[BaseException] = None
    attempts: List[Tuple[str, bool, Any]] = [(f, w, x) for f, w in DATA_FORMS]
    attempts += [("x", False, real) for real in _submodel_inputs(model, x, seed)]
    for target_form, weighted, inputs in attempts:
        try:
            data, form = prepare_data(model, inputs, seed, target_form, weighted)
            if inputs is not x:
                form = "real samples shaped like a sub-model's input"
            with keras_env.policy_scope("float32"):
                # The float32 step gets the policy model's wrappers at scale 1: they record
                # the true gradient, and a train_step may call their methods.
                reference = run_steps(twin, data, keras_mod, optimizers, deadline, scale=1.0)
        except TrainStepError as exc:
            last = last or exc.error  # the first form's error: the later forms are guesses
            continue
        except Exception as exc:  # the targets could not be made for this form
            last = last or exc
            continue
        if reference.used:
            break
        last = None
    else:
        if last is None:
            return {"skipped": "the training step called none of the model's optimizers "
                               f"({', '.join(optimizers)})"}, [], []
        said = probe.first_line(last)
        if "'GradientRecorder' object" in said:  # the probe stands in for the user's optimizer
            names = ", ".join(f"{type(o).__name__} ({n})" for n, o in optimizers.items())
            said = said.replace("'GradientRecorder' object", f"the optimizer {names}, no LossScaleOptimizer "
                                                              f"under {policy},")
        return {"skipped": f"the training step fails in float32 too: {type(last).__name__}: {said}"}, [], []
    depths = {name: optimizer_scales_loss(optimizers[name])[1] for name in reference.used}
    scaled = {name: optimizer_scales_loss(optimizers[name])[0] for name in reference.used}
    with keras_env.policy_scope(policy):
        run = run_steps(model, data, keras_mod, optimizers, deadline)  # TrainStepError: the caller's MP504
        first = run
        if not run.applied and any(depths.values()) and not (deadline and deadline()):
            retry = run_steps(model, data, keras_mod, optimizers, deadline, scale=RETRY_SCALE, max_steps=1)
            if retry.applied:
                notes.append(f"training step: the loss scale overflowed float16 in {first.steps} steps "
                             f"(a dynamic scale keeps halving); compared a step at scale {RETRY_SCALE:g}")
                run = replace(retry, steps=first.steps + 1)
        bare: Optional[StepRuns] = None
        if (not run.applied or _has_nonfinite(run.all_grads())) and not (deadline and deadline()):
            bare = run_steps(model, data, keras_mod, optimizers, deadline, bare=True, max_steps=1)
        zero_scaled: Dict[str, Optional[float]] = {}
        unscaled = [name for name in reference.used if not scaled[name]]
        if rules.is_float16(policy) and unscaled and not (deadline and deadline()):
            forced = run_steps(model, data, keras_mod, optimizers, deadline, scale=LOSS_SCALE, force=True)
            for name in unscaled:
                view = forced.view(name, reference.owners)
                if view.applied and view.scale_calls:
                    zero_scaled[name] = compare(view.grads, reference.view(name).grads).zero_policy
    if bare is not None and not run.applied and not _has_nonfinite(bare.all_grads()):
        # Finite without scaling, overflowing at every scale tried: compare the unscaled step.
        notes.append(f"training step: under {policy} the loss scale overflowed float16 at every scale "
                     f"tried (down to {RETRY_SCALE:g}): some gradients exceed {65504 / RETRY_SCALE:g}; "
                     f"dynamic loss scaling will settle lower; compared a step without loss scaling")
        run = replace(bare, steps=run.steps + 1, losses=run.losses + bare.losses)
    nonfinite_layer = None
    loss_bad = bool(run.losses) and run.losses[-1] is not None and not math.isfinite(run.losses[-1])
    found: List[RuntimeFinding] = []
    several = len(reference.used) > 1
    for name in reference.used:
        optimizer = optimizers[name]
        mine, theirs = run.view(name, reference.owners), reference.view(name)
        cmp = compare(mine.grads, theirs.grads)
        if bare is not None and not mine.applied:
            cmp.nonfinite = compare(bare.view(name, reference.owners).grads, theirs.grads).nonfinite
        if (cmp.nonfinite or loss_bad) and nonfinite_layer is None and nonfinite_layer_of is not None:
            nonfinite_layer = nonfinite_layer_of(model, data[0] if isinstance(data, tuple) else data)
        more_found, more = findings_for(model, policy, optimizer, mine, theirs, cmp, nonfinite_layer,
                                        zero_scaled.get(name), keras2=is_keras2(keras_mod), attribute=name)
        for f in more_found:
            if f.rule == "MP501" and any(g.rule == "MP501" for g in found):
                continue  # one inf/NaN, whichever optimizer's variables show it
            found.append(replace(f, message=f"{name} ({type(optimizer).__name__}): {f.message}")
                         if several and f.rule != "MP501" else f)
        notes += [f"{name}: {n}" if several else n for n in more]
    primary = reference.used[0]
    batch = int(keras_env.tf_module().nest.flatten(data[0] if isinstance(data, tuple) else data)[0].shape[0])
    cmp_all = compare(run.all_grads(), reference.all_grads())
    out = section(policy, optimizers[primary], form, batch, run.view(primary, reference.owners),
                  reference.view(primary), cmp_all, reduced)
    if several:
        out["optimizer"] = ", ".join(f"{type(optimizers[n]).__name__} ({n})" for n in reference.used)
        out["optimizer_scales_loss"] = all(scaled.values())
    return out, found, notes


def _submodel_inputs(model: Any, x: Any, seed: int) -> List[Any]:
    """Synthetic batches shaped like the inputs of the models the model holds: a GAN's
    train_step takes real samples, which its discriminator takes, not its call's noise."""
    tf = keras_env.tf_module()
    batch = int(tf.nest.flatten(x)[0].shape[0])
    found = []
    for name, value in sorted(vars(model).items()):
        if name.startswith("_") or value is model or "Layer" not in probe.class_names(value) or \
                not ("Functional" in probe.class_names(value) or "Sequential" in probe.class_names(value)):
            continue
        try:
            specs, _, _ = probe.input_specs(value, None, None, batch)
            found.append(probe.synthetic_inputs(value, specs, seed))
        except Exception:
            continue
    return found


def _has_nonfinite(grads: Sequence[Optional[np.ndarray]]) -> bool:
    return any(g is not None and not np.all(np.isfinite(g)) for g in grads)
