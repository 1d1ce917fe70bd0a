"""The computational graph as a rich tree, Graphviz dot text, or (via JSON) a node list."""

from __future__ import annotations

from ..compute import Result
from . import short


def _op(node: dict, precision: int) -> str:
    """The node's operation; a constant with its value: ``constant 3``."""
    return node["op"] if node["value"] is None else f"constant {short(node['value'], precision)}"


def _describe(node: dict, precision: int):
    """A node's line of the tree; it wraps between words, and a word longer than the
    terminal (a long backward name) ends in … rather than continue on the next line."""
    from rich.text import Text

    name = node["name"] or f"#{node['id']}"
    kind = f"  {node['grad_fn']}" if node["grad_fn"] else ""
    flags = []
    if node["is_leaf"]:
        flags.append("leaf")
    if node["requires_grad"]:
        flags.append("requires_grad")
    shape = tuple(node["shape"])
    text = f"{name}  {_op(node, precision)}  shape {shape}{kind}" + (
        f"  [{', '.join(flags)}]" if flags else ""
    )
    return Text(text, overflow="ellipsis")


def print_tree(result: Result, precision: int = 4, file=None) -> None:
    """The graph from the output down to the leaves; a node reached twice is shown once."""
    from rich.tree import Tree

    from .table import console

    nodes = {node["id"]: node for node in result.graph}
    root = Tree(_describe(nodes[0], precision))
    shown = {0}
    stack = [(0, root)]
    while stack:
        node_id, branch = stack.pop()
        children = []
        for child in nodes[node_id]["inputs"]:
            if child in shown:
                branch.add(f"(see {nodes[child]['name'] or '#' + str(child)} above)")
                continue
            shown.add(child)
            children.append((child, branch.add(_describe(nodes[child], precision))))
        stack.extend(reversed(children))
    console(file).print(root)


def to_dot(result: Result, precision: int = 4) -> str:
    """Graphviz text: an edge from each input to the node that uses it."""
    lines = ["digraph gradcli {", "  rankdir=BT;"]
    for node in result.graph:
        label = (node["name"] + "\\n" if node["name"] else "") + (
            node["grad_fn"] or _op(node, precision)
        )
        label += f"\\n{tuple(node['shape'])}"
        shape = "box" if node["is_leaf"] else "ellipse"
        lines.append(f'  n{node["id"]} [label="{label}", shape={shape}];')
    for node in result.graph:
        for child in node["inputs"]:
            lines.append(f"  n{child} -> n{node['id']};")
    lines.append("}")
    return "\n".join(lines)
