"""Gray-box record/replay against the project's faults, its suite, three libraries' known bugs, and its cost.

Sections (each a table in ``benchmarks/results/graybox.md``, rows in ``graybox.json``):

- **zoo**: every faulty mechanism (``FAULTY_MECHANISMS``), numpy DP-SGD trainer (``FAULTY_TRAINERS``)
  and PyTorch trainer (``TORCH_FAULTS``, plus the noise-before-clipping trainer of
  :mod:`benchmarks.graybox_trainers`), with whether its cause is one of the kinds a replay checks,
  the first finding (call site, measured against allowed), the executions of the mechanism per pair
  it took, and the certified audit aimed at it.  Certification escalates its draws (at most three
  audits, each at confidence 1 − 0.05/3: Bonferroni, so the row's certificate holds at 0.95);
- **suite**: every bundled scenario file (default, literature, dpsgd, thirdparty, torch) with its
  expected verdict and the findings on its pairs: none may appear on a file that holds;
- **libraries**: diffprivlib's LinearRegression (IBM/differential-privacy-library#105),
  LogisticRegression and GaussianNB with a label set from the data, and Opacus's mean-reduction
  divisor (meta-pytorch/opacus#819), each with its control rows, timed;
- **cost**: one pair's check (the whole ``check_pairs`` call) against one plain execution of the
  mechanism at one row, at the check's rows and at the audit's chunk (medians of 5 checks and 9
  executions, 3 at the chunk, the machine being shared);
- **sweep**: every catalogued case of diffprivlib, OpenDP and Opacus replayed on its pairs, both
  orders (what ``dpaudit sweep --graybox`` replays before its audits);
- **overhead**: time per intercepted call, recorded and replayed, against the plain call.

Usage::

    python -m benchmarks.graybox            # everything (~5 min on 2 cores)
    python -m benchmarks.graybox --quick    # no torch rows, fewer certification draws
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import warnings
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np

import scenarios
from audit.graybox import ReplayError, check_pairs
from audit.graybox.certified import certify
from audit.graybox.audit import pair_of
from audit.sampling import chunk_size_for
from scenarios.faulty_cases import FAULTY_MECHANISMS, FAULTY_TRAINERS
from scenarios.files import read as read_scenario

RESULTS = Path(__file__).resolve().parent / "results"
#: Draws per side of the escalating certified audits of a finding, each at 1 − 0.05/3.
ESCALATION = (20_000, 200_000, 2_000_000)
TRAINER_SAMPLES = (300,)
#: The cause of each zoo fault, and whether it is a kind a replay checks (the rest are wrong
#: constants or accounting, invisible to a comparison of D with D′ under identical randomness).
IN_SCOPE = {
    "gaussian-sensitivity": (True, "sensitivity: σ calibrated for l2 sensitivity 1, moved by √d"),
    "gaussian-classical-large-eps": (True, "sensitivity: σ too small for the claimed (ε, δ)"),
    "correlated-half-size-noise": (True, "sensitivity: the size column carries half the noise"),
    "correlated-replace": (True, "sensitivity: the replacement pair moves the counts by more than μ allows"),
    "laplace-per-query": (True, "sensitivity: scale 1/ε per query, the vector moves by k"),
    "truncated-laplace-half-bound": (False, "a support constant (τ) too small: no data flow differs"),
    "subsampled-wrong-relation": (False, "the accountant's relation: no data flow differs"),
    "rounded-gaussian-real-query": (False, "lattice noise on a real query: the noise is not location-scale in "
                                           "the release (rounded), so its footprint cannot be weighed"),
    "randomized-response-wrong-k": (False, "a keep probability constant: no data flow differs"),
    "sparse-histogram-low-threshold": (False, "a threshold constant: no data flow differs"),
    "dpsgd-batch-clipping": (False, "sensitivity through subsampling (2C): the coupling fixes the sampling coin, "
                                    "so the per-step shift is not the claim's quantity"),
    "dpsgd-unscaled-noise": (False, "a noise constant (σ not σC) under subsampling"),
    "dpsgd-shuffling": (False, "the sampling scheme against the accountant's"),
    "dpsgd-accountant-half-steps": (False, "the accountant's step count"),
    "torch:shuffled-batches": (False, "the sampling scheme against the accountant's (the shuffled loader's "
                                      "calls also follow the number of rows, which a replay reports)"),
    "torch:mean-reduction": (True, "control flow: the divisor int(len(dataset)·q) read from the data"),
    "torch:batch-clipping": (False, "sensitivity through subsampling (see dpsgd-batch-clipping)"),
    "torch:unscaled-noise": (False, "a noise constant (σ not σC)"),
    "torch:virtual-steps": (False, "noise σ/√k per released step: a constant"),
    "torch:unnoised-parameter-group": (True, "unnoised flow: a parameter group outside the noised optimizer "
                                              "(the probe's update carries no noise)"),
    "torch:noise-before-clipping": (True, "control flow: one noise vector per example (shape follows the batch)"),
}


def _site(finding: Any) -> str:
    site = finding.site
    return f"{Path(site.file).name}:{site.line} ({site.function})"


def _certify(finding: Any, mechanism: Any, pairs: Any, claim: Any, schedule: tuple, seed: int,
             statistic: Any = None) -> dict:
    confidence = 1.0 - 0.05 / len(ESCALATION)
    for attempt, samples in enumerate(schedule):
        result = certify(finding, mechanism, pair_of(finding.pair, pairs), claim, samples=samples,
                         seed=seed + attempt, confidence=confidence, statistic=statistic)
        if result.verdict == "VIOLATED":
            break
    return {"verdict": result.verdict, "statement": result.statement, "samples": result.samples,
            "epsilon_lower_bound": result.epsilon_lower_bound, "mu_lower_bound": result.mu_lower_bound}


def _checked(name: str, mechanism: Any, pairs: Any, claim: Any, *, seed: int, schedule: tuple,
             statistic: Any = None) -> dict:
    started = time.perf_counter()
    checks = check_pairs(mechanism, pairs, claim, seed=seed, stop_at_first=True)
    seconds = time.perf_counter() - started
    found = next((f for c in checks for f in c.findings), None)
    where = next((c for c in checks if c.findings), checks[-1])
    row = {"name": name, "in_scope": IN_SCOPE.get(name, (False, ""))[0], "cause": IN_SCOPE.get(name, (False, ""))[1],
           "pairs_checked": len(checks), "executions_per_pair": where.executions, "seconds": seconds,
           "found": found is not None}
    if found is not None:
        row.update(kind=found.kind.value, site=_site(found), measured=found.measured, allowed=found.allowed,
                   quantity=found.quantity, message=found.message)
        if row["in_scope"] and schedule:
            row["certification"] = _certify(found, mechanism, pairs, claim, schedule, seed, statistic)
    return row


def zoo_rows(quick: bool, seed: int) -> list[dict]:
    rows = []
    schedule = ESCALATION[:2] if quick else ESCALATION
    for name, case in FAULTY_MECHANISMS.items():
        mechanism, scenario = case()
        rows.append(_checked(name, mechanism, scenario.pairs, mechanism.claim, seed=seed, schedule=schedule))
    for name, case in FAULTY_TRAINERS.items():
        mechanism, scenario = case()
        rows.append(_checked(name, mechanism, scenario.pairs, mechanism.claim, seed=seed, schedule=()))
    if quick:
        return rows
    from mechanisms.training import TorchTraining
    from mechanisms.zoo.trainers import TORCH_FAULTS, fault_statistic, faulty_training

    from .graybox_trainers import noise_before_clipping

    trainers = {f"torch:{name}": (faulty_training(name), fault_statistic(name))
                for name, fault in TORCH_FAULTS.items() if not fault.holds}
    trainers["torch:noise-before-clipping"] = (TorchTraining(train=noise_before_clipping, accountant="pld"), "auto")
    for name, (mechanism, statistic) in trainers.items():
        scenario = scenarios.counting(1, n=0)
        rows.append(_checked(name, mechanism, scenario.pairs, mechanism.claim, seed=seed, schedule=TRAINER_SAMPLES,
                             statistic=statistic))
    return rows + user_trainer_rows(seed)


#: Trainers written the common way (tests/mechanisms/training_zoo.py), audited by
#: ``audit_training(..., graybox=True, view="updates")``: (name, fault in scope, cause, trainings).
USER_TRAINERS = (
    ("func_noise_before_clipping", True, "control flow: one noise vector per example (shape follows the batch); "
     "certified through the per-step updates", 1000),
    ("func_correct", None, "correct (no finding expected)", 48),
    ("opacus_correct", None, "correct (no finding expected)", 48),
)


def user_trainer_rows(seed: int) -> list[dict]:
    """The replay of a user's trainer and the per-step white-box audit aimed at its finding."""
    from audit.training import audit_training

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "mechanisms"))
    import training_zoo as zoo

    rng = np.random.default_rng(0)  # the data of tests/mechanisms/test_training_user.py
    X = rng.standard_normal((31, 3)).astype(np.float32)
    Y = (X[:, 0] + 0.5 * rng.standard_normal(31) > 0).astype(np.int64)
    claim = dict(noise_multiplier=zoo.SIGMA, steps=zoo.T, delta=1e-3, batch_size=zoo.B)
    rows = []
    for name, in_scope, cause, trainings in USER_TRAINERS:
        labels = Y.astype(np.float32) if name.startswith("opacus") else Y
        started = time.perf_counter()
        report = audit_training(getattr(zoo, name), X, labels, view="updates", seed=seed, progress=False,
                                graybox=True, trainings=trainings, **claim)
        data = report.graybox
        found = data["findings"][0] if data["findings"] else None
        row = {"name": f"user:{name}", "in_scope": bool(in_scope), "cause": cause, "pairs_checked": len(data["checks"]),
               "executions_per_pair": data["checks"][0]["executions"], "seconds": time.perf_counter() - started,
               "replay_seconds": data["seconds"], "found": found is not None, "trainings": report.draws["per_side"],
               "verdict": str(report.verdict)}
        if found is not None:
            site = found["site"]
            row.update(kind=found["kind"], site=f"{Path(site['file']).name}:{site['line']} ({site['function']})",
                       measured=found["measured"], allowed=found["allowed"], quantity=found["quantity"],
                       message=found["message"], certification=found.get("certification") or {})
        rows.append(row)
    return rows


