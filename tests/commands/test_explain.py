"""``explain``'s local derivatives: a formula and a value for every operation, the values
checked against torch's Jacobian of the same operation; numbers in its JSON; --precision.

Each case is one statement ``out = ...`` of one function of the language, run by
``gradcli explain --format json``. For each local derivative the test takes torch's full
Jacobian J of the statement by that operand and reads the value the way its layout says:
element-wise (J 1), per element (J^T 1), the Jacobian blocks, or the other operand of a
matrix product.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest
from command_fixtures import SAMPLES, run_line
from explain_layer_cases import CASES as LAYER_CASES
from explain_layer_cases import FIXED as LAYER_FIXED
from explain_linalg_cases import CASES as LINALG_CASES
from explain_singles_cases import CASES as SINGLES_CASES
from explain_singles_cases import FIXED as SINGLES_FIXED

from gradcli.domains.symbolic import elementwise
from gradcli.lang import parse_program
from gradcli.lang.functions import FUNCTIONS

torch = pytest.importorskip("torch")
F = torch.nn.functional

X = [0.5, -1.2, 2.0, 0.3]
P = [0.2, 0.7, 0.9, 0.4]  # probabilities
M = [[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]]  # 2 x 3
K = [[1.0, 2.0], [-1.0, 0.5], [0.3, -2.0]]  # 3 x 2
V3 = [0.4, -0.6, 1.1]


def unary(name, function):
    return (f"{name}(x)", {"x": X}, lambda t: function(t["x"]))


# name -> (program right-hand side, inputs (all require grad), the same in torch)
CASES = {
    "neg": unary("neg", torch.neg),
    "exp": unary("exp", torch.exp),
    "log": ("log(x)", {"x": P}, lambda t: torch.log(t["x"])),
    "log1p": unary("log1p", torch.log1p),
    "expm1": unary("expm1", torch.expm1),
    "sqrt": ("sqrt(x)", {"x": P}, lambda t: torch.sqrt(t["x"])),
    "abs": unary("abs", torch.abs),
    "sign": unary("sign", torch.sign),
    "sin": unary("sin", torch.sin),
    "cos": unary("cos", torch.cos),
    "tan": unary("tan", torch.tan),
    "asin": ("asin(x)", {"x": P}, lambda t: torch.asin(t["x"])),
    "acos": ("acos(x)", {"x": P}, lambda t: torch.acos(t["x"])),
    "atan": unary("atan", torch.atan),
    "sinh": unary("sinh", torch.sinh),
    "cosh": unary("cosh", torch.cosh),
    "tanh": unary("tanh", torch.tanh),
    "sigmoid": unary("sigmoid", torch.sigmoid),
    "relu": ("relu(x)", {"x": [-1.0, 2.0, 0.0, 0.5]}, lambda t: torch.relu(t["x"])),
    "softplus": unary("softplus", F.softplus),
    "erf": unary("erf", torch.erf),
    "reciprocal": unary("reciprocal", torch.reciprocal),
    "flatten": ("flatten(m)", {"m": M}, lambda t: t["m"].flatten()),
    "add": ("x + 2*w", {"x": X, "w": 1.5}, lambda t: t["x"] + 2 * t["w"]),
    "sub": ("x - w", {"x": X, "w": 1.5}, lambda t: t["x"] - t["w"]),
    "rsub": ("rsub(x, w, alpha=2)", {"x": X, "w": 1.5}, lambda t: t["w"] - 2 * t["x"]),
    "mul": ("x*w", {"x": X, "w": 1.5}, lambda t: t["x"] * t["w"]),
    "div": ("x/w", {"x": X, "w": P}, lambda t: t["x"] / t["w"]),
    "pow": ("p**w", {"p": P, "w": X}, lambda t: t["p"] ** t["w"]),
    "matmul": ("m @ k", {"m": M, "k": K}, lambda t: t["m"] @ t["k"]),
    "maximum": ("maximum(x, w)", {"x": X, "w": [0.5, 0.0, 3.0, 0.0]},
                lambda t: torch.maximum(t["x"], t["w"])),
    "minimum": ("minimum(x, w)", {"x": X, "w": [0.5, 0.0, 3.0, 0.0]},
                lambda t: torch.minimum(t["x"], t["w"])),
    "dot": ("dot(x, w)", {"x": X, "w": P}, lambda t: torch.dot(t["x"], t["w"])),
    "sum": ("sum(m, dim=1)", {"m": M}, lambda t: t["m"].sum(1)),
    "mean": ("mean(m)", {"m": M}, lambda t: t["m"].mean()),
    "prod": ("prod(x)", {"x": X}, lambda t: t["x"].prod()),
    "amax": ("amax(x)", {"x": [1.0, 3.0, 3.0, -2.0]}, lambda t: t["x"].amax()),
    "amin": ("amin(m, dim=0)", {"m": M}, lambda t: t["m"].amin(0)),
    "logsumexp": ("logsumexp(m, dim=1)", {"m": M}, lambda t: t["m"].logsumexp(1)),
    "norm": ("norm(x, 3)", {"x": X}, lambda t: torch.linalg.vector_norm(t["x"], 3)),
    "softmax": ("softmax(x)", {"x": X}, lambda t: torch.softmax(t["x"], 0)),
    "log_softmax": ("log_softmax(m, dim=1)", {"m": M},
                    lambda t: torch.log_softmax(t["m"], 1)),
    "clamp": ("clamp(x, -1, 0.5)", {"x": X}, lambda t: torch.clamp(t["x"], -1, 0.5)),
    "where": ("where(c, x, w)", {"c": [1.0, 0.0, 2.0, 0.0], "x": X, "w": P},
              lambda t: torch.where(t["c"] != 0, t["x"], t["w"])),
    "transpose": ("transpose(m)", {"m": M}, lambda t: t["m"].T),
    "reshape": ("reshape(m, 3, 2)", {"m": M}, lambda t: t["m"].reshape(3, 2)),
    "unsqueeze": ("unsqueeze(x, 0)", {"x": X}, lambda t: t["x"].unsqueeze(0)),
    "squeeze": ("squeeze(u)", {"u": [[1.0, 2.0]]}, lambda t: t["u"].squeeze()),
    "stack": ("stack([x, w])", {"x": X, "w": P}, lambda t: torch.stack([t["x"], t["w"]])),
    "cat": ("cat([x, v])", {"x": X, "v": V3}, lambda t: torch.cat([t["x"], t["v"]])),
    "binary_cross_entropy_with_logits": (
        "binary_cross_entropy_with_logits(x, p)", {"x": X, "p": P},
        lambda t: F.binary_cross_entropy_with_logits(t["x"], t["p"]),
    ),
    "binary_cross_entropy": (
        "binary_cross_entropy(p, y, reduction='sum')", {"p": P, "y": [1.0, 0.0, 1.0, 0.3]},
        lambda t: F.binary_cross_entropy(t["p"], t["y"], reduction="sum"),
    ),
    "mse_loss": ("mse_loss(x, p, reduction='none')", {"x": X, "p": P},
                 lambda t: F.mse_loss(t["x"], t["p"], reduction="none")),
    "cross_entropy": (
        "cross_entropy(m, s)", {"m": M, "s": [[0.2, 0.3, 0.5], [1.0, 0.0, 0.0]]},
        lambda t: F.cross_entropy(t["m"], t["s"]),
    ),
    "index": ("m[1, 0:2]", {"m": M}, lambda t: t["m"][1, 0:2]),
    "softmax along dim 0": ("softmax(m, dim=0)", {"m": M}, lambda t: torch.softmax(t["m"], 0)),
    "matrix times vector": ("m @ v", {"m": M, "v": V3}, lambda t: t["m"] @ t["v"]),
    "vector times matrix": ("v @ k", {"v": V3, "k": K}, lambda t: t["v"] @ t["k"]),
    "cross_entropy of classes": ("cross_entropy(m, c)", {"m": M, "c": [2.0, 0.0]},
                                 lambda t: F.cross_entropy(t["m"], t["c"].long())),
    # gradcli/ops/elementwise/pointwise.py
    "floor": unary("floor", torch.floor),
    "ceil": unary("ceil", torch.ceil),
    "trunc": unary("trunc", torch.trunc),
    "frac": unary("frac", torch.frac),
    "acosh": ("acosh(x)", {"x": [1.5, 2.0, 3.0, 1.2]}, lambda t: torch.acosh(t["x"])),
    "atan2": ("atan2(x, w)", {"x": X, "w": P}, lambda t: torch.atan2(t["x"], t["w"])),
    "hypot": ("hypot(x, w)", {"x": X, "w": P}, lambda t: torch.hypot(t["x"], t["w"])),
    "round": ("round(x, decimals=1)", {"x": X}, lambda t: torch.round(t["x"], decimals=1)),
    "remainder": ("x % w", {"x": X, "w": P}, lambda t: t["x"] % t["w"]),
    "fmod": ("fmod(x, w)", {"x": X, "w": P}, lambda t: torch.fmod(t["x"], t["w"])),
    "xlogy": ("xlogy(x, w)", {"x": X, "w": P}, lambda t: torch.xlogy(t["x"], t["w"])),
    "logaddexp": ("logaddexp(x, w)", {"x": X, "w": P},
                  lambda t: torch.logaddexp(t["x"], t["w"])),
    "logaddexp2": ("logaddexp2(x, w)", {"x": X, "w": P},
                   lambda t: torch.logaddexp2(t["x"], t["w"])),
    "copysign": ("copysign(x, w)", {"x": X, "w": [1.0, 2.0, -1.0, -0.5]},
                 lambda t: torch.copysign(t["x"], t["w"])),
    "lerp": ("lerp(x, w, p)", {"x": X, "w": V3 + [0.0], "p": P},
             lambda t: torch.lerp(t["x"], t["w"], t["p"])),
    "logit": ("logit(p, eps=0.3)", {"p": P}, lambda t: torch.logit(t["p"], eps=0.3)),
    "nan_to_num": unary("nan_to_num", torch.nan_to_num),
    "gelu": ("gelu(x, approximate='tanh')", {"x": X},
             lambda t: F.gelu(t["x"], approximate="tanh")),
    "silu": unary("silu", F.silu),
    "elu": ("elu(x, 0.5)", {"x": X}, lambda t: F.elu(t["x"], 0.5)),
    "celu": ("celu(x, alpha=2)", {"x": X}, lambda t: F.celu(t["x"], alpha=2.0)),
    "selu": unary("selu", F.selu),
    "leaky_relu": ("leaky_relu(x, 0.1)", {"x": X}, lambda t: F.leaky_relu(t["x"], 0.1)),
    "relu6": ("relu6(x)", {"x": [-1.0, 2.0, 7.0, 0.5]}, lambda t: F.relu6(t["x"])),
    "hardtanh": ("hardtanh(x, -1, 0.4)", {"x": X}, lambda t: F.hardtanh(t["x"], -1, 0.4)),
    "hardsigmoid": ("hardsigmoid(x)", {"x": [-4.0, 2.0, 3.5, 0.5]},
                    lambda t: F.relu6(t["x"] + 3) / 6),
    "hardswish": ("hardswish(x)", {"x": [-4.0, 2.0, 3.5, 0.5]}, lambda t: F.hardswish(t["x"])),
    "mish": unary("mish", F.mish),
    "softsign": unary("softsign", F.softsign),
    "logsigmoid": unary("logsigmoid", F.logsigmoid),
    "softplus with beta": ("softplus(x, beta=2, threshold=1)", {"x": X},
                           lambda t: F.softplus(t["x"], beta=2, threshold=1)),
    "softmin": ("softmin(m, dim=1)", {"m": M}, lambda t: F.softmin(t["m"], 1)),
    "glu": ("glu(x)", {"x": X}, lambda t: F.glu(t["x"])),
    "cross_entropy with label_smoothing": (
        "cross_entropy(m, c, label_smoothing=0.2)", {"m": M, "c": [2.0, 0.0]},
        lambda t: F.cross_entropy(t["m"], t["c"].long(), label_smoothing=0.2),
    ),
    "nll_loss": ("nll_loss(m, c, ignore_index=0)", {"m": M, "c": [2.0, 0.0]},
                 lambda t: F.nll_loss(t["m"], t["c"].long(), ignore_index=0)),
    "l1_loss": ("l1_loss(x, p)", {"x": X, "p": P}, lambda t: F.l1_loss(t["x"], t["p"])),
    "smooth_l1_loss": ("smooth_l1_loss(x, p, beta=0.5)", {"x": X, "p": P},
                       lambda t: F.smooth_l1_loss(t["x"], t["p"], beta=0.5)),
    "huber_loss": ("huber_loss(x, p, reduction='sum', delta=0.5)", {"x": X, "p": P},
                   lambda t: F.huber_loss(t["x"], t["p"], reduction="sum", delta=0.5)),
    "kl_div": ("kl_div(x, p, reduction='batchmean')", {"x": X, "p": P},
               lambda t: F.kl_div(t["x"], t["p"], reduction="batchmean")),
    "poisson_nll_loss": ("poisson_nll_loss(x, v, full=True)", {"x": V3, "v": [0.5, 2.0, 3.0]},
                         lambda t: F.poisson_nll_loss(t["x"], t["v"], full=True)),
    "gaussian_nll_loss": ("gaussian_nll_loss(x, p, q)", {"x": X, "p": P, "q": P},
                          lambda t: F.gaussian_nll_loss(t["x"], t["p"], t["q"])),
    "soft_margin_loss": ("soft_margin_loss(x, s)", {"x": X, "s": [1.0, -1.0, 1.0, 1.0]},
                         lambda t: F.soft_margin_loss(t["x"], t["s"])),
    "margin_ranking_loss": ("margin_ranking_loss(x, p, s, margin=0.1)",
                            {"x": X, "p": P, "s": [1.0, -1.0, 1.0, 1.0]},
                            lambda t: F.margin_ranking_loss(t["x"], t["p"], t["s"], margin=0.1)),
    "hinge_embedding_loss": ("hinge_embedding_loss(x, s)", {"x": X, "s": [1.0, -1.0, -1.0, 1.0]},
                             lambda t: F.hinge_embedding_loss(t["x"], t["s"])),
    "cosine_embedding_loss": ("cosine_embedding_loss(m, n, s)",
                              {"m": M, "n": [[1.0, 0.5, 0.0], [2.0, -1.0, 1.0]], "s": [1.0, -1.0]},
                              lambda t: F.cosine_embedding_loss(t["m"], t["n"], t["s"])),
    "triplet_margin_loss": ("triplet_margin_loss(m, n, o, swap=True)",
                            {"m": M, "n": [[1.0, 0.5, 0.0], [2.0, -1.0, 1.0]],
                             "o": [[0.0, 1.0, 1.0], [1.0, 1.0, -1.0]]},
                            lambda t: F.triplet_margin_loss(t["m"], t["n"], t["o"], swap=True)),
    "cosine_similarity": ("cosine_similarity(m, n)",
                          {"m": M, "n": [[1.0, 0.5, 0.0], [2.0, -1.0, 1.0]]},
                          lambda t: F.cosine_similarity(t["m"], t["n"])),
    "normalize": ("normalize(m)", {"m": M}, lambda t: F.normalize(t["m"])),
    "normalize p=3": ("normalize(m, 3)", {"m": M}, lambda t: F.normalize(t["m"], 3.0)),
    "pairwise_distance": ("pairwise_distance(m, n)",
                          {"m": M, "n": [[1.0, 0.5, 0.0], [2.0, -1.0, 1.0]]},
                          lambda t: F.pairwise_distance(t["m"], t["n"])),
    "var": ("var(m, 1)", {"m": M}, lambda t: t["m"].var(1)),
    "std": ("std(x, correction=0)", {"x": X}, lambda t: t["x"].std(correction=0)),
    "cumsum": ("cumsum(m, 1)", {"m": M}, lambda t: t["m"].cumsum(1)),
    "cumprod": ("cumprod(x, 0)", {"x": [0.5, 0.0, 2.0, 0.3]}, lambda t: t["x"].cumprod(0)),
    "logcumsumexp": ("logcumsumexp(m, 1)", {"m": M}, lambda t: t["m"].logcumsumexp(1)),
}  # fmt: skip
CASES.update(LINALG_CASES)  # linear algebra and shape operations
# Comparisons and logical operations: a boolean in a product, its derivative 0
W = [0.5, 0.7, -1.0, 0.4]
B = [1.0, 0.0, 2.0, 0.0]
for _name, _symbol in [
    ("eq", "=="),
    ("ne", "!="),
    ("lt", "<"),
    ("le", "<="),
    ("gt", ">"),
    ("ge", ">="),
]:
    CASES[_name] = (
        f"x * (x {_symbol} w)",
        {"x": X, "w": W},
        lambda t, n=_name: t["x"] * getattr(torch, n)(t["x"], t["w"]),
    )
for _name in ("logical_and", "logical_or", "logical_xor"):
    CASES[_name] = (
        f"x * {_name}(x > 0, w)",
        {"x": X, "w": B},
        lambda t, n=_name: t["x"] * getattr(torch, n)(t["x"] > 0, t["w"]),
    )
for _name, _symbol in [("bitwise_and", "&"), ("bitwise_or", "|"), ("bitwise_xor", "^")]:
    CASES[_name] = (
        f"x * ((x > 0) {_symbol} (w > 0))",
        {"x": X, "w": B},
        lambda t, n=_name: t["x"] * getattr(torch, n)(t["x"] > 0, t["w"] > 0),
    )
CASES.update({
    "logical_not": ("x * logical_not(x > 0)", {"x": X}, lambda t: t["x"] * ~(t["x"] > 0)),
    "bitwise_not": ("x * ~(x > 0)", {"x": X}, lambda t: t["x"] * ~(t["x"] > 0)),
    "isnan": ("x * isnan(x)", {"x": X}, lambda t: t["x"] * torch.isnan(t["x"])),
    "detach": ("x * detach(x)", {"x": X}, lambda t: t["x"] * t["x"].detach()),
    "zeros_like": ("x + zeros_like(x)", {"x": X}, lambda t: t["x"] + torch.zeros_like(t["x"])),
    "ones_like": ("x * ones_like(x)", {"x": X}, lambda t: t["x"] * torch.ones_like(t["x"])),
    "full_like": ("x * full_like(x, 2)", {"x": X}, lambda t: t["x"] * torch.full_like(t["x"], 2)),
    "isinf": ("x * isinf(x)", {"x": X}, lambda t: t["x"] * torch.isinf(t["x"])),
    "isfinite": ("x * isfinite(x)", {"x": X}, lambda t: t["x"] * torch.isfinite(t["x"])),
    "isclose": ("x * isclose(x, w, atol=0.5)", {"x": X, "w": W},
                lambda t: t["x"] * torch.isclose(t["x"], t["w"], atol=0.5)),
    "any": ("x * any(x > 1)", {"x": X}, lambda t: t["x"] * torch.any(t["x"] > 1)),
    "all": ("x * all(x > -2)", {"x": X}, lambda t: t["x"] * torch.all(t["x"] > -2)),
    "masked_fill": ("masked_fill(x, x > 0, 2.0)", {"x": X},
                    lambda t: t["x"].masked_fill(t["x"] > 0, 2.0)),
})  # fmt: skip
CASES.update(LAYER_CASES)  # the layers
CASES.update(SINGLES_CASES)  # repeat, tile, pad, einsum, ...
# Selections and operations with several results: one result taken (an index in a product)
CASES.update({
    "max": ("max(m, 1).values", {"m": M}, lambda t: t["m"].max(1).values),
    "min": ("min(m)", {"m": M}, lambda t: t["m"].min()),
    "median": ("median(m, 0).values", {"m": M}, lambda t: t["m"].median(0).values),
    "nanmedian": ("nanmedian(m)", {"m": M}, lambda t: t["m"].nanmedian()),
    "sort": ("sort(m, 1, descending=True).values", {"m": M},
             lambda t: t["m"].sort(1, descending=True).values),
    "topk": ("topk(x, 2).values", {"x": X}, lambda t: t["x"].topk(2).values),
    "kthvalue": ("kthvalue(m, 2)[0]", {"m": M}, lambda t: t["m"].kthvalue(2)[0]),
    "mode": ("mode(m, 0)[0]", {"m": M}, lambda t: t["m"].mode(0)[0]),
    "cummax": ("cummax(m, 1).values", {"m": M}, lambda t: t["m"].cummax(1).values),
    "cummin": ("cummin(x, 0).values", {"x": X}, lambda t: t["x"].cummin(0).values),
    "argmax": ("x * argmax(x)", {"x": X}, lambda t: t["x"] * t["x"].argmax()),
    "argmin": ("m * argmin(m, 1, True)", {"m": M}, lambda t: t["m"] * t["m"].argmin(1, True)),
    "argsort": ("x * argsort(x)", {"x": X}, lambda t: t["x"] * t["x"].argsort()),
    "var_mean": ("var_mean(m, 1)[1]", {"m": M}, lambda t: torch.var_mean(t["m"], 1)[1]),
    "std_mean": ("std_mean(m, 1)[0]", {"m": M}, lambda t: torch.std_mean(t["m"], 1)[0]),
    "split": ("split(m, [1, 2], 1)[1]", {"m": M}, lambda t: t["m"].split([1, 2], 1)[1]),
    "chunk": ("chunk(x, 2)[0]", {"x": X}, lambda t: t["x"].chunk(2)[0]),
    "unbind": ("unbind(m, 1)[2]", {"m": M}, lambda t: t["m"].unbind(1)[2]),
})  # fmt: skip
# Indexing by tensors (i: indices, not differentiated; no index repeats, so that each element
# of x reaches one element of out) and changes of dtype
_INDEXING = {
    "gather": ("gather(x, 1, i)", {"x": M, "i": [[2.0, 0.0], [1.0, 2.0]]},
               lambda t: torch.gather(t["x"], 1, t["i"].long())),
    "take_along_dim": ("take_along_dim(x, i, 1)", {"x": M, "i": [[2.0], [0.0]]},
                       lambda t: torch.take_along_dim(t["x"], t["i"].long(), 1)),
    "index_select": ("index_select(x, 1, i)", {"x": M, "i": [2.0, 0.0]},
                     lambda t: torch.index_select(t["x"], 1, t["i"].long())),
    "scatter": ("scatter(x, 1, i, s)", {"x": M, "i": [[2.0], [0.0]], "s": [[5.0], [6.0]]},
                lambda t: torch.scatter(t["x"], 1, t["i"].long(), t["s"])),
    "scatter_add": ("scatter_add(x, 1, i, s)",
                    {"x": M, "i": [[2.0], [0.0]], "s": [[5.0], [6.0]]},
                    lambda t: torch.scatter_add(t["x"], 1, t["i"].long(), t["s"])),
    "index_add": ("index_add(x, 0, i, s, alpha=2)", {"x": M, "i": [1.0], "s": [[1.0, 2.0, 3.0]]},
                  lambda t: torch.index_add(t["x"], 0, t["i"].long(), t["s"], alpha=2)),
    "masked_select": ("masked_select(x, x > 0)", {"x": M},
                      lambda t: torch.masked_select(t["x"], t["x"] > 0)),
    "one_hot": ("x * one_hot(i, 3)", {"x": M, "i": [2.0, 0.0]},
                lambda t: t["x"] * torch.nn.functional.one_hot(t["i"].long(), 3)),
    "nonzero": ("x * nonzero(x > 0)", {"x": X}, lambda t: t["x"] * torch.nonzero(t["x"] > 0)),
    "argwhere": ("x * argwhere(x > 0)", {"x": X}, lambda t: t["x"] * torch.argwhere(t["x"] > 0)),
    "to": ("x.float()", {"x": X}, lambda t: t["x"].float()),
}  # fmt: skip
CASES.update(_INDEXING)
# torch 2.13 has no cbrt: its real cube root written out
CASES["cbrt"] = ("cbrt(x)", {"x": P}, lambda t: t["x"].sign() * t["x"].abs() ** (1 / 3))
# Inputs that are not differentiated: a condition, class indices.
# An element-wise function of one tensor needs no case of its own: torch's function of the same
# name at probabilities (inside every such function's domain).
for _name, _function in FUNCTIONS.items():
    if _name not in CASES and [p.name for p in _function.params] == ["input"]:
        if elementwise(_name):
            CASES[_name] = (f"{_name}(x)", {"x": P}, lambda t, n=_name: getattr(torch, n)(t["x"]))
FIXED = {
    "where": {"c"},
    "cross_entropy of classes": {"c"},
    "cross_entropy with label_smoothing": {"c"},
    "nll_loss": {"c"},
    "soft_margin_loss": {"s"},
    "hinge_embedding_loss": {"s"},
    "cosine_embedding_loss": {"s"},
    **LAYER_FIXED,
    **SINGLES_FIXED,
    **{name: {"i"} for name, (_, inputs, _) in _INDEXING.items() if "i" in inputs},
}
UNEVALUATED = re.compile(r"\bd/d|Derivative|Subs\(")


def _arguments(case: str, **extra) -> list[str]:
    expression, inputs, function = CASES[case]
    args = ["explain", "-e", f"out = {expression}"]
    for name, value in inputs.items():
        args += ["-i", f"{name}={value}"]
    wrt = [n for n in inputs if n not in FIXED.get(case, ())]
    args += ["--wrt", ",".join(wrt)]
    shape = tuple(function(_tensors(inputs)).shape)
    if shape:
        args += ["--v", str(np.ones(shape).tolist())]
    return args


def _tensors(inputs: dict, requires_grad: set = frozenset()) -> dict:
    return {
        n: torch.tensor(v, dtype=torch.float64, requires_grad=n in requires_grad)
        for n, v in inputs.items()
    }


def _jacobian(case: str, wrt: str) -> np.ndarray:
    """torch's d out / d wrt, laid out out.shape + wrt.shape."""
    _, inputs, function = CASES[case]
    tensors = _tensors(inputs)

    def of(value):
        return function({**tensors, wrt: value})

    return torch.autograd.functional.jacobian(of, tensors[wrt]).numpy()


