"""Input casts in a helper of another module: ``ds.map(lambda x, y: (normalize(x), y))``
with ``from preprocessing import normalize``, whose ``normalize`` casts the images to
float16, casts the pipeline's data as if the cast were written in the mapped function
(MP503). The helper's own module cannot tell that it runs in a pipeline, so the call is
judged where the mapping is.

Only a cast among the helper's own statements counts (``tf.cast``, ``convert_image_dtype``,
``keras.ops.cast`` to float16, spelled as that module's imports name it); bfloat16, which
TPU pipelines cast to on purpose, and anything that module's imports do not name, are
not followed.
"""

from __future__ import annotations

from typing import Optional, Tuple

import libcst as cst

from mplint.analysis.imported_layers import imported_definition, parsed_module, top_level_imports
from mplint.core.find_nodes import find_all
from mplint.core.positions import positions_of
from mplint.rule.check import Context
from mplint.semantic.call_args import positional_or_keyword
from mplint.semantic.names import canonical, dotted_name
from mplint.semantic.vocabulary import CASTS, DTYPE_NAMES


def imported_input_cast(ctx: Context, func: cst.BaseExpression) -> Optional[Tuple[str, int]]:
    """(file, line) of a float16 cast in the function of another project module that
    ``func`` names, or None."""
    found = imported_definition(ctx, func)
    parsed = None if found is None else parsed_module(found[0])
    if found is None or parsed is None:
        return None
    module = parsed[1]
    function = next((s for s in module.body if isinstance(s, cst.FunctionDef) and s.name.value == found[1]), None)
    if function is None:
        return None
    imports = top_level_imports(module)

    def resolved(expr: cst.BaseExpression) -> Optional[str]:
        written = dotted_name(expr)
        head, _, rest = (written or "").partition(".")
        target = imports.get(head)
        return None if target is None or target.startswith(".") else canonical(target + ("." + rest if rest else ""))

    for call in find_all(function, cst.Call):
        if resolved(call.func) not in CASTS:
            continue
        dtype = positional_or_keyword(call, 1, "dtype")
        name = dtype.evaluated_value if isinstance(dtype, cst.SimpleString) else \
            DTYPE_NAMES.get(resolved(dtype) or "") if dtype is not None else None
        if name == "float16":
            position = positions_of(module, module.code, [call]).get(call)
            return None if position is None else (found[0], position.start.line)
    return None
