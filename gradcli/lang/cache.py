"""A cache of parsed programs, so that a repeated call needs neither sympy nor the validator.

Entries are JSON (never pickle) in the user's cache directory, keyed by a hash of gradcli's
version and the program text. An entry that cannot be read, or whose IR is not the nodes
the parser makes (calling the language's functions only), is ignored and rewritten. Nothing
in an entry is ever evaluated as code: the IR is data for the interpreter, and a declared
input's constructor text is read by ``ast`` as literals, as on the first run.
"""

from __future__ import annotations

import functools
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
IR_FORMAT = 6  # 5: typed nodes, a call's options apart from its operands; 6: None operands


def entry_path(source: str, kind: str = "program") -> Path:
    """The cache entry of ``source`` parsed as ``kind`` (a program; a script of ``gradcli
    run``)."""
    # the depth limit decides whether a text parses: a run under another limit parses afresh
    depth = limits.current().max_depth
    key = f"{__version__}\0{IR_FORMAT}\0{_signatures()}\0{depth}\0{source}"
    digest = hashlib.sha256(key.encode()).hexdigest()
    return cache_dir() / f"{kind}-{digest[:32]}.json"


@functools.cache
def _signatures() -> str:
    """A digest of every function's signature: a build whose op table differs (a development
    checkout of the same version, an operation given a new option) reads none of this one's
    entries, whose calls have the options of their own table."""
    text = "\n".join(op.signature() for _, op in sorted(FUNCTIONS.items()))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def load_program(source: str, use_cache: bool = True) -> Program:
    """The parsed program of ``source``, from the cache when possible."""
    limits.check_length(source, "the program")
    path = entry_path(source)
    if use_cache:
        try:
            program = Program.from_json(json.loads(path.read_text()))
            if program.source == source:
                return program
        except Exception:  # noqa: BLE001 - any unreadable entry is simply parsed afresh
            pass
    from .build import parse_program  # imports sympy: only on a cache miss

    program = parse_program(source)
    if use_cache:
        store(path, program.to_json())
    return program


def store(path: Path, data: object) -> None:
    """Write JSON atomically; a cache that cannot be written is not an error."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile("w", dir=path.parent, delete=False, suffix=".tmp") as f:
            json.dump(data, f)
        os.replace(f.name, path)
    except OSError:
        pass
