"""``gradcli run``: PyTorch scripts, statement by statement, printing what torch prints.

What lives where, in the order a script goes through:

- ``run.py``: the command's entry: the script's text, its steps (from the parse cache, or
  compiled), a run of them, the exit status Python would give;
- ``compile.py``: Python's ``ast`` of the script (parsed, never executed) to steps, each
  statement checked by the validator (``lang/validate.py``), loops unrolled, the script's
  functions written out where they are called;
- ``steps.py``: the steps, one plain record per statement, and their form in the parse cache;
- ``execute.py``: ``ScriptRun``, the live environment of tensors that runs the steps, with
  torch's warnings and errors on stderr as Python shows them;
- ``showing.py``: what ``print``, f-strings and bare expressions show, as Python and torch
  show them;
- ``gradients.py``: ``backward``, ``torch.autograd.grad``, torch.autograd.functional and
  ``torch.func.grad``, with torch's checks and words;
- ``format_size.py``: the text a script prints, bounded by ``--max-memory`` before it is built.

The PyTorch-text readers that both ``gradcli run`` and the validator use stay in
``lang/pytorch.py``, below this wing (the validator and the program builder read them).
"""
