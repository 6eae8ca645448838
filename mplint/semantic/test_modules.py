"""Which files are test modules, by pytest's and unittest's naming. Imports nothing,
so the project index (which must not load libcst) and the rules share it."""

from __future__ import annotations

import os
import re

#: what code that trains calls: fit/train_on_batch/a train step, an optimizer update,
#: or a gradient (``tape.gradient``, ``tf.gradients``)
TRAINING_CALL = re.compile(
    r"\.(?:fit|fit_generator|train_on_batch|train_step|apply_gradients|minimize|gradient)\(|\bgradients\(")
#: what code that updates a model's weights calls: fit/train_on_batch/a train step or an
#: optimizer update (a gradient alone, as in a test that checks gradients are finite, is not)
UPDATE_CALL = re.compile(r"\.(?:fit|fit_generator|train_on_batch|train_step|apply_gradients|minimize)\(")


def is_test_path(path: str) -> bool:
    """``test_x.py``, ``x_test.py`` or ``conftest.py``."""
    name = os.path.basename(path)
    return name.startswith("test_") or name.endswith("_test.py") or name == "conftest.py"
