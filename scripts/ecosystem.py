#!/usr/bin/env python3
"""Run mplint over a pinned list of public repositories and compare with the last recorded run.

    python scripts/ecosystem.py --mirrors /work/.mirror --jobs 1            # run, print what changed
    python scripts/ecosystem.py --mirrors /work/.mirror --check             # exit 1 on any change
    python scripts/ecosystem.py --mirrors /work/.mirror --record            # accept this run
    python scripts/ecosystem.py --only keras-team/keras-cv --variant git    # one repository
    python scripts/ecosystem.py --labels ecosystem/labels.toml --from-baseline   # recall

Like ruff's ecosystem check: every change to the analysis is run over real code, and
every finding that appears or disappears is read. Each repository is checked out at
its pinned commit in a cache folder outside this repository (from a directory of
mirrors, or cloned from GitHub), and `mplint check --output-format json` runs from its
root as a user would, once in the clone and once in a copy without `.git` (a zip
download, a Kaggle or Colab copy). Findings are keyed by repository, path, rule and a
hash of the line's text, not by line number, so an edit above a finding does not show
as a change. `--labels` scores the run against hand-labelled real bugs (recall), the
labelled correct cases (false findings) and the judged findings (precision).
"""

from __future__ import annotations

import argparse
import collections
import concurrent.futures
import datetime
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Counter, Dict, Iterable, List, Optional, Sequence, TextIO, Tuple

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - mplint depends on tomli there
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_LIST = ROOT / "ecosystem" / "repositories.toml"
DEFAULT_BASELINE = ROOT / "ecosystem" / "baseline.json"
DEFAULT_CACHE = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "mplint-ecosystem"
VARIANTS = ("git", "nogit")
#: what a finding is known by across runs: path, rule, hash of the line's text (and the cell)
Key = Tuple[str, str, str, int]


@dataclass(frozen=True)
class Repository:
    """One pinned entry of the list: where the code comes from and why it is there."""

    name: str
    sha: str
    why: str
    kinds: Tuple[str, ...] = ()

    @property
    def folder_name(self) -> str:
        return self.name.replace("/", "+")


@dataclass
class Finding:
    path: str
    line: int
    col: int
    rule: str
    message: str
    text_hash: str
    cell: int = 0

    @property
    def key(self) -> Key:
        return (self.path, self.rule, self.text_hash, self.cell)

    def where(self) -> str:
        cell = f":cell {self.cell}" if self.cell else ""
        return f"{self.path}{cell}:{self.line}:{self.col}"


@dataclass
class VariantResult:
    """One `mplint check` of one checkout."""

    seconds: float
    exit_code: int
    findings: List[Finding] = field(default_factory=list)
    #: the lines mplint wrote to stderr about files it could not check
    errors: List[str] = field(default_factory=list)


@dataclass
class RepoResult:
    name: str
    sha: str
    variants: Dict[str, VariantResult] = field(default_factory=dict)
    #: why the repository could not be run (no mirror, clone failed), or ""
    unavailable: str = ""


class EcosystemError(Exception):
    """A problem with the list, a mirror or a checkout: one line for the user."""


# -- the list -------------------------------------------------------------------------------


def load_repositories(path: Path) -> List[Repository]:
    with path.open("rb") as handle:
        data = tomllib.load(handle)
    repositories = []
    for entry in data.get("repository", []):
        name, sha = entry.get("name", ""), entry.get("sha", "")
        if name.count("/") != 1 or len(sha) != 40:
            raise EcosystemError(f"{path}: each [[repository]] needs name = 'owner/name' and a 40-digit sha: {entry}")
        repositories.append(Repository(name, sha, entry.get("why", ""), tuple(entry.get("kinds", ()))))
    names = [repo.name for repo in repositories]
    duplicates = sorted({name for name in names if names.count(name) > 1})
    if duplicates:
        raise EcosystemError(f"{path}: listed twice: {', '.join(duplicates)}")
    return repositories


