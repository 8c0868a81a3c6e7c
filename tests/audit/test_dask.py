"""The Dask backend: same reports as joblib, survival of a killed worker, streaming, missing extra.

Reports are compared exactly (``to_dict(include_runtime=False)``): chunk seeds are keyed by the work
item (audit/sampling.py) and results are folded in task order, so any difference is a bug, not noise.
Sample sizes are the smallest that still make several chunks per phase (2 · 2**20 draws per side).
"""

import os
import re
import signal
import sys
import time

import numpy as np
import pytest

distributed = pytest.importorskip(
    "distributed", reason='the Dask backend needs the optional extra: pip install "dpaudit[dask]"')

import scenarios  # noqa: E402
from audit import MechanismError, run_accuracy_audit, run_audit  # noqa: E402
from audit.dask_backend import INSTALL_HINT, DaskExecutor  # noqa: E402
from mechanisms import GaussianMechanism  # noqa: E402

SEED = 20261122
SAMPLES = 2 * 2 ** 20  # two full chunks per side in the selection and certification phases


def _reproducible(report):
    return report.to_dict(include_runtime=False)


def _gaussian():
    return GaussianMechanism(epsilon=1.0, delta=1e-5)


@pytest.fixture(scope="module")
def client():
    """A 2-worker cluster of single-threaded processes on loopback, shared by the module."""
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                                  dashboard_address=":0") as cluster, distributed.Client(cluster) as c:
        yield c


@pytest.fixture(scope="module")
def loky_report():
    pair = [scenarios.counting(1).pairs[0]]
    return run_audit(_gaussian(), pair, samples=SAMPLES, seed=SEED, progress=False, accuracy=False,
                     n_jobs=2, backend="loky")


# --- identical results ----------------------------------------------------------------------------

def test_same_report_as_loky_on_a_two_worker_cluster(client, loky_report, ones_pair_1d):
    report = run_audit(_gaussian(), ones_pair_1d, samples=SAMPLES, seed=SEED, progress=False,
                       accuracy=False, backend="dask", scheduler=client)
    assert _reproducible(report) == _reproducible(loky_report)
    assert report.runtime["backend"] == "dask"


def test_own_local_cluster_prints_its_dashboard_and_gives_the_same_report(capsys, loky_report, ones_pair_1d):
    report = run_audit(_gaussian(), ones_pair_1d, samples=SAMPLES, seed=SEED, progress=False,
                       accuracy=False, backend="dask", n_jobs=2)
    assert _reproducible(report) == _reproducible(loky_report)
    err = capsys.readouterr().err
    assert re.search(r"LocalCluster with 2 worker processes; dashboard: http://127\.0\.0\.1:\d+/status", err)


def test_accuracy_audit_is_identical(client):
    mech = _gaussian()
    data = scenarios.counting(1).pairs[0].base
    loky = run_accuracy_audit(mech, data, samples=SAMPLES, seed=SEED, progress=False, n_jobs=2)
    dask = run_accuracy_audit(mech, data, samples=SAMPLES, seed=SEED, progress=False, backend="dask",
                              scheduler=client)
    assert dask.to_dict(include_runtime=False) == loky.to_dict(include_runtime=False)


# --- the executor itself --------------------------------------------------------------------------

def _slow_identity(shared, i, n):
    """Later tasks finish first, so results arrive out of order."""
    time.sleep(0.02 * (n - i) / n)
    return shared["tag"], i


def test_results_come_back_in_task_order_with_a_bounded_window(client):
    n, window = 24, 4
    shared = {"tag": np.arange(3)}
    executor = DaskExecutor(scheduler=client, window=window)
    submitted, results = set(), []
    with executor:
        for yielded, result in enumerate(executor.map(_slow_identity, [(shared, i, n) for i in range(n)])):
            results.append(result)
            # submission is synchronous, so every task submitted so far is in client.futures
            submitted |= {key for key in client.futures if str(key).startswith("_slow_identity-")}
            assert len(submitted) <= yielded + 1 + window  # never more than `window` outstanding
    assert [i for _, i in results] == list(range(n))
    assert all(np.array_equal(tag, shared["tag"]) for tag, _ in results)
    assert executor.client is None and client.status == "running"  # a caller's client stays open


