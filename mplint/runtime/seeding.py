"""One random start for a check, the same on every run, unless the user's code chose one.

The runtime checker judges a model from its initial weights (and the synthetic data and
dropout masks of a training step), which come from Python's, NumPy's, TensorFlow's and
Keras's generators. Unseeded, a verdict that depends on the start (how far a GAN's
unscaled generator updates fall under float16) changes from one run to the next. So
each policy's model is built from the same seed (``--seed``, default 0): the same
verdict on every run, and the same start under every policy.

Code that seeds TensorFlow itself (``tf.random.set_seed``, ``keras.utils.set_random_seed``
at import time) keeps its own start: nothing is reseeded. A factory that seeds inside
seeds after this does, so its seed wins too. Afterwards every generator is put back as
it was (an API or pytest caller's later randomness is not made deterministic).
"""

from __future__ import annotations

import random
import sys
from types import TracebackType
from typing import Any, Optional, Type

from mplint.runtime.keras_env import keras_modules, tf_module

#: the seed a check starts from unless told otherwise (``--seed``)
DEFAULT_SEED = 0


def user_seeded() -> bool:
    """Whether the user's code has set TensorFlow's global seed (``tf.random.set_seed``;
    both Keras generations' ``utils.set_random_seed`` set it too)."""
    return tf_module().compat.v1.random.get_seed(None)[0] is not None


class Seeds:
    """``with Seeds(seed) as seeds``: ``seeds.start()`` before each build puts every
    generator at ``seed``; leaving the block restores them. Both do nothing when the
    user's code chose its own seed."""

    def __init__(self, seed: int) -> None:
        self.seed = seed
        self.users = user_seeded()
        self._saved: Any = None

    def __enter__(self) -> "Seeds":
        if not self.users:
            import numpy as np

            self._saved = (random.getstate(), np.random.get_state())
        return self

    def start(self) -> None:
        """Every generator at the seed: Python's, NumPy's, TensorFlow's, and each loaded
        Keras package's own (Keras 3 keeps a global seed generator of its own)."""
        if self.users:
            return
        import numpy as np

        random.seed(self.seed)
        np.random.seed(self.seed)
        tf_module().random.set_seed(self.seed)
        for keras in keras_modules():
            set_random_seed = getattr(getattr(keras, "utils", None), "set_random_seed", None)
            if callable(set_random_seed):
                set_random_seed(self.seed)

    def __exit__(self, kind: Optional[Type[BaseException]], error: Optional[BaseException],
                 trace: Optional[TracebackType]) -> None:
        if self.users or self._saved is None:
            return
        import numpy as np

        python_state, numpy_state = self._saved
        random.setstate(python_state)
        np.random.set_state(numpy_state)
        tf_module().random.set_seed(None)
        _forget_keras3_seed()


def _forget_keras3_seed() -> None:
    """Keras 3 remembers the seed ``set_random_seed`` was given, and the generator made
    from it: both go, as before the check (the next use makes a generator afresh)."""
    if "keras" not in sys.modules:
        return
    try:
        from keras.src.backend.common import global_state  # type: ignore[import-not-found]
        from keras.src.random import seed_generator  # type: ignore[import-not-found]
        from keras.src.utils import rng_utils  # type: ignore[import-not-found]
    except ImportError:  # Keras 2: nothing of its own beyond TensorFlow's seed
        return
    global_state.set_global_attribute(rng_utils.GLOBAL_RANDOM_SEED, None)
    global_state.set_global_attribute(seed_generator.GLOBAL_SEED_GENERATOR, None)
