"""Allow ``python -m mplint``.

``python -m`` puts the current folder first on ``sys.path``, so a checked tree's own
``argparse.py``, ``re/`` or ``tokenize.py`` would be imported (and run) in place of the
standard library's: mplint never runs the code it checks, so that entry goes first
(unless mplint itself is being run from that folder, a source checkout). What Python
imports before this module runs (``runpy`` and ``importlib``'s own modules, such as
``types``) cannot be guarded here; the ``mplint`` command never puts the folder there."""

import os
import sys


def _drop_current_folder() -> None:
    if getattr(sys.flags, "safe_path", False) or not sys.path:  # ``python -P``: nothing was put there
        return
    first = os.path.abspath(sys.path[0] or os.curdir)
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    if first == os.path.abspath(os.curdir) and first != here:
        del sys.path[0]


_drop_current_folder()

from mplint.launch import main  # noqa: E402  (after the folder is gone from sys.path)

sys.exit(main())
