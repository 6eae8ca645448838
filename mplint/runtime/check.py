"""``check_model``: build the model under each policy, run it, and report what is wrong.

Without a policy, the hazards of both 16-bit types are checked (``mixed_float16`` and
``mixed_bfloat16``), whatever the machine: the hardware decides only the speed advice.
A model that did not take the policy (built or saved in float32) is rebuilt under it from
its config with its weights; where that is impossible it is MP405, never a pass.
"""

from __future__ import annotations

import re
import time
import warnings
from collections import Counter
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Union

from mplint.runtime import hardware as hw
from mplint.runtime import keras_env, probe, rules, sources
from mplint.runtime.rebuild import CheckError, is_keras_model
from mplint.runtime.rebuild import build as _build
from mplint.runtime.rebuild import config_clone as _config_clone
from mplint.runtime.rebuild import explicit_float32_known, layer_policies
from mplint.runtime.report import Report, RuntimeFinding
from mplint.runtime.seeding import DEFAULT_SEED, Seeds

Factory = Callable[[], Any]
Progress = Callable[[str], None]
BOTH = (hw.MIXED_FLOAT16, hw.MIXED_BFLOAT16)
TRAIN_BATCH = 2  # the smallest batch that still has batch statistics
_first_line = probe.first_line
dtype_mismatch = probe.dtype_mismatch


def _normalize_shapes(input_shape: Any) -> Optional[List[Tuple[int, ...]]]:
    if input_shape is None:
        return None
    if input_shape and all(isinstance(d, int) for d in input_shape):
        return [tuple(input_shape)]
    return [tuple(s) for s in input_shape]


class Deadline:
    """The time budget: optional stages are skipped once it is spent."""

    def __init__(self, budget: Optional[float], started: float) -> None:
        self.budget = budget
        self.started = started

    def spent(self) -> bool:
        return self.budget is not None and time.perf_counter() - self.started >= self.budget

    def skip_note(self, what: str) -> str:
        return f"{what} skipped: the time budget of {self.budget:g} s was spent"


@dataclass
class _Options:
    input_shape: Any
    input_dtype: Optional[str]
    batch_size: Optional[int]
    inputs: Any
    train_step: bool
    alignment: int
    vocab_min: int
    seed: int
    deadline: Deadline
    progress: Progress


@dataclass
class PolicyRun:
    """What one policy's run found (merged into the report)."""

    policy: str
    findings: List[RuntimeFinding] = field(default_factory=list)
    notes: List[str] = field(default_factory=list)
    model_summary: Dict[str, Any] = field(default_factory=dict)
    outputs: List[Dict[str, Any]] = field(default_factory=list)
    layers: List[Dict[str, Any]] = field(default_factory=list)
    train_step: Optional[Dict[str, Any]] = None
    model: Any = None  # the model run under the policy (for --measure)
    x: Any = None
    alignment_layers: List[Tuple[Any, Dict[str, int]]] = field(default_factory=list)


class _Context:
    """One check: the target, the options, and the float32 build shared by the policies."""

    def __init__(self, target: Any, instance: bool, hardware: hw.Hardware, options: _Options) -> None:
        self.target = target
        self.instance = instance
        self.hardware = hardware
        self.options = options
        self._twin: Any = None
        #: puts every random generator at the check's seed (see :mod:`seeding`)
        self.seeds = Seeds(options.seed)

    def twin(self, model: Any, x: Any, rebuilt: bool) -> Tuple[Any, str]:
        """The model in float32 with the same weights as ``model``, or (None, why not)."""
        try:
            with keras_env.policy_scope("float32"):
                twin = self._twin
                if twin is None or len(twin.weights) != len(model.weights):
                    twin = _config_clone(model, "float32") if (self.instance or rebuilt) else \
                        _build(self.target)
                    if twin is None:
                        return None, "a built subclassed model cannot be rebuilt; pass a factory instead"
                    if len(twin.weights) != len(model.weights):
                        probe.call_model(twin, x)  # builds deferred weights
                twin.set_weights(model.get_weights())
        except Exception as exc:  # the comparison is a bonus; its failure must not hide findings
            return None, f"{type(exc).__name__}: {_first_line(exc)[:200]}"
        self._twin = twin
        return twin, ""


