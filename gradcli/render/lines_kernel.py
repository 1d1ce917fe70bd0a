"""The kernel that assembles the JSON lines of a big batch, compiled by numba (the optional
extra ``fast``); ``compiled_lines`` loads its machine code and calls it. Importing this module
imports numba.

orjson writes the floats of a block of points at once, flat in point order, each in the text
``json.dumps`` writes for it (the shortest that reads back as the same float, Python's
``repr``), but for those below 1e-4, which it writes otherwise (``0.00001`` for ``1e-05``,
``1e-7`` for ``1e-07``: the same digits, placed otherwise). The kernel then walks the line's
fixed pieces (``json_lines.Line``) and the numbers, writing each piece, then the next number:
a float's token copied from orjson's text (below 1e-4, rewritten as ``repr`` writes it), an
integer's digits (the point's number is one), ``true`` or ``false``. One pass over the
output's bytes, no Python object a point; the lines come out as bytes.

``build`` compiles ``_entry``, which takes raw pointers and lengths, as a bare native function:
no wrapper for Python or C (whose error paths call numba's C helpers and Python's C API) and
no reference counting (numba's runtime): its machine code calls nothing outside itself but
``memcpy`` and the like, so that ``compiled_lines`` can keep it in gradcli's cache and load it
in a later process with llvmlite alone, without importing numba.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit, types
from numba.cpython.unsafe.numbers import trailing_zeros

from ..base.compiled import without_blas
from ..base.words import array_at, load8, store8

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


def _assemble(  # pragma: no cover
    first, count, text, floats, whole, kinds, pieces, cuts, out, digits
):
    """Write the lines of ``count`` points, numbered from ``first``, into ``out``; returns
    how many bytes they took (``digits``: 48 bytes of room for the point's number).

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
    digits[:] = 0  # the point's number, its last digit at 31, then room
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


#: ``_assemble`` inlined into ``_entry`` by numba (no function of its own in the machine code).
_inlined = njit(inline="always", boundscheck=False)(_assemble)

_BYTES = types.CPointer(types.uint8)
#: ``_entry``'s signature: ``first``, ``count``, then each array as its data's address and its
#: length (of ``floats`` and ``whole``, their columns); ``out``'s end is returned.
SIGNATURE = types.uint64(
    types.int64, types.int64, _BYTES, types.intp, types.CPointer(types.float64), types.intp,
    types.CPointer(types.int64), types.intp, _BYTES, types.intp, _BYTES, types.intp,
    types.CPointer(types.uint64), types.intp, _BYTES, types.intp, _BYTES,
)  # fmt: skip


def _entry(  # pragma: no cover
    first, count, text, text_size, floats, float_columns, whole, whole_columns, kinds,
    kind_count, pieces, piece_bytes, cuts, cut_count, out, out_size, digits,
):  # fmt: skip
    """``_assemble`` of the arrays at these addresses."""
    return _inlined(
        first, count, array_at(text, text_size), array_at(floats, (count, float_columns)),
        array_at(whole, (count, whole_columns)), array_at(kinds, kind_count),
        array_at(pieces, piece_bytes), array_at(cuts, cut_count), array_at(out, out_size),
        array_at(digits, 48),
    )  # fmt: skip


def build(cache: bool) -> tuple[int, bytes | None, str]:
    """``_entry`` compiled by numba, from numba's cache on disk (``cache``) or afresh: the
    address of its native function, its object code (None from numba's cache, which keeps
    it to itself) and its symbol.

    The native function takes numba's two leading arguments before ``SIGNATURE``'s: the
    address of the result (a uint64) and that of an exception's record (a pointer, which it
    sets only where it raises: it does not); it returns 0 (a status)."""
    without_blas()
    # numba's options of a bare function: no wrappers, no reference counts (its runtime)
    bare: dict[str, Any] = {"_nrt": False, "no_cpython_wrapper": True, "no_cfunc_wrapper": True}
    compiled = njit(SIGNATURE, cache=cache, nogil=True, boundscheck=False, **bare)(_entry)
    made: Any = compiled.overloads[SIGNATURE.args]
    symbol = made.fndesc.llvm_func_name
    address = made.library.get_pointer_to_function(symbol)
    code = None if cache else made.library.serialize_using_object_code()[2][0]
    return address, code, symbol
