"""A command's words read into the values of its parameters, and said in gradcli's words
when they are wrong: the command line's own reading of ``gradcli COMMAND WORDS...``.

Typer builds each command from its declaration (the options' names, flags, repeatable
options, the positional arguments, the help); the words are read here against what it built,
as click's parser reads them: ``--name value``, ``--name=value``, ``-n value``, ``-nvalue``,
one-letter flags together (``-ab``), ``--`` ends the options, and an option that takes a value
takes the next word whatever it is. Each value is then converted to its declared type and
range (``typer.Option(min=..., max=...)``).

Typer's own conversion is left out: its messages changed between releases ("not a valid
integer", "not a valid int", then pydantic's "Input should be a valid integer"), and from
typer 0.29 on it builds a pydantic validator for every option at every call, whose import
alone costs about half a warm start-up.
"""

from __future__ import annotations

import difflib
import inspect
import types
import typing
from collections.abc import Callable, Sequence
from typing import Any

from ..base.errors import GradcliError


class CommandLineError(GradcliError):
    """Words that gradcli cannot read as a command line: an unknown command or option, a
    missing value, a value not of its option's type or range (exit 2, as all bad usage)."""


def read_words(params: Sequence[Any], words: Sequence[str], path: str) -> dict[str, list]:
    """The words each of the click parameters ``params`` of the command ``path`` (``gradcli
    vjp``) took, in order (a flag takes ``True``, or ``False`` by its ``--no-`` name), by the
    parameter's name; raise a ``CommandLineError`` at the first word that fits none."""
    hint = f"see {path} --help"
    options: dict[str, Any] = {}
    for param in params:
        if param.param_type_name == "option":
            options.update({name: param for name in (*param.opts, *param.secondary_opts)})
    taken: dict[str, list] = {}
    positional: list[str] = []
    pending = list(words)

    def take(param, value) -> None:
        taken.setdefault(param.name, []).append(value)

    while pending:
        word = pending.pop(0)
        if word == "--":
            positional += pending
            break
        if word[:2] == "--" and len(word) > 2:
            name, equals, value = word.partition("=")
            param = _option(options, name, hint)
            if param.is_flag:
                if equals:
                    raise CommandLineError(f"{name} takes no value (it is a switch)", hint=hint)
                take(param, name not in param.secondary_opts)
            elif equals:
                take(param, value)
            else:
                take(param, _next_value(pending, name, hint))
        elif word[:1] == "-" and len(word) > 1:
            for at in range(1, len(word)):  # -x VALUE, -xVALUE, or one-letter flags
                name = f"-{word[at]}"
                param = _option(options, name, hint)
                if param.is_flag:
                    take(param, name not in param.secondary_opts)
                    continue
                take(param, word[at + 1 :] or _next_value(pending, name, hint))
                break
        else:
            positional.append(word)

    for param in params:
        if param.param_type_name == "argument" and positional:
            count = len(positional) if param.nargs == -1 else 1
            taken[param.name], positional = positional[:count], positional[count:]
    if positional:
        raise CommandLineError(f"unexpected argument {positional[0]!r}", hint=hint)
    return taken


def read_values(
    params: Sequence[Any], taken: dict[str, list], declared: Callable, path: str
) -> dict[str, Any]:
    """The value of each parameter in ``params`` that the command passes on: from the words
    it took (``taken``, see ``read_words``), converted to its type in the signature of
    ``declared`` (the function Typer read), or else its default. Raise a
    ``CommandLineError`` for a value not of its type or range, or a required one not given."""
    hint = f"see {path} --help"
    kinds = _declared_kinds(declared)
    values = {}
    for param in params:
        if not param.expose_value:
            continue
        if param.name in taken:
            values[param.name] = _value(param, taken[param.name], kinds.get(param.name), hint)
        elif param.required:
            raise CommandLineError(f"{path} needs {_shown(param)}", hint=hint)
        else:
            values[param.name] = () if param.multiple else param.default
    return values


def _option(options: dict[str, Any], name: str, hint: str):
    """The option called ``name``, or an error that names the closest one."""
    if name in options:
        return options[name]
    close = difflib.get_close_matches(name, [o for o in options if o[:2] == "--"], n=1)
    if close:
        hint = f"did you mean {close[0]}? ({hint})"
    raise CommandLineError(f"no such option: {name}", hint=hint)


def _next_value(pending: list[str], name: str, hint: str) -> str:
    """The word after the option ``name``: its value."""
    if not pending:
        raise CommandLineError(f"{name} needs a value", hint=hint)
    return pending.pop(0)


def _shown(param) -> str:
    """The parameter as --help shows it: its longest option name, or its metavar."""
    if param.param_type_name == "option":
        return max(param.opts, key=len)
    return param.metavar or param.name.upper()


def _declared_kinds(function: Callable) -> dict[str, tuple[type, Any]]:
    """Each parameter of ``function``: the type of one of its values (``int`` for
    ``Annotated[int | None, typer.Option(...)]``, ``str`` for ``list[str] | None``) and its
    Typer declaration (with the range, ``min`` and ``max``), by name."""
    kinds = {}
    for parameter in inspect.signature(function).parameters.values():
        annotation = parameter.annotation
        info = None
        if typing.get_origin(annotation) is typing.Annotated:
            annotation, info = annotation.__origin__, annotation.__metadata__[0]
        if typing.get_origin(annotation) in (typing.Union, types.UnionType):
            annotation = next(a for a in typing.get_args(annotation) if a is not type(None))
        if typing.get_origin(annotation) is list:
            (annotation,) = typing.get_args(annotation)
        kinds[parameter.name] = (annotation, info)
    return kinds


def _value(param, taken: list, kind: tuple[type, Any] | None, hint: str):
    """The value of ``param`` from the words it took: all of them for a repeatable option,
    else the last (as click takes it), each converted to the declared type."""
    kind_type, info = kind if kind is not None else (str, None)
    converted = [_converted(word, param, kind_type, info, hint) for word in taken]
    return tuple(converted) if param.multiple else converted[-1]


#: How a number is named in a message, by its type.
_NUMBERS = {int: "a whole number", float: "a number"}


def _converted(word, param, kind_type: type, info, hint: str):
    """``word`` as ``kind_type`` (a flag's value as it is), within the declared range."""
    if param.param_type_name == "option" and param.is_flag or kind_type not in _NUMBERS:
        return word
    low, high = getattr(info, "min", None), getattr(info, "max", None)
    what = _NUMBERS[kind_type]
    if low is not None and high is not None:
        what += f" between {low:,} and {high:,}"
    elif low is not None:
        what += f" >= {low:,}"
    elif high is not None:
        what += f" <= {high:,}"
    try:
        number = kind_type(word)
    except ValueError:
        raise CommandLineError(f"{_shown(param)} must be {what}, got {word!r}", hint=hint) from None
    if (low is not None and number < low) or (high is not None and number > high):
        raise CommandLineError(f"{_shown(param)} must be {what}, got {word}", hint=hint)
    return number
