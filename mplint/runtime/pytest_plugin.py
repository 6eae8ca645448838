"""pytest plugin (entry point ``pytest11``): assert a model is mixed-precision safe in one line.

    def test_model_is_mixed_precision_safe(assert_mixed_precision_safe):
        assert_mixed_precision_safe(build_model, policy="mixed_float16")

Loaded into every pytest run where mplint is installed, so it imports nothing heavy:
TensorFlow loads only when a test uses a fixture.
"""

from __future__ import annotations

from typing import Any, Callable

import pytest


def _check(factory_or_model: Any, policy: Any = None, **kwargs: Any) -> Any:
    from mplint.runtime import MissingTensorFlow, check_model

    try:
        return check_model(factory_or_model, policy, **kwargs)
    except MissingTensorFlow as exc:
        pytest.fail(str(exc), pytrace=False)


def _assert_safe(factory_or_model: Any, policy: Any = None, **kwargs: Any) -> Any:
    report = _check(factory_or_model, policy, **kwargs)
    if not report.ok:
        pytest.fail("mixed-precision problems found:\n" + report.to_text(), pytrace=False)
    return report


@pytest.fixture
def mplint_runtime_check() -> Callable[..., Any]:
    """``check_model`` itself: returns the Report for your own assertions."""
    return _check


@pytest.fixture
def assert_mixed_precision_safe() -> Callable[..., Any]:
    """Check the model; fail the test with the readable report if anything is found."""
    return _assert_safe
