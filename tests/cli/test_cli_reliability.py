"""Issue 16's reliability cases: a parse cache that never changes an answer, output failures
said plainly (exit 74), ``--out`` written atomically and never over an input, ``--strict`` on
what the inputs bring, names sympy has a meaning for, and errors that cut long lists.

Each case was a reproduction on main: a wrong number, a hang, a traceback-like "internal
error", an overwritten input or a 149 KB message.
"""

from __future__ import annotations

import json
import os
import resource
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from gradcli.batch import out as batch_out
from gradcli.lang import cache

REPO = Path(__file__).resolve().parents[2]
GRADCLI = [sys.executable, "-m", "gradcli"]


def run(
    args: list[str],
    env: dict[str, str] | None = None,
    timeout: float = 120,
    stdout=None,
    memory: int | None = None,
):
    """``gradcli ARGS`` as a process (text out, the repository as working directory), under
    an address-space limit of ``memory`` bytes if given (a regression then fails at once
    instead of swapping)."""

    def limit() -> None:
        if memory is not None:
            resource.setrlimit(resource.RLIMIT_AS, (memory, memory))

    return subprocess.run(
        GRADCLI + args,
        stdout=subprocess.PIPE if stdout is None else stdout,
        stderr=subprocess.PIPE,
        text=True,
        cwd=REPO,
        env={**os.environ, "PYTHONIOENCODING": "utf-8", **(env or {})},
        timeout=timeout,
        preexec_fn=limit,
    )


def value_of(result, name: str = "y"):
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)["values"][name]


# -- the parse cache ------------------------------------------------------------------------------

SOURCE = "y = x*2 + 1"


@pytest.fixture
def private_cache(tmp_path, monkeypatch) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv("GRADCLI_CACHE_DIR", str(folder))
    return folder


def entry_of(source: str = SOURCE) -> Path:
    path = cache.entry_path(source)
    assert path is not None and path.is_file(), "the program was cached"
    return path


def test_an_edited_entry_is_parsed_afresh_not_trusted(cli, private_cache):
    """On main, 2 changed to 200 in the entry printed 601."""
    assert (
        json.loads(cli("eval", "-e", SOURCE, "--x", "3", "--format", "json").stdout)["values"]["y"]
        == 7
    )
    path = entry_of()
    text = path.read_text()
    assert '["const", 2]' in text  # a whole number stays one (integer tensors keep it)
    path.write_text(text.replace('["const", 2]', '["const", 200]'))
    again = cli("eval", "-e", SOURCE, "--x", "3", "--format", "json")
    assert json.loads(again.stdout)["values"]["y"] == 7
    assert '["const", 200.0]' not in path.read_text(), "the bad entry was rewritten"


