"""``mplint server``: the Language Server Protocol over stdio, with pygls.

Diagnostics are published when a document (or notebook) is opened, changed or
saved; a save indexes the project again and republishes its open documents, since
a policy set in one file changes the findings of another. Code actions apply one
finding's fix (safe ones first, unsafe ones labelled) or all safe fixes
(``source.fixAll.mplint``). Every result comes from :class:`Projects`, so the
editor sees what CI sees.
"""

from __future__ import annotations

import asyncio
import itertools
import os
import time
from typing import Any, Callable, Dict, List, Optional, Sequence, Set, Tuple

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.uris import to_fs_path
from pygls.workspace import TextDocument
from pygls.workspace.position_codec import PositionCodec

from mplint import __version__
from mplint.core.findings import FileError, Finding
from mplint.core.results import REPORT_TO, FixOutcome, describe
from mplint.output import rule_help_uri
from mplint.rule.catalog import CatalogError
from mplint.rule.levels import Safety
from mplint.run.config import ConfigError
from mplint.server.documents import (Cell, Edit, buffer_bytes, buffer_text, line_edits, lines_of,
                                     notebook_bytes, notebook_texts)
from mplint.server.projects import Projects

SOURCE = "mplint"
FIX_ALL = f"{types.CodeActionKind.SourceFixAll.value}.{SOURCE}"
PYTHON_SUFFIXES = (".py", ".pyi")
#: every notebook (``*`` matches any notebook type) with Python cells; a selector
#: without ``notebook`` is valid LSP, but lsprotocol 2025.0.0 clients cannot read it
NOTEBOOK_SYNC = types.NotebookDocumentSyncOptions(
    notebook_selector=[types.NotebookDocumentFilterWithNotebook(
        notebook="*", cells=[types.NotebookCellLanguage(language="python")])],
    save=True,
)
_SEVERITY = {"error": types.DiagnosticSeverity.Error, "warning": types.DiagnosticSeverity.Warning}
#: seconds a changed document waits for the next change before it is checked: a burst
#: of keystrokes costs one check of the last version, not one check per keystroke
DEBOUNCE_S = 0.3
#: seconds a client may take to accept a work-done progress token before the index
#: starts without showing progress
PROGRESS_CREATE_S = 5.0