def select(repositories: Sequence[Repository], only: Sequence[str]) -> List[Repository]:
    """The entries `--only` names (owner/name, or the name alone), in list order."""
    if not only:
        return list(repositories)
    wanted = {name.lower() for name in only}
    chosen = [r for r in repositories if r.name.lower() in wanted or r.name.split("/")[1].lower() in wanted]
    found = {r.name.lower() for r in chosen} | {r.name.split("/")[1].lower() for r in chosen}
    missing = sorted(wanted - found)
    if missing:
        raise EcosystemError(f"not in the list: {', '.join(missing)}")
    return chosen


# -- bringing a repository -----------------------------------------------------------------


def _git(*args: str, cwd: Optional[Path] = None) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True)
    if done.returncode != 0:
        raise EcosystemError(f"git {' '.join(args[:3])}: {done.stderr.strip().splitlines()[-1:] or done.returncode}")
    return done.stdout


def _is_git_dir(path: Path) -> bool:
    return path.is_dir() and (path / "HEAD").is_file() and (path / "objects").is_dir()


def mirror_git_dir(mirrors: Path, repo: Repository) -> Optional[Path]:
    """The git directory of `repo` in a folder of mirrors, in the layouts mirrors come in.

    `owner+name/repo` (the sandbox's fetch), `owner+name/repo/.git` (a snapshot with a
    work tree), `owner+name.git`, `owner+name`, `owner/name.git`, `owner/name`.
    """
    owner, name = repo.name.split("/")
    flat = mirrors / repo.folder_name
    for candidate in (flat / "repo", flat / "repo" / ".git", mirrors / f"{repo.folder_name}.git", flat,
                      flat / ".git", mirrors / owner / f"{name}.git", mirrors / owner / name,
                      mirrors / owner / name / ".git"):
        if _is_git_dir(candidate):
            return candidate
    return None


def _has_commit(git_dir: Path, sha: str) -> bool:
    done = subprocess.run(["git", "--git-dir", str(git_dir), "cat-file", "-e", f"{sha}^{{commit}}"],
                          capture_output=True)
    return done.returncode == 0


def source_git_dir(repo: Repository, mirrors: Optional[Path], cache: Path) -> Path:
    """A git directory holding the pinned commit: the mirror's, or a clone in the cache."""
    if mirrors is not None:
        found = mirror_git_dir(mirrors, repo)
        if found is None:
            raise EcosystemError(f"no mirror of {repo.name} in {mirrors}")
        if not _has_commit(found, repo.sha):
            raise EcosystemError(f"the mirror of {repo.name} ({found}) lacks the pinned commit {repo.sha[:12]}")
        return found
    clone = cache / "git" / f"{repo.folder_name}.git"
    if not _is_git_dir(clone):
        clone.parent.mkdir(parents=True, exist_ok=True)
        _git("clone", "--bare", "--filter=blob:none", f"https://github.com/{repo.name}.git", str(clone))
    if not _has_commit(clone, repo.sha):
        _git("--git-dir", str(clone), "fetch", "--filter=blob:none", "origin", repo.sha)
    return clone


def checkout(repo: Repository, git_dir: Path, cache: Path, variant: str) -> Path:
    """The pinned tree in the cache: a clone (`git`) or the same files without `.git` (`nogit`).

    Made once per commit and kept; written to a temporary folder first, so an interrupted
    run never leaves half a tree that a later run would take for a whole one. The files
    are written from the commit's blobs, not by `git checkout`, because a snapshot may
    lack its largest blobs: those files are left out (and listed in `.ecosystem-missing`
    beside the tree), as they would be from a user's copy of the code that matters.
    """
    target = cache / variant / f"{repo.folder_name}@{repo.sha[:12]}"
    if target.is_dir():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = Path(tempfile.mkdtemp(prefix=f".{repo.folder_name}.", dir=target.parent))
    try:
        work = partial / "tree"
        if variant == "git":
            _git("clone", "--quiet", "--shared", "--no-checkout", str(git_dir), str(work))
            _git("-C", str(work), "update-ref", "--no-deref", "HEAD", repo.sha)
            _git("-C", str(work), "read-tree", repo.sha)
        else:
            work.mkdir()
        missing = export_tree(git_dir, repo.sha, work)
        (partial / "missing").write_text("".join(f"{path}\n" for path in missing), encoding="utf-8")
        work.rename(target)
        (partial / "missing").rename(target.with_name(target.name + ".missing"))
    finally:
        shutil.rmtree(partial, ignore_errors=True)
    return target