# Functions torch does not differentiate: explain refuses them (test_explain_refuses_...)
NO_DERIVATIVE = {"floor_divide", "heaviside"}
# explain's local derivatives are real numbers: the complex entries have no case yet
COMPLEX_ENTRIES = {"complex", "real", "imag", "conj", "angle", "polar", "view_as_real"}
COMPLEX_ENTRIES |= {"view_as_complex"}


def test_every_function_has_a_case():
    assert set(FUNCTIONS) - NO_DERIVATIVE - COMPLEX_ENTRIES <= set(CASES)


def test_explain_refuses_a_function_torch_does_not_differentiate(cli):
    result = cli("explain", "-e", "out = x // 2", "--x", "1,2", "--v", "1,1", "--no-cache")
    assert result.exit_code == 2
    assert "derivative for floor_divide is not implemented" in result.stderr


@pytest.mark.parametrize("case", list(CASES))
def test_local_derivatives_agree_with_torch(cli_json, case):
    (row,) = cli_json(*_arguments(case))["explain"]["backward"]
    assert row["node"] == "out" and not UNEVALUATED.search(str(row))
    _, inputs, _ = CASES[case]
    expected_wrt = [n for n in inputs if n not in FIXED.get(case, ())]
    assert [local["wrt"] for local in row["local"]] == expected_wrt
    for local in row["local"]:
        assert local["formula"] and local["value"] is not None, local
        _check_value(case, local, _jacobian(case, local["wrt"]))


