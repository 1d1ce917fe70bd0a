"""``gradcli run``: PyTorch scripts, run as Python's interactive interpreter runs them, printing
what torch prints.

- ``run.py``: the command's entry: the script's text, its run, the exit status Python would
  give;
- ``python/``: the interpreter: Python's ``ast`` of the script (parsed, never executed)
  lowered to closures and run by one evaluator over a whitelisted value model, torch's API
  over the op table and the engine (see its ``__init__``);
- ``format_size.py``: the text a script prints, bounded by ``--max-memory`` before it is built;
- ``traced.py``: a script as another command's program (its last backward pass's graph), and
  ``loading.py``, which takes a command's text for gradcli's notation or, where that refuses a
  PyTorch script, traces it (``traced`` imported only then).
"""
