"""values: every form of value text, and every error, with what it says."""

from __future__ import annotations

import io
import json
import math
import pickle
from pathlib import Path

import numpy as np
import pytest

from gradcli.base import bounds
from gradcli.base.errors import GradcliError
from gradcli.lang.values import CONSTRUCTORS, VALUE_SYNTAX, generator_for, named_values, parse_value


def value(text: str, **kwargs) -> np.ndarray:
    array = parse_value(text, "x", **kwargs)
    assert array.dtype == np.float64
    return array


def error(text: str, **kwargs) -> GradcliError:
    with pytest.raises(GradcliError) as info:
        parse_value(text, "x", **kwargs)
    return info.value


# -- literals -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, expected",
    [
        ("2.5", 2.5),
        ("-1", -1.0),
        ("+3", 3.0),
        ("--3", 3.0),
        ("  7  ", 7.0),
        ("1e-3", 1e-3),
        ("1e400", math.inf),
        ("1,2", [1.0, 2.0]),
        ("1,", [1.0]),
        ("(1, 2)", [1.0, 2.0]),
        ("[1, -2.5]", [1.0, -2.5]),
        ("[[1,2],[3,4]]", [[1.0, 2.0], [3.0, 4.0]]),
        ("[[[1]], [[2]]]", [[[1.0]], [[2.0]]]),
        ("[]", np.zeros(0)),
        ("nan", math.nan),
        ("inf", math.inf),
        ("-inf", -math.inf),
        ("[nan, inf, -inf]", [math.nan, math.inf, -math.inf]),
    ],
)
def test_literals(text, expected):
    np.testing.assert_array_equal(value(text), np.asarray(expected, dtype=float))


# -- constructors -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, expected",
    [
        ("ones(2,2)", np.ones((2, 2))),
        ("ones([2, 3])", np.ones((2, 3))),
        ("ones((2, 3))", np.ones((2, 3))),
        ("ones()", np.ones(())),
        ("zeros(3)", np.zeros(3)),
        ("zeros(0)", np.zeros(0)),
        ("full(2, 3, 0.5)", np.full((2, 3), 0.5)),
        ("full(4, -1)", np.full(4, -1.0)),
        ("eye(3)", np.eye(3)),
        ("eye(2, 3)", np.eye(2, 3)),
        ("arange(6)", np.arange(6.0)),
        ("arange(2, 5)", np.arange(2.0, 5.0)),
        ("arange(1, 0, -0.25)", np.arange(1, 0, -0.25)),
        ("linspace(0, 1, 5)", np.linspace(0, 1, 5)),
        ("tensor([[1, 2], [3, 4]])", np.array([[1.0, 2], [3, 4]])),
        ("tensor(5)", np.array(5.0)),
        ("empty(2, 1)", np.zeros((2, 1))),
    ],
)
def test_constructors(text, expected):
    np.testing.assert_array_equal(value(text), expected)


def test_every_constructor_is_covered():
    assert set(CONSTRUCTORS) == {
        "ones",
        "zeros",
        "full",
        "eye",
        "arange",
        "linspace",
        "rand",
        "randn",
        "tensor",
        "empty",
    }


def test_rand_and_randn_are_seeded_by_name_and_seed():
    a = value("randn(2, 3)", seed=0)
    assert a.shape == (2, 3)
    np.testing.assert_array_equal(value("randn(2, 3)", seed=0), a)
    np.testing.assert_array_equal(a, generator_for("x", 0).standard_normal((2, 3)))
    assert not np.array_equal(value("randn(2, 3)", seed=1), a)
    assert not np.array_equal(parse_value("randn(2, 3)", "w", 0), a)
    r = value("rand(1000)")
    assert ((0 <= r) & (r < 1)).all() and 0.4 < r.mean() < 0.6


