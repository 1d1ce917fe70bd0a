"""torch.optim's optimizers: ``SGD``, ``Adam``, ``AdamW``, ``RMSprop``, ``Adagrad``,
``Adamax``, ``Adadelta``.

Each ``step`` is torch's single-tensor algorithm (the one torch runs on the CPU), operation
for operation, in the parameter's dtype, each in-place update rounded as torch's kernel
rounds it (``kernels``): after the same gradients, the parameters hold torch's numbers.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..engine.tensor import Tensor
from ..nn.module import write
from . import kernels as K
from .optimizer import Optimizer, advance, buffer_like, step_counter


def _check(condition: bool, message: str) -> None:
    if not condition:
        raise ValueError(message)


def _validate(**settings: Any) -> None:
    """torch's refusals of the settings an optimizer is given (those named here)."""
    _check(settings["lr"] >= 0.0, f"Invalid learning rate: {settings['lr']}")
    if "eps" in settings:
        _check(settings["eps"] >= 0.0, f"Invalid epsilon value: {settings['eps']}")
    if "momentum" in settings:
        _check(settings["momentum"] >= 0.0, f"Invalid momentum value: {settings['momentum']}")
    for index, beta in enumerate(settings.get("betas", ())):
        _check(0.0 <= beta < 1.0, f"Invalid beta parameter at index {index}: {beta}")
    decay = settings.get("weight_decay", 0)
    _check(decay >= 0.0, f"Invalid weight_decay value: {decay}")


def _gradient(param: Tensor, maximize: bool, weight_decay: float) -> np.ndarray:
    """The gradient an update uses: negated to maximize, plus weight_decay * param."""
    assert param._grad is not None
    grad = param._grad.data
    if maximize:
        grad = -grad
    if weight_decay != 0:
        grad = K.add(grad, param.data, weight_decay)
    return np.asarray(grad)


class SGD(Optimizer):
    """Stochastic gradient descent, with momentum (dampening, Nesterov's) and weight decay."""

    def __init__(
        self,
        params: Any,
        lr: float = 1e-3,
        momentum: float = 0,
        dampening: float = 0,
        weight_decay: float = 0,
        nesterov: bool = False,
        *,
        maximize: bool = False,
        foreach: bool | None = None,
        differentiable: bool = False,
        fused: bool | None = None,
    ) -> None:
        _validate(lr=lr, momentum=momentum, weight_decay=weight_decay)
        defaults = {
            "lr": lr,
            "momentum": momentum,
            "dampening": dampening,
            "weight_decay": weight_decay,
            "nesterov": nesterov,
            "maximize": maximize,
            "foreach": foreach,
            "differentiable": differentiable,
            "fused": fused,
        }
        _check(
            not nesterov or (momentum > 0 and dampening == 0),
            "Nesterov momentum requires a momentum and zero dampening",
        )
        super().__init__(params, defaults)

    def _update(self, group: dict[str, Any]) -> None:
        momentum = group["momentum"]
        for param in self._with_grads(group):
            grad = _gradient(param, group["maximize"], group["weight_decay"])
            if momentum != 0:
                state = self.state[param]
                buf = state.get("momentum_buffer")
                if buf is None:
                    buf = state["momentum_buffer"] = Tensor(np.array(grad))
                else:
                    moved = K.mul(buf.data, momentum)
                    write(buf, K.add(moved, grad, 1 - group["dampening"]))
                grad = K.add(grad, buf.data, momentum) if group["nesterov"] else buf.data
            write(param, K.add(param.data, grad, -group["lr"]))


