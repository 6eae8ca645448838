"""Every canonical API set mplint knows: what a TensorFlow/Keras name *is*.

Checks and analyses compare canonical names (see :mod:`mplint.semantic.names`)
against the sets here and nowhere else, so a spelling added once (a cast, a model
class, an optimizer) is known to every rule at once. A set says what an API is (a
cast, a softmax, a layer that keeps its input's size); a table that says how one
analysis reads an API's arguments (which argument is a GEMM size, where a creation
op takes its dtype) stays with that analysis, keyed by these names.

This module imports nothing, so the project index, the prefilter and the program
model (which must not load libcst on a cached run) read the same words as the
per-file facts.
"""

from __future__ import annotations

from typing import Dict, FrozenSet

# -- dtype and policy names ----------------------------------------------------------------
#: dtype names (and policy names) that compute in float32 or wider
FLOAT32_NAMES = frozenset({"float32", "float64"})
#: the packages whose names are TensorFlow's and Keras's own APIs (what ``resolve`` gives one)
TENSORFLOW_PACKAGES = frozenset({"tensorflow", "keras", "tf_keras"})
#: the 16-bit float dtypes
SIXTEEN_BIT_DTYPES = frozenset({"float16", "bfloat16"})
#: names that make a layer compute in 16 bits: dtypes, their aliases and the mixed policies
SIXTEEN_BIT_NAMES = SIXTEEN_BIT_DTYPES | frozenset({"mixed_float16", "mixed_bfloat16", "half"})


def _dtype_names() -> Dict[str, str]:
    aliases = {"half": "float16", "single": "float32", "double": "float64"}
    names = {
        f"{root}.{dtype}": aliases.get(dtype, dtype)
        for root in ("tensorflow", "numpy", "keras.ops", "jax.numpy")
        for dtype in ("float16", "float32", "float64", "bfloat16", "half", "single", "double")
    }
    names.update({"tensorflow.half": "float16", "numpy.half": "float16",
                  "numpy.single": "float32", "numpy.double": "float64"})
    return names


#: canonical names of dtype objects -> the dtype they name (``tf.half`` -> float16)
DTYPE_NAMES: Dict[str, str] = _dtype_names()

#: the largest finite value of each float dtype: ``tf.float32.max``, ``np.finfo(np.float32).min``
#: (negated) stand for these numbers
DTYPE_LIMITS: Dict[str, float] = {"float16": 65504.0, "bfloat16": 3.3895313892515355e38,
                                  "float32": 3.4028234663852886e38, "float64": 1.7976931348623157e308}
#: the attributes of a dtype (or of ``finfo(dtype)``) that give its limits, with their sign
LIMIT_ATTRIBUTES: Dict[str, int] = {"max": 1, "min": -1}
#: ``np.finfo(dtype)``: the dtype's limits as attributes
FINFO_FUNCTIONS = frozenset({"numpy.finfo", "tensorflow.experimental.numpy.finfo", "jax.numpy.finfo"})

# -- the global policy -----------------------------------------------------------------------
MIXED_POLICIES = frozenset({"mixed_float16", "mixed_bfloat16"})
#: stands, among policy names, for a policy chosen at run time, whose value cannot be read
UNKNOWN_POLICY = "?"
#: what makes policy rules apply: a mixed policy, or one that may be
MAYBE_MIXED = MIXED_POLICIES | {UNKNOWN_POLICY}
#: Keras backends whose Keras (standalone 2.2.x) has no dtype policies: a module that
#: imports one runs its layers there, and a policy set for TensorFlow's Keras elsewhere
#: in the project does not reach them (faceswap's PlaidML losses for AMD cards)
POLICYLESS_BACKENDS = frozenset({"plaidml"})
#: top-level calls that end a notebook's kernel (Colab's restart after ``!pip install``):
#: the cells after one run in a fresh interpreter, with no policy or name of the cells
#: before it. ``exit()``/``quit()`` (IPython's restart), ``os._exit``, and
#: ``os.kill(os.getpid(), ...)``; ``sys.exit`` only raises SystemExit in a kernel.
KERNEL_RESET_BUILTINS = frozenset({"exit", "quit"})
KERNEL_RESET_FUNCTIONS = frozenset({"os._exit"})
KERNEL_KILL_FUNCTION, OWN_PROCESS_FUNCTION = "os.kill", "os.getpid"
#: ``get_ipython().kernel.do_shutdown(True)``, ``IPython.Application.instance().kernel...``
KERNEL_SHUTDOWN_METHOD = "do_shutdown"
#: calls that set the global dtype policy (Keras 3's ``keras.config.set_dtype_policy``
#: and the other synonyms fold into the first, see ``names._SYNONYMS``)
SET_POLICY_FUNCTIONS = frozenset({
    "keras.mixed_precision.set_global_policy",
    "keras.mixed_precision.experimental.set_policy",
    "keras.mixed_precision.experimental.set_global_policy",
})
#: the last word of every spelling of a policy setter, synonyms included: a file (or a
#: function, for the program model) without one of them sets no policy
POLICY_SETTER_WORDS = ("set_global_policy", "set_policy", "set_dtype_policy")
#: calls that read the global policy
GLOBAL_POLICY_FUNCTIONS = frozenset({"keras.mixed_precision.global_policy"})
#: the last word of every spelling of a policy reader (``global_policy``, Keras 3's
#: ``dtype_policy``): ``set_global_policy(previous)`` with ``previous`` read so restores
GLOBAL_POLICY_WORDS = ("global_policy", "dtype_policy")
#: constructors whose first argument names the policy they make
#: config objects whose attributes are the keywords they are made with
#: (``cfg = types.SimpleNamespace(precision="mixed_float16")``; ``cfg.precision``)
NAMESPACE_CONSTRUCTORS = frozenset({"types.SimpleNamespace", "argparse.Namespace", "easydict.EasyDict"})
POLICY_CONSTRUCTORS = frozenset({
    "keras.mixed_precision.Policy",
    "keras.mixed_precision.experimental.Policy",
})
#: ``keras.backend.set_floatx`` folds into this one (see ``names._SYNONYMS``)
SET_FLOATX_FUNCTIONS = frozenset({"keras.config.set_floatx"})
#: reads the default float type (float32 unless set_floatx changed it)
FLOATX_FUNCTIONS = frozenset({"keras.config.floatx"})
#: reads Keras's fuzz factor, 1e-7 unless set_epsilon changed it (tf-keras
#: backend_config.py and Keras 3 keras/src/backend/config.py: ``_EPSILON = 1e-7``)
EPSILON_FUNCTIONS = frozenset({"keras.config.epsilon", "keras.backend.epsilon"})
SET_EPSILON_FUNCTIONS = frozenset({"keras.config.set_epsilon", "keras.backend.set_epsilon"})
DEFAULT_EPSILON = 1e-7