def _check_value(case: str, local: dict, jacobian: np.ndarray) -> None:
    value = np.asarray(local["value"], dtype=float)
    _, inputs, function = CASES[case]
    out_ndim = function(_tensors(inputs)).ndim
    out_axes, in_axes = tuple(range(out_ndim)), tuple(range(out_ndim, jacobian.ndim))
    nonzero = jacobian != 0
    if local["layout"] == "element-wise":
        assert np.all(nonzero.sum(axis=in_axes) <= 1), "one element of w for each out[i]"
        np.testing.assert_allclose(value, jacobian.sum(axis=in_axes), rtol=1e-10, atol=1e-12)
    elif local["layout"] == "per element":
        assert np.all(nonzero.sum(axis=out_axes) <= 1), "each w[i] reaches one out element"
        np.testing.assert_allclose(value, jacobian.sum(axis=out_axes), rtol=1e-10, atol=1e-12)
    elif local["layout"] == "jacobian":
        np.testing.assert_allclose(value, jacobian, rtol=1e-10, atol=1e-12)
    elif local["layout"] == "jacobian blocks":
        np.testing.assert_allclose(value, _blocks(case, jacobian), rtol=1e-10, atol=1e-12)
    else:
        assert local["layout"] == "other operand"
        np.testing.assert_allclose(_from_other(case, local, value), jacobian, atol=1e-12)


