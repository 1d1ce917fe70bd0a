"""Files gradcli writes and reads with care: ``--out`` written atomically and never over one
of the command's own inputs, and bounded reads of regular files that never follow a link.

``atomic_output(path)`` yields a temporary file's path in the target's folder; the file is
renamed onto ``path`` only when the block ends normally, and removed on any failure, so a
reader never sees a partial file under the final name (a killed run leaves at most a
``.gradcli-*.tmp.npz``-like file beside it, and the previous file, if any, untouched).

``reading_inputs()`` opens a command's span: every input file it reads (``note_input``) is
remembered by its device and inode, and ``refuse_input(path)`` refuses an output that would
land on one of them, whatever the path that names it (a symlink, a hard link, ``./x``).

A folder --out (a folder of .npy parts, a Zarr store) replaces only what gradcli wrote:
``mark_output`` leaves a manifest in each folder it writes (a Zarr store carries the same in
its attributes), and ``refuse_folder`` refuses any other folder that is not empty, and, made
by gradcli or not, the working folder, ``$HOME``, ``/``, an input or any folder that holds
one or holds the working folder.
"""

from __future__ import annotations

import contextvars
import json
import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from .errors import GradcliError, listing

# (st_dev, st_ino) -> the path as given, of every input file read in the current command;
# None outside a command (the library records nothing)
_INPUTS: contextvars.ContextVar[dict[tuple[int, int], str] | None] = contextvars.ContextVar(
    "gradcli_inputs", default=None
)

TEMPORARY_PREFIX = ".gradcli-"
TEMPORARY_SUFFIX = ".tmp"
MANIFEST = ".gradcli-output.json"  # in each folder --out gradcli writes: it may replace it
ZARR_METADATA = "zarr.json"  # a Zarr (v3) store's, whose attributes carry the manifest


@contextmanager
def reading_inputs() -> Iterator[None]:
    """Remember the input files read inside the block (see ``refuse_input``)."""
    token = _INPUTS.set({})
    try:
        yield
    finally:
        _INPUTS.reset(token)


def note_input(path: Path | str) -> None:
    """Record ``path`` (an existing file) as one of the command's inputs."""
    inputs = _INPUTS.get()
    if inputs is None:
        return
    try:
        info = os.stat(path)
    except OSError:
        return
    inputs[(info.st_dev, info.st_ino)] = str(path)


def refuse_input(path: str, option: str = "--out") -> None:
    """Refuse to write ``path`` when it is (by any name) a file the command read."""
    inputs = _INPUTS.get() or {}
    try:
        info = os.stat(path)
    except OSError:
        return  # no such file yet: nothing to overwrite
    read = inputs.get((info.st_dev, info.st_ino))
    if read is not None:
        same = "" if read == path else f" (the same file as {read})"
        raise GradcliError(
            f"{option} {path} is one of the command's input files{same}; writing it would "
            "overwrite the input",
            hint=f"give {option} another file name",
        )


def manifest(results: list[str], points: int) -> dict:
    """What a folder gradcli writes says of itself (``MANIFEST``, or a Zarr store's
    attributes under ``"gradcli"``): that gradcli wrote it, and what it holds."""
    from .. import __version__

    return {"written_by": "gradcli", "version": __version__, "results": results, "points": points}


def mark_output(folder: str, results: list[str], points: int) -> None:
    """Leave the manifest in ``folder``, one gradcli is writing: a later --out may replace it."""
    with open(os.path.join(folder, MANIFEST), "w", encoding="utf-8") as f:
        json.dump(manifest(results, points), f, indent=1)
        f.write("\n")


def _json_at(path: str) -> object:
    text = read_regular(Path(path), 1 << 20)
    try:
        return None if text is None else json.loads(text)
    except ValueError:
        return None


def gradclis_manifest(folder: str) -> dict | None:
    """The manifest of a folder gradcli wrote (``MANIFEST``, or a Zarr store's attributes);
    None for any other folder."""
    own = _json_at(os.path.join(folder, MANIFEST))
    store = _json_at(os.path.join(folder, ZARR_METADATA))
    if isinstance(store, dict) and isinstance(store.get("attributes"), dict):
        store = store["attributes"].get("gradcli")
    for found in (own, store):
        if isinstance(found, dict) and found.get("written_by") == "gradcli":
            return found
    return None