class MplintServer(LanguageServer):
    """The server's state: the projects, and what was last reported per document."""

    def __init__(self, projects: Optional[Projects] = None) -> None:
        super().__init__(SOURCE, __version__, text_document_sync_kind=types.TextDocumentSyncKind.Incremental,
                         notebook_document_sync=NOTEBOOK_SYNC)
        self._projects = projects
        #: file errors last logged per document, so a syntax error is logged once, not per keystroke
        self.logged: Dict[str, Set[str]] = {}
        #: config errors already shown
        self.shown: Set[str] = set()
        #: the check each changed document waits for (see :data:`DEBOUNCE_S`), by uri
        self.pending: Dict[str, asyncio.TimerHandle] = {}
        #: numbers the work-done progress tokens this server creates
        self.tokens = itertools.count(1)
        #: the projects whose first index is under way (set when it is done), by Projects.where
        self.first_indexes: Dict[str, asyncio.Event] = {}

    @property
    def projects(self) -> Projects:
        if self._projects is None:  # the catalog is read once the client is connected
            self._projects = Projects()
        return self._projects

    # -- reporting ---------------------------------------------------------------------------
    def tell(self, message: str) -> None:
        """Show a broken configuration once (the documents it governs stay unchecked)."""
        if message not in self.shown:
            self.shown.add(message)
            self.window_show_message(types.ShowMessageParams(types.MessageType.Error, f"mplint: {message}"))

    def log_errors(self, uri: str, errors: Sequence[FileError]) -> None:
        now = {f"{e.kind}: {e}" for e in errors}
        for message in sorted(now - self.logged.get(uri, set())):
            self.window_log_message(types.LogMessageParams(types.MessageType.Warning, f"mplint: {message}"))
        self.logged[uri] = now

    def publish(self, uri: str, diagnostics: List[types.Diagnostic], version: Optional[int]) -> None:
        self.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=uri, diagnostics=diagnostics, version=version))

    # -- what a document is ----------------------------------------------------------------
    def python_file(self, uri: str) -> Optional[str]:
        """The path of a Python file's document (not a notebook cell, not an unsaved
        buffer with no name), else None."""
        if self.workspace.get_notebook_document(cell_uri=uri) is not None:
            return None
        path = to_fs_path(uri)
        return path if path is not None and path.endswith(PYTHON_SUFFIXES) else None

    def notebook_cells(self, notebook: types.NotebookDocument) -> List[Tuple[str, TextDocument]]:
        return [(cell.document, self.workspace.get_text_document(cell.document)) for cell in notebook.cells]

    def notebook_raw(self, notebook: types.NotebookDocument) -> bytes:
        cells = []
        for cell, (_, doc) in zip(notebook.cells, self.notebook_cells(notebook)):
            python = cell.kind == types.NotebookCellKind.Code and doc.language_id in (None, "python")
            cells.append(Cell(doc.source, python))
        return notebook_bytes(cells)

    # -- diagnostics ---------------------------------------------------------------------------
    def check_later(self, uri: str, check: Callable[[str], None]) -> None:
        """Check ``uri`` once changes to it pause: a check still waiting is replaced,
        so a stale version is never checked (handlers run on the server's loop, so
        changes that arrive during a check only move the next one)."""
        self.drop_pending(uri)
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # not serving (a direct call): check now
            self.guarded(check, uri)
            return
        self.pending[uri] = loop.call_later(DEBOUNCE_S, self._due, uri, check)

    def _due(self, uri: str, check: Callable[[str], None]) -> None:
        self.pending.pop(uri, None)
        self.guarded(check, uri)

    def check_now(self, uri: str, check: Callable[[str], None]) -> None:
        """Check ``uri`` at once (open, save), dropping a check that waited for it."""
        self.drop_pending(uri)
        self.guarded(check, uri)

    def drop_pending(self, uri: str) -> None:
        waiting = self.pending.pop(uri, None)
        if waiting is not None:
            waiting.cancel()

    def guarded(self, check: Callable[[str], None], uri: str) -> None:
        """Run one document's check; whatever it raises is logged for that document
        and the server goes on serving the others."""
        try:
            check(uri)
        except Exception as exc:  # a bad document must not take the server down
            self.window_log_message(types.LogMessageParams(
                types.MessageType.Error,
                f"mplint: internal error while checking {uri}: {describe(exc)}. Please report this to {REPORT_TO}"))

    def check_text(self, uri: str) -> None:
        path = self.python_file(uri)
        if path is None:
            return
        doc = self.workspace.get_text_document(uri)
        findings: List[Finding] = []
        docs_url = None
        try:
            raw = buffer_bytes(doc.source)
            self.projects.opened(path, raw)
            if not self.projects.excluded(path):
                result = self.projects.check(path, raw)
                findings = result.findings
                docs_url = self.projects.settings_of(path).docs_url
                self.log_errors(uri, result.errors)
        except (ConfigError, CatalogError) as exc:
            self.tell(str(exc))
        lines = lines_of(doc.source)
        codec = doc.position_codec
        self.publish(uri, [diagnostic(f, lines, codec, docs_url) for f in findings], doc.version)

    def check_notebook(self, uri: str) -> None:
        notebook = self.workspace.get_notebook_document(notebook_uri=uri)
        path = to_fs_path(uri)
        if notebook is None or path is None:
            return
        cells = self.notebook_cells(notebook)
        per_cell: List[List[types.Diagnostic]] = [[] for _ in cells]
        try:
            raw = self.notebook_raw(notebook)
            self.projects.opened(path, raw)
            if not self.projects.excluded(path):
                result = self.projects.check(path, raw)
                self.log_errors(uri, result.errors)
                docs_url = self.projects.settings_of(path).docs_url
                for f in result.findings:
                    if f.cell is not None and 1 <= f.cell <= len(cells):
                        doc = cells[f.cell - 1][1]
                        per_cell[f.cell - 1].append(diagnostic(f, lines_of(doc.source), doc.position_codec, docs_url))
        except (ConfigError, CatalogError) as exc:
            self.tell(str(exc))
        for (cell_uri, doc), diagnostics in zip(cells, per_cell):
            self.publish(cell_uri, diagnostics, doc.version)

    async def opening(self, uri: str, path: Optional[str], check: Callable[[str], None]) -> None:
        """Check a document just opened, then the open documents its facts reach; a
        project's first index (seconds, in a big repository) shows as work-done
        progress where the client can show it."""
        if path is not None:  # the index answers for every open document, this one too
            notebook = self.workspace.get_notebook_document(notebook_uri=uri)
            self.projects.opened(path, self.notebook_raw(notebook) if notebook is not None
                                 else buffer_bytes(self.workspace.get_text_document(uri).source))
        first = False
        if path is not None and self.shows_progress():
            try:
                first = self.projects.first_index(path)
            except (ConfigError, CatalogError):
                pass  # the check says so
        if first and path is not None:
            where = self.projects.where(path)
            underway = self.first_indexes.get(where)
            if underway is not None:  # another document of the project is being indexed
                await underway.wait()
            else:
                self.first_indexes[where] = asyncio.Event()
                try:
                    await self.first_index(path, lambda: self.check_now(uri, check))
                finally:
                    self.first_indexes.pop(where).set()
                self.recheck_dependents(uri)
                return
        self.check_now(uri, check)
        self.recheck_dependents(uri)

    async def first_index(self, path: str, check: Callable[[], None]) -> None:
        """Index the project of ``path`` and ``check`` the document inside a
        work-done progress (none if the client does not accept the token in time)."""
        token = f"mplint-index-{next(self.tokens)}"
        created = asyncio.ensure_future(self.work_done_progress.create_async(token))
        # Not wait_for: a cancelled request future breaks pygls when its answer comes.
        done, _ = await asyncio.wait({created}, timeout=PROGRESS_CREATE_S)
        if not done or created.exception() is not None:
            if not done:  # a late answer made the token: close it, so no client waits on it
                created.add_done_callback(lambda answer: self._close_unused(token, answer))
            check()
            return
        root = self.projects.root_of(path)
        name = root.name if root is not None else os.path.basename(path)
        started = time.monotonic()
        self.work_done_progress.begin(token, types.WorkDoneProgressBegin(
            title="mplint", message=f"indexing {name}", percentage=0))
        try:
            self.guarded(self.projects.ready, path)  # the long part
            self.work_done_progress.report(token, types.WorkDoneProgressReport(
                message=f"checking {os.path.basename(path)}", percentage=90))
            check()
        finally:
            self.work_done_progress.end(token, types.WorkDoneProgressEnd(
                message=f"indexed {name} in {time.monotonic() - started:.1f} s"))

    def _close_unused(self, token: str, answer: "asyncio.Future[Any]") -> None:
        """Begin and end at once a progress token the client made after the index had
        started without it (the client answered too late to show the index)."""
        if answer.cancelled() or answer.exception() is not None:
            return
        self.work_done_progress.begin(token, types.WorkDoneProgressBegin(title="mplint"))
        self.work_done_progress.end(token, types.WorkDoneProgressEnd(message="indexed"))

    def shows_progress(self) -> bool:
        """Whether the client announced ``window.workDoneProgress``."""
        window = self.client_capabilities.window
        return bool(window is not None and window.work_done_progress)

    def check_document(self, uri: str) -> None:
        """Check an open document: a Python file's buffer or a notebook."""
        if self.workspace.get_notebook_document(notebook_uri=uri) is not None:
            self.check_notebook(uri)
        elif uri in self.workspace.text_documents:
            self.check_text(uri)

    def edited(self, uri: str) -> None:
        """Check the edited document, then the open documents whose facts depend on it."""
        self.check_document(uri)
        self.recheck_dependents(uri)

    def saved(self, uri: str) -> None:
        """Index the saved file's project again, check the file, then the open
        documents whose facts depend on it."""
        path = to_fs_path(uri)
        if path is None:
            return
        try:
            self.projects.saved(path)
        except (ConfigError, CatalogError) as exc:
            self.tell(str(exc))
            return
        self.check_document(uri)
        self.recheck_dependents(uri)

    def closed(self, uri: str, path: Optional[str]) -> None:
        """A closed document's buffer no longer stands for its file: the open
        documents that read it, or took facts from it, are checked against the disk."""
        if path is None:
            return
        self.projects.closed(path)
        self.recheck_dependents(uri)

    def open_documents(self) -> List[Tuple[str, str]]:
        """(uri, path) of each open Python file and notebook."""
        found = []
        for uri in list(self.workspace.text_documents):
            path = self.python_file(uri)
            if path is not None:
                found.append((uri, path))
        for uri in list(self.workspace.notebook_documents):
            path = to_fs_path(uri)
            if path is not None:
                found.append((uri, path))
        return found

    def recheck_dependents(self, changed: str) -> None:
        """Publish again the diagnostics of the other open documents whose last
        result depended on what changed: a file their checks read, a fact their
        project gives them, or their configuration (:meth:`Projects.stale`); the
        others keep theirs."""
        for uri, path in self.open_documents():
            if uri == changed or uri in self.pending:  # one waiting is checked soon anyway
                continue
            try:
                stale = self.projects.stale(path)
            except (ConfigError, CatalogError) as exc:
                self.tell(str(exc))
                continue
            if stale:
                self.guarded(self.check_document, uri)

    # -- code actions ----------------------------------------------------------------------------
    def code_actions(self, params: types.CodeActionParams) -> List[types.CodeAction]:
        uri = params.text_document.uri
        notebook = self.workspace.get_notebook_document(cell_uri=uri)
        path = to_fs_path(notebook.uri) if notebook is not None else self.python_file(uri)
        if path is None:
            return []
        wanted = params.context.only
        targets = [f for f in (finding_of(d) for d in params.context.diagnostics) if f is not None and f.fix]
        fixes: List[Tuple[Finding, FixOutcome]] = []
        if _asked(wanted, types.CodeActionKind.QuickFix):
            for target in sorted(targets, key=lambda f: (f.fix != Safety.SAFE, f.line, f.col)):
                fixes.append((target, self._fix(path, uri, notebook, target)))
        actions = []
        for target, outcome in fixes:
            edit = self.workspace_edit(uri, notebook, outcome)
            if edit is None:
                continue
            entry = self.projects.catalog.get(target.rule)
            title = f"Fix {target.rule}" + (f" ({entry.name})" if entry is not None else "")
            if target.fix == Safety.UNSAFE:
                title += " (unsafe)"
            actions.append(types.CodeAction(
                title=title, kind=types.CodeActionKind.QuickFix, edit=edit,
                diagnostics=[d for d in params.context.diagnostics if finding_of(d) == target],
                is_preferred=target.fix == Safety.SAFE))
        if _asked(wanted, FIX_ALL):
            fix_all = self._fix(path, uri, notebook, None)
            edit = self.workspace_edit(uri, notebook, fix_all)
            if edit is not None:
                actions.append(types.CodeAction(title="mplint: fix all safely fixable problems",
                                                kind=FIX_ALL, edit=edit))
        return actions

    def _fix(self, path: str, uri: str, notebook: Optional[types.NotebookDocument],
             target: Optional[Finding]) -> FixOutcome:
        """One finding's fix, or every safe fix (``target`` None), of the buffer."""
        if notebook is not None:
            raw = self.notebook_raw(notebook)
        else:
            raw = buffer_bytes(self.workspace.get_text_document(uri).source)
        try:
            if self.projects.excluded(path):
                return FixOutcome(path, original=raw)
            if target is None:
                return self.projects.fix_all(path, raw)
            return self.projects.fix_one(path, raw, target)
        except (ConfigError, CatalogError) as exc:
            self.tell(str(exc))
            return FixOutcome(path, original=raw)

    def workspace_edit(self, uri: str, notebook: Optional[types.NotebookDocument],
                       outcome: FixOutcome) -> Optional[types.WorkspaceEdit]:
        """The edits that turn the buffer (or each changed cell) into the fixed code."""
        if not outcome.changed or outcome.fixed is None:
            return None
        changes: Dict[str, List[types.TextEdit]] = {}
        if notebook is None:
            doc = self.workspace.get_text_document(uri)
            fixed = buffer_text(outcome.path, outcome.fixed)
            if fixed is None:
                return None
            changes[uri] = text_edits(doc, fixed)
        else:
            texts = notebook_texts(outcome.fixed)
            for (cell_uri, doc), text in zip(self.notebook_cells(notebook), texts):
                if text != doc.source:
                    changes[cell_uri] = text_edits(doc, text)
        return types.WorkspaceEdit(changes=changes) if changes else None


