"""What a pre-commit run (one file named, no cache) computes of the rest of the project,
and that each shortcut it takes leaves the named file's findings those of a whole-tree
run: setters asked about are indexed in one batch, a rewrite file that cannot pair
with the named one is not indexed at once, each module is summarised once, the index's
workers inherit its imports, and the byte readings (import words, registry writers)
equal the slower readings they replace."""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Dict, List

import pytest

import mplint.run.project as project_module
from helpers import ROOT, outcome, run_cli, write_files
from mplint.run.program import import_words
from mplint.api import make_linter
from mplint.run.project import _ModuleWords, build_project, governs, index_source
from mplint.run.summaries import _assignments, summarize


def _runtime_setter(name: str) -> str:
    """A script that picks the policy at run time and builds the checked model."""
    return textwrap.dedent(f'''\
        """Trains with a policy chosen on the command line ({name})."""
        import sys

        import tensorflow as tf

        from pkg.model import build


        def main():
            tf.keras.mixed_precision.set_global_policy(sys.argv[1])
            return build()
        ''')


MODEL = textwrap.dedent('''\
    import tensorflow as tf


    def build():
        return tf.keras.Sequential([tf.keras.layers.Dense(10, activation="softmax")])
    ''')


def _whole_tree_findings(project: Path, named: str) -> List[tuple]:
    result = run_cli("check", "--no-cache", "--exit-zero", ".", cwd=project)
    return [f for f in outcome(result)[1] if f[0] == named]


def test_setters_the_model_asks_about_are_indexed_in_one_batch(tmp_path, monkeypatch):
    project = write_files(tmp_path, {
        "setup.py": "", "pkg/__init__.py": "", "pkg/model.py": MODEL,
        **{f"train_{n}.py": _runtime_setter(n) for n in ("a", "b", "c")},
        # set a literal policy: the index confirms it only once it reaches the model
        **{f"bench_{n}.py": "import tensorflow as tf\nfrom pkg.model import build\n"
                            f"def main():\n    tf.keras.mixed_precision.set_global_policy('{policy}')\n"
                            "    build()\n" for n, policy in (("a", "mixed_float16"), ("b", "mixed_bfloat16"))},
        "tests/bench_test.py": "import tensorflow as tf\n"
                               "def test_x():\n    tf.keras.mixed_precision.set_global_policy('mixed_float16')\n",
    })
    batches: List[List[str]] = []
    real = project_module._index

    def spy(project, todo, parses, parsed):
        batches.append(sorted(os.path.basename(key) for key, _, _ in todo))
        return real(project, todo, parses, parsed)

    monkeypatch.setattr(project_module, "_index", spy)
    result = run_cli("check", "--no-cache", "--force-exclude", "pkg/model.py", cwd=project)
    monkeypatch.undo()
    assert [b for b in batches if b] == [["train_a.py", "train_b.py", "train_c.py"], ["bench_a.py", "bench_b.py"]]
    assert outcome(result) == (1, [("pkg/model.py", 5, "MP101")]), result.stdout + result.stderr
    assert outcome(result)[1] == _whole_tree_findings(project, "pkg/model.py")


def test_each_module_is_summarised_once_in_a_run(tmp_path, monkeypatch):
    project = write_files(tmp_path, {
        "setup.py": "", "pkg/__init__.py": "", "pkg/model.py": MODEL,
        "train_a.py": _runtime_setter("a"), "train_b.py": _runtime_setter("b"),
    })
    summarised: List[str] = []
    real = project_module._summary

    def spy(key, raw, unique, cache):
        summarised.append(os.path.basename(key))
        return real(key, raw, unique, cache)

    monkeypatch.setattr(project_module, "_summary", spy)
    result = run_cli("check", "--no-cache", "--force-exclude", "pkg/model.py", cwd=project)
    assert outcome(result)[0] == 1, result.stdout + result.stderr
    assert {"train_a.py", "train_b.py"} <= set(summarised)
    assert len(summarised) == len(set(summarised)), summarised


