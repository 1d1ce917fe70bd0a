"""Every operation is named in the op table and nowhere else in gradcli's code.

The table is ``gradcli/ops`` and the modules that declare its entries (those that hold an
entry's call). Anywhere else, code that names an operation is a second place to describe it:
a string equal to an operation's name or alias (outside docstrings and messages), or an
operation taken from the engine by name (``gc.stack``). Messages and help text may name
operations: they are written for people, and they are not compared with anything.
"""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import gradcli
from gradcli.ops.table import OPS

ROOT = Path(gradcli.__file__).parent
NAMES = set(OPS) | {alias for op in OPS.values() for alias in op.aliases}
ENGINE = {"gc", "engine", "_engine", "P", "primitives", "F"}  # names the engine goes by
# The same word, meaning something else: (file, word) -> what it means there.
HOMONYMS = {
    ("base/errors.py", "where"): "the JSON field of an error's place",
    ("commands/table.py", "repeat"): "grad's option --repeat",
    ("commands/table.py", "transpose"): "jacobian's option --transpose",
    ("commands/table.py", "mode"): "jacobian's option --mode",
    ("commands/table.py", "to"): "export's option --to",
    ("render/__init__.py", "dot"): "Graphviz's format",
    ("render/graph.py", "dot"): "Graphviz's format",
    ("results.py", "dot"): "Graphviz's format",
    ("cli/command_words.py", "min"): "an option's declared lowest value",
    ("cli/command_words.py", "max"): "an option's declared highest value",
    **{
        ("engine/torch_random/init.py", word): "a nonlinearity of nn.init.calculate_gain"
        for word in ("linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d")
        + ("conv_transpose3d", "sigmoid")
        + ("tanh", "relu", "leaky_relu", "selu")
    },
    ("nn/recurrent.py", "tanh"): "an RNN's nonlinearity option",
    ("nn/recurrent.py", "relu"): "an RNN's nonlinearity option",
    ("nn/transformer.py", "relu"): "TransformerEncoderLayer's activation option",
    ("nn/transformer.py", "gelu"): "TransformerEncoderLayer's activation option",
    ("nn/losses.py", "mean"): "a loss module's reduction='mean'",
    ("nn/losses.py", "sum"): "a loss module's reduction='sum'",
    ("nn/init.py", "leaky_relu"): "the nonlinearity whose gain kaiming_*_ takes",
    ("optim/optimizers.py", "sum"): "Adagrad's state 'sum', as torch names it",
}
# gradcli run's interpreter gives scripts Python's builtins and the operator module's functions
HOMONYMS.update(
    {
        ("script/python/builtins.py", word): "Python's builtin (or operator's function) " + word
        for word in (
            *("abs", "sum", "min", "max", "any", "all", "round", "pow"),
            *("add", "sub", "mul", "matmul", "eq", "ne", "lt", "le", "gt", "ge", "mod", "neg"),
            *("floordiv", "truediv", "complex", "repeat"),
        )
    }
    | {
        ("script/python/calls.py", "complex"): "a dtype's kind (is_complex)",
        ("script/python/objects.py", "add"): "set.add, a method of Python's sets",
        ("script/python/objects.py", "real"): "a Python number's attribute",
        ("script/python/objects.py", "imag"): "a Python number's attribute",
        # the entries the interpreter takes torch's semantics from, read from the table
        ("script/python/operators.py", "unbind"): "torch's Tensor.__iter__: the entry's call",
        ("script/python/operators.py", "reciprocal"): "torch's __rtruediv__: the entry's call",
        ("script/python/operators.py", "to"): "__rtruediv__'s cast of whole numbers: the entry",
        ("script/python/operators.py", "rsub"): "torch's __rsub__: the entry's call",
        ("script/python/builtins.py", "trunc"): "math.trunc, Python's function",
        ("script/python/tensors.py", "to"): "Tensor.to/type_as and a write's cast: the entry",
        ("script/python/autograd_graph.py", "all"): "register_multi_grad_hook's mode='all'",
        ("script/python/numpy_values.py", "reshape"): "numpy's ndarray.reshape, a method checked",
        **{
            ("script/python/tensors.py", word): "an in-place method that changes the shape"
            for word in ("squeeze", "unsqueeze", "transpose")
        },
        **{
            ("script/python/classes.py", word): f"Python's special method __{word}__"
            for word in ("add", "sub", "mul", "pow", "matmul", "mod", "lt", "le", "gt", "ge")
            + ("floordiv", "truediv", "neg", "eq", "ne")
        },
        ("script/python/autograd_graph.py", "any"): "register_multi_grad_hook's mode='any'",
    }
)


def _table_modules() -> set[Path]:
    calls = (inspect.unwrap(op.call) for op in OPS.values() if op.call is not None)
    modules = {Path(inspect.getfile(call)) for call in calls}  # a wrapper (naming): its own
    return modules | set((ROOT / "ops").rglob("*.py"))


def _texts(tree: ast.AST) -> set[int]:
    """Docstrings, and the strings of f-strings and of calls' messages: text for people."""
    found = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr):
            found.add(id(body[0].value))
        if isinstance(node, ast.JoinedStr):
            found.update(id(part) for part in ast.walk(node))
    return found


def _uses(source: str, relative: str) -> list[str]:
    tree = ast.parse(source)
    texts = _texts(tree)
    found = []
    for node in ast.walk(tree):
        word = None
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in texts:
            word = node.value
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            word = node.attr if node.value.id in ENGINE else None
        if word in NAMES and (relative, word) not in HOMONYMS:
            found.append(f"{relative}:{node.lineno}: {word}")
    return found


def test_operations_are_named_only_in_the_op_table():
    table = _table_modules()
    found = [
        use
        for path in sorted(ROOT.rglob("*.py"))
        if path not in table
        for use in _uses(path.read_text(), path.relative_to(ROOT).as_posix())
    ]
    assert not found, "operations named outside the op table:\n" + "\n".join(found)


def test_the_check_sees_a_name_outside_the_table():
    """The check finds what it looks for, and passes over docstrings and messages."""
    source = (
        '"""The softmax module."""\nimport gradcli as gc\n\nKIND = "softmax"\ny = gc.stack\n'
        'z = f"{KIND} and softmax"\nw = gc.jacobian\n'
    )
    assert _uses(source, "probe.py") == ["probe.py:4: softmax", "probe.py:5: stack"]
