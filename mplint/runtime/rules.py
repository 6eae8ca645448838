"""From what the forward pass recorded to findings, with the static rules' ids.

Each function reads the recorded calls (``probe.LayerCall``) and the model's layers and
returns ``RuntimeFinding``s. Like the static rules they stay silent where the numbers
do not show a problem for certain.
"""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional, Sequence, Set, Tuple

import numpy as np

from mplint.runtime import sources
from mplint.runtime.probe import ForwardResult, LayerCall, class_names, sublayers
from mplint.runtime.report import RuntimeFinding, severity_of

SIXTEEN_BIT = ("float16", "bfloat16")
VOCAB_MIN = 1000  # MP304's default: output layers this wide are vocabularies
CONV_CLASSES = {"Conv1D", "Conv2D", "Conv3D", "Conv1DTranspose", "Conv2DTranspose",
                "Conv3DTranspose", "SeparableConv1D", "SeparableConv2D"}
RNN_CLASSES = {"LSTM", "GRU", "SimpleRNN"}


def finding(rule: str, message: str, layer: Any = None) -> RuntimeFinding:
    """A finding about ``layer`` (None: the whole model), with where the user's code made it
    and its place in the model."""
    if layer is None:
        return RuntimeFinding(rule, severity_of(rule), message)
    where = sources.location(layer)
    return RuntimeFinding(rule, severity_of(rule), message, getattr(layer, "name", None),
                          type(layer).__name__, path=where[0] if where else None,
                          line=where[1] if where else None, key=sources.place(layer))


def is_16bit(dtype: Optional[str]) -> bool:
    return dtype in SIXTEEN_BIT


def is_float16(policy: str) -> bool:
    """The policy computes in float16 (not bfloat16)."""
    return "float16" in policy and "bfloat16" not in policy


def compute_dtype(layer: Any) -> Optional[str]:
    value = getattr(layer, "compute_dtype", None)
    return value if isinstance(value, str) or value is None else getattr(value, "name", str(value))


# -- model outputs: MP101 / MP102 ------------------------------------------------------
def is_softmax_layer(layer: Any) -> bool:
    if layer is None:
        return False
    if "Softmax" in class_names(layer):
        return True
    activation = getattr(layer, "activation", None)
    return "softmax" in str(getattr(activation, "__name__", activation) or "").lower()


def looks_like_probabilities(tensor: Any) -> bool:
    """Rows of non-negative values summing to 1 on the last axis: a softmax output."""
    values = np.asarray(tensor, dtype="float64") if not hasattr(tensor, "numpy") else \
        tensor.numpy().astype("float64")
    if values.ndim < 1 or values.shape[-1] < 2 or not np.all(np.isfinite(values)):
        return False
    return bool(np.all(values >= 0) and np.allclose(values.sum(axis=-1), 1.0, atol=2e-2))


def output_findings(result: ForwardResult, producers: Sequence[Any]) -> Tuple[List[Dict[str, Any]],
                                                                               List[RuntimeFinding]]:
    outputs, found = [], []
    for index, (tensor, layer) in enumerate(zip(result.outputs, producers)):
        dtype = getattr(tensor.dtype, "name", str(tensor.dtype))
        softmax = is_softmax_layer(layer) or (is_16bit(dtype) and looks_like_probabilities(tensor))
        outputs.append({"index": index, "shape": list(tensor.shape), "dtype": dtype,
                        "layer": getattr(layer, "name", None), "softmax": softmax})
        if not is_16bit(dtype):
            continue
        where = f"model output {index}" if len(result.outputs) > 1 else "the model output"
        fix = ("give the output layer dtype='float32'" if layer is not None else
               "cast to float32 before the last op in call()")
        if softmax:
            if dtype == "bfloat16":
                why = ("bfloat16 keeps 8 bits of precision: probabilities are rounded to 2-3 "
                       "digits (0.996 becomes 1.0) and the loss and its gradients see the rounding")
            else:
                why = ("float16 overflows past 65504 and flushes probabilities below 6e-8 to zero, "
                       "so the log in the loss gives inf")
            found.append(finding("MP101", f"{where} is a softmax computed in {dtype}: {why}; {fix}", layer))
        else:
            found.append(finding("MP102", f"{where} is {dtype}, not float32: the loss and metrics "
                                          f"see 16-bit values; {fix}", layer))
    return outputs, found


# -- float16 variables: MP404 ----------------------------------------------------------
def variable_findings(model: Any) -> List[RuntimeFinding]:
    found: List[RuntimeFinding] = []
    seen: Set[int] = set()
    # Reversed pre-order: a nested layer claims its own variables before its parent.
    for layer in reversed([model] + sublayers(model)):
        names = []
        for var in getattr(layer, "weights", []):
            if id(var) in seen:
                continue
            seen.add(id(var))
            dtype = getattr(var.dtype, "name", var.dtype)
            if is_16bit(dtype):
                names.append((var.path if hasattr(var, "path") else var.name, dtype))
        if names:
            dtypes = "/".join(sorted({d for _, d in names}))
            listed = ", ".join(n.split("/")[-1] for n, _ in names[:4]) + (", ..." if len(names) > 4 else "")
            found.append(finding("MP404", f"{len(names)} variable{'s' * (len(names) != 1)} stored in "
                                          f"{dtypes} ({listed}): small updates are lost and training "
                                          f"stalls; use a mixed policy, which keeps variables in "
                                          f"float32", layer))
    found.reverse()
    return found


