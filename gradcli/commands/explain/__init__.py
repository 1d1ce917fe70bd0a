"""``gradcli explain``: the chain rule with numbers, statement by statement."""
