"""What the runtime checker's test files share (they import TensorFlow; the fast run
never collects them)."""

import pytest
import tensorflow as tf

keras = tf.keras


@pytest.fixture(autouse=True)
def float32_outside():
    """Every test starts and ends with the float32 policy (and proves nothing leaked)."""
    assert keras.mixed_precision.global_policy().name == "float32"
    yield
    leaked = keras.mixed_precision.global_policy().name
    keras.mixed_precision.set_global_policy("float32")
    assert leaked == "float32"


def pairs(report):
    """(rule, layer) of every finding, sorted."""
    return sorted((f.rule, f.layer) for f in report.findings)
