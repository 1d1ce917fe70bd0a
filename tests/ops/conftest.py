"""The operations of each family, in programs run through the command line (the files
here), and module by module on the library (the folders, after ``gradcli/ops``).

The fixtures are those of ``tests/command_fixtures.py``, shared by the folders whose tests
run the command line. The folders' tests read the op test table, ``tests/engine``'s
(``engine_optable.py`` and its parts): it is made importable here as it is there."""

import sys
from pathlib import Path

from command_fixtures import *  # noqa: F403 (its fixtures: see its __all__)

_TABLE = str(Path(__file__).resolve().parents[1] / "engine")
if _TABLE not in sys.path:
    sys.path.insert(0, _TABLE)
