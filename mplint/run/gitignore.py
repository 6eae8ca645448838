"""One folder's .gitignore, judged as git judges it (dir.c and wildmatch.c).

pathspec answers "does a pattern match this path or a folder above it", which cannot
tell ``*`` then ``!lib/`` (git walks lib/ and judges each file in it again) from
``build/`` then ``!build/keep.py`` (git never looks inside build/), and it misreads
``lib/**/`` and ``[[:upper:]]``. Whether a folder above a path is ignored is the
walk's concern (:mod:`mplint.run.discovery`); this module judges one path.
"""

from __future__ import annotations

import re
from typing import Callable, List, Optional, Pattern, Tuple, Union


#: one .gitignore line: the regex (for ``fullmatch``) of the path relative to the
#: .gitignore's folder or of the name, whether it ignores (``!`` re-includes), whether
#: it matches folders only, whether it matches the name only
_Rule = Tuple[List[str], bool, bool, bool]

#: the character classes git's wildmatch knows, as the ASCII ranges of its C locale
_CLASSES = {"alnum": "a-zA-Z0-9", "alpha": "a-zA-Z", "blank": " \\t", "cntrl": "\\x00-\\x1f\\x7f",
            "digit": "0-9", "graph": "!-~", "lower": "a-z", "print": " -~",
            "punct": re.escape("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"), "space": " \\t\\n\\r\\x0b\\x0c",
            "upper": "A-Z", "xdigit": "0-9a-fA-F"}


def _git_rule(line: str) -> Optional[_Rule]:
    """One .gitignore line as git's dir.c reads it, or None for a blank, a comment or a
    pattern that can never match."""
    end = len(line)  # trailing spaces go, unless escaped with a backslash
    i = 0
    while i < len(line):
        if line[i] == "\\":
            i += 1
            end = len(line)
        elif line[i] != " ":
            end = len(line)
        elif end == len(line):
            end = i
        i += 1
    line = line[:end]
    if not line or line.startswith("#"):
        return None
    ignores = not line.startswith("!")
    if not ignores:
        line = line[1:]
    folders_only = line.endswith("/")
    if folders_only:
        line = line[:-1]
    name_only = "/" not in line  # "*.py" matches a name at any depth, "/x" or "a/b" the path
    line = line[1:] if line.startswith("/") else line
    pieces = wildmatch_pieces(line) if line else None
    if pieces is None:
        return None
    return pieces, ignores, folders_only, name_only


def wildmatch_pieces(glob: str) -> Optional[List[str]]:
    """git's wildmatch with WM_PATHNAME as the pieces of a regex for ``fullmatch``,
    each a wildcard of :data:`WILDCARDS` or the regex of exactly one character:
    ``*``, ``?`` and ``[...]`` stay within one path segment; ``**/``, ``/**/`` and
    ``/**`` cross them."""
    out: List[str] = []
    i, n = 0, len(glob)
    while i < n:
        char = glob[i]
        if char == "*":
            j = i
            while j < n and glob[j] == "*":
                j += 1
            if j - i > 1 and (i == 0 or glob[i - 1] == "/") and (j == n or glob[j] == "/"):
                if out and out[-1] == "(?:.*/)?":  # "**/**/" is "**/", "**/**" is "**"
                    out.pop()
                out.append(".*" if j == n else "(?:.*/)?")  # any folders, or everything inside
                j += j < n
            else:
                out.append("[^/]*")
            i = j
            continue
        if char == "?":
            out.append("[^/]")
        elif char == "[":
            bracket = _bracket(glob, i)
            if bracket is None:
                return None
            part, i = bracket
            out.append(part)
        elif char == "\\":
            if i + 1 == n:
                return None
            i += 1
            out.append(re.escape(glob[i]))
        else:
            out.append(re.escape(char))
        i += 1
    return out


def _bracket(glob: str, start: int) -> Optional[Tuple[str, int]]:
    """The ``[...]`` at ``glob[start]`` as a regex and the index of its ``]``; None where
    git gives up on the whole pattern (no ``]``, an unknown ``[:class:]``)."""
    i, n = start + 1, len(glob)
    negated = i < n and glob[i] in "!^"
    i += negated
    items: List[str] = []
    previous: Optional[str] = None  # the last single character, which may open a range
    first = True
    while True:
        if i >= n:
            return None
        char = glob[i]
        if char == "]" and not first:
            break
        first = False
        if char == "\\":
            i += 1
            if i >= n:
                return None
            items.append(re.escape(glob[i]))
            previous = glob[i]
        elif char == "-" and previous is not None and i + 1 < n and glob[i + 1] != "]":
            i += 1
            if glob[i] == "\\":
                i += 1
                if i >= n:
                    return None
            if previous <= glob[i]:
                items.append(re.escape(previous) + "-" + re.escape(glob[i]))
            previous = None
        elif char == "[" and glob.startswith(":", i + 1):
            close = glob.find("]", i + 2)
            if close < 0:
                return None
            if close == i + 2 or glob[close - 1] != ":":  # not a class: a plain "["
                items.append(re.escape("["))
                previous = "["
            else:
                named = _CLASSES.get(glob[i + 2:close - 1])
                if named is None:
                    return None
                items.append(named)
                previous = None
                i = close
        else:
            items.append(re.escape(char))
            previous = char
        i += 1
    if not items:
        return ("[^/]" if negated else "(?!)"), i
    return "(?!/)[" + "^" * negated + "".join(items) + "]", i


#: the regex of each wildcard a pattern's pieces hold: a segment's ``*``, ``**/``
#: (any folders) and a final ``**`` (everything)
STAR, FOLDERS, ANYTHING = "[^/]*", "(?:.*/)?", ".*"
WILDCARDS = (STAR, FOLDERS, ANYTHING)

