"""Which configuration governs each file: the closest one above it, whatever folder
the run starts in (ruff's hierarchical configuration).

A monorepo's sub-project keeps its own ``[tool.mplint]`` when mplint runs from the
repository's root. ``--config`` names one configuration for every file, as in ruff;
the command line's options (``--select``, ``--assume-policy``, ...) apply on top of
whichever configuration a file gets. Each folder is looked up once per run.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Callable, Dict, Optional, Sequence

from mplint.rule.catalog import RuleEntry
from mplint.run.config import Settings, config_in, load_settings

Adjust = Callable[[Settings], Settings]


class ConfigTree:
    """Answers "which settings does this file get?" for every file of a run."""

    def __init__(self, catalog: Dict[str, RuleEntry], adjust: Adjust, default_root: Path,
                 fixed: Optional[Settings] = None, overrides: Sequence[Dict[str, Any]] = ()) -> None:
        self.catalog = catalog
        #: the command line's options, over each file's settings
        self.adjust = adjust
        #: ``--config KEY=VALUE`` tables, read after each configuration file
        self.overrides = overrides
        self.default_root = default_root
        #: ``--config``: this one for every file
        self.fixed = fixed
        self._nearest: Dict[str, Optional[Path]] = {}
        self._real: Dict[str, str] = {}
        self._loaded: Dict[Optional[Path], Settings] = {}

    def settings_for(self, path: str) -> Settings:
        """The settings ``path`` (a file, which need not exist, or a folder) is checked with."""
        if self.fixed is not None:
            return self.fixed
        absolute = os.path.abspath(path)
        folder = absolute if os.path.isdir(absolute) else os.path.dirname(absolute)
        real = self._real.get(folder)
        if real is None:  # a folder reached through a link has the configuration of where it is
            real = self._real[folder] = os.path.realpath(folder)
        return self.settings_of_config(self._nearest_config(real))

    def settings_of_config(self, config: Optional[Path]) -> Settings:
        """The settings one configuration file gives (the defaults for None), the same
        object every time, so files that share a configuration share a linter."""
        settings = self._loaded.get(config)
        if settings is None:
            settings = self._loaded[config] = self.adjust(
                load_settings(config, self.catalog, root=self.default_root, overrides=self.overrides))
        return settings

    def _nearest_config(self, folder: str) -> Optional[Path]:
        found = self._nearest.get(folder, _UNKNOWN)
        if found is not _UNKNOWN:
            return found  # type: ignore[return-value]
        own = config_in(Path(folder))
        parent = os.path.dirname(folder)
        nearest = own if own is not None or parent == folder else self._nearest_config(parent)
        self._nearest[folder] = nearest
        return nearest


_UNKNOWN = object()
