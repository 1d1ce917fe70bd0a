"""The JSON lines of finite points (``render/json_lines.py``: orjson's text of every number of
a block, its commas turned into the lines' separators) are json.dumps's text, byte for byte."""

from __future__ import annotations

import json

import numpy as np
import pytest

from gradcli.render.json_format import plain
from gradcli.render.json_lines import Layout

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


@pytest.mark.parametrize("seed", range(4))
def test_lines_are_json_dumps_text_for_random_arrays(seed):
    """Several sections and arrays of floats, integers and booleans, points of 0 to 3
    dimensions (some of no elements), names json escapes, numbers from 5e-324 to 1e308."""
    rng = np.random.default_rng(seed)
    for _ in range(100):
        count = int(rng.integers(1, 30))
        first = int(rng.choice([0, 7, 10**6, 2**40]))
        arrays = {}
        for _ in range(int(rng.integers(1, 5))):
            shape = tuple(
                int(d) for d in rng.integers(0 if rng.random() < 0.3 else 1, 4, rng.integers(4))
            )
            kind = str(rng.choice(["float", "float", "float32", "int", "uint", "bool"]))
            key = (str(rng.choice(SECTIONS)), str(rng.choice(NAMES)))
            arrays[key] = _array(rng, kind, (count, *shape))
        ordered = sorted(arrays.items(), key=lambda item: SECTIONS.index(item[0][0]))
        listed = [(section, name, array) for (section, name), array in ordered]
        layout = Layout.of(listed)
        assert layout is not None
        assert layout.lines(first, [a for _, _, a in listed]) == _exact(first, listed)


def test_a_block_of_points_of_no_numbers():
    arrays = [("values", "y", np.zeros((3, 2, 0)))]
    assert Layout.of(arrays).lines(5, [arrays[0][2]]) == _exact(5, arrays)


@pytest.mark.parametrize(
    "array", [np.array([[2**60]]), np.array([-(2**63)]), np.array([1j]), np.array([None])]
)
def test_what_the_layout_cannot_write_is_left_to_json(array):
    """Integers beyond 2**53 (not exact as floats), complex numbers, objects."""
    assert Layout.of([("values", "y", array)]) is None
