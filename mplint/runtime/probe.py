"""Run a model once on synthetic inputs and record what every layer did.

Each layer's ``call`` is wrapped for the duration of one eager forward pass (the
instance attribute shadows the class method; removed afterwards), so functional,
Sequential and subclassed models are probed alike, nested layers included. Only small
summaries are kept (shapes, dtypes, finiteness), never the activations themselves.
"""

from __future__ import annotations

import functools
import re
import warnings
import weakref
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np

from mplint.runtime import sources
from mplint.runtime.keras_env import functions_run_eagerly, tf_module

Shape = Tuple[Optional[int], ...]
DEFAULT_FREE_DIM = 16  # for None dims other than the batch (sequence lengths)


class InputShapeError(Exception):
    """The model does not say what it takes and no input shape was given."""


class ForwardError(Exception):
    """The forward pass raised; ``layer`` is the innermost layer whose call raised."""

    def __init__(self, error: BaseException, layer: Any) -> None:
        super().__init__(str(error))
        self.error = error
        self.layer = layer


@dataclass
class LayerCall:
    layer: Any
    input_shape: Optional[Shape]
    input_dtype: Optional[str]
    output_shape: Optional[Shape]
    output_dtype: Optional[str]
    finite: Optional[bool]  # None: no floating-point output
    output_refs: Tuple[Any, ...] = ()  # weak references: which tensors it returned


@dataclass
class ForwardResult:
    calls: List[LayerCall]
    outputs: List[Any]  # flattened model outputs (eager tensors)
    output_finite: List[Optional[bool]] = field(default_factory=list)


def class_names(obj: Any) -> Tuple[str, ...]:
    return tuple(c.__name__ for c in type(obj).__mro__)


def model_kind(model: Any) -> str:
    names = class_names(model)
    if "Sequential" in names:
        return "sequential"
    return "functional" if "Functional" in names else "subclassed"


def parents(model: Any) -> Dict[int, Any]:
    """id(layer) -> the layer (or model) that holds it directly."""
    out: Dict[int, Any] = {}
    stack = [model]
    while stack:
        node = stack.pop()
        flatten = getattr(node, "_flatten_layers", None)
        children = list(flatten(include_self=False, recursive=False)) if flatten else \
            list(getattr(node, "layers", []) or [])
        for child in children:
            if id(child) not in out:
                out[id(child)] = node
                stack.append(child)
    return out


def user_layer(layer: Any, parent_of: Dict[int, Any], model: Any) -> Any:
    """The outermost layer of the model that holds ``layer``: a Dropout inside Keras's
    MultiHeadAttention is reported as the MultiHeadAttention, a Dense inside the user's own
    attention layer as that layer. A nested model's layers are the user's to name."""
    current = layer
    while True:
        parent = parent_of.get(id(current))
        if parent is None or parent is model:
            return current
        if "Functional" in class_names(parent) or "Sequential" in class_names(parent):
            return current
        current = parent


def layer_path(layer: Any, outer: Any, parent_of: Dict[int, Any]) -> str:
    """``outer/inner/layer``: the names from ``outer`` down to ``layer``."""
    names = [getattr(layer, "name", "?")]
    current = layer
    while current is not outer:
        current = parent_of.get(id(current))
        if current is None:
            break
        names.append(getattr(current, "name", "?"))
    return "/".join(reversed(names))


_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_FRAMING = ("Exception encountered when calling", "Arguments received by",
            "Call arguments received by", "\u2022")
_HALF = re.compile(r"\b(half|b?float16)\b")
_FLOAT = re.compile(r"\b(float32|float) tensor\b|\bfloat32\b")


def first_line(exc: BaseException) -> str:
    """The line that says what went wrong (Keras 3 puts its own framing first)."""
    lines = [l.strip() for l in _ANSI.sub("", str(exc)).splitlines()
             if l.strip() and not l.strip().startswith(_FRAMING)]
    telling = [l for l in lines if _HALF.search(l) and _FLOAT.search(l)]
    return (telling or lines or [type(exc).__name__])[0][:300]


def dtype_mismatch(exc: BaseException) -> bool:
    """TensorFlow's complaint when a float32 tensor meets the 16-bit compute dtype."""
    text = _ANSI.sub("", str(exc))
    return bool(_HALF.search(text) and _FLOAT.search(text))


def sublayers(model: Any) -> List[Any]:
    flatten = getattr(model, "_flatten_layers", None)
    layers = list(flatten(include_self=False, recursive=True)) if flatten else list(model.layers)
    return [l for l in layers if "InputLayer" not in class_names(l)]