#: import statements in a file of ``root/`` that may run ``root/pkg/sub/model.py``
#: (relative ones written in ``root/pkg/sub/other.py`` or ``root/pkg/user.py``)
IMPORT_FORMS = [
    ("main.py", "import pkg"),
    ("main.py", "import pkg.sub"),
    ("main.py", "import pkg.sub.model as m"),
    ("main.py", "from pkg import sub"),
    ("main.py", "from pkg.sub import model"),
    ("main.py", "from pkg.sub.model import build"),
    ("main.py", "from pkg.sub import (\n    other,\n    model,\n)"),
    ("main.py", "from pkg.sub import \\\n    model"),
    ("main.py", "if True: import pkg.sub.model"),
    ("main.py", "x = 1; from pkg.sub import model"),
    ("pkg/sub/other.py", "from . import model"),
    ("pkg/sub/other.py", "from .model import build"),
    ("pkg/user.py", "from .sub import model"),
    ("pkg/user.py", "from .sub.model import build"),
    ("pkg/user.py", "from . import sub"),
]


@pytest.mark.parametrize("where, statement", IMPORT_FORMS)
def test_a_rewrite_file_that_imports_a_named_file_is_paired_with_it(tmp_path, where, statement):
    """:class:`_ModuleWords` is a necessary condition of :func:`governs`, in both
    directions: whatever import pairs the two files, their bytes pair them too."""
    model = tmp_path / "pkg" / "sub" / "model.py"
    importer = tmp_path / where
    raw = (statement + "\nimport tensorflow as tf\n"
           "tf.config.optimizer.set_experimental_options({'auto_mixed_precision': True})\n").encode()
    write_files(tmp_path, {"pkg/__init__.py": "", "pkg/sub/__init__.py": "", "pkg/sub/model.py": MODEL,
                           where: raw})
    facts = index_source(str(importer), raw)
    assert facts.rewrite and governs(str(importer), facts, str(model), tmp_path)
    read: Dict[str, bytes] = {str(model): MODEL.encode(), str(importer): raw}
    assert _ModuleWords([str(model)], tmp_path, read.get).may_pair(str(importer), raw)
    # the other way round: the named file imports the one that enables the rewrite
    assert _ModuleWords([str(importer)], tmp_path, read.get).may_pair(str(model), MODEL.encode())


def test_a_rewrite_file_that_names_no_module_of_the_named_file_is_not_indexed_at_once(tmp_path, monkeypatch):
    project = write_files(tmp_path, {
        "setup.py": "", "pkg/__init__.py": "", "pkg/model.py": MODEL,
        "train.py": _runtime_setter("train"),
        # another program of the repository, which imports nothing of pkg
        "tools/convert.py": "import tensorflow as tf\n"
                            "opt = tf.train.experimental.enable_mixed_precision_graph_rewrite(tf.keras.optimizers.SGD())\n",
        # one that does: its rewrite is the model's
        "legacy.py": "import tensorflow as tf\nfrom pkg.model import build\n"
                     "opt = tf.train.experimental.enable_mixed_precision_graph_rewrite(tf.keras.optimizers.SGD())\n"
                     "build()\n",
    })
    model = str(project / "pkg" / "model.py")
    settings = make_linter().settings
    parsed: List[str] = []
    real = project_module._index

    def spy(facts, todo, parses, parsed_modules):  # the workers' parses, as the parent hands them out
        parsed.extend(os.path.basename(key) for key, _, _ in todo)
        return real(facts, todo, parses, parsed_modules)

    monkeypatch.setattr(project_module, "_index", spy)
    named = build_project([model], settings, extra=[model], contents={}, budget=30.0, jobs=1)
    monkeypatch.undo()
    assert "convert.py" not in parsed and "legacy.py" in parsed
    whole = build_project([str(project)], settings)
    assert [key for key, _ in named.rewriting(model)] == [key for key, _ in whole.rewriting(model)] \
        == [str(project / "legacy.py")]
    result = run_cli("check", "--no-cache", "--force-exclude", "pkg/model.py", cwd=project)
    assert outcome(result)[1] == _whole_tree_findings(project, "pkg/model.py") != []


def test_the_index_workers_inherit_libcst_from_the_process_that_forks_them():
    """Each worker would otherwise import libcst and the module facts again for every
    file the program model asks about (more CPU than the parse itself)."""
    script = textwrap.dedent('''\
        import sys
        import mplint.run.project as P
        assert "libcst" not in sys.modules
        P.index_source = lambda path, raw, parsed=None, project=None: P.FileFacts(
            policies=(str("libcst" in sys.modules),))
        found = P._index(P.ProjectFacts(), [("a", "a.py", b"x = 1\\n")], P._Parses(budget=30.0, jobs=1), None)
        print(found["a"].policies[0])
        ''')
    run = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "True"


#: the former reading of import statements: every line tried by a multi-line search
_EVERY_LINE = re.compile(rb"^[ \t]*(?:from|import)[ \t][^\n(]*(?:\([^)]*\))?[^\n]*", re.M)


