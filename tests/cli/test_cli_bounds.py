"""Bounded memory and time for any input (--max-memory, --timeout, long chains).

Memory is measured on a child process: a small Python wrapper runs gradcli under an
address-space limit (so that a regression fails instead of swapping) and reports the peak
resident size of its one child, from ``resource.getrusage(RUSAGE_CHILDREN)``.
"""

from __future__ import annotations

import numpy as np
import pytest
from command_fixtures import measured

from gradcli.base import bounds
from gradcli.base.errors import GradcliError

CHAIN = "x = ones(7000,7000); a = x*2; b = a*2; c = b*2; y = sum(c)"


def test_a_program_past_the_budget_is_refused_before_it_allocates(tmp_path):
    """Four 49,000,000-element values: each within --max-elements, the run past 1 GB."""
    report = measured(["eval", "-e", CHAIN, "--max-memory", "1GB"], tmp_path)
    assert report["code"] == 2, report["stderr"]
    assert "--max-memory" in report["stderr"] and "the budget is 1.0 GB" in report["stderr"]
    assert "the run would need at least" in report["stderr"]
    assert report["peak_mb"] < 600, report  # x alone (392 MB) was made


# issue 27 item 2: results larger than their operands, which were charged as their operands
GROWING = [
    ("y = pad(x, (100000000, 100000000))", "pad", "--max-elements"),
    ("y = one_hot(x, 1000000000)", "one_hot", "--max-elements"),
    (
        "y = conv1d(reshape(x, 1, 1, 2), reshape(x, 1, 1, 2), padding=100000000)",
        "conv1d",
        "--max-elements",
    ),
    ("y = einsum('i,j->ij', repeat(x, 10000), repeat(x, 10000))", "einsum", "--max-elements"),
    ("y = expand(x, 1000, 2) * x", "mul", "--max-elements"),
]


@pytest.mark.parametrize(("program", "operation", "option"), GROWING)
def test_a_result_larger_than_its_operands_is_refused_before_it_is_allocated(
    tmp_path, program, operation, option
):
    """Each exits 2 naming the operation, the statement, the size and the option that raises
    the limit, at the memory of a small run (they took 3.6 to 10.4 GB)."""
    if "expand" in program:  # a view is charged nothing; the product made of it is
        args = ["--max-elements", "1000"]
    else:
        args = []
    report = measured(
        ["eval", "-e", program, "--x", "1,2", "--max-memory", "200MB", *args], tmp_path
    )
    assert report["code"] == 2, report["stderr"]
    stderr = report["stderr"]
    assert f"{operation}" in stderr and "statement 1" in stderr, stderr
    assert "would have" in stderr and "elements" in stderr and option in stderr, stderr
    assert "Traceback" not in stderr
    assert report["peak_mb"] < 300, report


def test_a_result_within_the_elements_past_the_budget_names_max_memory(tmp_path):
    """--max-elements raised: the memory budget refuses pad's 1.6 GB result before it exists."""
    program = "y = pad(x, (100000000, 100000000))"
    args = ["--x", "1,2", "--max-memory", "200MB", "--max-elements", "1000000000"]
    report = measured(["eval", "-e", program, *args], tmp_path)
    assert report["code"] == 2, report["stderr"]
    assert "--max-memory" in report["stderr"] and "the budget is 200 MB" in report["stderr"]
    assert report["peak_mb"] < 300, report


def test_a_broadcast_view_is_charged_what_it_holds(tmp_path):
    """expand makes a view: its sum (which numpy reads without making it) and its gradient
    run within a small budget; the gradient is summed back, never made whole."""
    program = "y = sum(expand(x, 1000000, 2))"
    report = measured(
        ["grad", "-e", program, "--x", "1,2", "--max-memory", "50MB", "--format", "json"], tmp_path
    )
    assert report["code"] == 0, report["stderr"]
    assert report["peak_mb"] < 200, report