@pytest.mark.parametrize(
    "text, message",
    [
        ("foo(2)", "unknown constructor 'foo'"),
        ("__import__('os')", "unknown constructor '__import__'"),
        ("ones(2, requires_grad=True)", "ones has no argument named 'requires_grad'"),
        ("ones(-1)", "ones: sizes must be non-negative whole numbers, got [-1]"),
        ("ones(1.5)", "ones: sizes must be non-negative whole numbers"),
        ("ones(True)", "ones: True/False is not a number"),
        ("ones(ones(2))", "a nested call is not allowed in a value"),
        ("ones(x)", "the name 'x' is not allowed in a value"),
        ("full(2)", "full needs a size and a fill value"),
        ("full(2, 'a')", "is not allowed in a value"),
        ("full(2, True)", "full: True/False is not a number"),
        ("eye()", "eye takes one or two sizes"),
        ("eye(1, 2, 3)", "eye takes one or two sizes"),
        ("arange()", "arange takes (end), (start, end) or (start, end, step != 0)"),
        ("arange(0, 1, 0)", "step != 0"),
        ("linspace(0, 1)", "linspace takes (start, end, steps)"),
        ("linspace(0, 1, 2.5)", "linspace: steps must be a whole number >= 0"),
        ("tensor(1, 2)", "tensor takes one list"),
        ("tensor([[1, 2], [3]])", "the rows of a nested list must all have the same length"),
        ("tensor([True])", "tensor: True/False is not a number"),
        ("randn(-2)", "randn: sizes must be non-negative whole numbers"),
    ],
)
def test_constructor_errors(text, message):
    assert message in error(text).message


# -- malformed literals --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, message, column",
    [
        ("1,,2", "cannot read the value of x", 2),
        ("foo", "the name 'foo' is not allowed in a value", 0),
        ("[1, foo]", "the name 'foo' is not allowed in a value", 4),
        ("'a'", "a string is not allowed in a value", 0),
        ("[1, 'a']", "a string is not allowed in a value", 4),
        ("x.y", "attribute access ('.') is not allowed in a value", 0),
        ("1+2", "arithmetic is not allowed in a value", 0),
        ("{1: 2}", "dict is not allowed in a value", 0),
        ("-[1, 2]", "a sign before a non-number is not allowed in a value", 0),
        ("-True", "a sign before a non-number is not allowed in a value", 0),
        ("[ones(2)]", "a nested call is not allowed in a value", 1),
        ("lambda: 1", "lambda is not allowed in a value", 0),
    ],
)
def test_malformed_values_point_at_the_column_and_show_the_syntax(text, message, column):
    err = error(text)
    assert message in err.message
    assert err.source == text.strip() and err.column == column
    assert err.hint.endswith(VALUE_SYNTAX)  # after a word on arithmetic (--exact)
    assert err.render().splitlines()[-1].endswith(VALUE_SYNTAX)


@pytest.mark.parametrize(
    "text, message, column, hint",
    [
        ("[1, 2", "cannot read the value of x: this '[' is never closed", 0, "add the ']'"),
        ("1 2", "cannot read the value of x: nothing separates 1 and 2", 2, "commas: 1, 2"),
        ("[[1, 2] [3, 4]]", "x: a ',' is missing between two lists", 7, "[[1, 2], [3, 4]]"),
        ("1 +", "cannot read the value of x: nothing follows '+'", 3, VALUE_SYNTAX),
        ("x=1", "cannot read the value of x: '=' has no place in a value", 1, VALUE_SYNTAX),
    ],
)
def test_unreadable_values_say_what_is_missing(text, message, column, hint):
    err = error(text)
    assert message in err.message and err.column == column
    assert hint in err.hint


@pytest.mark.parametrize("text", ["True", "[1, True]", "[[1, 2], [False, 4]]"])
def test_booleans_are_not_numbers(text):
    err = error(text)
    assert err.message == "x: True/False is not a number" and err.hint == VALUE_SYNTAX


@pytest.mark.parametrize("text", ["", "   "])
def test_empty_value(text):
    err = error(text)
    assert err.message == "the value of x is empty" and err.hint == VALUE_SYNTAX