# -- the graph rewrite (grappler's auto_mixed_precision) ------------------------------------
GRAPH_REWRITE_FUNCTIONS = frozenset({
    "tensorflow.train.experimental.enable_mixed_precision_graph_rewrite",
    "tensorflow.compat.v1.train.experimental.enable_mixed_precision_graph_rewrite",
    "tensorflow.compat.v1.mixed_precision.enable_mixed_precision_graph_rewrite",
    "tensorflow.compat.v1.mixed_precision.experimental.enable_mixed_precision_graph_rewrite",
    "tensorflow.mixed_precision.experimental.enable_mixed_precision_graph_rewrite",
})
DISABLE_REWRITE_FUNCTIONS = frozenset({
    "tensorflow.train.experimental.disable_mixed_precision_graph_rewrite",
    "tensorflow.compat.v1.train.experimental.disable_mixed_precision_graph_rewrite",
    "tensorflow.compat.v1.mixed_precision.disable_mixed_precision_graph_rewrite",
    "tensorflow.mixed_precision.experimental.disable_mixed_precision_graph_rewrite",
})
#: ``set_experimental_options({'auto_mixed_precision': True})`` turns the rewrite on
GRAPPLER_OPTIONS_FUNCTIONS = frozenset({"tensorflow.config.optimizer.set_experimental_options"})
GRAPPLER_AMP_OPTION = "auto_mixed_precision"
#: the environment switch grappler reads to turn the rewrite on
AMP_ENV_VAR = "TF_ENABLE_AUTO_MIXED_PRECISION"
#: words found in every way of switching the rewrite on (the index's byte test)
REWRITE_WORDS = ("graph_rewrite", GRAPPLER_AMP_OPTION, AMP_ENV_VAR)


def amp_env_enabled(value: object) -> bool:
    """Whether TensorFlow reads this value of TF_ENABLE_AUTO_MIXED_PRECISION as true
    (``ReadBoolFromEnvVar``: ``1`` or ``true`` in any case)."""
    return str(value).lower() in ("1", "true")


#: makes ``tf.keras`` the tf_keras package (Keras 2) under TF >= 2.16
LEGACY_KERAS_ENV_VAR = "TF_USE_LEGACY_KERAS"
#: distributions that ship the ``tensorflow`` package (installed versions, dependency pins)
TENSORFLOW_DISTRIBUTIONS = (
    "tensorflow", "tensorflow-cpu", "tensorflow-gpu", "tensorflow-macos", "tensorflow-intel",
    "tensorflow-rocm", "intel-tensorflow", "tf-nightly", "tf-nightly-cpu", "tf-nightly-gpu",
)


#: what a test reads when it decides which Keras generation runs: a package's version
#: (``tf.__version__``, ``keras.__version__``, ``tf.version.VERSION``, ``keras.version()``)
#: or the variable that makes ``tf.keras`` Keras 2
VERSION_ATTRIBUTES = frozenset({"__version__", "VERSION", "version"})
GENERATION_TEST_STRINGS = frozenset({LEGACY_KERAS_ENV_VAR})


def legacy_keras_env_enabled(value: object) -> bool:
    """Whether TensorFlow's ``__init__`` reads this value of TF_USE_LEGACY_KERAS as
    true (it compares with ``("true", "True", "1")``)."""
    return str(value) in ("true", "True", "1")


#: the process environment, and the calls that set one variable in it
ENVIRON = frozenset({"os.environ"})
ENV_SETTERS = frozenset({"os.environ.setdefault", "os.putenv"})
ENV_UPDATES = frozenset({"os.environ.update"})

# -- hardware ------------------------------------------------------------------------------------
#: a call of one of these (or of a method of one) says the program runs on TPUs
TPU_NAMES = frozenset({
    "tensorflow.distribute.TPUStrategy",
    "tensorflow.distribute.experimental.TPUStrategy",
    "tensorflow.compat.v1.distribute.experimental.TPUStrategy",
    "tensorflow.distribute.cluster_resolver.TPUClusterResolver",
    "tensorflow.compat.v1.distribute.cluster_resolver.TPUClusterResolver",
    "tensorflow.contrib.cluster_resolver.TPUClusterResolver",
})