def test_the_default_budget_is_half_of_the_available_memory(monkeypatch, cli):
    """On a machine with 7.5 GB available, the chain is refused by the default budget."""
    monkeypatch.setattr(bounds, "available_memory", lambda: 7_500_000_000)
    assert bounds.default_memory() == 3_750_000_000
    result = cli("eval", "-e", CHAIN, "--no-cache")
    assert result.exit_code == 2
    assert "statement 4" in result.stderr and "the budget is 3.8 GB (--max-memory)" in (
        result.stderr
    )


def test_available_memory_is_read_from_meminfo(tmp_path):
    meminfo = tmp_path / "meminfo"
    meminfo.write_text("MemTotal:  16000000 kB\nMemAvailable:   8000000 kB\n")
    assert bounds.available_memory(str(meminfo)) == 8_192_000_000
    assert bounds.available_memory(str(tmp_path / "none")) is not None  # sysconf's pages


@pytest.mark.parametrize(
    ("text", "count"),
    [("2GB", 2 * 10**9), ("512MB", 512 * 10**6), ("1e9", 10**9), ("1.5GiB", 3 * 2**29)],
)
def test_sizes_are_read_in_bytes(text, count):
    assert bounds.parse_bytes(text) == count


@pytest.mark.parametrize("text", ["lots", "2XB", "-1GB", "10", "nan", ""])
def test_a_size_that_cannot_be_read_is_refused(text):
    with pytest.raises(GradcliError, match="--max-memory"):
        bounds.parse_bytes(text)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--max-memory", "lots"], "--max-memory: cannot read the size 'lots'"),
        (["--timeout", "0"], "--timeout must be a number of seconds above 0"),
        (["--timeout", "nan"], "--timeout must be a number of seconds above 0"),
    ],
)
def test_bad_budget_options_are_refused(cli, options, message):
    result = cli("eval", "-e", "y = x*2", "--x", "1", *options)
    assert result.exit_code == 2 and message in result.stderr


def test_stdin_is_read_no_further_than_the_budget(tmp_path):
    with open("/dev/urandom", "rb") as noise:
        report = measured(
            ["eval", "-e", "y = x*2", "--x", "-", "--max-memory", "100MB"],
            tmp_path,
            limit_mb=1000,
            stdin=noise,
        )
    assert report["code"] == 2, report["stderr"]
    assert "x (stdin) holds more than" in report["stderr"] and "--max-memory" in report["stderr"]
    assert report["peak_mb"] < 200, report


def test_a_text_file_is_read_no_further_than_the_budget(cli, tmp_path):
    path = tmp_path / "big.csv"
    path.write_text("1," * 3_000_000 + "1\n")
    result = cli("eval", "-e", "y = x*2", "--x", f"@{path}", "--max-memory", "16MB")
    assert result.exit_code == 2
    assert "holds more than" in result.stderr and "the memory budget, 16.0 MB" in result.stderr
    path.write_text("1," * 1000 + "1\n")
    assert cli("eval", "-e", "y = sum(x)", "--x", f"@{path}", "--max-memory", "16MB").exit_code == 0


def test_an_archive_member_is_checked_against_the_budget_before_it_inflates(tmp_path):
    path = tmp_path / "bomb.npz"
    np.savez_compressed(path, x=np.zeros(20_000_000, dtype=np.uint8))
    assert path.stat().st_size < 100_000
    report = measured(
        ["eval", "-e", "y = sum(x)", "--x", f"@{path}", "--max-memory", "100MB"], tmp_path
    )
    assert report["code"] == 2, report["stderr"]
    assert "would need 160 MB of memory; the budget is 100 MB (--max-memory)" in report["stderr"]
    assert report["peak_mb"] < 150, report


def test_batch_out_is_written_chunk_by_chunk(tmp_path):
    """20,000 points of a 1,000-element result: 160 MB on disk, far less in memory."""
    points, out = tmp_path / "points.npy", tmp_path / "results.npz"
    np.save(points, np.arange(20_000.0))
    program = "w = ones(1000); y = x*w"
    args = ["eval", "-e", program, "--batch", f"@{points}", "--out", str(out)]
    report = measured([*args, "--max-memory", "100MB"], tmp_path, limit_mb=800)
    assert report["code"] == 0, report["stderr"]
    assert report["peak_mb"] < 250, report  # gathered and joined, the results took 320 MB
    with np.load(out) as archive:
        assert archive.files == ["values.y"]
        y = archive["values.y"]
        assert y.shape == (20_000, 1000)
        np.testing.assert_array_equal(y[:, 0], np.arange(20_000.0))
        np.testing.assert_array_equal(y[:, -1], np.arange(20_000.0))
    assert list(tmp_path.glob(".gradcli-*")) == []  # the parts are removed


