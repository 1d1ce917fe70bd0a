"""Record what torch prints for the scripts of ``tests/script/corpus`` (real PyTorch code from
public teaching material, each file's header naming its source and edits).

    python tests/script/corpus_oracle.py            # rewrite corpus_expected.json
    python tests/script/corpus_oracle.py --out F    # write the record to F instead
    python tests/script/corpus_oracle.py --only a.py,b.py   # re-record some scripts only

Each script runs with real torch as Python's interactive interpreter runs it (each top-level
statement compiled in 'single' mode, so a bare expression's value is printed): the runner is
``tests/cli/torch_interactive.py``'s ``run``. Unlike that module's ``main``, torch's own random
numbers are kept (the corpus compares after ``torch.manual_seed``). Each script runs in a
process of its own, forked from one that imported torch, so that no state (seed, default dtype,
grad mode, print options, warning registries) leaks from one script to the next; torch uses one
thread, so that float reductions do not depend on the machine's core count.

For each script the record holds its stdout, the last line of its stderr when it failed (the
exception line) and its exit status, with object addresses masked (``0x…``) and the repository's
path written as ``<repo>``, so the record is the same on every machine.

This is test tooling: it runs our own corpus of scripts, never user text.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import io
import json
import multiprocessing
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
CORPUS = HERE / "corpus"
EXPECTED = HERE / "corpus_expected.json"
ADDRESS = re.compile(r"0x[0-9a-f]+")
# A script that runs longer than this in torch is recorded as timed out (status -1).
TIMEOUT_SECONDS = 120


def scripts() -> list[Path]:
    """The corpus, in a stable order."""
    return sorted(CORPUS.glob("*.py"))


def mask(text: str) -> str:
    """``text`` with object addresses masked and the repository's path made relative."""
    return ADDRESS.sub("0x…", text.replace(str(REPO), "<repo>"))


def exception_line(stderr: str, status: int) -> str:
    """The last line of a failed run's stderr (the exception line); empty for a success."""
    lines = stderr.rstrip("\n").splitlines()
    return mask(lines[-1]) if status != 0 and lines else ""


def _run_one(path: str) -> dict:
    """Run one script with torch (in a forked worker) and return its masked record."""
    import torch
    from torch_interactive import run

    torch.set_num_threads(1)
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = run(path)
    return {
        "stdout": mask(out.getvalue()),
        "exception": exception_line(err.getvalue(), status),
        "status": status,
    }


def _child(path: str, connection) -> None:
    connection.send(_run_one(path))
    connection.close()


def record(paths: list[Path]) -> dict[str, dict]:
    """Each script's record by file name, each run in a process forked for it."""
    # torch_interactive: the interactive-mode runner of the CLI's torch cross-checks.
    sys.path.append(str(REPO / "tests" / "cli"))
    # Imported once here, before the forks, so that each worker starts at once (torch.func
    # alone takes a second to import).
    for module in (
        "torch",
        "torch.func",
        "torch.autograd.forward_ad",
        "functorch",
        "torch_interactive",
    ):
        importlib.import_module(module)
    context = multiprocessing.get_context("fork")
    results: dict[str, dict] = {}
    for path in paths:
        receiver, sender = context.Pipe(duplex=False)
        worker = context.Process(target=_child, args=(str(path), sender))
        worker.start()
        sender.close()
        if receiver.poll(TIMEOUT_SECONDS):
            results[path.name] = receiver.recv()
        else:
            worker.kill()
            results[path.name] = {"stdout": "", "exception": "timed out", "status": -1}
        worker.join()
    return results


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=EXPECTED, help="where to write the record")
    parser.add_argument("--only", default="", help="comma-separated file names of the corpus")
    args = parser.parse_args(argv)
    paths = scripts()
    if args.only:
        wanted = set(args.only.split(","))
        paths = [p for p in paths if p.name in wanted]
        missing = wanted - {p.name for p in paths}
        if missing:
            parser.error(f"not in {CORPUS}: {', '.join(sorted(missing))}")
    import torch

    recorded = record(paths)
    if args.only and args.out.exists():
        # Re-record some scripts; keep the others' records, drop those of removed files.
        kept = json.loads(args.out.read_text())["scripts"]
        names = {p.name for p in scripts()}
        recorded = {k: v for k, v in kept.items() if k in names} | recorded
    document = {"torch": torch.__version__.split("+")[0], "scripts": recorded}
    args.out.write_text(json.dumps(document, indent=1, ensure_ascii=False, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
