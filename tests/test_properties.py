"""Fix safety as properties: generated Keras model and training code, with random
comments, blank lines, nesting, line endings and encodings.

For every generated file, ``fix`` (unsafe fixes included or not) must produce
bytes that decode in the file's own encoding and parse, must settle in one run,
must keep every comment, and must leave a file without findings byte-identical.
"""

import io
import tokenize
from collections import Counter

import libcst as cst
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mplint.api import make_linter
from mplint.core.source_kinds import load_source
from mplint.core.source import decode, parse

LINTER = make_linter()

# import line, the prefix that reaches keras
IMPORTS = [
    ("import tensorflow as tf", "tf.keras"),
    ("from tensorflow import keras", "keras"),
    ("import keras", "keras"),
    ("import tf_keras as keras", "keras"),
    ("import tensorflow.keras as K", "K"),
]
POLICIES = [None, "mixed_float16", "mixed_bfloat16", "float32"]
WRAPPERS = [
    ["def build_model():"],
    ["class Trainer:", "    def build(self):"],
    ["if __name__ == '__main__':"],
    ["with strategy.scope():"],
    ["for _ in range(1):"],
    ["try:"],
]
COMMENT_TEXT = st.sampled_from([
    "# comment", "# TODO: tune", "#no space", "# noqa: E501", "# type: ignore",
    "# caf\u00e9 na\u00efve", "# dtype='float32' stays?", "# expect nothing", "#", "# x # y",
])


def _final_layer(k, draw):
    kind = draw(st.sampled_from(["dense_softmax", "dense_softmax_f32", "activation", "dense_plain",
                                 "dense_softmax_f16", "activation_f32"]))
    units = draw(st.integers(1, 1000))
    return {
        "dense_softmax": f'{k}.layers.Dense({units}, activation="softmax")',
        "dense_softmax_f32": f'{k}.layers.Dense({units}, activation="softmax", dtype="float32")',
        "dense_softmax_f16": f"{k}.layers.Dense({units}, activation='softmax', dtype='float16')",
        "activation": f'{k}.layers.Activation("softmax")',
        "activation_f32": f'{k}.layers.Activation("softmax", dtype="float32")',
        "dense_plain": f"{k}.layers.Dense({units})",
    }[kind]


@st.composite
def model_lines(draw, k):
    """Model building and training code as (relative indent, text, may_end_with_comment)."""
    hidden = [f'{k}.layers.Dense({draw(st.integers(1, 512))}, activation="relu")'
              for _ in range(draw(st.integers(0, 3)))]
    final = _final_layer(k, draw)
    style = draw(st.sampled_from(["sequential_list", "sequential_add", "functional"]))
    out = []
    if style == "sequential_list":
        out.append((0, f"model = {k}.Sequential([", True))
        for layer in hidden + [final]:
            out.append((1, layer + ",", True))
        out.append((0, "])", True))
    elif style == "sequential_add":
        out.append((0, f"model = {k}.Sequential()", True))
        for layer in hidden + [final]:
            out.append((0, f"model.add({layer})", True))
    else:
        out.append((0, f"inputs = {k}.Input(shape=({draw(st.integers(1, 784))},))", True))
        previous = "inputs"
        for i, layer in enumerate(hidden):
            out.append((0, f"x{i} = {layer}({previous})", True))
            previous = f"x{i}"
        out.append((0, f"outputs = {final}({previous})", True))
        out.append((0, f"model = {k}.Model(inputs, outputs)", True))
    training = draw(st.sampled_from(["fit", "loop", "none"]))
    if training == "fit":
        out.append((0, 'model.compile(optimizer="adam", loss="sparse_categorical_crossentropy")', True))
        out.append((0, "model.fit(x_train, y_train, epochs=1, batch_size=64)", True))
    elif training == "loop":
        out += [
            (0, f"optimizer = {k}.optimizers.Adam(1e-3)", True),
            (0, "for x, y in dataset:", True),
            (1, "with tf.GradientTape() as tape:", True),
            (2, "loss = loss_fn(y, model(x, training=True))", True),
            (1, "grads = tape.gradient(loss, model.trainable_variables)", True),
            (1, "optimizer.apply_gradients(zip(grads, model.trainable_variables))", True),
        ]
    out.append((0, 'print("# not a comment, a string")', True))
    return out


