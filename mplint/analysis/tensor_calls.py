"""The call table of the tensor dtype inference: which TensorFlow and Keras calls
combine tensors (and so need one dtype), where their operands and ``dtype``
arguments sit, and the weights built-in layers make."""

from __future__ import annotations

from typing import Dict, FrozenSet, List, Optional, Tuple

import libcst as cst

from mplint.semantic.call_args import keyword_only, positional_or_keyword
from mplint.semantic.vocabulary import TF_OP_NAMESPACES


#: arithmetic operators whose operands must share a dtype in TensorFlow
ARITHMETIC = (cst.Add, cst.Subtract, cst.Multiply, cst.Divide, cst.FloorDivide,
              cst.Modulo, cst.Power, cst.MatrixMultiply)

AUG_ARITHMETIC = (cst.AddAssign, cst.SubtractAssign, cst.MultiplyAssign, cst.DivideAssign,
                  cst.MatrixMultiplyAssign, cst.PowerAssign)

#: ops whose tensor operands must share one dtype: name -> how to find them
COMBINING = {
    "add": "args", "subtract": "args", "multiply": "args", "divide": "args",
    "truediv": "args", "maximum": "args", "minimum": "args", "pow": "args",
    "matmul": "args", "squared_difference": "args", "tensordot": "args2",
    "where": "tail", "einsum": "tail", "clip_by_value": "args3",
    "concat": "list", "stack": "list", "add_n": "list",
}
#: Keras 2 backend functions that call the TF ops above
BACKEND_COMBINING = {
    "keras.backend.dot": "args", "keras.backend.batch_dot": "args",
    "keras.backend.maximum": "args", "keras.backend.minimum": "args", "keras.backend.pow": "args",
    "keras.backend.concatenate": "list", "keras.backend.stack": "list",
}
#: Keras 3 ops promote mixed dtypes instead of failing, but still convert Python
#: literals to the tensor's dtype, so they give literals a context (MP501/MP502)
KERAS_OPS = {
    "keras.ops.add": "args", "keras.ops.subtract": "args", "keras.ops.multiply": "args",
    "keras.ops.divide": "args", "keras.ops.maximum": "args", "keras.ops.minimum": "args",
    "keras.ops.where": "tail", "keras.ops.clip": "args3",
}

#: the argument position of ``dtype`` in the creation and cast ops above
DTYPE_POSITION = {
    "tensorflow.cast": 1, "tensorflow.saturate_cast": 1, "keras.ops.cast": 1, "keras.backend.cast": 1,
    "tensorflow.image.convert_image_dtype": 1, "tensorflow.constant": 1,
    "tensorflow.convert_to_tensor": 1, "keras.ops.convert_to_tensor": 1,
    "keras.backend.constant": 1, "tensorflow.ones": 1, "tensorflow.zeros": 1,
    "keras.ops.ones": 1, "keras.ops.zeros": 1, "tensorflow.ones_like": 1,
    "tensorflow.zeros_like": 1, "keras.ops.ones_like": 1, "keras.ops.zeros_like": 1,
    "keras.backend.ones_like": 1, "keras.backend.zeros_like": 1,
    "tensorflow.eye": 3, "tensorflow.linalg.eye": 3, "keras.ops.eye": 3,
    "tensorflow.random.normal": 3, "tensorflow.random.uniform": 3,
    "tensorflow.random.truncated_normal": 3, "tensorflow.random_normal": 3,
    "tensorflow.random_uniform": 3, "tensorflow.truncated_normal": 3,
    "tensorflow.random.stateless_normal": 4, "tensorflow.random.stateless_uniform": 4,
    "tensorflow.random.stateless_truncated_normal": 4,
    "keras.random.normal": 3, "keras.random.uniform": 3, "keras.random.truncated_normal": 3,
    "keras.backend.random_normal": 3, "keras.backend.random_uniform": 3,
    "tensorflow.range": 3,
    "keras.backend.zeros": 1, "keras.backend.ones": 1, "keras.backend.eye": 1,
    "keras.backend.truncated_normal": 3, "keras.ops.full": 2,
    "keras.backend.random_normal_variable": 3, "keras.backend.random_uniform_variable": 3,
}