def test_batch_out_npy_holds_the_gradients(cli, tmp_path):
    points, out = tmp_path / "points.npy", tmp_path / "grads.npy"
    np.save(points, np.arange(10.0).reshape(5, 2))
    args = ["grad", "-e", "y = sum(x*x)", "--batch", f"@{points}", "--out", str(out)]
    result = cli(*args)
    assert result.exit_code == 0, result.stderr
    np.testing.assert_allclose(np.load(out), 2 * np.arange(10.0).reshape(5, 2))
    two = cli("vjp", "-e", "y = x*w", "-i", "w=1,2", "--v", "1,1", "--batch", f"@{points}")
    assert two.exit_code == 0
    many = cli(*args[:-1], str(tmp_path / "r.npy"), "--wrt", "x")
    assert many.exit_code == 0


# A batch the timeout stops: 2 s, a few chunks of it done on a machine of 2 cores that runs the
# suite on both (pytest-xdist) beside another job; 10^6 points, far from all of them.
BATCH_TIMEOUT, BATCH_POINTS = "2", 1_000_000


def test_a_batch_stopped_by_the_timeout_keeps_its_points(tmp_path):
    points, out = tmp_path / "points.npy", tmp_path / "results.npy"
    np.save(points, np.arange(float(BATCH_POINTS)))
    program = "w = ones(200); y = sum(sin(x*w))"
    args = ["grad", "-e", program, "--batch", f"@{points}", "--out", str(out)]
    measured(["eval", "-e", program, "--x", "1"], tmp_path)  # parsed: the cache holds it
    report = measured([*args, "--timeout", BATCH_TIMEOUT], tmp_path)
    assert report["code"] == 124, report["stderr"]
    assert f"timed out after {BATCH_TIMEOUT} s (--timeout)" in report["stderr"]
    done = int(report["stderr"].split(": wrote ")[1].split(" of ")[0])
    assert 0 < done < BATCH_POINTS
    grads = np.load(out)
    assert grads.shape == (done,)
    np.testing.assert_allclose(grads, 200 * np.cos(np.arange(done)), atol=1e-9)


def test_batch_lines_stopped_by_the_timeout_are_whole(tmp_path):
    points = tmp_path / "points.npy"
    np.save(points, np.arange(float(BATCH_POINTS)))
    program = "w = ones(200); y = sum(sin(x*w))"
    measured(["eval", "-e", program, "--x", "1"], tmp_path)  # parsed: the cache holds it
    args = ["grad", "-e", program, "--batch", f"@{points}", "--timeout", BATCH_TIMEOUT]
    report = measured(args, tmp_path)
    assert report["code"] == 124, report["stderr"]
    assert report["stdout"].endswith("}\n")
    assert "wrote " in report["stderr"] and f" of {BATCH_POINTS} points" in report["stderr"]


@pytest.mark.parametrize(
    ("args", "doing"),
    [
        # 10,000 backward passes of 10^5 elements: about 4 s on a quiet machine (of 2, under 1 s)
        (["grad", "-e", "y = sum(x*x)", "--x", "rand(100000)", "--repeat", "10000"], "backward"),
        (["check", "-e", "y = sum(x*x)", "--x", "rand(10000)"], "computing the Jacobian of y"),
        # each point runs the program's statements: the deadline meets one or the other
        (
            ["plot", "-e", "w = ones(3000); y = sum(sin(x*w))", "--points", "10000"],
            "point |statement ",
        ),
    ],
)
def test_the_timeout_stops_between_steps_and_says_where(cli, args, doing):
    assert cli("eval", *args[1:3], "--x", "1").exit_code == 0  # parsed: the cache holds it
    result = cli(*args, "--timeout", "1")
    assert result.exit_code == 124, result.stderr
    assert "timed out after 1 s (--timeout)" in result.stderr
    assert any(where in result.stderr for where in doing.split("|")), result.stderr