def check_model(factory_or_model: Union[Factory, Any], policy: Optional[str] = None, *,
                input_shape: Any = None, input_dtype: Optional[str] = None,
                batch_size: Optional[int] = None, inputs: Any = None, train_step: bool = False,
                alignment: int = 8, seed: int = DEFAULT_SEED, target: Optional[str] = None,
                saved_file: bool = False, select: Optional[Sequence[str]] = None,
                ignore: Optional[Sequence[str]] = None, time_budget: Optional[float] = None,
                progress: Optional[Progress] = None, measure: bool = False,
                vocabulary_threshold: int = rules.VOCAB_MIN) -> Report:
    """Build (for a factory) and run the model under ``policy``; return a ``Report``.

    ``factory_or_model`` is a zero-argument callable returning a Keras model (built under
    each policy, then under float32 when a comparison is needed) or a model already built.
    ``policy`` narrows the check to one policy; by default a factory's model is checked
    under both ``mixed_float16`` and ``mixed_bfloat16``, and a built model under its own
    mixed policy (both when it has none). ``input_shape`` excludes the batch dimension:
    ``(28, 28, 1)``, or a list of shapes for several inputs. ``inputs`` are real arrays to
    use instead of synthetic ones. ``train_step`` runs the model's own ``train_step``
    under the policy and in float32 and compares the updates. ``select``/``ignore`` take
    rule-id prefixes; ``seed`` starts every random generator (weights, synthetic data) at
    the same place on every run, unless the user's code seeded TensorFlow itself;
    ``time_budget`` (seconds) skips the optional stages once spent;
    ``progress`` gets a line per stage; ``measure`` times float32 against each mixed policy
    the hardware supports. The global policy of every loaded Keras package is restored
    afterwards, whatever happens.
    """
    started = time.perf_counter()
    try:
        keras_env.tf_module()
    except ImportError as exc:
        from mplint.runtime.requirements import MissingTensorFlow

        raise MissingTensorFlow() from exc
    if time_budget is not None and time_budget <= 0:
        raise CheckError("the time budget must be positive")
    if input_dtype is not None and not _known_dtype(input_dtype):
        raise CheckError(f"input_dtype {input_dtype!r} is not a dtype (float32, int32, ...)")
    hardware = hw.detect_hardware()
    instance = is_keras_model(factory_or_model)
    if policy is not None:
        policies, source = [policy], "argument"
    elif instance and _instance_policy(factory_or_model).startswith("mixed_"):
        policies, source = [_instance_policy(factory_or_model)], "model"
    else:
        policies, source = list(BOTH), "default"
    label = target or getattr(factory_or_model, "__qualname__", None) or type(factory_or_model).__name__
    report = Report(target=label, policy="+".join(policies), policy_source=source,
                    hardware=hardware.to_dict(policies), versions=keras_env.versions(),
                    policies=list(policies))
    if source != "default" and any(rules.is_float16(p) for p in policies) and hardware.of_type("TPU"):
        report.findings.append(rules.finding("MP403", "mixed_float16 on a TPU host: TPUs compute "
                                                      "in bfloat16; use mixed_bfloat16"))
    if instance and saved_file:
        report.notes.append("a saved model keeps the dtype policies it was saved with")
    if source == "default":
        report.notes.append("no policy given: checked the hazards of both 16-bit types (float16: "
                            "range and loss scaling; bfloat16: precision); --policy narrows it")
    options = _Options(input_shape, input_dtype, batch_size, inputs, train_step, alignment,
                       vocabulary_threshold, seed, Deadline(time_budget, started),
                       progress or (lambda _message: None))
    context = _Context(factory_or_model, instance, hardware, options)
    runs: List[PolicyRun] = []
    with keras_env.python_warnings_quiet(), context.seeds:
        for name in policies:
            if runs and options.deadline.spent():
                report.notes.append(options.deadline.skip_note(f"the check under {name}"))
                continue
            runs.append(_check_policy(context, name))
    _merge(report, runs)
    built = next((r.model for r in runs if r.model is not None), None)
    if built is not None:
        report.versions = keras_env.versions(built)
    if measure:
        from mplint.runtime.measure import measure_runs

        options.progress("measuring float32 against the mixed policies")
        report.measure = measure_runs(context, runs, hardware)
    report.advice = advice(hardware, report.measure)
    report.findings = _filtered(report.findings, select, ignore)
    report.elapsed_s = time.perf_counter() - started
    return report


