"""``torch.optim.Optimizer``: parameter groups, per-parameter state, ``zero_grad`` and the
state dict; each optimizer (``optimizers``) writes its ``step``."""

from __future__ import annotations

import copy
from collections import defaultdict
from collections.abc import Callable
from typing import Any

import numpy as np

from ..engine.tensor import Tensor, no_grad
from ..nn.module import write, zero_grad_of


class _Required:
    """The default of a setting an optimizer cannot do without (SGD's lr in old torch)."""

    def __repr__(self) -> str:
        return "<required parameter>"


required = _Required()


class Optimizer:
    """The base of the optimizers: ``params`` is an iterable of tensors or of dicts (parameter
    groups, each with its own settings), ``defaults`` the settings a group does not give."""

    def __init__(self, params: Any, defaults: dict[str, Any]) -> None:
        self.defaults = defaults
        self.state: defaultdict[Tensor, dict[str, Any]] = defaultdict(dict)
        self.param_groups: list[dict[str, Any]] = []
        self._opt_called = False
        if isinstance(params, Tensor):
            raise TypeError(
                "params argument given to the optimizer should be an iterable of Tensors or "
                f"dicts, but got {_type_name(params)}"
            )
        groups = list(params)
        if not groups:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        for group in groups:
            self.add_param_group(group)

    def add_param_group(self, param_group: dict[str, Any]) -> None:
        """Add a group of parameters with its own settings (the others from ``defaults``)."""
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {_type_name(param_group)}")
        params = param_group["params"]
        if isinstance(params, Tensor):
            params = [params]
        elif isinstance(params, set):
            raise TypeError(
                "optimizer parameters need to be organized in ordered collections, but the "
                "ordering of tensors in sets will change between runs. Please use a list instead."
            )
        params = list(params)
        names = [p[0] for p in params if isinstance(p, tuple)]
        params = [p[1] if isinstance(p, tuple) else p for p in params]
        if names:
            if len(names) != len(params):
                raise ValueError(
                    "all optimizer params should be with/without names. Some param names are "
                    "missing"
                )
            param_group["param_names"] = names
        for param in params:
            if not isinstance(param, Tensor):
                raise TypeError(
                    "optimizer can only optimize Tensors, but one of the params is "
                    + _type_name(param)
                )
            if not (param.is_leaf or param._retains_grad):
                raise ValueError("can't optimize a non-leaf Tensor")
        param_group["params"] = params
        for name, default in self.defaults.items():
            if default is required and name not in param_group:
                raise ValueError(
                    "parameter group didn't specify a value of required optimization "
                    f"parameter {name}"
                )
            param_group.setdefault(name, default)
        seen = {id(p) for group in self.param_groups for p in group["params"]}
        if any(id(p) in seen for p in params):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(param_group)

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Forget every parameter's gradient (``set_to_none=False``: zero it in place)."""
        for group in self.param_groups:
            for param in group["params"]:
                zero_grad_of(param, set_to_none)

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """One update of every parameter that has a gradient; ``closure`` (re-evaluating the
        loss, under grad) is called first and its loss returned."""
        loss = None
        if closure is not None:
            loss = closure()
        self._opt_called = True
        with no_grad():
            for group in self.param_groups:
                self._update(group)
        return loss

    def _update(self, group: dict[str, Any]) -> None:
        raise NotImplementedError

    def _with_grads(self, group: dict[str, Any]) -> list[Tensor]:
        """The group's parameters that have a gradient, refusing a complex one."""
        found = []
        for param in group["params"]:
            if param._grad is None:
                continue
            if param.dtype.kind == "c":
                raise NotImplementedError(
                    "complex parameters are not supported by gradcli's optimizers"
                )
            found.append(param)
        return found

    def _state(self, param: Tensor, *buffers: str) -> dict[str, Any]:
        """The state of ``param``, made at its first step as torch makes it: a step count
        (a float32 0-d tensor) and a zero tensor of the parameter's shape and dtype for each
        name of ``buffers``, in that order."""
        state = self.state[param]
        if not state:
            state["step"] = step_counter()
            for name in buffers:
                state[name] = buffer_like(param)
        return state

    # -- state --------------------------------------------------------------------------------
    def state_dict(self) -> dict[str, Any]:
        """``{"state": {index: state}, "param_groups": [settings, "params": indices]}``,
        parameters numbered in the order of the groups."""
        index: dict[int, int] = {}
        groups = []
        for group in self.param_groups:
            numbers = []
            for param in group["params"]:
                index.setdefault(id(param), len(index))
                numbers.append(index[id(param)])
            packed = {k: v for k, v in group.items() if k != "params"}
            packed["params"] = numbers
            groups.append(packed)
        state = {
            index[id(param)]: value for param, value in self.state.items() if id(param) in index
        }
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Take the state and settings of ``state_dict`` (floating state in each
        parameter's dtype, as torch casts it; ``step`` kept)."""
        groups = state_dict["param_groups"]
        if len(groups) != len(self.param_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        for mine, saved in zip(self.param_groups, groups):
            if len(mine["params"]) != len(saved["params"]):
                raise ValueError(
                    "loaded state dict contains a parameter group that doesn't match the size "
                    "of optimizer's group"
                )
        by_index = {
            number: param
            for mine, saved in zip(self.param_groups, groups)
            for number, param in zip(saved["params"], mine["params"])
        }
        self.state = defaultdict(dict)
        for number, values in state_dict["state"].items():
            param = by_index.get(number)
            if param is None:
                continue
            self.state[param] = {
                key: _state_copy(value, param, key) for key, value in values.items()
            }
        for mine, saved in zip(self.param_groups, groups):
            for key, value in saved.items():
                if key != "params":
                    mine[key] = copy.deepcopy(value)

    def __repr__(self) -> str:
        text = type(self).__name__ + " ("
        for i, group in enumerate(self.param_groups):
            text += f"\nParameter Group {i}\n"
            for key in sorted(group):
                if key != "params":
                    text += f"    {key}: {group[key]}\n"
        return text + ")"


def _state_copy(value: Any, param: Tensor, key: str) -> Any:
    if not isinstance(value, Tensor):
        return copy.deepcopy(value)
    array = np.array(value.data)
    if key != "step" and array.dtype.kind == "f":
        array = array.astype(param.dtype)
    return Tensor(array)


def buffer_like(param: Tensor, fill: float = 0.0) -> Tensor:
    """A state tensor of the parameter's shape and dtype, filled with ``fill``."""
    return Tensor(np.full(param.shape, fill, dtype=param.dtype))


def step_counter() -> Tensor:
    """The per-parameter step count torch keeps: a float32 0-d tensor."""
    return Tensor(np.array(0.0, dtype=np.float32))


def advance(counter: Tensor) -> float:
    """Add one to a step count, in place; the new count."""
    write(counter, counter.data + np.float32(1))
    return float(counter.data)


def _type_name(value: Any) -> str:
    kind = type(value)
    return kind.__name__ if kind.__module__ == "builtins" else f"{kind.__module__}.{kind.__name__}"


__all__ = ["Optimizer", "required"]