# -- conversions ---------------------------------------------------------------------------------
def _position(lines: Sequence[str], line: int, col: int, codec: PositionCodec) -> types.Position:
    """The client's position of a 0-based line and code-point column."""
    if line >= len(lines):
        return types.Position(line=len(lines), character=0)
    text = lines[line].rstrip("\r\n")
    return types.Position(line=line, character=codec.client_num_units(text[:max(col, 0)]))


def diagnostic(finding: Finding, lines: Sequence[str], codec: PositionCodec,
               docs_url: Optional[str] = None) -> types.Diagnostic:
    """The finding as the editor shows it; its link is the ``docs-url`` setting's
    address when one is set (as SARIF's ``helpUri``)."""
    start = _position(lines, finding.line - 1, finding.col - 1, codec)
    end = _position(lines, finding.end_line - 1, finding.end_col - 1, codec)
    message = finding.message
    if finding.fix == Safety.UNSAFE:
        message += " (unsafe fix available)"
    return types.Diagnostic(
        range=types.Range(start=start, end=end),
        message=message,
        severity=_SEVERITY.get(finding.severity, types.DiagnosticSeverity.Warning),
        code=finding.rule,
        code_description=types.CodeDescription(href=rule_help_uri(finding.rule, docs_url)),
        source=SOURCE,
        data=finding.to_dict(),
    )


