"""Project facts: where the whole project sets a dtype policy or enables the graph rewrite.

Real projects set the policy in ``train.py`` and build the model in ``model.py``,
and pre-commit names only the changed files. So before checking, mplint indexes
every source file of the project (the git repository holding the checked paths, else
the nearest folder above them with pyproject.toml, setup.cfg or setup.py), whatever
paths were named. The index
is cheap: a byte test picks the few files that mention a policy or rewrite API,
and only those are parsed, with a walk that collects facts and runs no check.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Dict, FrozenSet, Iterable, Iterator, List, Optional, Sequence, Set, Tuple

from mplint.core import reads
from mplint.run.code_stamp import code_stamp
from mplint.run.dependency_pins import ProjectPins, project_pins
from mplint.run.discovery import discover
from mplint.run.garbage import collected_per_file
from mplint.run.import_targets import import_statements, statement_targets
from mplint.run.library import (
    is_configured_library_module, is_library_module, is_packaged, package_surface, program_weighs_precision,
)
from mplint.run.module_paths import absolute_import, importable, module_names, on_path, root_package
from mplint.run.policy_switches import only_in_library_switches
from mplint.run.program import (ProgramModel, ProgramResult, Route, WholeSearchNeeded, content_view, glance_view,
                                import_words, program_view, scope_view)
from mplint.run.reexports import Exports, HandedOn, exports_of
from mplint.run.summaries import ModuleSummary, summarize
from mplint.run.version_routes import guarded_modules, guarded_names
from mplint.semantic.test_modules import is_test_path
from mplint.semantic.visibility import is_private_name
from mplint.semantic.vocabulary import MAYBE_MIXED, MIXED_POLICIES, REWRITE_WORDS
from mplint.core.prefilter import POLICY_CALL_WORDS

if TYPE_CHECKING:  # pragma: no cover (facts imports libcst; a cached run must not)
    import tokenize
    from mplint.semantic.facts import ModuleFacts
    from mplint.semantic.versions import ApiUse
    from mplint.semantic.names import NameResolver

MARKERS = ("pyproject.toml", "setup.cfg", "setup.py", ".git")
INDEX_SUFFIXES = (".py", ".ipynb")

#: Every API that sets a global policy or enables the rewrite has one of these in
#: its name (``set_global_policy``, ``experimental.set_policy``,
#: ``config.set_dtype_policy``, ``enable_mixed_precision_graph_rewrite``, the
#: grappler option, the environment switch). A file without them sets nothing.
REWRITE_TOKENS = tuple(word.encode() for word in REWRITE_WORDS)
INDEX_TOKENS = (*POLICY_CALL_WORDS, *REWRITE_TOKENS)


def may_set_facts(raw: bytes) -> bool:
    return any(token in raw for token in INDEX_TOKENS)


def mentions_policy_in_code(path: str, raw: bytes) -> bool:
    """Whether the file's code (not its comments) names a policy or rewrite API: such a
    file may be a program that sets a policy, so the project is not only a library.

    A commented-out ``# set_global_policy("mixed_float16")`` in a library's example is
    not a program, nor is a library's switch that sets the policy from its function's
    parameter (:mod:`mplint.run.policy_switches`). Strings still count (``os.environ[...]``,
    the grappler option); text that cannot be tokenized counts, to stay on the side the
    index took before.
    """
    if path.endswith(".py") and program_weighs_precision(raw):
        return True  # a program that imports mixed_precision chose its policy
    if not may_set_facts(raw):
        return False
    import io
    import tokenize

    if path.endswith(".ipynb"):
        from mplint.core.source_kinds import load_source

        try:
            source = load_source(path, raw).program()
        except Exception:  # an unreadable file: checking it reports why
            return True
        if source is None:
            return False
        if any(word in line for line in source.shell for word in _INDEX_WORDS):
            return True  # a notebook's ``%env`` or ``!`` line
        tokens = tokenize.generate_tokens(io.StringIO(source.text).readline)
    else:  # the tokenizer reads the coding cookie itself (no libcst on a cached run)
        tokens = tokenize.tokenize(io.BytesIO(raw).readline)
    try:
        for token in _code_tokens(tokens):
            if any(word in token.string for word in _INDEX_WORDS):
                return path.endswith(".ipynb") or not (
                    only_in_dead_private_functions(raw) or only_in_library_switches(path, raw))
    except (tokenize.TokenError, SyntaxError, ValueError, UnicodeDecodeError):
        return True
    return False


def _code_tokens(tokens: Iterable["tokenize.TokenInfo"]) -> Iterator["tokenize.TokenInfo"]:
    """The tokens that are code: no comment, and no string that is a statement on its
    own (a docstring, or a bare string used as a comment: ``\"\"\"call
    set_global_policy("mixed_float16") before building\"\"\"`` documents, never runs)."""
    import tokenize

    starts = (tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT, tokenize.ENCODING)
    previous: Optional[int] = None
    pending: List[tokenize.TokenInfo] = []  # the strings that opened a logical line
    for token in tokens:
        if token.type in (tokenize.COMMENT, tokenize.NL):
            continue
        if pending and token.type == tokenize.STRING:
            pending.append(token)  # ``"a" "b"``: one string
            continue
        if pending and token.type not in (tokenize.NEWLINE, tokenize.ENDMARKER):
            yield from pending  # the string is part of an expression
        if token.type == tokenize.STRING and (previous is None or previous in starts):
            pending = [token]
        else:
            pending = []
            yield token
        previous = token.type


def only_in_dead_private_functions(raw: bytes) -> bool:
    """Every line of the module naming a policy or rewrite API lies in a private function
    or method (``def _setup_mixed_precision``) that the module's code never names again
    (its one call commented out): dead code, no program that sets a policy. Parsed with
    :mod:`ast` only for the few files that name such an API."""
    import ast

    if b"def _" not in raw:
        return False
    for line in raw.split(b"\n"):  # a mention in top-level code: no parse needed
        if line[:1] not in (b" ", b"\t") and any(token in line.split(b"#", 1)[0] for token in INDEX_TOKENS):
            return False
    try:
        tree = ast.parse(raw)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    private = [node for node in ast.walk(tree) if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
               and is_private_name(node.name)]
    if not private:
        return False
    named: Set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            named.add(node.id)
        elif isinstance(node, ast.Attribute):
            named.add(node.attr)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            named.add(node.value)  # getattr(self, "_setup")
    dead = [(node.lineno, node.end_lineno or node.lineno) for node in private if node.name not in named]
    lines = raw.split(b"\n")
    for number, line in enumerate(lines, 1):
        code = line.split(b"#", 1)[0]
        if any(token in code for token in INDEX_TOKENS) and not any(a <= number <= b for a, b in dead):
            return False
    return bool(dead)


#: the largest program file read for its Keras spellings (the index reads no bigger)
_EVIDENCE_BYTES = 2_000_000
_INDEX_WORDS = tuple(token.decode() for token in INDEX_TOKENS)


def find_root(paths: Sequence[str], *, markerless: bool = True) -> Optional[Path]:
    """The folder whose files are one program: the repository holding every checked path
    (the nearest folder with ``.git``), else the nearest folder above them holding a
    project marker.

    A repository's sub-projects (a monorepo's ``pkg_a/pyproject.toml``) share one root, so a
    script in one that sets the policy governs the models it imports from another, and a
    run from a sub-project sees what a run from the repository's top sees; settings stay
    per sub-project (:mod:`mplint.run.hierarchy`). With no marker above (a zip download, a Kaggle or Colab copy), the root is the
    folder the user named or the current folder holding the paths, as ruff does
    (``markerless=False``: None instead, for callers with no current folder of the
    user's, such as an editor). The home folder and the file-system root never count
    (a dotfiles repository there would make every script under it one project).
    """
    existing = [os.path.abspath(p) for p in paths if os.path.exists(p)]
    if not existing:
        return None
    try:
        start = Path(os.path.commonpath(existing))
    except ValueError:  # paths on different drives share no folder
        return None
    if start.is_file():
        start = start.parent
    home = Path.home()
    above = []
    for folder in (start, *start.parents):
        if folder == home:
            break
        above.append(folder)
    repository = next((folder for folder in above if (folder / ".git").exists()), None)
    if repository is not None:
        return repository
    marked = next((folder for folder in above if any((folder / marker).exists() for marker in MARKERS)), None)
    if marked is not None:
        return marked
    return _markerless_root(start, existing) if markerless else None


def _markerless_root(start: Path, existing: List[str]) -> Optional[Path]:
    """A tree with no marker: the current folder when it holds the checked paths, else
    the one folder named on the command line; never the home folder or ``/``."""
    cwd = Path(os.getcwd())
    if start == cwd or cwd in start.parents:
        root: Optional[Path] = cwd
    elif len(existing) == 1 and os.path.isdir(existing[0]):
        root = start
    else:
        return None
    if root is None or root == Path.home() or root.parent == root:
        return None
    return root


@dataclass(frozen=True)
class FileFacts:
    """What one file contributes to the project: the policies it sets, the rewrite,
    and the modules it imports (``a.b``; relative ones keep their dots, ``.model``;
    ``=a.b`` for that module alone), which say whose code its policy governs."""

    policies: Tuple[str, ...] = ()
    rewrite: bool = False
    imports: Tuple[str, ...] = ()
    #: TensorFlow and Keras names it binds by importing them (:mod:`reexports`)
    exports: Exports = ()
    #: the names it imports that other project modules hand on, as they were when it was
    #: indexed (``ProjectFacts.taken``): its facts are stale when that changes
    taken: Exports = ()
    #: its bytes name a policy or rewrite API (:func:`may_set_facts`): a program of the
    #: project may set a policy here, so the project is not only a library
    mentions_policy: bool = field(default=False, compare=False)
    #: the modules it imports under a version guard (:func:`version_routes.guarded_names`)
    guarded: Tuple[str, ...] = ()
    #: False: only its bytes were read (:func:`byte_facts`), not parsed, so the policies it
    #: sets are unknown; a one-file run keeps them all the same, by content, for the files
    #: it leaves unparsed, so the next run reads none of their bytes again
    parsed: bool = True

    @property
    def empty(self) -> bool:
        return not self.policies and not self.rewrite

    def to_json(self) -> list:
        return [list(self.policies), self.rewrite, list(self.imports), [list(e) for e in self.exports],
                [list(e) for e in self.taken], self.mentions_policy, list(self.guarded), self.parsed]

    @classmethod
    def from_json(cls, data: list) -> "FileFacts":
        return cls(tuple(data[0]), bool(data[1]), tuple(data[2]), tuple((str(a), str(b)) for a, b in data[3]),
                   tuple((str(a), str(b)) for a, b in data[4]), bool(data[5]), tuple(data[6]), bool(data[7]))


def byte_facts(path: str, raw: bytes, *, parsed: bool = True) -> FileFacts:
    """What a file's bytes say without a parse, scanned once per content and kept in its
    index entry: the TensorFlow and Keras names it hands on (:func:`reexports.exports_of`),
    the modules it imports under a version guard, and whether its code names a policy
    API. ``parsed=False``: the file may set a policy but is left unparsed for now."""
    return FileFacts(exports=exports_of(raw), guarded=guarded_names(raw),
                     mentions_policy=mentions_policy_in_code(path, raw), parsed=parsed)


def governs(importer: str, facts: FileFacts, path: str, root: Optional[Path]) -> bool:
    """Whether the file ``importer`` (which sets a policy or the rewrite) runs the
    code of ``path``: it imports that module, or a package holding it."""
    return _matches(_resolved_imports(importer, facts, root), importer, path, root)


def _resolved_imports(importer: str, facts: FileFacts, root: Optional[Path]) -> List[Tuple[str, bool]]:
    """``(absolute module name, exact)`` for each import of ``importer``."""
    out = []
    for imported in facts.imports:
        exact = imported.startswith(EXACT)
        name = absolute_import(imported[len(EXACT):] if exact else imported, importer, root)
        if name:
            out.append((name, exact))
    return out


def _matches(imports: List[Tuple[str, bool]], importer: str, path: str, root: Optional[Path]) -> bool:
    """Whether one of ``importer``'s imports names the module at ``path``."""
    targets = importable(path, root)
    for name, exact in imports:
        for target, folder in targets:
            if (target == name or (not exact and target.startswith(name + "."))) \
                    and on_path(folder, importer, root):
                return True
    return False


#: marks an import that runs that module only (``from a.b import c`` runs ``a.b``),
#: where ``import a.b`` or ``from a import b`` may be a package holding more modules
EXACT = "="


@dataclass
class ProjectFacts:
    """Facts of every indexed file, by absolute path; handed to each checked file."""

    root: Optional[Path] = None
    files: Dict[str, FileFacts] = field(default_factory=dict)
    #: the TensorFlow and Keras versions the project's dependency files pin, by folder
    pins: ProjectPins = field(default_factory=ProjectPins)
    #: answers of rewriting() and each importer's absolute imports, by path
    _rewriting: Dict[str, List[Tuple[str, FileFacts]]] = field(default_factory=dict, repr=False, compare=False)
    _imports: Dict[str, List[Tuple[str, bool]]] = field(default_factory=dict, repr=False, compare=False)
    #: (path, content digest) -> what a program file spells of the Keras generation
    _spellings: Dict[Tuple[str, str], Tuple["ApiUse", ...]] = field(default_factory=dict, repr=False, compare=False)
    #: which code the policies set in the project reach (see :mod:`program`)
    program: Optional[ProgramResult] = field(default=None, repr=False, compare=False)
    #: the folder other files are named from in messages (where the user ran mplint;
    #: None: the project root): a file outside it is named in full, as ruff does
    shown_from: Optional[Path] = None
    #: TensorFlow and Keras names each file binds by importing them, by path
    exports: Dict[str, Exports] = field(default_factory=dict)
    _handed_on: Optional[HandedOn] = field(default=None, repr=False, compare=False)
    #: the project is judged as a library (see :meth:`library_for`): the root's
    #: ``library`` setting, else the guess
    library: bool = False
    #: the root configuration's ``library`` setting (None: guess)
    library_setting: Optional[bool] = None
    #: no program of the project (tests aside) names a policy API: a library's users set it
    policy_free: bool = False
    #: the project declares a distribution (:func:`library.is_packaged`)
    packaged: bool = False
    #: an unpackaged project's package modules meant to be imported, by absolute path
    #: (:func:`library.package_surface`; empty unless the guess may ask for it)
    surface: FrozenSet[str] = frozenset()
    #: files the index could not parse within the run's ``file-timeout``, by path, with
    #: what their check says: their facts are unknown (:mod:`mplint.run.index_budget`)
    unindexed: Dict[str, str] = field(default_factory=dict)
    #: where the project is judged as a library, its Python files, by absolute path: where a
    #: library module looks for the code that uses its layers (``analysis.output_uses``)
    python_files: Tuple[str, ...] = ()

    def display(self, key: str) -> str:
        base = self.shown_from if self.shown_from is not None else self.root
        if base is not None:
            try:
                return Path(key).relative_to(base).as_posix()
            except ValueError:
                pass
        return key

    def apply(self, facts: "ModuleFacts", path: str) -> None:
        """Fill ``facts`` with what the *other* files of the project do."""
        policies: set = set()
        policy_files: Tuple[str, ...] = ()
        rewrite_files: List[str] = []
        own = os.path.abspath(path)
        every_route: List[Route] = []
        facts.project_root = str(self.root) if self.root is not None else None
        facts.project_files = self.python_files
        if self.program is not None:
            governance = self.program.governance(own)
            facts.project_by_function = {}
            facts.program_reached = frozenset(governance.by_function)
            for function, routes in governance.by_function.items():
                reaching = {policy: route for policy, route in routes.items() if not _set_in(route, own)}
                policies.update(reaching)
                every_route += reaching.values()
                facts.project_by_function[function] = (frozenset(reaching), self._describe_all(reaching.values()))
            policy_files = self._describe_all(every_route)
            facts.project_setter_functions = governance.setters
            facts.project_dead_setters = governance.dead_setters
            facts.project_part_classes = governance.parts
            facts.project_trained_models = governance.trained
            facts.project_optimizer_factories = governance.factories
            facts.project_optimizer_params = governance.optimizer_params
            facts.project_arguments = governance.arguments
            facts.project_set_fields = governance.set_fields
            facts.project_mixed_calls = {
                function: [(self.place(where, line), bound) for where, line, bound in sites]
                for function, sites in governance.mixed_calls.items()}
            facts.project_layer_packages = governance.layer_packages
            facts.project_rewrite_programs = {
                function: (policy, self.place(where, line))
                for function, (policy, where, line) in governance.rewrite_programs.items()}
            if governance.scaling_reached is not None:
                facts.project_scaling_reached = self.place(*governance.scaling_reached)
            facts.project_scaling_overrides = {
                method: (self.place(base, line), label, receiver)
                for method, (base, line, label, receiver) in governance.scaling_overrides.items()}
        for key, _ in self.rewriting(path):
            rewrite_files.append(self.display(key))
        facts.project_policies = frozenset(policies)
        facts.project_policy_files = policy_files
        facts.project_rewrite_files = tuple(sorted(rewrite_files))
        if every_route:
            governing = self._governing_evidence(every_route, own)
            if governing:
                facts.versions = dataclasses.replace(facts.versions, governing=governing)
                facts.keras_version = facts.versions.keras_generation

    def _governing_evidence(self, routes: Sequence[Route], own: str) -> Tuple[Tuple[str, Tuple["ApiUse", ...]], ...]:
        """Per program file that may set the policy governing the checked file's code (the
        routes' setters, and every other file of the project that sets a policy: a route
        keeps one setter per policy), its place and what it spells of the Keras generation
        (:func:`program_evidence`); read through the keyed reads, so a cached result
        follows those files. (Imported here: a run answered from the cache never parses.)"""
        from mplint.core.notebooks import Notebook
        from mplint.core.source import SourceError
        from mplint.semantic.keras_version import program_evidence

        places = {r.path: self.place(r.path, r.line) for r in sorted(routes, key=lambda r: (r.path, -r.line))}
        for key, item in self.files.items():
            if key != own and key not in places and (item.policies or (not item.parsed and item.mentions_policy)):
                places[key] = self.display(key)
        out = []
        for path in sorted(places):
            found = reads.read(path, _EVIDENCE_BYTES)
            if found is None:
                return ()
            spelled = self._spellings.get((path, found[1]))
            if spelled is None:
                text = found[0].decode("utf-8", "surrogateescape")
                if path.endswith(".ipynb"):
                    try:
                        text = Notebook.load(path, found[0]).program
                    except SourceError:
                        return ()
                spelled = self._spellings[(path, found[1])] = program_evidence(text)
            out.append((places[path], spelled))
        return tuple(out)

    def absolute_from(self, importer: str) -> Callable[[str], str]:
        """Makes a relative module name (``..compat.keras``) absolute from ``importer``."""
        return functools.partial(absolute_import, importer=importer, root=self.root)

    def taken(self, importer: str, imports: Iterable[str]) -> Exports:
        """(name, meaning) for each name in ``imports`` (``FileFacts.imports``) that a
        project module hands on."""
        if not imports:
            return ()
        meanings = self.reexports().meanings
        absolute = self.absolute_from(importer)
        names = {absolute(name[len(EXACT):] if name.startswith(EXACT) else name) for name in imports}
        return tuple(sorted((name, meaning) for name in names for meaning in meanings(name)))

    def reexports(self) -> HandedOn:
        """What the project's modules hand on of TensorFlow and Keras (see
        :mod:`mplint.run.reexports`)."""
        if self._handed_on is None:
            self._handed_on = HandedOn(self.exports, self.root)
        return self._handed_on

    def library_for(self, path: str, setting: Optional[bool] = None, *, configured: bool = False) -> bool:
        """Whether ``path``'s public layers and models are a library's, which its users
        may run under a mixed policy (:mod:`mplint.run.library`). ``setting``: the
        ``library`` value of the file's own configuration when ``configured`` (a
        sub-project's decides over the root's), else the root's.

        ``library = true``: a package module, or a module beside the scripts that is no
        script; ``false``: none. Otherwise the guess, where no program names a policy
        API: every package module of a packaged project, the packages' surface of one
        that is not. Never a test, a notebook, or a file under examples/, docs/..."""
        if not configured:
            setting = self.library_setting
        if setting is not None:
            return setting and is_configured_library_module(path, self.root)
        if not self.policy_free or self.root is None:
            return False
        if self.packaged:
            return is_library_module(path, self.root)
        return os.path.abspath(path) in self.surface

    def overrides_scaling(self, path: str) -> bool:
        """Whether a method of this file drops the loss scaling of the base method it
        overrides (``program.Governance.scaling_overrides``)."""
        return self.program is not None and bool(self.program.governance(os.path.abspath(path)).scaling_overrides)

    def may_be_mixed(self, path: str) -> bool:
        """Whether a mixed policy, or one chosen at run time, set elsewhere reaches
        this file's code."""
        if self.program is None:
            return False
        return bool(self.program.governance(os.path.abspath(path)).policies & MAYBE_MIXED)

    def place(self, path: str, line: int) -> str:
        """``src/proj/train.py:14``; ``notebooks/train.ipynb:cell 3:1`` for a notebook,
        as findings in notebooks are placed (the program line is the cells' joined code)."""
        if path.endswith(".ipynb"):
            from mplint.core.notebooks import Notebook
            from mplint.core.source import SourceError

            try:
                with open(path, "rb") as handle:
                    cell, in_cell = Notebook.load(path, handle.read()).locate(line)
                return f"{self.display(path)}:cell {cell}:{in_cell}"
            except (OSError, SourceError):
                pass
        return f"{self.display(path)}:{line}"

    def _describe_all(self, routes: Iterable[Route]) -> Tuple[str, ...]:
        """Each setting place once, by its shortest route (the same line reached from
        several functions is one place); places reached by calls before those reached
        only by importing modules, then by route length."""
        shortest: Dict[Tuple[str, int], Route] = {}
        for route in routes:
            known = shortest.get((route.path, route.line))
            if known is None or _route_order(route) < _route_order(known):
                shortest[(route.path, route.line)] = route
        ordered = sorted(shortest.values(), key=lambda route: (_route_order(route), route.path, route.line))
        return tuple(self._describe(route) for route in ordered)

    def _describe(self, route: Route) -> str:
        """``src/proj/train.py:14, reached through main() -> fit()``."""
        where = self.place(route.path, route.line)
        if len(route.chain) > 1:
            where += ", reached through " + " -> ".join(route.chain)
        return where

    def rewriting(self, path: str) -> List[Tuple[str, FileFacts]]:
        """The other files that enable the graph rewrite for ``path``'s code: one of the
        two imports the other (the policies that reach it are the program model's)."""
        own = os.path.abspath(path)
        found = self._rewriting.get(own)
        if found is None:
            mine = self.files.get(own)
            found = self._rewriting[own] = [
                (key, item) for key, item in self.files.items()
                if item.rewrite and key != own  # a file's own calls are its module facts
                and (self._governs(key, item, own) or (mine is not None and self._governs(own, mine, key)))
            ]  # the rest are other programs' (examples/, scripts/): not this code's
        return found

    def _governs(self, importer: str, facts: FileFacts, path: str) -> bool:
        """:func:`governs`, with each importer's imports made absolute once."""
        imports = self._imports.get(importer)
        if imports is None:
            imports = self._imports[importer] = _resolved_imports(importer, facts, self.root)
        return _matches(imports, importer, path, self.root)

    def digest(self) -> str:
        """Changes whenever a fact anywhere in the project changes (a cache key part)."""
        data = sorted((k, v.to_json()) for k, v in self.files.items())
        governed = {} if self.program is None else self.program.files_json()
        exports = sorted((k, [list(e) for e in v]) for k, v in self.exports.items())
        return hashlib.sha256(json.dumps([str(self.root), root_package(self.root), data, governed, self.pins.to_json(),
                                          str(self.shown_from), exports, self.library, self.library_setting,
                                          self.policy_free, self.packaged, sorted(self.surface),
                                          self.python_files]).encode()).hexdigest()

    def digest_for(self, path: str) -> str:
        """Changes whenever a fact the project gives ``path``'s checks changes (what
        :meth:`apply`, :meth:`rewriting`, :meth:`library_for` and the re-exports tell
        it), not when only other files' facts do: the language server re-checks an
        open file when it changes."""
        own = os.path.abspath(path)
        # A file the model does not answer for gets no facts from it, as an empty answer
        governed = None if self.program is None else \
            ProgramResult({own: self.program.governance(own)}).files_json()[own]
        rewriting = [(key, item.to_json()) for key, item in self.rewriting(own)]
        exports = sorted((k, [list(e) for e in v]) for k, v in self.exports.items())
        library = self.library_for(own)
        # a library module reads the files that may use its layers: a new one may
        files = self.python_files if library else ()
        return hashlib.sha256(json.dumps([str(self.root), root_package(self.root), str(self.shown_from), governed, rewriting,
                                          self.pins.to_json(), exports, library, files]).encode()).hexdigest()


def _route_order(route: Route) -> Tuple[int, int, Tuple[str, ...]]:
    """Routes through imported modules' top level (``a.py top level``) last, then the
    shorter first: a call chain says more about where the code runs than an import."""
    imports = sum(step.endswith(" top level") for step in route.chain[1:])
    return imports, len(route.chain), route.chain


def _set_in(route: Route, path: str) -> bool:
    """A policy set in the file itself: its module facts know that call already, with
    the branches it sits in (a flag that picks the policy or the rewrite). Not one a
    helper of the file sets from its parameters as a call site chose (``route.site``):
    the module facts know only that it may set anything."""
    return route.path == path and route.site is None


def index_source(path: str, raw: bytes, parsed: Optional[Dict[str, object]] = None,
                 project: Optional["ProjectFacts"] = None) -> FileFacts:
    """Parse one candidate file and collect its policy and rewrite facts.

    A file that cannot be read or parsed contributes nothing; checking it reports
    the error. ``parsed`` receives the parsed program, so checking the file later
    need not parse it again. ``project`` hands on what its modules re-export, as it
    does to a checked file (``from pkg import keras``).
    """
    from mplint.core.source import SourceError, parse  # libcst only when needed
    from mplint.core.source_kinds import load_source

    try:
        source = load_source(path, raw).program()
        if source is None:
            return FileFacts()
        module = parse(source)
    except SourceError:
        return FileFacts()
    if parsed is not None:
        parsed[os.path.abspath(path)] = module
    found = _collect(module, path, project)
    taken = project.taken(path, found.imports) if project is not None else ()
    scanned = byte_facts(path, raw)
    return dataclasses.replace(found, exports=scanned.exports, taken=taken, mentions_policy=scanned.mentions_policy,
                               guarded=scanned.guarded)


def names_for(module, path: str, project: Optional["ProjectFacts"]) -> "NameResolver":
    """The module's import names, with what the project's modules hand on: the one way a
    file's names are read, for the index and for the check."""
    from mplint.semantic.names import NameResolver, collect_module_imports

    names = NameResolver()
    collect_module_imports(module, names)
    if project is not None:
        names.adopt_reexports(project.reexports().meanings, project.absolute_from(path),
                              module_names(path, project.root)[:1])
    return names


def _collect(module, path: str, project: Optional["ProjectFacts"]) -> FileFacts:
    from mplint.semantic.facts import FactsCollector, ModuleFacts
    from mplint.semantic.scopes import ScopeTracker
    from mplint.semantic.values import Evaluator
    from mplint.core.walker import Walker

    names = names_for(module, path, project)
    tracker = ScopeTracker(module, names)
    facts = ModuleFacts()
    evaluator = Evaluator(names)
    collector = FactsCollector(facts, names, tracker, evaluator)
    index = _ImportsVisitor()
    try:
        Walker([tracker, collector, index], lambda owner, exc: None).walk(module)
    except RecursionError:
        return FileFacts()
    # The module facts are the one detector of the policy and the rewrite: the index
    # keeps what they found, so the project and each file agree.
    return FileFacts(tuple(sorted(facts.policy_values())), facts.enables_rewrite, tuple(sorted(index.imports)))


class _ImportsVisitor:
    """What the index needs beyond the module facts: the modules the file imports
    (whose code its policy governs)."""

    def __init__(self) -> None:
        #: modules this file imports (see FileFacts.imports)
        self.imports: Set[str] = set()

    def visit_Import(self, node) -> None:
        from mplint.semantic.names import dotted_name

        for alias in node.names:
            name = dotted_name(alias.name)
            if name:
                self.imports.add(name)

    def visit_ImportFrom(self, node) -> None:
        import libcst as cst

        from mplint.semantic.names import dotted_name

        base = "." * len(node.relative) + (dotted_name(node.module) or "" if node.module else "")
        if base.strip("."):
            # `from pkg.mod import name` runs pkg.mod, not every module of pkg: exact
            self.imports.add(EXACT + base)
        if isinstance(node.names, cst.ImportStar):
            return
        for alias in node.names:  # `from pkg import module` imports pkg.module
            name = dotted_name(alias.name)
            if name:
                self.imports.add(base + name if base.endswith(".") else f"{base}.{name}")


def project_files(root: Path, settings) -> List[str]:
    """Every file of the project that could hold a fact (exclude and .gitignore apply)."""
    found = discover([str(root)], settings.root, settings.exclude, settings.respect_gitignore,
                     force_exclude=True, suffixes=INDEX_SUFFIXES)
    return found.files


def build_project(paths: Sequence[str], settings, cache=None, extra: Iterable[str] = (),
                  walked: Optional[List[str]] = None,
                  contents: Optional[Dict[str, bytes]] = None,
                  parsed: Optional[Dict[str, object]] = None, root: Optional[Path] = None,
                  budget: Optional[float] = None, jobs: int = 1) -> ProjectFacts:
    """Index the project holding ``paths`` (only ``paths`` when there is no project).

    ``cache`` (a :class:`mplint.run.cache.Cache`) keeps each file's facts by content;
    ``walked`` is the project's file list when the caller already walked its root;
    ``contents`` receives the bytes of the files read (and may already hold an
    editor's unsaved buffer, used instead of the disk), and ``parsed`` the modules
    parsed, so the check reads and parses each file once. ``root``: the project's
    folder when the caller knows it better than :func:`find_root` (a sample project
    inside another repository). ``budget``: the most seconds of CPU time the parse of
    one file may take (None: no limit), in ``jobs`` workers (:mod:`index_budget`).
    """
    with collected_per_file():
        return _build_project(paths, settings, cache, extra, walked, contents, parsed,
                              root if root is not None else find_root(paths), _Parses(budget, jobs))


@dataclass(frozen=True)
class _Parses:
    """How the index parses files: the per-file budget, and the workers it may use."""

    budget: Optional[float] = None
    jobs: int = 1


def _build_project(paths: Sequence[str], settings, cache, extra: Iterable[str], walked: Optional[List[str]],
                   contents: Optional[Dict[str, bytes]], parsed: Optional[Dict[str, object]],
                   root: Optional[Path], parses: _Parses = _Parses()) -> ProjectFacts:
    files: List[str] = []
    if root is not None:
        files = walked if walked is not None else project_files(root, settings)
    # Checked files first, under the names the check uses (it reuses what is read here).
    unique: Dict[str, str] = {}
    for path in [*extra, *files]:
        unique.setdefault(os.path.abspath(path), path)
    out = ProjectFacts(root, pins=project_pins(root, unique), shown_from=Path(os.getcwd()))
    # The program model answers for the checked files; for the whole project when
    # it is checked, or when the checked files are not known.
    checked = None if walked is not None or not extra else sorted(
        {os.path.abspath(p) for p in extra} & set(unique))
    checked_set = set(checked or ())
    checked_names = _ModuleWords(checked or (), root, lambda key: _content(key, unique, contents))
    others = SetterFacts(unique, cache, contents, parses)
    # Every file judged as mixed: where policies are set adds nothing, only the rewrite.
    assumed_mixed = settings.assume_policy in MIXED_POLICIES
    stamps: List[Tuple[str, int, int, int, int]] = []
    #: whether the project's programs (tests aside: they run its layers as users do)
    #: name a policy or rewrite API: a program sets its own policy
    programs_with_policies = False
    # First what every file hands on (a file's policy calls may name a re-exported keras),
    # then the facts, from the cache where what the file took is unchanged.
    read: List[Tuple[str, str, Optional[os.stat_result], Optional[bytes], Optional[FileFacts], Optional[FileFacts]]] = []
    #: each file's version-guarded imports (:func:`guarded_names`), from its index entry
    guarded: Dict[str, Tuple[str, ...]] = {}
    #: files whose byte facts were scanned in this run, not stored yet
    unstored: Set[str] = set()
    for key, path in unique.items():
        raw = contents.get(path) if contents is not None else None  # an editor's buffer
        try:
            st = os.stat(path) if raw is None else None
        except OSError:
            continue
        if st is None:  # an editor's buffer: its content is the stamp
            stamps.append((key + ":" + hashlib.sha256(raw or b"").hexdigest(), -1, 0, 0, 0))
        else:
            stamps.append((key, st.st_mtime_ns, st.st_size, st.st_ino, st.st_ctime_ns))
        item = cache.index_lookup(key, st) if cache is not None and st is not None else None
        scanned: Optional[FileFacts] = None  # its bytes' facts, when it was left unparsed
        if item is not None and not item.parsed:
            scanned, item = item, None
        stored: Optional[FileFacts] = None  # the entry for its content (a file touched, not changed)
        if item is None and scanned is None:
            raw = raw if raw is not None else _content(key, unique, contents)
            if raw is None:
                continue
            if contents is not None:
                contents[path] = raw
            stored = cache.index_get(key, raw) if cache is not None else None
            if stored is not None and not stored.parsed:
                scanned = stored
                cache.index_put(key, raw, stored, st)  # with its stamp now
            elif stored is None and not may_set_facts(raw):
                item = byte_facts(path, raw)
                if cache is not None:
                    cache.index_put(key, raw, item, st)
            elif stored is None and cache is not None and checked is not None:
                # a file that may set a policy, which a run of named files may leave
                # unparsed: its byte facts, scanned once, are stored below if it is
                scanned = byte_facts(path, raw, parsed=False)
                unstored.add(key)
        known = item if item is not None else scanned if scanned is not None else stored
        if not programs_with_policies and not is_test_path(key) and (
                known.mentions_policy if known is not None else _mentions_policy(key, path, raw, cache, unique, contents)):
            programs_with_policies = True
        exports = known.exports if known is not None else exports_of(raw or b"")
        if exports:
            out.exports[key] = exports
        names = known.guarded if known is not None else guarded_names(raw)
        if names:
            guarded[key] = names
        read.append((key, path, st, raw, item, scanned))
    out.pins.guarded = guarded_modules(unique, lambda key: _content(key, unique, contents), root,
                                       lambda key: guarded.get(key, ()))
    out.library_setting = settings.library
    out.policy_free = root is not None and not programs_with_policies
    out.packaged = root is not None and out.policy_free and is_packaged(root)
    if root is not None and out.policy_free and not out.packaged:
        out.surface = package_surface(unique, lambda key: _content(key, unique, contents), root)
    out.library = settings.library if settings.library is not None else \
        out.policy_free and (out.packaged or bool(out.surface))
    if out.library:
        out.python_files = tuple(sorted(key for key in unique if key.endswith(".py")))
    others.project = out
    out.reexports()  # once, before parses are forked
    # Each file's facts: from the cache, else parsed below, all together (within the budget).
    decided: List[Tuple[str, Optional[os.stat_result], Optional[bytes], Optional[FileFacts]]] = []
    for key, path, st, raw, item, scanned in read:
        if item is not None and item.taken != out.taken(key, item.imports):
            item = None  # a module it imports from hands on something else now
        if item is None:
            raw = raw if raw is not None else _content(key, unique, contents)
            if raw is None:
                continue
            item = cache.index_get(key, raw) if cache is not None else None
            if item is not None and (not item.parsed or item.taken != out.taken(key, item.imports)):
                item = None
            if item is None:
                if assumed_mixed and not may_enable_rewrite(raw):
                    continue  # its policies are not asked for (parsed when checked, if it is)
                if checked is not None and key not in checked_set and not (
                        may_enable_rewrite(raw) and checked_names.may_pair(key, raw)):
                    others.pending.add(key)  # parsed only if its policy may reach a checked file
                    if cache is not None and scanned is not None and key in unstored:  # for the next run
                        cache.index_put(key, raw, scanned, st)
                    continue
                decided.append((key, st, raw, None))
                continue
            if cache is not None:
                cache.index_put(key, raw, item, st)
        decided.append((key, st, raw, item))
    todo = [(key, unique[key], raw) for key, _, raw, item in decided if item is None and raw is not None]
    indexed = _index(out, todo, parses, parsed)
    for key, st, raw, item in decided:
        if item is None:
            item = indexed.get(key)
            if item is None:
                continue  # not indexed within the budget: what it sets is unknown
            if cache is not None and raw is not None:
                cache.index_put(key, raw, item, st)
        if item.empty or (assumed_mixed and not item.rewrite):
            continue
        if checked is None or key in checked_set or item.rewrite:
            out.files[key] = item
        else:
            others.known[key] = item
    if assumed_mixed:
        out.program = ProgramResult()  # every file is judged as mixed: what reaches it adds nothing
    else:
        out.program = _cached_program(out, others, unique, cache, contents, stamps, checked)
    return out


def _index(project: ProjectFacts, todo: List[Tuple[str, str, bytes]], parses: _Parses,
           parsed: Optional[Dict[str, object]]) -> Dict[str, FileFacts]:
    """:func:`index_source` for each ``(key, path, raw)``, within the run's budget; the
    files it did not finish go to ``project.unindexed``."""
    from mplint.run.index_budget import index_files

    def index_one(path: str, raw: bytes, keep: Optional[Dict[str, object]]) -> FileFacts:
        return index_source(path, raw, keep, project)

    if todo:
        _load_indexer()
    done = index_files(todo, index_one, parses.budget, parses.jobs, parsed)
    project.unindexed.update(done.skipped)
    return {key: item for key, item in done.facts.items() if isinstance(item, FileFacts)}


def _load_indexer() -> None:
    """Import what :func:`index_source` runs (libcst and the module facts) here, before
    the index forks its workers: each worker would otherwise import it again (a third of
    a second of CPU each, more than the parse of a file), and a pre-commit run forks
    one for every setter the program model asks about. A run that parses anything checks
    a file with them too, or costs one import here instead of one in a worker."""
    import mplint.core.source  # noqa: F401
    import mplint.core.source_kinds  # noqa: F401
    import mplint.core.walker  # noqa: F401
    import mplint.semantic.facts  # noqa: F401
    import mplint.semantic.scopes  # noqa: F401
    import mplint.semantic.values  # noqa: F401


def may_enable_rewrite(raw: bytes) -> bool:
    return any(token in raw for token in REWRITE_TOKENS)


#: an import after ``:`` or ``;`` on its line, which :func:`import_statements` does not read
_INLINE_IMPORT = re.compile(rb"[:;][ \t]*(?:from|import)[ \t]")


class _ModuleWords:
    """Whether another file may import a checked file, or be imported by one, told from
    their import statements before either is parsed. :func:`governs` pairs an importer
    with a module only through an import of the module or of a package above it, so a
    statement of one of the two files, read as Python reads it (:mod:`import_targets`),
    loads the other or a package holding it. A file that enables the graph rewrite and
    pairs so with no checked file is not one :meth:`ProjectFacts.rewriting` gives a
    checked file: it need not be indexed at once. Notebooks always pair (their code is
    JSON text), and so does a file with a statement that cannot be read."""

    def __init__(self, checked: Iterable[str], root: Optional[Path], read: Callable[[str], Optional[bytes]]) -> None:
        self.checked = list(checked)
        self.root = root
        self.read = read
        self._targets: Dict[str, Optional[FrozenSet[str]]] = {}

    def may_pair(self, key: str, raw: bytes) -> bool:
        if key.endswith(".ipynb"):
            return True
        for own in self.checked:
            mine = self.read(own)
            if mine is None or own.endswith(".ipynb") or self._loads(key, raw, own) or self._loads(own, mine, key):
                return True
        return False

    def _loads(self, importer: str, raw: bytes, path: str) -> bool:
        """Whether a statement of ``importer`` may load the module at ``path`` or a
        package above it (each target's packages run first, so both count)."""
        targets = self._statement_targets(importer, raw)
        if targets is None:
            return True
        return any(name in targets or any(name.startswith(target + ".") for target in targets)
                   for name, _ in importable(path, self.root))

    def _statement_targets(self, importer: str, raw: bytes) -> Optional[FrozenSet[str]]:
        """What the file's import statements may load (None: one cannot be read)."""
        if importer not in self._targets:
            if _INLINE_IMPORT.search(raw):  # ``if x: import m``, ``a = 1; import m``: not read
                self._targets[importer] = None
                return None
            found: Set[str] = set()
            for statement in import_statements(raw):
                names = statement_targets(statement, importer, self.root)
                if names is None:
                    self._targets[importer] = None
                    return None
                found.update(names)
            self._targets[importer] = frozenset(found)
        return self._targets[importer]


class SetterFacts:
    """The policies set by files other than the checked ones, in a run that checks
    named files (pre-commit, an editor): they matter only where a policy they set
    reaches a checked file, so each is parsed with libcst only when the program model
    asks for its policies, or finds that a policy it may set reaches one.

    Such files stay out of :attr:`ProjectFacts.files` (whose digest keys the results
    of the checked files), so a fact's place does not depend on what the cache held.
    Files that may enable the graph rewrite are indexed at once: which of them
    import a checked file is a fact of the checked file (``ProjectFacts.rewriting``).
    """

    def __init__(self, unique: Dict[str, str], cache, contents: Optional[Dict[str, bytes]],
                 parses: "_Parses" = _Parses()) -> None:
        self.unique = unique
        self.cache = cache
        self.contents = contents
        self.parses = parses
        #: facts the index cache held
        self.known: Dict[str, FileFacts] = {}
        #: files that may set a policy, not parsed yet
        self.pending: Set[str] = set()
        #: the project being indexed, for what its modules hand on
        self.project: Optional[ProjectFacts] = None

    @property
    def candidates(self) -> List[str]:
        return sorted(self.pending | set(self.known))

    def facts(self, key: str) -> FileFacts:
        """The file's facts, indexing it now if it is pending."""
        self.index([key])
        return self.known.get(key) or FileFacts()

    def index(self, keys: Iterable[str]) -> None:
        """Index those of ``keys`` that are pending, together: one batch of workers
        instead of one forked for each file the program model asks about."""
        todo: List[Tuple[str, str, bytes]] = []
        for key in sorted(set(keys) & self.pending):
            self.pending.discard(key)
            raw = _content(key, self.unique, self.contents)
            if raw is not None and self.project is not None:
                todo.append((key, self.unique.get(key, key), raw))
            else:
                self.known[key] = FileFacts()
        found = _index(self.project, todo, self.parses, None) if todo and self.project is not None else {}
        for key, _, raw in todo:
            item = found.get(key)
            if self.cache is not None and item is not None:
                self.cache.index_put(key, raw, item)  # by content: the next index reads it anyway
            self.known[key] = item or FileFacts()


def _cached_program(project: ProjectFacts, others: SetterFacts, unique: Dict[str, str], cache,
                    contents: Optional[Dict[str, bytes]], stamps: List[Tuple[str, int, int, int, int]],
                    checked: Optional[List[str]]) -> ProgramResult:
    """The program model's result, reused when no file it depends on changed: a
    pre-commit run after an edit elsewhere does not rebuild it."""
    now = {key: list(rest) for key, *rest in stamps}
    facts = sorted((k, v.to_json()) for k, v in project.files.items())
    # What modules hand on decides which calls set a policy in the files that take it.
    exports = sorted((k, [list(e) for e in v]) for k, v in project.exports.items())
    key = hashlib.sha256(json.dumps([code_stamp(), str(project.root), root_package(project.root), facts,
                                     exports]).encode()).hexdigest()
    # This run's files first (their own result, from an earlier pre-commit run), then
    # the whole project's (which answers for any files).
    scope = "" if checked is None else hashlib.sha256(os.fsencode("\0".join(sorted(checked)))).hexdigest()[:16]
    for slot in dict.fromkeys([scope, ""]):
        stored = cache.program_get(key, slot) if cache is not None else None
        if not (isinstance(stored, list) and len(stored) == 2 and isinstance(stored[0], dict)):
            continue
        found = ProgramResult.from_json(stored[1])
        before: Dict[str, list] = stored[0]
        stamped, changed = _changed_since(now, before, unique, contents)
        same_files = now.keys() == before.keys()  # a new module may answer a call that went nowhere
        # Named files: a file that now may set a policy may be a new setter (the key
        # holds only the checked files' facts).
        if checked is not None and any(may_set_facts(_content(k, unique, contents) or b"") for k in changed):
            continue
        if found is not None and same_files and found.answers_for(checked) \
                and found.still_valid(changed, lambda k: _import_words_of(k, unique, contents),
                                      lambda k: _content(k, unique, contents),
                                      lambda k, before: _view_now(k, before, unique, contents, cache)):
            if stamped != before:
                cache.program_put(key, [stamped, stored[1]], slot)
            return found
    result = _program(project, others, unique, cache, contents, checked)
    if cache is not None and not project.unindexed:  # never a result with facts the budget left unknown
        stamped = {k: [*stamp, _bytes_digest(k, unique, contents)] for k, stamp in now.items()}
        cache.program_put(key, [stamped, result.to_json()], scope)
    return result


def _changed_since(now: Dict[str, list], before: Dict[str, list], unique: Dict[str, str],
                   contents: Optional[Dict[str, bytes]]) -> Tuple[Dict[str, list], List[str]]:
    """The files changed since a result was stored with ``before`` (each file's stamp and
    its bytes' digest), and ``now``'s stamps with the digests to store again. A file whose
    stamp changed but whose bytes did not (touched, checked out again, left as it was by
    a formatter) is unchanged: the model reads only bytes. Only those files are read."""
    stamped: Dict[str, list] = {}
    changed: List[str] = []
    for k in sorted(now.keys() | before.keys()):
        known = before.get(k)
        stamp = now.get(k)
        if stamp is not None and isinstance(known, list) and len(known) == len(stamp) + 1 \
                and known[:-1] == stamp:
            stamped[k] = known
            continue
        digest = _bytes_digest(k, unique, contents) if stamp is not None else None
        if stamp is not None:
            stamped[k] = [*stamp, digest]
        if digest is None or not isinstance(known, list) or not known or known[-1] != digest:
            changed.append(k)
    return stamped, changed


def _bytes_digest(key: str, unique: Dict[str, str], contents: Optional[Dict[str, bytes]]) -> Optional[str]:
    """A file's bytes as a stored program result remembers them (None: unreadable)."""
    raw = _content(key, unique, contents)
    return None if raw is None else hashlib.blake2b(raw, digest_size=8).hexdigest()


def _view_now(key: str, before: str, unique: Dict[str, str], contents: Optional[Dict[str, bytes]],
              cache) -> Optional[str]:
    """The program model's view of a file now, of the kind it had (``before``)."""
    raw = _content(key, unique, contents)
    if raw is None:
        return None
    if before.startswith("raw:"):
        return content_view(raw)
    return program_view(raw, _summary(key, raw, unique, cache))


def _mentions_policy(key: str, path: str, raw: Optional[bytes], cache, unique: Dict[str, str],
                     contents: Optional[Dict[str, bytes]]) -> bool:
    """:func:`mentions_policy_in_code` for a file the stamp lookup missed: the facts
    indexed for its content when the cache has them."""
    raw = raw if raw is not None else _content(key, unique, contents)
    if raw is None:
        return False
    item = cache.index_get(key, raw) if cache is not None else None
    return item.mentions_policy if item is not None else mentions_policy_in_code(path, raw)


def _import_words_of(key: str, unique: Dict[str, str], contents: Optional[Dict[str, bytes]]) -> Set[str]:
    raw = _content(key, unique, contents)
    return import_words(raw) if raw is not None else set()


def _content(key: str, unique: Dict[str, str], contents: Optional[Dict[str, bytes]]) -> Optional[bytes]:
    """A project file's bytes: the ones already read (or an editor's buffer), else the disk's."""
    path = unique.get(key, key)
    raw = contents.get(path) if contents is not None else None
    if raw is None:
        try:
            with open(path, "rb") as handle:
                raw = handle.read()
        except OSError:
            return None
    return raw


def _program(project: ProjectFacts, others: SetterFacts, unique: Dict[str, str], cache,
             contents: Optional[Dict[str, bytes]], checked: Optional[List[str]] = None) -> ProgramResult:
    """The program model over the project's files, summarising modules on demand
    (each summary cached by content with the index, and kept for this run: the setter
    search and every rebuild of the model below ask for the same modules again)."""
    raws: Dict[str, Optional[bytes]] = {}
    summaries: Dict[str, ModuleSummary] = {}

    def read(key: str) -> Optional[bytes]:
        if key not in raws:
            raws[key] = _content(key, unique, contents)
        return raws[key]

    def summary_of(key: str) -> ModuleSummary:
        found = summaries.get(key)
        if found is None:
            raw = read(key)
            found = summaries[key] = ModuleSummary() if raw is None else _summary(key, raw, unique, cache)
        return found

    def policy_values(key: str) -> FrozenSet[str]:
        item = project.files.get(key) or others.facts(key)
        return frozenset(item.policies)

    # A run of named files searches for setters only where one may reach them (the
    # whole project when that scope cannot tell what the whole search tells).
    scout = ProgramModel(project.root, unique, summary_of, read, policy_values)
    scope = None if checked is None else scout.setter_scope(checked)

    def search(scope: Optional[Set[str]]) -> Tuple[ProgramModel, ProgramResult]:
        return _setter_search(project, others, scout, summary_of, read, policy_values, checked, scope)

    try:
        try:
            model, result = search(scope)
        except WholeSearchNeeded:
            scope = None
            model, result = search(None)
    except RecursionError:  # a pathological project: its cross-file facts are left out
        return ProgramResult()
    # A change to any of these files may change who sets what.
    result.read = sorted(set(result.read) | set(others.candidates))
    summarised = model.summaries()
    for key in result.read:
        raw = read(key)
        if raw is not None:
            summary = summarised.get(key)
            result.views[key] = program_view(raw, summary) if summary is not None else content_view(raw)
    if cache is not None:  # what the next cached run compares of the files not read (``still_valid``)
        searched = set(result.searched)
        for key in sorted(model.searched_importers() - set(result.read)):
            raw = read(key)
            if raw is not None:
                result.glances[key] = glance_view(raw, searched, set(result.sought.get(key, ())))
        result.sought = {key: names for key, names in result.sought.items() if key in result.glances}
        for key in sorted((scope or set()) - set(result.read)):  # what the scope was made of
            raw = read(key)
            if raw is not None:
                result.scoped[key] = scope_view(raw)
    return result


def _setter_search(project: ProjectFacts, others: SetterFacts, scout: ProgramModel,
                   summary_of: Callable[[str], ModuleSummary], read: Callable[[str], Optional[bytes]],
                   policy_values: Callable[[str], FrozenSet[str]], checked: Optional[List[str]],
                   scope: Optional[Set[str]]) -> Tuple[ProgramModel, ProgramResult]:
    """The program model built from the project's setters (those of ``scope`` only,
    when given: :meth:`ProgramModel.setter_scope`); ``scout`` lends its indexes of the
    project's import statements."""
    def kept(key: str) -> bool:
        return scope is None or key in scope

    setters = [key for key, item in project.files.items() if item.policies and kept(key)]
    setters += [key for key, item in others.known.items() if item.policies and kept(key)]
    # A file not parsed yet counts as a setter when its summary calls a policy setter;
    # one whose policy then reaches a checked file is parsed, and left out if the
    # index finds no policy there after all (the summary knows no names).
    maybe = [key for key in sorted(others.pending)
             if kept(key) and any(f.sets for f in summary_of(key).functions.values())]
    # The setter search asks the policies of each of these that passes one it cannot
    # read (``set_global_policy(name)``): the index answers them all at once.
    others.index(key for key in maybe if any(not literal for f in summary_of(key).functions.values()
                                             for _, literal in f.sets))
    while True:
        model = ProgramModel(project.root, scout.files, summary_of, read, policy_values)
        model.reuse_indexes(scout)
        result = model.build(setters + maybe, checked, scope)
        reaching = {route.path for path in checked or ()
                    for routes in result.governance(path).by_function.values() for route in routes.values()}
        others.index(key for key in maybe if key in reaching)  # together, as above
        wrong = [key for key in maybe if key in reaching and not others.facts(key).policies]
        if not wrong:
            return model, result
        maybe = [key for key in maybe if key not in wrong]


def _summary(key: str, raw: bytes, unique: Dict[str, str], cache) -> ModuleSummary:
    """The module's summary, cached by content with the index."""
    if cache is not None:
        found = ModuleSummary.from_json(cache.summary_get(key, raw))
        if found is not None:
            return found
    summary = summarize(_program_text(unique.get(key, key), raw))
    if cache is not None:
        cache.summary_put(key, raw, summary.to_json())
    return summary


def _program_text(path: str, raw: bytes) -> str:
    """The Python a file holds: a notebook's code cells as one program."""
    if path.endswith(".ipynb"):
        from mplint.core.source import SourceError
        from mplint.core.source_kinds import load_source

        try:
            source = load_source(path, raw).program()
        except SourceError:
            return ""
        return source.text if source is not None else ""
    return raw.decode("utf-8", "replace")