def _blocks(case: str, jacobian: np.ndarray) -> np.ndarray:
    """The n x n blocks of a softmax's Jacobian along its dim, one for each other index."""
    if jacobian.ndim == 2:
        return jacobian
    dim = 0 if case == "softmax along dim 0" else 1
    rows, columns = jacobian.shape[:2]
    if dim == 1:
        return np.stack([jacobian[r, :, r, :] for r in range(rows)])
    return np.stack([jacobian[:, c, :, c] for c in range(columns)])


def _from_other(case: str, local: dict, other: np.ndarray) -> np.ndarray:
    """The Jacobian that the formula d(a @ b)[i, j] / d a[i, k] = b[k, j] (and its vector
    forms) makes of the other operand."""
    _, inputs, _ = CASES[case]
    a_name, b_name = list(inputs)
    a, b = (np.asarray(inputs[n], dtype=float) for n in (a_name, b_name))
    by_a = local["wrt"] == a_name and local["formula"].startswith(b_name)
    if a.ndim == 1 and b.ndim == 1:
        return other
    if a.ndim == 1:  # out[j] = a[k] b[k, j]
        return other.T if by_a else np.einsum("k,jq->jkq", other, np.eye(b.shape[1]))
    if b.ndim == 1:  # out[i] = a[i, k] b[k]
        return np.einsum("ip,k->ipk", np.eye(a.shape[0]), other) if by_a else other
    if by_a:
        return np.einsum("ip,kj->ijpk", np.eye(a.shape[0]), other)
    return np.einsum("ik,jq->ijkq", other, np.eye(b.shape[1]))