def _words_by_every_line(raw: bytes) -> set:
    return {word.decode("ascii") for statement in _EVERY_LINE.findall(raw)
            for word in re.findall(rb"\w+", statement) if word.isascii()}


@pytest.mark.parametrize("raw", [
    b"",
    b"import os",
    b"from a import (b,\n    c)\nimport d\n",
    b'"""\nfrom the docs (see import\nnotes) of x\n"""\nimport real\n',
    b"x = 1  # import hidden\nfrom_here = 2\nimportant = 3\n",
    b"from a import (b\n  # ) import c\n  , d)\nimport e\n",
    b"\tfrom\tpkg import mod\r\nimport other\r\n",
    b"fromage import x\nimport\n",
    "from caf\xe9 import bar\nimport na\xefve, plain\n".encode(),
    b"def f():\n    from .sub import (\n        thing)\n    import deep.er.mod as m",
])
def test_import_words_are_those_a_search_of_every_line_finds(raw):
    assert import_words(raw) == _words_by_every_line(raw)


def test_import_words_agree_with_every_line_on_this_checkout():
    for path in sorted(ROOT.glob("mplint/**/*.py")) + sorted(ROOT.glob("tests/*.py")):
        raw = path.read_bytes()
        assert import_words(raw) == _words_by_every_line(raw), path


REGISTRY = textwrap.dedent('''\
    MODELS = {}
    LOSSES = {}
    OTHER = 1


    def register(name):
        def wrap(fn):
            try:
                MODELS[name] = fn
            except KeyError:
                LOSSES[name] = fn
            else:
                pass
            finally:
                pass
            return fn
        return wrap


    def nested(kind):
        for k in range(3):
            while k:
                with open("x") as f:
                    match kind:
                        case "a":
                            LOSSES[kind] = lambda: [OTHER for _ in ()]
                        case _:
                            if k:
                                pass
                            else:
                                MODELS[k], unused = 1, 2
            else:
                class Local:
                    def method(self):
                        OTHER[1] = 2
        return [x for x in ()]
    ''')


def test_registry_writers_walk_only_statement_bodies_and_find_every_assignment():
    tree = ast.parse(REGISTRY)
    for stmt in ast.walk(tree):
        if isinstance(stmt, ast.stmt):
            assert {id(n) for n in _assignments(stmt)} == \
                {id(n) for n in ast.walk(stmt) if isinstance(n, ast.Assign)}, stmt.lineno
    assert summarize(REGISTRY).writers == {"register": ["LOSSES", "MODELS"], "nested": ["LOSSES", "OTHER"]}


def _named_by_tokens(raw: bytes) -> bool:
    """The tokenizer's reading: an index word in a token that is not a comment, nor a
    string that the parser finds is a statement of its own (a docstring)."""
    import ast
    import io
    import tokenize

    try:
        statements = {(node.lineno, node.col_offset, node.end_lineno, node.end_col_offset)
                      for node in ast.walk(ast.parse(raw)) if isinstance(node, ast.Expr)
                      and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)}
    except (SyntaxError, ValueError):
        statements = set()

    def documents(token: tokenize.TokenInfo) -> bool:
        return token.type == tokenize.STRING and any(
            (line, col) <= token.start and token.end <= (end_line, end_col)
            for line, col, end_line, end_col in statements)

    try:
        return any(token.type != tokenize.COMMENT and not documents(token)
                   and any(word in token.string for word in project_module._INDEX_WORDS)
                   for token in tokenize.tokenize(io.BytesIO(raw).readline))
    except (tokenize.TokenError, SyntaxError, ValueError, UnicodeDecodeError):
        return True


@pytest.mark.parametrize("raw", [
    b"# tf.keras.mixed_precision.set_global_policy('mixed_float16')\nx = 1\n",
    b"x = 1  # set_global_policy\n",
    b"tf.keras.mixed_precision.set_global_policy('mixed_float16')\n",
    b'os.environ["TF_ENABLE_AUTO_MIXED_PRECISION"] = "1"\n',
    b'x = "#"; set_policy(p)\n',
    b'x = "#"  # set_policy(p)\n',
    b'"""\n# set_dtype_policy in a docstring line\n"""\n',
    b"def f():\n    '''#'''; enable_mixed_precision_graph_rewrite(opt)\n",
    b"# -*- coding: latin-1 -*-\n# caf\xe9\nx = 1  # auto_mixed_precision\n",
    b"x = (1,\n  # set_global_policy\n  2)\n",
    b"s = 'unterminated set_policy\n",
    b'"""Call set_global_policy("mixed_float16") before building."""\nimport keras\n',
    b'def f():\n    "set_policy" "here"\n    return 1\n',
    b'x = 1\n"mixed_float16 in a bare string"; set_policy(p)\n',
    b'POLICY = (\n    "mixed_float16"\n)\n',
    b'set_global_policy(\n    "mixed_float16")\n',
])
def test_a_policy_word_outside_comments_is_what_the_tokenizer_finds(raw):
    assert project_module.mentions_policy_in_code("x.py", raw) == _named_by_tokens(raw)


