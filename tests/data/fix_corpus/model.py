"""A small model module with the pitfalls `mplint fix` repairs (the fix corpus's own)."""
import tensorflow as tf

tf.keras.mixed_precision.set_global_policy("mixed_float16")  # whole program


def classifier(units=100, classes=10):
    # a float16 softmax at the end, and a size that keeps Tensor Cores idle
    return tf.keras.Sequential([
        tf.keras.layers.Dense(units, activation="relu"),  # hidden
        tf.keras.layers.Dense(classes, activation="softmax"),  # probabilities
    ])
