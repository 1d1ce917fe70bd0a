"""One JSON object per result: valid JSON always, NaN and infinities as strings."""

from __future__ import annotations

import json
import math
from typing import Any

import numpy as np

from ..compute import Result


def plain(value):
    """An array or number as nested lists of floats, with "nan", "inf", "-inf" as strings."""
    if value is None:
        return None
    array = np.asarray(value, dtype=float)
    if np.all(np.isfinite(array)):
        return array.tolist()
    return _spelled(array.tolist())


def _spelled(value):
    if isinstance(value, list):
        return [_spelled(v) for v in value]
    if math.isnan(value):
        return "nan"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    return value


def _numbers(tree):
    """A nested structure of dicts and lists with every array in it made ``plain``."""
    if isinstance(tree, dict):
        return {k: _numbers(v) for k, v in tree.items()}
    if isinstance(tree, (list, tuple)):
        return [_numbers(v) for v in tree]
    if isinstance(tree, (np.ndarray, np.generic)):
        return plain(tree)
    return tree


def to_json(result: Result) -> str:
    document: dict[str, Any] = {"command": result.command, "output": result.output}
    if result.values:
        document["values"] = {k: plain(v) for k, v in result.values.items()}
    if result.grads:
        document["grads"] = {k: plain(v) for k, v in result.grads.items()}
    if result.jacobian:
        document["jacobian"] = {k: plain(v) for k, v in result.jacobian.items()}
        document["layout"] = (
            "input.shape + output.shape" if result.transposed else "output.shape + input.shape"
        )
    if result.mode:
        document["mode"] = result.mode
    if result.jvp:
        document["jvp"] = {k: plain(v) for k, v in result.jvp.items()}
    if result.hessian:
        document["hessian"] = {f"{a},{b}": plain(v) for (a, b), v in result.hessian.items()}
    if result.hvp:
        document["hvp"] = {k: plain(v) for k, v in result.hvp.items()}
    if result.check:
        document["check"] = {
            method: {k: plain(v) for k, v in jacobians.items()}
            for method, jacobians in result.check.items()
        }
        document["agree"] = result.agree
        document["worst"] = list(result.worst)
    if result.formulas:
        document["symbolic"] = {k: np.asarray(v).tolist() for k, v in result.formulas.items()}
    if result.explain:
        document["explain"] = _numbers(result.explain)
    if result.plot:
        document["plot"] = {k: plain(v) for k, v in result.plot.items()}
    if result.graph:
        document["graph"] = _numbers(result.graph)
    document["warnings"] = list(result.warnings)
    return json.dumps(document, allow_nan=False)