@pytest.mark.parametrize(
    ("case", "derivative", "formula"),
    [
        ("mean", "dout/dm[i]", "1/n = 1/6"),
        ("sum", "dout/dm[i]", "1"),
        ("prod", "dout/dx[i]", "out/x[i] (the product of the other elements)"),
        ("matmul", "dout[i, j]/dm[i, k]", "k[k, j]"),
        ("softmax", "dout[i]/dx[j]", "s[i]*(δij - s[j]) = diag(s) - s s^T (s = out)"),
        ("log", "dout/dx", "1/x"),
        ("relu", "dout/dx", "Piecewise((1, x > 0), (0, True))"),
    ],
)
def test_closed_formulas(cli_json, case, derivative, formula):
    (row,) = cli_json(*_arguments(case))["explain"]["backward"]
    first = row["local"][0]
    assert (first["derivative"], first["formula"]) == (derivative, formula)


def test_mean_gives_each_element_a_quarter(cli, cli_json):
    args = ["explain", "-e", "y = x + 2; z = y*y*3; out = mean(z)", "--x", "ones(2,2)"]
    (mean,) = cli_json(*args)["explain"]["backward"][0]["local"]
    assert mean["formula"] == "1/n = 1/4"
    assert mean["value"] == [[0.25, 0.25], [0.25, 0.25]]
    table = cli(*args).stdout
    assert "dout/dz[i] = 1/n = 1/4 = 0.25 for each element" in table
    assert "dz/dy = 6*y = 18 for each element" in table