def sweep_rows(quick: bool, seed: int) -> list[dict]:
    """Every catalogued case of the three libraries replayed on its pairs, both orders
    (:func:`audit.sweep.graybox.graybox_pairs`, what ``dpaudit sweep --graybox`` replays), no audit."""
    from audit.sweep.graybox import graybox_pairs
    from scenarios.libraries.registry import library

    rows = []
    for name in ("diffprivlib", "opendp") + (() if quick else ("opacus",)):
        for entry in library(name).entries():
            for case in entry.cases():
                pairs = graybox_pairs(case.scenario, seed)
                started = time.perf_counter()
                checks, errors = [], []
                for pair in pairs:
                    try:
                        checks += check_pairs(case.mechanism, [pair], case.claim, seed=seed + len(checks))
                    except ReplayError as exc:
                        errors.append(f"{pair.label}: {str(exc).splitlines()[0]}")
                findings = [f for c in checks for f in c.findings]
                rows.append({"library": name, "case": case.key, "known": case.known, "pairs": len(pairs),
                             "replays": len(checks), "unreplayable": errors, "findings": len(findings),
                             "kind": findings[0].kind.value if findings else "",
                             "site": _site(findings[0]) if findings else "", "pair": findings[0].pair if findings else "",
                             "executions": float(sum(c.executions for c in checks)),
                             "seconds": time.perf_counter() - started})
    return rows