def _known_dtype(name: str) -> bool:
    try:
        keras_env.tf_module().as_dtype(name)
    except (TypeError, ValueError):
        return False
    return True


def advice(hardware: hw.Hardware, measure: Optional[Dict[str, Any]] = None) -> Dict[str, Any]:
    """The policy to train with here: the fastest measured training step, else what the
    hardware facts say (one answer; the report's verdicts follow the same source)."""
    measured = (measure or {}).get("recommended")
    if measured:
        rows = {r["policy"]: r for r in measure.get("policies", [])}  # type: ignore[union-attr]
        row = rows.get(measured, {})
        key = "train_speedup" if "train_speedup" in row else "speedup"
        what = "training step" if key == "train_speedup" else "forward pass"
        if measured == hw.FLOAT32:
            text = f"keep float32 here: no mixed policy's {what} was faster, measured on this machine"
        else:
            text = f"{measured}: the fastest {what} measured on this machine ({row[key]:.2f}x float32's speed)"
        return {"policy": measured, "basis": "measured", "text": text}
    policy = hardware.default_policy()
    if policy == hw.FLOAT32:
        text = "keep float32 here: by the hardware facts no 16-bit policy is fast on this machine " \
               "(--measure times it)"
    else:
        text = f"{policy}: by the hardware facts ({hardware.assess(policy).reason}); --measure times it"
    return {"policy": policy, "basis": "hardware", "text": text}


def _filtered(found: List[RuntimeFinding], select: Optional[Sequence[str]],
              ignore: Optional[Sequence[str]]) -> List[RuntimeFinding]:
    def chosen(rule: str) -> bool:
        if select and "ALL" not in select and not any(rule.startswith(p) for p in select):
            return False
        return not (ignore and any(rule.startswith(p) for p in ignore))

    return [f for f in found if chosen(f.rule)]


def _merge(report: Report, runs: List[PolicyRun]) -> None:
    """One report from the policies' runs: a finding seen under every policy once, others
    tagged with their policy; the model, outputs and layers of the first run."""
    if not runs:
        return
    first = next((r for r in runs if r.model_summary), runs[0])
    report.model = first.model_summary
    report.outputs = first.outputs
    report.layers = first.layers
    keyed: Dict[Tuple[Any, ...], Tuple[RuntimeFinding, List[str]]] = {}
    order: List[Tuple[Any, ...]] = []
    for run in runs:
        nth: Counter = Counter()
        for f in run.findings:
            base = _identity(f)
            nth[base] += 1
            key = base + (nth[base],)  # the k-th such finding of one run matches the other's k-th
            if key not in keyed:
                keyed[key] = (f, [run.policy])
                order.append(key)
            elif run.policy not in keyed[key][1]:
                earlier, seen = keyed[key]
                keyed[key] = (replace(earlier, message=_merged_message(earlier.message, seen[0], f.message,
                                                                       run.policy)), seen + [run.policy])
    all_policies = [r.policy for r in runs]
    for key in order:
        f, seen = keyed[key]
        tag = None if (len(runs) == 1 or sorted(seen) == sorted(all_policies)) else seen[0]
        report.findings.append(replace(f, policy=tag, policies=tuple(seen)))
    for run in runs:
        for note in run.notes:
            if note not in report.notes:
                report.notes.append(note)
    sections = [r.train_step for r in runs if r.train_step is not None]
    report.train_step = sections or None


_POLICY_WORDS = re.compile(r"\bmixed_b?float16\b")
_DTYPE_WORDS = re.compile(r"\bb?float16\b")


def _merged_message(first: str, first_policy: str, second: str, second_policy: str) -> str:
    """One message for a problem seen under two policies: the words that name them made
    general where that is all that differs, else both messages."""
    def general(text: str) -> str:
        return _DTYPE_WORDS.sub("16-bit floats", _POLICY_WORDS.sub("both policies", text))

    if first == second:
        return first
    if general(first) == general(second):
        return general(first)
    return f"{first}; under {second_policy}: {second}"


