"""``check_model``: build the model under a policy, run it, and report what is wrong."""

from __future__ import annotations

import re
import time
import warnings
from collections import Counter
from dataclasses import replace
from typing import Any, Callable, List, Optional, Sequence, Tuple, Union

from mplint.runtime import hardware as hw
from mplint.runtime import keras_env, probe, rules
from mplint.runtime.report import Report

Factory = Callable[[], Any]


class CheckError(Exception):
    """The model could not be built or run (one line for the user, exit 2)."""


def is_keras_model(obj: Any) -> bool:
    names = probe.class_names(obj)
    return "Layer" in names and ("Model" in names or "Functional" in names)


def _normalize_shapes(input_shape: Any) -> Optional[List[Tuple[int, ...]]]:
    if input_shape is None:
        return None
    if input_shape and all(isinstance(d, int) for d in input_shape):
        return [tuple(input_shape)]
    return [tuple(s) for s in input_shape]


def check_model(factory_or_model: Union[Factory, Any], policy: Optional[str] = None, *,
                input_shape: Any = None, input_dtype: Optional[str] = None,
                batch_size: Optional[int] = None, inputs: Any = None, train_step: bool = False,
                alignment: int = 8, seed: int = 0, target: Optional[str] = None,
                saved_file: bool = False) -> Report:
    """Build (for a factory) and run the model under ``policy``; return a ``Report``.

    ``factory_or_model`` is a zero-argument callable returning a Keras model (built under
    the policy, then again under float32 when a comparison is needed) or a model
    already built (checked as it is). ``policy`` defaults to the hardware's best
    (mixed_float16 on NVIDIA GPUs, mixed_bfloat16 elsewhere). ``input_shape`` excludes
    the batch dimension: ``(28, 28, 1)``, or a list of shapes for several inputs.
    ``inputs`` are real arrays to use instead of synthetic ones. The global policy of
    every loaded Keras package is restored afterwards, whatever happens.
    """
    started = time.perf_counter()
    try:
        keras_env.tf_module()
    except ImportError as exc:
        from mplint.runtime import MissingTensorFlow

        raise MissingTensorFlow() from exc
    hardware = hw.detect_hardware()
    instance = is_keras_model(factory_or_model)
    if policy is None:
        if instance:
            policy, source = _instance_policy(factory_or_model), "model"
        else:
            policy, source = hardware.default_policy(), "hardware default"
    else:
        source = "argument"
    label = target or getattr(factory_or_model, "__qualname__", None) or type(factory_or_model).__name__
    report = Report(target=label, policy=policy, policy_source=source,
                    hardware=hardware.to_dict(policy), versions=keras_env.versions())
    if "float16" in policy and "bfloat16" not in policy and hardware.of_type("TPU"):
        report.findings.append(rules.finding("MP403", "mixed_float16 on a TPU host: TPUs compute "
                                                      "in bfloat16; use mixed_bfloat16"))
    if instance and saved_file:
        report.notes.append("a saved model keeps the dtype policies it was saved with")

    failure: Optional[Tuple[BaseException, Any]] = None
    with keras_env.policy_scope(policy):
        try:
            model = factory_or_model if instance else _build(factory_or_model)
        except Exception as exc:
            if policy == "float32" or not dtype_mismatch(exc):
                raise
            failure, model = (exc, None), None
        if model is not None:
            specs, batch, x = _inputs(report, model, input_shape, input_dtype, batch_size, inputs, seed)
            try:
                result = probe.forward(model, x)
            except probe.ForwardError as exc:
                if policy == "float32" or not dtype_mismatch(exc.error):
                    raise CheckError(f"the forward pass failed: {type(exc.error).__name__}: "
                                     f"{_first_line(exc.error)}") from exc.error
                failure = (exc.error, exc.layer)
    if failure is not None:
        return _mismatch_report(report, failure, factory_or_model, model, instance, policy,
                                (input_shape, input_dtype, batch_size, inputs, seed), started)
    _findings_from_run(report, factory_or_model, model, instance, result, specs, batch, x,
                       policy, alignment, train_step, seed)
    report.elapsed_s = time.perf_counter() - started
    return report


