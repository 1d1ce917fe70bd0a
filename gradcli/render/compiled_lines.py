"""The JSON lines of a big batch assembled by the compiled kernel of ``lines_kernel`` (the
optional extra ``fast``: numba), which ``Lines`` calls on a block of points at a time.

The kernel's machine code is kept in gradcli's cache directory (``lang.cache``), so that a
process loads it with llvmlite alone (``base.machine_code``: about 0.1 s of CPU time) rather
than importing numba and loading it from numba's cache (0.9 to 1.1 s, a fifth of 10^7 points'
lines). The first process compiles it with numba (about 3 s) and stores its object code; the
file's name and checksum hold a key of all that makes the code: gradcli's version, the
kernel's source (``lines_kernel.py``, ``base/words.py``), numba's version (its
``_version.py``), llvmlite's, the machine (target, CPU, its features) and the ``NUMBA_``
settings of the environment. A file that does not match (cut short, edited, another build's)
is compiled afresh and replaced; an object that does not load (or calls outside itself) leaves
a mark under its key, and the kernel is then compiled by numba from numba's own cache, as it is
where there is no usable cache directory. Without numba (``kernel()`` is None) the JSON lines
keep ``json_lines.Layout``'s writer.
"""

from __future__ import annotations

import ctypes
import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from .. import __version__
from ..base import machine_code
from .json_lines import Line

#: Bytes an integer within 2**53 takes at most, its sign included; bytes the kernel may write
#: past the end of its lines (it copies a token's 24 bytes, a piece's 8 at a time).
_DIGITS, _SLACK = 17, 24
_KINDS = {"f": 0, "i": 1, "b": 2}
_NONE = np.zeros((0, 0), np.int64)
#: The first line of a stored kernel; the next is its symbol, then its checksum, then its code
#: (none: the mark of an object that does not load here).
_MAGIC = b"gradcli kernel 1"
_MOST = 1 << 24
_ADDRESS, _SIZE = ctypes.c_void_p, ctypes.c_ssize_t
#: The native function of ``lines_kernel._entry``: numba's status (0), the addresses of its
#: result and of an exception's record, then ``lines_kernel.SIGNATURE``.
_NATIVE = ctypes.CFUNCTYPE(
    ctypes.c_int32, _ADDRESS, _ADDRESS, ctypes.c_int64, ctypes.c_int64,
    *[_ADDRESS, _SIZE] * 7, _ADDRESS,
)  # fmt: skip


class Kernel:
    """The kernel at ``address``, called with the arrays of ``lines_kernel._assemble``
    (contiguous); returns the end of the lines it wrote in ``out``."""

    def __init__(self, address: int):
        self.function = _NATIVE(address)

    def __call__(self, first, count, text, floats, whole, kinds, pieces, cuts, out, digits):
        end, error = ctypes.c_uint64(), ctypes.c_void_p()
        status = self.function(
            ctypes.byref(end), ctypes.byref(error), first, count,
            text.ctypes.data, text.size, floats.ctypes.data, floats.shape[1],
            whole.ctypes.data, whole.shape[1], kinds.ctypes.data, kinds.size,
            pieces.ctypes.data, pieces.size, cuts.ctypes.data, cuts.size,
            out.ctypes.data, out.size, digits.ctypes.data,
        )  # fmt: skip
        if status:
            raise RuntimeError(f"the JSON lines' kernel failed (status {status})")
        return end.value


_kernels: list[Kernel | None] = []


def kernel() -> Kernel | None:
    """The kernel (loaded or compiled once per process), or None where numba is not
    installed."""
    if not _kernels:
        _kernels.append(_loaded())
    return _kernels[0]


def _loaded() -> Kernel | None:
    """The kernel from gradcli's cache, else compiled by numba (and stored where it may be)."""
    from importlib.util import find_spec

    from ..lang import cache

    if find_spec("numba") is None:
        return None
    key = _key()
    name = f"kernel-{cache.sha256(key.encode()).hexdigest()[:32]}.o" if key else None
    stored = None if name is None else _read(name, key)
    if name is not None and stored is not None and stored[1]:
        address = machine_code.load(stored[1], stored[0])
        if address:
            return Kernel(address)
        stored = ("", b"")  # compiled by numba from now on, from numba's cache
        cache.write_file(name, _sealed(key, *stored))
    try:
        from . import lines_kernel
    except ImportError:  # numba there but broken: the layout's writer
        return None
    if name is None or stored is not None or cache.usable_dir(create=True) is None:
        return Kernel(lines_kernel.build(cache=True)[0])
    address, code, symbol = lines_kernel.build(cache=False)
    names = None if code is None else machine_code.undefined(code)
    if code is None or names is None or not names <= set(machine_code.LIBC):
        symbol, code = "", b""  # the mark: numba's cache from now on
    cache.write_file(name, _sealed(key, symbol, code))
    return Kernel(address)


