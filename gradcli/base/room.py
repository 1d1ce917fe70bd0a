"""The engine's room: the most elements a value may have before the engine looks closer.

The least of --max-elements, the budget alone and what an engaged run's tally leaves, at the
widest element's bytes. ``budget.refresh`` keeps it up to date whenever one of those changes
(-1: not worked out yet), so that the engine's check of each value it makes is one comparison
(``engine/sizes.py``). It lives here, below both, so that the budget need not import the engine.
"""

ROOM = [-1]
