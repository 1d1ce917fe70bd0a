"""explain's output on the seed post's examples: J^T v, and the note of an element-wise
(diagonal) Jacobian."""

from __future__ import annotations

EXAMPLE2 = "y0=x0**2; y1=x0**2+5*x1**2; y2=3*x1"


def test_explain_example_2_shows_the_post_s_jt_v(cli_json):
    details = cli_json("explain", "-e", EXAMPLE2, "--x", "1,2", "--v", "1,1,1")["explain"]
    assert details["jacobian_t"]["x"] == [["2*x_0", "2*x_0", "0"], ["0", "10*x_1", "3"]]
    assert details["jt_v"]["x"] == [4.0, 23.0]
    assert [row["node"] for row in details["backward"]] == ["y2", "y1", "y0"]


def test_explain_says_an_elementwise_jacobian_is_diagonal(cli_json):
    doc = cli_json("explain", "-f", "samples/explain_log.gc", "--v", "[[3,2,0],[4,0,1]]")
    (note,) = doc["explain"]["notes"]
    assert "diagonal" in note and "1/x" in note
    assert doc["grads"]["x"] == [[3.0, 1.0, 0.0], [1.0, 0.0, 1 / 6]]
