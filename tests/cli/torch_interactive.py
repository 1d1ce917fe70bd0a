"""Run PyTorch scripts with real torch as Python's interactive interpreter runs them: each
top-level statement compiled in 'single' mode, so that a bare expression's value is printed
(``x.grad`` on a line of its own), as ``gradcli run`` prints it.

    python torch_interactive.py JOBS.json

JOBS is a list of ``[script, values]``: ``values`` are the nested lists that ``torch.rand``,
``torch.randn``, ``torch.rand_like`` and ``torch.randn_like`` return in turn in that script
(gradcli run seeds torch's generator with --seed until the script's ``torch.manual_seed``,
where torch's is seeded from the system: the test hands torch the values gradcli drew).
Prints one JSON object: for each script, its ``stdout``,
its ``stderr`` and its exit ``status``. Each script runs in a namespace of its own (and so
with a warning registry of its own) where ``torch`` is already imported (the seed post's
snippets continue a session that imported it). An uncaught exception prints Python's
traceback limited to the script's own frames (torch's internal frames are not the user's;
the script named by its absolute path, as Python names a script it runs), and the status is
1, as Python's.

This is test tooling: it runs our own corpus of scripts, never user text.
"""

from __future__ import annotations

import ast
import contextlib
import io
import json
import os
import sys
import traceback

import torch

_RANDOM = ("rand", "randn")
_DRAWING = {name: getattr(torch, name) for name in _RANDOM}  # torch's own samplers


def _drawing(values: list) -> None:
    queue = list(values)

    def sampler(name):
        def drawn(*size, requires_grad=False, dtype=None, generator=None):
            if generator is not None:  # a script's torch.Generator(): torch's numbers of it
                own = _DRAWING[name]
                return own(*size, requires_grad=requires_grad, dtype=dtype, generator=generator)
            value = torch.tensor(queue.pop(0), dtype=dtype or torch.get_default_dtype())
            assert tuple(value.shape) == tuple(size), (value.shape, size)
            return value.requires_grad_(requires_grad)

        return drawn

    def drawn_like(like, requires_grad=False, dtype=None):
        value = torch.tensor(queue.pop(0), dtype=dtype or like.dtype)
        assert value.shape == like.shape, (value.shape, like.shape)
        return value.requires_grad_(requires_grad)

    for name in _RANDOM:
        setattr(torch, name, sampler(name))
        setattr(torch, f"{name}_like", drawn_like)


def run(path: str) -> int:
    path = os.path.abspath(path)
    with open(path) as f:
        text = f.read()
    namespace = {"__name__": "__main__", "torch": torch}
    for statement in ast.parse(text, path).body:
        code = compile(ast.Interactive([statement]), path, "single")
        try:
            exec(code, namespace)  # our own test corpus, not user text
        except Exception as exc:
            frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == path]
            sys.stderr.write("Traceback (most recent call last):\n")
            sys.stderr.write("".join(traceback.format_list(frames)))
            sys.stderr.write("".join(traceback.format_exception_only(exc)))
            return 1
    return 0


def main(jobs: str) -> None:
    with open(jobs) as f:
        given = json.load(f)
    results = {}
    for script, values in given:
        _drawing(values)
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            status = run(script)
        torch.set_default_dtype(torch.float32)
        results[script] = {"stdout": out.getvalue(), "stderr": err.getvalue(), "status": status}
    json.dump(results, sys.stdout)


if __name__ == "__main__":
    main(sys.argv[1])
