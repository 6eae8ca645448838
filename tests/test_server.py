"""``mplint server`` driven over stdio by a real LSP client (pytest-lsp, on pygls),
with the capabilities VS Code and Neovim announce: diagnostics on open, change and
save inside the project's session, code actions, notebooks, position encodings."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Callable, Dict, List, Optional, Sequence, Tuple

import pytest

from helpers import BAD, run_cli, write_files
from mplint.server import PYGLS_REQUIREMENT

try:  # the lsp extra and pytest-lsp (the test extra installs both)
    import pytest_lsp
    from lsprotocol import types
    from pygls.uris import from_fs_path
    from pygls.workspace import TextDocument
    from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities
except ImportError:  # pragma: no cover (CI installs them)
    pytest_lsp = None  # type: ignore[assignment]

needs_lsp = pytest.mark.skipif(pytest_lsp is None, reason="pygls and pytest-lsp are not installed")


def lsp_test(test: Callable) -> Callable:
    """An end-to-end test: a coroutine, run only with the lsp dependencies (and
    pytest-asyncio, which pytest-lsp brings)."""
    if pytest_lsp is None:
        return needs_lsp(test)
    return pytest.mark.asyncio(loop_scope="module")(test)

MODEL = """\
import tensorflow as tf

def build():
    return tf.keras.Sequential([tf.keras.layers.Dense(100), tf.keras.layers.Dense(10, activation="softmax")])
"""
#: MODEL's MP101 fixed (safe), and MP301 fixed too (unsafe)
MODEL_SAFE = MODEL.replace('activation="softmax"', 'activation="softmax", dtype="float32"')
MODEL_UNSAFE = MODEL.replace("Dense(100)", "Dense(104)")

TRAIN = """\
import tensorflow as tf
from proj import model

tf.keras.mixed_precision.set_global_policy("mixed_float16")
net = model.build()
"""
TRAIN_NO_POLICY = TRAIN.replace('tf.keras.mixed_precision.set_global_policy("mixed_float16")\n', "")

#: an application (its pyproject declares no distribution): not judged as a library
PROJECT = {"pyproject.toml": "", "proj/__init__.py": "",
           "proj/model.py": MODEL, "proj/train.py": TRAIN}


#: the server's answer to each client's initialize request, by client
INITIALIZED: Dict[int, "types.InitializeResult"] = {}


def _connect(editor: str, notebooks: bool = False, progress: bool = True, late: float = 0) -> Callable:
    """A client with the capabilities ``editor`` announces, connected to ``mplint server --stdio``:
    one server for the module's tests (each test has a project of its own), as an
    editor keeps one for many projects."""

    @pytest_lsp.fixture(scope="module", config=ClientServerConfig(
        server_command=[sys.executable, "-m", "mplint", "server", "--stdio"]))
    async def client(lsp_client: LanguageClient):
        capabilities = client_capabilities(editor)
        if notebooks:  # as VS Code announces it since 1.74
            capabilities.notebook_document = types.NotebookDocumentClientCapabilities(
                synchronization=types.NotebookDocumentSyncClientCapabilities())
        if not progress:  # a client that cannot show work-done progress
            assert capabilities.window is not None
            capabilities.window.work_done_progress = False
        if late:  # a client that takes ``late`` seconds to accept a progress token
            async def create_late(params: types.WorkDoneProgressCreateParams) -> None:
                await asyncio.sleep(late)
                lsp_client.progress_reports.setdefault(params.token, [])

            lsp_client.protocol.fm.features[types.WINDOW_WORK_DONE_PROGRESS_CREATE] = create_late
        INITIALIZED[id(lsp_client)] = await lsp_client.initialize_session(
            types.InitializeParams(capabilities=capabilities))
        yield
        await lsp_client.shutdown_session()
        del INITIALIZED[id(lsp_client)]

    return client


if pytest_lsp is not None:
    vscode = _connect("visual-studio-code")
    neovim = _connect("neovim")
    vscode_notebooks = _connect("visual-studio-code", notebooks=True)
    no_progress = _connect("visual-studio-code", progress=False)
    from mplint.server.app import PROGRESS_CREATE_S

    late_progress = _connect("visual-studio-code", late=PROGRESS_CREATE_S + 1)


# -- what the client saw ----------------------------------------------------------------------
async def _until(client: LanguageClient, ready: Callable[[], bool], what: str, timeout: float = 60) -> None:
    """Wait until ``ready()`` (messages are handled only while awaiting); a handler
    that raised in the server fails the test at once."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not ready():
        crashed = [m.message for m in client.messages if m.message.startswith("Error in server")]
        if crashed:
            pytest.fail(f"the server failed while {what} was awaited: {crashed}")
        left = deadline - loop.time()
        if left <= 0:
            pytest.fail(f"timed out waiting for {what}; diagnostics: {client.diagnostics}")
        # Polled: a notification future cancelled by a timeout would make the client
        # report a server error and stop the server at the next notification.
        await asyncio.sleep(min(left, 0.05))


