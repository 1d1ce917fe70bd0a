"""The JSON lines of a batch's finite points, byte for byte the text ``json.dumps`` writes,
made without a Python object per number.

orjson writes every number of a block of points at once, flat in point order, separated by
commas. Each comma then becomes what stands between those two numbers in a line: most are
``", "`` (one ``bytes.replace`` for all); the others (``"]}, \\"grads\\": {\\"x\\": ["``,
``"], ["``, the end of a line and the start of the next) numpy first overwrites with a marker
byte, one for each such text, which one ``bytes.replace`` each turns into it. Last, ``%``
writes the points' numbers, and the ``repr`` of each float below 1e-4, which orjson writes
otherwise (``0.00001`` for ``1e-05``, ``1e-7`` for ``1e-07``): numpy overwrites such a
number's text with a conversion of the same length (``%00b``: repeated flags change nothing).
Integers and booleans go through orjson as floats (exactly: within 2**53), their ``.0``
deleted and ``1.0`` and ``0.0`` spelled ``true`` and ``false``, with markers too.
"""

from __future__ import annotations

import json

import numpy as np

#: Bytes that orjson never writes for a number and a separator never holds (not "\n"),
#: each standing for one separator's text, or an edit, until it is replaced.
_MARKERS = [bytes([b]) for b in (*range(1, 10), *range(11, 32), *range(128, 256))]
#: Integers within this bound are exact as floats, which orjson writes as ``N.0``.
_EXACT = 2**53


class Line:
    """The fixed text of the lines of some arrays: ``pieces``, the text before a point's
    number, before each of its other numbers in turn, and after its last (the end of the
    line), as ``json.dumps`` writes it; ``kinds``, each of those numbers' kind: "f" a float,
    "i" an integer, "b" a boolean."""

    def __init__(self, pieces: list[str], kinds: str):
        self.pieces, self.kinds = pieces, kinds

    @classmethod
    def of(cls, arrays: list[tuple[str, str, np.ndarray]]) -> Line | None:
        """The line of these arrays (section, name, array with a leading point dimension), or
        None where it cannot be written but by ``json.dumps``: an array of complex numbers (or
        of objects), integers beyond 2**53."""
        pieces = ['{"point": ']
        kinds = text = section = ""
        for kind, name, array in arrays:
            code = array.dtype.kind
            if code not in "fiub" or code in "iu" and ((array < -_EXACT) | (array > _EXACT)).any():
                return None
            key = json.dumps(name)  # escaped as json.dumps escapes it
            if kind != section:  # a new section: close the last one
                text += ("}" if section else "") + f", {json.dumps(kind)}: {{{key}: "
            else:
                text += f", {key}: "
            shape = array.shape[1:]
            if 0 in shape:  # [] or [[], []]: the same text at every point
                text += json.dumps(np.zeros(shape).tolist())
                section = kind
                continue
            text += "[" * len(shape)
            size = int(np.prod(shape))
            for j in range(size):
                if j:
                    closed = _closed(shape, j)
                    text = "]" * closed + ", " + "[" * closed
                pieces.append(text)
                text = ""
            kinds += ("f" if code == "f" else "i" if code in "iu" else "b") * size
            text, section = "]" * len(shape), kind
        return cls([*pieces, text + "}}\n"], kinds)


