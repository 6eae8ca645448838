"""``mplint analyze policy``: the dtype policies that may govern each module and
function, with one route for each: the program model that findings such as "the mixed
policy is set in train.py:6, reached through main() -> build()" read, shown whole.

Text for a person, JSON for tools, and Graphviz ``dot`` (where each policy is set, the
calls it travels through, the functions it reaches).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

from mplint.run.config import ConfigError, load_settings
from mplint.rule.catalog import CatalogError, load_catalog

#: what ``analyze policy`` prints per function: (function, policy, where it is set, calls,
#: the call whose arguments chose the policy a helper sets, or "")
Reach = Tuple[str, str, str, Tuple[str, ...], str]


def main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(prog="mplint analyze", allow_abbrev=False,
                                     description="Show what mplint's program model knows.")
    sub = parser.add_subparsers(dest="what", metavar="WHAT", required=True)
    policy = sub.add_parser("policy", allow_abbrev=False,
                            help="the policies that may govern each module and function, and how")
    policy.add_argument("paths", nargs="*", default=["."], metavar="PATH")
    policy.add_argument("--output-format", choices=("text", "json", "dot"), default="text")
    policy.add_argument("--config", metavar="PATH", help="a pyproject.toml with a [tool.mplint] table")
    args = parser.parse_args(list(argv))
    try:
        reached, library, shown = policy_reach(args.paths, args.config)
    except (ConfigError, CatalogError) as exc:
        print(f"mplint: error: {exc}", file=sys.stderr)
        return 2
    render = {"text": _text, "json": _json, "dot": _dot}[args.output_format]
    sys.stdout.write(render(reached, library, shown))
    return 0


def policy_reach(paths: Sequence[str], config: Optional[str] = None
                 ) -> Tuple[Dict[str, List[Reach]], bool, Optional[str]]:
    """File (as findings name it) -> what reaches its functions; whether the project is
    judged as a library; the project root as shown (None: no project)."""
    from mplint.output_escape import printable
    from mplint.run.hierarchy import ConfigTree
    from mplint.run.project import build_project
    from mplint.run.runner import default_jobs

    missing = [p for p in paths if not os.path.exists(p)]
    if missing:
        raise ConfigError(f"{missing[0]}: no such file or folder")
    catalog = load_catalog()
    fixed = None
    if config is not None:
        if not Path(config).is_file():
            raise ConfigError(f"{config}: config file not found")
        fixed = load_settings(Path(config), catalog, explicit=True)
    # the settings of the folder the paths share, found as a check finds them
    start = os.path.commonpath([os.path.abspath(p) for p in paths])
    settings = ConfigTree(catalog, lambda found: found, Path.cwd(), fixed=fixed).settings_for(start)
    # the index keeps the run's per-file budget, as `check` does: a slow file is one line
    project = build_project(list(paths), settings, budget=settings.file_timeout or None, jobs=default_jobs())
    for key, why in sorted(project.unindexed.items()):
        print(f"mplint: warning: {printable(project.display(key))}: {why}; the policies it may set are not shown",
              file=sys.stderr)
    out: Dict[str, List[Reach]] = {}
    if project.program is not None:
        for path in sorted(project.program.files()):
            governance = project.program.governance(path)
            rows = [(function, policy, project.place(route.path, route.line), route.chain,
                     "" if route.site is None else project.place(*route.site))
                    for function, routes in sorted(governance.by_function.items())
                    for policy, route in sorted(routes.items())]
            if rows:
                out[project.display(path)] = rows
    root = None if project.root is None else str(project.root)
    return out, project.library, root


def _label(function: str) -> str:
    return "top level" if function == "<module>" else f"{function}()"


def _text(reached: Dict[str, List[Reach]], library: bool, root: Optional[str]) -> str:
    lines = [f"project root: {root or 'none (only the paths given)'}"]
    if library:
        lines.append("library: no program here sets a policy; public models are judged as its users may run them")
    if not reached:
        lines.append("No policy set in the project reaches any function.")
    for path, rows in reached.items():
        lines.append(path)
        for function, policy, place, chain, site in rows:
            through = f", reached through {' -> '.join(chain)}" if len(chain) > 1 else ""
            chosen = f" as called at {site}" if site else ""
            lines.append(f"  {_label(function)}: {policy} (set in {place}{chosen}{through})")
    return "\n".join(lines) + "\n"


def _json(reached: Dict[str, List[Reach]], library: bool, root: Optional[str]) -> str:
    data: Dict[str, Any] = {
        "root": root, "library": library,
        "files": [{"path": path, "functions": [
            {"function": function, "policy": policy, "set_in": place, "through": list(chain),
             "chosen_at": site or None}
            for function, policy, place, chain, site in rows]} for path, rows in reached.items()],
    }
    return json.dumps(data, indent=2) + "\n"


def _dot(reached: Dict[str, List[Reach]], library: bool, root: Optional[str]) -> str:
    edges: Dict[Tuple[str, str], str] = {}
    for path, rows in reached.items():
        for function, policy, place, chain, site in rows:
            steps = [f"set in {place}" + (f" as called at {site}" if site else ""), *chain]
            target = f"{path}: {_label(function)}"
            if steps[-1] != _label(function):
                steps.append(target)
            else:
                steps[-1] = target
            for a, b in zip(steps, steps[1:]):
                edges.setdefault((a, b), policy)
    lines = ["digraph policy {", "  rankdir=LR;", "  node [shape=box];"]
    for (a, b), policy in sorted(edges.items()):
        lines.append(f"  {json.dumps(a)} -> {json.dumps(b)} [label={json.dumps(policy)}];")
    lines.append("}")
    return "\n".join(lines) + "\n"
