"""pytest plugin (entry point ``pytest11``): assert a model is mixed-precision safe in one line.

    def test_model_is_mixed_precision_safe(assert_mixed_precision_safe):
        assert_mixed_precision_safe(build_model, policy="mixed_float16")

Loaded into every pytest run where mplint is installed, so it imports nothing heavy:
TensorFlow loads only when a test uses a fixture.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Dict

import pytest


def _settings(pytestconfig: Any) -> Dict[str, Any]:
    """``[tool.mplint]`` from the nearest pyproject.toml above pytest's root folder."""
    from mplint.runtime import config

    try:
        found = config.load(start=Path(str(pytestconfig.rootpath)))
        config.check_codes(found.select + found.ignore, str(found.path))
    except config.ConfigError as exc:
        pytest.fail(f"mplint: {exc}", pytrace=False)
    out: Dict[str, Any] = {"select": found.select or None, "ignore": found.ignore}
    if found.alignment:
        out["alignment"] = found.alignment
    if found.vocabulary_threshold:
        out["vocabulary_threshold"] = found.vocabulary_threshold
    return out


def _checker(settings: Dict[str, Any]) -> Callable[..., Any]:
    def check(factory_or_model: Any, policy: Any = None, **kwargs: Any) -> Any:
        from mplint.runtime import MissingTensorFlow, check_model

        merged = dict(settings)
        # select= replaces the table's choice; ignore= adds to it (as on the command line).
        merged["ignore"] = list(settings.get("ignore") or []) + list(kwargs.pop("ignore", None) or [])
        merged.update(kwargs)
        try:
            return check_model(factory_or_model, policy, **merged)
        except MissingTensorFlow as exc:
            pytest.fail(str(exc), pytrace=False)

    return check


@pytest.fixture
def mplint_runtime_check(pytestconfig: Any) -> Callable[..., Any]:
    """``check_model`` itself, with [tool.mplint]'s select, ignore and alignment: returns
    the Report for your own assertions."""
    return _checker(_settings(pytestconfig))


@pytest.fixture
def assert_mixed_precision_safe(pytestconfig: Any) -> Callable[..., Any]:
    """Check the model; fail the test with the readable report if anything is found."""
    check = _checker(_settings(pytestconfig))

    def assert_safe(factory_or_model: Any, policy: Any = None, **kwargs: Any) -> Any:
        report = check(factory_or_model, policy, **kwargs)
        if not report.ok:
            pytest.fail("mixed-precision problems found:\n" + report.to_text(), pytrace=False)
        return report

    return assert_safe
