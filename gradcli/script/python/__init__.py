"""``gradcli run``'s interpreter: a PyTorch script, as Python's ast, lowered to closures and run.

The script is parsed by Python's ``ast`` and never executed as Python: every node is lowered
once, before anything runs, to a closure of the script IR (``lower_expressions.py``,
``lower_statements.py``, with the names resolved as Python resolves them by ``scopes.py``);
what gradcli does not take (a class, ``import os``, a dunder attribute) is refused there, with
the line and a caret. The closures are the one evaluator: each takes the frame of names it runs
in and returns its value (a statement: how control leaves it). Closures rather than node
records because a loop of a training script runs its body thousands of times, and a closure
runs its node with no dispatch on the node's kind.

What lives where:

- ``errors.py``: a Python exception raised in the script (``Raised``), the refusals, and where
  each happened (the traceback's frames, Python's carets);
- ``limits.py``: the steps, the call depth, the sizes of strings, lists and integers, each
  bounded with a clear error (exit 2);
- ``scopes.py``: which names of a function are its own, its enclosing function's or global;
- ``lower_expressions.py`` and ``lower_statements.py``: the lowering;
- ``runtime.py``: the frames, the script's functions and their calls, the run's state;
- ``objects.py``: attributes of every kind of value, from a whitelist per kind;
- ``printing.py``: ``repr``, ``str`` and ``format`` as Python and torch give them;
- ``tensors.py``: tensors as torch scripts use them (``grad``, ``grad_fn``, methods bound
  through the op table's signatures);
- ``torch_api.py``: the ``torch`` namespace (``torch``, ``torch.nn.functional``,
  ``torch.autograd`` and its ``functional``, ``torch.func``, ``torch.linalg``);
- ``torch_nn.py``: ``torch.nn`` and ``torch.optim`` (with ``init``, ``utils``,
  ``lr_scheduler``) from the library's ``gradcli.nn`` and ``gradcli.optim``;
  ``library_objects.py``: the library's classes, modules and optimizers as a script holds,
  calls and reads them;
- ``torch_data.py``: ``torch.utils.data`` (``Dataset``, ``TensorDataset``, ``DataLoader``,
  the samplers) from the library's ``gradcli.utils.data``;
- ``torch_samplers.py``: ``torch.randint``, ``randperm``, ``normal``, ``bernoulli``,
  ``multinomial`` from the run's generator;
- ``autograd.py``: ``backward``, ``torch.autograd.grad`` and torch.autograd.functional, with
  torch's checks and words;
- ``builtins.py``: Python's builtins a tutorial uses, and ``math``, ``functools``,
  ``itertools``, ``operator``;
- ``interpreter.py``: the entry: a script's text to its output and exit status.
"""