@pytest.mark.parametrize("text", ["[1, [2, 3]]", "[[1, 2], [3]]"])
def test_ragged_lists(text):
    assert "the rows of a nested list must all have the same length" in error(text).message


def test_value_syntax_names_every_form():
    for form in (
        "2.5",
        "1,2",
        "[[1,2],[3,4]]",
        "ones(2,2)",
        "randn(8,10)",
        "@x.npy",
        "@x.npz:key",
        "@x.csv",
        "@x.json",
        "- for JSON on stdin",
    ):
        assert form in VALUE_SYNTAX


# -- stdin ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, expected",
    [
        ("[[1, 2], [3, 4.5]]", [[1.0, 2.0], [3.0, 4.5]]),
        ("2", 2.0),
        ('["nan", "inf", "-inf", 1]', [math.nan, math.inf, -math.inf, 1.0]),
    ],
)
def test_stdin_json(text, expected):
    np.testing.assert_array_equal(value("-", stdin=io.StringIO(text)), expected)


@pytest.mark.parametrize(
    "text, message",
    [
        ("", "x (stdin): not valid JSON (Expecting value at line 1, column 1)"),
        ("[1, 2", "x (stdin): not valid JSON"),
        ('{"a": 1}', "x (stdin): expected a number or a list in JSON, got an object"),
        ('[1, "a"]', "expected numbers, got 'a'"),
        ("[1, true]", "expected numbers, got True"),
        ("[1, null]", "expected numbers, got None"),
        ("[[1, 2], [3]]", "the rows of a nested list must all have the same length"),
    ],
)
def test_stdin_errors(text, message):
    assert message in error("-", stdin=io.StringIO(text)).message


# -- files ----------------------------------------------------------------------------------------


def test_npy(tmp_path):
    np.save(tmp_path / "a.npy", np.arange(6).reshape(2, 3))
    array = value(f"@{tmp_path / 'a.npy'}")
    np.testing.assert_array_equal(array, np.arange(6.0).reshape(2, 3))


def test_npz_with_a_key_and_with_a_single_array(tmp_path):
    np.savez(tmp_path / "two.npz", a=np.ones(2), b=np.arange(3.0))
    np.testing.assert_array_equal(value(f"@{tmp_path / 'two.npz'}:b"), np.arange(3.0))
    np.savez(tmp_path / "one.npz", only=np.eye(2))
    np.testing.assert_array_equal(value(f"@{tmp_path / 'one.npz'}"), np.eye(2))
    np.testing.assert_array_equal(value(f"@{tmp_path / 'one.npz'}:only"), np.eye(2))


def test_npz_errors(tmp_path):
    np.savez(tmp_path / "two.npz", a=np.ones(2), b=np.arange(3.0))
    err = error(f"@{tmp_path / 'two.npz'}")
    assert "holds 2 arrays; name one" in err.message
    assert err.hint.endswith("with KEY one of a, b")
    err = error(f"@{tmp_path / 'two.npz'}:c")
    assert "has no array 'c'" in err.message and err.hint == "its arrays are a, b"


def test_csv_shapes(tmp_path):
    (tmp_path / "m.csv").write_text("1,2,3\n4,5,6\n")
    (tmp_path / "row.csv").write_text("1, 2.5\n\n")
    (tmp_path / "col.csv").write_text("1\n2\n3\n")
    (tmp_path / "nan.csv").write_text("nan,inf\n-inf,1\n")
    np.testing.assert_array_equal(value(f"@{tmp_path / 'm.csv'}"), [[1, 2, 3], [4, 5, 6]])
    np.testing.assert_array_equal(value(f"@{tmp_path / 'row.csv'}"), [1, 2.5])
    np.testing.assert_array_equal(value(f"@{tmp_path / 'col.csv'}"), [1, 2, 3])
    np.testing.assert_array_equal(
        value(f"@{tmp_path / 'nan.csv'}"), [[math.nan, math.inf], [-math.inf, 1]]
    )