class Adam(Optimizer):
    """Adam (``decoupled_weight_decay=True``: AdamW), with amsgrad."""

    def __init__(
        self,
        params: Any,
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0,
        amsgrad: bool = False,
        *,
        foreach: bool | None = None,
        maximize: bool = False,
        capturable: bool = False,
        differentiable: bool = False,
        fused: bool | None = None,
        decoupled_weight_decay: bool = False,
    ) -> None:
        _validate(lr=lr, eps=eps, betas=betas, weight_decay=weight_decay)
        defaults = {
            "lr": lr,
            "betas": betas,
            "eps": eps,
            "weight_decay": weight_decay,
            "amsgrad": amsgrad,
            "maximize": maximize,
            "foreach": foreach,
            "capturable": capturable,
            "differentiable": differentiable,
            "fused": fused,
            "decoupled_weight_decay": decoupled_weight_decay,
        }
        super().__init__(params, defaults)

    def _update(self, group: dict[str, Any]) -> None:
        beta1, beta2 = group["betas"]
        lr, weight_decay, amsgrad = group["lr"], group["weight_decay"], group["amsgrad"]
        decoupled = group["decoupled_weight_decay"]
        for param in self._with_grads(group):
            extra = ("max_exp_avg_sq",) if amsgrad else ()
            state = self._state(param, "exp_avg", "exp_avg_sq", *extra)
            step = advance(state["step"])
            if weight_decay != 0 and decoupled:
                write(param, K.mul(param.data, 1 - lr * weight_decay))
            grad = _gradient(param, group["maximize"], 0 if decoupled else weight_decay)
            exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
            write(exp_avg, K.lerp(exp_avg.data, grad, 1 - beta1))
            squared = K.mul(exp_avg_sq.data, beta2)
            write(exp_avg_sq, K.addcmul(squared, grad, grad, 1 - beta2))
            step_size = lr / (1 - beta1**step)
            correction2_sqrt = (1 - beta2**step) ** 0.5
            second = exp_avg_sq
            if amsgrad:
                second = state["max_exp_avg_sq"]
                write(second, np.maximum(second.data, exp_avg_sq.data))
            denom = K.add_scalar(K.div_scalar(K.sqrt(second.data), correction2_sqrt), group["eps"])
            write(param, K.addcdiv(param.data, exp_avg.data, denom, -step_size))


class AdamW(Adam):
    """Adam with decoupled weight decay (default 1e-2)."""

    def __init__(
        self,
        params: Any,
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 1e-2,
        amsgrad: bool = False,
        *,
        maximize: bool = False,
        foreach: bool | None = None,
        capturable: bool = False,
        differentiable: bool = False,
        fused: bool | None = None,
    ) -> None:
        super().__init__(
            params,
            lr,
            betas,
            eps,
            weight_decay,
            amsgrad,
            foreach=foreach,
            maximize=maximize,
            capturable=capturable,
            differentiable=differentiable,
            fused=fused,
            decoupled_weight_decay=True,
        )


class RMSprop(Optimizer):
    """RMSprop: the gradient over the root of a running mean of its square (centered: of its
    variance), with momentum and weight decay."""

    def __init__(
        self,
        params: Any,
        lr: float = 1e-2,
        alpha: float = 0.99,
        eps: float = 1e-8,
        weight_decay: float = 0,
        momentum: float = 0,
        centered: bool = False,
        capturable: bool = False,
        foreach: bool | None = None,
        maximize: bool = False,
        differentiable: bool = False,
    ) -> None:
        _validate(lr=lr, eps=eps, momentum=momentum, weight_decay=weight_decay)
        _check(alpha >= 0.0, f"Invalid alpha value: {alpha}")
        defaults = {
            "lr": lr,
            "momentum": momentum,
            "alpha": alpha,
            "eps": eps,
            "centered": centered,
            "weight_decay": weight_decay,
            "capturable": capturable,
            "foreach": foreach,
            "maximize": maximize,
            "differentiable": differentiable,
        }
        super().__init__(params, defaults)

    def _update(self, group: dict[str, Any]) -> None:
        alpha, momentum = group["alpha"], group["momentum"]
        for param in self._with_grads(group):
            extra: tuple[str, ...] = ("momentum_buffer",) if momentum > 0 else ()
            extra += ("grad_avg",) if group["centered"] else ()
            state = self._state(param, "square_avg", *extra)
            advance(state["step"])
            grad = _gradient(param, group["maximize"], group["weight_decay"])
            square_avg = state["square_avg"]
            write(square_avg, K.addcmul(K.mul(square_avg.data, alpha), grad, grad, 1 - alpha))
            if group["centered"]:
                grad_avg = state["grad_avg"]
                write(grad_avg, K.lerp(grad_avg.data, grad, 1 - alpha))
                avg = K.sqrt(K.addcmul(square_avg.data, grad_avg.data, grad_avg.data, -1))
            else:
                avg = K.sqrt(square_avg.data)
            avg = K.add_scalar(avg, group["eps"])
            if momentum > 0:
                buf = state["momentum_buffer"]
                write(buf, K.addcdiv(K.mul(buf.data, momentum), grad, avg))
                write(param, K.add(param.data, buf.data, -group["lr"]))
            else:
                write(param, K.addcdiv(param.data, grad, avg, -group["lr"]))