# -- Tensor Core dimensions: MP301-MP304 ---------------------------------------------------
def layer_dims(layer: Any, call: Optional[LayerCall]) -> Dict[str, int]:
    """The dimensions of one layer that decide Tensor Core use, as resolved at run time."""
    names = set(class_names(layer))
    in_shape = call.input_shape if call else None
    last = in_shape[-1] if in_shape else None
    dims: Dict[str, int] = {}
    if "Dense" in names and "EinsumDense" not in names:
        dims["units"] = int(layer.units)
        if last is not None:
            dims["input_features"] = int(last)
    elif names & CONV_CLASSES and not any("Depthwise" in n for n in names):
        dims["filters"] = int(layer.filters)
        if in_shape:
            axis = 1 if getattr(layer, "data_format", "channels_last") == "channels_first" else -1
            channels = in_shape[axis]
            if channels is not None:
                dims["input_channels"] = int(channels)
    elif names & RNN_CLASSES:
        dims["units"] = int(layer.units)
        if last is not None:
            dims["input_features"] = int(last)
    elif "Embedding" in names:
        dims["output_dim"] = int(layer.output_dim)
    elif "MultiHeadAttention" in names:
        for key in ("key_dim", "value_dim"):
            value = getattr(layer, key, None) or getattr(layer, "_" + key, None)
            if isinstance(value, (int, np.integer)):
                dims[key] = int(value)
        if dims.get("value_dim") == dims.get("key_dim"):
            dims.pop("value_dim", None)  # value_dim defaults to key_dim: one number, one finding
    return dims


_OWN_DIMS = {"units": "MP301", "output_dim": "MP301", "key_dim": "MP301", "value_dim": "MP301",
             "filters": "MP302"}
_INPUT_DIMS = {"input_features": "MP301", "input_channels": "MP302"}
_MIN_INPUT_DIM = 8  # 1-7 features/channels come from the data (RGB, tabular); padding rarely pays


