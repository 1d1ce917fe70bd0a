"""program (and build): inputs, element vectors, the default output, declared inputs, running."""

from __future__ import annotations

import numpy as np
import pytest

import gradcli.ops.library as gc
from gradcli.base.errors import GradcliError
from gradcli.commands.compute import bind
from gradcli.engine.compile import trace
from gradcli.lang import parse_program
from gradcli.lang.program import RunLog


def run(source: str, record: list | None = None, **values) -> dict:
    program = parse_program(source)
    leaves = {name: gc.tensor(np.asarray(v, dtype=float)) for name, v in values.items()}
    log = RunLog()
    env = program.run(leaves, log)
    if record is not None:
        record.extend(log.notes)
    return env


# -- inputs --------------------------------------------------------------------------------------


def test_inputs_are_free_names_in_order_of_first_use():
    program = parse_program("y = b * a; z = y + c + a")
    assert program.free_names() == ["b", "a", "c"]
    assert program.inputs(set()) == ["b", "a", "c"]


def test_declared_inputs_come_first():
    program = parse_program("W = randn(2, 3)\nb = zeros(2)\ny = W @ x + b")
    assert list(program.declared) == ["W", "b"]
    assert program.inputs({"x"}) == ["W", "b", "x"]


def test_indexed_style_x0_means_x_0_when_x_is_given():
    program = parse_program("y0 = x0**2; y1 = x0**2 + 5*x1**2; y2 = 3*x1")
    assert program.free_names() == ["x0", "x1"]
    assert program.inputs({"x"}) == ["x"]
    assert program.inputs({"x0", "x1"}) == ["x0", "x1"], "separate scalars when given so"
    assert program.inputs(set()) == ["x0", "x1"]


def test_an_element_used_twice_is_taken_once_only_without_a_graph():
    """x0 in two statements: taken once a run where it carries no graph node (forward mode),
    with the same values and tangents; taken at each use where it does, a node each."""
    program = parse_program("a = x0**2; b = x0*3 + x1")
    x = np.array([1.5, -2.0])

    def run(requires_grad):
        return program.run({"x": gc.Tensor(x, requires_grad=requires_grad)})

    plain = run(False)
    assert plain["a"].item() == 2.25 and plain["b"].item() == 2.5
    graph = run(True)
    first, second = graph["a"].grad_fn.inputs[0], graph["b"].grad_fn.inputs[0].grad_fn.inputs[0]
    assert first is not second and first.grad_fn is not None and second.grad_fn is not None

    def both(v):
        env = program.run({"x": v})
        return [env["a"], env["b"]]

    taken = [s for s in trace(both, x).steps if s[0] == "getitem" and s[3]["index"] == (0,)]
    assert len(taken) == 1
    _, tangent = gc.jvp(lambda v: program.run({"x": v})["b"], (gc.Tensor(x),), (gc.Tensor(x),))
    assert tangent.item() == 3 * 1.5 - 2.0


def test_indexed_style_with_a_declared_vector():
    program = parse_program("x = tensor([1, 2])\ny = x0 * x1")
    assert program.inputs(set()) == ["x"]


def test_a_given_name_the_program_does_not_use_is_not_an_input():
    program = parse_program("y = x * 2")
    assert program.inputs({"x", "q"}) == ["x"]
    with pytest.raises(GradcliError, match="no input 'q'") as info:
        bind(program, {"x": np.ones(1), "q": np.ones(1)})
    assert "its inputs are: x" in info.value.hint


def test_bind_suggests_the_closest_input():
    program = parse_program("y = weight * x")
    with pytest.raises(GradcliError) as info:
        bind(program, {"x": np.ones(1), "weight": np.ones(1), "wieght": np.ones(1)})
    assert info.value.hint == "did you mean 'weight'?"


def test_bind_without_a_value():
    program = parse_program("y = w * x")
    with pytest.raises(GradcliError, match="no value for the input 'w'") as info:
        bind(program, {"x": np.ones(1)})
    assert info.value.hint == "give it with -i w=VALUE"
    with pytest.raises(GradcliError) as info:
        bind(program, {"w": np.ones(1)})
    assert info.value.hint == "give it with --x VALUE"


