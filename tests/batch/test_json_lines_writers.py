"""The JSON lines of finite points are json.dumps's text, byte for byte, whichever writer
makes them: ``render/json_lines.py``'s ``Layout`` (orjson's text of every number of a block,
its commas turned into the lines' separators) or, in a big batch with the ``fast`` extra,
``render/compiled_lines.py``'s kernel (orjson's tokens copied between the line's pieces)."""

from __future__ import annotations

import io
import json

import numpy as np
import pytest

from gradcli.render import Options, json_format
from gradcli.render.json_format import batch_of, json_lines, plain
from gradcli.render.json_lines import Layout, Line
from gradcli.results import Points

SECTIONS = ["values", "grads", "jacobian", "hessian", "check", "50%"]
NAMES = ["y", "x", "θ", 'a"b', "a,b", "x,x", "w%d", "100%", "back\\slash", "tab\t"]


def _exact(first: int, arrays) -> bytes:
    lines = []
    for i in range(len(arrays[0][2])):
        document: dict = {"point": first + i}
        for section, name, array in arrays:
            document.setdefault(section, {})[name] = plain(array[i])
        lines.append(json.dumps(document, allow_nan=False) + "\n")
    return "".join(lines).encode()


def _floats(rng, shape) -> np.ndarray:
    """Floats of every size json writes otherwise than orjson would (below 1e-4), whole
    numbers, zeros and negative zeros, up to 1e308."""
    kind = rng.integers(4)
    if kind == 0:
        return rng.standard_normal(shape) * 10.0 ** rng.integers(-300, 300, shape)
    if kind == 1:
        return rng.standard_normal(shape) * 10.0 ** rng.integers(-12, 20, shape)
    if kind == 2:
        return np.round(rng.standard_normal(shape) * 5)
    return np.where(rng.random(shape) < 0.3, -0.0, rng.standard_normal(shape) * 1e-5)


def _array(rng, kind: str, shape) -> np.ndarray:
    if kind == "float32":
        return _floats(rng, shape).clip(-1e30, 1e30).astype(np.float32)
    if kind == "int":
        return rng.integers(-(2**53), 2**53, shape) // rng.choice([1, 10**10, 2**52])
    if kind == "uint":
        return rng.integers(0, 1000, shape).astype(np.uint32)
    if kind == "bool":
        return rng.random(shape) < 0.5
    return _floats(rng, shape)


def _layout_lines(line: Line):
    layout = Layout.of(line)
    assert layout is not None
    return layout.lines


def _compiled_lines(line: Line):
    pytest.importorskip("numba")
    from gradcli.render import compiled_lines

    return compiled_lines.Lines(compiled_lines.kernel(), line)


WRITERS = {"layout": _layout_lines, "compiled": _compiled_lines}
# the writers as parameters: the compiled one needs the extra `fast` (numba), and skips without it
WRITER_NAMES = ["layout", pytest.param("compiled", marks=pytest.mark.extras)]


def _random_arrays(rng, count: int) -> list[tuple[str, str, np.ndarray]]:
    """Several sections and arrays of floats, integers and booleans, points of 0 to 3
    dimensions (some of no elements), names json escapes, numbers from 5e-324 to 1e308."""
    arrays = {}
    for _ in range(int(rng.integers(1, 5))):
        shape = tuple(
            int(d) for d in rng.integers(0 if rng.random() < 0.3 else 1, 4, rng.integers(4))
        )
        kind = str(rng.choice(["float", "float", "float32", "int", "uint", "bool"]))
        key = (str(rng.choice(SECTIONS)), str(rng.choice(NAMES)))
        arrays[key] = _array(rng, kind, (count, *shape))
    ordered = sorted(arrays.items(), key=lambda item: SECTIONS.index(item[0][0]))
    return [(section, name, array) for (section, name), array in ordered]


@pytest.mark.parametrize("writer", WRITER_NAMES)
@pytest.mark.parametrize("seed", range(4))
def test_lines_are_json_dumps_text_for_random_arrays(seed, writer):
    rng = np.random.default_rng(seed)
    for _ in range(100):
        count = int(rng.integers(1, 30))
        first = int(rng.choice([0, 7, 10**6, 2**40]))
        listed = _random_arrays(rng, count)
        line = Line.of(listed)
        assert line is not None
        lines = WRITERS[writer](line)(first, [a for _, _, a in listed])
        assert bytes(lines) == _exact(first, listed)


@pytest.mark.parametrize("writer", WRITER_NAMES)
def test_a_block_of_points_of_no_numbers(writer):
    arrays = [("values", "y", np.zeros((3, 2, 0)))]
    lines = WRITERS[writer](Line.of(arrays))(5, [arrays[0][2]])
    assert bytes(lines) == _exact(5, arrays)