def _found(client: LanguageClient, uri: str) -> List[Tuple[int, int, str]]:
    """(line, column, rule) of each diagnostic of ``uri``, 1-based like the CLI."""
    return sorted((d.range.start.line + 1, d.range.start.character + 1, str(d.code))
                  for d in client.diagnostics.get(uri, []))


async def _diagnostics(client: LanguageClient, uri: str, expected: Sequence[Tuple[int, int, str]]) -> None:
    await _until(client, lambda: _found(client, uri) == sorted(expected), f"{list(expected)} in {uri}")


def _open(client: LanguageClient, path: Path, text: Optional[str] = None, version: int = 1) -> str:
    uri = from_fs_path(str(path))
    assert uri is not None
    client.text_document_did_open(types.DidOpenTextDocumentParams(types.TextDocumentItem(
        uri=uri, language_id="python", version=version,
        text=path.read_text(encoding="utf-8") if text is None else text)))
    return uri


def _change(client: LanguageClient, uri: str, version: int, start: Tuple[int, int], end: Tuple[int, int],
            text: str) -> None:
    """An incremental change, as editors send them."""
    client.text_document_did_change(types.DidChangeTextDocumentParams(
        text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
        content_changes=[types.TextDocumentContentChangePartial(
            range=types.Range(types.Position(*start), types.Position(*end)), text=text)]))


def _apply(text: str, edits: Sequence[types.TextEdit]) -> str:
    """What an editor makes of ``text`` after ``edits`` (UTF-16 positions, applied last first)."""
    doc = TextDocument("file:///applied.py", text)
    for edit in sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True):
        doc.apply_change(types.TextDocumentContentChangePartial(range=edit.range, text=edit.new_text))
    return doc.source


async def _actions(client: LanguageClient, uri: str, only: Optional[List[str]] = None
                   ) -> List[types.CodeAction]:
    diagnostics = list(client.diagnostics.get(uri, []))
    result = await client.text_document_code_action_async(types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri=uri),
        range=types.Range(types.Position(0, 0), types.Position(0, 0)),
        context=types.CodeActionContext(diagnostics=diagnostics, only=only)))
    return [a for a in result or [] if isinstance(a, types.CodeAction)]


def _cli_findings(root: Path, path: str) -> List[Tuple[int, int, str]]:
    """What ``mplint check`` (CI) reports for one file of the project."""
    out = run_cli("check", "--no-cache", "--output-format", "json", ".", cwd=root).stdout
    return sorted((f["line"], f["col"], f["rule"]) for f in json.loads(out) if f["path"] == path)


# -- diagnostics ---------------------------------------------------------------------------------
@lsp_test
async def test_open_reports_what_the_cli_reports_with_the_policy_set_in_another_file(vscode, tmp_path):
    root = write_files(tmp_path, PROJECT)
    uri = _open(vscode, root / "proj/model.py")
    expected = [(4, 55, "MP301"), (4, 61, "MP101")]
    assert _cli_findings(root, "proj/model.py") == expected
    await _diagnostics(vscode, uri, expected)
    by_rule = {d.code: d for d in vscode.diagnostics[uri]}
    softmax = by_rule["MP101"]
    assert "proj/train.py:4" in softmax.message  # the cross-file fact, explained as in CI
    assert softmax.source == "mplint"
    assert softmax.severity == types.DiagnosticSeverity.Error
    assert softmax.code_description is not None and "MP101" in softmax.code_description.href
    assert softmax.range.end == types.Position(3, MODEL.splitlines()[3].index("])"))
    assert by_rule["MP301"].message.endswith("(unsafe fix available)")


@lsp_test
async def test_a_change_is_checked_before_it_is_saved(vscode, tmp_path):
    root = write_files(tmp_path, PROJECT)
    uri = _open(vscode, root / "proj/model.py")
    await _diagnostics(vscode, uri, [(4, 55, "MP301"), (4, 61, "MP101")])
    # Type `dtype="float32", ` into the softmax layer; the file on disk is unchanged.
    at = MODEL.splitlines()[3].index("activation=")
    _change(vscode, uri, 2, (3, at), (3, at), 'dtype="float32", ')
    await _diagnostics(vscode, uri, [(4, 55, "MP301")])
    _change(vscode, uri, 3, (3, at), (3, at + len('dtype="float32", ')), "")
    await _diagnostics(vscode, uri, [(4, 55, "MP301"), (4, 61, "MP101")])


