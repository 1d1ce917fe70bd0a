"""numba intrinsics of the compiled kernels (the ``fast`` extra): eight bytes of a byte array
read or written at once, at any offset (numba's own code for ``word |= a[i + j] << 8 * j``
stays eight loads of a byte each, and its stores eight stores), and the array at an address
(``array_at``). Importing this module imports numba: a compiled module imports it where numba
is installed. numba's cache of a kernel knows only its own module's file: a change here
reaches a cached kernel once its module changes too."""

from __future__ import annotations

from typing import Any

from llvmlite import ir
from numba.core import cgutils, types
from numba.extending import intrinsic
from numba.np.arrayobj import populate_array

_WORD = ir.IntType(64)


def _address(context: Any, builder: Any, array_type: Any, array: Any, index: Any) -> Any:
    """The address of byte ``index`` of ``array``, as that of a 64-bit word."""
    data = context.make_array(array_type)(context, builder, array).data
    return builder.bitcast(builder.gep(data, [index]), _WORD.as_pointer())


@intrinsic
def load8(typingctx: Any, array: Any, index: Any) -> Any:
    """The 8 bytes of a contiguous 1-D uint8 ``array`` from byte ``index`` on, as a uint64
    (little endian on the machines numba compiles for; no bounds are checked)."""

    def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
        return builder.load(_address(context, builder, signature.args[0], *args), align=1)

    return types.uint64(array, index), codegen


@intrinsic
def store8(typingctx: Any, array: Any, index: Any, word: Any) -> Any:
    """Writes the uint64 ``word`` as bytes ``index`` to ``index + 7`` of a contiguous 1-D
    uint8 ``array`` (no bounds are checked)."""

    def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
        array, index, value = args
        address = _address(context, builder, signature.args[0], array, index)
        builder.store(value, address, align=1)
        return context.get_dummy_value()

    return types.none(array, index, word), codegen


@intrinsic
def array_at(typingctx: Any, pointer: Any, shape: Any) -> Any:
    """The C-contiguous array of ``shape`` (an integer, or a tuple of them) whose data are at
    ``pointer`` (a ``types.CPointer``). Built in place, it needs no function of numba's array
    code and no reference count (unlike ``numba.carray``, which a kernel compiled without
    numba's runtime cannot call): it owns nothing, its memory is the caller's."""
    sizes = [shape] if isinstance(shape, types.Integer) else list(shape.types)
    made = types.Array(pointer.dtype, len(sizes), "C")

    def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
        intp = context.get_value_type(types.intp)
        if isinstance(shape, types.Integer):
            given = [args[1]]
        else:
            given = cgutils.unpack_tuple(builder, args[1], len(sizes))
        dims = [context.cast(builder, v, t, types.intp) for v, t in zip(given, sizes)]
        itemsize = context.get_abi_sizeof(context.get_data_type(pointer.dtype))
        strides = [intp(itemsize)]
        for dim in reversed(dims[1:]):
            strides.insert(0, builder.mul(strides[0], dim))
        array = context.make_array(made)(context, builder)
        populate_array(
            array, data=args[0], shape=dims, strides=strides, itemsize=itemsize, meminfo=None
        )
        return array._getvalue()

    return made(pointer, shape), codegen
