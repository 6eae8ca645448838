"""No input may lose a run (issue 19): each case below once crashed, hung or lost
findings for every file, or was read differently by ``check`` and ``fix``. Each bad
file must cost one line naming it, and the other files are still checked."""

from __future__ import annotations

import json
import os
import textwrap
import threading
import time

import pytest

import mplint.core.source as source_module
from helpers import BAD, GOOD, fired, fix, lint, outcome, run_cli, run_process, syntax_error_line, write_files
from mplint.core.python_syntax import C_RECURSION_CAPPED
from mplint.core.source import MAX_NESTING, SourceError, decode, parse, write_atomic

POLICY = 'import tensorflow as tf\ntf.keras.mixed_precision.set_global_policy("mixed_float16")\n'
SOFTMAX = 'model = tf.keras.Sequential([tf.keras.layers.Dense(10, activation="softmax")])\n'
FIXED = SOFTMAX.replace('"softmax"', '"softmax", dtype="float32"')


def _errors(result):
    assert "Traceback" not in result.stderr
    return result.stderr.strip().splitlines()


# -- 1. files that would crash libcst's native parser ---------------------------------
CRASHING = {
    # CPython keeps an and/or chain flat and accepts it; libcst nests it and dies (exit 139)
    "and_chain": lambda: "x = " + " and ".join(["a"] * 10000) + "\n",
    "or_chain_on_short_lines": lambda: "x = (a\n" + "    or a\n" * 9999 + ")\n",
    # other chains on short lines: no long line, no deep brackets for the cheap test
    "attribute_chain_on_short_lines": lambda: "x = (a\n" + "    .b\n" * 9999 + ")\n",
    "not_chain_on_short_lines": lambda: "x = (\n" + "    not\n" * 40000 + "    a)\n",
}


@pytest.mark.parametrize("name", sorted(CRASHING))
def test_a_file_that_would_crash_libcst_is_one_error_line(tmp_path, name):
    write_files(tmp_path, {f"{name}.py": POLICY + CRASHING[name](), "model.py": POLICY + SOFTMAX})
    result = run_process("check", "--no-cache", ".", cwd=tmp_path)  # a crash would kill pytest itself
    assert outcome(result) == (2, [("model.py", 3, "MP101")]), result.stderr[-500:]
    [line] = _errors(result)
    assert line.startswith(f"mplint: error: {name}.py: too deeply nested to parse"), line


def test_the_depth_guard_counts_a_flat_and_chain_as_libcst_nests_it():
    # Python 3.9-3.13 all accept this; it is the guard's own measure that refuses it.
    text = POLICY + "x = " + " and ".join(["a"] * (MAX_NESTING + 2)) + "\n"
    with pytest.raises(SourceError, match=r"too deeply nested to parse \(line 3: over the 3,000"):
        parse(decode("chain.py", text.encode()))
    below = POLICY + "x = " + " and ".join(["a"] * (MAX_NESTING - 10)) + "\n"
    parse(decode("chain.py", below.encode()))


def test_a_big_ordinary_file_is_still_parsed():
    # Thousands of operators and calls in separate statements nest nothing deep.
    text = POLICY + "".join(f"x{i} = f(a + b * c - d).g[0] and not e\n" for i in range(3000))
    assert source_module._maybe_too_deep(text)  # the cheap test asks CPython first ...
    parse(decode("big.py", text.encode()))  # ... which finds nothing deep


# -- 2. a RecursionError after the walk must not escape or lose the file's findings -----
def _elif_chain(branches):
    body = ["def f(a):", "    if a == -1:", "        pass"]
    body += [f"    elif a == {i}:\n        pass" for i in range(branches)]
    body += ["    else:", "        " + SOFTMAX.strip()]
    return POLICY + "\n".join(body) + "\n"


@pytest.mark.skipif(C_RECURSION_CAPPED, reason="Python 3.12 caps recursion in C code: the next test")
def test_a_long_elif_chain_keeps_its_findings_in_check_and_fix(tmp_path):
    write_files(tmp_path, {"chain.py": _elif_chain(2000), "model.py": POLICY + SOFTMAX})
    line = 3 + 3 + 2 * 2000 + 1
    checked = run_cli("check", "--no-cache", ".", cwd=tmp_path)
    assert outcome(checked) == (1, [("chain.py", line, "MP101"), ("model.py", 3, "MP101")])
    assert _errors(checked) == []
    fixed = run_cli("fix", "--no-cache", ".", cwd=tmp_path)
    assert outcome(fixed) == (0, []) and _errors(fixed) == []
    assert (tmp_path / "chain.py").read_text().splitlines()[line - 1] == "        " + FIXED.strip()


