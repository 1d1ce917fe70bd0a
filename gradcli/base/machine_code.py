"""Machine code that numba compiled in an earlier process, loaded with llvmlite alone: a
kernel's object code (an ELF file, as numba's JIT made it for this machine) linked in memory
by LLVM's MCJIT, without importing numba (0.6 s of CPU time; llvmlite's binding, 0.08 s).

Only an object that calls nothing outside itself but the C library's ``LIBC`` is loaded:
anything else (numba's helpers, its runtime, Python's C API) would be left unresolved, which
MCJIT does not report, and the code would jump to nowhere. ``undefined`` reads the object's
symbol table to tell; a file that is not a 64-bit little-endian ELF object is refused.
"""

from __future__ import annotations

import struct
from typing import Any

#: The functions of the C library that an object may call (LLVM's ``memcpy`` intrinsics and
#: the like), given their addresses in this process.
LIBC = ("memcpy", "memmove", "memset")
#: The execution engines that hold the loaded code (freed with them): kept for the process.
_ENGINES: list[Any] = []


def undefined(code: bytes) -> set[str] | None:
    """The names of the symbols that the ELF object ``code`` uses and does not define, or None
    where it is not a 64-bit little-endian ELF object (or its tables do not read)."""
    if code[:6] != b"\x7fELF\x02\x01":
        return None
    try:
        (table_at,) = struct.unpack_from("<Q", code, 0x28)
        size, count = struct.unpack_from("<HH", code, 0x3A)
        sections = [
            struct.unpack_from("<IIQQQQII", code, table_at + k * size) for k in range(count)
        ]
        names: set[str] = set()
        for _, kind, _, _, offset, length, link, _ in sections:
            if kind != 2:  # SHT_SYMTAB
                continue
            strings = sections[link][4]
            for at in range(offset, offset + length, 24):
                name, _, _, index = struct.unpack_from("<IBBH", code, at)
                if name and index == 0:  # SHN_UNDEF
                    end = code.index(b"\0", strings + name)
                    names.add(code[strings + name : end].decode())
        return names
    except (struct.error, IndexError, ValueError, UnicodeDecodeError):
        return None


def host() -> str:
    """What the machine code is compiled for here: the target, the CPU and its features, as
    LLVM (and numba) see them."""
    import llvmlite
    import llvmlite.binding as llvm

    cpu, features = llvm.get_host_cpu_name(), llvm.get_host_cpu_features().flatten()
    return f"llvmlite {llvmlite.__version__}\0{llvm.get_process_triple()}\0{cpu}\0{features}"


def load(code: bytes, symbol: str) -> int | None:
    """The address of the function ``symbol`` of the ELF object ``code`` loaded into this
    process, or None where the object calls anything outside it but ``LIBC``, does not load
    or does not define it."""
    names = undefined(code)
    if names is None or not names <= set(LIBC):
        return None
    import ctypes

    try:
        import llvmlite.binding as llvm

        libc = ctypes.CDLL(None)
        for name in names:
            llvm.add_symbol(name, ctypes.cast(getattr(libc, name), ctypes.c_void_p).value)
        llvm.initialize_native_target()
        llvm.initialize_native_asmprinter()
        machine = llvm.Target.from_default_triple().create_target_machine()
        engine = llvm.create_mcjit_compiler(llvm.parse_assembly(""), machine)
        engine.add_object_file(llvm.ObjectFileRef.from_data(code))
        engine.finalize_object()
        address = engine.get_function_address(symbol)
    except Exception:  # noqa: BLE001 - any failure: the caller compiles the kernel with numba
        return None
    if not address:
        return None
    _ENGINES.append(engine)
    return address
