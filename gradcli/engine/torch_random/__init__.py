"""torch's CPU random numbers, bit for bit: its mt19937 generator and the samplers that
draw from it (see ``samplers.py``)."""