def finding_of(diag: types.Diagnostic) -> Optional[Finding]:
    """The finding a diagnostic of this server carries back in a code action request."""
    if diag.source != SOURCE or not isinstance(diag.data, dict):
        return None
    try:
        return Finding(**diag.data)
    except TypeError:
        return None


def text_edits(doc: TextDocument, fixed: str) -> List[types.TextEdit]:
    lines = lines_of(doc.source)
    codec = doc.position_codec

    def convert(edit: Edit) -> types.TextEdit:
        return types.TextEdit(range=types.Range(start=_position(lines, *edit.start, codec),
                                                end=_position(lines, *edit.end, codec)),
                              new_text=edit.text)

    return [convert(e) for e in line_edits(doc.source, fixed)]


def _asked(only: Optional[Sequence[Any]], kind: str) -> bool:
    """Whether a request limited to the kinds ``only`` wants actions of ``kind``
    (kinds are hierarchical: ``source`` asks for ``source.fixAll.mplint``)."""
    if not only:
        return True
    return any(kind == str(k.value if hasattr(k, "value") else k)
               or kind.startswith(str(k.value if hasattr(k, "value") else k) + ".") for k in only)


# -- the server ---------------------------------------------------------------------------------
def make_server(projects: Optional[Projects] = None) -> MplintServer:
    server = MplintServer(projects)

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    async def did_open(ls: MplintServer, params: types.DidOpenTextDocumentParams) -> None:
        uri = params.text_document.uri
        await ls.opening(uri, ls.python_file(uri), ls.check_text)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: MplintServer, params: types.DidChangeTextDocumentParams) -> None:
        ls.check_later(params.text_document.uri, ls.edited)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls: MplintServer, params: types.DidSaveTextDocumentParams) -> None:
        ls.check_now(params.text_document.uri, ls.saved)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: MplintServer, params: types.DidCloseTextDocumentParams) -> None:
        uri = params.text_document.uri
        ls.drop_pending(uri)
        ls.logged.pop(uri, None)
        ls.publish(uri, [], None)
        ls.closed(uri, ls.python_file(uri))

    @server.feature(types.NOTEBOOK_DOCUMENT_DID_OPEN)
    async def notebook_open(ls: MplintServer, params: types.DidOpenNotebookDocumentParams) -> None:
        uri = params.notebook_document.uri
        await ls.opening(uri, to_fs_path(uri), ls.check_notebook)

    @server.feature(types.NOTEBOOK_DOCUMENT_DID_CHANGE)
    def notebook_change(ls: MplintServer, params: types.DidChangeNotebookDocumentParams) -> None:
        structure = params.change.cells.structure if params.change.cells is not None else None
        for closed in (structure.did_close or []) if structure is not None else []:
            ls.publish(closed.uri, [], None)
        ls.check_later(params.notebook_document.uri, ls.edited)

    @server.feature(types.NOTEBOOK_DOCUMENT_DID_SAVE)
    def notebook_save(ls: MplintServer, params: types.DidSaveNotebookDocumentParams) -> None:
        ls.check_now(params.notebook_document.uri, ls.saved)

    @server.feature(types.NOTEBOOK_DOCUMENT_DID_CLOSE)
    def notebook_close(ls: MplintServer, params: types.DidCloseNotebookDocumentParams) -> None:
        uri = params.notebook_document.uri
        ls.drop_pending(uri)
        ls.logged.pop(uri, None)
        for cell in params.cell_text_documents:
            ls.publish(cell.uri, [], None)
        ls.closed(uri, to_fs_path(uri))

    @server.feature(types.TEXT_DOCUMENT_CODE_ACTION, types.CodeActionOptions(
        code_action_kinds=[types.CodeActionKind.QuickFix, FIX_ALL], resolve_provider=False))
    def code_action(ls: MplintServer, params: types.CodeActionParams) -> List[types.CodeAction]:
        return ls.code_actions(params)

    return server
