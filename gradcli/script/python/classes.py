"""A script's classes: ``class Foo(Base): ...`` as Python runs it, over the interpreter's values.

A ``class`` statement runs its body in a frame of its own (``ClassFrame``) whose names become
the class's namespace; its methods are the script's ``Function`` objects, never Python code.
The class is a ``Class``: its name, bases, Python's method resolution order (C3, ``mro``) and
namespace. What the script can name as a base is another ``Class``, ``object``, or one of the
library's classes a script reaches through torch's names (``LibraryBase``:
``torch.nn.Module`` is ``gradcli.nn.Module``, ``torch.autograd.Function`` is
``gradcli.autograd.Function``).

The mechanism: each ``Class`` has a *host*, a Python type made with ``type()`` from the
class's name (plain data: no text of the script is run) whose bases are ``ScriptObject`` and
the library base, if any. An instance of the script's class is an instance of its host, so
that the library takes it as one of its own: a subclass of ``nn.Module`` registers the
``Parameter``s and submodules assigned to it through ``nn.Module.__setattr__``, is called
through ``nn.Module.__call__``, walked by ``parameters()`` and printed by ``nn.Module``'s repr;
a subclass of ``autograd.Function`` is applied by the engine's ``custom_function``. The host's
namespace holds, for each method the script class defines that the library base also has
(``forward``, ``backward``, ``extra_repr``, ``setup_context``, ``jvp``), an adapter that calls
the script's ``Function``, found in the script class when called. ``ScriptObject`` gives every
host the special methods Python calls (``__repr__``, ``__eq__``, ``__len__``, ``__add__``, ...),
each calling the script's own where it defines one (``SPECIAL`` lists those a script may
define), else Python's default or the library's.

An attribute of an instance is found as Python finds it: a ``property`` of the class, the
instance's own attributes, the class's members (a method bound to the instance), then the
library object's public attributes (``library_objects``). ``super()`` (both forms) finds the
next class in the MRO. Names beginning with two underscores stay out of a script's reach,
but for the special methods of ``SPECIAL`` found in a script class (``super().__init__()``,
``Base.__init__(self)``); the library base's ``__init__`` is reached through ``super``.
Creating an instance is a step of the run and is charged to its memory; its ``__init__`` is a
call of the script's, bounded in depth like every other.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from ...base.errors import GradcliError
from .runtime import Builtin, Frame, Function

if TYPE_CHECKING:
    from .runtime import Run

# The special methods a script's class may define, honoured where Python calls them
_BINARY = "add sub mul truediv floordiv mod pow matmul and or xor lshift rshift".split()
ARITHMETIC = {f"__{name}__" for name in _BINARY} | {f"__r{name}__" for name in _BINARY}
COMPARISONS = {"__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__"}
SPECIAL = frozenset(
    {
        "__init__",
        "__call__",
        "__repr__",
        "__str__",
        "__len__",
        "__getitem__",
        "__setitem__",
        "__delitem__",
        "__iter__",
        "__next__",
        "__contains__",
        "__bool__",
        "__hash__",
        "__neg__",
        "__pos__",
        "__abs__",
        "__invert__",
    }
    | ARITHMETIC
    | COMPARISONS
)
# Names a class body may assign that Python gives a meaning of its own, and gradcli ignores
IGNORED = frozenset({"__slots__", "__doc__", "__module__", "__qualname__", "__annotations__"})
INSTANCE_BYTES = 512  # what an instance and its attribute dict take, about
CLASS_BYTES = 4096  # what a class, its host type and namespace take, about
_MISSING = object()


class LibraryBase:
    """A class of the library a script may derive from and name (``torch.nn.Module``):
    ``kind`` is the Python class, ``path`` the name torch prints; ``make``, where given, is
    what calling it makes (``torch.nn.Parameter(t)``). ``as_base`` takes any value of that
    shape (the nn wiring's classes of the library too) as one, the same for the same kind."""

    python_name = "type"

    def __init__(self, kind: type, path: str, make: Callable[..., Any] | None = None):
        self.kind, self.path, self.make = kind, path, make
        self.name = path.rsplit(".", 1)[-1]
        # what reading a member through the class gives instead of the member as a Builtin
        # (``Function.apply``, whose inputs written in place the script's names follow)
        self.members: dict[str, Callable[[Any], Any]] = {}
        # the attributes the library keeps on its instances (a script neither reads nor
        # writes those whose names start with '_')
        self.internal: frozenset[str] = frozenset()
        if kind is not object:
            try:
                self.internal = frozenset(vars(kind()))
            except TypeError:
                pass

    @property
    def mro(self) -> list[Any]:
        return [self] if self is OBJECT else [self, OBJECT]

    def has(self, name: str) -> bool:
        """Whether the class (or a base of it) defines ``name`` itself."""
        return any(name in vars(klass) for klass in self.kind.__mro__)

    def script_call(self, *args: Any, **kwargs: Any) -> Any:
        if self.make is None:
            raise TypeError(f"gradcli run does not make a {self.path} itself; subclass it")
        return self.make(*args, **kwargs)

    def __repr__(self) -> str:
        return f"<class '{self.path}'>"


OBJECT = LibraryBase(object, "object")
_BASES: dict[type, LibraryBase] = {object: OBJECT}


def library_base(kind: type, path: str, make: Callable[..., Any] | None = None) -> LibraryBase:
    """The one ``LibraryBase`` of ``kind`` (the same object wherever a script reaches it)."""
    if kind not in _BASES:
        _BASES[kind] = LibraryBase(kind, path, make)
    return _BASES[kind]


def as_base(value: Any) -> LibraryBase | None:
    """``value`` as a base of a script's class, where it is one of the library's classes
    (a ``LibraryBase``, or any value with a Python class ``kind`` and its ``path``)."""
    if isinstance(value, LibraryBase):
        return value
    kind, path = getattr(value, "kind", None), getattr(value, "path", None)
    if not isinstance(kind, type) or not isinstance(path, str):
        return None
    return library_base(kind, path)


class Class:
    """A class the script defined (see the module docstring)."""

    python_name = "type"

    def __init__(self, run: Run, name: str, qualname: str, bases: tuple[Any, ...], namespace: dict):
        self.run, self.name, self.qualname = run, name, qualname
        run.tally.charge(CLASS_BYTES, f"the class {name}")
        self.bases = bases
        self.namespace = namespace
        self.mro: list[Any] = [self, *_linearized([list(b.mro) for b in bases] + [list(bases)])]
        libraries = [b for b in self.mro if isinstance(b, LibraryBase) and b is not OBJECT]
        if len(libraries) > 1:
            raise GradcliError(
                f"class {name} derives from {libraries[0].path} and {libraries[1].path}: "
                "gradcli run takes one of the library's classes as a base"
            )
        self.library: LibraryBase | None = libraries[0] if libraries else None
        if "__eq__" in namespace and "__hash__" not in namespace:
            namespace["__hash__"] = None  # Python's rule: __eq__ without __hash__
        self.host = self._host()

    def _host(self) -> type:
        """The Python class of the instances (see the module docstring)."""
        bases: tuple[type, ...] = (ScriptObject,)
        adapters: dict[str, Any] = {}
        if self.library is not None:
            bases = (ScriptObject, self.library.kind)
            for klass in self.mro:
                if not isinstance(klass, Class):
                    continue
                for name in klass.namespace:
                    if name in adapters or name.startswith("__"):
                        continue
                    if hasattr(self.library.kind, name):
                        adapters[name] = _adapter(self, name)
        namespace = {
            "script_class": self,
            "python_name": self.name,
            "__module__": "__main__",
            "__qualname__": self.qualname,
            **adapters,
        }
        return type(self.name, bases, namespace)

    def is_exception(self) -> bool:
        """Whether the class derives from one of Python's exceptions (``raise`` takes it)."""
        return self.library is not None and issubclass(self.library.kind, BaseException)

    def lookup(self, name: str) -> tuple[Any, Any]:
        """(the member ``name`` of the class, the class of its MRO that has it); for one the
        library's class has, (``LIBRARY``, that class); (``_MISSING``, None) else."""
        for klass in self.mro:
            if isinstance(klass, Class):
                if name in klass.namespace:
                    return klass.namespace[name], klass
            elif klass.has(name):
                return LIBRARY, klass
        return _MISSING, None

    def script_call(self, *args: Any, **kwargs: Any) -> Any:
        """``Foo(...)``: a new instance, initialised by the ``__init__`` the MRO finds."""
        run = self.run
        run.steps.step()
        run.tally.charge(INSTANCE_BYTES, f"an instance of {self.name}")
        if self.is_exception():  # BaseException.__new__ keeps the arguments as its args
            made: Any = self.host.__new__(self.host, *args)
        else:
            made = object.__new__(self.host)
        init, owner = self.lookup("__init__")
        if isinstance(init, Function):
            result = init(made, *args, **kwargs)
            if result is not None:
                raise TypeError(f"__init__() should return None, not '{_type_name(result)}'")
        elif owner is not None and owner is not OBJECT:
            owner.kind.__init__(made, *args, **kwargs)
        elif args or kwargs:
            raise TypeError(f"{self.name}() takes no arguments")
        return made

    def __repr__(self) -> str:
        return f"<class '__main__.{self.qualname}'>"


LIBRARY = object()  # what ``Class.lookup`` gives for a member of the library's class


def _linearized(sequences: list[list[Any]]) -> list[Any]:
    """Python's C3 linearization of the bases' MROs (TypeError where there is none)."""
    found: list[Any] = []
    sequences = [list(s) for s in sequences if s]
    while sequences:
        for sequence in sequences:
            head = sequence[0]
            if not any(head in other[1:] for other in sequences):
                break
        else:
            heads = list(dict.fromkeys(s[0] for s in sequences))
            names = ", ".join(_class_name(h) for h in heads)
            raise TypeError(
                f"Cannot create a consistent method resolution\norder (MRO) for bases {names}"
            )
        found.append(head)
        sequences = [[k for k in s if k is not head] for s in sequences]
        sequences = [s for s in sequences if s]
    return found


def _class_name(klass: Any) -> str:
    return klass.name


def _adapter(cls: Class, name: str) -> Any:
    """The host's method ``name``: calls the script's member ``name`` (found when called).
    A static method stays static (``Function.forward(ctx, x)``), as the library calls it."""
    member, _ = cls.lookup(name)
    if isinstance(member, StaticMethod):

        def static(*args: Any, **kwargs: Any) -> Any:
            found, _ = cls.lookup(name)
            return bound(found, None, cls)(*args, **kwargs)

        return staticmethod(static)

    def method(self: Any, *args: Any, **kwargs: Any) -> Any:
        found, _ = type(self).script_class.lookup(name)
        return bound(found, self, type(self).script_class)(*args, **kwargs)

    return method


class _Decorated:
    """A function a decorator of Python's wrapped (see the two below)."""

    python_name = ""

    def __init__(self, function: Any):
        self.function = function

    def __repr__(self) -> str:
        return f"<{self.python_name}({self.function!r})>"


class StaticMethod(_Decorated):
    """``@staticmethod``: the function, called without the instance."""

    python_name = "staticmethod"


class ClassMethod(_Decorated):
    """``@classmethod``: the function, called with the class."""

    python_name = "classmethod"


class Property:
    """``@property`` (and its ``.setter``, ``.deleter``)."""

    python_name = "property"

    def __init__(self, fget: Any = None, fset: Any = None, fdel: Any = None):
        self.fget, self.fset, self.fdel = fget, fset, fdel

    def getter(self, function: Any) -> Property:
        return Property(function, self.fset, self.fdel)

    def setter(self, function: Any) -> Property:
        return Property(self.fget, function, self.fdel)

    def deleter(self, function: Any) -> Property:
        return Property(self.fget, self.fset, function)

    def attribute(self, name: str) -> Any:
        """What a script reads of a property: its functions and its decorators."""
        if name in ("fget", "fset", "fdel"):
            return getattr(self, name)
        if name in ("getter", "setter", "deleter"):
            return Builtin(name, getattr(self, name))
        raise AttributeError(f"'property' object has no attribute '{name}'")

    def __repr__(self) -> str:
        return f"<property object at 0x{id(self):x}>"


class BoundMethod(Builtin):
    """A script's function bound to an instance (or to a class, a classmethod's)."""

    __slots__ = ("function", "owner")

    def __init__(self, function: Any, owner: Any):
        name = getattr(function, "name", "method")
        super().__init__(name, lambda *a, **k: function(owner, *a, **k))
        self.function, self.owner = function, owner

    def __repr__(self) -> str:
        name = getattr(self.function, "qualname", self.name)
        return f"<bound method {name} of {self.owner!r}>"


def bound(member: Any, instance: Any, cls: Class) -> Any:
    """A class member as reading it through ``instance`` (None: through the class) gives it."""
    if isinstance(member, StaticMethod):
        return member.function
    if isinstance(member, ClassMethod):
        return BoundMethod(member.function, cls)
    if instance is not None and isinstance(member, Function):
        return BoundMethod(member, instance)
    return member


class Super:
    """What ``super()`` gives: the members of the classes after ``start`` in the MRO of
    ``subject``'s class (``subject``: an instance, or a class in a classmethod)."""

    python_name = "super"

    def __init__(self, start: Any, subject: Any):
        if not isinstance(start, Class):
            raise TypeError("super() argument 1 must be a class of the script")
        cls = subject if isinstance(subject, Class) else script_class(subject)
        if cls is None or start not in cls.mro:
            raise TypeError("super(type, obj): obj must be an instance or subtype of type")
        self.start, self.subject, self.cls = start, subject, cls

    def attribute(self, name: str) -> Any:
        mro = self.cls.mro
        instance = None if isinstance(self.subject, Class) else self.subject
        for klass in mro[mro.index(self.start) + 1 :]:
            if isinstance(klass, Class):
                if name in klass.namespace:
                    return bound(klass.namespace[name], instance, self.cls)
                continue
            if not klass.has(name) or (name.startswith("_") and name not in SPECIAL):
                continue
            if name == "__init__" and klass is OBJECT:
                return Builtin("__init__", _object_init)
            found = getattr(klass.kind, name)
            if instance is not None and hasattr(found, "__get__"):
                found = found.__get__(instance, type(instance))
            return _script_value(name, found)
        raise AttributeError(f"'super' object has no attribute '{name}'")

    def __repr__(self) -> str:
        return f"<super: <class '{self.start.name}'>, <{self.cls.name} object>>"


def _object_init(*args: Any, **kwargs: Any) -> None:
    if args or kwargs:
        raise TypeError("object.__init__() takes exactly one argument (the instance to initialize)")


def script_class(value: Any) -> Class | None:
    """The script class of an instance of one, else None."""
    if isinstance(value, ScriptObject):
        found: Class = type(value).script_class
        return found
    return None


def _type_name(value: Any) -> str:
    from .runtime import type_name

    return type_name(value)


# -- attributes ---------------------------------------------------------------------------------
def is_scripted(value: Any) -> bool:
    """Whether ``value`` is one of this module's: a class, an instance, a ``super()``."""
    return isinstance(value, (ScriptObject, Class, Super, LibraryBase, Property))


def get(run: Run, value: Any, name: str) -> Any:
    """``value.name`` for a value of this module (``is_scripted``)."""
    if name.startswith("__") and name not in SPECIAL:
        raise GradcliError(
            f"gradcli run does not read attributes whose names start with '__' ({name!r})",
            hint="a script's classes are read by their own names, not Python's internals",
        )
    if isinstance(value, (Super, Property)):
        return value.attribute(name)
    if isinstance(value, LibraryBase):
        return _library_class_attribute(value, name, value.kind)
    if isinstance(value, Class):
        member, owner = value.lookup(name)
        if member is LIBRARY:
            return _library_class_attribute(owner, name, value.host)
        if member is _MISSING:
            raise AttributeError(f"type object '{value.name}' has no attribute '{name}'")
        if isinstance(member, Property):
            return member
        return bound(member, None, value)
    cls: Class = type(value).script_class
    member, owner = cls.lookup(name)
    if isinstance(member, Property):
        if member.fget is None:
            raise AttributeError(f"property '{name}' of '{cls.name}' object has no getter")
        return member.fget(value)
    fields = vars(value)
    if name in fields and not name.startswith("__") and _readable(cls, name):
        return fields[name]
    if name in _HOST_NAMES:
        raise AttributeError(f"'{cls.name}' object has no attribute '{name}'")
    if member is _MISSING or (member is LIBRARY and name.startswith("_")):
        if cls.library is not None and not name.startswith("_"):
            return _library_attribute(run, value, name)
        raise AttributeError(f"'{cls.name}' object has no attribute '{name}'")
    if member is LIBRARY:
        return _library_attribute(run, value, name)
    return bound(member, value, cls)


def _readable(cls: Class, name: str) -> bool:
    """Whether an instance's own attribute ``name`` is the script's (not the library's
    bookkeeping, ``_parameters``, nor the interpreter's on an exception, ``_gradcli_places``)."""
    if name.startswith("_gradcli"):
        return False
    return cls.library is None or not (name.startswith("_") and name in cls.library.internal)


def _library_attribute(run: Run, value: Any, name: str) -> Any:
    from . import library_objects

    if library_objects.is_library_object(value):
        return library_objects.attribute(run, value, name)
    return _script_value(name, getattr(value, name))


def _script_value(name: str, found: Any) -> Any:
    """A member of the library as a script holds it: a callable as a Builtin; a Python class
    or module is not for a script to hold."""
    if isinstance(found, type) or type(found).__name__ == "module":
        raise AttributeError(f"gradcli run does not read the attribute '{name}'")
    return Builtin(name, found) if callable(found) else found


def _library_class_attribute(klass: LibraryBase, name: str, host: type) -> Any:
    """``Exp.apply``, ``nn.Module.__init__``: the library class's public members (and its
    ``__init__``) read through ``host`` (the script class's host, or the library class), as
    Builtins."""
    if klass is OBJECT or (name.startswith("_") and name != "__init__") or not klass.has(name):
        raise AttributeError(f"type object '{klass.path}' has no attribute '{name}'")
    adapted = klass.members.get(name)
    found = getattr(host, name)
    return _script_value(name, found) if adapted is None else adapted(found)


def set_attribute(run: Run, value: Any, name: str, new: Any) -> None:
    """``value.name = new`` for an instance or a class of the script."""
    if name.startswith("__"):
        raise AttributeError(f"gradcli run does not write the attribute '{name}'")
    if isinstance(value, Class):
        value.namespace[name] = new
        return
    if not isinstance(value, ScriptObject):
        raise AttributeError(f"'{_type_name(value)}' object attribute '{name}' is read-only")
    cls, setter = _accessor(value, name, "setter")
    if setter is not None:
        setter(value, new)
        return
    if name not in vars(value):
        run.tally.charge(64, f"the attribute {name} of a {cls.name}")
    setattr(value, name, new)  # a library base's own __setattr__ (nn.Module registers)


def _accessor(value: Any, name: str, role: str) -> tuple[Class, Any]:
    """(the class of ``value``, the ``setter`` or ``deleter`` of its property ``name``, or
    None where ``name`` is no property); AttributeError for a property without one, and for
    the library's own bookkeeping."""
    cls: Class = type(value).script_class
    member, _ = cls.lookup(name)
    if not isinstance(member, Property):
        if not _readable(cls, name):
            raise AttributeError(f"gradcli run does not change the attribute '{name}'")
        return cls, None
    function = member.fset if role == "setter" else member.fdel
    if function is None:
        raise AttributeError(f"property '{name}' of '{cls.name}' object has no {role}")
    return cls, function


def delete_attribute(run: Run, value: Any, name: str) -> None:
    """``del value.name``."""
    if isinstance(value, Class):
        if name not in value.namespace:
            raise AttributeError(f"type object '{value.name}' has no attribute '{name}'")
        del value.namespace[name]
        return
    if not isinstance(value, ScriptObject):
        raise AttributeError(f"'{_type_name(value)}' object has no attribute '{name}'")
    cls, deleter = _accessor(value, name, "deleter")
    if deleter is not None:
        deleter(value)
        return
    try:
        delattr(value, name)
    except AttributeError:
        raise AttributeError(f"'{cls.name}' object has no attribute '{name}'") from None


def is_instance(value: Any, kind: Any) -> bool:
    """``isinstance(value, kind)`` for a class of the script or a library class."""
    library = as_base(kind)
    if library is not None:
        return isinstance(value, library.kind)
    cls = script_class(value)
    return cls is not None and kind in cls.mro


def is_subclass(kind: Any, base: Any) -> bool:
    """``issubclass(kind, base)`` for the script's classes and the library's."""
    library = as_base(base)
    if isinstance(kind, Class):
        if library is None:
            return base in kind.mro
        return library is OBJECT or (
            kind.library is not None and issubclass(kind.library.kind, library.kind)
        )
    derived = as_base(kind)
    if derived is None:
        raise TypeError("issubclass() arg 1 must be a class")
    return library is not None and issubclass(derived.kind, library.kind)


# -- the special methods Python calls ------------------------------------------------------------
def _special(value: Any, name: str) -> Any:
    """The script's special method ``name`` of ``value``'s class, bound; None where the MRO
    finds it in no script class."""
    cls: Class = type(value).script_class
    member, _ = cls.lookup(name)
    if member is _MISSING or member is LIBRARY:
        return None
    if member is None:
        return member
    return bound(member, value, cls)


def _name(value: Any) -> str:
    return str(type(value).script_class.name)


def _checked(result: Any, kind: type, method: str, what: str) -> Any:
    if not isinstance(result, kind):
        raise TypeError(f"{method} returned non-{what} (type {_type_name(result)})")
    return result


class ScriptObject:
    """The base of every host class (see the module docstring): Python's special methods,
    each calling the script's where its class defines one."""

    script_class: Class

    def __repr__(self) -> str:
        found = _special(self, "__repr__")
        if found is not None:
            return str(_checked(found(), str, "__repr__", "string"))
        return super().__repr__()

    def __str__(self) -> str:
        found = _special(self, "__str__")
        if found is not None:
            return str(_checked(found(), str, "__str__", "string"))
        return super().__str__()

    def __eq__(self, other: object) -> Any:
        found = _special(self, "__eq__")
        if found is not None:
            return found(other)
        return NotImplemented

    def __ne__(self, other: object) -> Any:
        found = _special(self, "__ne__")
        if found is not None:
            return found(other)
        equal = self.__eq__(other)
        if equal is NotImplemented:
            return NotImplemented
        return not equal

    def __hash__(self) -> int:
        cls: Class = type(self).script_class
        member, _ = cls.lookup("__hash__")
        if member is None:
            raise TypeError(f"unhashable type: '{cls.name}'")
        if member is _MISSING or member is LIBRARY:
            return object.__hash__(self)
        result = bound(member, self, cls)()
        return int(_checked(result, int, "__hash__", "int"))

    def __bool__(self) -> bool:
        found = _special(self, "__bool__")
        if found is not None:
            return bool(_checked(found(), bool, "__bool__", "bool"))
        if _special(self, "__len__") is not None:
            return len(self) != 0
        return True

    def __len__(self) -> int:
        found = _special(self, "__len__")
        if found is None:
            raise TypeError(f"object of type '{_name(self)}' has no len()")
        result = _checked(found(), int, "__len__", "int")
        if result < 0:
            raise ValueError("__len__() should return >= 0")
        return int(result)

    def __getitem__(self, key: Any) -> Any:
        found = _special(self, "__getitem__")
        if found is not None:
            return found(key)
        library = type(self).script_class.library
        if library is not None and library.has("__getitem__"):  # Dataset's NotImplementedError
            return super().__getitem__(key)  # type: ignore[misc]
        raise TypeError(f"'{_name(self)}' object is not subscriptable")

    def __setitem__(self, key: Any, value: Any) -> None:
        found = _special(self, "__setitem__")
        if found is None:
            raise TypeError(f"'{_name(self)}' object does not support item assignment")
        found(key, value)

    def __delitem__(self, key: Any) -> None:
        found = _special(self, "__delitem__")
        if found is None:
            raise TypeError(f"'{_name(self)}' object doesn't support item deletion")
        found(key)

    def __iter__(self) -> Iterator[Any]:
        found = _special(self, "__iter__")
        if found is not None:
            result: Iterator[Any] = found()
            return result
        item = _special(self, "__getitem__")
        if item is None:
            raise TypeError(f"'{_name(self)}' object is not iterable")
        return _by_index(item)

    def __next__(self) -> Any:
        found = _special(self, "__next__")
        if found is None:
            raise TypeError(f"'{_name(self)}' object is not an iterator")
        return found()

    def __contains__(self, item: Any) -> bool:
        found = _special(self, "__contains__")
        if found is not None:
            return bool(found(item))
        for each in self:
            if each is item or each == item:
                return True
        return False

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        found = _special(self, "__call__")
        if found is not None:
            return found(*args, **kwargs)
        if type(self).script_class.library is None:
            raise TypeError(f"'{_name(self)}' object is not callable")
        return super().__call__(*args, **kwargs)  # type: ignore[misc]

    def script_call(self, *args: Any, **kwargs: Any) -> Any:
        return self(*args, **kwargs)


def _by_index(item: Any) -> Iterator[Any]:
    """Python's old iteration protocol: ``__getitem__`` of 0, 1, 2, ... until IndexError."""
    index = 0
    while True:
        try:
            yield item(index)
        except (IndexError, StopIteration):
            return
        index += 1


def _unary(name: str) -> Callable[[Any], Any]:
    def method(self: Any) -> Any:
        found = _special(self, name)
        if found is None:
            symbol = {"__neg__": "-", "__pos__": "+", "__invert__": "~"}.get(name)
            if symbol is None:
                raise TypeError(f"bad operand type for abs(): '{_name(self)}'")
            raise TypeError(f"bad operand type for unary {symbol}: '{_name(self)}'")
        return found()

    return method


def _binary(name: str) -> Callable[[Any, Any], Any]:
    def method(self: Any, other: Any) -> Any:
        found = _special(self, name)
        if found is None:
            return NotImplemented
        return found(other)

    return method


for _special_name in ("__neg__", "__pos__", "__abs__", "__invert__"):
    setattr(ScriptObject, _special_name, _unary(_special_name))
for _special_name in ARITHMETIC | (COMPARISONS - {"__eq__", "__ne__"}):
    setattr(ScriptObject, _special_name, _binary(_special_name))

_SYMBOLS = {
    "+": "add",
    "-": "sub",
    "*": "mul",
    "/": "truediv",
    "//": "floordiv",
    "%": "mod",
    "**": "pow",
    "@": "matmul",
    "&": "and",
    "|": "or",
    "^": "xor",
    "<<": "lshift",
    ">>": "rshift",
}
_COMPARED = {"<": ("lt", "gt"), "<=": ("le", "ge"), ">": ("gt", "lt"), ">=": ("ge", "le")}


def binary(symbol: str, left: Any, right: Any) -> Any:
    """``left symbol right`` where one side is an instance of a script class: Python's
    protocol (the left's method, then the right's reflected one)."""
    if symbol in ("==", "!="):
        equal = symbol == "=="
        for first, second in ((left, right), (right, left)):
            if isinstance(first, ScriptObject):
                found = first.__eq__(second) if equal else first.__ne__(second)
                if found is not NotImplemented:
                    return found
        return (left is right) == equal
    if symbol in _COMPARED:
        forward, reflected = (f"__{n}__" for n in _COMPARED[symbol])
    else:
        forward, reflected = f"__{_SYMBOLS[symbol]}__", f"__r{_SYMBOLS[symbol]}__"
    if isinstance(left, ScriptObject):
        found = getattr(type(left), forward)(left, right)
        if found is not NotImplemented:
            return found
    if isinstance(right, ScriptObject):
        found = getattr(type(right), reflected)(right, left)
        if found is not NotImplemented:
            return found
    if symbol in _COMPARED:
        raise TypeError(
            f"'{symbol}' not supported between instances of '{_type_name(left)}' and "
            f"'{_type_name(right)}'"
        )
    raise TypeError(
        f"unsupported operand type(s) for {symbol}: '{_type_name(left)}' and '{_type_name(right)}'"
    )


class ClassFrame(Frame):
    """The frame a class body runs in: its names are the class's namespace; ``owner`` is the
    class made from it (what ``super()`` in its methods starts from)."""

    __slots__ = ("owner",)

    def __init__(self, names: dict[str, Any], parent: Frame, run: Run):
        super().__init__(names, parent, run)
        self.owner: Class | None = None


def zero_argument_super(frame: Frame, hops: int, first: str | None) -> Super:
    """``super()`` in a method: the class the method was defined in (``hops`` frames out)
    and the method's first argument."""
    held: Any = frame
    for _ in range(hops):
        held = held.parent
    if first is None or first not in frame.names:
        raise RuntimeError("super(): no arguments")
    if not isinstance(held, ClassFrame) or held.owner is None:
        raise RuntimeError("super(): __class__ cell not found")
    return Super(held.owner, frame.names[first])


def is_callable(value: Any) -> bool:
    """``callable(value)`` for an instance of a script class."""
    member, _ = type(value).script_class.lookup("__call__")
    return member is LIBRARY or (member is not _MISSING and member is not None)


# The names the host classes have of their own (not the script's, nor the library's)
_HOST_NAMES = frozenset({*vars(ScriptObject), "script_class", "python_name"})
