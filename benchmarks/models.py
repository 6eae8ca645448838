"""Model factories the runtime benchmarks check (``mplint runtime benchmarks/models.py:NAME``)."""

import tensorflow as tf


def resnet50():
    model = tf.keras.applications.ResNet50(weights=None)
    model.compile(optimizer="sgd", loss="sparse_categorical_crossentropy")
    return model


def mobilenet_v2():
    model = tf.keras.applications.MobileNetV2(weights=None)
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
    return model
