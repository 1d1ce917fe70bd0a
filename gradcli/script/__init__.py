"""``gradcli run``: PyTorch scripts, statement by statement, printing what torch prints."""