# -- synthetic inputs -------------------------------------------------------------
def input_specs(model: Any, input_shapes: Optional[Sequence[Shape]], input_dtype: Optional[str],
                batch_size: Optional[int]) -> Tuple[List[Tuple[Shape, str]], int, List[str]]:
    """(shape with batch, dtype) per model input, the batch size, and notes."""
    notes: List[str] = []
    declared: List[Tuple[Shape, str]] = []
    undeclared = input_dtype or "float32"
    if input_dtype is None and _embeds_its_input(model):
        undeclared = "int32"
        notes.append("the model's first layer is an Embedding: synthetic inputs are token ids (int32) "
                     "below its vocabulary; --input-dtype float32 overrides")
    if input_shapes:
        declared = [((None,) + tuple(s), undeclared) for s in input_shapes]
    else:
        for tensor in _model_inputs(model):
            shape = tuple(None if d is None else int(d) for d in tensor.shape)
            dtype = tensor.dtype if isinstance(tensor.dtype, str) else tensor.dtype.name
            declared.append((shape, input_dtype or dtype))
        if not declared:
            built = _build_shape(model)
            if built is not None:  # the batch of the build call fixes nothing
                declared = [((None,) + built[1:], undeclared)]
    if not declared:
        raise InputShapeError(
            f"cannot tell what {type(model).__name__} takes as input: give the input shape "
            "without the batch dimension (--input-shape 28,28,1, or input_shape=(28, 28, 1))")
    fixed = {s[0] for s, _ in declared if s and s[0] is not None}
    if batch_size is None:
        batch = fixed.pop() if len(fixed) == 1 else 8
    else:
        batch = batch_size
        if fixed and batch not in fixed:
            notes.append(f"the model's inputs fix the batch size to {sorted(fixed)}; using {batch} as asked")
    specs: List[Tuple[Shape, str]] = []
    for shape, dtype in declared:
        rest = tuple(DEFAULT_FREE_DIM if d is None else d for d in shape[1:])
        if any(d is None for d in shape[1:]):
            notes.append(f"input dims given as None were set to {DEFAULT_FREE_DIM}: {shape} -> "
                         f"{(batch,) + rest}")
        specs.append(((batch,) + rest, dtype))
    return specs, batch, notes


def _embeds_its_input(model: Any) -> bool:
    """A subclassed model whose first layer is an Embedding takes token ids: it declares no
    input dtype, and floats would be truncated to ids silently."""
    if model_kind(model) != "subclassed":
        return False
    flatten = getattr(model, "_flatten_layers", None)
    children = list(flatten(include_self=False, recursive=False)) if flatten else []
    return bool(children) and "Embedding" in class_names(children[0])


def _build_shape(model: Any) -> Optional[Shape]:
    """The one input shape a built subclassed model saw (Keras 3 and Keras 2 keep it)."""
    built = getattr(model, "_build_shapes_dict", None) or {}  # Keras 3
    shapes = [s for s in built.values() if isinstance(s, (tuple, list))]
    if not shapes:
        legacy = getattr(model, "_build_input_shape", None)  # Keras 2
        if legacy is not None and getattr(legacy, "rank", None) is not None:
            legacy = legacy.as_list()
        if isinstance(legacy, (tuple, list)) and all(d is None or isinstance(d, int) for d in legacy):
            shapes = [legacy]
    return tuple(shapes[0]) if len(shapes) == 1 else None


def _model_inputs(model: Any) -> List[Any]:
    try:
        inputs = model.inputs
    except (AttributeError, ValueError):
        return []
    return list(inputs or [])


def synthetic_inputs(model: Any, specs: Sequence[Tuple[Shape, str]], seed: int = 0) -> Any:
    """Standard-normal floats; integers below the smallest Embedding vocabulary."""
    rng = np.random.default_rng(seed)
    vocab = [int(l.input_dim) for l in sublayers(model) if "Embedding" in class_names(l)]
    high = min(vocab) if vocab else 2
    arrays = []
    for spec_shape, dtype in specs:
        shape = tuple(1 if d is None else int(d) for d in spec_shape)
        if "int" in dtype:
            arrays.append(rng.integers(0, high, size=shape).astype(dtype))
        elif dtype == "bool":
            arrays.append(rng.random(shape) > 0.5)
        else:
            arrays.append(rng.standard_normal(shape).astype("float32"))
    return pack_inputs(model, arrays)


def pack_inputs(model: Any, arrays: List[Any]) -> Any:
    tf = tf_module()
    struct = getattr(model, "_inputs_struct", None)  # Keras 3 functional
    if struct is None:
        struct = getattr(model, "_nested_inputs", None)  # Keras 2 functional
    if struct is not None and len(tf.nest.flatten(struct)) == len(arrays) and len(arrays) > 1:
        return tf.nest.pack_sequence_as(struct, arrays)
    return arrays[0] if len(arrays) == 1 else arrays


