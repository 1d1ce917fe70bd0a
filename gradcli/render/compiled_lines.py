"""The JSON lines of a big batch assembled by one compiled loop: the optional extra ``fast``.

orjson writes the floats of a block of points at once, flat in point order, each in the text
``json.dumps`` writes for it (the shortest that reads back as the same float, Python's
``repr``), but for those below 1e-4, which it writes otherwise (``0.00001`` for ``1e-05``,
``1e-7`` for ``1e-07``: the same digits, placed otherwise). A kernel compiled by numba then
walks the line's fixed pieces (``json_lines.Line``) and the numbers, writing each piece, then
the next number: a float's token copied from orjson's text (below 1e-4, rewritten as
``repr`` writes it), an integer's digits (the point's number is one), ``true`` or
``false``. One pass over the output's bytes, no Python object a point; the lines come out
as bytes.

Without numba (``kernel()`` is None) the JSON lines keep ``json_lines.Layout``'s writer.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from ..base.compiled import Compiled
from .json_lines import Line

try:  # the fast extra: numba, and the 8-byte loads and stores of its kernels
    from numba.cpython.unsafe.numbers import trailing_zeros

    from ..base.words import load8, store8
except ImportError:  # kernel() is None
    pass

_COMMA, _CLOSE, _MINUS, _ZERO, _NINE = (np.uint8(ord(c)) for c in ",]-09")
_POINT, _E = np.uint8(ord(".")), np.uint8(ord("e"))
_ONE, _TWO, _THREE, _EIGHT, _TEN = (np.uint64(n) for n in (1, 2, 3, 8, 10))
_SIXTEEN, _TOKEN, _RIGHT = np.uint64(16), np.uint64(24), np.uint64(32)
#: A word's bytes that are a comma are those that turn 0 when xored with ``_COMMAS``; ``_LOWS``
#: and ``_HIGHS`` mark the first (the lowest) byte that is 0 with its top bit (and maybe some
#: above it, never one below): its trailing zeros, over 8, are its index.
_COMMAS = np.uint64(0x2C2C2C2C2C2C2C2C)
_LOWS, _HIGHS = np.uint64(0x0101010101010101), np.uint64(0x8080808080808080)
_TRUTH = np.frombuffer(b"falsetrue", np.uint8)
_FIVE, _NINTH = np.uint64(5), np.uint64(9)
#: Bytes an integer within 2**53 takes at most, its sign included; bytes the kernel may write
#: past the end of its lines (it copies a token's 24 bytes, a piece's 8 at a time).
_DIGITS, _SLACK = 17, 24
_KINDS = {"f": 0, "i": 1, "b": 2}
_NONE = np.zeros((0, 0), np.int64)


def _assemble(first, count, text, floats, whole, kinds, pieces, cuts, out):  # pragma: no cover
    """Write the lines of ``count`` points, numbered from ``first``, into ``out``; returns
    how many bytes they took.

    A line is piece 0, number 0 (the point's), piece 1, ..., its last piece: piece k is bytes
    ``cuts[k]`` to ``cuts[k + 1]`` of the pieces, number c of kind ``kinds[c]``: 0 the point's
    next float (of ``floats``), its token in ``text`` (orjson's, after its ``[``, each token
    followed by a comma or the closing ``]``; below 1e-4, made Python's text by
    ``_scientific``); 1 the point's next integer (of ``whole``), 2 the next integer as a boolean.

    The kernel copies 8 bytes at a time (``load8``, ``store8``: one load and one store), past
    a piece's end (what follows overwrites it; ``pieces`` and ``out`` have room for it); a
    float's token (24 bytes at most: ``-2.2250738585072014e-308``) it copies whole, 24 bytes,
    and finds its comma in those words, but for the tokens within 24 bytes of the text's end,
    which it reads one byte at a time. The point's number it keeps as text, right-aligned in
    ``digits``, and counts up. (Compiled by numba. Its indices are unsigned: numba checks a
    signed index for a negative value, counted from the end, at every access.)
    """
    end, at = np.uint64(0), np.uint64(1)
    columns = np.uint64(kinds.size)
    near = np.uint64(max(text.size, 25) - 25)  # a token from before: 24 bytes before the "]"
    digits = np.zeros(48, np.uint8)  # the point's number, its last digit at 31, then room
    start, rest = _RIGHT, np.uint64(first)
    while True:
        start -= _ONE
        digits[start] = _ZERO + np.uint8(rest % _TEN)
        rest //= _TEN
        if rest == 0:
            break
    for i in range(count):
        f = w = 0
        c = np.uint64(0)
        while True:
            k, stop = cuts[c], cuts[c + _ONE]
            while k < stop:
                store8(out, end, load8(pieces, k))
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
                if value != 0.0 and abs(value) < 1e-4:  # Python's text, not orjson's:
                    # 1.5e-05 for 0.000015, 1e-07 for 1e-7; the same digits
                    byte = text[at]
                    if byte == _MINUS:
                        out[end] = byte
                        end += _ONE
                        at += _ONE
                        byte = text[at]
                    if (
                        byte == _ZERO
                    ):  # 0.0000ddd: the digits after as many zeros as the exponent less 1
                        at += _TWO
                        exponent = 1
                        while text[at] == _ZERO:
                            exponent += 1
                            at += _ONE
                        out[end] = text[at]
                        end += _ONE
                        at += _ONE
                        byte = text[at]
                        if byte != _COMMA and byte != _CLOSE:
                            out[end] = _POINT
                            end += _ONE
                            while byte != _COMMA and byte != _CLOSE:
                                out[end] = byte
                                end += _ONE
                                at += _ONE
                                byte = text[at]
                    else:  # d.ddde-N: the digits as they are, the exponent read
                        while byte != _E:
                            out[end] = byte
                            end += _ONE
                            at += _ONE
                            byte = text[at]
                        at += _TWO
                        byte = text[at]
                        exponent = 0
                        while byte != _COMMA and byte != _CLOSE:
                            exponent = exponent * 10 + int(byte - _ZERO)
                            at += _ONE
                            byte = text[at]
                    out[end] = _E
                    out[end + _ONE] = _MINUS
                    end += _TWO
                    if exponent >= 100:
                        out[end] = _ZERO + np.uint8(exponent // 100)
                        end += _ONE
                    out[end] = _ZERO + np.uint8(exponent // 10 % 10)
                    out[end + _ONE] = _ZERO + np.uint8(exponent % 10)
                    end += _TWO
                    at += _ONE
                    continue
                if at < near:  # the token's 24 bytes at once, then its length
                    words = load8(text, at), load8(text, at + _EIGHT), load8(text, at + _SIXTEEN)
                    store8(out, end, words[0])
                    store8(out, end + _EIGHT, words[1])
                    store8(out, end + _SIXTEEN, words[2])
                    x = words[0] ^ _COMMAS
                    found = (x - _LOWS) & ~x & _HIGHS
                    if found:
                        n = np.uint64(trailing_zeros(found)) >> _THREE
                    else:
                        x = words[1] ^ _COMMAS
                        found = (x - _LOWS) & ~x & _HIGHS
                        if found:
                            n = _EIGHT + (np.uint64(trailing_zeros(found)) >> _THREE)
                        else:
                            x = words[2] ^ _COMMAS
                            found = (x - _LOWS) & ~x & _HIGHS
                            # none in the third word either (found 0): the comma is the 25th byte
                            n = _SIXTEEN + (np.uint64(trailing_zeros(found)) >> _THREE)
                    end += n
                    at += n + _ONE
                    continue
                byte = text[at]  # the text's last tokens, a byte at a time
                while byte != _COMMA and byte != _CLOSE:
                    out[end] = byte
                    end += _ONE
                    at += _ONE
                    byte = text[at]
                at += _ONE
                continue
            if c == _ONE:  # the point's number; then the next point's, one more
                store8(out, end, load8(digits, start))
                store8(out, end + _EIGHT, load8(digits, start + _EIGHT))
                end += _RIGHT - start
                place = _RIGHT - _ONE
                while digits[place] == _NINE:
                    digits[place] = _ZERO
                    place -= _ONE
                if place < start:  # 99 + 1: one digit more
                    start = place
                    digits[place] = _ZERO
                digits[place] += np.uint8(1)
                continue
            number = whole[i, w]
            w += 1
            if kind == 2:  # true or false
                k, stop = (_FIVE, _NINTH) if number else (np.uint64(0), _FIVE)
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
            first, count, text, floats, whole, self.kinds, self.pieces, self.cuts, self.out
        )
        return self.out[: int(end)].data