# -- models and layers ---------------------------------------------------------------------------
#: the functional Model, and the base of subclassed models
MODEL_CLASSES = frozenset({"keras.Model"})
SEQUENTIAL_CLASSES = frozenset({"keras.Sequential"})
#: either kind of model
ANY_MODEL_CLASSES = MODEL_CLASSES | SEQUENTIAL_CLASSES
#: methods called only on a model that is trained or run as a whole, never on a block
WHOLE_MODEL_METHODS = frozenset({
    "compile", "fit", "evaluate", "predict", "train_on_batch", "test_on_batch", "predict_on_batch",
    "fit_generator", "evaluate_generator", "predict_generator",
})
#: a model's variables, read to train it as a whole (``tape.gradient(loss, model.trainable_variables)``)
WHOLE_MODEL_VARIABLES = frozenset({"trainable_variables", "trainable_weights"})
#: calls that give a model whose layers are built under the policy in effect then
MODEL_FACTORIES = ANY_MODEL_CLASSES | frozenset({
    "keras.models.load_model", "keras.saving.load_model", "keras.models.clone_model",
})
LAYER_CLASSES = frozenset({"keras.layers.Layer"})
#: bases that make a class a Keras layer (a model is a layer)
LAYER_BASES = LAYER_CLASSES | ANY_MODEL_CLASSES
#: the functional model's input
INPUT_FUNCTIONS = frozenset({"keras.Input"})
#: ``keras.layers`` names that make an input, not a layer that computes
INPUT_LAYERS = INPUT_FUNCTIONS | frozenset({"keras.layers.InputLayer"})
LAMBDA_LAYERS = frozenset({"keras.layers.Lambda"})
#: layers that wrap another layer given as their first argument, and that parameter's
#: name: the wrapped layer is the one that computes
WRAPPED_LAYER_PARAMETER: Dict[str, str] = {
    "keras.layers.Bidirectional": "layer", "keras.layers.TimeDistributed": "layer", "keras.layers.RNN": "cell",
}
LAYER_WRAPPERS = frozenset(WRAPPED_LAYER_PARAMETER)
EINSUM_DENSE = frozenset({"keras.layers.EinsumDense", "keras.layers.experimental.EinsumDense"})
#: layers whose first positional argument is the activation
ACTIVATION_FIRST_LAYERS = frozenset({"keras.layers.Activation"})
#: layers whose second positional argument is the activation
ACTIVATION_SECOND_LAYERS = frozenset({"keras.layers.Dense"})
SOFTMAX_LAYERS = frozenset({"keras.layers.Softmax"})
#: ``keras.applications`` / ``tf.keras.applications`` constructors (any submodule
#: spelling) whose ``include_top=True`` model ends in ``Dense(classes,
#: activation=classifier_activation, name="predictions")``, built under the policy in
#: effect; ``include_top`` defaults to True and ``classifier_activation`` to "softmax"
#: in every one (Keras 3 keras/src/applications and tf_keras/applications; ResNet50/101/152
#: pass it on through ``**kwargs``)
CLASSIFIER_APPLICATIONS = frozenset({
    "ConvNeXtTiny", "ConvNeXtSmall", "ConvNeXtBase", "ConvNeXtLarge", "ConvNeXtXLarge",
    "DenseNet121", "DenseNet169", "DenseNet201",
    *(f"EfficientNetB{i}" for i in range(8)),
    "EfficientNetV2B0", "EfficientNetV2B1", "EfficientNetV2B2", "EfficientNetV2B3",
    "EfficientNetV2S", "EfficientNetV2M", "EfficientNetV2L",
    "InceptionResNetV2", "InceptionV3", "MobileNet", "MobileNetV2", "MobileNetV3Small", "MobileNetV3Large",
    "NASNetMobile", "NASNetLarge",
    *(f"RegNet{kind}{size}" for kind in "XY"
      for size in ("002", "004", "006", "008", "016", "032", "040", "064", "080", "120", "160", "320")),
    "ResNet50", "ResNet101", "ResNet152", "ResNet50V2", "ResNet101V2", "ResNet152V2",
    *(f"ResNetRS{depth}" for depth in (50, 101, 152, 200, 270, 350, 420)),
    "VGG16", "VGG19", "Xception",
})
CLASSIFIER_APPLICATION_DEFAULTS = {"include_top": True, "classifier_activation": "softmax"}


def names_tensorflow(names: FrozenSet[str]) -> bool:
    """Canonical names (what ``resolve`` gives) of TensorFlow's or Keras's own API: its
    behaviour is known, unlike a project helper's."""
    return any(name.split(".", 1)[0] in TENSORFLOW_PACKAGES for name in names)


def is_classifier_application(names: FrozenSet[str]) -> bool:
    """A ``keras.applications`` constructor of :data:`CLASSIFIER_APPLICATIONS`."""
    return any(name.startswith("keras.applications.") and name.rpartition(".")[2] in CLASSIFIER_APPLICATIONS
               for name in names)
#: keras_applications' protocol for a Keras chosen by its caller: each model module keeps
#: ``backend = layers = models = keras_utils = None`` and rebinds them with
#: ``backend, layers, models, keras_utils = get_submodules_from_kwargs(kwargs)``;
#: ``tf.keras.applications`` and ``keras.applications`` pass their own ``backend``,
#: ``layers``, ``models`` and ``utils`` (keras_applications/__init__.py, copied by
#: efficientnet, classification_models and segmentation_models)
KERAS_SUBMODULE_INJECTORS = frozenset({"get_submodules_from_kwargs"})
#: the Keras modules that protocol returns, in its order
INJECTED_KERAS_SUBMODULES = ("keras.backend", "keras.layers", "keras.models", "keras.utils")
#: ``functools.partial(Layer, activation=...)``: a layer class with arguments bound ahead
PARTIALS = frozenset({"functools.partial"})
#: class decorators that make ``__init__`` take the annotated class attributes as fields
DATACLASS_DECORATORS = frozenset({"dataclasses.dataclass", "attr.s", "attr.attrs", "attr.define", "attrs.define",
                                  "attr.frozen", "attrs.frozen", "attr.mutable", "attrs.mutable"})
