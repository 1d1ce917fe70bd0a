"""What a parsed program is made of beside its IR: the statements as written, the backward
passes of PyTorch code, and the seed's indexed names (``y0``, ``x12``).

The validator (``validate``) and PyTorch code's reader (``pytorch``) make them; they live
here, apart from both, so that a program read back from the cache loads without either.
"""

from __future__ import annotations

import re

from ..base.errors import GradcliError
from ..base.records import record

# x0, x12 (not x01: a leading zero would make y0 and y00 the same element)
_ELEMENT_NAME = re.compile(r"^([A-Za-z]\w*?)(0|[1-9]\d{0,8})$")  # up to 9 digits: x999999999


@record(kw_only=False, eq=True)
class Statement:
    """One ``name = expression`` as written, and where it stands in the program."""

    number: int  # 1-based position among the statements
    line: int  # 1-based line of the program
    text: str  # the statement, stripped

    @property
    def where(self) -> str:
        return f"statement {self.number} (line {self.line})"

    def error(self, message: str, column: int | None = None, hint: str | None = None):
        return GradcliError(message, where=self.where, source=self.text, column=column, hint=hint)


@record(kw_only=False, eq=True)
class BackwardCall:
    """``output.backward(gradient, retain_graph=...)``: ``gradient`` names the cotangent
    (None: the output is a scalar, or torch's error says it is not). ``zero_grad``: the
    statement is ``output.grad.zero_()`` instead. ``inputs``: the
    tensors of ``torch.autograd.grad(output, inputs, gradient)``, which asks for their
    gradients alone (None: a backward, to every leaf)."""

    output: str
    gradient: str | None
    retain_graph: bool
    inputs: tuple[str, ...] | None = None
    zero_grad: bool = False  # output.grad.zero_(): not a pass, the reset of output's .grad


def element_of(name: str) -> tuple[str, int] | None:
    """``x12`` -> (``x``, 12): the seed's indexed style."""
    match = _ELEMENT_NAME.match(name)
    return (match.group(1), int(match.group(2))) if match else None
