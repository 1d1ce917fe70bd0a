"""The computational graph as a rich tree, Graphviz dot text, or (via JSON) a node list."""

from __future__ import annotations

from ..results import Graph, GraphNode
from . import Options, renders, short


def _op(node: GraphNode, precision: int) -> str:
    """The node's operation; a constant with its value: ``constant 3``."""
    return node.op if node.value is None else f"constant {short(node.value, precision)}"


def _title(node: GraphNode) -> str:
    """The node's name, or its number: ``#3``."""
    return node.name or f"#{node.id}"


def _describe(node: GraphNode, precision: int):
    """A node's line of the tree; it wraps between words, and a word longer than the
    terminal (a long backward name) ends in … rather than continue on the next line."""
    from rich.text import Text

    kind = f"  {node.grad_fn}" if node.grad_fn else ""
    flags = []
    if node.is_leaf:
        flags.append("leaf")
    if node.requires_grad:
        flags.append("requires_grad")
    text = f"{_title(node)}  {_op(node, precision)}  shape {node.shape}{kind}" + (
        f"  [{', '.join(flags)}]" if flags else ""
    )
    return Text(text, overflow="ellipsis")


@renders("table", Graph)
def print_tree(result: Graph, file, options: Options) -> None:
    """The graph from the output down to the leaves; a node reached twice is shown once."""
    from rich.tree import Tree

    from .table import console

    precision = options.precision
    nodes = {node.id: node for node in result.nodes}
    root = Tree(_describe(nodes[0], precision))
    shown = {0}
    stack = [(0, root)]
    while stack:
        node_id, branch = stack.pop()
        children = []
        for child in nodes[node_id].inputs:
            if child in shown:
                branch.add(f"(see {_title(nodes[child])} above)")
                continue
            shown.add(child)
            children.append((child, branch.add(_describe(nodes[child], precision))))
        stack.extend(reversed(children))
    console(file).print(root)


@renders("dot", Graph)
def to_dot(result: Graph, file, options: Options) -> None:
    """Graphviz text: an edge from each input to the node that uses it."""
    lines = ["digraph gradcli {", "  rankdir=BT;"]
    for node in result.nodes:
        label = (node.name + "\\n" if node.name else "") + (
            node.grad_fn or _op(node, options.precision)
        )
        label += f"\\n{node.shape}"
        shape = "box" if node.is_leaf else "ellipse"
        lines.append(f'  n{node.id} [label="{label}", shape={shape}];')
    for node in result.nodes:
        for child in node.inputs:
            lines.append(f"  n{child} -> n{node.id};")
    lines.append("}")
    file.write("\n".join(lines) + "\n")