#: the parsed command line of absl (``FLAGS.amp``), as argparse's namespace is
FLAG_OBJECTS = frozenset({"absl.flags.FLAGS", "tensorflow.compat.v1.flags.FLAGS", "tensorflow.flags.FLAGS"})
#: Keras layers whose output is not a float computed under the policy (lookups,
#: hashing, raw-input plumbing) or is whatever a user function returns (Lambda)
NOT_FLOAT_COMPUTE_LAYERS = LAMBDA_LAYERS | frozenset({
    "keras.layers.InputLayer", "keras.layers.Identity",
    "keras.layers.StringLookup", "keras.layers.IntegerLookup", "keras.layers.TextVectorization",
    "keras.layers.Hashing", "keras.layers.HashedCrossing", "keras.layers.CategoryEncoding",
    "keras.layers.Discretization", "keras.layers.Normalization", "keras.layers.Rescaling",
    "keras.layers.Resizing", "keras.layers.CenterCrop",
})
#: layers (and any op) that pass a tensor's size through: the layer before an output
#: ``Activation('softmax', dtype='float32')`` is the output projection
SIZE_KEEPING_LAYERS = frozenset(f"keras.layers.{name}" for name in (
    "Activation", "Softmax", "ReLU", "LeakyReLU", "ELU", "PReLU", "ThresholdedReLU", "Dropout",
    "AlphaDropout", "GaussianDropout", "GaussianNoise", "ActivityRegularization", "Lambda",
    "Reshape", "Flatten", "Permute", "BatchNormalization", "LayerNormalization",
    "GlobalAveragePooling1D", "GlobalAveragePooling2D", "GlobalAveragePooling3D",
    "GlobalMaxPooling1D", "GlobalMaxPooling2D", "GlobalMaxPooling3D",
))
#: layers that only move or keep their input's values (and, without a dtype of their own,
#: autocast them to the compute dtype): a softmax under them is still the model's output.
#: A linear ``Activation`` keeps them too (:func:`mplint.analysis.layers.keeps_values`)
VALUE_KEEPING_LAYERS = frozenset(f"keras.layers.{name}" for name in (
    "Reshape", "Flatten", "Permute", "Dropout", "SpatialDropout1D", "SpatialDropout2D", "SpatialDropout3D",
    "Identity", "ActivityRegularization",
))
#: layers that create trainable weights in their own dtype (a 16-bit ``dtype`` gives
#: 16-bit variables); BatchNormalization is left out: tf_keras keeps its parameters
#: float32 under a 16-bit dtype (``_param_dtype``), Keras 3 does not
WEIGHT_LAYERS = frozenset(f"keras.layers.{name}" for name in (
    "Dense", "EinsumDense", "Embedding", "Conv1D", "Conv2D", "Conv3D", "Conv1DTranspose", "Conv2DTranspose",
    "Conv3DTranspose", "SeparableConv1D", "SeparableConv2D", "DepthwiseConv1D", "DepthwiseConv2D",
    "LSTM", "GRU", "SimpleRNN", "LSTMCell", "GRUCell", "SimpleRNNCell", "ConvLSTM1D", "ConvLSTM2D", "ConvLSTM3D",
    "MultiHeadAttention", "PReLU", "LayerNormalization", "GroupNormalization",
))
#: the values of ``Activation(...)`` that leave the tensor as it is
LINEAR_ACTIVATIONS = frozenset({"linear", None})
#: layers whose aligned sizes are internal: never a model's output size
INTERNAL_SIZE_LAYERS = frozenset({"keras.layers.MultiHeadAttention", "keras.layers.GroupQueryAttention",
                                  "keras.layers.Embedding"})
#: Normalization layers that apply their epsilon in the 16-bit dtype, so a tiny one is
#: flushed to zero. Keras's own LayerNormalization and BatchNormalization upcast 16-bit
#: inputs to float32 first (Keras 2 and 3), and Keras 3's GroupNormalization applies
#: epsilon in float32; tf_keras's GroupNormalization (the name below, read under
#: Keras 2) and TensorFlow Addons' layers do not.
KERAS2_GROUP_NORMALIZATION = frozenset({"keras.layers.GroupNormalization"})
ADDONS_SIXTEEN_BIT_NORMALIZATION = frozenset({
    "tensorflow_addons.layers.GroupNormalization",
    "tensorflow_addons.layers.InstanceNormalization",
})

# -- ops ---------------------------------------------------------------------------------------------
#: casts: the result has the dtype given as the second argument (``dtype``)
CASTS = frozenset({
    "tensorflow.cast", "tensorflow.saturate_cast", "tensorflow.image.convert_image_dtype",
    "keras.ops.cast", "keras.backend.cast",
})
#: functions (and activation values) that compute a softmax
SOFTMAX_FUNCTIONS = frozenset({
    "tensorflow.nn.softmax", "keras.activations.softmax", "keras.ops.softmax",
    "keras.backend.softmax",
})
SIGMOID_FUNCTIONS = frozenset({"tensorflow.nn.sigmoid", "tensorflow.math.sigmoid", "tensorflow.sigmoid",
                               "keras.activations.sigmoid", "keras.ops.sigmoid"})