def suite_rows(quick: bool, seed: int) -> list[dict]:
    rows = []
    groups = ("default", "literature", "dpsgd", "thirdparty") + (() if quick else ("torch",))
    for group in groups:
        for path in scenarios.bundled_suite(group):
            spec = read_scenario(path)
            started = time.perf_counter()
            try:
                checks = check_pairs(spec.mechanism, spec.scenario.pairs, spec.claim, seed=seed)
            except ReplayError as exc:
                rows.append({"group": group, "file": path.name, "expected": spec.expected, "error": str(exc)})
                continue
            findings = [f for c in checks for f in c.findings]
            rows.append({"group": group, "file": path.name, "expected": spec.expected, "pairs": len(checks),
                         "findings": len(findings), "site": _site(findings[0]) if findings else "",
                         "kind": findings[0].kind.value if findings else "",
                         "seconds": time.perf_counter() - started,
                         "notes": len({n for c in checks for n in c.notes})})
    return rows


_LIBRARY_ROWS = {
    "diffprivlib": ("models.LinearRegression", "models.LogisticRegression", "models.GaussianNB"),
    "opacus": ("PrivacyEngine.make_private",),
}


def library_rows(quick: bool, seed: int) -> list[dict]:
    from scenarios.libraries.registry import library

    rows = []
    for lib, names in _LIBRARY_ROWS.items():
        if quick and lib == "opacus":
            continue
        for entry in library(lib).entries():
            if entry.name not in names:
                continue
            for case in entry.cases():
                for pair in case.scenario.pairs:
                    started = time.perf_counter()
                    checks = check_pairs(case.mechanism, [pair], case.claim, seed=seed, both_orders=False)
                    found = next((f for c in checks for f in c.findings), None)
                    rows.append({"library": lib, "case": case.key, "known": case.known, "pair": pair.label,
                                 "seconds": time.perf_counter() - started, "found": found is not None,
                                 "kind": found.kind.value if found else "", "site": _site(found) if found else "",
                                 "message": found.message if found else ""})
    return rows