def _identity(f: RuntimeFinding) -> Tuple[Any, ...]:
    """What makes two policies' findings one: the rule and the layer's place in the model
    (its generated name differs between builds: ``dense_1`` in the first is ``dense_3`` in
    the second); its class where the place is unknown (a layer named by an error message)."""
    if f.layer is None:
        return (f.rule, None)
    if f.key is not None:
        return (f.rule, "place", f.key)
    return (f.rule, "class", f.layer_class)


def _check_policy(ctx: _Context, policy: str) -> PolicyRun:
    opts = ctx.options
    run = PolicyRun(policy)
    failure: Optional[Tuple[BaseException, Any]] = None
    model: Any = None
    rebuilt = unknown_heads = False
    opts.progress(f"building the model under {policy}")
    ctx.seeds.start()  # each policy's model from the same start, the same on every run
    with keras_env.policy_scope(policy):
        try:
            model = ctx.target if ctx.instance else _build(ctx.target)
        except Exception as exc:
            if policy == "float32" or not (dtype_mismatch(exc) or _inference_failed(exc)):
                raise
            failure = (exc, None)
        if model is not None and policy != "float32" and not took_policy(model, policy):
            clone, why = _rebuild(model, policy)
            if clone is None:
                run.findings.append(rules.finding(
                    "MP405", f"the model was built before the {policy} policy was set (every layer "
                             f"computes in float32), and it cannot be rebuilt under it ({why}): nothing "
                             f"was checked in 16 bits; set the policy before building the model, or "
                             f"check a factory that builds it"))
                return run
            run.notes.append(f"the model was built without the {policy} policy (it computes in "
                             f"{_instance_policy(model)}): checked a copy rebuilt under {policy} from "
                             f"its config, with its weights")
            unknown_heads = not explicit_float32_known(model) and \
                not any(n.startswith("mixed_") for n in layer_policies(model))
            sources.copy_locations(model, clone)
            model, rebuilt = clone, True
        if model is not None:
            sources.mark_places(model)
            specs, batch, x = _inputs(run, model, opts)
            opts.progress(f"running the forward pass under {policy}")
            try:
                result = probe.forward(model, x)
            except probe.ForwardError as exc:
                if policy == "float32" or not dtype_mismatch(exc.error):
                    raise CheckError(f"the forward pass failed under {policy}: {type(exc.error).__name__}: "
                                     f"{_first_line(exc.error)}") from exc.error
                failure = (exc.error, exc.layer)
    if failure is not None:
        return _mismatch_run(ctx, run, failure, model, policy)
    _findings_from_run(ctx, run, model, rebuilt, result, specs, batch, x, policy)
    if unknown_heads:
        # A loaded float32 model does not say which layers its code gives dtype='float32':
        # an output finding may be about a layer that is float32 on purpose.
        heads = [f for f in run.findings if f.rule in ("MP101", "MP102")]
        run.findings = [f for f in run.findings if f not in heads]
        for f in heads:
            run.notes.append(f"{f.rule} unless your code gives layer '{f.layer}' dtype='float32' (a "
                             f"model saved in float32 does not tell): {f.message}")
    return run


def took_policy(model: Any, policy: str) -> bool:
    """Did the model (or any layer of it) take ``policy``? A model built before the policy
    was set keeps float32 everywhere."""
    own = getattr(getattr(model, "dtype_policy", None), "name", None)
    if own == policy:
        return True
    return any(getattr(getattr(l, "dtype_policy", None), "name", None) == policy
               for l in probe.sublayers(model))


def _rebuild(model: Any, policy: str) -> Tuple[Any, str]:
    """The model rebuilt under ``policy`` from its config, with its weights and compile
    settings; (None, why not)."""
    if probe.model_kind(model) == "subclassed":
        return None, "a subclassed model has no config to rebuild it from"
    try:
        clone = _config_clone(model, policy)
        if clone is None:
            return None, "no config"
        clone.set_weights(model.get_weights())
        _compile_like(model, clone)
    except Exception as exc:
        return None, f"{type(exc).__name__}: {_first_line(exc)[:160]}"
    return clone, ""