#: element-wise ops whose result has the dtype of their input
ELEMENTWISE_OPS = SIGMOID_FUNCTIONS | frozenset({
    "tensorflow.nn.tanh", "tensorflow.math.tanh", "tensorflow.tanh",
    "tensorflow.nn.relu", "tensorflow.nn.log_softmax", "tensorflow.math.log_softmax",
    "tensorflow.nn.l2_normalize", "tensorflow.math.l2_normalize",
    "keras.ops.tanh", "keras.ops.relu", "keras.ops.log_softmax",
    "keras.activations.tanh", "keras.activations.relu", "keras.activations.linear",
})
#: ops whose result has the dtype of their input and only moves values around
SHAPE_OPS = frozenset({
    f"{root}.{op}"
    for root in ("tensorflow", "keras.ops")
    for op in ("reshape", "squeeze", "expand_dims", "identity", "transpose")
} | {"tensorflow.ensure_shape"})
#: calls whose arguments name a target shape: the Reshape layer, and reshape ops
#: (their first argument is the tensor)
RESHAPES = frozenset({"keras.layers.Reshape", "tensorflow.reshape", "keras.ops.reshape"})
#: API functions that return their input's dtype when called on one tensor (handed
#: to a Lambda directly, ``Lambda(tf.nn.softmax)``)
DTYPE_PRESERVING_FUNCTIONS = SOFTMAX_FUNCTIONS | ELEMENTWISE_OPS | frozenset({"tensorflow.identity"})
#: namespaces whose ops are named below by their last word
TF_OP_NAMESPACES = ("tensorflow.", "tensorflow.math.", "tensorflow.nn.", "tensorflow.linalg.")
#: ``keras.activations.softmax(x)`` too: an activation function is the backend op of
#: its name, applied to one tensor (Keras 2 and 3), whose dtype it keeps
KERAS_OP_NAMESPACES = ("keras.ops.", "keras.ops.nn.", "keras.ops.numpy.", "keras.backend.", "keras.activations.")
#: ops (last word, in the namespaces above) whose result has the dtype of their
#: first tensor argument
DTYPE_PRESERVING_OPS = frozenset({
    "reshape", "transpose", "expand_dims", "squeeze", "tile", "identity", "stop_gradient",
    "abs", "negative", "square", "sqrt", "rsqrt", "exp", "log", "log1p", "tanh", "sigmoid",
    "softplus", "relu", "relu6", "gelu", "elu", "selu", "swish", "silu", "leaky_relu",
    "softmax", "log_softmax", "dropout", "l2_normalize", "reduce_sum", "reduce_mean",
    "ensure_shape", "reduce_max", "reduce_min", "reduce_prod", "reduce_logsumexp", "reduce_std",
    "reduce_variance", "cumsum", "gather", "gather_nd", "broadcast_to", "pad", "roll",
    "reverse", "boolean_mask", "clip_by_value", "clip_by_norm", "norm", "matmul", "add",
    "subtract", "multiply", "divide", "truediv", "maximum", "minimum", "pow",
    "squared_difference", "einsum", "tensordot", "concat", "stack", "add_n",
    "erf", "sin", "cos", "reciprocal", "floor", "ceil", "round", "sign", "band_part",
    # Keras spellings of the same ops
    "sum", "mean", "max", "min", "prod", "var", "std", "dot", "batch_dot", "concatenate",
    "where", "clip", "logsumexp", "expm1", "bias_add", "permute_dimensions", "slice",
    "batch_flatten", "flatten", "repeat_elements", "triu", "tril",
    # a lookup hands back rows of its first argument, the table
    "embedding_lookup",
})
#: ops returning several tensors of their first argument's dtype
UNPACKING_OPS = frozenset({"tensorflow.nn.moments", "tensorflow.nn.weighted_moments",
                           "tensorflow.split", "tensorflow.unstack"})
SUM_FUNCTIONS = frozenset({"tensorflow.reduce_sum", "tensorflow.math.reduce_sum",
                           "keras.backend.sum", "keras.ops.sum"})

# -- tensor creation -----------------------------------------------------------------------------
#: constants: float32 for float literals unless given a dtype
CONSTANTS = frozenset({"tensorflow.constant", "tensorflow.convert_to_tensor",
                       "keras.ops.convert_to_tensor", "keras.backend.constant"})
#: constants that hand a tensor argument back in its own dtype when given no dtype
#: (``x = tf.convert_to_tensor(x)`` at the top of an activation function)
CONVERSIONS = frozenset({"tensorflow.convert_to_tensor", "keras.ops.convert_to_tensor"})
#: creation ops whose default dtype is float32
FLOAT32_BY_DEFAULT = frozenset({
    "tensorflow.ones", "tensorflow.zeros", "tensorflow.eye", "tensorflow.linalg.eye",
    "tensorflow.random.normal", "tensorflow.random.uniform", "tensorflow.random.truncated_normal",
    "tensorflow.random.stateless_normal", "tensorflow.random.stateless_uniform",
    "tensorflow.random.stateless_truncated_normal", "tensorflow.random_normal",
    "tensorflow.random_uniform", "tensorflow.truncated_normal",
    "keras.random.normal", "keras.random.uniform", "keras.random.truncated_normal",
    "keras.ops.ones", "keras.ops.zeros", "keras.ops.eye", "keras.ops.full",
    "keras.backend.random_normal", "keras.backend.random_uniform",
    "keras.backend.zeros", "keras.backend.ones", "keras.backend.eye",
    "keras.backend.truncated_normal", "keras.backend.random_normal_variable",
    "keras.backend.random_uniform_variable",
})
#: the creation ops above that make ``floatx()`` when given no dtype (Keras's own: the
#: backend functions, ``keras.random`` and ``keras.ops``), float32 unless the program
#: sets floatx; TensorFlow's ops make float32 whatever floatx is
FLOATX_BY_DEFAULT = frozenset({
    "keras.random.normal", "keras.random.uniform", "keras.random.truncated_normal",
    "keras.ops.ones", "keras.ops.zeros", "keras.ops.eye", "keras.ops.full",
    "keras.backend.random_normal", "keras.backend.random_uniform",
    "keras.backend.zeros", "keras.backend.ones", "keras.backend.eye",
    "keras.backend.truncated_normal", "keras.backend.random_normal_variable",
    "keras.backend.random_uniform_variable",
})
#: ``*_like`` ops: their input's dtype unless given one
LIKE_OPS = frozenset({"tensorflow.ones_like", "tensorflow.zeros_like", "keras.ops.ones_like",
                      "keras.ops.zeros_like", "keras.backend.ones_like", "keras.backend.zeros_like"})