def _plain_seconds(mechanism: Any, data: Any, rows: int, repeats: int = 5) -> float:
    times = []
    for r in range(repeats):
        started = time.perf_counter()
        mechanism(data, rows, np.random.default_rng(r))
        times.append(time.perf_counter() - started)
    return float(np.median(times))


#: The audit's chunk for a release of k values is ``chunk_size_for(k)`` draws (about 2²⁰ values);
#: a training or a model fit is audited with far fewer draws per side than that, so its chunk is
#: the draws its audit makes (300 trainings; a sweep row's budget of model fits).
CHUNK_CAP = {"Opacus training (4 runs)": 300, "diffprivlib GaussianNB": 1000}


class _Trivial:
    """The cheapest mechanism a check can meet: one Gaussian draw per row added to the count.  Its
    check's time is the fixed cost of a check (patches, tape, footprint fit, comparisons)."""

    def __init__(self) -> None:
        from mechanisms.claims import GaussianDP

        self.claim = GaussianDP(1.0)

    def __call__(self, data: Any, size: int, rng: np.random.Generator) -> np.ndarray:
        return (float(np.asarray(data).shape[0]) + rng.normal(size=size)).reshape(size, 1)


def cost_rows(quick: bool, seed: int) -> list[dict]:
    from mechanisms import GaussianMechanism, LaplaceMechanism
    from mechanisms.correlated import CorrelatedGaussianMechanism

    cases = [("floor: one normal draw, d=1", _Trivial(), scenarios.counting(1)),
             ("Laplace d=4", LaplaceMechanism(1.0, d=4), scenarios.counting(4)),
             ("Gaussian d=4", GaussianMechanism(1.0, 1e-5, d=4), scenarios.counting(4)),
             ("correlated Gaussian d=100", CorrelatedGaussianMechanism(1.0, 100), scenarios.counting(100))]
    if not quick:
        from mechanisms.training import TorchTraining
        from scenarios.libraries.registry import library

        cases.append(("Opacus training (4 runs)", TorchTraining(), scenarios.counting(1, n=0)))
        model = next(c for e in library("diffprivlib").entries() if e.name == "models.GaussianNB" for c in e.cases())
        cases.append(("diffprivlib GaussianNB", model.mechanism, model.scenario))
    rows = []
    for name, mechanism, scenario in cases:
        pair = scenario.pairs[0]
        check_pairs(mechanism, [pair], mechanism.claim if hasattr(mechanism, "claim") else None,
                    seed=seed, both_orders=False)  # warm-up (imports, first-use draws)
        walls = []
        for _ in range(5):  # the whole call: installing the patches and the BLAS limit included
            started = time.perf_counter()
            check = check_pairs(mechanism, [pair], getattr(mechanism, "claim", None), seed=seed, both_orders=False)[0]
            walls.append(time.perf_counter() - started)
        seconds = float(np.median(walls))
        one = _plain_seconds(mechanism, pair.base, 1, repeats=9)
        plain = _plain_seconds(mechanism, pair.base, check.rows, repeats=9)
        width = np.asarray(mechanism(pair.base, 1, np.random.default_rng(0))).reshape(1, -1).shape[1]
        chunk = min(chunk_size_for(width), CHUNK_CAP.get(name, chunk_size_for(width)))
        at_chunk = _plain_seconds(mechanism, pair.base, chunk, repeats=3)
        rows.append({"mechanism": name, "rows": check.rows, "plain_seconds": plain, "check_seconds": seconds,
                     "executions": check.executions, "ratio": seconds / plain, "one_seconds": one,
                     "ratio_one": seconds / one, "chunk": chunk, "chunk_seconds": at_chunk,
                     "ratio_chunk": seconds / at_chunk})
    return rows