def _compile_like(model: Any, clone: Any) -> None:
    """Compile ``clone`` as ``model`` was (under the current policy: compile() wraps the
    optimizer in a LossScaleOptimizer for mixed_float16 as it would have)."""
    getter = getattr(model, "get_compile_config", None)
    config = getter() if callable(getter) and getattr(model, "compiled", False) else None
    if config:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            clone.compile_from_config(config)


def _findings_from_run(ctx: _Context, run: PolicyRun, model: Any, rebuilt: bool,
                       result: probe.ForwardResult, specs: list, batch: int, x: Any,
                       policy: str) -> None:
    opts = ctx.options
    layers = probe.sublayers(model)
    if policy != "float32" and not any(rules.is_16bit(rules.compute_dtype(l)) for l in layers):
        run.notes.append(f"no layer computes in 16 bits under {policy}: every layer has its own "
                         f"dtype")
    run.model, run.x = model, x
    producers = probe.output_layer_names(model, result)
    run.model_summary = _model_summary(model, specs, batch)
    run.outputs, found = rules.output_findings(result, producers)
    run.findings += found
    run.findings += rules.variable_findings(model)
    dtype = hw.compute_type(policy) or "float16"
    parent_of = probe.parents(model)

    def has_dims(layer: Any) -> bool:
        return bool(rules.layer_dims(layer, None) or "Dense" in probe.class_names(layer))

    output_layers = probe.output_size_layers(model, result, producers, has_dims)
    library = probe.library_layers(model)
    dims, found, notes = rules.dim_findings(model, result, batch, opts.alignment,
                                            ctx.hardware.unit(policy), dtype, output_layers, library,
                                            opts.vocab_min)
    run.findings += found
    run.notes += notes
    by_id = {id(l): l for l in layers}
    run.alignment_layers = [(by_id[f_id], d) for f_id, d in dims.items() if f_id in by_id]

    # The float32 build (same weights) is made only when a comparison is needed.
    reference: Optional[probe.ForwardResult] = None
    twin = None
    if rules.nonfinite_calls(result) or False in result.output_finite:
        if opts.deadline.spent():
            run.notes.append(opts.deadline.skip_note(f"the float32 comparison under {policy}"))
        else:
            opts.progress("building the float32 model to compare with")
            twin, why = ctx.twin(model, x, rebuilt)
            if twin is None:
                run.notes.append(f"no float32 build to compare with: {why}")
            elif rules.nonfinite_calls(result) or False in result.output_finite:
                with keras_env.policy_scope("float32"):
                    reference = _run(twin, x)

    def user(layer: Any) -> Any:
        return probe.user_layer(layer, parent_of, model)

    def inner_path(outer: Any, layer: Any) -> str:
        return probe.layer_path(layer, outer, parent_of)

    found, notes = rules.finiteness_findings(result, reference, policy, user, inner_path)
    run.findings += found
    run.notes += notes
    run.layers = _layer_rows(model, result, reference, dims)
    if opts.train_step:
        if opts.deadline.spent():
            run.notes.append(opts.deadline.skip_note(f"the training step under {policy}"))
            run.train_step = {"policy": policy, "skipped": "the time budget was spent"}
        else:
            _train_step(ctx, run, model, twin, x, policy, user)