FILL_OPS = frozenset({"tensorflow.fill"})
#: ``tf.range``: int32 for integer bounds, float32 for float bounds, or its dtype
RANGE_OPS = frozenset({"tensorflow.range"})
#: image resizing: float32 whatever the input, except nearest-neighbour resizing, which
#: keeps the input's dtype (``tf.image.resize`` documents both; Keras 2's
#: ``backend.resize_images`` and Keras 3's ``ops.image.resize`` on TensorFlow hand its
#: result back uncast: tf-keras ``backend.py``, keras ``backend/tensorflow/image.py``)
IMAGE_RESIZE = frozenset({"tensorflow.image.resize", "keras.backend.resize_images", "keras.ops.image.resize"})
#: built-in layers that resize with those and return the result uncast, so their output
#: is float32 under a mixed policy unless they resize nearest-neighbour
#: (``UpSampling2D.call`` in tf-keras and Keras 3; ``Resizing`` casts back to the
#: compute dtype, so it is not one)
RESIZING_LAYERS = frozenset({"keras.layers.UpSampling2D"})
#: the functional interface of the merge layers (``layers.concatenate([a, b])``): each
#: builds its layer (``Concatenate()``...) and calls it, so the result is that layer's
#: output, the compute dtype of the policy governing the call (Keras 2 and 3)
MERGE_FUNCTIONS = frozenset(f"keras.layers.{name}" for name in (
    "concatenate", "add", "subtract", "multiply", "average", "maximum", "minimum", "dot"))
NEAREST_RESIZE_METHODS = frozenset({"nearest", "tensorflow.image.ResizeMethod.NEAREST_NEIGHBOR"})
#: raw TensorFlow variables: float32 unless given a dtype, never autocast
TF_VARIABLES = frozenset({"tensorflow.Variable"})
#: what makes an activation function from its name; calling one keeps the dtype
ACTIVATION_GETTERS = frozenset({"keras.activations.get"})
#: the module whose function of that name ``keras.activations.get(name)`` returns
#: (``get("softmax")`` is ``keras.activations.softmax``; ``get(None)`` is ``linear``)
ACTIVATION_GETTER_MODULE = "keras.activations"
#: modules whose functions a name picks at run time as an activation
#: (``getattr(tf.nn, act)``, ``getattr(keras.activations, name)``): the function of that
#: name in the module, applied to one tensor, whose dtype it keeps
ACTIVATION_NAMESPACES = frozenset({
    "tensorflow.nn", "tensorflow.math", "keras.activations", "keras.ops", "keras.ops.nn",
})
#: einops functions: they rearrange and reduce a tensor in its own dtype
EINOPS_FUNCTIONS = frozenset({"einops.rearrange", "einops.repeat", "einops.reduce"})
#: functions of Python's math module that give a Python number, not a tensor
PYTHON_NUMBER_FUNCTIONS = frozenset({"math.ceil", "math.floor", "math.sqrt", "math.log", "math.exp", "math.prod"})
#: functions that read a tensor's dtype (``K.dtype(x)``)
DTYPE_OF = frozenset({"keras.backend.dtype", "keras.ops.dtype", "keras.backend.standardize_dtype"})
#: constructors of weights (a Keras variable is autocast inside a layer's call)
VARIABLE_CONSTRUCTORS = TF_VARIABLES | frozenset({"keras.Variable"})

#: scopes that decide how variables are created (float32 master weights for float16
#: compute): a creator scope, or a variable scope given a ``custom_getter``
VARIABLE_CREATOR_SCOPES = frozenset({"tensorflow.variable_creator_scope",
                                     "tensorflow.compat.v1.variable_creator_scope"})
VARIABLE_SCOPES = frozenset({"tensorflow.compat.v1.variable_scope", "tensorflow.variable_scope"})

# -- training --------------------------------------------------------------------------------------
GRADIENT_TAPES = frozenset({"tensorflow.GradientTape", "tensorflow.autodiff.GradientTape"})
SYMBOLIC_GRADIENTS = frozenset({"tensorflow.gradients", "tensorflow.compat.v1.gradients"})
STABLE_LSO = "keras.mixed_precision.LossScaleOptimizer"
#: TF <= 2.8; a subclass of the stable class from TF 2.4 (``isinstance`` of the stable one holds)
EXPERIMENTAL_LSO = "keras.mixed_precision.experimental.LossScaleOptimizer"
LOSS_SCALE_OPTIMIZERS = frozenset({STABLE_LSO, EXPERIMENTAL_LSO})
#: Keras 3's keyword of every optimizer's constructor that scales the loss statically
#: (``Adam(1e-3, loss_scale_factor=128.0)``): ``apply()`` divides the gradients by it
LOSS_SCALE_FACTOR_KEYWORD = "loss_scale_factor"
#: distributed-training wrappers that keep the wrapped optimizer's loss scaling
#: (``hvd.DistributedOptimizer(opt)`` averages gradients, then calls ``opt``)
DISTRIBUTED_OPTIMIZERS = frozenset({
    "horovod.tensorflow.DistributedOptimizer", "horovod.tensorflow.keras.DistributedOptimizer",
    "horovod.keras.DistributedOptimizer", "byteps.tensorflow.DistributedOptimizer",
    "byteps.tensorflow.keras.DistributedOptimizer",
})
#: tape wrappers rebound to the tape's name: ``tape = hvd.DistributedGradientTape(tape)``
DISTRIBUTED_TAPES = frozenset({
    "horovod.tensorflow.DistributedGradientTape", "byteps.tensorflow.DistributedGradientTape",
})
#: clipping functions whose first argument is the tensor (or list of tensors) clipped
GRADIENT_CLIPS = frozenset({
    "tensorflow.clip_by_global_norm", "tensorflow.clip_by_norm", "tensorflow.clip_by_value",
    "tensorflow.compat.v1.clip_by_global_norm", "tensorflow.compat.v1.clip_by_norm",
    "tensorflow.compat.v1.clip_by_value", "keras.ops.clip", "keras.ops.numpy.clip", "keras.backend.clip",
})