def test_csv_errors(tmp_path):
    (tmp_path / "text.csv").write_text("1,a\n")
    assert "row 1 is not all numbers" in error(f"@{tmp_path / 'text.csv'}").message
    (tmp_path / "ragged.csv").write_text("1,2\n3\n")
    assert "same length" in error(f"@{tmp_path / 'ragged.csv'}").message


def test_json_file(tmp_path):
    (tmp_path / "v.json").write_text(json.dumps([[1, 2], ["nan", 4]]))
    np.testing.assert_array_equal(value(f"@{tmp_path / 'v.json'}"), [[1, 2], [math.nan, 4]])
    (tmp_path / "bad.json").write_text('{"a": [1]}')
    err = error(f"@{tmp_path / 'bad.json'}")
    assert "(" in err.message and "bad.json" in err.message and "got an object" in err.message


def test_file_errors(tmp_path):
    err = error(f"@{tmp_path / 'missing.npy'}")
    assert "x: no such file:" in err.message and err.hint == VALUE_SYNTAX
    assert "is not a regular file" in error(f"@{tmp_path}").message
    assert "cannot use the path" in error("@" + "a" * 5000 + ".npy").message  # name too long
    assert "cannot use the path" in error("@a\0b.npy").message
    (tmp_path / "a.txt").write_text("1")
    assert "x: unknown file type .txt" in error(f"@{tmp_path / 'a.txt'}").message
    (tmp_path / "noext").write_text("1")
    assert "unknown file type (none)" in error(f"@{tmp_path / 'noext'}").message
    (tmp_path / "broken.npy").write_bytes(b"not numpy")
    assert "not a NumPy .npy file" in error(f"@{tmp_path / 'broken.npy'}").message
    np.save(tmp_path / "bools.npy", np.array([True, False]))
    assert "holds bool values, not numbers" in error(f"@{tmp_path / 'bools.npy'}").message
    np.save(tmp_path / "floats.npy", np.ones(4))
    (tmp_path / "cut.npy").write_bytes((tmp_path / "floats.npy").read_bytes()[:-1])
    assert "cannot read" in error(f"@{tmp_path / 'cut.npy'}").message
    (tmp_path / "latin1.csv").write_bytes(b"1,\xff\n")
    assert "cannot read" in error(f"@{tmp_path / 'latin1.csv'}").message
    (tmp_path / "deep.json").write_text("[" * 100_000 + "]" * 100_000)
    assert "nested too deeply" in error(f"@{tmp_path / 'deep.json'}").message


class _Payload:
    """Unpickling this would create the file ``target``."""

    def __init__(self, target):
        self.target = str(target)

    def __reduce__(self):
        return (open, (self.target, "w"))


def test_pickles_are_never_loaded(tmp_path):
    target = tmp_path / "pwned"
    objects = np.array([_Payload(target)], dtype=object)
    np.save(tmp_path / "objects.npy", objects, allow_pickle=True)
    err = error(f"@{tmp_path / 'objects.npy'}")
    assert "holds Python objects (stored as a pickle), which gradcli never loads" in err.message
    (tmp_path / "raw.npy").write_bytes(pickle.dumps(_Payload(target)))
    assert "not a NumPy .npy file" in error(f"@{tmp_path / 'raw.npy'}").message
    (tmp_path / "raw.npz").write_bytes(pickle.dumps(_Payload(target)))
    assert "not a .npz archive" in error(f"@{tmp_path / 'raw.npz'}").message
    np.savez(tmp_path / "mixed.npz", a=np.ones(2), b=objects)
    assert "mixed.npz):b holds Python objects" in error(f"@{tmp_path / 'mixed.npz'}:b").message
    # an archive holding a pickle anywhere is refused whole
    assert "mixed.npz):b holds Python objects" in error(f"@{tmp_path / 'mixed.npz'}:a").message
    assert not target.exists()