def _within(folder: str, path: str) -> bool:
    """Whether ``path`` is ``folder`` or inside it (both absolute, links resolved)."""
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def refuse_folder(path: str, option: str = "--out") -> None:
    """Refuse to replace the folder ``path`` names unless gradcli wrote it (or it is empty,
    or not there yet); and never the working folder, ``$HOME``, ``/``, one of the command's
    inputs, or a folder that holds the working folder or an input."""
    target = os.path.realpath(path)
    shown = f"{option} {path}"
    example = "results.zarr" if target.lower().endswith(".zarr") else "results/"
    inputs = _INPUTS.get() or {}
    protected = [
        (os.path.realpath(os.getcwd()), "the working folder"),
        (os.path.realpath(os.path.expanduser("~")), "your home folder"),
        (os.sep, "the root folder"),
        *((os.path.realpath(read), f"the command's input {read}") for read in inputs.values()),
    ]
    for kept, what in protected:
        if _within(target, kept):
            raise GradcliError(
                f"{shown} {'is' if target == kept else 'holds'} {what}, which gradcli never "
                "removes",
                hint=f"give {option} a new folder's name, e.g. {option} {example}",
            )
    if not os.path.isdir(target):
        return  # not there yet (a file in the way is said where the folder is written)
    try:
        entries = os.listdir(target)
    except OSError as exc:
        raise GradcliError(f"{shown}: cannot read the folder: {exc.strerror or exc}") from None
    own = gradclis_manifest(target) if entries else {}
    if own is None:
        raise GradcliError(
            f"{shown} is a folder that gradcli did not write, and it is not empty; gradcli "
            "replaces only a folder it wrote itself (its earlier --out)",
            hint=f"give {option} a new folder's name, or move or remove {path} yourself",
        )
    results = own.get("results")
    written = {MANIFEST, ZARR_METADATA, *(results if isinstance(results, list) else [])}
    added = sorted(set(entries) - written)
    if added:  # put into gradcli's folder since: not gradcli's to remove
        raise GradcliError(
            f"{shown} was written by gradcli, but it now holds {listing(added, 3)}, which "
            "gradcli did not write",
            hint=f"move {'them' if len(added) > 1 else 'it'} out of {path}, or give {option} "
            "a new folder's name",
        )
    for folder, _, names in os.walk(target):  # a hard link to an input, by another name
        for name in names:
            try:
                info = os.lstat(os.path.join(folder, name))
            except OSError:
                continue
            read = inputs.get((info.st_dev, info.st_ino))
            if read is not None:
                raise GradcliError(
                    f"{shown} holds {os.path.join(folder, name)}, the same file as the "
                    f"command's input {read}; replacing the folder would remove it",
                    hint=f"give {option} a new folder's name, e.g. {option} {example}",
                )


def put_in_place(written: str, target: str) -> None:
    """Rename the file ``written`` onto ``target``, its bytes on disk first: the name never
    points at a file half on disk, whatever happens to the machine."""
    with open(written, "rb+") as f:
        os.fsync(f.fileno())
    os.replace(written, target)


@contextmanager
def atomic_output(path: str, option: str = "--out") -> Iterator[str]:
    """A temporary file's path beside ``path``, renamed onto it when the block succeeds.

    On any failure (an exception, Ctrl-C) the temporary file is removed and ``path`` is left
    as it was. An ``OSError`` in the block or in the rename is the user's error, naming
    ``path``. The file's mode is the one a new file gets (0666 less the umask), as ``open``
    would give it. A symlink is written through (its target replaced, the link kept); a name
    that is not a regular file (a FIFO, a device) is written in place, as nothing can be
    renamed onto it.
    """
    refuse_input(path, option)
    try:
        regular = stat.S_ISREG(os.stat(path).st_mode)
    except OSError:
        regular = True  # not there yet (or a dangling link): made by the rename
    if not regular:
        try:
            yield path
        except OSError as exc:  # /dev/full, a FIFO closed by its reader
            raise GradcliError(f"{option} {path}: cannot write: {exc.strerror or exc}") from None
        return
    target = os.path.realpath(path)
    folder = os.path.dirname(target)
    import tempfile

    try:
        # the target's own suffix last: numpy and matplotlib choose the format by it
        suffix = TEMPORARY_SUFFIX + Path(path).suffix
        handle, temporary = tempfile.mkstemp(prefix=TEMPORARY_PREFIX, suffix=suffix, dir=folder)
    except OSError as exc:
        raise GradcliError(f"{option} {path}: cannot write: {exc.strerror or exc}") from None
    try:
        os.fchmod(handle, new_mode(0o666))
        os.close(handle)
        yield temporary
        put_in_place(temporary, target)
    except OSError as exc:
        _remove(temporary)
        raise GradcliError(f"{option} {path}: cannot write: {exc.strerror or exc}") from None
    except BaseException:
        _remove(temporary)
        raise


def new_mode(base: int) -> int:
    """The mode ``open`` (``base`` 0o666) or ``mkdir`` (0o777) gives a new file or folder:
    ``base`` less the umask."""
    umask = os.umask(0)
    os.umask(umask)
    return base & ~umask


def _remove(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


def read_regular(path: Path, most: int) -> bytes | None:
    """The bytes of ``path`` if it is a regular file (not a link, FIFO, device, folder) of at
    most ``most`` bytes, else None. Never follows a symlink and never blocks on a FIFO."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(path, flags)
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > most:
            return None
        data = b""
        while len(data) <= most:  # the size could grow while it is read
            block = os.read(fd, most + 1 - len(data))
            if not block:
                break
            data += block
        return data if len(data) <= most else None
    except OSError:
        return None
    finally:
        os.close(fd)
