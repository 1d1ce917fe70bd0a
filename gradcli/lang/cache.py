"""A cache of parsed programs, so that a repeated call needs neither sympy nor the validator.

Entries are JSON (never pickle) in the user's cache directory, keyed by a hash of gradcli's
version, the IR format, a digest of the op table's signatures, the depth limit and the
program text. The cache never changes an answer:

- each entry holds a SHA-256 checksum over that key text and its content: an entry edited,
  cut short or written by another build fails the check and is parsed afresh (and rewritten);
- an entry is read only if it is a regular file (never through a symlink, never a FIFO or a
  device: opened with ``O_NOFOLLOW | O_NONBLOCK`` and checked with ``fstat``) of bounded size;
- the directory is created private (0700) and used only when it belongs to the user and no
  one else may write in it; otherwise there is no cache, silently (so is a relative
  ``$XDG_CACHE_HOME``, which the XDG specification says to ignore, and an empty ``$HOME``);
- entries are written to a temporary file renamed into place, so that concurrent runs see a
  whole entry or none; temporary files orphaned by a killed run are removed after a while.

An entry whose checksum holds but whose IR is not the nodes the parser makes (calling the
language's functions only) is still ignored and rewritten. Nothing in an entry is ever
evaluated as code: the IR is data for the interpreter, and a declared input's constructor
text is read by ``ast`` as literals, as on the first run.
"""

from __future__ import annotations

import functools
import json
import os
import stat
import time
from pathlib import Path
from typing import TYPE_CHECKING

from .. import __version__
from ..base import bounds
from ..base.files import read_regular
from .functions import FUNCTIONS
from .program import ParsedProgram

if TYPE_CHECKING:
    from hashlib import sha256
else:  # Python's own SHA-256: ``import hashlib`` loads OpenSSL, a few ms of every start
    try:
        from _sha256 import sha256  # Python 3.10 and 3.11
    except ImportError:  # another Python, or one built without it
        try:
            from _sha2 import sha256  # Python 3.12 and later
        except ImportError:
            from hashlib import sha256

# Bump when the IR changes meaning, so that no stale entry is read by a new build.
IR_FORMAT = 7  # 5: typed nodes, a call's options apart from its operands; 6: None operands;
# 7: an imaginary literal is one complex constant (1e400j: complex(0, inf))

# An entry is a few times the size of its source; anything beyond this is not one of ours.
ENTRY_BYTES_PER_SOURCE_BYTE = 64
ENTRY_BYTES_AT_LEAST = 1 << 20
# A temporary file older than this was left by a run that was killed while writing it.
ORPHAN_SECONDS = 600


def cache_dir() -> Path | None:
    """``$GRADCLI_CACHE_DIR``, else ``$XDG_CACHE_HOME/gradcli`` (when absolute), else
    ``$HOME/.cache/gradcli``; None when there is no such place (``HOME`` empty or relative)."""
    if os.environ.get("GRADCLI_CACHE_DIR"):
        return Path(os.environ["GRADCLI_CACHE_DIR"])
    xdg = os.environ.get("XDG_CACHE_HOME", "")
    if os.path.isabs(xdg):
        return Path(xdg) / "gradcli"
    # HOME as set (an empty one is no home: never /.cache), else the password database's
    home = os.environ["HOME"] if "HOME" in os.environ else os.path.expanduser("~")
    if not os.path.isabs(home):
        return None
    return Path(home) / ".cache" / "gradcli"


def usable_dir(create: bool) -> Path | None:
    """The cache directory when it may be trusted: a directory owned by this user that no one
    else may write in (created 0700 when ``create`` and it is missing), else None."""
    folder = cache_dir()
    if folder is None:
        return None
    try:
        if create:
            folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        info = folder.stat()
    except (OSError, ValueError):
        return None
    if not stat.S_ISDIR(info.st_mode) or info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return None
    if hasattr(os, "geteuid") and info.st_uid != os.geteuid():
        return None
    return folder


def _key(source: str, kind: str) -> str:
    # the depth limit decides whether a text parses: a run under another limit parses afresh
    depth = bounds.limits().max_depth
    return f"{__version__}\0{IR_FORMAT}\0{_signatures()}\0{depth}\0{kind}\0{source}"


def _name(key: str, kind: str) -> str:
    return f"{kind}-{sha256(key.encode()).hexdigest()[:32]}.json"


