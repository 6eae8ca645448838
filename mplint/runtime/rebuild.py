"""Building a model from its factory, and rebuilding it from its config under another
dtype policy (the layers given ``dtype='float32'`` on purpose kept). Shared by the
check and the measurement, which both need the same model under several policies."""

from __future__ import annotations

import warnings
from collections import Counter
from typing import Any, Callable, List

from mplint.runtime import keras_env, probe, sources


class CheckError(Exception):
    """The model could not be built or run (one line for the user, exit 2)."""


def is_keras_model(obj: Any) -> bool:
    names = probe.class_names(obj)
    return "Layer" in names and ("Model" in names or "Functional" in names)


def build(factory: Callable[[], Any]) -> Any:
    """The factory's model, built under the open policy scope, with where each layer was
    made recorded; built again when the factory imported a Keras package itself (a lazy
    ``import tf_keras``), which took the policy only once loaded."""
    for attempt in range(2):
        with warnings.catch_warnings(), keras_env.watch_library_models(), sources.recording():
            # numpy's "overflow encountered in cast" while tracing is what MP501 reports.
            warnings.simplefilter("ignore", RuntimeWarning)
            model = factory()
        if attempt or not keras_env.cover_new_packages():
            break
    if not is_keras_model(model):
        raise CheckError(f"the factory returned {type(model).__name__}, not a Keras model")
    return model


def config_clone(model: Any, policy: str) -> Any:
    """The model rebuilt from its config with every mixed policy (and, for a model built
    entirely in float32, every float32 one) replaced by ``policy``; no weights."""
    if probe.model_kind(model) == "subclassed":
        return None
    mixed = any(n.startswith("mixed_") for n in layer_policies(model))
    convert = not mixed and policy != "float32"
    keep = _explicit_float32(model) if convert else frozenset()
    config = _policy_config(model.get_config(), policy, convert, keep)
    # The model's own classes, so that unregistered custom layers deserialize too.
    custom = {type(layer).__name__: type(layer) for layer in probe.sublayers(model)}
    with keras_env.policy_scope(policy):
        return type(model).from_config(config, custom_objects=custom)


def explicit_float32_known(model: Any) -> bool:
    """Can the layers given dtype='float32' on purpose be told apart (see below)?"""
    layers = [l for l in probe.sublayers(model)
              if getattr(getattr(l, "dtype_policy", None), "name", None) == "float32"]
    counts = Counter(id(l.dtype_policy) for l in layers)
    return bool(counts) and counts.most_common(1)[0][1] >= 2


def _explicit_float32(model: Any) -> frozenset:
    """Names of layers given dtype='float32' on purpose in a model built in float32.

    A Keras 3 layer built without a dtype shares the global policy object; one given a
    dtype has its own. A loaded model's layers all have their own: none is told apart."""
    layers = [l for l in probe.sublayers(model)
              if getattr(getattr(l, "dtype_policy", None), "name", None) == "float32"]
    counts = Counter(id(l.dtype_policy) for l in layers)
    if not counts:
        return frozenset()
    shared, n = counts.most_common(1)[0]
    if n < 2:
        return frozenset()
    return frozenset(l.name for l in layers if id(l.dtype_policy) != shared)


def layer_policies(model: Any) -> List[str]:
    return [str(getattr(getattr(l, "dtype_policy", None), "name", "")) for l in probe.sublayers(model)]


_POLICY_CLASSES = ("DTypePolicy", "FloatDTypePolicy", "Policy")
_SIXTEEN = ("float16", "bfloat16", "mixed_float16", "mixed_bfloat16")


def _policy_config(value: Any, policy: str, convert_float32: bool = False,
                   keep: frozenset = frozenset(), in_input: bool = False) -> Any:
    """A model config with the layers' dtype policies replaced by ``policy``: the mixed ones
    (and float32 ones when ``convert_float32``, except the layers named in ``keep``); pure
    float16/bfloat16 layers (MP404) and input dtypes stay."""
    targets = {"mixed_float16", "mixed_bfloat16"} | ({"float32"} if convert_float32 else set())
    if policy == "float32":
        targets = set(_SIXTEEN)
    if isinstance(value, dict):
        if value.get("class_name") in _POLICY_CLASSES and isinstance(value.get("config"), dict):
            name = value["config"].get("name")
            return {**value, "config": {**value["config"], "name": policy}} if name in targets else value
        inner = value.get("config")
        if keep and isinstance(inner, dict) and inner.get("name") in keep and "class_name" in value:
            return value
        is_input = value.get("class_name") == "InputLayer"
        out = {}
        for key, item in value.items():
            if key == "dtype" and isinstance(item, str) and not in_input and item in targets:
                out[key] = policy
            else:
                out[key] = _policy_config(item, policy, convert_float32, keep, in_input or is_input)
        return out
    if isinstance(value, list):
        return [_policy_config(v, policy, convert_float32, keep, in_input) for v in value]
    return value


def _float32_config(value: Any) -> Any:
    """Every 16-bit dtype policy in a model config replaced by float32."""
    return _policy_config(value, "float32")
