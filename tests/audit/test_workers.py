"""Same seed, same report, whatever the number of workers or the backend.

An audit of ``dpaudit run --jobs 2`` runs whole in a loky worker, where joblib limits BLAS to
``cpu_count // n_jobs`` threads, while ``--jobs 1`` runs it in the main process with every core.
OpenBLAS sums a product in another order for another thread count, so anything an audit computes
through BLAS outside its chunks — a statistic fitted on training draws, a mechanism's exact values
from dp-accounting — used to differ in its last bits between the two (RAPPOR's held-out
separation 0.047035 against 0.047075 at 200,000 samples; the DP-SGD suite's exact δ at 1e-16
relative).  The engine now pins BLAS to one thread for the whole audit (audit/sampling.py,
``single_threaded_blas``).  Each test audits once in this process, with BLAS at two threads as on
any multi-core machine, and once in a loky worker, and compares the reports, runtime aside.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from joblib import Parallel, delayed
from threadpoolctl import threadpool_limits

from audit import load_spec, run_audit
from mechanisms.dpsgd import DPSGD

SUITE = Path(__file__).resolve().parents[2] / "scenarios" / "suite"


class ProfileOnlyDPSGD(DPSGD):
    """The DP-SGD trainer with its exact δ(ε) (dp-accounting, through BLAS) but without its exact
    ε(δ) curve, whose 40 accountant calls take 20 s; the report's exact δ is what is compared."""

    def epsilon_for_delta(self, delta, relation=None):
        raise NotImplementedError


def _report(path: str, samples: int, profile_only: bool) -> dict:
    spec = load_spec(path)
    mechanism = spec.mechanism
    if profile_only:
        mechanism = ProfileOnlyDPSGD(**{name: getattr(mechanism, name) for name in mechanism.__dataclass_fields__
                                        if mechanism.__dataclass_fields__[name].init})
    report = run_audit(mechanism, spec.scenario, claim=spec.claim,
                       settings=spec.settings.replace(samples=samples, progress=False, n_jobs=1))
    return json.loads(report.to_json())


@pytest.mark.parametrize("path, samples, profile_only, field", [
    # the "auto" statistic fitted on training draws (Fisher's projection of the bit vector)
    ("literature/rappor.toml", 200_000, False, "statistic"),
    # the exact δ(ε) from dp-accounting
    ("dpsgd/dpsgd-correct.toml", 2_000, True, "exact_delta"),
])
def test_the_report_is_the_same_in_the_main_process_and_in_a_loky_worker(path, samples, profile_only, field):
    path = str(SUITE / path)
    with threadpool_limits(limits=2, user_api="blas"):  # the main process of a multi-core machine
        here = _report(path, samples, profile_only)
    there, = Parallel(n_jobs=2, backend="loky")(delayed(_report)(path, samples, profile_only) for _ in range(1))
    here.pop("runtime"), there.pop("runtime")
    assert here[field] == there[field]
    assert here == there