@pytest.mark.parametrize("writer", WRITER_NAMES)
@pytest.mark.parametrize("first", [0, 95, 9_999_990, 2**53 - 40])
def test_points_numbered_past_a_power_of_ten_with_the_longest_texts(first, writer):
    """The points' numbers past 99, 9,999,999 (the kernel counts them up as text), and the
    longest texts of a float (24 bytes: ``-1.7976931348623157e+308``) among the others and
    last, where the kernel's words end at the text's end."""
    values = np.random.default_rng(first % 1000).standard_normal((40, 3))
    values[::7, 1] = -1.7976931348623157e308
    values[-1, -1] = -1.7976931348623157e308
    arrays = [("values", "y", values)]
    lines = WRITERS[writer](Line.of(arrays))(first, [values])
    assert bytes(lines) == _exact(first, arrays)


#: Numbers whose texts differ between orjson and json.dumps if any do: about 1e-4 (orjson
#: writes 0.00001 and 1e-7 where json.dumps writes 1e-05 and 1e-07), about 1e16 (where repr
#: turns to an exponent), whole numbers, zeros, subnormals, the extremes.
EDGES = [
    1e-5, 1e-7, -1.5e-9, 1e-4, np.nextafter(1e-4, 0), -1e-4, 0.0001234, 5e-324, -0.0, 0.0,
    1.0, -2.0, 3.0e5, 1e15, 1e16, 9007199254740993.0, 1e22, -3e20, 1.7976931348623157e308,
    2.2250738585072014e-308, 0.1, 1 / 3, 123456789.0, 2.5e-300, 1e-30, -9.99e29,
]  # fmt: skip


def _big_chunk(rng, count: int, first: int) -> Points:
    """A chunk of many points: floats of every size from 1e-30 to 1e30 (a tenth ``EDGES``),
    integers and booleans, several sections, a name json escapes."""

    def floats(shape):
        values = rng.standard_normal(shape) * 10.0 ** rng.integers(-30, 31, shape)
        edges = rng.random(shape) < 0.1
        values[edges] = rng.choice(EDGES, int(edges.sum()))
        return values

    return Points(
        command="vjp",
        output="y",
        first=first,
        sections={
            "values": {
                "y": floats((count, 3)),
                "θ": floats((count, 2, 3)),
                "n": rng.integers(-(2**53), 2**53, (count, 2)),
                "b": rng.random((count, 2, 1)) < 0.5,
            },
            "grads": {"x": floats((count, 2)), "z": floats((count,))},
        },
    )


def _json_dumps(chunk: Points) -> str:
    arrays = [(s, n, a) for s, named in chunk.sections.items() for n, a in named.items()]
    return _exact(chunk.first, arrays).decode()


def _written(chunk: Points, points: int, binary: bool) -> str:
    """The chunk's lines as ``json_lines`` writes them in a batch of ``points`` points, to a
    text stream over a binary one (as stdout is) or to a StringIO."""
    file = io.TextIOWrapper(io.BytesIO(), encoding="utf-8") if binary else io.StringIO()
    with batch_of(points):
        json_lines(chunk, file, Options())
    if binary:
        file.flush()
        return file.buffer.getvalue().decode()  # type: ignore[attr-defined]
    return file.getvalue()


@pytest.mark.parametrize("binary", [False, True], ids=["text", "binary"])
@pytest.mark.parametrize("points", [10, json_format.COMPILED_FROM], ids=["small", "big"])
def test_a_batch_writes_json_dumps_text_small_or_big(points, binary):
    """A small batch's lines by the layout; a big one's by the kernel where numba is installed,
    across the writer's blocks of ``COMPILED_AT_ONCE`` points too."""
    chunk = _big_chunk(np.random.default_rng(points), json_format.COMPILED_AT_ONCE + 900, 10**9)
    assert _written(chunk, points, binary) == _json_dumps(chunk)


def test_a_chunk_with_an_infinity_is_json_dumps_text_in_a_big_batch_too():
    chunk = _big_chunk(np.random.default_rng(9), 50, 0)
    chunk.sections["grads"]["x"][3, 1] = np.inf
    assert _written(chunk, json_format.COMPILED_FROM, False) == _json_dumps(chunk)


def test_a_big_batch_through_the_command_line_writes_the_same_lines(cli, tmp_path, monkeypatch):
    """The command line's batch, the kernel taken from its first point: the lines are those of
    a batch too small for it."""
    pytest.importorskip("numba")
    rng = np.random.default_rng(11)
    x = rng.standard_normal((3000, 2)) * 10.0 ** rng.integers(-9, 20, (3000, 2))
    np.save(tmp_path / "p.npy", x)
    args = ["vjp", "-e", "y0=x0**2; y1=x0**2+5*x1**2; y2=3*x1", "--v", "1,1,1"]
    small = cli(*args, "--batch", f"@{tmp_path}/p.npy")
    monkeypatch.setattr(json_format, "COMPILED_FROM", 0)
    big = cli(*args, "--batch", f"@{tmp_path}/p.npy")
    assert small.exit_code == 0 and big.exit_code == 0, big.stderr
    assert big.stdout == small.stdout
    assert len(big.stdout.splitlines()) == 3000


@pytest.mark.parametrize(
    "array", [np.array([[2**60]]), np.array([-(2**63)]), np.array([1j]), np.array([None])]
)
def test_what_the_layout_cannot_write_is_left_to_json(array):
    """Integers beyond 2**53 (not exact as floats), complex numbers, objects."""
    assert Line.of([("values", "y", array)]) is None