# -- the recorded forward pass ------------------------------------------------------
def _dtype_name(x: Any) -> Optional[str]:
    dtype = getattr(x, "dtype", None)
    if dtype is None:
        return None
    return dtype if isinstance(dtype, str) else getattr(dtype, "name", str(dtype))


def _shape(x: Any) -> Optional[Shape]:
    shape = getattr(x, "shape", None)
    return None if shape is None else tuple(None if d is None else int(d) for d in shape)


def all_finite(tensors: Sequence[Any]) -> Optional[bool]:
    tf = tf_module()
    verdict: Optional[bool] = None
    for t in tensors:
        name = _dtype_name(t)
        if not name or "float" not in name or not hasattr(t, "numpy"):
            continue
        ok = bool(tf.reduce_all(tf.math.is_finite(t)))
        verdict = ok if verdict is None else (verdict and ok)
    return verdict


def _refs(tensors: Sequence[Any]) -> Tuple[Any, ...]:
    refs = []
    for t in tensors:
        try:
            refs.append(weakref.ref(t))
        except TypeError:
            pass
    return tuple(refs)


def _first_tensor(args: Sequence[Any], kwargs: Dict[str, Any]) -> Any:
    tf = tf_module()
    for value in list(args) + list(kwargs.values()):
        for item in tf.nest.flatten(value):
            if hasattr(item, "shape") and hasattr(item, "dtype"):
                return item
    return None


def positional_inputs(model: Any) -> int:
    """How many inputs the model's ``call`` takes as separate positional arguments
    (``def call(self, tokens, mask)``): 1 for the usual single structure."""
    import inspect

    try:
        params = list(inspect.signature(type(model).call).parameters.values())[1:]
    except (TypeError, ValueError, AttributeError):
        return 1
    required = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
                and p.default is p.empty and p.name not in ("training", "mask")]
    return max(1, len(required))


def call_model(model: Any, inputs: Any, training: bool = False) -> Any:
    """``model(inputs)``, or ``model(*inputs)`` for a ``call`` with several positional inputs."""
    count = positional_inputs(model)
    if count > 1 and isinstance(inputs, (list, tuple)) and len(inputs) == count:
        return model(*inputs, training=training)
    return model(inputs, training=training)


def forward(model: Any, inputs: Any, training: bool = False) -> ForwardResult:
    """Call the model once (eagerly, tf.functions included) with every layer recorded."""
    tf = tf_module()
    calls: List[LayerCall] = []
    wrapped: List[Any] = []
    failing: Dict[str, Any] = {}

    def wrap(layer: Any) -> None:
        original = layer.call

        @functools.wraps(original)
        def recorder(*args: Any, **kwargs: Any) -> Any:
            try:
                out = original(*args, **kwargs)
            except Exception:
                failing.setdefault("layer", layer)  # the innermost layer sees it first
                raise
            first_in = _first_tensor(args, kwargs)
            flat = [t for t in tf.nest.flatten(out) if hasattr(t, "dtype")]
            head = flat[0] if flat else None
            calls.append(LayerCall(layer, _shape(first_in), _dtype_name(first_in), _shape(head),
                                   _dtype_name(head), all_finite(flat), _refs(flat)))
            return out

        object.__setattr__(layer, "call", recorder)
        wrapped.append(layer)

    try:
        for layer in sublayers(model):
            wrap(layer)
        with functions_run_eagerly(), warnings.catch_warnings():
            # numpy's "overflow encountered in cast" is the very thing MP501 reports.
            warnings.simplefilter("ignore", RuntimeWarning)
            outputs = call_model(model, inputs, training)
    except Exception as exc:
        raise ForwardError(exc, failing.get("layer")) from exc
    finally:
        for layer in wrapped:
            try:
                object.__delattr__(layer, "call")
            except AttributeError:
                pass
    flat = tf.nest.flatten(outputs)
    return ForwardResult(calls, flat, [all_finite([t]) for t in flat])


def output_layer_names(model: Any, result: ForwardResult) -> List[Optional[Any]]:
    """The layer that produced each model output: from the graph, else from the recording."""
    graph: List[Optional[Any]] = []
    try:
        for tensor in model.outputs or []:
            history = tensor._keras_history
            graph.append(getattr(history, "operation", None) or getattr(history, "layer", None))
    except (AttributeError, ValueError):
        graph = []
    if len(graph) == len(result.outputs) and all(g is not None for g in graph):
        return graph
    producers: List[Optional[Any]] = []
    for out in result.outputs:
        producer = None
        for call in result.calls:
            if any(ref() is out for ref in call.output_refs):
                producer = call.layer
        producers.append(producer)
    return producers


