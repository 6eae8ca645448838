"""Where the project uses a library's layer class as a model's output.

A library of layers (no program sets a policy) may define a layer whose ``call`` returns
a softmax: a language model's output layer (``EmbeddingSim``, ``AdaptiveSoftmax``), or
attention or gating weights that stay inside a model. Only the first is MP101's, and the
library's own code often builds no model with it: its tests, examples and scripts do
(``keras.Model(inputs, EmbeddingSim()([x, embeddings]))``). The evidence is read there,
with the model-output analysis every file runs (:class:`ModelOutputs`), in the other
files of the project whose bytes name the class (the library's own builders too: keras-bert
makes ``EmbeddingSimilarity``, through ``Masked``, its MLM output); the import is followed to the file that
defines it (:func:`imported_definition`). Every file read is noted, so the library
module's cached result is keyed by them too. A project with more files than
``_MAX_FILES`` is not searched (silent).
"""

from __future__ import annotations

import os
from typing import Optional

from mplint.analysis.custom_layers import CustomLayers
from mplint.analysis.imported_layers import analysed, imported_definition
from mplint.analysis.models import LayerProducer, ModelOutputs
from mplint.core import reads
from mplint.rule.check import Context
from mplint.semantic.test_modules import is_test_path

#: a project past this many Python files is not searched for the uses of a class
_MAX_FILES = 2000
_MAX_BYTES = 2_000_000


def output_use(ctx: Context, class_name: str) -> Optional[str]:
    """A file of the project (as shown from the root; a program first, then a test)
    whose model has an instance of the checked module's class ``class_name`` as its
    output layer; None when none is found."""
    files = ctx.facts.project_files
    if len(files) > _MAX_FILES:
        return None
    own = os.path.abspath(ctx.path)
    word = class_name.encode()
    found = []
    for path in files:
        if path == own:
            continue
        raw = reads.read(path, _MAX_BYTES)
        if raw is None or word not in raw[0] or b"import" not in raw[0]:
            continue
        if _outputs_class(path, own, class_name, ctx.facts.project_root):
            found.append(path)
    if not found:
        return None
    best = min(found, key=lambda path: (is_test_path(path), path))
    root = ctx.facts.project_root
    return os.path.relpath(best, root).replace(os.sep, "/") if root else os.path.basename(best)


def _outputs_class(path: str, own: str, class_name: str, root: Optional[str]) -> bool:
    """Whether a model of the file at ``path`` ends in a layer made by calling the class
    ``class_name`` that the module ``own`` defines."""
    outputs = analysed(path, ModelOutputs, root, (CustomLayers,))
    if not isinstance(outputs, ModelOutputs):
        return False
    for output in outputs.outputs():
        producer = output.producer
        if not isinstance(producer, LayerProducer):
            continue
        defined = imported_definition(outputs.ctx, producer.constructor.func)
        if defined is not None and os.path.abspath(defined[0]) == own and defined[1] == class_name:
            return True
    return False
