"""The JSON lines of a big batch assembled by one compiled loop: the optional extra ``fast``.

orjson writes the floats of a block of points at once, flat in point order, each in the text
``json.dumps`` writes for it (the shortest that reads back as the same float, Python's
``repr``), but for those below 1e-4, which it writes otherwise (``0.00001`` for ``1e-05``,
``1e-7`` for ``1e-07``): their ``repr`` goes into a text of its own. A kernel compiled by
numba then walks the line's fixed pieces (``json_lines.Line``) and the numbers, writing each
piece, then the next number: a float's token copied from orjson's text (or from the
``repr`` text), an integer's digits (the point's number is one), ``true`` or ``false``. One
pass over the output's bytes, no Python object a point; the lines come out as bytes.

Without numba (``kernel()`` is None) the JSON lines keep ``json_lines.Layout``'s writer.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from ..base.compiled import Compiled
from .json_lines import Line

_COMMA, _CLOSE, _MINUS, _ZERO = (np.uint8(ord(c)) for c in ",]-0")
_ONE, _THREE, _SEVEN, _EIGHT, _TEN = (np.uint64(n) for n in (1, 3, 7, 8, 10))
#: A word's bytes that are a comma (``_COMMAS``) or a ``]`` are those that turn 0 when xored
#: with it; ``_LOWS`` and ``_HIGHS`` find the first (the lowest) byte that is 0, and ``_PLACES``
#: says which one it is (its top byte, after a product by the byte's lowest bit, is its index).
_COMMAS, _CLOSES = np.uint64(0x2C2C2C2C2C2C2C2C), np.uint64(0x5D5D5D5D5D5D5D5D)
_LOWS, _HIGHS = np.uint64(0x0101010101010101), np.uint64(0x8080808080808080)
_PLACES, _TOP = np.uint64(0x0001020304050607), np.uint64(56)
_TRUTH = np.frombuffer(b"falsetrue", np.uint8)
_FIVE, _NINE = np.uint64(5), np.uint64(9)
#: Bytes an integer within 2**53 takes at most, its sign included; bytes the kernel may write
#: past the end of its lines (it copies 8 at a time).
_DIGITS, _SLACK = 17, 16
_KINDS = {"f": 0, "i": 1, "b": 2}
_NONE = np.zeros((0, 0), np.int64)


def _assemble(
    first, count, text, floats, small, whole, kinds, cuts, out, words
):  # pragma: no cover
    """Write the lines of ``count`` points, numbered from ``first``, into ``out``; returns
    how many bytes they took.

    A line is piece 0, number 0 (the point's), piece 1, ..., its last piece: piece k is bytes
    ``cuts[k]`` to ``cuts[k + 1]`` of the pieces, number c of kind ``kinds[c]``: 0 the point's
    next float (of ``floats``), its token in ``text`` (orjson's, after its ``[``, each token
    followed by a comma or the closing ``]``) or, below 1e-4, in ``small`` (each followed by
    a comma); 1 the point's next integer (of ``whole``), 2 the next integer as a boolean.

    ``words`` are ``_words`` of ``text``, of the pieces and of ``out``: word ``[r, q]`` is the 8
    bytes from byte ``8 * q + r``, ``[b & 7, b >> 3]`` those from byte b. The kernel copies a
    word at a time, past a piece's or a token's end (what follows overwrites it), and finds a
    token's end in its word. (Compiled by numba. Its indices are unsigned: numba checks a
    signed index for a negative value, counted from the end, at every access.)
    """
    tokens, pieces, into = words
    end, at, other = np.uint64(0), np.uint64(1), np.uint64(0)
    columns, whole_words = np.uint64(kinds.size), np.uint64(tokens.shape[1])
    for i in range(count):
        f = w = 0
        c = np.uint64(0)
        while True:
            k, stop = cuts[c], cuts[c + _ONE]
            while k < stop:
                into[end & _SEVEN, end >> _THREE] = pieces[k & _SEVEN, k >> _THREE]
                end += _EIGHT
                k += _EIGHT
            end -= k - stop
            if c == columns:
                break
            kind = kinds[c]
            c += _ONE
            if kind == 0:
                value = floats[i, f]
                f += 1
                if value != 0.0 and abs(value) < 1e-4:  # Python's text, not orjson's
                    byte = small[other]
                    while byte != _COMMA:
                        out[end] = byte
                        end += _ONE
                        other += _ONE
                        byte = small[other]
                    other += _ONE
                    byte = text[at]
                    while byte != _COMMA and byte != _CLOSE:
                        at += _ONE
                        byte = text[at]
                    at += _ONE
                    continue
                while at >> _THREE < whole_words:  # a word at a time, to the token's end
                    word = tokens[at & _SEVEN, at >> _THREE]
                    into[end & _SEVEN, end >> _THREE] = word
                    x, y = word ^ _COMMAS, word ^ _CLOSES
                    found = ((x - _LOWS) & ~x | (y - _LOWS) & ~y) & _HIGHS
                    if found:
                        n = ((found & (~found + _ONE)) >> _SEVEN) * _PLACES >> _TOP
                        end += n
                        at += n + _ONE
                        break
                    end += _EIGHT
                    at += _EIGHT
                else:  # the text's last bytes, one at a time
                    byte = text[at]
                    while byte != _COMMA and byte != _CLOSE:
                        out[end] = byte
                        end += _ONE
                        at += _ONE
                        byte = text[at]
                    at += _ONE
                continue
            if c == _ONE:
                number = first + i
            else:
                number = whole[i, w]
                w += 1
            if kind == 2:  # true or false
                k, stop = (_FIVE, _NINE) if number else (np.uint64(0), _FIVE)
                while k < stop:
                    out[end] = _TRUTH[k]
                    end += _ONE
                    k += _ONE
                continue
            if number < 0:
                out[end] = _MINUS
                end += _ONE
                number = -number
            rest, size = np.uint64(number), _ONE
            while rest >= _TEN:
                rest //= _TEN
                size += _ONE
            rest, place = np.uint64(number), end + size
            while place > end:
                place -= _ONE
                out[place] = _ZERO + np.uint8(rest % _TEN)
                rest //= _TEN
            end += size
    return end


def _words(data: np.ndarray) -> np.ndarray:
    """The 8 bytes from each byte of ``data`` (uint8) as one unsigned integer: ``[r, q]`` those
    from byte ``8 * q + r``, for every ``q`` of ``8 * q + 15 <= len(data)``."""
    return np.ndarray((8, max(0, (len(data) - 7) // 8)), np.uint64, data, 0, (1, 8))


#: ``kernel()``: ``_assemble`` compiled by numba (once per process; numba caches it on disk),
#: or None where numba is not installed.
kernel = Compiled(_assemble, cache=True, nogil=True, boundscheck=False)


class Lines:
    """The JSON lines of blocks of finite points of some arrays, assembled by the compiled
    ``assemble`` between the pieces of their ``line``; its output buffer is reused from one
    block to the next (a new one, megabytes of fresh pages, costs as much as the kernel)."""

    def __init__(self, assemble: Callable[..., int], line: Line):
        self.assemble = assemble
        pieces = [piece.encode() for piece in line.pieces]
        padded = np.frombuffer(b"".join(pieces) + bytes(_SLACK), np.uint8)  # read 8 at a time
        self.pieces, self.size = _words(padded), padded.size  # the size a line takes at most
        self.cuts = np.cumsum([0] + [len(piece) for piece in pieces], dtype=np.uint64)
        kinds = [1] + [_KINDS[kind] for kind in line.kinds]  # the point's number first
        self.kinds = np.array(kinds, dtype=np.uint8)
        self.size += _DIGITS * sum(kind != 0 for kind in kinds)
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
        flat = floats.ravel()
        text = np.frombuffer(orjson.dumps(flat, option=orjson.OPT_SERIALIZE_NUMPY), np.uint8)
        below = flat[np.abs(flat) < 1e-4].tolist()
        small = "".join(f"{value!r}," for value in below if value).encode()
        ints = [a for a in shaped if a.dtype.kind != "f"]
        whole = np.concatenate(ints, axis=1, dtype=np.int64) if ints else _NONE
        size = text.size + len(small) + count * self.size
        if self.out.size < size:
            self.out = np.empty(size, np.uint8)
        words = (_words(text), self.pieces, _words(self.out))
        small_text = np.frombuffer(small or b",", np.uint8)
        end = self.assemble(
            first, count, text, floats, small_text, whole, self.kinds, self.cuts, self.out, words
        )
        return self.out[: int(end)].data