def _next_multiple(value: int, alignment: int) -> int:
    return -(-value // alignment) * alignment


def unit_phrase(unit: Optional[str], dtype: str) -> str:
    """What a misaligned size costs, naming the matrix unit in use here."""
    if unit == "Tensor Cores":
        return "Tensor Cores stay idle"
    if unit:
        return f"{unit} run padded, wasting work"
    return f"on NVIDIA GPUs Tensor Cores stay idle (this machine has no matrix unit for {dtype})"


def dim_findings(model: Any, result: ForwardResult, batch: int, alignment: int,
                 unit: Optional[str] = None, dtype: str = "float16",
                 output_layers: Optional[Set[int]] = None,
                 library: Optional[Dict[int, str]] = None,
                 vocab_min: int = VOCAB_MIN
                 ) -> Tuple[Dict[int, Dict[str, int]], List[RuntimeFinding], List[str]]:
    """MP301-MP304. ``output_layers``: ids of the layers whose size is a model output's
    (the data's: 10 classes); ``library``: id -> where the layer comes from, for layers the
    user cannot resize (keras.applications, keras_hub): those give notes, not findings."""
    first_call: Dict[int, LayerCall] = {}
    for call in result.calls:
        first_call.setdefault(id(call.layer), call)
    # The widths of the model outputs are fixed by the data (10 classes): the layer that
    # computes one (a Dense(10) before a float32 softmax too) is exempt, a hidden layer of
    # the same width is not.
    output_widths = {int(t.shape[-1]) for t in result.outputs if len(t.shape)}
    library = library or {}
    idle = unit_phrase(unit, dtype)
    # A Bidirectional wrapper runs a mirrored copy of its layer: report the forward one.
    mirrored = {id(getattr(l, "backward_layer", None)) for l in sublayers(model)
                if "Bidirectional" in class_names(l)}
    dims_by_layer: Dict[int, Dict[str, int]] = {}
    own: List[Tuple[Any, str, int]] = []
    inputs: List[Tuple[Any, str, int]] = []
    any_16bit = False
    for layer in sublayers(model):
        found_call = first_call.get(id(layer))
        if found_call is None or id(layer) in mirrored:
            continue
        call = found_call
        dims = layer_dims(layer, call)
        if dims:
            dims_by_layer[id(layer)] = dims
        if not is_16bit(compute_dtype(layer)):
            continue
        any_16bit = True
        for key, value in dims.items():
            if value % alignment == 0:
                continue
            if key in _OWN_DIMS:
                own.append((layer, key, value))
            elif value >= _MIN_INPUT_DIM:
                inputs.append((layer, key, value))
    found: List[RuntimeFinding] = []
    library_found: List[RuntimeFinding] = []
    flagged_values = set()

    def is_output(layer: Any, value: int) -> bool:
        if value not in output_widths:
            return False
        return output_layers is None or id(layer) in output_layers

    def add(item: RuntimeFinding, layer: Any) -> None:
        (library_found if id(layer) in library else found).append(item)

    for layer, key, value in own:
        nxt = _next_multiple(value, alignment)
        if key in ("units", "filters") and is_output(layer, value):
            # Only a large vocabulary is worth padding (MP304).
            if value >= vocab_min:
                add(finding("MP304", f"output layer has {value} {key} (a vocabulary or class count): "
                                     f"pad it to {nxt}: {idle}", layer), layer)
            continue
        flagged_values.add(value)
        add(finding(_OWN_DIMS[key], f"{key}={value} is not a multiple of {alignment} (use {nxt}): "
                                    f"{idle}", layer), layer)
    for layer, key, value in inputs:
        if value in flagged_values:
            continue  # the layer producing it is already reported
        nxt = _next_multiple(value, alignment)
        what = key.replace("_", " ")
        add(finding(_INPUT_DIMS[key], f"receives {value} {what} at run time, not a multiple of "
                                      f"{alignment} (pad to {nxt}): {idle}", layer), layer)
    if any_16bit and batch > alignment and batch % alignment:  # below it: a deliberate choice (MP303)
        found.append(finding("MP303", f"batch size {batch} is not a multiple of {alignment} (use "
                                      f"{_next_multiple(batch, alignment)}): {idle}"))
    notes = _library_notes(library_found, library)
    return dims_by_layer, found, notes


def _library_notes(found: List[RuntimeFinding], library: Dict[int, str]) -> List[str]:
    """One note per library model: its layers are not the user's to resize."""
    if not found:
        return []
    by_rule: Dict[str, List[str]] = {}
    for f in found:
        by_rule.setdefault(f.rule, []).append(f.layer or "?")
    origins = sorted(set(library.values()))
    parts = []
    for rule, names in sorted(by_rule.items()):
        shown = ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")
        parts.append(f"{rule} x{len(names)} ({shown})")
    return [f"alignment in layers of {', '.join(origins)}, which your code does not size: "
            f"{'; '.join(parts)}; not reported as findings"]


# -- finiteness: MP501 -----------------------------------------------------------------
def nonfinite_calls(result: ForwardResult) -> List[Tuple[int, LayerCall]]:
    return [(i, c) for i, c in enumerate(result.calls) if c.finite is False]


def finiteness_findings(result: ForwardResult, reference: Optional[ForwardResult], policy: str,
                        user_layer: Optional[Callable[[Any], Any]] = None,
                        inner_path: Optional[Callable[[Any, Any], str]] = None
                        ) -> Tuple[List[RuntimeFinding], List[str]]:
    """MP501 for the first layer whose output is inf/NaN under the policy, finite in float32;
    ``user_layer`` maps a layer inside another (MultiHeadAttention's Dropout, a Dense in the
    user's attention layer) to the outermost layer that holds it, and ``inner_path``
    names the way down (``attention/dropout``)."""
    notes: List[str] = []
    bad = nonfinite_calls(result)
    bad_outputs = [i for i, f in enumerate(result.output_finite) if f is False]
    if not bad and not bad_outputs:
        return [], notes
    aligned = reference is not None and len(reference.calls) == len(result.calls) and all(
        type(a.layer).__name__ == type(b.layer).__name__ for a, b in zip(result.calls, reference.calls))
    if reference is not None and not aligned:
        notes.append("the float32 build ran different layers; inf/NaN is reported without comparison")
    for index, call in bad:
        ref_finite = reference.calls[index].finite if aligned else None  # type: ignore[union-attr]
        if ref_finite is False:
            notes.append(f"layer '{call.layer.name}' outputs inf/NaN in float32 too: "
                         f"not a precision problem")
            return [], notes
        suffix = "but is finite in float32" if ref_finite else "(no float32 build to compare with)"
        layer = user_layer(call.layer) if user_layer is not None else call.layer
        path = inner_path(layer, call.layer) if inner_path is not None else call.layer.name
        inner = f" (in its inner '{path}')" if layer is not call.layer else ""
        return [finding("MP501", f"first layer whose output holds inf/NaN under {policy}{inner}, "
                                 f"{suffix}: a value beyond the 16-bit range (float16 holds up to "
                                 f"65504; a -1e9 mask constant becomes -inf) overflows here", layer)], notes
    # No layer output is bad, yet a model output is: the model's own call made it.
    ref_ok = reference is not None and all(reference.output_finite[i] is not False for i in bad_outputs)
    if reference is not None and not ref_ok:
        notes.append("the model output is inf/NaN in float32 too: not a precision problem")
        return [], notes
    return [finding("MP501", f"model output {bad_outputs[0]} holds inf/NaN under {policy}"
                             f"{', but is finite in float32' if ref_ok else ''}; it is computed in the "
                             f"model's own call(), outside any layer")], notes