def _train_step(ctx: _Context, run: PolicyRun, model: Any, twin: Any, x: Any, policy: str,
                user: Callable[[Any], Any]) -> None:
    from mplint.runtime.train_step import TrainStepError, check_train_step

    opts = ctx.options
    batch = run.model_summary.get("batch_size")

    def nonfinite_layer(m: Any, data_x: Any) -> Any:
        try:
            with keras_env.policy_scope(policy):
                result = probe.forward(m, data_x, training=True)
        except probe.ForwardError:
            return None
        bad = rules.nonfinite_calls(result)
        return user(bad[0][1].layer) if bad else None

    def full_size() -> Tuple[Any, Any, Any, Optional[str]]:
        nonlocal twin
        if twin is None:
            opts.progress("building the float32 model to compare with")
            twin, why = ctx.twin(model, x, rebuilt=ctx.instance or not took_policy(model, policy))
        return model, twin, _small_batch(x, batch), None

    opts.progress(f"building smaller copies for the training step under {policy}")
    reduced = _reduced_models(ctx, model, policy, batch)
    attempts: List[Optional[Tuple[Any, Any, Any, Optional[str]]]] = [reduced] if reduced is not None else []
    attempts.append(None)  # the full size: first choice when nothing smaller, else a confirmation
    for attempt in attempts:
        step_model, step_twin, small, note = attempt if attempt is not None else full_size()
        opts.progress(f"running the training step under {policy} and in float32"
                      + (" (smaller images)" if note else ""))
        try:
            section, found, notes = check_train_step(step_model, step_twin, small, policy, opts.seed,
                                                     deadline=opts.deadline.spent,
                                                     nonfinite_layer_of=nonfinite_layer, reduced=note)
        except TrainStepError as exc:
            if dtype_mismatch(exc.error):
                found = [rules.finding(
                    "MP504", f"the training step fails under {policy} but runs in float32: "
                             f"{_first_line(exc.error)}; a float32 tensor meets the 16-bit compute "
                             f"dtype in train_step or the loss: cast with self.compute_dtype or x.dtype")]
                section, notes = {"policy": policy, "skipped": "fails under the policy (MP504)"}, []
            else:
                section = {"policy": policy, "skipped": f"the training step fails under {policy} only: "
                                                        f"{type(exc.error).__name__}: {_first_line(exc.error)}"}
                found, notes = [], []
        # Smaller images change batch statistics: inf/NaN or underflow seen only there is
        # confirmed at the full size before it is reported.
        doubtful = note is not None and any(f.rule in ("MP501", "MP201", "MP504") for f in found)
        if doubtful and not opts.deadline.spent():
            continue
        break
    section.setdefault("policy", policy)
    run.train_step = section
    run.findings += found
    run.notes += notes


REDUCED_SIDE = (64, 96)  # spatial sizes tried for the training step of image models
_MIN_REDUCTION = 4  # worth two extra builds only when the step shrinks at least this much


def _reduced_models(ctx: _Context, model: Any, policy: str,
                    batch: Optional[int]) -> Optional[Tuple[Any, Any, Any, str]]:
    """The model and its float32 twin rebuilt from the config with smaller images (same
    weights), synthetic inputs for them, and a note; None where the model does not allow
    it (a subclassed model, no image inputs, weights that depend on the size)."""
    if probe.model_kind(model) == "subclassed" or ctx.options.inputs is not None:
        return None
    try:
        shapes = [tuple(t.shape) for t in model.inputs]
    except (AttributeError, ValueError):
        return None
    if not shapes or any(len(s) != 4 or s[1] is None or s[2] is None for s in shapes):
        return None
    if any(getattr(l, "data_format", "channels_last") == "channels_first" for l in probe.sublayers(model)):
        return None
    for side in REDUCED_SIDE:
        if all(s[1] * s[2] < _MIN_REDUCTION * side * side for s in shapes):
            return None
        try:
            config = _with_input_side(model.get_config(), side)
            custom = {type(layer).__name__: type(layer) for layer in probe.sublayers(model)}
            with keras_env.policy_scope(policy), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                small = type(model).from_config(config, custom_objects=custom)
                small.set_weights(model.get_weights())
                _compile_like(model, small)
            with keras_env.policy_scope("float32"), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                twin = _config_clone(small, "float32")
                twin.set_weights(model.get_weights())
                _compile_like(model, twin)
        except Exception:
            continue
        specs = [((TRAIN_BATCH if batch is None or batch > TRAIN_BATCH else batch,) +
                  tuple(min(d, side) if i < 2 else d for i, d in enumerate(s[1:])),
                  getattr(t.dtype, "name", str(t.dtype))) for s, t in zip(shapes, model.inputs)]
        x = probe.synthetic_inputs(small, specs, ctx.options.seed)
        before = "x".join(str(d) for d in shapes[0][1:3])
        return small, twin, x, f"images {before} -> {side}x{side} (the same weights; every size the " \
                               f"weights fix is kept)"
    return None


