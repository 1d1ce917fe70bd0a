"""The parse cache never changes an answer: an edited, damaged, foreign, oversized or
linked entry is parsed afresh, a directory others may write in is ignored, and twenty
processes sharing one cache all get the right answers (issue 16's cases).
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from command_fixtures import run, value_of

from gradcli.lang import cache

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