class Layout:
    """How the numbers of a chunk's points make their lines: the text before a point's first
    number, after each number (the last: the end of the line and the start of the next), and
    at the end of the last line, ``%`` escaped; each number's kind: "f" a float, "i" an
    integer, "b" a boolean."""

    def __init__(self, start: str, separators: list[str], end: str, kinds: str):
        self.start, self.end, self.kinds = start.encode(), end.encode(), kinds
        texts = sorted(set(separators) - {", "})
        self.replacements = [(m, text.encode()) for m, text in zip(_MARKERS, texts)]
        self.delete, self.true, self.false = _MARKERS[len(texts) : len(texts) + 3]
        marker_of = {text: m[0] for text, m in zip(texts, _MARKERS)}
        marked = [(j, marker_of[t]) for j, t in enumerate(separators[:-1]) if t != ", "]
        self.columns = np.array([j for j, _ in marked], dtype=np.intp)  # within a point
        self.markers = np.array([m for _, m in marked], dtype=np.uint8)
        self.next_line = marker_of.get(separators[-1]) if separators else None
        self.whole = np.array([j for j, k in enumerate(kinds) if k != "f"], dtype=np.intp)
        self.truth = np.array([j for j, k in enumerate(kinds) if k == "b"], dtype=np.intp)

    @classmethod
    def of(cls, line: Line) -> Layout | None:
        """The layout of the lines of ``line``, or None where there are more kinds of
        separator than there are markers."""
        escaped = [piece.replace("%", "%%") for piece in line.pieces]
        if len(escaped) == 2:  # no numbers but the point's
            return cls("", [], f"{escaped[0]}%b{escaped[1]}", "")
        start = f"{escaped[0]}%b{escaped[1]}"  # up to a point's first number but its own
        separators = [*escaped[2:-1], escaped[-1] + start]  # after each number
        if len(set(separators)) + 3 > len(_MARKERS):
            return None
        return cls(start, separators, escaped[-1], line.kinds)

    def lines(self, first: int, arrays: list[np.ndarray]) -> bytes:
        """The JSON lines of the points of these arrays (all finite), numbered from
        ``first``."""
        import orjson  # a dependency; imported here, by the batches that write JSON lines only

        count = len(arrays[0])
        numbered = orjson.dumps(np.arange(first, first + count), option=orjson.OPT_SERIALIZE_NUMPY)
        values = numbered[1:-1].split(b",")  # the points' numbers
        if not self.kinds:
            return (self.end * count) % tuple(values)
        numbers = np.concatenate(
            [a.reshape(count, -1) for a in arrays if a[0].size], axis=1, dtype=np.float64
        )
        text = orjson.dumps(numbers.ravel(), option=orjson.OPT_SERIALIZE_NUMPY)
        marked = bytearray(memoryview(text)[1:-1])  # the numbers and their commas
        codes = np.frombuffer(marked, np.uint8)
        commas = np.flatnonzero(codes == ord(","))
        ends = np.append(commas, len(marked)).reshape(count, -1)  # each number's end
        codes[ends[:, self.columns]] = self.markers
        if self.next_line is not None:  # no next line after the block's last
            codes[ends[:-1, -1]] = self.next_line
        codes[ends[:, self.whole] - 2] = self.delete[0]  # the ".0" of an integer's "3.0"
        codes[ends[:, self.whole] - 1] = self.delete[0]
        codes[ends[:, self.truth] - 3] = np.where(
            numbers[:, self.truth], self.true[0], self.false[0]
        )
        flat = numbers.ravel()
        small = np.flatnonzero((np.abs(flat) < 1e-4) & (flat != 0))
        for rank, place in enumerate(small.tolist()):  # their repr, in text order
            start, stop = (ends.flat[place - 1] + 1 if place else 0), ends.flat[place]
            marked[start:stop] = b"%" + b"0" * (stop - start - 2) + b"b"
            values.insert(place // numbers.shape[1] + 1 + rank, repr(float(flat[place])).encode())
        data = marked.replace(b",", b", ")
        if self.whole.size:
            data = data.replace(self.delete, b"")
        if self.truth.size:
            data = data.replace(self.true, b"true").replace(self.false, b"false")
        for marker, separator in self.replacements:
            data = data.replace(marker, separator)
        return (self.start + data + self.end) % tuple(values)


def _closed(shape: tuple[int, ...], j: int) -> int:
    """How many brackets of a point's array of ``shape`` close before its element ``j`` (flat,
    C order, not the first): 0 within a row, 1 where ``j`` starts a row, 2 a matrix, ..."""
    closed = 0
    for size in reversed(shape[1:]):
        if j % size:
            break
        j //= size
        closed += 1
    return closed