def _with_input_side(config: Any, side: int) -> Any:
    """A model config whose image inputs are ``side`` x ``side``."""
    if isinstance(config, dict):
        out = {}
        for key, value in config.items():
            if key in ("batch_shape", "batch_input_shape") and isinstance(value, (list, tuple)) and \
                    len(value) == 4 and config.get("name") is not None:
                out[key] = [value[0], min(value[1], side) if value[1] else value[1],
                            min(value[2], side) if value[2] else value[2], value[3]]
            else:
                out[key] = _with_input_side(value, side)
        return out
    if isinstance(config, list):
        return [_with_input_side(v, side) for v in config]
    return config


def _small_batch(x: Any, batch: Optional[int]) -> Any:
    """The first TRAIN_BATCH rows of the synthetic inputs (a fixed batch is kept)."""
    tf = keras_env.tf_module()
    flat = tf.nest.flatten(x)
    if not flat or batch is None or batch <= TRAIN_BATCH:
        return x
    return tf.nest.map_structure(lambda a: a[:TRAIN_BATCH], x)


def _instance_policy(model: Any) -> str:
    """A built model's policy; the layers' when they disagree (a loaded model is float32
    itself while its layers keep the mixed policy they were saved with)."""
    own = getattr(getattr(model, "dtype_policy", None), "name", "float32")
    names = [getattr(getattr(l, "dtype_policy", None), "name", None) for l in probe.sublayers(model)]
    mixed = [n for n in names if n and n.startswith("mixed_")]
    if own.startswith("mixed_") or not mixed:
        return own
    return Counter(mixed).most_common(1)[0][0]


def _batch_of(inputs: Any) -> int:
    tf = keras_env.tf_module()
    return int(tf.nest.flatten(inputs)[0].shape[0])


def _run(model: Any, x: Any) -> probe.ForwardResult:
    try:
        return probe.forward(model, x)
    except probe.ForwardError as exc:
        raise CheckError(f"the forward pass failed: {type(exc.error).__name__}: "
                         f"{_first_line(exc.error)}") from exc.error


def _inputs(run: PolicyRun, model: Any, opts: _Options) -> Tuple[list, int, Any]:
    try:
        specs, batch, notes = probe.input_specs(model, _normalize_shapes(opts.input_shape),
                                                opts.input_dtype, opts.batch_size)
    except probe.InputShapeError as exc:
        if opts.inputs is None:
            raise CheckError(str(exc)) from None
        specs, batch, notes = [], _batch_of(opts.inputs), []
    run.notes += notes
    x = opts.inputs if opts.inputs is not None else probe.synthetic_inputs(model, specs, opts.seed)
    return specs, batch, x


# Keras 3: "... of 'noise' (of type NoisyLayer)"; Keras 2: 'calling layer "noise" (type NoisyLayer)'.
_SYMBOLIC_LAYER = re.compile(r"""["']([^"']+)["'] \((?:of )?type (\w+)\)""")
_CALLING = re.compile(r"calling (\w+)\.call\(\)")


def _mismatch_run(ctx: _Context, run: PolicyRun, failure: Tuple[BaseException, Any], model: Any,
                  policy: str) -> PolicyRun:
    """MP504 when the model fails under the policy with a dtype clash but runs in float32."""
    error, layer = failure
    try:
        with keras_env.policy_scope("float32"):
            twin = _config_clone(model, "float32") if ctx.instance else _build(ctx.target)
            if twin is None:
                raise CheckError("a built subclassed model cannot be rebuilt in float32")
            specs, batch, x = _inputs(run, twin, ctx.options)
            probe.forward(twin, x)
    except Exception:
        raise CheckError(f"the model fails under {policy}: {type(error).__name__}: "
                         f"{_first_line(error)}") from error
    if not dtype_mismatch(error):
        # Keras hid the cause ("could not automatically infer the shape of the Lambda's
        # output"): run each Lambda's function on 16-bit values to see what it raises.
        found_lambda = _lambda_clash(twin, policy)
        if found_lambda is None:
            raise CheckError(f"the model fails under {policy} but builds in float32: "
                             f"{type(error).__name__}: {_first_line(error)}") from error
        layer, error = found_lambda
    name = getattr(layer, "name", None)
    cls = type(layer).__name__ if layer is not None else None
    if layer is None:  # failed while Keras traced the model: the message names the layer
        text = probe._ANSI.sub("", str(error))
        match = _SYMBOLIC_LAYER.search(text)
        name, cls = (match.group(1), match.group(2)) if match else (None, None)
        calling = _CALLING.search(text)
        if cls is None and calling:
            cls = calling.group(1)
    found = rules.finding("MP504", f"fails under {policy} but runs in float32: {_first_line(error)}; "
                                   f"a float32 tensor (a constant, tf.cast, a random op without dtype, "
                                   f"a raw tf.Variable) meets the 16-bit compute dtype: use "
                                   f"self.compute_dtype or x.dtype")
    if layer is not None:  # the layer itself: its place and the line that built it
        found = replace(rules.finding("MP504", found.message, layer), layer=name, layer_class=cls)
    else:
        found = replace(found, layer=name, layer_class=cls)
    run.findings.append(found)
    run.model_summary = _model_summary(twin, specs, batch)
    run.notes.append(f"the model could not run under {policy}: the model summary is of its float32 "
                     f"build, and the other checks ran on nothing")
    return run