def test_a_compound_statement_is_explained_operation_by_operation(cli_json):
    doc = cli_json("explain", "-f", "samples/neural_network.gc")
    rows = {row["node"]: row for row in doc["explain"]["backward"]}
    assert list(rows) == ["loss", "z", "x @ W"]
    assert [p["to"] for p in rows["z"]["passes_on"]] == ["x @ W", "b"]
    (by_w,) = rows["x @ W"]["local"]
    assert (by_w["derivative"], by_w["formula"]) == ("d(x @ W)[j]/dW[k, j]", "x[k]")
    assert by_w["value"] == [1.0] * 8
    # the chain rule: what x @ W passes to W is x[k] times the gradient arriving at it
    arriving = np.asarray(rows["x @ W"]["incoming"])
    np.testing.assert_allclose(
        rows["x @ W"]["passes_on"][0]["gradient"], np.outer(by_w["value"], arriving)
    )


def _sample_explain_args(cli_json, sample: Path) -> list[str]:
    """explain on a sample by all its inputs, with the v of its Run line (explain's or
    vjp's), or v = ones for a vector output."""
    words = run_line(sample)
    inputs = parse_program(sample.read_text()).inputs(set())
    args = ["explain", "-f", f"samples/{sample.name}", "--wrt", ",".join(inputs)]
    if words[0] in ("explain", "vjp") and "--v" in words:
        return [*args, "--v", words[words.index("--v") + 1]]
    doc = cli_json("eval", *args[1:])
    shape = np.shape(doc["values"][doc["output"]])
    return [*args, "--v", str(np.ones(shape).tolist())] if shape else args