# -- element vectors -----------------------------------------------------------------------------


def test_groups_and_default_output_of_element_vectors():
    program = parse_program("y0 = x0**2; y1 = x0**2 + 5*x1**2; y2 = 3*x1")
    assert program.groups() == {"y": ["y0", "y1", "y2"]}
    assert program.default_output() == "y"
    env = run(program.source, x=[1, 2])
    np.testing.assert_array_equal(env["y"].data, [1, 21, 6])


def test_a_gap_in_an_element_vector_is_zero_with_a_warning():
    program = parse_program("y0 = x0; y2 = x1")
    assert program.groups() == {"y": ["y0", None, "y2"]}
    log = RunLog()
    env = program.run({"x": gc.tensor([1.0, 2.0])}, log)
    record = log.notes
    np.testing.assert_array_equal(env["y"].data, [1, 0, 2])
    assert record == ["y1 is not assigned: y[1] is taken as 0"]


def test_elements_without_a_zeroth_are_not_a_vector():
    program = parse_program("y1 = x; y2 = x")
    assert program.groups() == {}
    assert program.default_output() == "y2"


def test_an_assigned_or_declared_base_is_not_a_vector():
    assert parse_program("y = x; y0 = x; y1 = x").groups() == {}
    assert parse_program("y = ones(2); y0 = x").groups() == {}


def test_elements_of_different_shapes_are_a_vector_only_when_used():
    """h0 = x*2; h1 = sum(h0) are layer names, not a vector; using y as one is an error."""
    env = run("h0 = x * 2; h1 = sum(h0); out = h1 * 3", x=[1.0, 2.0])
    assert "h" not in env and float(env["out"].data) == 18.0
    with pytest.raises(GradcliError, match="the elements of y have different shapes"):
        run("y0 = x; y1 = x0; out = sum(y)", x=[1.0, 2.0])


def test_element_names_need_a_canonical_index_and_few_gaps():
    """y00 is not y[0]; y1000000 does not make a vector of a million zeros."""
    program = parse_program("y0 = x; y00 = 2*x; z0 = x; z1000000 = x")
    assert program.groups() == {"y": ["y0"]}


def test_a_vector_used_after_its_elements():
    env = run("y0 = x0; y1 = x1 * 3; out = sum(y)", x=[1.0, 2.0])
    assert float(env["out"].data) == 7.0


@pytest.mark.parametrize(
    "source, late",
    [
        ("z = sum(y); y0 = x; y1 = x", "y0 is assigned in statement 2"),
        ("y0 = x; z = sum(y); y1 = x", "y1 is assigned in statement 3"),
        ("y0 = x; y1 = sum(y)", "y1 is assigned in statement 2"),
    ],
)
def test_a_vector_used_before_all_its_elements_are_assigned(source, late):
    with pytest.raises(GradcliError, match="'y' is used before all its elements") as info:
        parse_program(source)
    assert late in info.value.message


def test_an_element_out_of_range():
    with pytest.raises(GradcliError, match=r"x5 means x\[5\], but x has shape \(2,\)") as info:
        run("y = x5 * 2", x=[1.0, 2.0])
    assert info.value.hint == "give x at least 6 elements"


# -- default output ------------------------------------------------------------------------------


def test_default_output_is_the_last_assigned_name():
    assert parse_program("y = x + 2; z = y * y; out = mean(z)").default_output() == "out"
    assert parse_program("out = mean(x); y = x * 2").default_output() == "y"


def test_default_output_of_a_program_of_declarations_only():
    assert parse_program("x = ones(2)").default_output() == "x"


# -- errors found while building -----------------------------------------------------------------


def test_used_before_assigned():
    with pytest.raises(GradcliError) as info:
        parse_program("y = z + 1\nz = 3")
    error = info.value
    assert error.message == "'z' is used before it is assigned (in statement 2)"
    assert error.where == "statement 1 (line 1)" and error.column == 4


def test_used_before_assigned_points_at_the_whole_name():
    with pytest.raises(GradcliError) as info:
        parse_program("y = sizez + z; z = 1")
    assert info.value.column == len("y = sizez + ")