@lsp_test
async def test_saving_a_file_rechecks_the_open_files_its_policy_governs(vscode, tmp_path):
    root = write_files(tmp_path, PROJECT)
    model = _open(vscode, root / "proj/model.py")
    await _diagnostics(vscode, model, [(4, 55, "MP301"), (4, 61, "MP101")])
    train = _open(vscode, root / "proj/train.py")
    await _diagnostics(vscode, train, [])
    # The policy is deleted from train.py and saved: model.py no longer runs mixed.
    (root / "proj/train.py").write_text(TRAIN_NO_POLICY)
    _change(vscode, train, 2, (3, 0), (4, 0), "")
    vscode.text_document_did_save(types.DidSaveTextDocumentParams(types.TextDocumentIdentifier(uri=train)))
    await _diagnostics(vscode, model, [])
    assert _cli_findings(root, "proj/model.py") == []


@lsp_test
async def test_the_nearest_config_of_the_document_applies(vscode, tmp_path):
    files = dict(PROJECT)
    files["pyproject.toml"] += '[tool.mplint]\nignore = ["MP301"]\nexclude = ["proj/vendored/"]\n'
    files["proj/vendored/model.py"] = MODEL
    root = write_files(tmp_path, files)
    uri = _open(vscode, root / "proj/model.py")
    await _diagnostics(vscode, uri, [(4, 61, "MP101")])
    assert _cli_findings(root, "proj/model.py") == [(4, 61, "MP101")]
    vendored = _open(vscode, root / "proj/vendored/model.py")
    await _until(vscode, lambda: vendored in vscode.diagnostics, "the excluded file's diagnostics")
    assert list(vscode.diagnostics[vendored]) == []


@lsp_test
async def test_a_broken_config_is_shown_once_and_the_server_keeps_running(vscode, tmp_path):
    files = dict(PROJECT)
    files["pyproject.toml"] += "[tool.mplint]\nslect = ['MP1']\n"
    root = write_files(tmp_path, files)
    uri = _open(vscode, root / "proj/model.py")
    await _until(vscode, lambda: uri in vscode.diagnostics, "diagnostics of a badly configured file")
    _change(vscode, uri, 2, (0, 0), (0, 0), "\n")
    await _until(vscode, lambda: any("slect" in m.message for m in vscode.messages), "the config error")
    assert list(vscode.diagnostics[uri]) == []
    # Fixed on disk: the next check reads it again.
    (root / "pyproject.toml").write_text(PROJECT["pyproject.toml"])
    _change(vscode, uri, 3, (0, 0), (1, 0), "")
    await _diagnostics(vscode, uri, [(4, 55, "MP301"), (4, 61, "MP101")])
    errors = [m.message for m in vscode.messages if m.type == types.MessageType.Error and "slect" in m.message]
    assert len(errors) == 1  # once, not per keystroke
    assert errors[0].startswith(f"mplint: {root / 'pyproject.toml'}: unknown key 'slect' in [tool.mplint]")