def test_a_corrupt_archive_is_an_error(tmp_path):
    np.savez(tmp_path / "a.npz", a=np.ones(3))
    data = (tmp_path / "a.npz").read_bytes()
    (tmp_path / "cut.npz").write_bytes(data[: len(data) // 2])
    assert "not a .npz archive, or a damaged one" in error(f"@{tmp_path / 'cut.npz'}").message
    flipped = data.replace(np.ones(3).tobytes(), np.zeros(3).tobytes())  # the CRC no longer fits
    (tmp_path / "flipped.npz").write_bytes(flipped)
    assert "cannot read" in error(f"@{tmp_path / 'flipped.npz'}").message
    np.save(tmp_path / "plain.npy", np.ones(2))
    (tmp_path / "plain.npz").write_bytes((tmp_path / "plain.npy").read_bytes())
    assert "not a .npz archive" in error(f"@{tmp_path / 'plain.npz'}").message


def test_an_unreadable_file_is_an_error(tmp_path, monkeypatch):
    (tmp_path / "v.json").write_text("[1, 2]")

    def denied(*args, **kwargs):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(Path, "open", denied)
    err = error(f"@{tmp_path / 'v.json'}")
    assert "cannot read" in err.message and "Permission denied" in err.message


def test_a_file_too_large_is_refused_before_it_is_loaded(tmp_path, monkeypatch):
    header = tmp_path / "huge.npy"
    # only the header of a 10^10-element array: the data is never read
    with header.open("wb") as f:
        np.lib.format.write_array_header_1_0(
            f, {"descr": "<f8", "fortran_order": False, "shape": (100_000, 100_000)}
        )
    err = error(f"@{header}")
    assert "would have 10,000,000,000 elements; the limit is 50,000,000" in err.message
    assert "--max-elements" in err.hint
    (tmp_path / "many.json").write_text("[" + "1," * 20 + "1]")
    with bounds.using(bounds.Limits(max_elements=10)):
        assert "would have 21 elements" in error(f"@{tmp_path / 'many.json'}").message
        (tmp_path / "many.csv").write_text("1,2,3\n" * 5)
        assert "would have 12 elements" in error(f"@{tmp_path / 'many.csv'}").message


def test_error_names_the_value():
    with pytest.raises(GradcliError, match="the value of weights is empty"):
        parse_value("", "weights")


def test_named_values_reads_inputs_and_vectors_for_inputs():
    """-i takes NAME=VALUE only, after --x; --t and --v take a bare VALUE for x too."""
    inputs = named_values(["W=ones(2)", "\uff42=3"], "-i", given={"x": np.array(1.0)})
    assert list(inputs) == ["x", "W", "b"], "names are read as Python reads them (NFKC)"
    np.testing.assert_array_equal(inputs["W"], [1.0, 1.0])
    tangents = named_values(["1,0", "w=2"], "--t", bare="x")
    assert list(tangents) == ["x", "w"] and tangents["x"].tolist() == [1.0, 0.0]
    refusals = [
        ((["1,0"], "-i"), {}, "cannot read -i '1,0'", "write -i NAME=VALUE, e.g."),
        ((["2w=1"], "--t"), {"bare": "x"}, "cannot read --t '2w=1'", "write --t VALUE or"),
        ((["x=2"], "-i"), {"given": {"x": np.ones(1)}}, "the input 'x' is given twice", None),
        ((["1", "x=2"], "--v"), {"bare": "x"}, "--v gives 'x' twice", None),
    ]
    for args, options, message, hint in refusals:
        with pytest.raises(GradcliError) as refused:
            named_values(*args, **options)
        assert refused.value.message == message
        assert hint is None or refused.value.hint.startswith(hint)
    with pytest.raises(GradcliError, match="cannot read the value of --t w"):
        named_values(["w=(("], "--t", bare="x")
    with pytest.raises(GradcliError, match="cannot read the value of w:"):
        named_values(["w=(("], "-i")
