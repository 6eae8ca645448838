"""What a file's check needs before any check runs: the per-file ignores, the prescan, and
for a file no selected check may report in, the whole of its check (decoded, its syntax
checked by CPython, its misspelt suppression codes warned of), all without libcst.

:class:`mplint.core.linter.Linter` asks these of every file it checks; a run asks them
first (:meth:`Gatekeeper.check_unparsed`), with the rules' gates as data
(:mod:`mplint.rule.gates`), so a pre-commit run on a file that never touches mixed
precision never imports libcst, the checks or the analyses (a third of a second).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Callable, Dict, FrozenSet, List, Optional, Sequence

from mplint.core import reads
from mplint.core.findings import FileError
from mplint.core.prefilter import Prescan, may_matter
from mplint.core.results import FileResult
from mplint.core.source import Source, SourceError, check_syntax
from mplint.core.suppression import scan as scan_suppressions
from mplint.run.gitignore import is_risky, path_or_parent_matcher
from mplint.semantic.test_modules import is_test_path
from mplint.semantic.vocabulary import MIXED_POLICIES

if TYPE_CHECKING:  # pragma: no cover
    from mplint.core.source_kinds import SourceKind
    from mplint.rule.catalog import RuleEntry
    from mplint.run.config import Settings
    from mplint.run.project import ProjectFacts


class Gatekeeper:
    """The checks of files with one configuration, up to the parse."""

    def __init__(self, settings: "Settings", catalog: Dict[str, "RuleEntry"], rule_ids: Sequence[str],
                 project: Optional["ProjectFacts"] = None, prescan: bool = True) -> None:
        self.settings = settings
        self.rule_ids = list(rule_ids)
        self.known_codes: FrozenSet[str] = frozenset(catalog)
        self.project = project
        #: off: every file goes to the checks (see ``Linter.prescan``)
        self.prescan = prescan
        self._assumes_mixed = settings.assume_policy in MIXED_POLICIES
        self._pfi = [(_path_matcher(pattern), frozenset(codes)) for pattern, codes in settings.per_file_ignores]

    def ignored_for(self, path: str) -> FrozenSet[str]:
        """The selected rules `per-file-ignores` turns off for ``path``."""
        if not self._pfi:
            return frozenset()
        try:
            rel = Path(path).resolve().relative_to(self.settings.root).as_posix()
        except ValueError:
            rel = Path(path).as_posix()
        ignored = set()
        for spec, codes in self._pfi:
            if spec(rel):
                for rule in self.rule_ids:
                    if any(code == "ALL" or rule.startswith(code) for code in codes):
                        ignored.add(rule)
        return frozenset(ignored)

    def scan(self, path: str, raw: bytes) -> Prescan:
        """What the file's bytes, the project and the config say before parsing."""
        elsewhere = self._assumes_mixed or (self.project is not None and self.project.may_be_mixed(path))
        return Prescan(raw, elsewhere, self.project is not None and self.project.overrides_scaling(path),
                       library=self.library(path))

    def library(self, path: str) -> bool:
        """Whether the file's public layers and models are judged as a library's: its
        own configuration's ``library`` setting decides over the root's and the guess."""
        if self.project is not None:
            return self.project.library_for(path, self.settings.library, configured=True)
        return bool(self.settings.library) and not is_test_path(path)  # no project: the setting alone

    def needs_checks(self, path: str, raw: bytes) -> bool:
        """Whether a selected check may report in the file, so its check needs the checks
        (and libcst): told by the rules' gates, without importing them."""
        if not self.prescan:
            return True
        if not may_matter(raw):
            return False
        from mplint.rule.gate_table import GATES
        from mplint.rule.gates import may_report

        ignored = self.ignored_for(path)
        return may_report(GATES, [rule for rule in self.rule_ids if rule not in ignored], self.scan(path, raw))

    def check_unparsed(self, src: "SourceKind") -> Optional[FileResult]:
        """The check of a file no selected check may report in (what ``Linter.check``
        finds in it), or None when one may."""
        result = FileResult(src.path)
        with reads.recording() as result.reads:
            if not self.needs_checks(src.path, src.raw):
                if may_matter(src.raw):
                    self.unparsed(src, result.errors)
                return result
        return None

    def unparsed(self, src: "SourceKind", errors: List[FileError]) -> None:
        """Check a file no check may report in without parsing it with libcst: only
        syntax-checked by CPython's parser (a tenth of the cost), so a broken file is
        still reported, and a misspelt suppression code still warned of."""
        try:
            source = src.program()
            if source is not None:
                check_syntax(source)
        except SourceError as exc:
            errors.append(src.error(FileError(src.path, str(exc))))
            return
        if source is None:
            # Nothing at all could be checked ("All checks passed!" would be a claim
            # about no code): why is worth a warning.
            errors += src.warnings()
        else:
            errors += [src.error(e) for e in self.unknown_code_warnings(source)]

    def unknown_code_warnings(self, source: Source) -> List[FileError]:
        if "noqa" not in source.text:
            return []
        return [FileError(source.path, f"line {line}: unknown rule {code} in a suppression comment", "warning")
                for line, code in scan_suppressions(source.text, self.known_codes).unknown]


def _path_matcher(pattern: str) -> Callable[[str], bool]:
    """Whether a `per-file-ignores` pattern covers a path: pathspec's reading, or a
    linear-time one where pathspec's regex could backtrack for ever."""
    if is_risky(pattern):
        return path_or_parent_matcher([pattern])
    import pathspec  # only where per-file-ignores are set: a run without them never loads it

    return pathspec.GitIgnoreSpec.from_lines([pattern]).match_file