@pytest.mark.parametrize("sample", SAMPLES, ids=lambda p: p.stem)
def test_no_sample_shows_an_unevaluated_derivative(cli, cli_json, sample):
    args = _sample_explain_args(cli_json, sample)
    result = cli(*args, "--format", "json")
    assert result.exit_code == 0, result.stderr
    table = cli(*args)
    assert not UNEVALUATED.search(result.stdout + table.stdout)
    for row in json.loads(result.stdout)["explain"]["backward"]:
        for local in row["local"]:
            assert local["formula"] and local["value"] is not None, (row["node"], local)


def test_json_carries_numbers(cli_json):
    details = cli_json("explain", "-e", "y = log(x)", "--x", "2,4", "--v", "1,1")["explain"]
    assert details["forward"][0]["value"] == pytest.approx([np.log(2), np.log(4)])
    (row,) = details["backward"]
    assert row["incoming"] == [1.0, 1.0]
    assert row["local"][0]["value"] == [0.5, 0.25]
    assert row["passes_on"][0]["gradient"] == [0.5, 0.25]
    assert details["v"] == [1.0, 1.0] and details["jt_v"]["x"] == [0.5, 0.25]


def test_precision_reaches_the_explain_tables(cli):
    args = ("explain", "-e", "y = log(x)", "--x", "2,3", "--v", "1,1")
    default, two = cli(*args).stdout, cli(*args, "--precision", "2").stdout
    assert "[0.6931, 1.099]" in default and "[0.6931, 1.099]" not in two
    assert "[0.69, 1.1]" in two
    assert "dy/dx = 1/x = [0.33, 0.5]" not in two and "dy/dx = 1/x = [0.5, 0.33]" in two


