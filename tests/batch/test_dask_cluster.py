"""How ``--dask local:N`` runs its workers (gradcli/batch/dask.py): forked from a fork server
that imported their modules once, numpy's libraries held to one thread each, and a batch cut
into enough tasks for every worker (issue 32: Dask that pays)."""

from __future__ import annotations

import os
import sys

import numpy as np
import pytest

from gradcli.batch import dask as cluster
from gradcli.batch.out import TASKS

distributed = pytest.importorskip("distributed")  # gradcli[dask]

VJP = ["vjp", "-e", "y0=x0**2; y1=x0**2+5*x1**2; y2=3*x1", "--v", "1,1,1"]


@pytest.fixture(scope="module")
def local():
    with cluster.local_cluster(2) as running, distributed.Client(running) as client:
        yield running, client


@pytest.mark.parametrize(
    ("total", "workers", "chunk", "expected"),
    [
        (10**6, 2, 8192, 8 * 8192),  # 16 tasks, 8 a worker
        (10**6, 1, 8192, TASKS * 8192),  # 8 a worker would be more than 16 chunks a task
        (100_000, 2, 8192, 8192),  # at least one chunk a task
        (10, 4, 8192, 8192),
        (10**8, 2, 8192, TASKS * 8192),  # at most TASKS chunks
        (10**6, 2, 5000, 13 * 5000),  # a whole number of chunks: 62,500 rounded up
    ],
)
def test_a_task_holds_whole_chunks_about_eight_a_worker(total, workers, chunk, expected):
    assert cluster.task_rows(total, workers, chunk) == expected


def test_a_batch_is_cut_into_tasks_for_every_worker(cli, local, tmp_path):
    """100,000 points on two workers: 13 tasks of a chunk each (one task before: a worker
    idle), each writing its part of the folder; every point as in one process."""
    running, _ = local
    x = np.random.default_rng(3).standard_normal((100_000, 2))
    np.save(tmp_path / "x.npy", x)
    args = [*VJP, "--batch", f"@{tmp_path}/x.npy", "--out"]
    spread = cli(*args, f"{tmp_path}/r/", "--dask", running.scheduler_address)
    assert spread.exit_code == 0, spread.stderr
    parts = sorted((tmp_path / "r" / "grads.x").iterdir())
    assert [len(np.load(p)) for p in parts] == [8192] * 12 + [100_000 - 12 * 8192]
    grads = np.concatenate([np.load(p) for p in parts])
    np.testing.assert_allclose(grads, np.stack([4 * x[:, 0], 10 * x[:, 1] + 3], 1))


@pytest.mark.skipif(sys.platform != "linux", reason="the fork server is Linux's start method")
def test_local_workers_are_forked_from_one_fork_server(local):
    _, client = local
    parents = set(client.run(os.getppid).values())
    assert len(parents) == 1
    (server,) = parents
    assert server != os.getpid()  # not spawned by this process's nannies: forked by the server
    assert cluster.start_method() == "forkserver"


def test_local_workers_hold_numpy_to_one_thread(local):
    _, client = local
    for variable, value in cluster.WORKER_ENVIRONMENT.items():
        assert set(client.run(os.getenv, variable).values()) == {value}, variable