def test_policy_words_outside_comments_agree_with_the_tokenizer_on_this_checkout():
    paths = [*ROOT.glob("mplint/**/*.py"), *ROOT.glob("tests/*.py"), *ROOT.glob("fixtures/**/*.py")]
    checked = [path for path in sorted(paths) if project_module.may_set_facts(path.read_bytes())]
    assert len(checked) > 50
    for path in checked:
        raw = path.read_bytes()
        # a library's policy switch (``Pix2Pix(size, mixed)``) is named, but no program's
        switch = project_module.only_in_library_switches(str(path), raw)
        assert project_module.mentions_policy_in_code(str(path), raw) == (_named_by_tokens(raw) and not switch), path


def _names_by_pathlib(path: str, root) -> tuple:
    """The dotted names of a module as pathlib reads its path (the former reading)."""
    try:
        rel = Path(path).relative_to(root) if root is not None else Path(Path(path).name)
    except ValueError:
        rel = Path(Path(path).name)
    parts = list(rel.with_suffix("").parts)
    if parts and parts[-1] == "__init__":
        parts.pop()
    return tuple(".".join(parts[i:]) for i in range(len(parts)) if parts[i:])


@pytest.mark.parametrize("name", ["pkg/model.py", "pkg/__init__.py", "pkg/sub/__init__", "a.b.py", ".hidden",
                                  "x.", "..py", "pkg/notebook.ipynb", "src/pkg/m.py", "deep/er/still/mod.py"])
@pytest.mark.parametrize("root", [None, "", "pkg", "src", "elsewhere", "/"])
def test_module_names_read_from_strings_are_those_pathlib_reads(tmp_path, name, root):
    from mplint.run.module_paths import _importable, _module_names

    path = str(tmp_path / name)
    base = None if root is None else Path(root) if root == "/" else tmp_path / root
    assert _module_names.__wrapped__(path, base) == _names_by_pathlib(path, base)
    folder = Path(path).parent.parent if Path(path).stem == "__init__" else Path(path).parent
    names = _module_names.__wrapped__(path, base)
    above = [folder, *folder.parents]  # the shortest name is imported from the file's own folder
    assert _importable.__wrapped__(path, base) == tuple((n, above[len(names) - 1 - i]) for i, n in enumerate(names))


def test_a_cached_one_file_run_scans_only_the_changed_file(tmp_path, monkeypatch):
    """A one-file run keeps the byte facts (re-exports, version-guarded imports, policy
    mentions) of every file it reads, the setters it leaves unparsed included, by content:
    after another file changed, the next cached run scans that file's bytes alone, and a
    version-guarded import read from the index still decides the checked module's version."""
    from test_version_routes import _project

    _project(tmp_path, "tf.__version__.startswith('2')", "tf2", "tf1")
    write_files(tmp_path, {"setup.py": "", "src/util.py": "X = 1\n", # a setter whose policy reaches no checked file: never parsed
                           "tools/amp.py": "import tensorflow as tf\n"
                                           "tf.keras.mixed_precision.set_global_policy('mixed_float16')\n"})
    named = ("check", "--select", "MP402", "src/tf2/trainer.py")
    first = run_cli(*named, cwd=tmp_path)
    assert "bin/exec.py" in first.stdout  # the guard in bin/exec.py decided its version
    (tmp_path / "src" / "util.py").write_text("X = 2\n")
    scanned: List[bytes] = []
    real = project_module.exports_of

    def spy(raw: bytes):
        scanned.append(raw)
        return real(raw)

    monkeypatch.setattr(project_module, "exports_of", spy)
    again = run_cli(*named, cwd=tmp_path)
    assert scanned == [b"X = 2\n"]  # util.py's new bytes, nothing else
    assert again.stdout == first.stdout
    monkeypatch.undo()
    assert again.stdout == run_cli("check", "--no-cache", *named[1:], cwd=tmp_path).stdout