def _per_call(fn, calls: int) -> float:
    started = time.perf_counter()
    fn()
    return (time.perf_counter() - started) / calls * 1e6


def overhead_rows(quick: bool) -> list[dict]:
    import random

    from audit.graybox.execute import execute

    calls = 5_000 if quick else 20_000
    sources = {
        "Generator.normal (scalar)": lambda data, size, rng: np.array([[sum(rng.normal(0, 1) for _ in range(calls))]] * size),
        "np.random.normal (legacy)": lambda data, size, rng: np.array([[sum(np.random.normal() for _ in range(calls))]] * size),
        "random.random": lambda data, size, rng: np.array([[sum(random.random() for _ in range(calls))]] * size),
    }
    try:
        import torch

        sources["torch.randn(1)"] = lambda data, size, rng: np.array(
            [[float(sum(torch.randn(1) for _ in range(calls)))]] * size)
    except ImportError:
        pass
    rows = []
    data = np.zeros((1, 1))
    for name, mechanism in sources.items():
        plain = _per_call(lambda: mechanism(data, 1, np.random.default_rng(0)), calls)
        record, _ = execute(mechanism, data, 1, seed=0)
        recorded = record.seconds / calls * 1e6
        replay, _ = execute(mechanism, data, 1, seed=1, source=record)
        replayed = replay.seconds / calls * 1e6
        rows.append({"source": name, "calls": calls, "plain_us": plain, "record_us": recorded, "replay_us": replayed,
                     "record_overhead_us": recorded - plain, "replay_overhead_us": replayed - plain})
    return rows


def _number(value: Any, digits: int = 4) -> str:
    return "—" if value is None else (f"{value:.{digits}g}" if isinstance(value, float) else str(value))