# -- which layers' sizes are the model outputs' ------------------------------------------
# Layers that pass their input's width on: a Dense(10) before Activation('softmax') is the
# layer whose size is the output's.
PASS_THROUGH = {"Activation", "Softmax", "ReLU", "LeakyReLU", "ELU", "PReLU", "ThresholdedReLU",
                "Dropout", "SpatialDropout1D", "SpatialDropout2D", "SpatialDropout3D", "AlphaDropout",
                "GaussianDropout", "GaussianNoise", "ActivityRegularization", "LayerNormalization",
                "BatchNormalization", "GroupNormalization", "UnitNormalization", "Identity", "Lambda"}


def _history(tensor: Any) -> Tuple[Any, int]:
    history = getattr(tensor, "_keras_history", None)
    if history is None:
        return None, 0
    op = getattr(history, "operation", None) or getattr(history, "layer", None)
    return op, int(getattr(history, "node_index", 0) or 0)


def _node_inputs(op: Any, node_index: int) -> List[Any]:
    nodes = getattr(op, "_inbound_nodes", None) or []
    if node_index >= len(nodes):
        return []
    node = nodes[node_index]
    for name in ("input_tensors", "keras_inputs"):
        value = getattr(node, name, None)
        if value is not None:
            # Keras 2 keeps a single input bare: a KerasTensor, which cannot be iterated.
            return list(tf_module().nest.flatten(value))
    return []


def output_size_layers(model: Any, result: ForwardResult, producers: Sequence[Any],
                       has_dims: Any) -> set:
    """ids of the layers whose size is a model output's: the layer computing each output,
    looking back through layers that pass the width on (activations, dropout, norms)."""
    found: set = set()
    try:
        graph_outputs = list(model.outputs or [])
    except (AttributeError, ValueError):
        graph_outputs = []
    if len(graph_outputs) == len(result.outputs):
        for tensor in graph_outputs:
            for _ in range(64):
                op, node_index = _history(tensor)
                if op is None:
                    break
                if not (set(class_names(op)) & PASS_THROUGH):
                    found.add(id(op))
                    break
                inputs = _node_inputs(op, node_index)
                if len(inputs) != 1:
                    break
                tensor = inputs[0]
        return found
    # No graph (a subclassed model): the last layer with a size that returned the output's width.
    for out, producer in zip(result.outputs, producers):
        width = int(out.shape[-1]) if len(out.shape) else None
        if producer is not None and has_dims(producer):
            found.add(id(producer))
            continue
        for call in reversed(result.calls):
            if has_dims(call.layer) and call.output_shape and call.output_shape[-1] == width:
                found.add(id(call.layer))
                break
    return found


# -- layers the user cannot resize ------------------------------------------------------------
_APPLICATION_NAMES = re.compile(
    r"^(resnet\d+(v2)?|resnet_rs_\d+|vgg1[69]|inception_v3|inception_resnet_v2|xception|"
    r"mobilenet(v2|v3)?[\w.]*|efficientnet(v2)?[-\w]*|densenet\d+|nasnet_(mobile|large)|"
    r"convnext_\w+|regnet[xy]\d+)$", re.IGNORECASE)
LIBRARY_MARK = "_mplint_library"


def library_layers(model: Any) -> Dict[int, str]:
    """id(layer) -> where it comes from, for layers inside a model that a library built
    (keras.applications, keras_hub backbones): their sizes are not the user's to change."""
    parent_of = parents(model)
    out: Dict[int, str] = {}
    for layer in sublayers(model):
        own = getattr(layer, LIBRARY_MARK, None)
        if own:
            out[id(layer)] = str(own)
            continue
        node = parent_of.get(id(layer))
        chain = []
        while node is not None:
            chain.append(node)
            node = parent_of.get(id(node))
        for holder in chain:
            origin = _library_origin(holder)
            if origin:
                out[id(layer)] = origin
                break
    return out


def _library_origin(holder: Any) -> Optional[str]:
    mark = getattr(holder, LIBRARY_MARK, None)
    if mark:
        return str(mark)
    names = class_names(holder)
    if not ("Functional" in names or "Model" in names):
        return None
    root = type(holder).__module__.split(".")[0]
    if root in ("keras_hub", "keras_nlp", "keras_cv"):
        # A backbone the user's code constructed with its own sizes (hidden_dim=100) is the
        # user's to resize; one loaded from a preset is not.
        return None if sources.sized_by_user(holder) else f"{root} {type(holder).__name__}"
    if "Functional" in names and _APPLICATION_NAMES.match(str(getattr(holder, "name", ""))):
        return f"keras.applications {holder.name}"
    return None