def test_large_softmax_blocks_are_described_not_computed(cli_json):
    args = ("explain", "-e", "y = sum(softmax(x, dim=1)*x)", "--x", "randn(101, 100)")
    row = cli_json(*args)["explain"]["backward"][-1]
    (local,) = row["local"]
    assert local["value"] is None
    assert local["formula"].endswith("its blocks, shape (101, 100, 100), are too large to show")


def test_class_indices_get_no_derivative(cli_json):
    args = ("explain", "-e", "y = cross_entropy(m, c)", "-i", "m=[[1,2],[3,4]]", "-i", "c=[0,1]")
    (row,) = cli_json(*args)["explain"]["backward"]
    by_c = row["local"][1]
    assert (by_c["wrt"], by_c["formula"], by_c["value"]) == (
        "c",
        "0 (class indices are not differentiable)",
        [0.0, 0.0],
    )


def test_a_step_passes_on_its_own_part_only(cli_json):
    # y reads a directly and through b = sin(a): y passes a its own 1 (dy/da holding b
    # fixed), b passes a cos(a), and what arrives at a is their sum
    args = ("explain", "-e", "a = x * 2; b = sin(a); y = a + b", "--x", "0.5")
    rows = {row["node"]: row for row in cli_json(*args)["explain"]["backward"]}
    passed = {row: {p["to"]: p["gradient"] for p in rows[row]["passes_on"]} for row in rows}
    assert passed["y"] == {"a": 1.0, "b": 1.0}
    assert passed["b"]["a"] == pytest.approx(np.cos(1.0))
    assert rows["a"]["incoming"] == pytest.approx(passed["y"]["a"] + passed["b"]["a"])


def _counted(monkeypatch, owner, name: str) -> list:
    """Count the calls of ``owner.name`` (a function or a method) in a list."""
    calls: list = []
    original = getattr(owner, name)

    def counted(*args, **kwargs):
        calls.append(1)
        return original(*args, **kwargs)

    monkeypatch.setattr(owner, name, counted)
    return calls


def test_explain_does_a_bounded_amount_of_work_per_statement(cli_json, monkeypatch):
    # what each step passes on is the step's own reverse pass, not a backward pass through
    # every statement below it; the run's values are detached once, not once per statement:
    # either made explain quadratic in the program's length
    import gradcli as gc
    from gradcli.ops.table import OPS

    # sin's reverse rule runs as its tensor rule or, where nothing watches, on arrays
    reverse = _counted(monkeypatch, OPS["sin"], "vjp")
    on_arrays = _counted(monkeypatch, OPS["sin"], "vjp_arrays")
    detached = _counted(monkeypatch, gc.Tensor, "detach")
    n = 60
    chain = "; ".join(["h0 = x", *(f"h{i} = sin(h{i - 1})" for i in range(1, n + 1))])
    doc = cli_json("explain", "-e", f"{chain}; y = sum(h{n})", "--x", "0.5,1")
    assert len(doc["explain"]["backward"]) == n + 2  # y, h60 ... h1, h0
    # a backward pass from each step would be about n * n / 2
    assert n <= len(reverse) + len(on_arrays) <= 3 * n
    assert n <= len(detached) <= 10 * n  # once per statement: about 2 * n * n