#: where the resizing ops and layers (``IMAGE_RESIZE``, ``RESIZING_LAYERS``) take the
#: argument that picks the method: keyword, position, and the method when it is left out
RESIZE_METHOD_ARGUMENT: Dict[str, Tuple[str, int, str]] = {
    "tensorflow.image.resize": ("method", 2, "bilinear"),
    "keras.ops.image.resize": ("interpolation", 2, "bilinear"),
    "keras.backend.resize_images": ("interpolation", 4, "nearest"),
    "keras.layers.UpSampling2D": ("interpolation", 2, "nearest"),
}

#: weights a built-in layer makes with ``add_weight`` (autocast inside ``call``), by the
#: attribute a subclass reads them through
BUILT_IN_WEIGHTS: Dict[str, Tuple[str, ...]] = {
    "kernel": ("Dense", "Conv1D", "Conv2D", "Conv3D", "Conv1DTranspose", "Conv2DTranspose",
               "Conv3DTranspose", "Convolution1D", "Convolution2D", "Convolution3D"),
    "bias": ("Dense", "Conv1D", "Conv2D", "Conv3D", "Conv1DTranspose", "Conv2DTranspose",
             "Conv3DTranspose", "Convolution1D", "Convolution2D", "Convolution3D",
             "DepthwiseConv2D", "SeparableConv1D", "SeparableConv2D"),
    "depthwise_kernel": ("DepthwiseConv2D", "SeparableConv1D", "SeparableConv2D"),
    "pointwise_kernel": ("SeparableConv1D", "SeparableConv2D"),
    "embeddings": ("Embedding",),
}

#: methods a layer's ``call`` may call that still never run under autocast
NOT_CALLED_FROM_CALL = frozenset({"__init__", "build", "get_config", "from_config"})

#: keywords under which the dtype-preserving ops take their tensor
TENSOR_KEYWORDS = ("a", "x", "input", "tensor", "inputs", "input_tensor", "logits", "features", "value")

COMPUTE_DTYPE_ATTRS = frozenset({"compute_dtype", "_compute_dtype"})
VARIABLE_DTYPE_ATTRS = frozenset({"dtype", "variable_dtype", "_dtype", "_variable_dtype"})


def combining_layout(names: FrozenSet[str]) -> Optional[Tuple[str, bool]]:
    """(operand layout, whether mixed dtypes raise) for a call of one of ``names``
    that combines tensors; None for any other call."""
    for name in names:
        if name.startswith("tensorflow."):
            short = name.rsplit(".", 1)[-1]
            if short in COMBINING and name.rsplit(".", 1)[0] + "." in TF_OP_NAMESPACES:
                return COMBINING[short], True
        if name in BACKEND_COMBINING:
            return BACKEND_COMBINING[name], True
        if name in KERAS_OPS:
            return KERAS_OPS[name], False
    return None


def operand_expressions(call: cst.Call, layout: str) -> List[cst.BaseExpression]:
    """The tensor operands of a combining call laid out as ``layout`` says."""
    args = [a.value for a in call.args if a.keyword is None and not a.star]
    if layout == "args":
        return args[:2] + [a.value for a in call.args if a.keyword is not None and a.keyword.value in ("x", "y", "a", "b")]
    if layout == "args2":
        return args[:2]
    if layout == "args3":
        return args[:3]
    if layout == "tail":
        return args[1:3] if len(args) >= 3 else []
    if layout == "list" and args and isinstance(args[0], (cst.List, cst.Tuple)):
        return [e.value for e in args[0].elements if not isinstance(e, cst.StarredElement)]
    return []


def resize_method(call: cst.Call, names: FrozenSet[str]) -> Optional[Tuple[Optional[cst.BaseExpression], str]]:
    """The method argument of a resizing call of one of ``names`` (None when left out)
    and the method it defaults to; None for any other call."""
    for name in names:
        found = RESIZE_METHOD_ARGUMENT.get(name)
        if found is not None:
            keyword, position, default = found
            return positional_or_keyword(call, position, keyword), default
    return None


def dtype_argument(call: cst.Call, names: FrozenSet[str]) -> Optional[cst.BaseExpression]:
    """The ``dtype`` argument of a creation or cast call of one of ``names``."""
    position = max((DTYPE_POSITION.get(n, -1) for n in names), default=-1)
    return positional_or_keyword(call, position, "dtype") if position >= 0 else keyword_only(call, "dtype")