def _key() -> str:
    """What the kernel's machine code is made of (see the module's text), or "" where it
    cannot be told."""
    from importlib.util import find_spec

    from ..lang import cache

    try:
        numba, words = find_spec("numba"), find_spec("gradcli.base.words")
        paths = [Path(__file__).with_name("lines_kernel.py"), Path(str(words and words.origin))]
        paths.append(Path(str(numba and numba.origin)).with_name("_version.py"))
        digests = [cache.sha256(path.read_bytes()).hexdigest() for path in paths]
        settings = sorted((k, v) for k, v in os.environ.items() if k.startswith("NUMBA_"))
        return "\0".join([__version__, *digests, machine_code.host(), repr(settings)])
    except Exception:  # noqa: BLE001 - no key, no cache: numba compiles the kernel
        return ""


def _sealed(key: str, symbol: str, code: bytes) -> bytes:
    """The file of a stored kernel (see ``_MAGIC``)."""
    return b"\n".join([_MAGIC, symbol.encode(), _checksum(key, symbol, code), code])


def _checksum(key: str, symbol: str, code: bytes) -> bytes:
    from ..lang import cache

    digest = cache.sha256(f"{key}\0{symbol}\0".encode())
    digest.update(code)
    return digest.hexdigest().encode()


def _read(name: str, key: str) -> tuple[str, bytes] | None:
    """The symbol and code of the stored kernel ``name``, or None where there is none or it
    does not match ``key``."""
    from ..lang import cache

    data = cache.read_file(name, _MOST)
    if data is None:
        return None
    parts = data.split(b"\n", 3)
    if len(parts) != 4 or parts[0] != _MAGIC:
        return None
    symbol = parts[1].decode("ascii", "replace")
    if parts[2] != _checksum(key, symbol, parts[3]):
        return None
    return symbol, parts[3]


class Lines:
    """The JSON lines of blocks of finite points of some arrays, assembled by the compiled
    ``assemble`` between the pieces of their ``line``; its output buffer is reused from one
    block to the next (a new one, megabytes of fresh pages, costs as much as the kernel)."""

    def __init__(self, assemble: Kernel, line: Line):
        self.assemble = assemble
        self.digits = np.zeros(48, np.uint8)
        pieces = [piece.encode() for piece in line.pieces]
        self.pieces = np.frombuffer(b"".join(pieces) + bytes(_SLACK), np.uint8)  # 8 at a time
        self.cuts = np.cumsum([0] + [len(piece) for piece in pieces], dtype=np.uint64)
        kinds = [1] + [_KINDS[kind] for kind in line.kinds]  # the point's number first
        self.kinds = np.array(kinds, dtype=np.uint8)
        #: the bytes a line takes at most but for its floats' (as long as in orjson's text)
        self.size = self.pieces.size + _DIGITS * sum(kind != 0 for kind in kinds)
        self.out = np.empty(0, np.uint8)

    def __call__(self, first: int, arrays: Sequence[np.ndarray]) -> memoryview:
        """The lines of points ``first``, ... of ``arrays`` (those of ``line``: floats,
        integers within 2**53 or booleans, a leading point dimension), valid until the next
        call."""
        import orjson  # a dependency; imported here, by the batches that write JSON lines only

        count = len(arrays[0])
        shaped = [array.reshape(count, -1) for array in arrays if array[0].size]
        kept = [a for a in shaped if a.dtype.kind == "f"]
        floats = np.concatenate(kept, axis=1, dtype=np.float64) if kept else np.zeros((count, 0))
        text = np.frombuffer(
            orjson.dumps(floats.ravel(), option=orjson.OPT_SERIALIZE_NUMPY), np.uint8
        )
        ints = [a for a in shaped if a.dtype.kind != "f"]
        whole = np.concatenate(ints, axis=1, dtype=np.int64) if ints else _NONE
        size = text.size + count * self.size
        if self.out.size < size:
            self.out = np.empty(size, np.uint8)
        end = self.assemble(
            first, count, text, floats, whole, self.kinds, self.pieces, self.cuts, self.out,
            self.digits,
        )  # fmt: skip
        return self.out[: int(end)].data