#: the base classes of Keras optimizers: a class deriving from one is a (plain) optimizer
OPTIMIZER_BASE_CLASSES = frozenset({
    "keras.optimizers.Optimizer", "keras.optimizers.legacy.Optimizer", "keras.optimizers.experimental.Optimizer",
    "keras.optimizer_v2.optimizer_v2.OptimizerV2",
})


#: methods that build a new instance of their receiver's class from its saved state
#: (``LossScaleOptimizer.from_config`` returns ``cls(inner_optimizer, **config)``), also
#: when called on an instance (``opt = opt.from_config(config)``): a value of its kind
SAME_CLASS_REBUILDERS = frozenset({"from_config"})


def is_optimizer_class(name: str) -> bool:
    """A Keras optimizer class a project's optimizer may derive from (``Optimizer``, ``Adam``)."""
    return name in OPTIMIZER_BASE_CLASSES or (is_optimizer_constructor(name) and not name.endswith(".get"))


def is_optimizer_constructor(name: str) -> bool:
    """``keras.optimizers.Adam`` and friends (legacy/experimental too), or ``optimizers.get``;
    ``keras.optimizers.Adam.from_config``, the classmethod that rebuilds an instance of its
    class from a saved config (a model's ``compile_from_config``), makes one too."""
    parts = name.split(".")
    if len(parts) > 3 and parts[-1] == "from_config" and parts[-2][:1].isupper():
        parts = parts[:-1]
    if parts[:2] != ["keras", "optimizers"]:
        return False
    if len(parts) == 3:
        return parts[2] == "get" or (parts[2][:1].isupper() and parts[2] != "Optimizer")
    return len(parts) == 4 and parts[2] in ("legacy", "experimental") and parts[3][:1].isupper() \
        and parts[3] != "Optimizer"


# -- input pipelines ------------------------------------------------------------------------------
#: namespaces whose calls give a tf.data dataset
DATASET_NAMESPACES = ("tensorflow.data.", "tensorflow_datasets.")
#: Keras functions that give a tf.data dataset
DATASET_FACTORIES = frozenset(
    f"keras.{module}.{function}"
    for module in ("utils", "preprocessing")
    for function in ("image_dataset_from_directory", "text_dataset_from_directory",
                     "audio_dataset_from_directory", "timeseries_dataset_from_array")
)


#: Dataset methods that return a dataset: a chain of them on a dataset stays one
DATASET_METHODS = frozenset({
    "map", "batch", "padded_batch", "ragged_batch", "unbatch", "rebatch", "shuffle", "prefetch",
    "repeat", "cache", "filter", "take", "skip", "shard", "flat_map", "interleave", "zip",
    "concatenate", "with_options", "apply", "enumerate", "ignore_errors",
})
#: Dataset methods no other common library has: their receiver is a Dataset, whatever it is
DATASET_ONLY_METHODS = frozenset({"prefetch", "padded_batch", "unbatch", "with_options"})


def makes_dataset(name: str) -> bool:
    """Whether a call of the canonical ``name`` gives a tf.data dataset."""
    return name.startswith(DATASET_NAMESPACES) or name in DATASET_FACTORIES


# -- TF1 ---------------------------------------------------------------------------------------------
#: TF1-only names (gone from the TF2 namespace): a file using them targets TF 1.x
TF1_ONLY_NAMES = frozenset({
    "tensorflow.Session", "tensorflow.InteractiveSession", "tensorflow.placeholder",
    "tensorflow.get_variable", "tensorflow.variable_scope", "tensorflow.ConfigProto",
    "tensorflow.global_variables_initializer", "tensorflow.trainable_variables",
    "tensorflow.logging", "tensorflow.app", "tensorflow.flags", "tensorflow.gfile",
    "tensorflow.layers", "tensorflow.contrib", "tensorflow.train.AdamOptimizer",
    "tensorflow.train.GradientDescentOptimizer", "tensorflow.train.MomentumOptimizer",
    "tensorflow.train.Optimizer", "tensorflow.train.get_or_create_global_step",
    "tensorflow.train.get_global_step",
})


# -- libraries' own precision switches and training loops (issue 28) ---------------------------
#: a library's own default-float switch -> the value that makes every variable it creates
#: float16 (pure float16, MP404). Evidence per entry:
#: - deepxde/config.py ``set_default_float``: "float16" calls ``real.set_float16()`` and, under
#:   the TensorFlow backends, ``tf.keras.backend.set_floatx("float16")``; "mixed" is the
#:   library's mixed precision (float32 variables), not this switch
LIBRARY_FLOAT16_SWITCHES: Dict[str, str] = {
    "deepxde.config.set_default_float": "float16",
}
#: a library's own mixed-precision switch -> the value that turns it on (float16 compute)
#: - deepxde/config.py ``set_default_float("mixed")``: under TensorFlow it sets the
#:   ``mixed_float16`` global policy; under PyTorch it trains under ``torch.autocast(float16)``
LIBRARY_MIXED_SWITCHES: Dict[str, str] = {
    "deepxde.config.set_default_float": "mixed",
}
#: third-party trainers whose own training loop never scales the loss: the class -> its
#: training method. Evidence per entry:
#: - deepxde/model.py ``Model._compile_tensorflow``: ``train_step`` takes
#:   ``tape.gradient(total_loss, ...)`` and calls ``opt.apply_gradients`` with no
#:   LossScaleOptimizer and no scale_loss; the PyTorch path runs ``torch.autocast`` with
#:   no GradScaler. ``Model.train`` runs that step.
#: Known to scale, so not listed: Keras ``Model.fit`` (compile() wraps the optimizer in a
#: LossScaleOptimizer under mixed_float16, and Keras 3's fit calls scale_loss).
UNSCALED_LIBRARY_TRAINERS: Dict[str, str] = {
    "deepxde.Model": "train",
    "deepxde.model.Model": "train",
}
#: the top-level packages of the libraries above: a file that imports one of them may have
#: a finding without ever naming TensorFlow or Keras (the prefilter reads these words too)
LIBRARY_PACKAGES = ("deepxde",)