def test_the_timeout_stops_explain_on_thousands_of_statements(cli):
    program = "\n".join(["h1 = x*1.01+0.1", *(f"h{i} = h{i - 1}*1.01+0.1" for i in range(2, 3301))])
    result = cli("explain", "-e", program, "--x", "0.5", "--timeout", "1", "--no-cache")
    assert result.exit_code == 124, result.stderr
    assert "while running gradcli explain" in result.stderr


def _chain(n: int) -> str:
    return "\n".join(
        ["h1 = sin(x)*1.01+0.1", *(f"h{i} = sin(h{i - 1})*1.01+0.1" for i in range(2, n + 1))]
    )


@pytest.mark.parametrize("n", [50, 500])
def test_check_on_a_long_chain_falls_back_to_the_numerical_methods(cli, n):
    result = cli("check", "-e", _chain(n), "--x", "0.5", "--no-cache")
    assert result.exit_code == 0, result.stderr
    assert "no symbolic check: the formulas nest too deeply" in result.stderr
    assert "all methods agree" in result.stdout


def test_symbolic_gradients_of_a_long_chain_say_why_there_are_none(cli):
    result = cli("grad", "-e", _chain(50), "--x", "0.5", "--symbolic", "--no-cache")
    assert result.exit_code == 0, result.stderr
    assert "no symbolic form: the formulas nest too deeply" in result.stderr


def test_a_short_chain_still_gets_its_symbolic_check(cli):
    result = cli("check", "-e", _chain(6), "--x", "0.5", "--no-cache")
    assert result.exit_code == 0 and "no symbolic check" not in result.stderr


def test_inputs_are_charged_together_before_each_is_built(cli):
    program = "x = ones(3000, 3000); w = ones(3000, 3000); z = ones(3000, 3000); y = sum(x)"
    result = cli("eval", "-e", program, "--max-memory", "400MB", "--no-cache")
    assert result.exit_code == 2
    assert "statement 3 (line 1): with ones(3000, 3000), the run would need at least 540 MB" in (
        result.stderr
    )


def test_a_result_too_large_to_write_as_json_is_refused_before_it_is_written(cli):
    program = "x = ones(1000, 1000); y = x*2"
    result = cli("eval", "-e", program, "--format", "json", "--max-memory", "100MB")
    assert result.exit_code == 2 and result.stdout == ""
    assert "writing 2,000,000 values as JSON would need 128 MB of memory" in result.stderr
    assert cli("eval", "-e", program, "--max-memory", "100MB").exit_code == 0  # a table


def test_batch_chunks_are_small_enough_that_their_json_text_fits_the_budget():
    from gradcli.batch.plan import run
    from gradcli.commands.compute import bind
    from gradcli.lang import load_program

    program = load_program("w = ones(1000); y = x*w", use_cache=False)
    points = {"x": np.arange(5_000.0)}
    with bounds.using(bounds.Budget(50 * 10**6)):
        bound = bind(program, {"x": np.zeros(())})
        sizes = [len(chunk.values["y"]) for chunk in run(bound, "eval", points)]
    assert sum(sizes) == 5_000
    assert max(sizes) * 1000 * bounds.RENDERING_BYTES["json"] <= 50 * 10**6


def test_a_script_is_held_to_the_budget_too(cli, tmp_path):
    script = tmp_path / "big.py"
    script.write_text(
        "import torch\nx = torch.ones(2000, 2000)\ny = x * 2\nz = y * 2\nprint(z.sum())\n"
    )
    assert cli("run", str(script)).exit_code == 0
    result = cli("run", str(script), "--max-memory", "130MB")
    assert result.exit_code == 2
    # x (32 MB) is held from statement 2 on: y would take the run to (32 + 32) MB x 2.5
    assert (
        "line 3: with the result of mul (4,000,000 elements), the run would need "
        "at least 160 MB" in result.stderr
    )