def _findings_from_run(report: Report, factory_or_model: Any, model: Any, instance: bool,
                       result: probe.ForwardResult, specs: list, batch: int, x: Any, policy: str,
                       alignment: int, train_step: bool, seed: int) -> None:
    layers = probe.sublayers(model)
    if policy != "float32" and not any(rules.is_16bit(rules.compute_dtype(l)) for l in layers):
        report.notes.append(f"no layer computes in 16 bits: the model did not take the {policy} policy "
                            f"(built before the check, or every layer has its own dtype)")
    producers = probe.output_layer_names(model, result)
    report.model = _model_summary(model, specs, batch)
    report.outputs, found = rules.output_findings(result, producers)
    report.findings += found
    report.findings += rules.variable_findings(model)
    dims, found = rules.dim_findings(model, result, batch, alignment)
    report.findings += found

    # The float32 build (same weights) is made only when a comparison is needed.
    reference: Optional[probe.ForwardResult] = None
    twin = None
    if rules.nonfinite_calls(result) or False in result.output_finite or train_step:
        twin, why = _float32_twin(factory_or_model, model, instance, x)
        if twin is None:
            report.notes.append(f"no float32 build to compare with: {why}")
        else:
            with keras_env.policy_scope("float32"):
                reference = _run(twin, x)
    found, notes = rules.finiteness_findings(result, reference, policy)
    report.findings += found
    report.notes += notes
    report.layers = _layer_rows(model, result, reference, dims)
    if train_step:
        from mplint.runtime.train_step import run_train_step

        with keras_env.policy_scope(policy):
            report.train_step, found = run_train_step(model, twin, x, result, policy, seed)
        report.findings += found


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


def _build(factory: Factory) -> Any:
    with warnings.catch_warnings():
        # numpy's "overflow encountered in cast" while tracing is what MP501 reports.
        warnings.simplefilter("ignore", RuntimeWarning)
        model = factory()
    if not is_keras_model(model):
        raise CheckError(f"the factory returned {type(model).__name__}, not a Keras model")
    return model


def _run(model: Any, x: Any) -> probe.ForwardResult:
    try:
        return probe.forward(model, x)
    except probe.ForwardError as exc:
        raise CheckError(f"the forward pass failed: {type(exc.error).__name__}: "
                         f"{_first_line(exc.error)}") from exc.error


def _inputs(report: Report, model: Any, input_shape: Any, input_dtype: Optional[str],
            batch_size: Optional[int], inputs: Any, seed: int) -> Tuple[list, int, Any]:
    try:
        specs, batch, notes = probe.input_specs(model, _normalize_shapes(input_shape), input_dtype,
                                                batch_size)
    except probe.InputShapeError as exc:
        if inputs is None:
            raise CheckError(str(exc)) from None
        specs, batch, notes = [], _batch_of(inputs), []
    report.notes += notes
    return specs, batch, inputs if inputs is not None else probe.synthetic_inputs(model, specs, seed)


_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_HALF = re.compile(r"\b(half|b?float16)\b")
_FLOAT = re.compile(r"\b(float32|float) tensor\b|\bfloat32\b")


_FRAMING = ("Exception encountered when calling", "Arguments received by",
            "Call arguments received by", "•")


def _first_line(exc: BaseException) -> str:
    """The line that says what went wrong (Keras 3 puts its own framing first)."""
    lines = [l.strip() for l in _ANSI.sub("", str(exc)).splitlines()
             if l.strip() and not l.strip().startswith(_FRAMING)]
    telling = [l for l in lines if _HALF.search(l) and _FLOAT.search(l)]
    return (telling or lines or [""])[0][:300]


def dtype_mismatch(exc: BaseException) -> bool:
    """TensorFlow's complaint when a float32 tensor meets the 16-bit compute dtype."""
    text = _ANSI.sub("", str(exc))
    return bool(_HALF.search(text) and _FLOAT.search(text))


