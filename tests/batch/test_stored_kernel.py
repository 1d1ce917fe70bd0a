"""The JSON lines' kernel kept in gradcli's cache (``render/compiled_lines.py``): the first
process compiles it with numba and stores its object code; later ones load it with llvmlite
alone, numba not imported, and write the same lines. A stored kernel that does not match is
compiled afresh; one marked as not loading is compiled by numba from numba's cache; an object
that calls outside itself is never loaded (``base/machine_code.py``)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from gradcli.base import machine_code
from gradcli.render.json_format import plain

numba = pytest.importorskip("numba")
pytestmark = pytest.mark.extras

#: A process that writes the lines of some points with the kernel and says whether it
#: imported numba, then the lines.
_LINES = """
import sys
import numpy as np
from gradcli.render import compiled_lines
from gradcli.render.json_lines import Line
y = np.array([[1e-05, -1.7976931348623157e308, 0.1], [5e-324, 1 / 3, -0.0]])
n = np.array([[2**53], [-7]])
arrays = [("values", "y", y), ("values", "n", n), ("grads", "x", y[:, :2] > 0)]
lines = compiled_lines.Lines(compiled_lines.kernel(), Line.of(arrays))(98, [y, n, y[:, :2] > 0])
print("numba" in sys.modules)
sys.stdout.write(bytes(lines).decode())
"""


def _expected() -> str:
    y = np.array([[1e-05, -1.7976931348623157e308, 0.1], [5e-324, 1 / 3, -0.0]])
    n, b = np.array([[2**53], [-7]]), y[:, :2] > 0
    lines = [
        {
            "point": 98 + i,
            "values": {"y": plain(y[i]), "n": plain(n[i])},
            "grads": {"x": plain(b[i])},
        }
        for i in range(2)
    ]
    return "".join(json.dumps(line) + "\n" for line in lines)


def _run(cache: Path) -> tuple[bool, str]:
    """Whether a process writing the lines imported numba, and its lines."""
    env = {**os.environ, "GRADCLI_CACHE_DIR": str(cache)}
    done = subprocess.run(
        [sys.executable, "-c", _LINES], env=env, capture_output=True, text=True, check=True
    )
    imported, lines = done.stdout.split("\n", 1)
    return imported == "True", lines


def _stored(cache: Path) -> Path:
    (found,) = cache.glob("kernel-*.o")
    return found


@pytest.fixture(scope="module")
def first_run(tmp_path_factory) -> tuple[Path, tuple[bool, str]]:
    """A cache in which a first process stored the kernel, and what that process wrote."""
    cache = tmp_path_factory.mktemp("stored") / "cache"
    return cache, _run(cache)


@pytest.fixture
def cache(first_run, tmp_path) -> Path:
    """A copy of ``first_run``'s cache."""
    copy = tmp_path / "cache"
    shutil.copytree(first_run[0], copy)
    return copy


def test_a_stored_kernel_is_loaded_without_numba_and_writes_the_same_lines(first_run, cache):
    assert first_run[1] == (True, _expected())  # compiled by numba, stored
    assert _stored(cache).stat().st_size > 1000
    assert _run(cache) == (False, _expected())  # loaded by llvmlite alone


@pytest.mark.parametrize("damage", ["cut", "flipped", "empty"])
def test_a_damaged_stored_kernel_is_compiled_afresh_and_replaced(cache, damage):
    stored = _stored(cache)
    data = stored.read_bytes()
    if damage == "cut":
        data = data[: len(data) // 2]
    elif damage == "flipped":
        at = len(data) - 200  # in the code
        data = data[:at] + bytes([data[at] ^ 0x10]) + data[at + 1 :]
    else:
        data = b""
    stored.write_bytes(data)
    assert _run(cache) == (True, _expected())  # not loaded: compiled afresh
    assert _run(cache) == (False, _expected())  # and stored again


def test_a_kernel_marked_as_not_loading_is_compiled_by_numba(cache, monkeypatch):
    """The mark (a stored kernel without code) sends the process to numba's own cache."""
    from gradcli.render import compiled_lines, lines_kernel

    _stored(cache).write_bytes(compiled_lines._sealed(compiled_lines._key(), "", b""))
    monkeypatch.setenv("GRADCLI_CACHE_DIR", str(cache))
    build, calls = lines_kernel.build, []

    def recorded(cache: bool):
        calls.append(cache)
        return build(cache)

    monkeypatch.setattr(lines_kernel, "build", recorded)
    assert compiled_lines._loaded() is not None
    assert calls == [True]  # from numba's cache, not afresh


def _object(ir: str) -> bytes:
    import llvmlite.binding as llvm

    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    machine = llvm.Target.from_default_triple().create_target_machine()
    return machine.emit_object(llvm.parse_assembly(ir))


@pytest.mark.skipif(sys.platform != "linux", reason="ELF objects")
def test_an_object_that_calls_outside_itself_is_not_loaded():
    calling = _object(
        "declare void @numba_gil_ensure(ptr)\n"
        "define void @f() {\n  call void @numba_gil_ensure(ptr null)\n  ret void\n}\n"
    )
    assert machine_code.undefined(calling) == {"numba_gil_ensure"}
    assert machine_code.load(calling, "f") is None
    alone = _object("define i64 @g(i64 %x) {\n  %y = add i64 %x, 1\n  ret i64 %y\n}\n")
    assert machine_code.undefined(alone) == set()
    address = machine_code.load(alone, "g")
    import ctypes

    assert address and ctypes.CFUNCTYPE(ctypes.c_int64, ctypes.c_int64)(address)(41) == 42
    assert machine_code.load(alone, "h") is None  # not defined
    assert machine_code.undefined(b"\x7fELF\x02\x01" + bytes(10)) is None  # tables cut off
    assert machine_code.load(b"MZ not an ELF object", "g") is None