def markdown(result: dict) -> str:
    lines = ["# Gray-box record/replay", "",
             f"Seed {result['seed']}; quick = {result['quick']}; {result['cpus']} CPUs shared, load average "
             f"{result['load_average_start']:.1f} at the start and {result['load_average_end']:.1f} at the end "
             "(times are wall-clock on that machine).", "",
             "## Zoo: faults pinpointed and certified", "",
             "| fault | cause a replay checks? | found | kind | call site | measured | allowed | executions per pair "
             "| seconds | certified audit aimed at it |", "|---|---|---|---|---|---|---|---|---|---|"]
    for r in result["zoo"]:
        cert = r.get("certification", {}).get("statement", "—") if r["found"] else "—"
        lines.append(f"| {r['name']} | {'yes' if r['in_scope'] else 'no'}: {r['cause']} | {'yes' if r['found'] else 'no'} "
                     f"| {r.get('kind', '')} | {r.get('site', '')} | {_number(r.get('measured'))} "
                     f"| {_number(r.get('allowed'))} | {_number(r['executions_per_pair'], 3)} | {r['seconds']:.2f} "
                     f"| {cert.replace('|', '/')} |")
    lines += ["", "## Bundled suite: findings per file", "",
              "| group | file | expected | pairs checked | findings | first finding | seconds |", "|---|---|---|---|---|---|---|"]
    for r in result["suite"]:
        if "error" in r:
            lines.append(f"| {r['group']} | {r['file']} | {r['expected']} | — | error | {r['error'][:120]} | — |")
            continue
        lines.append(f"| {r['group']} | {r['file']} | {r['expected']} | {r['pairs']} | {r['findings']} "
                     f"| {r['kind']} {r['site']} | {r['seconds']:.2f} |")
    lines += ["", "## Libraries: known bugs and their control rows", "",
              "| library | case | known issue | pair | finding | call site | seconds |", "|---|---|---|---|---|---|---|"]
    for r in result["libraries"]:
        lines.append(f"| {r['library']} | {r['case']} | {r['known'] or '—'} | {r['pair']} "
                     f"| {r['kind'] or 'none'} | {r['site']} | {r['seconds']:.2f} |")
    if result.get("sweep"):
        rows = result["sweep"]
        lines += ["", "## Sweep replays: every catalogued case of the three libraries", "",
                  f"{sum(r['replays'] for r in rows)} ordered pairs replayed over {len(rows)} cases "
                  f"({sum(len(r['unreplayable']) for r in rows)} not replayable) in "
                  f"{sum(r['seconds'] for r in rows):.1f} s; the cases with a finding or an unreplayable pair:", "",
                  "| library | case | known issue | pairs replayed | findings | first finding | call site | pair "
                  "| seconds |", "|---|---|---|---|---|---|---|---|---|"]
        for name in dict.fromkeys(r["library"] for r in rows):
            mine = [r for r in rows if r["library"] == name]
            lines.append(f"| {name} | all {len(mine)} cases | | {sum(r['replays'] for r in mine)} "
                         f"| {sum(r['findings'] for r in mine)} | | | | {sum(r['seconds'] for r in mine):.1f} |")
            for r in mine:
                if r["findings"] or r["unreplayable"]:
                    first = r["kind"] or ("not replayable: " + r["unreplayable"][0][:100]).replace("|", "/")
                    lines.append(f"| {name} | {r['case']} | {r['known'] or '—'} | {r['replays']} | {r['findings']} "
                                 f"| {first} | {r['site']} | {r['pair']} | {r['seconds']:.2f} |")
    lines += ["", "## Cost of one pair's check against one plain execution", "",
              "| mechanism | rows | check (s) | executions | execution at size 1 (s) | ratio | execution at the "
              "check's rows (s) | ratio | audit chunk (draws) | execution at the chunk (s) | ratio |",
              "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in result["cost"]:
        lines.append(f"| {r['mechanism']} | {r['rows']} | {r['check_seconds']:.4g} | {r['executions']:.3g} "
                     f"| {r['one_seconds']:.4g} | {r['ratio_one']:.2f} | {r['plain_seconds']:.4g} | {r['ratio']:.2f} "
                     f"| {r['chunk']} | {r['chunk_seconds']:.4g} | {r['ratio_chunk']:.3g} |")
    lines += ["", "## Interception overhead per random call", "",
              "| source | calls | plain µs/call | recorded µs/call | replayed µs/call | overhead recorded | overhead replayed |",
              "|---|---|---|---|---|---|---|"]
    for r in result["overhead"]:
        lines.append(f"| {r['source']} | {r['calls']} | {r['plain_us']:.2f} | {r['record_us']:.2f} | {r['replay_us']:.2f} "
                     f"| {r['record_overhead_us']:.2f} | {r['replay_overhead_us']:.2f} |")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")
    result = {"seed": args.seed, "quick": args.quick, "load_average_start": os.getloadavg()[0],
              "cpus": os.cpu_count()}
    for section, build in (("zoo", lambda: zoo_rows(args.quick, args.seed)),
                           ("suite", lambda: suite_rows(args.quick, args.seed)),
                           ("libraries", lambda: library_rows(args.quick, args.seed)),
                           ("sweep", lambda: sweep_rows(args.quick, args.seed)),
                           ("cost", lambda: cost_rows(args.quick, args.seed)),
                           ("overhead", lambda: overhead_rows(args.quick))):
        started = time.perf_counter()
        result[section] = build()
        print(f"{section}: {len(result[section])} rows in {time.perf_counter() - started:.1f}s", flush=True)
    result["load_average_end"] = os.getloadavg()[0]
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "graybox.json").write_text(json.dumps(result, indent=1, default=float))
    text = markdown(result)
    (args.out / "graybox.md").write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