@lsp_test
async def test_columns_are_in_the_clients_units(neovim, vscode, tmp_path):
    # 😋 is one code point, two UTF-16 units and four UTF-8 bytes.
    line = 'm = tf.keras.Sequential([tf.keras.layers.Dense(10, name="😋", activation="softmax")])\n'
    text = 'import tensorflow as tf\ntf.keras.mixed_precision.set_global_policy("mixed_float16")\n' + line
    root = write_files(tmp_path, {"pyproject.toml": "", "emoji.py": text})
    start, end = line.index("tf.keras.layers.Dense"), line.index("])")
    units: Dict[object, Callable[[str], int]] = {
        "utf-8": lambda s: len(s.encode()), "utf-16": lambda s: len(s.encode("utf-16-le")) // 2}
    encodings = []
    for client in (vscode, neovim):
        encoding = INITIALIZED[id(client)].capabilities.position_encoding
        encodings.append(encoding)
        uri = _open(client, root / "emoji.py")
        await _diagnostics(client, uri, [(3, start + 1, "MP101")])
        assert client.diagnostics[uri][0].range.end == types.Position(2, units[encoding](line[:end]))
        [fix, _] = await _actions(client, uri)
        assert fix.edit is not None and fix.edit.changes is not None
        [edit] = fix.edit.changes[uri]  # whole lines: the same in every encoding
        assert (edit.range.start, edit.range.end) == (types.Position(2, 0), types.Position(3, 0))
        assert edit.new_text == line.replace('activation="softmax"', 'activation="softmax", dtype="float32"')
    assert encodings == ["utf-16", "utf-8"]  # VS Code's only one, and Neovim's first choice


@lsp_test
async def test_a_new_file_not_yet_saved_is_checked_and_closing_it_clears_its_diagnostics(vscode, tmp_path):
    root = write_files(tmp_path, {"pyproject.toml": ""})
    path = root / "untitled_model.py"  # named, but not on disk
    uri = _open(vscode, path, text=BAD)
    await _diagnostics(vscode, uri, [(4, 30, "MP101")])
    assert not path.exists()
    vscode.text_document_did_close(types.DidCloseTextDocumentParams(types.TextDocumentIdentifier(uri=uri)))
    await _diagnostics(vscode, uri, [])


# -- code actions --------------------------------------------------------------------------------
@lsp_test
async def test_each_fixable_finding_has_an_action_safe_first_and_fix_all_applies_the_safe_ones(vscode, tmp_path):
    root = write_files(tmp_path, PROJECT)
    uri = _open(vscode, root / "proj/model.py")
    await _diagnostics(vscode, uri, [(4, 55, "MP301"), (4, 61, "MP101")])
    actions = await _actions(vscode, uri)
    assert [(a.title, a.kind) for a in actions] == [
        ("Fix MP101 (float16-final-softmax)", types.CodeActionKind.QuickFix),
        ("Fix MP301 (units-not-multiple-of-8) (unsafe)", types.CodeActionKind.QuickFix),
        ("mplint: fix all safely fixable problems", "source.fixAll.mplint"),
    ]
    results = []
    for action in actions:
        assert action.edit is not None and action.edit.changes is not None
        assert list(action.edit.changes) == [uri]
        results.append(_apply(MODEL, action.edit.changes[uri]))
    assert results == [MODEL_SAFE, MODEL_UNSAFE, MODEL_SAFE]
    assert actions[0].is_preferred and not actions[1].is_preferred
    assert [d.code for d in actions[0].diagnostics or []] == ["MP101"]
    # Only what is asked for: codeActionsOnSave asks for source.fixAll.
    only_fix_all = await _actions(vscode, uri, only=[types.CodeActionKind.SourceFixAll])
    assert [a.kind for a in only_fix_all] == ["source.fixAll.mplint"]
    assert await _actions(vscode, uri, only=[types.CodeActionKind.Refactor]) == []


@lsp_test
async def test_an_action_fixes_the_buffer_as_it_is_now(vscode, tmp_path):
    root = write_files(tmp_path, PROJECT)
    uri = _open(vscode, root / "proj/model.py")
    await _diagnostics(vscode, uri, [(4, 55, "MP301"), (4, 61, "MP101")])
    # A comment typed above moves the finding down one line; the fix follows it.
    _change(vscode, uri, 2, (2, 0), (2, 0), "# the model\n")
    await _diagnostics(vscode, uri, [(5, 55, "MP301"), (5, 61, "MP101")])
    edited = MODEL.replace("def build", "# the model\ndef build")
    [safe, _, fix_all] = await _actions(vscode, uri)
    assert safe.edit is not None and safe.edit.changes is not None
    assert _apply(edited, safe.edit.changes[uri]) == edited.replace(
        'activation="softmax"', 'activation="softmax", dtype="float32"')
    # The edit replaces only the changed line, so the editor keeps the others as they are.
    [edit] = safe.edit.changes[uri]
    assert (edit.range.start, edit.range.end) == (types.Position(4, 0), types.Position(5, 0))
    assert fix_all.edit is not None


@lsp_test
async def test_a_clean_buffer_offers_no_action(vscode, tmp_path):
    root = write_files(tmp_path, {"pyproject.toml": "", "clean.py": MODEL_SAFE})
    uri = _open(vscode, root / "clean.py")
    await _until(vscode, lambda: uri in vscode.diagnostics, "the clean file's diagnostics")
    assert list(vscode.diagnostics[uri]) == []
    assert await _actions(vscode, uri) == []


# -- notebooks -----------------------------------------------------------------------------------
@lsp_test
async def test_a_notebooks_findings_land_on_their_cells_and_fixes_edit_the_cell(vscode_notebooks, tmp_path):
    vscode = vscode_notebooks
    sync = INITIALIZED[id(vscode)].capabilities.notebook_document_sync
    assert sync is not None and sync.save
    cells = [
        (types.NotebookCellKind.Markup, "markdown", "# Training\n"),
        (types.NotebookCellKind.Code, "python",
         'import tensorflow as tf\ntf.keras.mixed_precision.set_global_policy("mixed_float16")\n'),
        (types.NotebookCellKind.Code, "python",
         'm = tf.keras.Sequential([tf.keras.layers.Dense(10, activation="softmax")])'),
    ]
    root = write_files(tmp_path, {"pyproject.toml": ""})
    nb_uri = from_fs_path(str(root / "train.ipynb"))
    assert nb_uri is not None
    cell_uris = [f"vscode-notebook-cell:{root / 'train.ipynb'}#W{i}sZmlsZQ%3D%3D" for i in range(len(cells))]
    vscode.notebook_document_did_open(types.DidOpenNotebookDocumentParams(
        notebook_document=types.NotebookDocument(
            uri=nb_uri, notebook_type="jupyter-notebook", version=1,
            cells=[types.NotebookCell(kind=kind, document=cell) for (kind, _, _), cell in zip(cells, cell_uris)]),
        cell_text_documents=[types.TextDocumentItem(uri=cell, language_id=language, version=1, text=text)
                             for (_, language, text), cell in zip(cells, cell_uris)]))
    await _diagnostics(vscode, cell_uris[2], [(1, 26, "MP101")])
    assert _found(vscode, cell_uris[1]) == [] and _found(vscode, cell_uris[0]) == []
    actions = await _actions(vscode, cell_uris[2])
    assert [a.title for a in actions] == ["Fix MP101 (float16-final-softmax)",
                                          "mplint: fix all safely fixable problems"]
    for action in actions:
        assert action.edit is not None and action.edit.changes is not None
        assert list(action.edit.changes) == [cell_uris[2]]
        assert _apply(cells[2][2], action.edit.changes[cell_uris[2]]) == \
            'm = tf.keras.Sequential([tf.keras.layers.Dense(10, activation="softmax", dtype="float32")])'
    # The policy cell is edited away: the softmax cell's finding goes.
    vscode.notebook_document_did_change(types.DidChangeNotebookDocumentParams(
        notebook_document=types.VersionedNotebookDocumentIdentifier(uri=nb_uri, version=2),
        change=types.NotebookDocumentChangeEvent(cells=types.NotebookDocumentCellChanges(text_content=[
            types.NotebookDocumentCellContentChanges(
                document=types.VersionedTextDocumentIdentifier(uri=cell_uris[1], version=2),
                changes=[types.TextDocumentContentChangePartial(
                    range=types.Range(types.Position(1, 0), types.Position(2, 0)), text="")])]))))
    await _diagnostics(vscode, cell_uris[2], [])


# -- without the extra ---------------------------------------------------------------------------
def test_without_pygls_the_server_says_what_to_install_in_one_line(monkeypatch, capsys):
    from mplint.cli import main

    for name in [m for m in sys.modules if m == "pygls" or m.startswith(("pygls.", "mplint.server.app"))]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "pygls", None)  # as if not installed
    assert main(["server"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1
    assert err.startswith("mplint: error: the language server needs pygls (mplint's lsp extra): ")
    assert err.rstrip().endswith(f'-m pip install "{PYGLS_REQUIREMENT}"')


def test_the_install_hint_asks_for_the_lsp_extra_s_own_requirement():
    try:
        import tomllib
    except ModuleNotFoundError:  # Python < 3.11
        import tomli as tomllib

    extra = tomllib.loads((Path(__file__).parents[1] / "pyproject.toml").read_text())
    assert extra["project"]["optional-dependencies"]["lsp"] == [PYGLS_REQUIREMENT]


def test_the_command_line_lists_the_server():
    assert "server    language server for editors" in run_cli("--help").stdout


# -- a burst of changes, a bad document (issue 27) ----------------------------------------------
class _CountingDiagnostics(dict):
    """The client's diagnostics by uri, counting each publication."""

    def __init__(self, *args) -> None:
        super().__init__(*args)
        self.published: Dict[str, int] = {}

    def __setitem__(self, uri, value) -> None:
        self.published[uri] = self.published.get(uri, 0) + 1
        super().__setitem__(uri, value)


@lsp_test
async def test_a_burst_of_changes_is_checked_once_in_its_last_version(vscode, tmp_path):
    filler = "".join(f"x{i} = tf.constant({i})\n" for i in range(3000))  # a big file: each check costs
    path = write_files(tmp_path, {"pyproject.toml": PROJECT["pyproject.toml"],
                                  "m.py": BAD + filler}) / "m.py"
    uri = _open(vscode, path)
    await _diagnostics(vscode, uri, [(4, 30, "MP101")])
    counting = _CountingDiagnostics(vscode.diagnostics)
    vscode.diagnostics = counting
    try:
        original = line = BAD.splitlines()[3]
        for version in range(2, 32):  # 30 keystrokes, each changing the output layer's units
            new = original.replace("Dense(10", f"Dense({version * 8}")
            _change(vscode, uri, version, (3, 0), (3, len(line)), new)
            line = new
        _change(vscode, uri, 32, (3, 0), (3, len(line)), original.replace('"softmax"', '"softmax", dtype="float32"'))
        await _diagnostics(vscode, uri, [])
        await asyncio.sleep(1)  # no stale version's diagnostics after the last one
        assert _found(vscode, uri) == []
        assert counting.published.get(uri, 0) <= 3, counting.published
    finally:
        vscode.diagnostics = dict(counting)


@lsp_test
async def test_a_document_that_would_crash_the_parser_is_one_logged_line(vscode, tmp_path):
    deep = BAD + "x = " + " and ".join(["a"] * 10000) + "\n"
    heads = "import tensorflow as tf\nclass Head(tf.keras.layers.Layer):\n    pass\n" + "y = " + " and ".join(["a"] * 10000) + "\n"
    folder = write_files(tmp_path, {"pyproject.toml": PROJECT["pyproject.toml"], "heads.py": heads,
                                    "main.py": BAD.replace("import tensorflow as tf\n",
                                                           "import tensorflow as tf\nfrom heads import Head\n")})
    bad = _open(vscode, folder / "deep.py", deep)
    main = _open(vscode, folder / "main.py")
    await _diagnostics(vscode, main, [(5, 30, "MP101")])
    await _until(vscode, lambda: bad in vscode.diagnostics, "the deep file's (empty) diagnostics")
    assert list(vscode.diagnostics[bad]) == []
    assert any("deep.py: too deeply nested to parse" in m.message for m in vscode.log_messages)


# -- other open documents, configuration, a project's first index (issue 25) ------------------
def _close(client: LanguageClient, uri: str) -> None:
    client.text_document_did_close(types.DidCloseTextDocumentParams(types.TextDocumentIdentifier(uri=uri)))


class _Counted:
    """Counts the diagnostics the client receives for each uri while in force."""

    def __init__(self, client: LanguageClient) -> None:
        self.client = client

    def __enter__(self) -> _CountingDiagnostics:
        self.counting = _CountingDiagnostics(self.client.diagnostics)
        self.client.diagnostics = self.counting
        return self.counting

    def __exit__(self, *exc: object) -> None:
        self.client.diagnostics = dict(self.counting)


async def _indexed(client: LanguageClient) -> None:
    """Wait until every work-done progress the server began has ended (the first
    index, the check and the open documents it reached)."""
    await _until(client, lambda: all(reports and isinstance(reports[-1], types.WorkDoneProgressEnd)
                                     for reports in client.progress_reports.values()), "the index's end")


#: reached by nothing that sets a policy: its diagnostics never depend on train.py
UNRELATED = MODEL.replace("def build", "def build_other")


@lsp_test
async def test_an_unsaved_edit_to_the_script_that_sets_the_policy_rechecks_the_builder(vscode, tmp_path):
    root = write_files(tmp_path, {**PROJECT, "proj/other.py": UNRELATED})
    model = _open(vscode, root / "proj/model.py")
    await _diagnostics(vscode, model, [(4, 55, "MP301"), (4, 61, "MP101")])
    other = _open(vscode, root / "proj/other.py")
    await _until(vscode, lambda: other in vscode.diagnostics, "other.py's (empty) diagnostics")
    train = _open(vscode, root / "proj/train.py")
    await _until(vscode, lambda: train in vscode.diagnostics, "train.py's (empty) diagnostics")
    await _indexed(vscode)
    with _Counted(vscode) as counted:
        # The policy line of train.py is deleted in the editor, not saved: model.py no longer runs mixed.
        _change(vscode, train, 2, (3, 0), (4, 0), "")
        await _diagnostics(vscode, model, [])
        # ... and typed back: its findings return.
        _change(vscode, train, 3, (3, 0), (3, 0), TRAIN.splitlines(keepends=True)[3])
        await _diagnostics(vscode, model, [(4, 55, "MP301"), (4, 61, "MP101")])
        # Deleted again and closed unsaved: the file on disk (which sets the policy) speaks again.
        _change(vscode, train, 4, (3, 0), (4, 0), "")
        await _diagnostics(vscode, model, [])
        _close(vscode, train)
        await _diagnostics(vscode, model, [(4, 55, "MP301"), (4, 61, "MP101")])
        await asyncio.sleep(0.5)
    assert (root / "proj/train.py").read_text() == TRAIN
    assert counted.published.get(model) == 4, counted.published  # once per change it depended on
    assert counted.published.get(other, 0) == 0  # train.py's policy never reached it
    assert _cli_findings(root, "proj/other.py") == []


HEADS = """\
import keras
from keras import ops


class Head(keras.layers.Layer):
    def call(self, x):
        return ops.matmul(x, ops.transpose(x))
"""
#: builds its model's output with heads.Head, under a mixed policy
USES_HEAD = """\
import keras
from heads import Head

keras.mixed_precision.set_global_policy("mixed_float16")
inputs = keras.Input((16,))
model = keras.Model(inputs, Head()(keras.layers.Dense(16)(inputs)))
"""


@lsp_test
async def test_an_unsaved_edit_to_an_imported_layer_rechecks_the_files_that_read_it(vscode, tmp_path):
    root = write_files(tmp_path, {"pyproject.toml": "", "heads.py": HEADS, "main.py": USES_HEAD,
                                  "other.py": BAD})
    main = _open(vscode, root / "main.py")
    other = _open(vscode, root / "other.py")
    heads = _open(vscode, root / "heads.py")
    await _diagnostics(vscode, main, [(6, 29, "MP102")])
    await _diagnostics(vscode, other, [(4, 30, "MP101")])
    await _indexed(vscode)
    assert _cli_findings(root, "main.py") == [(6, 29, "MP102")]
    line = HEADS.splitlines()[6]
    with _Counted(vscode) as counted:
        # Head casts its result to float32 now (unsaved): the model's output is float32.
        _change(vscode, heads, 2, (6, 0), (6, len(line)),
                '        return ops.cast(ops.matmul(x, ops.transpose(x)), "float32")')
        await _diagnostics(vscode, main, [])
        _change(vscode, heads, 3, (6, 0), (6, len(line) + 28), line)
        await _diagnostics(vscode, main, [(6, 29, "MP102")])
        await asyncio.sleep(0.5)
    assert counted.published.get(main) == 2, counted.published
    assert counted.published.get(other, 0) == 0  # it reads nothing of heads.py


@lsp_test
async def test_every_open_document_gets_the_facts_other_files_give_it(vscode, tmp_path):
    files = {**PROJECT, "proj/model2.py": MODEL.replace("def build", "def build2"),
             "proj/train.py": TRAIN.replace("from proj import model", "from proj import model, model2")
             + "net2 = model2.build2()\n"}
    root = write_files(tmp_path, files)
    first = _open(vscode, root / "proj/model.py")
    await _diagnostics(vscode, first, [(4, 55, "MP301"), (4, 61, "MP101")])
    second = _open(vscode, root / "proj/model2.py")  # the project is indexed already
    await _diagnostics(vscode, second, [(4, 55, "MP301"), (4, 61, "MP101")])
    assert _cli_findings(root, "proj/model2.py") == [(4, 55, "MP301"), (4, 61, "MP101")]


@lsp_test
async def test_a_projects_first_index_shows_work_done_progress(vscode, tmp_path):
    root = write_files(tmp_path, PROJECT)
    before = set(vscode.progress_reports)
    model = _open(vscode, root / "proj/model.py")
    await _diagnostics(vscode, model, [(4, 55, "MP301"), (4, 61, "MP101")])
    await _indexed(vscode)
    [token] = set(vscode.progress_reports) - before
    reports = vscode.progress_reports[token]
    assert [type(r) for r in reports] == [types.WorkDoneProgressBegin, types.WorkDoneProgressReport,
                                          types.WorkDoneProgressEnd]
    assert reports[0].title == "mplint" and reports[0].message == f"indexing {root.name}"
    assert reports[2].message is not None and reports[2].message.startswith(f"indexed {root.name} in ")
    # The project is indexed: the next document of it shows none.
    train = _open(vscode, root / "proj/train.py")
    await _until(vscode, lambda: train in vscode.diagnostics, "train.py's (empty) diagnostics")
    assert set(vscode.progress_reports) - before == {token}


@lsp_test
async def test_a_token_accepted_too_late_to_show_the_index_is_ended_at_once(late_progress, tmp_path):
    """The index starts without progress when the client is slow to accept the token;
    the token it makes later is begun and ended at once, so no client waits on it."""
    root = write_files(tmp_path, PROJECT)
    model = _open(late_progress, root / "proj/model.py")
    await _diagnostics(late_progress, model, [(4, 55, "MP301"), (4, 61, "MP101")])
    await _until(late_progress, lambda: bool(late_progress.progress_reports), "the late token")
    await _indexed(late_progress)
    [reports] = late_progress.progress_reports.values()
    assert [type(r) for r in reports] == [types.WorkDoneProgressBegin, types.WorkDoneProgressEnd]


@lsp_test
async def test_a_client_that_cannot_show_progress_is_sent_none(no_progress, tmp_path):
    root = write_files(tmp_path, PROJECT)
    model = _open(no_progress, root / "proj/model.py")
    await _diagnostics(no_progress, model, [(4, 55, "MP301"), (4, 61, "MP101")])
    assert no_progress.progress_reports == {}


#: a monorepo: the root's configuration, and two sub-projects, one extending it
MONOREPO = {
    "pyproject.toml": '[tool.mplint]\nignore = ["MP301"]\ndocs-url = "https://example.org/rules/{rule}.html"\n',
    "pkg_a/pyproject.toml": '[project]\nname = "a"\n[tool.mplint]\nextend = "../pyproject.toml"\n',
    "pkg_a/train.py": BAD.replace("[tf", "[tf.keras.layers.Dense(100), tf"),
    "pkg_b/pyproject.toml": '[project]\nname = "b"\n[tool.mplint]\nignore = ["MP101"]\n',
    "pkg_b/train.py": BAD.replace("[tf", "[tf.keras.layers.Dense(100), tf"),
}


@lsp_test
async def test_each_document_gets_the_settings_the_command_line_gives_it(vscode, tmp_path):
    root = write_files(tmp_path, MONOREPO)
    a = _open(vscode, root / "pkg_a/train.py")
    b = _open(vscode, root / "pkg_b/train.py")
    await _diagnostics(vscode, a, [(4, 58, "MP101")])  # the root's ignore, through extend
    await _diagnostics(vscode, b, [(4, 52, "MP301")])  # its own, which extends nothing
    assert _cli_findings(root, "pkg_a/train.py") == [(4, 58, "MP101")]
    assert _cli_findings(root, "pkg_b/train.py") == [(4, 52, "MP301")]
    assert _cli_findings(root / "pkg_a", "train.py") == [(4, 58, "MP101")]
    [softmax] = vscode.diagnostics[a]
    assert softmax.code_description is not None
    assert softmax.code_description.href == "https://example.org/rules/MP101.html"  # docs-url, as SARIF's helpUri
    # The configuration pkg_a extends is edited on disk: the next check reads it.
    (root / "pyproject.toml").write_text('[tool.mplint]\nignore = ["MP101"]\n')
    _change(vscode, a, 2, (0, 0), (0, 0), "\n")
    await _diagnostics(vscode, a, [(5, 52, "MP301")])
    [units] = vscode.diagnostics[a]
    assert units.code_description is not None and units.code_description.href.startswith("file:")
    _change(vscode, a, 3, (0, 0), (1, 0), "")
    await _diagnostics(vscode, a, [(4, 52, "MP301")])
    assert _cli_findings(root, "pkg_a/train.py") == [(4, 52, "MP301")]
    # Edited and saved in the editor: the documents it configures are checked again, no other.
    config = from_fs_path(str(root / "pyproject.toml"))
    assert config is not None
    vscode.text_document_did_open(types.DidOpenTextDocumentParams(types.TextDocumentItem(
        uri=config, language_id="toml", version=1, text=(root / "pyproject.toml").read_text())))
    with _Counted(vscode) as counted:
        (root / "pyproject.toml").write_text(MONOREPO["pyproject.toml"])
        vscode.text_document_did_save(types.DidSaveTextDocumentParams(types.TextDocumentIdentifier(uri=config)))
        await _diagnostics(vscode, a, [(4, 58, "MP101")])
        await asyncio.sleep(0.5)
    assert counted.published.get(b, 0) == 0 and counted.published.get(config, 0) == 0


# -- the index's per-file time budget (issue 27) ----------------------------------------------
POLICY = 'import tensorflow as tf\ntf.keras.mixed_precision.set_global_policy("mixed_float16")\n'
#: 40 chains of 450 subscripts, under the depth guard: libcst's native parser takes over
#: 30 s of CPU on them, and Python cannot interrupt it (generated here, never committed)
SLOW_SETTER = POLICY + "from model import build\nm = build()\n" + ("x = a" + "[0]" * 450 + "\n") * 40


@lsp_test
async def test_a_file_the_index_cannot_parse_within_the_budget_leaves_the_open_document_checked(vscode, tmp_path):
    # The server reads the client in a thread: the index's forked workers must not wait
    # for that thread's stdin lock (they would all be killed as late, this file too).
    root = write_files(tmp_path, {"pyproject.toml": "[tool.mplint]\nfile-timeout = 1\n", "train.py": SLOW_SETTER,
                                  "model.py": MODEL, "other.py": BAD})
    (root / ".git").mkdir()
    model = _open(vscode, root / "model.py")  # train.py's policy may reach it: the index parses train.py
    # Unbounded, train.py's parse takes 30 s of CPU and says nothing: the line is the budget's.
    await _until(vscode, lambda: any("train.py: took longer than 1 s (file-timeout); skipped; the policy it may set "
                                     "is unknown" in m.message for m in vscode.log_messages),
                 "the line that says train.py was not indexed")
    await _until(vscode, lambda: model in vscode.diagnostics, "model.py's diagnostics")
    assert _found(vscode, model) == []  # the policy that would govern it is unknown: silent
    other = _open(vscode, root / "other.py")  # sets its own policy: the index parses it in a worker
    await _until(vscode, lambda: [rule for *_, rule in _found(vscode, other)] == ["MP101"],
                 "other.py's MP101")