# -- 16-bit numeric hazards: squares, powers, norms, sizes (MP506) ----------------------------------
#: element-wise squares and powers (the result keeps the input's dtype)
SQUARE_FUNCTIONS = frozenset({"tensorflow.square", "tensorflow.math.square", "keras.backend.square",
                              "keras.ops.square"})
POWER_FUNCTIONS = frozenset({"tensorflow.pow", "tensorflow.math.pow", "keras.backend.pow", "keras.ops.power"})
#: ops that sum the squares of their input in its own dtype: a float16 norm of a 1024-wide
#: feature of magnitude 10 is inf, and l2_normalize then returns zeros (TF 2.21, measured)
SUM_OF_SQUARES_FUNCTIONS = frozenset({
    "tensorflow.norm", "tensorflow.linalg.norm", "tensorflow.nn.l2_normalize", "tensorflow.math.l2_normalize",
    "tensorflow.linalg.l2_normalize", "keras.backend.l2_normalize",
})
#: ops whose output is bounded by 1 whatever their input: a square or sum after them is safe
BOUNDED_FUNCTIONS = SIGMOID_FUNCTIONS | SOFTMAX_FUNCTIONS | frozenset({
    "tensorflow.nn.tanh", "tensorflow.math.tanh", "tensorflow.tanh", "keras.ops.tanh",
    "keras.activations.tanh", "tensorflow.nn.l2_normalize", "tensorflow.math.l2_normalize",
    "tensorflow.linalg.l2_normalize", "keras.backend.l2_normalize", "tensorflow.math.cos", "tensorflow.math.sin",
    "tensorflow.cos", "tensorflow.sin",
})
#: ops that map an infinite input to a finite output (tanh(inf) is 1, sigmoid(-inf) is 0);
#: softmax, l2_normalize, sin and cos give NaN there
SATURATING_FUNCTIONS = SIGMOID_FUNCTIONS | frozenset({
    "tensorflow.nn.tanh", "tensorflow.math.tanh", "tensorflow.tanh", "keras.ops.tanh", "keras.activations.tanh",
})
#: Keras layers whose output is normalised (about unit scale per element)
NORMALIZING_LAYERS = frozenset({"keras.layers.LayerNormalization", "keras.layers.BatchNormalization",
                                "keras.layers.GroupNormalization", "keras.layers.UnitNormalization"})
#: calls that give a tensor's shape (its sizes)
SHAPE_FUNCTIONS = frozenset({"tensorflow.shape", "keras.ops.shape", "keras.backend.shape"})
#: calls that divide or scale their first tensor by their second
SCALING_FUNCTIONS = frozenset({"tensorflow.divide", "tensorflow.math.divide", "tensorflow.truediv",
                               "tensorflow.math.truediv", "tensorflow.multiply", "tensorflow.math.multiply",
                               "keras.ops.divide", "keras.ops.multiply", "keras.ops.true_divide"})
#: products of a tensor's elements: of its sizes, ``tf.reduce_prod(tf.shape(x)[1:])``, its element count
PRODUCT_FUNCTIONS = frozenset({"tensorflow.reduce_prod", "tensorflow.math.reduce_prod", "keras.ops.prod",
                               "keras.backend.prod", "numpy.prod"})

# -- distributions (MP507) -----------------------------------------------------------------------
#: TensorFlow Probability's namespace of distributions
TFP_DISTRIBUTIONS = "tensorflow_probability.distributions."
#: ``tfd.Independent(dist, reinterpreted_batch_ndims)``: log_prob sums the inner
#: distribution's terms over the reinterpreted dimensions, in the parameters' dtype
INDEPENDENT_DISTRIBUTIONS = frozenset({"tensorflow_probability.distributions.Independent"})

# -- Python's own classes (the program model) ------------------------------------------------------
#: bases that give a class no behaviour of its own: a class deriving only from these (and
#: ``object``) is a plain class, whose methods run where they are called, not where it is
#: built (see :mod:`mplint.run.instance_methods`)
PLAIN_BASE_CLASSES = frozenset({"abc.ABC", "typing.Generic", "typing.Protocol"})

# -- configuration files -------------------------------------------------------------------
#: calls that parse an open configuration file into a dict (``yaml.safe_load(open(path))``)
CONFIG_STREAM_LOADERS = frozenset({"yaml.safe_load", "yaml.load", "yaml.full_load", "yaml.unsafe_load",
                                   "json.load"})
#: calls that read a configuration file named by a path (``OmegaConf.load("conf.yaml")``)
CONFIG_FILE_LOADERS = frozenset({"omegaconf.OmegaConf.load"})
#: calls that wrap a loaded dict so its keys read as attributes (``EasyDict(cfg).model.lr``)
CONFIG_WRAPPERS = frozenset({"easydict.EasyDict", "dotmap.DotMap", "munch.Munch", "munch.munchify",
                             "omegaconf.OmegaConf.create", "addict.Dict", "box.Box",
                             "ml_collections.ConfigDict", "attrdict.AttrDict"})
#: calls that open a file for reading (the stream a loader parses)
FILE_OPENERS = frozenset({"open", "io.open", "builtins.open"})

#: decorators that run the function they decorate as it is called (a traced ``tf.function``)
RUNS_AS_CALLED = frozenset({"tensorflow.function"})