@pytest.mark.skipif(not C_RECURSION_CAPPED, reason="only Python 3.12 caps recursion in C code")
def test_on_python_3_12_a_long_elif_chain_is_one_line_that_names_the_versions_that_check_it(tmp_path):
    # libcst's code generation recurses through C once per branch, and 3.12 stops C
    # recursion at about 1,500 levels, which no setting raises: the file is not checked,
    # the other files are, and the line says which Python would check it.
    chain = _elif_chain(2000)
    write_files(tmp_path, {"chain.py": chain, "model.py": POLICY + SOFTMAX})
    message = ("mplint: error: chain.py: too deeply nested to check on Python 3.12, which limits recursion "
               "in C code (Python 3.11 or 3.13 checks it)")
    checked = run_cli("check", "--no-cache", ".", cwd=tmp_path)
    assert outcome(checked) == (2, [("model.py", 3, "MP101")])
    assert _errors(checked) == [message]
    fixed = run_cli("fix", "--no-cache", ".", cwd=tmp_path)
    assert _errors(fixed) == [message]
    assert (tmp_path / "chain.py").read_text() == chain
    assert (tmp_path / "model.py").read_text() == POLICY + FIXED


def test_an_elif_chain_of_600_branches_keeps_its_findings_on_every_python(tmp_path):
    write_files(tmp_path, {"chain.py": _elif_chain(600)})
    assert outcome(run_cli("check", "--no-cache", ".", cwd=tmp_path)) == (1, [("chain.py", 3 + 3 + 2 * 600 + 1, "MP101")])


def test_an_exception_carrying_a_deep_node_is_described_without_formatting_it():
    import libcst as cst

    from mplint.core.results import describe

    deep = cst.parse_expression("(" * 150 + "a" + ")" * 150)
    for _ in range(60):
        deep = cst.List([cst.Element(deep)])
    assert describe(KeyError(deep)) == "KeyError: List"


# -- 3. a cache of valid JSON with the wrong shape is a miss, and is rewritten ----------
@pytest.mark.parametrize("content", [
    "NUMBER",  # a number where an entry should be
    '{"a": 1}',
    "[" * 100000 + "]" * 100000,  # deeper than the JSON decoder recurses
    "ENTRY_OF_STRINGS",  # an entry whose findings are not findings
], ids=["number", "other keys", "nested 100000 deep", "findings of the wrong types"])
def test_a_cache_of_the_wrong_shape_is_a_miss_and_is_rewritten(tmp_path, content):
    write_files(tmp_path, {"model.py": POLICY + SOFTMAX})
    first = run_cli("check", ".", cwd=tmp_path)
    assert outcome(first) == (1, [("model.py", 3, "MP101")])
    [results] = list((tmp_path / ".mplint_cache").rglob("results-*.json"))
    [index] = list((tmp_path / ".mplint_cache").rglob("index.json"))
    key = os.path.abspath(tmp_path / "model.py")
    if content == "NUMBER":
        content = json.dumps({key: 7})
    elif content == "ENTRY_OF_STRINGS":
        entry = json.loads(results.read_text())[key]
        entry[1] = [[{"line": "3", "rule": 1}], [["x", "error"]]]
        content = json.dumps({key: entry})
    for broken in (results, index):
        broken.write_text(content)
        again = run_cli("check", ".", cwd=tmp_path)
        assert outcome(again) == (1, [("model.py", 3, "MP101")]) and _errors(again) == []
        assert key in json.loads(broken.read_text())  # rewritten, with the real entry


# -- 4. a FIFO must never be read: every run would hang ---------------------------------
@pytest.mark.parametrize("fifo", ["pyproject.toml", "setup.cfg", "requirements.txt", ".gitignore",
                                  "sub/.gitignore", "CACHE_INDEX", "CACHE_RESULTS"])