def entry_path(source: str, kind: str = "program") -> Path | None:
    """Where the cache entry of ``source`` parsed as ``kind`` (a program; a script of
    ``gradcli run``) is, or None when there is no usable cache directory."""
    folder = usable_dir(create=False)
    return None if folder is None else folder / _name(_key(source, kind), kind)


@functools.cache
def _signatures() -> str:
    """A digest of every function's signature: a build whose op table differs (a development
    checkout of the same version, an operation given a new option) reads none of this one's
    entries, whose calls have the options of their own table."""
    text = "\n".join(op.signature() for _, op in sorted(FUNCTIONS.items()))
    return sha256(text.encode()).hexdigest()[:16]


def _checksum(key: str, content: object) -> str:
    text = json.dumps(content, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return sha256(f"{key}\0{text}".encode()).hexdigest()


def seal(source: str, kind: str, content: object) -> dict[str, object]:
    """The entry as stored: the content and its checksum (over the key and the content)."""
    return {"checksum": _checksum(_key(source, kind), content), "content": content}


def read_entry(source: str, kind: str = "program") -> object | None:
    """The content of the entry of ``source``, or None when there is none, or it is not a
    regular file of bounded size, or it does not read back, or its checksum does not hold."""
    path = entry_path(source, kind)
    if path is None:
        return None
    most = max(ENTRY_BYTES_AT_LEAST, ENTRY_BYTES_PER_SOURCE_BYTE * len(source.encode()))
    data = read_regular(path, most)
    if data is None:
        return None
    try:
        entry = json.loads(data)
        content = entry["content"]
        if entry["checksum"] != _checksum(_key(source, kind), content):
            return None
    except Exception:  # noqa: BLE001 - any unreadable entry is simply parsed afresh
        return None
    return content


def write_entry(source: str, kind: str, content: object) -> None:
    """Store ``content`` as the entry of ``source``; a cache that cannot be written (or may
    not be trusted) is not an error, there is only no cache."""
    write_file(_name(_key(source, kind), kind), json.dumps(seal(source, kind, content)).encode())


def write_file(name: str, data: bytes) -> None:
    """Store ``data`` as the cache's file ``name`` (written to a temporary file renamed into
    place: a reader sees the whole file or none); a cache that cannot be written (or may not
    be trusted) is not an error, there is only no cache."""
    folder = usable_dir(create=True)
    if folder is None:
        return
    temporary = None
    try:
        import tempfile

        handle, temporary = tempfile.mkstemp(dir=folder, suffix=".tmp")  # mode 0600
        with os.fdopen(handle, "wb") as f:
            f.write(data)
        os.replace(temporary, folder / name)
        temporary = None
        remove_orphans(folder)
    except (OSError, ValueError):
        pass
    finally:
        if temporary is not None:
            try:
                os.unlink(temporary)
            except OSError:
                pass


def read_file(name: str, most: int) -> bytes | None:
    """The cache's file ``name``, or None where there is none (or no usable cache), or it is
    not a regular file of at most ``most`` bytes."""
    folder = usable_dir(create=False)
    return None if folder is None else read_regular(folder / name, most)


def remove_orphans(folder: Path, older_than: float = ORPHAN_SECONDS) -> None:
    """Remove the ``.tmp`` files older than ``older_than`` seconds (a run killed while it
    wrote an entry leaves one); a younger one may be another run's entry under way."""
    limit = time.time() - older_than
    with os.scandir(folder) as entries:
        for entry in entries:
            if not entry.name.endswith(".tmp"):
                continue
            try:
                info = entry.stat(follow_symlinks=False)
                if stat.S_ISREG(info.st_mode) and info.st_mtime < limit:
                    os.unlink(entry.path)
            except OSError:
                pass


def load_program(source: str, use_cache: bool = True) -> ParsedProgram:
    """The parsed program of ``source``, from the cache when possible."""
    bounds.check_length(source, "the program")
    if use_cache:
        content = read_entry(source)
        if isinstance(content, dict):
            try:
                program = ParsedProgram.from_json(content)
                if program.source == source:
                    return program
            except Exception:  # noqa: BLE001 - an entry not of the parser's IR: parse afresh
                pass
    from .build import parse_program  # imports sympy: only on a cache miss

    program = parse_program(source)
    if use_cache:
        write_entry(source, "program", program.to_json())
    return program