_INFERENCE = re.compile(r"could not automatically infer", re.IGNORECASE)


def _inference_failed(exc: BaseException) -> bool:
    """Keras 3 could not trace a Lambda, and says so instead of why."""
    return bool(_INFERENCE.search(probe._ANSI.sub("", str(exc))))


def _lambda_clash(model: Any, policy: str) -> Optional[Tuple[Any, BaseException]]:
    """(the Lambda layer, its error) for the first Lambda whose function raises a dtype
    clash on values of the policy's compute dtype."""
    tf = keras_env.tf_module()
    dtype = hw.compute_type(policy) or "float16"
    for layer in probe.sublayers(model):
        if "Lambda" not in probe.class_names(layer) or not callable(getattr(layer, "function", None)):
            continue
        try:
            spec = layer.input
            values = tf.nest.map_structure(
                lambda t: tf.zeros([2 if d is None else d for d in t.shape],
                                   dtype if "float" in str(t.dtype) else t.dtype), spec)
        except Exception:
            continue
        try:
            with keras_env.policy_scope(policy):
                layer.function(values, **(getattr(layer, "arguments", None) or {}))
        except Exception as exc:
            if dtype_mismatch(exc):
                return layer, exc
    return None


def _model_summary(model: Any, specs: Sequence[Tuple[Tuple[int, ...], str]], batch: int) -> dict:
    try:
        params = int(model.count_params())
    except Exception:
        params = 0
    return {"name": model.name, "class": type(model).__name__, "kind": probe.model_kind(model),
            "layers": len(probe.sublayers(model)), "parameters": params, "batch_size": batch,
            "inputs": [{"shape": list(s), "dtype": d} for s, d in specs]}


def _layer_rows(model: Any, result: probe.ForwardResult, reference: Optional[probe.ForwardResult],
                dims: dict) -> List[dict]:
    ref_by_index = {}
    if reference is not None and len(reference.calls) == len(result.calls):
        ref_by_index = {i: c.finite for i, c in enumerate(reference.calls)}
    first: Dict[int, Tuple[Optional[int], Optional[probe.LayerCall]]] = {}
    for i, recorded in enumerate(result.calls):
        if id(recorded.layer) not in first:
            first[id(recorded.layer)] = (i, recorded)
    rows = []
    for layer in probe.sublayers(model):
        index, call = first.get(id(layer), (None, None))
        finite = None
        if call is not None:
            calls = [c.finite for c in result.calls if c.layer is layer]
            finite = False if False in calls else (True if True in calls else None)
        rows.append({
            "name": layer.name, "class": type(layer).__name__,
            "compute_dtype": rules.compute_dtype(layer),
            "variable_dtype": getattr(getattr(layer, "variable_dtype", None), "name",
                                      getattr(layer, "variable_dtype", None)),
            "input_shape": list(call.input_shape) if call and call.input_shape else None,
            "output_shape": list(call.output_shape) if call and call.output_shape else None,
            "output_dtype": call.output_dtype if call else None,
            "dims": dims.get(id(layer), {}),
            "finite": finite,
            "finite_float32": ref_by_index.get(index) if index is not None else None,
        })
    return rows