@st.composite
def programs(draw):
    import_line, k = draw(st.sampled_from(IMPORTS))
    lines = [(0, import_line, True)]
    if k == "keras" and "tensorflow" not in import_line and draw(st.booleans()):
        lines.append((0, "import tensorflow as tf", True))
    if "import tensorflow as tf" not in import_line and not any("tensorflow as tf" in t for _, t, _ in lines):
        lines.append((0, "import tensorflow as tf", True))
    policy = draw(st.sampled_from(POLICIES))
    if policy:
        lines.append((0, f'{k}.mixed_precision.set_global_policy("{policy}")', True))
    body = draw(model_lines(k))
    wrappers = draw(st.lists(st.sampled_from(WRAPPERS), max_size=3))
    depth = 0
    for wrapper in wrappers:
        for header in wrapper:
            lines.append((depth, header.strip(), True))
            depth += 1
    lines += [(depth + indent, text, ok) for indent, text, ok in body]
    for wrapper in reversed(wrappers):
        depth -= len(wrapper)
        if wrapper == ["try:"]:
            lines.append((depth, "except Exception:  # keep going", True))
            lines.append((depth + 1, "raise", True))

    # decorate: trailing comments, own-line comments, blank lines
    text_lines = []
    indent_unit = draw(st.sampled_from(["    ", "  ", "\t"]))
    for number, (indent, code, ok) in enumerate(lines):
        pad = indent_unit * indent
        if number and draw(st.integers(0, 4)) == 0:
            text_lines.append(pad + draw(COMMENT_TEXT))
        if number and draw(st.integers(0, 5)) == 0:
            text_lines.append("")
        trailing = f"  {draw(COMMENT_TEXT)}" if ok and draw(st.integers(0, 3)) == 0 else ""
        text_lines.append(pad + code + trailing)
    if draw(st.booleans()):
        text_lines.append("# last line comment")
    text = "\n".join(text_lines) + ("\n" if draw(st.integers(0, 9)) else "")

    encoding = draw(st.sampled_from(["utf-8", "utf-8-bom", "latin-1-cookie"]))
    newline = draw(st.sampled_from(["\n", "\r\n"]))
    if encoding == "latin-1-cookie":
        text = "# -*- coding: latin-1 -*-\n" + text
    text = text.replace("\n", newline)
    if encoding == "latin-1-cookie":
        raw = text.encode("latin-1")
    else:
        raw = text.encode("utf-8")
        if encoding == "utf-8-bom":
            raw = b"\xef\xbb\xbf" + raw
    return raw


def _comments(text):
    return Counter(t.string for t in tokenize.generate_tokens(io.StringIO(text).readline)
                   if t.type == tokenize.COMMENT)


def _fix(raw, unsafe):
    source = decode("generated.py", raw)
    return source, LINTER.fix(load_source("generated.py", raw), unsafe)


@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])  # examples: see conftest
@given(raw=programs(), unsafe=st.booleans())
def test_fix_parses_settles_keeps_comments_and_bytes(raw, unsafe):
    source = decode("generated.py", raw)
    findings = LINTER.analyze(source, parse(source)).findings
    _, outcome = _fix(raw, unsafe)
    assert not [e for e in outcome.errors if e.kind == "error"], outcome.errors
    if not findings:
        assert outcome.fixed is None  # byte-identical: nothing was rewritten
        return
    fixed = outcome.fixed if outcome.fixed is not None else raw
    # decodes in its own encoding, with its BOM and cookie, and parses (libcst and CPython)
    again = decode("generated.py", fixed)
    assert (again.encoding, again.bom) == (source.encoding, source.bom)
    cst.parse_module(again.text)
    compile(again.text, "generated.py", "exec", dont_inherit=True)
    # line endings kept
    if b"\r\n" in raw:
        assert fixed.count(b"\n") == fixed.count(b"\r\n")
    # every comment survives
    before, after = _comments(source.text), _comments(again.text)
    assert not (before - after), before - after
    # settles: a second run changes nothing
    _, second = _fix(fixed, unsafe)
    assert second.fixed is None or second.fixed == fixed
    # nothing the fixer was allowed to fix is left
    allowed = ("safe", "unsafe") if unsafe else ("safe",)
    assert not [f for f in outcome.remaining if f.fix in allowed]


@settings(deadline=None)
@given(raw=programs())
def test_generated_code_is_valid_python(raw):
    """The generator itself must produce real code, or the properties prove nothing."""
    source = decode("generated.py", raw)
    compile(source.text, "generated.py", "exec", dont_inherit=True)