@pytest.mark.parametrize(
    "damage",
    [
        lambda text: text[: len(text) // 2],  # cut short
        lambda text: text.replace('"checksum": "', '"checksum": "0'),
        lambda text: json.dumps(json.loads(text)["content"]),  # the old format, no checksum
        lambda text: "",
        lambda text: "\x00" * 100,
    ],
    ids=["cut", "checksum", "unsealed", "empty", "binary"],
)
def test_a_damaged_entry_is_parsed_afresh(cli, private_cache, damage):
    cli("eval", "-e", SOURCE, "--x", "3")
    path = entry_of()
    path.write_text(damage(path.read_text()))
    result = cli("eval", "-e", SOURCE, "--x", "3", "--format", "json")
    assert result.exit_code == 0 and json.loads(result.stdout)["values"]["y"] == 7


def test_an_entry_of_another_version_or_table_is_not_read(private_cache, monkeypatch):
    """The checksum covers the key text: the same content under another version fails."""
    from gradcli.lang import load_program

    load_program(SOURCE)
    path = entry_of()
    sealed = json.loads(path.read_text())
    monkeypatch.setattr(cache, "__version__", "0.0.0-other")
    assert cache.entry_path(SOURCE) != path
    cache.entry_path(SOURCE).write_text(json.dumps(sealed))  # type: ignore[union-attr]
    assert cache.read_entry(SOURCE) is None


def test_a_fifo_entry_does_not_hang(private_cache):
    """On main a FIFO in the entry's place hung forever."""
    env = {"GRADCLI_CACHE_DIR": str(private_cache)}
    assert value_of(run(["eval", "-e", SOURCE, "--x", "3", "--format", "json"], env)) == 7
    path = entry_of()
    path.unlink()
    os.mkfifo(path)
    result = run(["eval", "-e", SOURCE, "--x", "3", "--format", "json"], env, timeout=60)
    assert value_of(result) == 7


def test_an_entry_linked_to_dev_zero_is_not_read(private_cache):
    """On main an entry linked to /dev/zero read 3.3 GB before failing."""
    env = {"GRADCLI_CACHE_DIR": str(private_cache)}
    private_cache.mkdir(mode=0o700)
    path = private_cache / cache.entry_path(SOURCE).name  # type: ignore[union-attr]
    path.symlink_to("/dev/zero")
    args = ["eval", "-e", SOURCE, "--x", "3", "--format", "json"]
    result = run(args, env, timeout=60, memory=1 << 30)
    assert value_of(result) == 7  # under a 1 GB address space: reading /dev/zero would fail


def test_a_symlinked_entry_to_a_good_entry_is_not_followed(private_cache):
    """Even a link to a valid entry is not read: entries are never read through links."""
    from gradcli.base.files import read_regular

    cache.write_entry(SOURCE, "program", {"anything": 1})
    path = entry_of()
    real = path.with_name("elsewhere.json")
    path.rename(real)
    path.symlink_to(real)
    assert read_regular(real, 1 << 20) is not None
    assert read_regular(path, 1 << 20) is None
    assert cache.read_entry(SOURCE) is None


def test_an_oversized_entry_is_not_read(private_cache, monkeypatch):
    cache.write_entry(SOURCE, "program", {"padding": "x" * 5000})
    assert cache.read_entry(SOURCE) is not None
    monkeypatch.setattr(cache, "ENTRY_BYTES_AT_LEAST", 1000)
    monkeypatch.setattr(cache, "ENTRY_BYTES_PER_SOURCE_BYTE", 1)
    assert cache.read_entry(SOURCE) is None


def test_the_cache_directory_is_created_private(tmp_path, monkeypatch):
    folder = tmp_path / "deep" / "cache"
    monkeypatch.setenv("GRADCLI_CACHE_DIR", str(folder))
    old = os.umask(0)  # even under a permissive umask
    try:
        cache.write_entry(SOURCE, "program", {"a": 1})
    finally:
        os.umask(old)
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    (entry,) = folder.iterdir()
    assert stat.S_IMODE(entry.stat().st_mode) == 0o600


def _planted(folder: Path, source: str, content: object) -> None:
    """A valid entry (its checksum holds) of ``content``, planted by someone else."""
    path = folder / cache.entry_path(source).name  # type: ignore[union-attr]
    path.write_text(json.dumps(cache.seal(source, "program", content)))


@pytest.mark.parametrize("mode", [0o777, 0o770, 0o702])
def test_a_cache_directory_others_may_write_in_is_ignored(cli, private_cache, mode):
    """Another user who may write in the directory could plant an entry whose checksum
    holds: such a directory is not used at all (no reading, no writing)."""
    from gradcli.lang import parse_program

    private_cache.mkdir(mode=0o700)
    wrong = parse_program(SOURCE.replace("2", "200")).to_json()
    wrong["source"] = SOURCE
    wrong["assignments"][0]["statement"][2] = SOURCE
    _planted(private_cache, SOURCE, wrong)
    trusted = cli("eval", "-e", SOURCE, "--x", "3", "--format", "json")
    assert json.loads(trusted.stdout)["values"]["y"] == 601, "a private cache is read"
    private_cache.chmod(mode)
    shown = cli("eval", "-e", SOURCE, "--x", "3", "--format", "json")
    assert json.loads(shown.stdout)["values"]["y"] == 7
    cli("eval", "-e", "y = x*5", "--x", "3")
    assert len(list(private_cache.iterdir())) == 1, "nothing is written there either"


def test_a_cache_directory_of_another_user_is_ignored(private_cache, monkeypatch):
    cache.write_entry(SOURCE, "program", {"a": 1})
    assert cache.read_entry(SOURCE) == {"a": 1}
    monkeypatch.setattr(os, "geteuid", lambda: private_cache.stat().st_uid + 1)
    assert cache.usable_dir(create=True) is None
    assert cache.read_entry(SOURCE) is None


def test_a_relative_xdg_cache_home_is_ignored(tmp_path, monkeypatch):
    monkeypatch.delenv("GRADCLI_CACHE_DIR")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/cache")
    assert cache.cache_dir() == tmp_path / "home" / ".cache" / "gradcli"
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache.cache_dir() == tmp_path / "xdg" / "gradcli"


@pytest.mark.parametrize("home", ["", "relative"])
def test_an_empty_or_relative_home_means_no_cache(cli, monkeypatch, home):
    """On main HOME="" put the cache at /.cache/gradcli."""
    monkeypatch.delenv("GRADCLI_CACHE_DIR")
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.setenv("HOME", home)
    assert cache.cache_dir() is None
    result = cli("eval", "-e", SOURCE, "--x", "3", "--format", "json")
    assert result.exit_code == 0 and json.loads(result.stdout)["values"]["y"] == 7


def test_orphan_temporary_files_are_removed(private_cache):
    private_cache.mkdir(mode=0o700)
    old, young = private_cache / "tmpold.tmp", private_cache / "tmpyoung.tmp"
    old.write_text("{")
    young.write_text("{")
    an_hour_ago = time.time() - 3600
    os.utime(old, (an_hour_ago, an_hour_ago))
    cache.write_entry(SOURCE, "program", {"a": 1})
    assert not old.exists(), "a run killed while writing left it: removed"
    assert young.exists(), "perhaps another run's entry under way: kept"


CONCURRENT = """
import json, sys
from gradcli.lang import load_program
import gradcli as gc
results = {}
for k in range(2):
    source = f"y = x * {k} + sin(x) * {k + 1}"
    program = load_program(source)
    results[source] = float(program.run({"x": gc.tensor(0.5)})["y"].data)
print(json.dumps(results))
"""


def test_twenty_processes_sharing_one_cache_all_get_the_right_answers(private_cache):
    env = {**os.environ, "GRADCLI_CACHE_DIR": str(private_cache)}
    processes = [
        subprocess.Popen(
            [sys.executable, "-c", CONCURRENT], stdout=subprocess.PIPE, text=True, env=env
        )
        for _ in range(20)
    ]
    for process in processes:
        out, _ = process.communicate(timeout=300)
        assert process.returncode == 0
        for source, value in json.loads(out).items():
            k = int(source.split("* ")[1].split(" ")[0])
            assert value == pytest.approx(0.5 * k + np.sin(0.5) * (k + 1), rel=1e-12)
    names = sorted(p.name for p in private_cache.iterdir())
    assert len(names) == 2 and all(n.endswith(".json") for n in names), names
    for k in range(2):
        assert cache.read_entry(f"y = x * {k} + sin(x) * {k + 1}") is not None


# -- output failures ------------------------------------------------------------------------------

ARGS = ["eval", "-e", "y = x*2", "--x", "3"]


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full")
@pytest.mark.parametrize(
    "args, name",
    [
        (["export", "--to", "torch", "-e", "y = x*2", "--x", "1,2"], "e.py"),
        (["jacobian", "-e", "y = x*2", "--x", "1,2"], "J.npy"),
    ],
    ids=["export", "jacobian"],
)
def test_an_out_file_on_a_full_device_is_a_plain_error(tmp_path, args, name):
    """--out through a link to /dev/full: written in place (nothing can be renamed onto a
    device), and its failure is the user's error, exit 2 (it was an internal error, 70)."""
    (tmp_path / name).symlink_to("/dev/full")
    result = run([*args, "--out", str(tmp_path / name)])
    assert result.returncode == 2, result.stderr
    assert "cannot write: No space left on device" in result.stderr
    assert "internal" not in result.stderr


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full")
@pytest.mark.parametrize("fmt", ["table", "json"])
def test_a_full_disk_is_one_plain_line_and_exit_74(fmt):
    """On main: internal error: OSError ..., exit 70."""
    with open("/dev/full", "w") as full:
        result = run([*ARGS, "--format", fmt], stdout=full)
    assert result.returncode == 74
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert "No space left on device" in lines[0] and "internal" not in lines[0]


def test_a_closed_stdout_is_one_plain_line_and_exit_74():
    """On main: internal error: AttributeError: 'NoneType' object has no attribute ..."""
    result = subprocess.run(
        GRADCLI + ARGS,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        cwd=REPO,
        # close fd 1 in the child before Python starts
        preexec_fn=lambda: os.close(1),
        timeout=120,
    )
    assert result.returncode == 74
    assert result.stderr == "error: cannot write the output: stdout is closed\n"


@pytest.mark.parametrize("fmt", ["table", "csv", "json"])
def test_an_encoding_that_cannot_show_a_name_is_one_plain_line_and_exit_74(fmt):
    result = run(
        ["eval", "-e", "y = xé*2", "-i", "xé=3,4", "--format", fmt],
        env={"PYTHONIOENCODING": "ascii"},
    )
    if fmt == "json":  # JSON escapes what is not ASCII: nothing to refuse
        assert result.returncode == 0 and json.loads(result.stdout)["values"]["y"] == [6, 8]
        return
    assert result.returncode == 74, result.stderr
    (line,) = result.stderr.splitlines()
    assert line.startswith("error: cannot write the output: stdout's encoding (ascii)")
    assert "U+00E9" in line and "PYTHONIOENCODING=utf-8" in line


def test_an_ascii_locale_still_shows_ascii_output():
    result = run([*ARGS, "--format", "table"], env={"PYTHONIOENCODING": "ascii", "LANG": "C"})
    assert result.returncode == 0 and "| y |     6 |" in result.stdout


# -- --out ------------------------------------------------------------------------------------


@pytest.fixture
def points(tmp_path) -> Path:
    path = tmp_path / "points.npy"
    np.save(path, np.arange(6.0).reshape(3, 2))
    return path


GRAD = ["grad", "-e", "y = sum(x*x)"]


@pytest.mark.parametrize("how", ["same", "symlink", "other path", "hard link", "an -i file"])
def test_out_naming_an_input_file_is_refused(cli, points, how):
    """On main --batch points.npy --out points.npy overwrote the points silently."""
    before = points.read_bytes()
    batch, out, extra = f"@{points}", str(points), []
    if how == "symlink":
        link = points.with_name("link.npy")
        link.symlink_to(points)
        out = str(link)
    elif how == "other path":
        (points.parent / "sub").mkdir()
        out = str(points.parent / "sub" / ".." / points.name)
    elif how == "hard link":
        linked = points.with_name("hard.npy")
        os.link(points, linked)
        out = str(linked)
    elif how == "an -i file":
        other = points.with_name("other.npy")
        np.save(other, np.ones((3, 2)))
        batch, extra = (
            f"@{other}",
            ["-e", "y = sum(x*x*W)", "-i", f"W=@{points.with_name('w.npy')}"],
        )
        np.save(points.with_name("w.npy"), np.ones(2))
        out = str(points.with_name("w.npy"))
        before = Path(out).read_bytes()
    command = GRAD if how != "an -i file" else ["grad"]
    result = cli(*command, *extra, "--batch", batch, "--out", out)
    assert result.exit_code == 2, result.output
    assert "is one of the command's input files" in result.stderr
    assert "hint: give --out another file name" in result.stderr
    assert Path(out).read_bytes() == before


def test_out_is_written_whole_or_not_at_all(cli, points, monkeypatch):
    """A write that fails leaves the previous file as it was, and no temporary file."""
    out = points.with_name("grads.npy")
    out.write_bytes(b"previous")

    def full_disk(*args, **options):  # the writer's first bytes: the disk is full
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(batch_out, "npy_header", full_disk)
    result = cli(*GRAD, "--batch", f"@{points}", "--out", str(out))
    assert result.exit_code == 2
    assert "--out" in result.stderr and "No space left on device" in result.stderr
    assert out.read_bytes() == b"previous"
    assert sorted(p.name for p in points.parent.iterdir()) == ["grads.npy", "points.npy"]


def test_out_is_written_and_keeps_a_new_files_mode(cli, points):
    out = points.with_name("grads.npz")
    result = cli(*GRAD, "--batch", f"@{points}", "--out", str(out))
    assert result.exit_code == 0, result.stderr
    with np.load(out) as saved:
        np.testing.assert_allclose(saved["grads.x"], 2 * np.arange(6.0).reshape(3, 2))
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE(out.stat().st_mode) == 0o666 & ~umask
    assert sorted(p.name for p in points.parent.iterdir()) == ["grads.npz", "points.npy"]


SLOW_WRITE = """
import sys, time
from gradcli.base.files import atomic_output
with atomic_output(sys.argv[1]) as temporary:
    with open(temporary, "wb") as f:
        f.write(b"new, part 1;")
        f.flush()
        print("writing", flush=True)
        time.sleep(60)
        f.write(b"new, part 2")
"""


def test_sigkill_during_an_atomic_write_leaves_the_previous_file(tmp_path):
    out = tmp_path / "results.npy"
    out.write_bytes(b"previous")
    process = subprocess.Popen(
        [sys.executable, "-c", SLOW_WRITE, str(out)], stdout=subprocess.PIPE, text=True
    )
    assert process.stdout.readline() == "writing\n"
    process.send_signal(signal.SIGKILL)
    process.wait(timeout=60)
    assert out.read_bytes() == b"previous"
    leftovers = [p.name for p in tmp_path.iterdir() if p != out]
    assert all(n.startswith(".gradcli-") and ".tmp" in n for n in leftovers), leftovers


# gradcli in a child whose --out writer writes its first chunk (a .npy whose header already
# holds every point's shape), says so on stderr, then stalls: a SIGKILL then lands
# inside the write of --out, every time
STALLING_GRADCLI = """
import sys, time
from gradcli.batch import out as batch
real = batch.OutFile.write
def stalling(self, chunk):
    real(self, chunk)
    for part in self.parts.values():
        part.file.flush()
    print("writing", file=sys.stderr, flush=True)
    time.sleep(120)
batch.OutFile.write = stalling
from gradcli.cli.app import main
sys.argv[0] = "gradcli"
main()
"""


@pytest.mark.parametrize("previous", [True, False], ids=["previous file", "no file"])
def test_sigkill_during_a_batch_out_write_never_leaves_a_partial_file(tmp_path, previous):
    """On main --out was written in place: a kill inside the write left a file of half the
    points that loads as if whole."""
    points = tmp_path / "points.npy"
    np.save(points, np.linspace(0, 1, 400).reshape(200, 2))
    out = tmp_path / "out.npy"
    if previous:
        out.write_bytes(b"previous")
    process = subprocess.Popen(
        [sys.executable, "-c", STALLING_GRADCLI, *GRAD, "--batch", f"@{points}", "--out", str(out)],
        cwd=REPO,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stderr.readline() == "writing\n"
    process.send_signal(signal.SIGKILL)
    process.wait(timeout=60)
    if previous:
        assert out.read_bytes() == b"previous"
    else:
        assert not out.exists()
    leftovers = [p.name for p in tmp_path.iterdir() if p not in (out, points)]
    assert all(n.startswith(".gradcli-") for n in leftovers), leftovers


# -- correct or loud ------------------------------------------------------------------------------


def test_strict_sees_a_nan_given_as_an_input(cli):
    """On main: exit 0."""
    result = cli("grad", "-e", "y = sum(x*x)", "--x", "nan,1", "--strict", "--format", "json")
    assert result.exit_code == 1
    assert result.stderr.strip() == (
        "error: a NaN or an infinity came in with the inputs (--strict): the input x holds "
        "1 NaN (the first at x[0])"
    )
    assert json.loads(result.stdout)["grads"]["x"] == [None, 2.0], "printed first"
    assert cli("grad", "-e", "y = sum(x*x)", "--x", "nan,1").exit_code == 0


def test_strict_names_every_input_that_holds_nan_or_inf(cli):
    result = cli("eval", "-e", "y = x*W", "--x", "[[1,inf],[nan,2]]", "-i", "W=-inf", "--strict")
    assert result.exit_code == 1
    assert "the input x holds 1 NaN and 1 inf (the first at x[0, 1])" in result.stderr
    assert "the input W holds 1 inf" in result.stderr


def test_a_float32_input_that_overflows_is_a_warning_or_under_strict_an_error(cli):
    """On main 3.4e39 silently became inf, even under --strict."""
    args = ("eval", "-e", "y = x*2", "--x", "3.4e39,1,-1e40", "--dtype", "float32")
    warned = cli(*args, "--format", "json")
    assert warned.exit_code == 0
    (warning,) = json.loads(warned.stdout)["warnings"]
    assert warning.startswith("the input x: 2 finite values beyond float32's range")
    strict = cli(*args, "--strict")
    assert strict.exit_code == 2 and strict.stdout == ""
    assert "beyond float32's range" in strict.stderr and "(--strict)" in strict.stderr
    assert cli("eval", "-e", "y = x*2", "--x", "3.4e39", "--strict").exit_code == 0  # float64


OVERFLOW = "beyond float64's range (±1.798e+308): read as inf"


def test_a_number_written_beyond_float_range_is_a_warning_at_its_statement(cli):
    """On main ``y = x * 1e400`` gave inf with no warning at all: the infinity appears where
    the number is read, and the warning says so there (once, however often the program
    runs); --strict exits 1 on it."""
    document = json.loads(
        cli("grad", "-e", "y = sum(x * 1e400)", "--x", "2", "--format", "json").stdout
    )
    assert document["warnings"] == [
        f"statement 1 (line 1) `y = sum(x * 1e400)`: 1e400 is {OVERFLOW}"
    ]
    whole = "1" + "0" * 400
    written = cli("eval", "-e", f"y = x * -1e999 + {whole}", "--x", "2", "--format", "json")
    (warning, *_) = json.loads(written.stdout)["warnings"]
    assert warning.endswith(f"`: 1e999, a number of 401 digits are {OVERFLOW}")
    strict = cli("eval", "-e", "y = x * 1e400", "--x", "2", "--strict")
    assert strict.exit_code == 1
    assert strict.stderr.splitlines()[-1] == (
        "error: a NaN or an infinity appeared (--strict); see the warnings"
    )


def test_a_constant_made_in_a_statement_is_named_by_the_statement(cli):
    """On main --strict blamed ``the input _c1_1_4``, a name the user never wrote."""
    program = "y = full(2, 2, 1e400) * x"
    strict = cli("eval", "-e", program, "--x", "2", "--strict")
    assert strict.exit_code == 1
    assert f"warning: statement 1 (line 1) `{program}`: 1e400 is {OVERFLOW}" in strict.stderr
    assert "_c1" not in strict.stderr and "came in with the inputs" not in strict.stderr
    narrow = cli("eval", "-e", "y = full(2, 2, 1e39) * x", "--x", "2", "--dtype", "float32")
    assert narrow.exit_code == 0 and "_c1" not in narrow.stderr
    assert narrow.stderr.startswith(
        "warning: statement 1 (line 1) `y = full(2, 2, 1e39) * x`: full(2, 2, 1e39): 4 finite "
        "values beyond float32's range"
    )
    declared = "x = full(2, 1e400); y = x * 2"
    default = cli("eval", "-e", declared, "--format", "json")
    assert json.loads(default.stdout)["warnings"] == [
        f"statement 1 (line 1) `x = full(2, 1e400)`: 1e400 is {OVERFLOW}"
    ]
    given = cli("eval", "-e", declared, "--x", "2", "--format", "json")  # the default unused
    assert json.loads(given.stdout)["warnings"] == []


SYMPY_NAMES = [
    "αSymbol",
    "Symbol",
    "Integer",
    "Float",
    "Function",
    "Lambda",
    "Rational",
    "S",
    "N",
    "I",
    "E",
    "oo",
    "zoo",
    "nan",
    "Add",
    "Mul",
    "Pow",
    "Matrix",
    "Abs",
    "Sum",
    "αInteger",
    "xFloat",
    "Float2",
]


@pytest.mark.parametrize("name", SYMPY_NAMES)
def test_names_sympy_has_a_meaning_for_are_plain_names(cli_json, name):
    """On main ``y = αSymbol * 3`` exited with "'Symbol' object is not callable"."""
    document = cli_json("grad", "-e", f"y = {name} * 3 + sin({name})", "-i", f"{name}=2")
    assert document["values"]["y"] == pytest.approx(6 + np.sin(2))
    assert document["grads"][name] == pytest.approx(3 + np.cos(2))


@pytest.mark.parametrize("name", ["Symbol", "Integer", "Float", "αSymbol", "S", "E"])
def test_sympy_names_as_statement_names_and_through_check(cli, name):
    program = f"{name} = x * 2 + 1.5e3; N = {name} * {name}"
    result = cli("check", "-e", program, "--x", "3")
    assert result.exit_code == 0, result.output
    assert "all methods agree" in result.stdout


def test_an_error_about_an_archive_of_20000_arrays_cuts_the_list(cli, tmp_path):
    """On main the error was 149 KB long."""
    archive = tmp_path / "many.npz"
    np.savez(archive, **{f"a{i}": np.zeros(1) for i in range(20_000)})
    for spec in (f"@{archive}", f"@{archive}:missing"):
        result = cli("eval", "-e", "y = x*2", "--x", spec)
        assert result.exit_code == 2
        assert len(result.stderr) < 600, result.stderr
        assert "a0, a1, a2" in result.stderr and "... and 19,990 more" in result.stderr


def test_listing_cuts_long_lists_and_long_names():
    from gradcli.base.errors import listing

    assert listing(["a", "b"]) == "a, b"
    assert listing([], empty="none") == "none"
    assert listing(range(25)) == "0, 1, 2, 3, 4, 5, 6, 7, 8, 9, ... and 15 more"
    assert listing(["x" * 100]) == "x" * 59 + "…"


def test_out_through_a_symlink_replaces_its_target_and_keeps_the_link(cli, points):
    target = points.with_name("real.npy")
    target.write_bytes(b"previous")
    link = points.with_name("link.npy")
    link.symlink_to(target.name)
    result = cli(*GRAD, "--batch", f"@{points}", "--out", str(link))
    assert result.exit_code == 0, result.stderr
    assert link.is_symlink()
    np.testing.assert_allclose(np.load(target), 2 * np.arange(6.0).reshape(3, 2))


def test_atomic_output_writes_a_fifo_in_place(tmp_path):
    import threading

    from gradcli.base.files import atomic_output

    fifo = tmp_path / "pipe.npy"
    os.mkfifo(fifo)
    received: list[bytes] = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_bytes()))
    reader.start()
    with atomic_output(str(fifo)) as path:
        assert path == str(fifo)
        with open(path, "wb") as f:
            f.write(b"through the pipe")
    reader.join(timeout=30)
    assert received == [b"through the pipe"]
    assert stat.S_ISFIFO(fifo.lstat().st_mode)