@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs are POSIX")
def test_a_fifo_named_like_a_file_mplint_reads_never_hangs(tmp_path, fifo):
    write_files(tmp_path, {"model.py": POLICY + SOFTMAX, "sub/x.py": POLICY + SOFTMAX, ".git/HEAD": ""})
    assert outcome(run_cli("check", ".", cwd=tmp_path))[0] == 1  # fills the cache
    if fifo.startswith("CACHE_"):
        pattern = "index.json" if fifo == "CACHE_INDEX" else "results-*.json"
        target = next((tmp_path / ".mplint_cache").rglob(pattern))
        target.unlink()
    else:
        target = tmp_path / fifo
    os.mkfifo(target)
    done = {}
    for command in ("check", "fix"):
        thread = threading.Thread(target=lambda c=command: done.setdefault(c, run_process(c, ".", cwd=tmp_path)))
        thread.start()
        thread.join(120)
        assert command in done, f"mplint {command} hung on a FIFO named {fifo}"
    assert outcome(done["check"]) == (1, [("model.py", 3, "MP101"), ("sub/x.py", 3, "MP101")])
    assert "Traceback" not in done["check"].stderr


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs are POSIX")
def test_a_fifo_named_as_the_config_is_one_error_line(tmp_path):
    write_files(tmp_path, {"model.py": POLICY + SOFTMAX})
    os.mkfifo(tmp_path / "conf.toml")
    start = time.monotonic()
    result = run_cli("check", "--config", "conf.toml", ".", cwd=tmp_path)
    assert time.monotonic() - start < 60
    assert result.returncode == 2
    [line] = _errors(result)
    assert line.startswith("mplint: error: conf.toml: ")


# -- 8. a deep expression must not block every fix in its file --------------------------
@pytest.mark.parametrize("deep", [
    "x = " + " + ".join(["a"] * 400) + "\n",
    "y = " + "[" * 140 + "]" * 140 + "\n",
], ids=["400-term sum", "lists 140 deep"])
def test_a_deep_expression_does_not_block_the_fixes_of_its_file(tmp_path, deep):
    write_files(tmp_path, {"deep.py": POLICY + SOFTMAX + deep})
    result = run_cli("fix", "--no-cache", ".", cwd=tmp_path)
    assert outcome(result) == (0, []) and _errors(result) == []
    assert (tmp_path / "deep.py").read_text() == POLICY + FIXED + deep


# -- 10. lone-CR line endings survive a fix ----------------------------------------------
@pytest.mark.parametrize("tail", ["", "# a comment at the end\r", "\r"])
def test_a_lone_cr_file_keeps_its_final_line_ending(tmp_path, tail):
    text = (POLICY + SOFTMAX).replace("\n", "\r") + tail
    write_files(tmp_path, {"cr.py": text})
    result = run_cli("fix", "--no-cache", "cr.py", cwd=tmp_path)
    assert outcome(result) == (0, [])
    assert (tmp_path / "cr.py").read_bytes() == ((POLICY + FIXED).replace("\n", "\r") + tail).encode()


# -- 14. binary and UTF-16 files: the README's error line, in check and fix alike ---------
@pytest.mark.parametrize("raw, message", [
    ((POLICY + SOFTMAX).encode("utf-16"), "is encoded as UTF-16, which Python cannot read as source"),
    ((POLICY + SOFTMAX).encode("utf-32"), "is encoded as UTF-32, which Python cannot read as source"),
    (bytes(range(256)) * 4, "contains null bytes (binary file?)"),
], ids=["utf-16", "utf-32", "binary"])
def test_binary_and_utf16_files_are_errors_in_check_and_fix(tmp_path, raw, message):
    write_files(tmp_path, {"odd.py": raw, "model.py": GOOD})
    for command in ("check", "fix"):
        result = run_cli(command, "--no-cache", ".", cwd=tmp_path)
        assert outcome(result) == (2, [])
        [line] = _errors(result)
        assert line.startswith(f"mplint: error: odd.py: {message}"), (command, line)
    assert (tmp_path / "odd.py").read_bytes() == raw


# -- 15. a broken symbolic link is an error however it is found ----------------------------
def test_a_broken_link_is_an_error_walked_or_named(tmp_path):
    write_files(tmp_path, {"model.py": BAD})
    os.symlink("missing.py", tmp_path / "dangling.py")
    (tmp_path / "pkg").mkdir()
    os.symlink("../nowhere.py", tmp_path / "pkg" / "gone.py")
    os.symlink("nowhere.txt", tmp_path / "notes.txt")  # not a source file: not looked at
    walked = run_cli("check", ".", cwd=tmp_path)
    assert outcome(walked) == (2, [("model.py", 4, "MP101")])
    assert _errors(walked) == ["mplint: error: dangling.py: is a broken symbolic link",
                               "mplint: error: pkg/gone.py: is a broken symbolic link"]
    named = run_cli("check", "dangling.py", "model.py", cwd=tmp_path)
    assert _errors(named) == ["mplint: error: dangling.py: is a broken symbolic link"]


