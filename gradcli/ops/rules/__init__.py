"""What the entries' rules share: the reverse rules on float64 arrays of the element-wise
entries a reverse pass runs most (``array_rules.py``)."""
