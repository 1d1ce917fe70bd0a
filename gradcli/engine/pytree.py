"""Nested tuples, lists and dicts of values ("pytrees", as ``torch.utils._pytree`` calls them):
their leaves in order and their structure, so that the function transforms (``func.py``,
``vmap.py``) take and give them as torch's do.

A tuple, a list, a dict (in its keys' order) and a named tuple are nodes; anything else (a
tensor, a number, ``None``) is a leaf. A structure prints as torch prints its ``TreeSpec``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class TreeSpec:
    """The structure of a pytree: the type of a node, its context (a dict's keys), and the
    structures of its children; ``kind`` None is a leaf."""

    kind: type | None = None
    context: Any = None
    children: tuple[TreeSpec, ...] = ()

    @property
    def leaves(self) -> int:
        """How many leaves the structure holds."""
        return 1 if self.kind is None else sum(child.leaves for child in self.children)

    def __repr__(self) -> str:
        return self._text(0)

    def _text(self, indent: int) -> str:
        # torch's TreeSpec.__repr__: the children after the first on lines of their own
        if self.kind is None:
            return "*"
        texts = [child._text(indent + 2) for child in self.children]
        inner = (",\n" + " " * (indent + 2)).join(texts)
        return f"TreeSpec({self.kind.__name__}, {self.context}, [{inner}])"

    def pretty(self) -> str:
        """The structure written as the value it describes with ``*`` for each leaf, as torch's
        ``treespec_pprint``: ``(*, *)``, ``[*, {'a': *}]``."""
        return repr(unflatten([_STAR] * self.leaves, self))


class _Star:
    def __repr__(self) -> str:
        return "*"


_STAR = _Star()
LEAF = TreeSpec()


def _is_named_tuple(value: Any) -> bool:
    return isinstance(value, tuple) and hasattr(type(value), "_fields")


def flatten(tree: Any) -> tuple[list[Any], TreeSpec]:
    """The leaves of ``tree`` in order, and its structure."""
    leaves: list[Any] = []
    return leaves, _flatten_into(tree, leaves)


def _flatten_into(tree: Any, leaves: list[Any]) -> TreeSpec:
    if isinstance(tree, (tuple, list)):
        children = tuple(_flatten_into(item, leaves) for item in tree)
        context = type(tree) if _is_named_tuple(tree) else None
        return TreeSpec(type(tree), context, children)
    if isinstance(tree, dict):
        children = tuple(_flatten_into(item, leaves) for item in tree.values())
        return TreeSpec(dict, list(tree), children)
    leaves.append(tree)
    return LEAF


def unflatten(leaves: list[Any] | tuple[Any, ...], spec: TreeSpec) -> Any:
    """The pytree of structure ``spec`` holding ``leaves`` in order."""
    items = iter(leaves)
    tree = _build(items, spec)
    return tree


def _build(items: Any, spec: TreeSpec) -> Any:
    if spec.kind is None:
        return next(items)
    children = [_build(items, child) for child in spec.children]
    if spec.kind is dict:
        return dict(zip(spec.context, children))
    if spec.kind is list:
        return children
    if spec.kind is tuple:
        return tuple(children)
    return spec.kind(*children)  # a named tuple


def tree_map(function: Callable[[Any], Any], tree: Any) -> Any:
    """``tree`` with ``function`` applied to each leaf."""
    leaves, spec = flatten(tree)
    return unflatten([function(leaf) for leaf in leaves], spec)


def broadcast_prefix(prefix: Any, spec: TreeSpec) -> list[Any] | None:
    """One value of ``prefix`` for each leaf of the structure ``spec``: a leaf of ``prefix``
    (an int, None) stands for the whole subtree in its place, as vmap's ``in_dims`` does;
    None if ``prefix`` does not fit the structure."""
    found: list[Any] = []
    if _broadcast(prefix, spec, found):
        return found
    return None


def _broadcast(prefix: Any, spec: TreeSpec, found: list[Any]) -> bool:
    if not isinstance(prefix, (tuple, list, dict)):
        found.extend([prefix] * spec.leaves)
        return True
    if spec.kind is None or len(prefix) != len(spec.children):
        return False
    if isinstance(prefix, dict):
        if spec.kind is not dict or list(prefix) != list(spec.context):
            return False
        parts = list(prefix.values())
    else:
        if spec.kind is dict or isinstance(prefix, list) != (spec.kind is list):
            return False
        parts = list(prefix)
    return all(_broadcast(part, child, found) for part, child in zip(parts, spec.children))
