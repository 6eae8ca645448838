"""The public names a ``from <module> import *`` of a Keras module binds, so a name
used bare after the star resolves to its API (``Dense(8)`` after ``from
tensorflow.keras.layers import *``). Keyed by canonical module name; the union of
Keras 2 (tf_keras 2.21) and Keras 3 (3.15), read once with ``dir()`` and written here
so the static path imports neither."""

from __future__ import annotations

from typing import Dict, FrozenSet


_LAYERS = frozenset({
    "AbstractRNNCell", "Activation", "ActivityRegularization", "AdaptiveAveragePooling1D",
    "AdaptiveAveragePooling2D", "AdaptiveAveragePooling3D", "AdaptiveMaxPooling1D",
    "AdaptiveMaxPooling2D", "AdaptiveMaxPooling3D", "Add", "AdditiveAttention", "AlphaDropout",
    "Attention", "AugMix", "AutoContrast", "Average", "AveragePooling1D", "AveragePooling2D",
    "AveragePooling3D", "AvgPool1D", "AvgPool2D", "AvgPool3D", "BatchNormalization", "Bidirectional",
    "CategoryEncoding", "CenterCrop", "Concatenate", "ContrastLimitedAdaptiveHistogramEqualization",
    "Conv1D", "Conv1DTranspose", "Conv2D", "Conv2DTranspose", "Conv3D", "Conv3DTranspose", "ConvLSTM1D",
    "ConvLSTM2D", "ConvLSTM3D", "Convolution1D", "Convolution1DTranspose", "Convolution2D",
    "Convolution2DTranspose", "Convolution3D", "Convolution3DTranspose", "Cropping1D", "Cropping2D",
    "Cropping3D", "CutMix", "Dense", "DenseFeatures", "DepthwiseConv1D", "DepthwiseConv2D",
    "Discretization", "Dot", "Dropout", "ELU", "EinsumDense", "Embedding", "Equalization", "Flatten",
    "FlaxLayer", "GRU", "GRUCell", "GaussianDropout", "GaussianNoise", "GlobalAveragePooling1D",
    "GlobalAveragePooling2D", "GlobalAveragePooling3D", "GlobalAvgPool1D", "GlobalAvgPool2D",
    "GlobalAvgPool3D", "GlobalMaxPool1D", "GlobalMaxPool2D", "GlobalMaxPool3D", "GlobalMaxPooling1D",
    "GlobalMaxPooling2D", "GlobalMaxPooling3D", "GroupNormalization", "GroupQueryAttention",
    "HashedCrossing", "Hashing", "Identity", "Input", "InputLayer", "InputSpec", "IntegerLookup",
    "JaxLayer", "LSTM", "LSTMCell", "Lambda", "Layer", "LayerNormalization", "LeakyReLU",
    "LocallyConnected1D", "LocallyConnected2D", "Masking", "MaxNumBoundingBoxes", "MaxPool1D",
    "MaxPool2D", "MaxPool3D", "MaxPooling1D", "MaxPooling2D", "MaxPooling3D", "Maximum",
    "MelSpectrogram", "Minimum", "MixUp", "MultiHeadAttention", "Multiply", "Normalization", "PReLU",
    "Permute", "Pipeline", "RMSNormalization", "RNN", "RandAugment", "RandomBrightness",
    "RandomColorDegeneration", "RandomColorJitter", "RandomContrast", "RandomCrop",
    "RandomElasticTransform", "RandomErasing", "RandomFlip", "RandomGaussianBlur", "RandomGrayscale",
    "RandomHeight", "RandomHue", "RandomInvert", "RandomPerspective", "RandomPosterization",
    "RandomRotation", "RandomSaturation", "RandomSharpness", "RandomShear", "RandomTranslation",
    "RandomWidth", "RandomZoom", "ReLU", "RepeatVector", "Rescaling", "Reshape", "Resizing",
    "ReversibleEmbedding", "STFTSpectrogram", "SeparableConv1D", "SeparableConv2D",
    "SeparableConvolution1D", "SeparableConvolution2D", "SimpleRNN", "SimpleRNNCell", "Softmax",
    "Solarization", "SpatialDropout1D", "SpatialDropout2D", "SpatialDropout3D", "SpectralNormalization",
    "StackedRNNCells", "StringLookup", "Subtract", "TFSMLayer", "TextVectorization", "ThresholdedReLU",
    "TimeDistributed", "TorchModuleWrapper", "UnitNormalization", "UpSampling1D", "UpSampling2D",
    "UpSampling3D", "Wrapper", "ZeroPadding1D", "ZeroPadding2D", "ZeroPadding3D", "add", "average",
    "concatenate", "deserialize", "dot", "maximum", "minimum", "multiply", "serialize", "subtract"
})

_MODELS = frozenset({
    "Model", "Sequential", "clone_model", "load_model", "model_from_config", "model_from_json",
    "model_from_yaml", "save_model"
})

_BACKEND = frozenset({
    "abs", "all", "any", "arange", "argmax", "argmin", "backend", "batch_dot", "batch_flatten",
    "batch_get_value", "batch_normalization", "batch_set_value", "bias_add", "binary_crossentropy",
    "binary_focal_crossentropy", "cast", "cast_to_floatx", "categorical_crossentropy",
    "categorical_focal_crossentropy", "clear_session", "clip", "concatenate", "constant", "conv1d",
    "conv2d", "conv2d_transpose", "conv3d", "cos", "count_params", "ctc_batch_cost", "ctc_decode",
    "ctc_label_dense_to_sparse", "cumprod", "cumsum", "depthwise_conv2d", "dot", "dropout", "dtype",
    "elu", "epsilon", "equal", "eval", "exp", "expand_dims", "eye", "flatten", "floatx", "foldl",
    "foldr", "function", "gather", "get_uid", "get_value", "gradients", "greater", "greater_equal",
    "hard_sigmoid", "image_data_format", "in_test_phase", "in_top_k", "in_train_phase", "int_shape",
    "is_float_dtype", "is_int_dtype", "is_keras_tensor", "is_sparse", "l2_normalize", "learning_phase",
    "learning_phase_scope", "less", "less_equal", "local_conv1d", "local_conv2d", "log",
    "manual_variable_initialization", "map_fn", "max", "maximum", "mean", "min", "minimum",
    "moving_average_update", "name_scope", "ndim", "normalize_batch_in_training", "not_equal",
    "one_hot", "ones", "ones_like", "permute_dimensions", "placeholder", "pool2d", "pool3d", "pow",
    "print_tensor", "prod", "random_bernoulli", "random_binomial", "random_normal",
    "random_normal_variable", "random_uniform", "random_uniform_variable", "relu", "repeat",
    "repeat_elements", "reset_uids", "reshape", "resize_images", "resize_volumes", "result_type",
    "reverse", "rnn", "round", "separable_conv2d", "set_epsilon", "set_floatx", "set_image_data_format",
    "set_learning_phase", "set_value", "shape", "sigmoid", "sign", "sin", "softmax", "softplus",
    "softsign", "sparse_categorical_crossentropy", "spatial_2d_padding", "spatial_3d_padding", "sqrt",
    "square", "squeeze", "stack", "standardize_dtype", "std", "stop_gradient", "sum", "switch", "tanh",
    "temporal_padding", "tile", "to_dense", "transpose", "truncated_normal", "update", "update_add",
    "update_sub", "var", "variable", "zeros", "zeros_like"
})

#: canonical module -> the names its star import binds
STAR_EXPORTS: Dict[str, FrozenSet[str]] = {
    "keras.layers": _LAYERS,
    "keras.models": _MODELS,
    "keras.backend": _BACKEND,
}