class Adagrad(Optimizer):
    """Adagrad: the gradient over the root of the sum of its squares so far."""

    def __init__(
        self,
        params: Any,
        lr: float = 1e-2,
        lr_decay: float = 0,
        weight_decay: float = 0,
        initial_accumulator_value: float = 0,
        eps: float = 1e-10,
        foreach: bool | None = None,
        *,
        maximize: bool = False,
        differentiable: bool = False,
        fused: bool | None = None,
    ) -> None:
        _validate(lr=lr, eps=eps, weight_decay=weight_decay)
        _check(lr_decay >= 0.0, f"Invalid lr_decay value: {lr_decay}")
        _check(
            initial_accumulator_value >= 0.0,
            f"Invalid initial_accumulator_value value: {initial_accumulator_value}",
        )
        defaults = {
            "lr": lr,
            "lr_decay": lr_decay,
            "eps": eps,
            "weight_decay": weight_decay,
            "initial_accumulator_value": initial_accumulator_value,
            "foreach": foreach,
            "maximize": maximize,
            "differentiable": differentiable,
            "fused": fused,
        }
        super().__init__(params, defaults)
        for group in self.param_groups:  # torch makes the state at once
            for param in group["params"]:
                self.state[param]["step"] = step_counter()
                self.state[param]["sum"] = buffer_like(param, group["initial_accumulator_value"])

    def _update(self, group: dict[str, Any]) -> None:
        lr = group["lr"]
        for param in self._with_grads(group):
            state = self.state[param]
            step = advance(state["step"])
            grad = _gradient(param, group["maximize"], group["weight_decay"])
            clr = lr / (1 + (step - 1) * group["lr_decay"])
            total = state["sum"]
            write(total, K.addcmul(total.data, grad, grad, 1))
            std = K.add_scalar(K.sqrt(total.data), group["eps"])
            write(param, K.addcdiv(param.data, grad, std, -clr))


class Adamax(Optimizer):
    """Adam with the infinity norm: the gradient's running mean over a running maximum of
    its magnitude."""

    def __init__(
        self,
        params: Any,
        lr: float = 2e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0,
        foreach: bool | None = None,
        *,
        maximize: bool = False,
        differentiable: bool = False,
        capturable: bool = False,
    ) -> None:
        _validate(lr=lr, eps=eps, betas=betas, weight_decay=weight_decay)
        defaults = {
            "lr": lr,
            "betas": betas,
            "eps": eps,
            "weight_decay": weight_decay,
            "foreach": foreach,
            "maximize": maximize,
            "differentiable": differentiable,
            "capturable": capturable,
        }
        super().__init__(params, defaults)

    def _update(self, group: dict[str, Any]) -> None:
        beta1, beta2 = group["betas"]
        for param in self._with_grads(group):
            state = self._state(param, "exp_avg", "exp_inf")
            step = advance(state["step"])
            grad = _gradient(param, group["maximize"], group["weight_decay"])
            exp_avg, exp_inf = state["exp_avg"], state["exp_inf"]
            write(exp_avg, K.lerp(exp_avg.data, grad, 1 - beta1))
            magnitude = K.add_scalar(np.abs(grad), group["eps"])
            write(exp_inf, np.maximum(K.mul(exp_inf.data, beta2), magnitude))
            clr = group["lr"] / (1 - beta1**step)
            write(param, K.addcdiv(param.data, exp_avg.data, exp_inf.data, -clr))


class Adadelta(Optimizer):
    """Adadelta: steps scaled by the ratio of running roots of the squared steps and the
    squared gradients."""

    def __init__(
        self,
        params: Any,
        lr: float = 1.0,
        rho: float = 0.9,
        eps: float = 1e-6,
        weight_decay: float = 0,
        foreach: bool | None = None,
        *,
        capturable: bool = False,
        maximize: bool = False,
        differentiable: bool = False,
    ) -> None:
        _validate(lr=lr, eps=eps, weight_decay=weight_decay)
        _check(0.0 <= rho <= 1.0, f"Invalid rho value: {rho}")
        defaults = {
            "lr": lr,
            "rho": rho,
            "eps": eps,
            "weight_decay": weight_decay,
            "maximize": maximize,
            "capturable": capturable,
            "foreach": foreach,
            "differentiable": differentiable,
        }
        super().__init__(params, defaults)

    def _update(self, group: dict[str, Any]) -> None:
        rho, eps = group["rho"], group["eps"]
        for param in self._with_grads(group):
            state = self._state(param, "square_avg", "acc_delta")
            advance(state["step"])
            grad = _gradient(param, group["maximize"], group["weight_decay"])
            square_avg, acc_delta = state["square_avg"], state["acc_delta"]
            write(square_avg, K.addcmul(K.mul(square_avg.data, rho), grad, grad, 1 - rho))
            std = K.sqrt(K.add_scalar(square_avg.data, eps))
            delta = K.sqrt(K.add_scalar(acc_delta.data, eps)) / std * grad
            write(acc_delta, K.addcmul(K.mul(acc_delta.data, rho), delta, delta, 1 - rho))
            write(param, K.add(param.data, delta, -group["lr"]))