# -- 16. syntax libcst accepts but Python rejects ------------------------------------------
@pytest.mark.parametrize("code, message", [
    ("try:\n    pass\nexcept ValueError, e:\n    pass\n",
     "syntax error at line 5, column 8: multiple exception types must be parenthesized"),
    ("try:\n    pass\nexcept (ValueError, KeyError), e:\n    pass\n",
     "syntax error at line 5, column 8: multiple exception types must be parenthesized"),
    ("x = {**a for a in b}\n", "syntax error at line 3, column 6: dict unpacking cannot be used in dict comprehension"),
])
@pytest.mark.parametrize("file_has_a_finding", [True, False])
def test_python2_except_syntax_is_a_syntax_error(tmp_path, code, message, file_has_a_finding):
    # With a finding the file is parsed by libcst; without one only syntax-checked.
    text = POLICY + code + (SOFTMAX if file_has_a_finding else "")
    if not file_has_a_finding:
        text = text.replace('set_global_policy("mixed_float16")', 'set_global_policy("float32")')
    write_files(tmp_path, {"py2.py": text, "model.py": GOOD})
    for command in ("check", "fix"):
        result = run_cli(command, "--no-cache", ".", cwd=tmp_path)
        assert outcome(result) == (1, []) and _errors(result) == []
        assert syntax_error_line("py2.py", message) in result.stdout.splitlines()


def test_parenthesized_exception_types_are_not_a_syntax_error():
    ok = POLICY + "try:\n    pass\nexcept (ValueError, KeyError) as e:\n    pass\nexcept f(a, b):\n    pass\n"
    parse(decode("ok.py", ok.encode()))


# -- 17. the cache notices a same-size edit whose mtime was put back -----------------------
def test_a_same_size_edit_with_its_mtime_restored_is_not_served_stale(tmp_path):
    write_files(tmp_path, {"model.py": POLICY + SOFTMAX})
    model = tmp_path / "model.py"
    past = time.time() - 3600
    os.utime(model, (past, past))  # old enough to be trusted by its stamp
    assert outcome(run_cli("check", ".", cwd=tmp_path)) == (1, [("model.py", 3, "MP101")])
    # The same number of bytes, and `touch -r` / `cp -p` put the mtime back.
    edited = (POLICY + SOFTMAX).replace('"softmax"', '"sigmoid"')
    assert len(edited) == len(POLICY + SOFTMAX)
    stat_before = model.stat()
    model.write_text(edited)
    os.utime(model, ns=(stat_before.st_atime_ns, stat_before.st_mtime_ns))
    assert model.stat().st_mtime_ns == stat_before.st_mtime_ns and model.stat().st_size == stat_before.st_size
    assert outcome(run_cli("check", ".", cwd=tmp_path)) == (1, [("model.py", 3, "MP102")])


# -- 18. an edit saved while the fixed file is being written is not overwritten -----------
def test_an_edit_during_the_write_is_not_overwritten(tmp_path, monkeypatch):
    target = tmp_path / "model.py"
    target.write_bytes(b"old\n")
    real_fsync = os.fsync

    def edit_while_syncing(fd):  # another program saves after mplint's first comparison
        with open(target, "ab") as handle:
            handle.write(b"# the user's edit\n")
        real_fsync(fd)

    monkeypatch.setattr(source_module.os, "fsync", edit_while_syncing)
    with pytest.raises(SourceError, match="changed on disk while mplint was fixing it"):
        write_atomic(str(target), b"new\n", expected=b"old\n")
    assert target.read_bytes() == b"old\n# the user's edit\n"
    assert [p.name for p in tmp_path.iterdir()] == ["model.py"]  # no temporary file left


# -- 5. MP102's safe fix never targets a model used as a block ------------------------------
STEM = '''\
import keras
from keras import layers

keras.mixed_precision.set_global_policy("mixed_float16")


def convnext(inputs):
    stem = keras.Sequential([
        layers.Conv2D(96, 4, strides=4),
        layers.LayerNormalization(epsilon=1e-6),
    ])
    blocks = []
    blocks.append(stem)
    for i in range(3):
        down = keras.Sequential([layers.LayerNormalization(epsilon=1e-6), layers.Conv2D(192, 2)])
        blocks.append(down)
    x = inputs
    for i in range(4):
        x = blocks[i](x)
    return x
'''