def test_self_reference_is_used_before_assigned():
    with pytest.raises(GradcliError, match="'y' is used before it is assigned"):
        parse_program("y = y + 1")


def test_reassignment():
    with pytest.raises(GradcliError) as info:
        parse_program("y = x\nz = y\ny = 2")
    assert info.value.message == "'y' is already assigned in statement 1"
    assert info.value.where == "statement 3 (line 3)" and info.value.column == 0


def test_a_declared_input_cannot_be_reassigned():
    with pytest.raises(GradcliError, match="'W' is already assigned"):
        parse_program("W = randn(2); W = W * 2")


# -- declared inputs -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "declaration, requires_grad",
    [
        ("w = randn(3, requires_grad=True)", True),
        ("w = randn(3, requires_grad=False)", False),
        ("w = randn(3)", False),
        ("w = tensor([1, 2, 3], requires_grad=True)", True),
        ("w = ones(3)", False),
    ],
)
def test_declared_requires_grad(declaration, requires_grad):
    program = parse_program(f"{declaration}\ny = sum(w * x)")
    array, flag = program.declared_value("w", seed=0)
    assert array.shape == (3,) and flag is requires_grad
    bound = bind(program, {"x": np.ones(3)})
    assert bound.requires_grad == {"w": requires_grad, "x": True}
    assert bind(program, {"x": np.ones(3)}, wrt=["w"]).requires_grad == {"w": True, "x": False}


def test_a_value_given_for_a_declared_input_keeps_its_requires_grad():
    program = parse_program("w = zeros(2)\nv = ones(2, requires_grad=True)\ny = sum(w * v)")
    bound = bind(program, {"w": np.array([5.0, 6.0]), "v": np.array([1.0, 2.0])})
    np.testing.assert_array_equal(bound.arrays["w"], [5, 6])
    assert bound.requires_grad == {"w": False, "v": True}


def test_declared_random_values_depend_on_name_and_seed():
    program = parse_program("a = randn(4)\nb = randn(4)\ny = a + b")
    a0, _ = program.declared_value("a", 0)
    b0, _ = program.declared_value("b", 0)
    assert not np.array_equal(a0, b0)
    np.testing.assert_array_equal(program.declared_value("a", 0)[0], a0)
    assert not np.array_equal(program.declared_value("a", 1)[0], a0)


@pytest.mark.parametrize(
    "declaration, message",
    [
        ("w = ones(2, requires_grad=1)", "requires_grad must be True or False"),
        ("w = ones(2, grad=True)", "ones has no argument named 'grad'"),
        ("w = ones(x)", "the name 'x' is not allowed in a value"),
        ("w = ones(-2)", "sizes must be non-negative whole numbers"),
        ("w = tensor([[1, 2], [3]])", "same length"),
    ],
)
def test_bad_declarations_name_their_statement(declaration, message):
    program = parse_program(f"y = 1\n{declaration}")
    with pytest.raises(GradcliError, match=message) as info:
        program.declared_value("w", 0)
    assert info.value.where == "statement 2 (line 2)"


# -- running -----------------------------------------------------------------------------------


def test_run_returns_inputs_and_every_assigned_name():
    env = run("y = x + 2; z = y * y * 3; out = mean(z)", x=np.ones((2, 2)))
    assert list(env) == ["x", "y", "z", "out"]
    assert float(env["out"].data) == 27.0


def test_a_constant_assignment_is_a_tensor():
    env = run("y = 2 * 3; z = pi")
    assert isinstance(env["y"], gc.Tensor) and float(env["y"].data) == 6.0
    assert isinstance(env["z"], gc.Tensor) and not env["y"].requires_grad


def test_shape_errors_name_the_statement_and_the_operator_column():
    with pytest.raises(GradcliError) as info:
        run("y = x * 2\nz = x + w", x=[1.0, 2.0], w=[1.0, 2.0, 3.0])
    error = info.value
    assert error.where == "statement 2 (line 2)"
    assert "(2,)" in error.message and "(3,)" in error.message
    assert error.column == "z = x + w".index("+")


