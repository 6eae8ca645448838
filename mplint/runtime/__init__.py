"""Runtime checker: build a Keras model under a dtype policy and check it on this machine.

The only part of mplint that imports TensorFlow, and only when a check runs: importing
this package is free, so the CLI and the pytest plugin can load it without the extra.

    from mplint.runtime import check_model
    report = check_model(build_model, policy="mixed_float16")
    assert report.ok, report.to_text()
"""

from __future__ import annotations

from typing import Any

from mplint.runtime.report import Report, RuntimeFinding
from mplint.runtime.requirements import INSTALL_HINT, MissingTensorFlow, require_tensorflow

def check_model(factory_or_model: Any, policy: Any = None, **kwargs: Any) -> Report:
    """Build and run the model under ``policy``; keywords: input_shape, input_dtype,
    batch_size, inputs, train_step, alignment, seed (``mplint.runtime.check.check_model``,
    imported here lazily because it needs TensorFlow)."""
    require_tensorflow()
    from mplint.runtime.check import check_model as run

    return run(factory_or_model, policy, **kwargs)


def assert_mixed_precision_safe(factory_or_model: Any, policy: Any = None, **kwargs: Any) -> Report:
    """Check the model and raise AssertionError with the readable report if anything is wrong."""
    report = check_model(factory_or_model, policy, **kwargs)
    if not report.ok:
        raise AssertionError("mixed-precision problems found:\n" + report.to_text())
    return report


__all__ = ["INSTALL_HINT", "MissingTensorFlow", "Report", "RuntimeFinding", "assert_mixed_precision_safe",
           "check_model"]
