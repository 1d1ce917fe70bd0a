"""check: the Jacobian four ways, their agreement, tolerances and what it says at a kink,
a singular or an empty point."""

from __future__ import annotations

import json
import re

import pytest

EXAMPLE2 = "y0=x0**2; y1=x0**2+5*x1**2; y2=3*x1"


def test_check_agrees_on_example_2(cli):
    result = cli("check", "-e", EXAMPLE2, "--x", "1,2", "--format", "json")
    assert result.exit_code == 0
    doc = json.loads(result.stdout)
    assert doc["agree"] is True
    assert set(doc["check"]) == {"reverse", "forward", "finite differences", "symbolic"}
    assert doc["check"]["symbolic"]["x"] == [[2.0, 0.0], [2.0, 20.0], [0.0, 3.0]]


def test_check_fails_at_a_kink_and_names_the_entry(cli, parse_json):
    result = cli("check", "-f", "samples/check_kink.gc")
    assert result.exit_code == 1
    assert "DISAGREE" in result.stdout
    line = "finite differences differs from reverse mode at dy/dx[0,0]: 1.5 vs 0\n"
    assert line in result.stdout, "the table writes the numbers in --precision digits"
    # 3 h / 2 h: 1.5 give or take the last bit, which depends on the step h = eps^(1/3); JSON
    # holds every digit
    (worst,) = parse_json(cli("check", "-f", "samples/check_kink.gc", "--format", "json").stdout)[
        "worst"
    ]
    found = re.fullmatch(r".* at dy/dx\[0,0\]: (\S+) vs 0\.0", worst)
    assert found and float(found.group(1)) == pytest.approx(1.5, rel=1e-15)


def test_check_writes_a_difference_in_as_many_digits_as_tell_the_numbers_apart(cli, parse_json):
    """--precision digits, or more where two numbers that differ would read the same."""
    args = ["check", "-e", "y = x**3", "--x", "1.00001", "--rtol", "0", "--atol", "1e-12"]
    document = parse_json(cli(*args, "--format", "json").stdout)
    exact = [float(n) for n in re.search(r": (\S+) vs (\S+)$", document["worst"][0]).groups()]
    assert exact[0] != exact[1] and exact[0] == pytest.approx(exact[1], rel=1e-9)
    for digits in ("2", "4"):
        result = cli(*args, "--precision", digits)
        assert result.exit_code == 1
        (line,) = [line for line in result.stdout.splitlines() if "differs from" in line]
        shown = re.search(r": (\S+) vs (\S+)$", line).groups()
        assert shown[0] != shown[1], line
        for text, number in zip(shown, exact):
            assert float(text) == pytest.approx(number, rel=1e-9), line


@pytest.mark.parametrize(
    "program, x, line",
    [
        ("y = sqrt(x)", "0", "symbolic differs from reverse mode at dy/dx: nan vs inf"),
        ("y = log(x)", "-1", "finite differences differs from reverse mode at dy/dx: nan vs -1"),
        ("y = mean(x)", "zeros(0)", None),
    ],
)
def test_check_at_a_singular_or_empty_point_reports_instead_of_crashing(cli, program, x, line):
    result = cli("check", "-e", program, "--x", x)
    if line is None:
        assert result.exit_code == 0 and "all methods agree" in result.stdout
    else:
        assert result.exit_code == 1, result.stderr
        assert "the methods DISAGREE" in result.stdout and line in result.stdout


def test_check_tolerances_are_options(cli):
    loose = cli("check", "-f", "samples/check_kink.gc", "--atol", "2")
    assert loose.exit_code == 0