def test_started_cluster_is_closed_afterwards():
    with DaskExecutor(n_jobs=1) as executor:
        cluster = executor.cluster
        assert list(executor.map(_slow_identity, [({"tag": 0}, i, 2) for i in range(2)])) == [(0, 0), (0, 1)]
        assert executor.batch_size == 8
    assert cluster.status.name == "closed" and executor.cluster is None


# --- a worker lost mid-run ------------------------------------------------------------------------

_CALLS = [0]  # mechanism calls made in this process


class _KillsItsWorker:
    """The Gaussian mechanism, except that the Dask worker process making its `after`-th call kills
    itself with SIGKILL first, once per marker file (created atomically, so only one worker dies)."""

    def __init__(self, marker, after):
        self.inner, self.marker, self.after = _gaussian(), str(marker), after

    def __getattr__(self, attr):  # name, claim, exact truth: those of the Gaussian mechanism
        if attr == "inner":
            raise AttributeError(attr)
        return getattr(self.inner, attr)

    def __call__(self, dataset, size, rng):
        try:
            distributed.get_worker()
        except ValueError:  # not in a worker (the engine's probe in the main process)
            return self.inner(dataset, size, rng)
        _CALLS[0] += 1
        if _CALLS[0] >= self.after:
            try:
                fd = os.open(self.marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
            except FileExistsError:
                pass
            else:
                os.write(fd, str(os.getpid()).encode())
                os.close(fd)
                os.kill(os.getpid(), signal.SIGKILL)
        return self.inner(dataset, size, rng)


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs SIGKILL (POSIX)")
def test_killed_worker_does_not_change_the_report(client, loky_report, ones_pair_1d, tmp_path):
    marker = tmp_path / "killed"
    mech = _KillsItsWorker(marker, after=3)
    report = run_audit(mech, ones_pair_1d, samples=SAMPLES, seed=SEED, progress=False, accuracy=False,
                       backend="dask", scheduler=client)
    assert marker.exists(), "no worker was killed: the test did not exercise recovery"
    with pytest.raises(ProcessLookupError):
        os.kill(int(marker.read_text()), 0)  # the worker process is really gone
    assert _reproducible(report) == _reproducible(loky_report)
    client.wait_for_workers(2, timeout=120)  # the nanny restarts it for the tests that follow


# --- errors ---------------------------------------------------------------------------------------

class _FailsInWorkers:
    """Valid in the main process (the probe), raises on the cluster: errors must surface unchanged."""

    name, claim = "fails-in-workers", _gaussian().claim

    def __call__(self, dataset, size, rng):
        try:
            distributed.get_worker()
        except ValueError:
            return _gaussian()(dataset, size, rng)
        raise RuntimeError("boom")


def test_mechanism_errors_on_workers_surface_with_context(client, ones_pair_1d):
    with pytest.raises(MechanismError, match=r"fails-in-workers.*boom.*pair"):
        run_audit(_FailsInWorkers(), ones_pair_1d, samples=100_000, seed=SEED, progress=False,
                  accuracy=False, backend="dask", scheduler=client)


def test_missing_extra_says_how_to_install(monkeypatch, ones_pair_1d):
    monkeypatch.setitem(sys.modules, "distributed", None)  # makes `import distributed` fail
    with pytest.raises(ImportError, match=re.escape(INSTALL_HINT)):
        run_audit(_gaussian(), ones_pair_1d, samples=100_000, seed=SEED, progress=False, backend="dask")
    with pytest.raises(ImportError, match=re.escape('pip install "dpaudit[dask]"')):
        DaskExecutor(n_jobs=1)


@pytest.mark.parametrize(("kwargs", "error", "match"), [
    ({"scheduler": 8786}, TypeError, r"`scheduler` must be None, a scheduler address .* got 8786"),
    ({"scheduler": " "}, ValueError, r"`scheduler` must be a non-empty scheduler address, got ' '"),
    ({"window": 0}, ValueError, r"`window` must be a positive integer, got 0"),
    ({"window": 2.5}, TypeError, r"`window` must be a positive integer, got 2.5"),
    ({"n_jobs": 0}, ValueError, r"`n_jobs` must be a positive integer or -1, got 0"),
    ({"share_arguments": "yes"}, TypeError, r"`share_arguments` must be True or False, got 'yes'"),
])
def test_invalid_options(kwargs, error, match):
    with pytest.raises(error, match=match):
        DaskExecutor(**kwargs)