def test_a_model_appended_to_a_list_of_blocks_is_no_output():
    assert fired(STEM, "MP101", "MP102") == []


def test_mp102_fix_is_safe_only_for_a_model_trained_or_run_as_a_whole():
    head = POLICY + 'inputs = tf.keras.Input(shape=(13,))\nprice = tf.keras.layers.Dense(1)(inputs)\n'
    block = head + "pooler = tf.keras.Model(inputs, price)\n"  # may be a block of a bigger model
    [finding] = lint(block, "MP102")
    assert (finding.line, finding.fix) == (4, "unsafe")
    for whole in ("pooler.compile('adam', 'mse')\n", "pooler.fit(x, y)\n", "y = pooler.predict(x)\n"):
        [finding] = lint(block + whole, "MP102")
        assert (finding.line, finding.fix) == (4, "safe"), whole
    built = POLICY + "def build():\n" + textwrap.indent(
        'inputs = tf.keras.Input(shape=(13,))\nmodel = tf.keras.Model(inputs, tf.keras.layers.Dense(1)(inputs))\n'
        'return model\n', "    ") + "model = build()\nmodel.compile('adam', 'mse')\n"
    [finding] = lint(built, "MP102")
    assert (finding.line, finding.fix) == (5, "safe")


def test_a_model_class_another_file_may_use_as_a_layer_gets_no_fix():
    code = POLICY + textwrap.dedent('''\
        class MLPEmbedder(tf.keras.Model):
            def __init__(self, hidden):
                super().__init__()
                self.inner = tf.keras.layers.Dense(hidden, activation="silu")
                self.out = tf.keras.layers.Dense(hidden)

            def call(self, x):
                return self.out(self.inner(x))
    ''')
    [finding] = lint(code, "MP102")
    # a block of another module's model: a float32 layer inside it is no fix to merge
    assert (finding.line, finding.fix) == (7, None)
    assert fix(code, "MP102") == textwrap.dedent(code)


# -- 7. fixes labelled safe that changed behaviour, or were incomplete -----------------------
def test_mp402_policy_with_loss_scaling_off_has_no_fix_and_says_why():
    code = POLICY + 'p = tf.keras.mixed_precision.experimental.Policy("mixed_float16", loss_scale=None)\n'
    [finding] = lint(code, "MP402")
    assert finding.fix is None  # dropping it would switch loss scaling on
    assert "`loss_scale=None` turned loss scaling off" in finding.message
    assert "LossScaleOptimizer" in finding.message
    # under another policy compile() never scales: dropping the argument changes nothing
    [other] = lint(code.replace('Policy("mixed_float16"', 'Policy("mixed_bfloat16"'), "MP402")
    assert other.fix == "safe"


def test_mp404_fix_restores_the_policy_where_floatx_was_restored():
    code = textwrap.dedent('''\
        import tensorflow as tf


        def train():
            old = tf.keras.backend.floatx()
            tf.keras.backend.set_floatx("float16")
            try:
                model = tf.keras.Sequential([tf.keras.layers.Dense(8)])
            finally:
                tf.keras.backend.set_floatx(old)
    ''')
    assert fix(code, "MP404") == code.replace(
        'tf.keras.backend.set_floatx("float16")', 'tf.keras.mixed_precision.set_global_policy("mixed_float16")'
    ).replace("tf.keras.backend.set_floatx(old)", "tf.keras.mixed_precision.set_global_policy(old)")


@pytest.mark.parametrize("wrapper, inner, rule", [
    ("TimeDistributed", 'layers.Dense(4)', "MP102"),
    ("TimeDistributed", 'layers.Dense(4, activation="softmax")', "MP101"),
    ("Bidirectional", "layers.LSTM(8)", "MP102"),
])
def test_a_wrapper_output_is_fixed_on_the_layer_it_wraps(wrapper, inner, rule):
    code = POLICY + textwrap.dedent(f'''\
        from tensorflow.keras import layers

        inputs = tf.keras.Input(shape=(10, 8))
        model = tf.keras.Model(inputs, layers.{wrapper}({inner})(inputs))
        model.compile("adam", "mse")
    ''')
    assert fired(code, "MP101", "MP102") == [(6, rule)]
    fixed_inner = inner[:-1] + ', dtype="float32")'
    assert fix(code, "MP101", "MP102") == textwrap.dedent(code).replace(inner, fixed_inner)