def export_tree(git_dir: Path, sha: str, into: Path) -> List[str]:
    """Write the commit's regular files under `into`; return the paths whose blobs are absent."""
    listing = _git("--git-dir", str(git_dir), "ls-tree", "-r", "-z", "--full-tree", sha)
    wanted: List[Tuple[str, str]] = []
    for entry in listing.split("\0"):
        if not entry:
            continue
        meta, path = entry.split("\t", 1)
        mode, kind, blob = meta.split()
        if kind == "blob" and mode in ("100644", "100755"):  # links and submodules stay out
            wanted.append((blob, path))
    batch = subprocess.Popen(["git", "--git-dir", str(git_dir), "cat-file", "--batch"],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert batch.stdin is not None and batch.stdout is not None
    missing = []
    try:
        for blob, path in wanted:
            batch.stdin.write(f"{blob}\n".encode())
            batch.stdin.flush()
            header = batch.stdout.readline().split()
            if len(header) < 3 or header[1] != b"blob":
                missing.append(path)
                continue
            data = batch.stdout.read(int(header[2]))
            batch.stdout.read(1)  # the newline after each object
            destination = into / path
            destination.parent.mkdir(parents=True, exist_ok=True)
            destination.write_bytes(data)
    finally:
        batch.stdin.close()
        batch.wait()
    return missing


# -- running mplint ------------------------------------------------------------------------


def line_text(root: Path, path: str, line: int, cell: int) -> str:
    """The text of the finding's line (in its cell, for a notebook), or "" where unreadable."""
    try:
        raw = (root / path).read_bytes()
        if cell:
            cells = json.loads(raw)["cells"]
            source = cells[cell - 1]["source"]
            text = "".join(source) if isinstance(source, list) else str(source)
        else:
            text = raw.decode("utf-8", errors="replace")
        lines = text.splitlines()
        return lines[line - 1] if 0 < line <= len(lines) else ""
    except (OSError, ValueError, LookupError, TypeError):
        return ""


def text_hash(text: str) -> str:
    """A line's identity across runs: its text without the indentation, hashed."""
    return hashlib.sha1(" ".join(text.split()).encode()).hexdigest()[:12]


def parse_report(root: Path, stdout: str) -> List[Finding]:
    findings = []
    for item in json.loads(stdout or "[]"):
        path, line, cell = str(item["path"]), int(item["line"]), int(item.get("cell") or 0)
        findings.append(Finding(path=path, line=line, col=int(item["col"]), rule=str(item["rule"]),
                                message=str(item["message"]), cell=cell,
                                text_hash=text_hash(line_text(root, path, line, cell))))
    findings.sort(key=lambda f: (f.path, f.cell, f.line, f.col, f.rule))
    return findings


def run_mplint(root: Path, command: Sequence[str], timeout: float) -> VariantResult:
    """`mplint check --output-format json` from the repository's root, as a user runs it.

    No result cache: a run must reflect the analysis as it is now.
    """
    argv = [*command, "check", "--output-format", "json", "--no-cache"]
    started = time.perf_counter()
    try:
        done = subprocess.run(argv, cwd=root, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return VariantResult(seconds=time.perf_counter() - started, exit_code=-1,
                             errors=[f"timed out after {timeout:.0f} s"])
    seconds = time.perf_counter() - started
    errors = [line for line in done.stderr.splitlines() if line.startswith("mplint: ")]
    try:
        findings = parse_report(root, done.stdout)
    except (ValueError, KeyError, TypeError):
        tail = done.stderr.strip().splitlines()[-1:] or ["no output"]
        return VariantResult(seconds, done.returncode, errors=errors + [f"no JSON report: {tail[0]}"])
    return VariantResult(seconds, done.returncode, findings, errors)


def run_repository(repo: Repository, mirrors: Optional[Path], cache: Path, variants: Sequence[str],
                   command: Sequence[str], timeout: float) -> RepoResult:
    result = RepoResult(repo.name, repo.sha)
    try:
        git_dir = source_git_dir(repo, mirrors, cache)
        for variant in variants:
            root = checkout(repo, git_dir, cache, variant)
            result.variants[variant] = run_mplint(root, command, timeout)
    except EcosystemError as error:
        result.unavailable = str(error)
    return result


# -- the baseline --------------------------------------------------------------------------


def result_to_json(result: RepoResult) -> dict:
    return {"sha": result.sha, "unavailable": result.unavailable,
            "variants": {name: asdict(variant) for name, variant in result.variants.items()}}


def result_from_json(name: str, data: dict) -> RepoResult:
    variants = {}
    for variant, raw in data.get("variants", {}).items():
        findings = [Finding(**item) for item in raw.get("findings", [])]
        variants[variant] = VariantResult(raw["seconds"], raw["exit_code"], findings, list(raw.get("errors", [])))
    return RepoResult(name, data["sha"], variants, data.get("unavailable", ""))


def load_baseline(path: Path) -> Dict[str, RepoResult]:
    if not path.is_file():
        return {}
    data = json.loads(path.read_text(encoding="utf-8"))
    return {name: result_from_json(name, raw) for name, raw in data.get("repositories", {}).items()}


def mplint_commit() -> str:
    done = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True, text=True)
    return done.stdout.strip() if done.returncode == 0 else "unknown"


def write_baseline(path: Path, results: Dict[str, RepoResult], order: Sequence[str]) -> None:
    """Write the baseline atomically, repositories in list order (stable diffs for review)."""
    ordered = [name for name in order if name in results] + sorted(set(results) - set(order))
    data = {"mplint_commit": mplint_commit(),
            "recorded": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "repositories": {name: result_to_json(results[name]) for name in ordered}}
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_text(json.dumps(data, indent=1, sort_keys=False) + "\n", encoding="utf-8")
    temporary.replace(path)


# -- comparing -----------------------------------------------------------------------------


@dataclass
class Change:
    """A finding or an error line that appeared (+) or disappeared (-) in one checkout."""

    repo: str
    variant: str
    sign: str
    rule: str
    where: str
    message: str


def _changed_findings(repo: str, variant: str, old: List[Finding], new: List[Finding]) -> List[Change]:
    old_count: Counter[Key] = collections.Counter(f.key for f in old)
    new_count: Counter[Key] = collections.Counter(f.key for f in new)
    changes = []
    for sign, findings, surplus in (("+", new, new_count - old_count), ("-", old, old_count - new_count)):
        for finding in findings:  # in file order; a key met n times more shows its first n
            if surplus[finding.key] > 0:
                surplus[finding.key] -= 1
                changes.append(Change(repo, variant, sign, finding.rule, finding.where(), finding.message))
    return changes


def compare(baseline: Dict[str, RepoResult], current: Iterable[RepoResult]) -> List[Change]:
    """What appeared and disappeared in each repository run now, against the recorded run."""
    changes: List[Change] = []
    for result in current:
        before = baseline.get(result.name)
        if result.unavailable:
            changes.append(Change(result.name, "-", "!", "unavailable", "", result.unavailable))
            continue
        if before is None:
            changes.append(Change(result.name, "-", "!", "new", "", "not in the baseline: run --record"))
            continue
        if before.sha != result.sha:
            changes.append(Change(result.name, "-", "!", "sha", "",
                                  f"pinned at {result.sha[:12]}, recorded at {before.sha[:12]}: run --record"))
            continue
        for variant, now in result.variants.items():
            then = before.variants.get(variant)
            if then is None:
                changes.append(Change(result.name, variant, "!", "new", "", "variant not in the baseline"))
                continue
            changes += _changed_findings(result.name, variant, then.findings, now.findings)
            for sign, lines in (("+", set(now.errors) - set(then.errors)), ("-", set(then.errors) - set(now.errors))):
                changes += [Change(result.name, variant, sign, "error", "", line) for line in sorted(lines)]
    return changes


def report_changes(changes: Sequence[Change], out: Optional[TextIO] = None) -> None:
    if not changes:
        print("no changes against the baseline", file=out)
        return
    by_repo: Dict[Tuple[str, str], List[Change]] = collections.defaultdict(list)
    for change in changes:
        by_repo[(change.repo, change.variant)].append(change)
    for (repo, variant), group in by_repo.items():
        if variant == "-":  # the whole repository: unavailable, new or re-pinned
            print(f"{repo}: {group[0].message}", file=out)
            continue
        plus = sum(c.sign == "+" for c in group)
        minus = sum(c.sign == "-" for c in group)
        print(f"{repo} [{variant}]: +{plus} -{minus}", file=out)
        per_rule = collections.Counter((c.rule, c.sign) for c in group)
        for rule in sorted({c.rule for c in group}):
            print(f"  {rule}: +{per_rule[(rule, '+')]} -{per_rule[(rule, '-')]}", file=out)
            for change in group:
                if change.rule == rule:
                    where = f"{change.where}: " if change.where else ""
                    print(f"    {change.sign} {where}{change.message}", file=out)
    totals = collections.Counter((c.rule, c.sign) for c in changes if c.sign in "+-")
    if totals:
        summary = ", ".join(f"{rule} +{totals[(rule, '+')]} -{totals[(rule, '-')]}"
                            for rule in sorted({rule for rule, _ in totals}))
        print(f"in all: {summary}", file=out)


def report_figures(results: Sequence[RepoResult], out: Optional[TextIO] = None) -> None:
    """Repositories, findings per rule and time, per variant."""
    for variant in VARIANTS:
        ran = [r for r in results if variant in r.variants]
        if not ran:
            continue
        rules: Counter[str] = collections.Counter()
        seconds = 0.0
        with_findings = errors = 0
        for result in ran:
            run = result.variants[variant]
            rules.update(f.rule for f in run.findings)
            seconds += run.seconds
            with_findings += bool(run.findings)
            errors += len(run.errors)
        per_rule = ", ".join(f"{rule} {count}" for rule, count in sorted(rules.items())) or "none"
        print(f"[{variant}] {len(ran)} repositories, {with_findings} with findings, "
              f"{sum(rules.values())} findings ({per_rule}), {errors} error lines, {seconds:.0f} s", file=out)


# -- labels: recall, false findings, precision --------------------------------------------


@dataclass(frozen=True)
class Label:
    repo: str
    sha: str
    path: str
    line: int
    end_line: int
    rules: Tuple[str, ...]
    bug: bool
    kind: str
    why: str
    cross_file: bool
    cell: int = 0
    #: no program in the repository sets a policy: the bug shows under a user's policy
    library: bool = False
    #: other places the same bug may be reported: "path:line" or "path:first-last"
    also: Tuple[str, ...] = ()

    def places(self) -> List[Tuple[str, int, int]]:
        places = [(self.path, self.line, self.end_line)]
        for place in self.also:
            path, _, lines = place.rpartition(":")
            first, _, last = lines.partition("-")
            places.append((path, int(first), int(last or first)))
        return places

    def matches(self, finding: Finding) -> bool:
        if self.rules and finding.rule not in self.rules:
            return False
        return any(finding.path == path and first <= finding.line <= last
                   and (path != self.path or finding.cell == self.cell)
                   for path, first, last in self.places())


@dataclass(frozen=True)
class Verdict:
    """A finding judged by reading the code: right or wrong."""

    repo: str
    path: str
    line: int
    rule: str
    right: bool
    why: str
    cell: int = 0

    def matches(self, finding: Finding) -> bool:
        return (finding.path, finding.line, finding.rule, finding.cell) == (self.path, self.line, self.rule, self.cell)


def load_labels(path: Path) -> Tuple[List[Label], List[Verdict]]:
    with path.open("rb") as handle:
        data = tomllib.load(handle)
    labels = []
    for entry in data.get("label", []):
        line = int(entry["line"])
        labels.append(Label(repo=entry["repo"], sha=entry["sha"], path=entry["path"], line=line,
                            end_line=int(entry.get("end_line", line)), rules=tuple(entry.get("rules", ())),
                            bug=bool(entry.get("bug", True)), kind=entry.get("kind", ""),
                            why=entry.get("why", ""), cross_file=bool(entry.get("cross_file", False)),
                            cell=int(entry.get("cell", 0)), library=bool(entry.get("library", False)),
                            also=tuple(entry.get("also", ()))))
    verdicts = [Verdict(repo=e["repo"], path=e["path"], line=int(e["line"]), rule=e["rule"],
                        right=bool(e["right"]), why=e.get("why", ""), cell=int(e.get("cell", 0)))
                for e in data.get("verdict", [])]
    return labels, verdicts


@dataclass
class Score:
    found: List[Label] = field(default_factory=list)
    missed: List[Label] = field(default_factory=list)
    #: labelled correct cases a finding lands on
    false_on_correct: List[Tuple[Label, Finding]] = field(default_factory=list)
    right: int = 0
    wrong: List[Tuple[str, Finding]] = field(default_factory=list)
    unjudged: List[Tuple[str, Finding]] = field(default_factory=list)


def score(labels: Sequence[Label], verdicts: Sequence[Verdict], results: Dict[str, RepoResult],
          variant: str = "git") -> Score:
    """Recall over the labelled bugs, findings on labelled correct cases, precision of all findings.

    A finding on a labelled bug counts as right without a verdict of its own.
    """
    outcome = Score()
    for label in labels:
        result = results.get(label.repo)
        if result is None or variant not in result.variants:
            raise EcosystemError(f"labelled repository {label.repo} has no {variant} run")
        if result.sha != label.sha:
            raise EcosystemError(f"{label.repo}: labelled at {label.sha[:12]}, run at {result.sha[:12]}")
        hits = [f for f in result.variants[variant].findings if label.matches(f)]
        if label.bug:
            (outcome.found if hits else outcome.missed).append(label)
        else:
            outcome.false_on_correct += [(label, f) for f in hits]
    for repo in sorted({label.repo for label in labels}):
        for finding in results[repo].variants[variant].findings:
            if any(l.repo == repo and l.bug and l.matches(finding) for l in labels):
                outcome.right += 1
                continue
            verdict = next((v for v in verdicts if v.repo == repo and v.matches(finding)), None)
            if verdict is None:
                outcome.unjudged.append((repo, finding))
            elif verdict.right:
                outcome.right += 1
            else:
                outcome.wrong.append((repo, finding))
    return outcome


def report_score(outcome: Score, labels: Sequence[Label], out: Optional[TextIO] = None) -> None:
    bugs = [label for label in labels if label.bug]
    for repo in sorted({label.repo for label in labels}):
        mine = [label for label in bugs if label.repo == repo]
        found = [label for label in outcome.found if label.repo == repo]
        correct = sum(1 for label in labels if label.repo == repo and not label.bug)
        false = sum(1 for label, _ in outcome.false_on_correct if label.repo == repo)
        print(f"{repo}: {len(found)}/{len(mine)} bugs found, {false} findings on {correct} correct cases", file=out)
    cross = [label for label in bugs if label.cross_file]
    cross_found = [label for label in outcome.found if label.cross_file]
    recall = len(outcome.found) / len(bugs) if bugs else 0.0
    print(f"recall {len(outcome.found)}/{len(bugs)} = {recall:.2f} "
          f"(cross-file {len(cross_found)}/{len(cross)}); "
          f"{len(outcome.false_on_correct)} findings on {len(labels) - len(bugs)} labelled correct cases", file=out)
    judged = outcome.right + len(outcome.wrong)
    precision = outcome.right / judged if judged else 0.0
    print(f"precision {outcome.right}/{judged} = {precision:.2f} of judged findings; "
          f"{len(outcome.unjudged)} findings not judged yet", file=out)
    for label in outcome.missed:
        print(f"  missed {label.repo} {label.path}:{label.line} [{label.kind}] {label.why}", file=out)
    for label, finding in outcome.false_on_correct:
        print(f"  false on correct {label.repo} {finding.where()} {finding.rule}: {label.why}", file=out)
    for repo, finding in outcome.wrong:
        print(f"  wrong {repo} {finding.where()} {finding.rule} {finding.message}", file=out)
    for repo, finding in outcome.unjudged:
        print(f"  unjudged {repo} {finding.where()} {finding.rule} {finding.message}", file=out)


# -- the command line ----------------------------------------------------------------------


def parse_args(argv: Optional[Sequence[str]]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--list", type=Path, default=DEFAULT_LIST, help="the pinned repositories (TOML)")
    parser.add_argument("--baseline", type=Path, default=DEFAULT_BASELINE, help="the recorded run (JSON)")
    parser.add_argument("--mirrors", type=Path, help="a folder of git mirrors to take repositories from "
                        "instead of cloning them from GitHub (owner+name/repo, owner+name.git, owner/name)")
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE,
                        help=f"where checkouts and clones are kept (default: {DEFAULT_CACHE})")
    parser.add_argument("--only", action="append", default=[], metavar="REPO",
                        help="run only this repository (owner/name or name; repeatable)")
    parser.add_argument("--variant", choices=(*VARIANTS, "both"), default="both",
                        help="check the clone (git), a copy without .git (nogit), or both (default)")
    parser.add_argument("--jobs", "-j", type=int, default=1, help="repositories run at once (default 1)")
    parser.add_argument("--timeout", type=float, default=1800, help="seconds one mplint run may take")
    parser.add_argument("--mplint", default=f"{sys.executable} -m mplint",
                        help="the mplint command (default: this interpreter's `-m mplint`)")
    parser.add_argument("--record", action="store_true", help="write this run to the baseline")
    parser.add_argument("--check", action="store_true", help="exit 1 when anything differs from the baseline")
    parser.add_argument("--labels", type=Path, help="score the run against labelled bugs (TOML)")
    parser.add_argument("--from-baseline", action="store_true",
                        help="run nothing; compare or score the recorded run (with --labels)")
    args = parser.parse_args(argv)
    if args.record and args.from_baseline:
        parser.error("--record needs a run; leave out --from-baseline")
    if args.jobs < 1:
        parser.error("--jobs must be at least 1")
    return args


def run_all(repositories: Sequence[Repository], args: argparse.Namespace) -> List[RepoResult]:
    variants = VARIANTS if args.variant == "both" else (args.variant,)
    command = args.mplint.split()
    cache = args.cache.resolve()

    def one(repo: Repository) -> RepoResult:
        result = run_repository(repo, args.mirrors, cache, variants, command, args.timeout)
        if result.unavailable:
            print(f"{repo.name}: unavailable: {result.unavailable}", file=sys.stderr, flush=True)
        for variant, run in result.variants.items():
            print(f"{repo.name} [{variant}]: {len(run.findings)} findings, {len(run.errors)} error lines, "
                  f"exit {run.exit_code}, {run.seconds:.1f} s", file=sys.stderr, flush=True)
        return result

    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        return list(pool.map(one, repositories))


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = parse_args(argv)
    try:
        repositories = select(load_repositories(args.list), args.only)
        baseline = load_baseline(args.baseline)
        if args.from_baseline:
            results = [baseline[r.name] for r in repositories if r.name in baseline]
        else:
            results = run_all(repositories, args)
        by_name = {result.name: result for result in results}
        report_figures(results)
        changes = [] if args.from_baseline else compare(baseline, results)
        if not args.from_baseline:
            report_changes(changes)
        if args.labels is not None:
            labels, verdicts = load_labels(args.labels)
            if args.only:  # score the repositories asked for; the rest of the list is not run
                labels = [label for label in labels if label.repo in by_name]
                verdicts = [verdict for verdict in verdicts if verdict.repo in by_name]
            labelled = {label.repo for label in labels}
            missing = sorted(labelled - set(by_name))
            if missing:
                raise EcosystemError(f"labelled repositories not run: {', '.join(missing)}")
            report_score(score(labels, verdicts, by_name), labels)
        if args.record:
            merged = {**baseline, **{r.name: r for r in results if not r.unavailable}}
            write_baseline(args.baseline, merged, [r.name for r in load_repositories(args.list)])
            print(f"recorded {len(results)} repositories in {args.baseline}", file=sys.stderr)
    except (EcosystemError, OSError, ValueError) as error:
        print(f"ecosystem: error: {error}", file=sys.stderr)
        return 2
    return 1 if args.check and changes else 0


if __name__ == "__main__":
    sys.exit(main())
