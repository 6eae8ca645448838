"""mplint: find and fix mixed-precision pitfalls in TensorFlow/Keras code.

Importing this package must never import TensorFlow: the static checks work on
source text only, and TensorFlow is needed only by ``mplint.runtime``.
"""

__version__ = "0.1.0"
