"""The operations of each family, in programs run through the command line.

The fixtures are those of ``tests/command_fixtures.py``, shared by the folders whose tests
run the command line."""

from command_fixtures import *  # noqa: F403 (its fixtures: see its __all__)