def test_a_name_without_a_value_when_run():
    with pytest.raises(GradcliError, match="'q' has no value") as info:
        run("y = q * 2")
    assert info.value.hint == "give it with -i q=VALUE"


def test_cached_program_runs_the_same():
    import json

    from gradcli.lang import ParsedProgram

    program = parse_program("y0 = x0 * 2; y1 = sin(x1); out = sum(y * y)")
    again = ParsedProgram.from_json(json.loads(json.dumps(program.to_json())))
    x = gc.tensor([0.5, 1.5])
    assert float(again.run({"x": x})["out"].data) == float(program.run({"x": x})["out"].data)


def test_constants_take_the_dtype_of_the_inputs():
    """A float32 run stays float32, as in PyTorch: sin(1) and 2*3 do not promote x."""
    import gradcli as gc
    from gradcli.lang import parse_program

    env = parse_program("y = x * sin(1); z = 2*3; w = x * z + pi").run(
        {"x": gc.tensor([1.0, 2.0], dtype=gc.float32)}
    )
    assert {name: str(t.dtype) for name, t in env.items()} == dict.fromkeys("xyzw", "float32")


def test_every_kind_of_node_round_trips_through_the_cache_json():
    import json

    from gradcli.lang import ParsedProgram

    source = (
        "a = stack([x, x * 2], dim=0); b = a[..., None, 0:2, ::-1][0]; "
        "c = cross_entropy(reshape(a, 2, -1), a, reduction='sum'); d = clamp(x, max=1.5); "
        "s = sum(a, dim=(0, -1)); f = a.permute(1, 0); g = torch.zeros(2, 2); g[0, :] = x"
    )
    program = parse_program(source)
    again = ParsedProgram.from_json(json.loads(json.dumps(program.to_json())))
    assert again == program


@pytest.mark.parametrize(
    "ir",
    [
        ["call", "system", [["ref", "x"]], []],  # not an operation of the language
        ["call", "sin", [["ref", "__import__('os')"]], []],  # not a name
        ["index", ["ref", "x"], [[0, "1", None]]],  # a slice of text
        ["call", "sum", [["ref", "x"]], [{"dim": 0}]],  # an option that is not a literal
        ["const", True],
        ["lit", 1],
    ],
)
def test_a_cache_entry_that_is_not_the_parsers_ir_is_parsed_afresh(ir, tmp_path, monkeypatch):
    import json

    from gradcli.lang import load_program
    from gradcli.lang.cache import entry_path, seal

    monkeypatch.setenv("GRADCLI_CACHE_DIR", str(tmp_path))
    source = "y = sin(x)"
    expected = load_program(source)
    entry = expected.to_json()
    entry["assignments"][0]["ir"] = ir
    path = entry_path(source)
    assert path is not None
    # sealed with a checksum that holds: the IR itself is what is refused
    path.write_text(json.dumps(seal(source, "program", entry)))
    assert load_program(source) == expected
    assert json.loads(path.read_text())["content"] == expected.to_json()  # and rewritten


def test_a_build_with_other_signatures_reads_none_of_the_caches_entries(monkeypatch, tmp_path):
    """An operation given a new option (another checkout of the same version) gets a cache of
    its own: an entry holds the options of the table that wrote it."""
    # a cache directory of its own (on a fresh machine ~/.cache/gradcli may not exist yet)
    monkeypatch.setenv("GRADCLI_CACHE_DIR", str(tmp_path))
    import dataclasses

    from gradcli.lang import cache
    from gradcli.lang.functions import FUNCTIONS, Param

    before = cache.entry_path("y = sum(x)")
    sum_op = FUNCTIONS["sum"]
    changed = dataclasses.replace(sum_op, params=(*sum_op.params, Param("dtype", "int or None")))
    with pytest.MonkeyPatch.context() as table:  # undone before the last check
        table.setitem(FUNCTIONS, "sum", changed)
        cache._signatures.cache_clear()
        try:
            assert cache.entry_path("y = sum(x)") != before
        finally:
            table.undo()
            cache._signatures.cache_clear()
    assert cache.entry_path("y = sum(x)") == before