#: a regex with this many wildcards may backtrack for ``len(path) ** count`` steps
#: (``*a*a*...*b``); such a pattern is matched by :class:`LinearMatch` instead
RISKY_WILDCARDS = 3


class LinearMatch:
    """A pattern matched in time linear in the path for each piece, as git's wildmatch
    is: the set of positions reachable after each piece is carried forward (an NFA),
    never a backtracking search. Duck-types ``Pattern.fullmatch`` for one path."""

    def __init__(self, pieces: List[str]) -> None:
        self._steps = [piece if piece in WILDCARDS else re.compile(piece, re.DOTALL) for piece in pieces]

    def fullmatch(self, text: str) -> bool:
        reached = [0]  # sorted positions of the text the pieces so far can end at
        n = len(text)
        for step in self._steps:
            if not reached:
                return False
            if step == ANYTHING:
                reached = list(range(reached[0], n + 1))
            elif step == FOLDERS:  # nothing, or up to and including any later "/"
                after = {i + 1 for i in range(reached[0], n) if text[i] == "/"}
                reached = sorted(after.union(reached))
            elif step == STAR:  # on to the end of the segment each position is in
                out: List[int] = []
                for start in reached:
                    if out and start <= out[-1]:
                        continue  # in a segment already run to its end
                    end = text.find("/", start)
                    out.extend(range(start, (n if end < 0 else end) + 1))
                reached = out
            else:
                assert not isinstance(step, str)
                reached = [i + 1 for i in reached if i < n and step.fullmatch(text[i])]
        return bool(reached) and reached[-1] == n


def linear_or_regex(pieces: List[str]) -> Union[LinearMatch, Pattern[str]]:
    """The compiled pattern: a regex, or a :class:`LinearMatch` for a risky one."""
    if sum(piece in WILDCARDS for piece in pieces) >= RISKY_WILDCARDS:
        return LinearMatch(pieces)
    return re.compile("".join(pieces), re.DOTALL)


class IgnoreFile:
    """The patterns of one folder's .gitignore (with .ignore and .git/info/exclude),
    judging a path itself: whether a folder above it is ignored is the walk's concern."""

    def __init__(self, lines: List[str]) -> None:
        rules = [rule for rule in map(_git_rule, lines) if rule is not None]
        self.negates = any(not ignores for _, ignores, _, _ in rules)
        #: with "!" patterns: each rule, last first (the last one that matches decides)
        self._last_first = [(linear_or_regex(pieces), ignores, folders_only, name_only)
                            for pieces, ignores, folders_only, name_only in reversed(rules)
                            ] if self.negates else []
        risky = [rule for rule in rules if isinstance(linear_or_regex(rule[0]), LinearMatch)]
        #: without "!" patterns, the risky ones, each alone (they cannot join a regex)
        self._risky = [(LinearMatch(pieces), folders_only, name_only)
                       for pieces, _, folders_only, name_only in risky] if not self.negates else []

        # without them any match ignores: one regex for each kind of rule (the common case)
        def combined(folders_only: bool, name_only: bool) -> Optional[Pattern[str]]:
            chosen = [f"(?:{''.join(pieces)})" for pieces, _, only_folders, only_name in rules
                      if (only_folders, only_name) == (folders_only, name_only) and
                      not isinstance(linear_or_regex(pieces), LinearMatch)]
            return re.compile("|".join(chosen), re.DOTALL) if chosen and not self.negates else None

        self._any = (combined(False, True), combined(False, False))
        self._folders = (combined(True, True), combined(True, False))

    def verdict(self, rel: str, is_dir: bool) -> Optional[bool]:
        """git's answer for the path itself: True when ignored, False when re-included
        by ``!``, None when no pattern matches it."""
        name = rel.rpartition("/")[2]
        if not self.negates:
            for by_name, by_path in (self._any, self._folders) if is_dir else (self._any,):
                if (by_name is not None and by_name.fullmatch(name)) or \
                        (by_path is not None and by_path.fullmatch(rel)):
                    return True
            for matcher, folders_only, name_only in self._risky:
                if (is_dir or not folders_only) and matcher.fullmatch(name if name_only else rel):
                    return True
            return None
        for regex, ignores, folders_only, name_only in self._last_first:
            if (is_dir or not folders_only) and regex.fullmatch(name if name_only else rel):
                return ignores
        return None


def is_risky(pattern: str) -> bool:
    """Whether a pattern's regex (pathspec's or ours) could backtrack for ever:
    :data:`RISKY_WILDCARDS` wildcards or more."""
    rule = _git_rule(pattern)
    return rule is not None and sum(piece in WILDCARDS for piece in rule[0]) >= RISKY_WILDCARDS


def path_or_parent_matcher(patterns: List[str]) -> Callable[[str], bool]:
    """Whether patterns exclude a path (posix, relative, ``/`` after a folder) or a
    folder above it, as an ``exclude`` list is read, in linear time for each piece of
    each pattern: for lists that hold a risky pattern (:func:`is_risky`), where
    pathspec's regexes could backtrack for ever. A folder above that a pattern
    excludes excludes the path; else the path's own verdict (the last pattern that
    matches it) decides."""
    rules = IgnoreFile(patterns)

    def matches(path: str) -> bool:
        is_dir = path.endswith("/")
        parts = path.rstrip("/").split("/")
        for count in range(1, len(parts) + 1):
            verdict = rules.verdict("/".join(parts[:count]), is_dir=is_dir or count < len(parts))
            if verdict:
                return True
        return False

    return matches
