"""``gradcli eval``: values in double and single precision, and how JSON writes NaN and the
infinities, checked as values (independent of the snapshots)."""

from __future__ import annotations

import json

import numpy as np
import pytest

FIRST = "samples/first_example.gc"


def test_float32_runs_in_single_precision(cli_json):
    double = cli_json("eval", "-e", "y = x * 1", "--x", "0.1")
    single = cli_json("eval", "-e", "y = x * 1", "--x", "0.1", "--dtype", "float32")
    assert double["values"]["y"] == 0.1
    assert single["values"]["y"] == float(np.float32(0.1)) != 0.1
    grads = cli_json("grad", "-f", FIRST, "--dtype", "float32")
    np.testing.assert_array_equal(grads["grads"]["x"], np.full((2, 2), 4.5))
    jac = cli_json("jacobian", "-f", "samples/vjp_example2.gc", "--dtype", "float32")
    assert jac["jacobian"]["x"] == [[2.0, 0.0], [2.0, 20.0], [0.0, 3.0]]


# -- JSON: NaN and infinities are null, or strings with --nonfinite string ----------------------


def test_json_writes_minus_inf_for_log_zero(cli):
    result = cli("eval", "-e", "y = log(x)", "--x", "0,1", "--format", "json")
    assert result.exit_code == 0
    assert "Infinity" not in result.stdout and "inf" not in result.stdout.split("warnings")[0]
    assert json.loads(result.stdout)["values"]["y"] == [None, 0.0]
    asked = cli(
        "eval", "-e", "y = log(x)", "--x", "0,1", "--format", "json", "--nonfinite", "string"
    )
    assert json.loads(asked.stdout)["values"]["y"] == ["-inf", 0.0]


@pytest.mark.parametrize("nonfinite, nan, inf, minus_inf", [
    ([], None, None, None),
    (["--nonfinite", "null"], None, None, None),
    (["--nonfinite", "string"], "nan", "inf", "-inf"),
])  # fmt: skip
def test_json_nan_and_inf_everywhere(cli_json, nonfinite, nan, inf, minus_inf):
    values = cli_json("eval", "-e", "y = log(x); z = 1 / x", "--x", "-1,0,1", *nonfinite)
    assert values["values"]["y"] == [nan, minus_inf, 0.0]
    assert values["values"]["z"] == [-1.0, inf, 1.0]
    grads = cli_json("grad", "-e", "y = sum(log(x))", "--x", "-1,0,1", *nonfinite)["grads"]
    assert grads["x"] == [-1.0, inf, 1.0]
    scalar = cli_json("eval", "-e", "y = sqrt(x)", "--x", "-1", *nonfinite)["values"]
    assert scalar["y"] == nan
