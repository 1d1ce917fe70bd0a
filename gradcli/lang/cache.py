"""A cache of parsed programs, so that a repeated call needs neither sympy nor the validator.

Entries are JSON (never pickle) in the user's cache directory, keyed by a hash of gradcli's
version and the program text. An entry that cannot be read, or whose IR calls anything but
the language's functions, is ignored and rewritten. Nothing in an entry is ever evaluated as
code: the IR is data for the interpreter, and a declared input's constructor text is read by
``ast`` as literals, as on the first run.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path

from .. import __version__, limits
from .functions import FUNCTIONS
from .program import Program


def cache_dir() -> Path:
    """``$GRADCLI_CACHE_DIR``, else ``$XDG_CACHE_HOME/gradcli``, else ``~/.cache/gradcli``."""
    if os.environ.get("GRADCLI_CACHE_DIR"):
        return Path(os.environ["GRADCLI_CACHE_DIR"])
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "gradcli"


# Bump when the IR changes meaning, so that no stale entry is read by a new build.
IR_FORMAT = 4  # 4: no sympy_text


def _path(source: str) -> Path:
    # the depth limit decides whether a text parses: a run under another limit parses afresh
    depth = limits.current().max_depth
    digest = hashlib.sha256(f"{__version__}\0{IR_FORMAT}\0{depth}\0{source}".encode()).hexdigest()
    return cache_dir() / f"program-{digest[:32]}.json"


def load_program(source: str, use_cache: bool = True) -> Program:
    """The parsed program of ``source``, from the cache when possible."""
    limits.check_length(source, "the program")
    path = _path(source)
    if use_cache:
        try:
            program = Program.from_json(json.loads(path.read_text()))
            if program.source == source and all(_valid(a.ir) for a in program.assignments):
                return program
        except Exception:  # noqa: BLE001 - any unreadable entry is simply parsed afresh
            pass
    from .build import parse_program  # imports sympy: only on a cache miss

    program = parse_program(source)
    if use_cache:
        _store(path, program)
    return program


def _valid(ir) -> bool:
    """Whether an IR tree has the shapes ``parse.to_ir`` makes, calling known functions only."""
    if ir is None:
        return True
    if not isinstance(ir, list) or not ir:
        return False
    kind = ir[0]
    if kind == "const":
        return len(ir) == 2 and isinstance(ir[1], (int, float))
    if kind == "ref":
        return len(ir) == 2 and isinstance(ir[1], str) and ir[1].isidentifier()
    if kind == "index":
        return len(ir) == 3 and _valid(ir[1]) and isinstance(ir[2], list)
    if kind == "call":
        return (
            len(ir) == 3
            and ir[1] in FUNCTIONS
            and isinstance(ir[2], list)
            and all(_valid_argument(a) for a in ir[2])
        )
    return False


def _valid_argument(argument) -> bool:
    if isinstance(argument, list) and argument and argument[0] == "lit":
        return len(argument) == 2
    if isinstance(argument, list) and argument and argument[0] == "list":
        return (
            len(argument) == 2 and isinstance(argument[1], list) and all(map(_valid, argument[1]))
        )
    return _valid(argument)


def _store(path: Path, program: Program) -> None:
    """Write atomically; a cache that cannot be written is not an error."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile("w", dir=path.parent, delete=False, suffix=".tmp") as f:
            json.dump(program.to_json(), f)
        os.replace(f.name, path)
    except OSError:
        pass