# Keras 3: "... of 'noise' (of type NoisyLayer)"; Keras 2: 'calling layer "noise" (type NoisyLayer)'.
_SYMBOLIC_LAYER = re.compile(r"""["']([^"']+)["'] \((?:of )?type (\w+)\)""")
_CALLING = re.compile(r"calling (\w+)\.call\(\)")


def _mismatch_report(report: Report, failure: Tuple[BaseException, Any], factory_or_model: Any,
                     model: Any, instance: bool, policy: str, input_args: tuple,
                     started: float) -> Report:
    """MP504 when the model fails under the policy with a dtype clash but runs in float32."""
    error, layer = failure
    input_shape, input_dtype, batch_size, inputs, seed = input_args
    try:
        with keras_env.policy_scope("float32"):
            twin = _config_clone(model) if instance else _build(factory_or_model)
            if twin is None:
                raise CheckError("a built subclassed model cannot be rebuilt in float32")
            specs, batch, x = _inputs(report, twin, input_shape, input_dtype, batch_size, inputs, seed)
            probe.forward(twin, x)
    except Exception:
        raise CheckError(f"the model fails under {policy}: {type(error).__name__}: "
                         f"{_first_line(error)}") from error
    name = getattr(layer, "name", None)
    cls = type(layer).__name__ if layer is not None else None
    if layer is None:  # failed while Keras traced the model: the message names the layer
        text = _ANSI.sub("", str(error))
        match = _SYMBOLIC_LAYER.search(text)
        name, cls = (match.group(1), match.group(2)) if match else (None, None)
        if cls is None and _CALLING.search(text):
            cls = _CALLING.search(text).group(1)  # type: ignore[union-attr]
    found = rules.finding("MP504", f"fails under {policy} but runs in float32: {_first_line(error)}; "
                                   f"a float32 tensor (a constant, tf.cast, a random op without dtype, "
                                   f"a raw tf.Variable) meets the 16-bit compute dtype: use "
                                   f"self.compute_dtype or x.dtype")
    report.findings.append(replace(found, layer=name, layer_class=cls))
    report.model = _model_summary(twin, specs, batch)
    report.notes.append("the model could not run under the policy: the model summary is of its "
                        "float32 build, and the other checks ran on nothing")
    report.elapsed_s = time.perf_counter() - started
    return report


def _float32_twin(factory_or_model: Any, model: Any, instance: bool, x: Any) -> Tuple[Any, str]:
    """The same model in float32 with the same weights, or (None, why not)."""
    try:
        with keras_env.policy_scope("float32"):
            twin = _config_clone(model) if instance else _build(factory_or_model)
            if twin is None:
                return None, "a built subclassed model cannot be rebuilt; pass a factory instead"
            if len(twin.weights) != len(model.weights):
                twin(x, training=False)  # builds deferred weights
        twin.set_weights(model.get_weights())
    except Exception as exc:  # the comparison is a bonus; its failure must not hide findings
        return None, f"{type(exc).__name__}: {str(exc).strip()[:200]}"
    return twin, ""


def _config_clone(model: Any) -> Any:
    if probe.model_kind(model) == "subclassed":
        return None
    config = _float32_config(model.get_config())
    # The model's own classes, so that unregistered custom layers deserialize too.
    custom = {type(layer).__name__: type(layer) for layer in probe.sublayers(model)}
    return type(model).from_config(config, custom_objects=custom)


def _float32_config(value: Any) -> Any:
    """Every dtype policy in a model config replaced by float32."""
    if isinstance(value, dict):
        if value.get("class_name") in ("DTypePolicy", "FloatDTypePolicy", "Policy") and \
                isinstance(value.get("config"), dict):
            return {**value, "config": {**value["config"], "name": "float32"}}
        out = {}
        for key, item in value.items():
            if key == "dtype" and isinstance(item, str) and item in (
                    "float16", "bfloat16", "mixed_float16", "mixed_bfloat16"):
                out[key] = "float32"
            else:
                out[key] = _float32_config(item)
        return out
    if isinstance(value, list):
        return [_float32_config(v) for v in value]
    return value


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
    first = {}
    for i, call in enumerate(result.calls):
        if id(call.layer) not in first:
            first[id(call.layer)] = (i, call)
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
