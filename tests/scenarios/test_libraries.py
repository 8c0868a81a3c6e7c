"""The library catalogues: every public name accounted for, every case well formed, the families.

These tests draw nothing: they build each catalogue of the installed releases (skipped where the
library is missing) and check what the sweep would run.
"""

from __future__ import annotations

import math
from fractions import Fraction
from importlib.metadata import version as importlib_version
from typing import Callable

import numpy as np
import pytest

from mechanisms.claims import Claim
from scenarios.libraries import COSTS, Case, Entry, NotInRelease, library
from scenarios.libraries.families import row_pairs, value_pairs


@pytest.fixture(scope="module", params=["diffprivlib", "opendp", "opacus"])
def catalogue(request):
    pytest.importorskip(request.param)
    lib = library(request.param)
    return lib, lib.entries()


def test_every_public_name_is_audited_or_left_out_with_a_reason(catalogue):
    lib, entries = catalogue
    coverage = lib.coverage(entries)
    assert coverage.unaccounted == (), f"{lib.name}: public names neither audited nor excluded"
    assert set(coverage.excluded) <= set(coverage.public), "an exclusion names something the release lacks"
    # Opacus: the fast-gradient-clipping, per-layer, adaptive and distributed optimizers are "not yet
    # written" (measured 0.4 on 1.6.0); the others audit at least three quarters of their DP names.
    assert coverage.fraction >= (0.4 if lib.name == "opacus" else 0.75)


def test_every_case_is_well_formed(catalogue):
    lib, entries = catalogue
    keys = set()
    for entry in entries:
        assert isinstance(entry, Entry)
        try:
            cases = entry.cases()
        except NotInRelease as exc:  # only for an optional package the entry needs (OpenDP's Polars)
            assert "is not installed" in str(exc), (entry.name, str(exc))
            continue
        for case in cases:
            assert isinstance(case, Case) and isinstance(case.claim, Claim) and case.cost in COSTS
            assert case.entry == entry.name and case.key not in keys
            keys.add(case.key)
            assert case.claim.relation is entry.relation
            assert case.mechanism.output_dim >= 2 and len(case.scenario.pairs) >= 1
            assert case.coordinate(case.mechanism.output_dim - 1).startswith("raised")


def test_diffprivlib_row_keys_are_those_its_published_results_key_on():
    """The labels come from the shared ``point_label`` (the tools' bounds last); every row of the
    published sweep (benchmarks/results/sweep/diffprivlib/sweep.json, keyed by entry and label) is
    still a case of the catalogue, so its table, repro scripts and docs keep their keys (a row of an
    entry not in the installed release, status "absent", has no case on it)."""
    import json
    from pathlib import Path

    pytest.importorskip("diffprivlib")
    published = Path(__file__).parents[2] / "benchmarks" / "results" / "sweep" / "diffprivlib" / "sweep.json"
    keys = {case.key for entry in library("diffprivlib").entries() for case in entry.cases()}
    rows = [row for row in json.loads(published.read_text())["rows"] if row.get("status") != "absent"]
    assert rows and {row["key"] for row in rows} <= keys


def test_value_pairs_are_checked_against_the_sensitivity():
    assert len(value_pairs([(0.0, 1.0, "a")], 1.0)) == 1
    with pytest.raises(ValueError, match="exceeds the sensitivity"):
        value_pairs([(0.0, 1.5, "too far")], 1.0)


def test_row_pairs_add_or_replace_one_row():
    base = np.array([[0.0], [1.0]])
    (d, added, _), = row_pairs(base, [([5.0], "add")], "add-remove")
    (_, replaced, _), = row_pairs(base, [([5.0], "replace")], "replace")
    assert added.tolist() == [[0.0], [1.0], [5.0]] and replaced.tolist() == [[0.0], [5.0]]
    with pytest.raises(ValueError, match="a row to replace"):
        row_pairs(np.zeros((0, 1)), [([1.0], "x")], "replace")


def test_opacus_claims_are_what_its_accountants_report():
    """Each row's headline ε at δ = 1e-5 is the one Opacus's own accountant reports, and the
    make_private rows' sample rate is the same on both datasets of every pair."""
    pytest.importorskip("opacus")
    from opacus.accountants import PRVAccountant, RDPAccountant

    for entry in library("opacus").entries():
        for index, case in enumerate(entry.cases()):
            p = case.params
            assert case.claim.epsilon_at(p["delta"]) == pytest.approx(p["opacus_epsilon"], rel=1e-3, abs=1e-3)
            if entry.name in ("accountants.RDPAccountant", "accountants.PRVAccountant") and index == 0:
                engine = RDPAccountant() if "RDP" in entry.name else PRVAccountant()
                engine.history = [(p["noise_multiplier"], p["sample_rate"], p["steps"])]
                assert p["opacus_epsilon"] == pytest.approx(engine.get_epsilon(p["delta"]), rel=1e-9)
            if entry.name == "PrivacyEngine.make_private":
                for pair in case.scenario.pairs:
                    sizes = (len(pair.base), len(pair.neighbor))
                    assert len({-(-n // p["batch_size"]) for n in sizes}) == 1


def test_opacus_make_private_rejects_a_data_dependent_sample_rate():
    pytest.importorskip("opacus")
    from scenarios.libraries.opacus import _engine_build

    with pytest.raises(ValueError, match="len\\(data_loader\\) differs"):
        _engine_build({"noise_multiplier": 1.0, "max_grad_norm": 1.0, "rows": 4, "batch_size": 2, "steps": 1})


@pytest.mark.filterwarnings("ignore")  # Opacus warns about its secure RNG and empty batches
def test_opacus_step_divisor_is_the_one_make_private_sets_and_marks_opacus_819():
    """``expected_batch_size`` agrees with the divisor Opacus's own ``make_private`` gives its
    optimizer, and a grid point is marked with opacus#819 exactly when it trains with
    loss_reduction="mean" and that divisor differs between n and n + 1 rows."""
    pytest.importorskip("opacus")
    import torch
    from opacus import PrivacyEngine
    from scenarios.libraries.opacus import OPACUS_819, expected_batch_size

    def divisor(rows, batch_size):
        model = torch.nn.Linear(1, 1)
        loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(torch.zeros(rows, 1)), batch_size=batch_size)
        _, optimizer, _ = PrivacyEngine().make_private(
            module=model, optimizer=torch.optim.SGD(model.parameters(), lr=1.0), data_loader=loader,
            noise_multiplier=1.0, max_grad_norm=1.0)
        return optimizer.expected_batch_size

    for rows, batch_size in [(3, 2), (4, 2), (6, 4), (7, 4), (39, 20), (40, 20)]:
        assert expected_batch_size(rows, batch_size) == divisor(rows, batch_size)
    marked = []
    for case in next(e for e in library("opacus").entries() if e.name == "PrivacyEngine.make_private").cases():
        p = case.params
        reads_n = p.get("loss_reduction") == "mean" and \
            expected_batch_size(p["rows"], p["batch_size"]) != expected_batch_size(p["rows"] + 1, p["batch_size"])
        assert (case.known == OPACUS_819) == reads_n, case.point
        assert (case.mechanism.reference is None) == (reads_n or p.get("clipping") == "adaptive"), case.point
        marked.append(reads_n)
    assert marked.count(True) == 1 and any(p is False for p in marked)


@pytest.mark.filterwarnings("ignore")  # Opacus warns about its secure RNG and empty batches
def test_opacus_every_make_private_option_trains_and_releases_its_trajectory():
    """One release per grid point on D': 2 values (w, b) per step, finite, and not all zero (the
    added row's clipped gradient and the noise move the model)."""
    pytest.importorskip("opacus")
    from scenarios.libraries.opacus import train

    for case in next(e for e in library("opacus").entries() if e.name == "PrivacyEngine.make_private").cases():
        neighbor = np.asarray(case.scenario.pairs[0].neighbor)
        out = train(neighbor, np.random.RandomState(3), **case.release_params)
        assert out.shape == (2 * case.release_params["steps"],), case.point
        assert np.isfinite(out).all() and np.any(out != 0), case.point


@pytest.mark.statistical
@pytest.mark.filterwarnings("ignore")  # Opacus warns about its secure RNG and empty batches
def test_opacus_ghost_clipping_clips_to_max_grad_norm_not_to_one():
    """Without noise, one ghost-clipping step on the grid point's datasets moves (w, b) by the
    clipped gradient of the one row whose gradient is not 0 when Poisson sampling includes it: a
    norm of exactly C = max_grad_norm = 0.2 (Opacus 1.5-1.5.2 clip to 1, meta-pytorch/opacus#664),
    else 0.  20 seeds: each includes the row with probability 1/2, so some step moves unless all 20
    miss it (probability 2⁻²⁰)."""
    pytest.importorskip("opacus")
    from scenarios.libraries.opacus import train

    case = next(c for e in library("opacus").entries() if e.name == "PrivacyEngine.make_private"
                for c in e.cases() if c.release_params.get("grad_sample_mode") == "ghost")
    clip = case.release_params["max_grad_norm"]
    assert clip != 1.0
    neighbor = np.asarray(case.scenario.pairs[1].neighbor)  # the added row's gradient has norm ≈ 1000
    params = dict(case.release_params, noise_multiplier=0.0, steps=1)
    norms = [np.linalg.norm(train(neighbor, np.random.RandomState(seed), **params)) for seed in range(20)]
    assert all(n == pytest.approx(0.0, abs=1e-6) or n == pytest.approx(clip, rel=1e-4) for n in norms), norms
    assert any(n == pytest.approx(clip, rel=1e-4) for n in norms)


def test_opacus_ghost_point_names_opacus_664_only_on_the_releases_that_clip_to_one(monkeypatch):
    """1.5-1.5.2 clip ghost-clipped gradients to 1: there the ghost row links the upstream fix and
    claims no exact ε (the mechanism is not the accounted one); 1.5.3 on, neither."""
    pytest.importorskip("opacus")
    import opacus

    from scenarios.libraries.opacus import OPACUS_664, _engine_build

    point = next(p for p in library("opacus").entries()[0].grid if p.get("grad_sample_mode") == "ghost")
    for version, buggy in (("1.5.2", True), ("1.5", True), ("1.5.3", False), ("1.6.0", False)):
        monkeypatch.setattr(opacus, "__version__", version)
        case = _engine_build(point)
        assert (case.known == OPACUS_664) == buggy and (case.mechanism.reference is None) == buggy, version


def _sequence_point_case():
    return next(c for e in library("opacus").entries() if e.name == "PrivacyEngine.make_private"
                for c in e.cases() if c.release_params.get("tokens"))


def test_opacus_sequence_bias_norm_is_the_bias_gradients_and_was_not_before_1_5_4():
    """On the sequence point's spread row (L tokens, x_t = 0, y_t = a = √(C/L), loss Σ_t −y_t·f(x_t)),
    the bias's per-sample gradient is −Σ_t y_t = −L·a, of norm √(LC).  The installed Opacus's
    ghost-clipping norm sampler returns exactly that; the formula 1.5-1.5.3 used
    (meta-pytorch/opacus#751), ‖G Gᵀ‖_F with G the L × 1 output gradients, returns L·a² = C,
    so that row was not clipped and moved the model by √(LC)/C = √(L/C) times the clip norm."""
    pytest.importorskip("opacus")
    import torch
    from opacus.grad_sample.linear import compute_linear_norm_sample

    case = _sequence_point_case()
    tokens, clip = case.release_params["tokens"], case.release_params["max_grad_norm"]
    row = np.asarray(case.scenario.pairs[0].neighbor)[-1]
    x = torch.tensor(row[:tokens], dtype=torch.float32).reshape(1, tokens, 1)
    backprops = -torch.tensor(row[tokens:], dtype=torch.float32).reshape(1, tokens, 1)  # ∂loss/∂f(x_t) = −y_t
    layer = torch.nn.Linear(1, 1)
    norms = compute_linear_norm_sample(layer, [x], backprops)
    assert float(norms[layer.weight][0]) == pytest.approx(0.0, abs=1e-7)  # x = 0
    assert float(norms[layer.bias][0]) == pytest.approx(np.sqrt(tokens * clip), rel=1e-6)
    assert float(norms[layer.bias][0]) == pytest.approx(abs(float(backprops.sum())), rel=1e-6)
    gram = torch.einsum("nik,njk->nij", backprops, backprops)
    old = float(torch.sqrt(torch.einsum("n...i,n...i->n", gram, gram))[0])  # 1.5.3's line, verbatim
    assert old == pytest.approx(clip, rel=1e-6)


@pytest.mark.statistical
@pytest.mark.filterwarnings("ignore")  # Opacus warns about its secure RNG and empty batches
def test_opacus_ghost_clipping_clips_a_spread_sequence_to_max_grad_norm():
    """Without noise, one ghost-clipping step with the spread sequence added moves (w, b) by C when
    Poisson sampling includes it, else by 0 (1.5-1.5.3 moved it by √(LC) = 6.3·C, opacus#751).
    20 seeds: some step moves unless all 20 miss the row (probability 2⁻²⁰)."""
    pytest.importorskip("opacus")
    from scenarios.libraries.opacus import train

    case = _sequence_point_case()
    clip = case.release_params["max_grad_norm"]
    params = dict(case.release_params, noise_multiplier=0.0, steps=1)
    for pair in case.scenario.pairs:
        norms = [np.linalg.norm(train(np.asarray(pair.neighbor), np.random.RandomState(seed), **params))
                 for seed in range(20)]
        assert all(n == pytest.approx(0.0, abs=1e-6) or n == pytest.approx(clip, rel=1e-4) for n in norms), norms
        assert any(n == pytest.approx(clip, rel=1e-4) for n in norms)


def test_opacus_sequence_point_names_opacus_751_only_on_the_releases_that_misnorm_the_bias(monkeypatch):
    """1.5-1.5.3 take a sequence bias's norm wrong: there the sequence row links meta-pytorch/opacus#751
    (1.5-1.5.2 also clip to 1, opacus#664, which the row names first) and claims no exact ε; 1.5.4 on,
    neither."""
    pytest.importorskip("opacus")
    import opacus

    from scenarios.libraries.opacus import OPACUS_664, OPACUS_751, _engine_build

    point = next(p for p in library("opacus").entries()[0].grid if p.get("tokens"))
    for version, known in (("1.5.2", OPACUS_664), ("1.5", OPACUS_664), ("1.5.3", OPACUS_751), ("1.5.4", ""),
                           ("1.6.0", "")):
        monkeypatch.setattr(opacus, "__version__", version)
        case = _engine_build(point)
        assert case.known == known and (case.mechanism.reference is None) == bool(known), version


@pytest.mark.statistical
def test_opendp_integer_threshold_claims_the_tail_beyond_the_threshold_and_batches_keep_the_law():
    """opendp#2922: OpenDP's δ for make_laplace_threshold on integer counts (scale 1, threshold 5)
    is P(Z ≥ 5) = e⁻⁵/(1 + e⁻¹), Z discrete Laplace, while a key of count 1 is released with
    probability P(Z ≥ 4) = e⁻⁴/(1 + e⁻¹).  The batched draws (one call on disjoint copies of the map)
    release it as often as single calls: OpenDP cannot be seeded, so a two-proportion z-test at
    |z| < 4.42 (two-sided 1e-5), and each frequency within 4.42 binomial standard errors of e⁻⁴/(1 + e⁻¹)."""
    pytest.importorskip("opendp")
    import math

    from scenarios.libraries.opendp import OPENDP_2922

    case = next(c for e in library("opendp").entries() if e.name == "measurements.threshold"
                for c in e.cases() if c.known == OPENDP_2922)
    assert case.claim.delta == pytest.approx(math.exp(-5) / (1 + math.exp(-1)), rel=1e-9)
    released = math.exp(-4) / (1 + math.exp(-1))
    assert released > 2.7 * case.claim.delta
    pair = next(p for p in case.scenario.pairs if p.label == "new key c with count 1")
    batch = case.mechanism(np.asarray(pair.neighbor), 20_000, np.random.default_rng(0))[:, 4]
    single = np.array([case.release(np.asarray(pair.neighbor), None, **case.release_params)[4] for _ in range(3_000)])
    for freq, n in ((batch.mean(), batch.size), (single.mean(), single.size)):
        assert abs(freq - released) < 4.42 * math.sqrt(released * (1 - released) / n)
    pooled = (batch.sum() + single.sum()) / (batch.size + single.size)
    se = math.sqrt(pooled * (1 - pooled) * (1 / batch.size + 1 / single.size))
    assert abs(batch.mean() - single.mean()) < 4.42 * se
    assert not case.mechanism(np.asarray(pair.base), 5_000, np.random.default_rng(0))[:, 4].any()


def test_cell_statistics_counts_cells_outside_rows_marginals_and_distances_by_hand():
    from scenarios.libraries.tables import cell_statistics
    table = [[0, 0], [3, 1], [3, 1], [5, 0], [1.5, 1], [np.nan, 0], [np.inf, 1], [-1, 0]]
    counts, distances = cell_statistics(table, [[3.0, 0.0], [2.0, 2.0]], (4, 2))
    cells = [1, 0, 0, 0, 0, 0, 0, 2]  # (0, 0) once, (3, 1) twice; the other five rows fall outside
    assert counts == cells + [5.0] + [1, 0, 0, 2] + [1, 2]
    assert distances == [1.0, 2.0]  # (3, 0) is one away from (3, 1) and (5, 0); no row shares a value with (2, 2)
    assert cell_statistics([], [[0.0, 0.0]], (4, 2)) == ([0.0] * 8 + [0.0] + [0.0] * 6, [2.0])


def _dashu_rbig_div_ubig(x: Fraction, k: int) -> Fraction:
    """x / k as dashu-ratio computed it before cmpute/dashu#57 was fixed: for x = a/b in lowest
    terms and g = gcd(a, k), the numerator a/g over the denominator ⌊b/g⌋·k (not b·k/g)."""
    g = math.gcd(x.numerator, k)
    return Fraction(x.numerator // g, (x.denominator // g) * k) if x.numerator else Fraction(0)


def _bernoulli_exp1(x: Fraction, divide: Callable[[Fraction, int], Fraction]) -> float:
    """P(true) of OpenDP's ``sample_bernoulli_exp1(x)`` (Canonne, Kamath & Steinke 2020, Alg. 1):
    it draws A_k ~ Bernoulli(x/k) for k = 1, 2, ... until one is 0 and returns whether that k is odd,
    so P(true) = Σ_{k odd} (Π_{i<k} p_i)(1 − p_k) with p_k = divide(x, k).  60 terms: the
    remainder is below Π_{i<60} 1/i."""
    total, prefix = 0.0, 1.0
    for k in range(1, 61):
        p = float(divide(x, k))
        if k % 2:
            total += prefix * (1 - p)
        prefix *= p
    return total


def test_opendp_2638_bias_is_what_dashus_division_gives_and_marks_the_scales_it_reaches():
    """opendp#2638: the series of the exact division gives e^(−x) (a second route to the sampler's
    law), the faulty division 0.6090 at x = 2/3 where e^(−2/3) = 0.5134; and the catalogue marks
    an integer Laplace scale s/t exactly when some remainder u/s (u < s) meets a faulty x/k."""
    pytest.importorskip("opendp")
    from scenarios.libraries.opendp import OPENDP_2638, _biased_by_2638

    def exact(x: Fraction, k: int) -> Fraction:
        return x / k

    for x in (Fraction(0), Fraction(1, 3), Fraction(2, 3), Fraction(1)):
        assert _bernoulli_exp1(x, exact) == pytest.approx(math.exp(-x), abs=1e-15)
    assert _bernoulli_exp1(Fraction(2, 3), _dashu_rbig_div_ubig) == pytest.approx(0.609019, abs=1e-6)
    assert _bernoulli_exp1(Fraction(1, 3), _dashu_rbig_div_ubig) == pytest.approx(math.exp(-1 / 3), abs=1e-15)
    for s in range(1, 25):
        for t in (1, 2, 4, 8):  # scales that are doubles exactly: OpenDP reads a float scale as its exact fraction
            scale = Fraction(s, t)
            faulty = any(_dashu_rbig_div_ubig(Fraction(u, scale.numerator), k) != Fraction(u, scale.numerator) / k
                         for u in range(scale.numerator) for k in range(1, scale.numerator + 1))
            assert (_biased_by_2638({"scale": float(scale)}) == OPENDP_2638) == faulty, scale


@pytest.mark.statistical
def test_opendp_integer_laplace_rows_are_batched_and_batches_keep_the_law():
    """The integer Laplace rows draw the vector form of the same noise (batch cost, as the float
    rows): at scale 3 on 0.14.2 and later, P(Y = y) = tanh(1/6)·e^(−|y|/3) (the discrete Laplace),
    for batched draws and single calls alike.  OpenDP cannot be seeded: the frequency of |Y| = 2 and
    of |Y| = 3, and their two-proportion z between batch and single calls, within 4.42 standard
    errors (two-sided 1e-5 each)."""
    pytest.importorskip("opendp")
    from packaging.version import Version

    from scenarios.libraries.opendp import OPENDP_2638

    cases = {c.point: c for e in library("opendp").entries() if e.name == "measurements.make_laplace[int]"
             for c in e.cases()}
    assert {p: c.cost for p, c in cases.items()} == {"scale=1.0": "batch", "scale=3.0": "batch"}
    biased = Version(importlib_version("opendp")) < Version("0.14.2")  # the mark names releases that have it
    assert cases["scale=3.0"].known == (OPENDP_2638 if biased else "") and cases["scale=1.0"].known == ""
    if biased:
        pytest.skip(f"opendp {importlib_version('opendp')} has the biased sampler (#2638)")
    case = cases["scale=3.0"]
    base = np.asarray(case.scenario.pairs[0].base)
    batch = case.mechanism(base, 200_000, np.random.default_rng(0))[:, 0]
    single = np.array([case.release(base, None, **case.release_params)[0] for _ in range(20_000)])
    assert np.all(batch == np.round(batch))
    for magnitude in (2, 3):
        p = 2 * math.tanh(1 / 6) * math.exp(-magnitude / 3)
        hits = [np.abs(draws) == magnitude for draws in (batch, single)]
        for hit in hits:
            assert abs(hit.mean() - p) < 4.42 * math.sqrt(p * (1 - p) / hit.size), magnitude
        pooled = (hits[0].sum() + hits[1].sum()) / (hits[0].size + hits[1].size)
        se = math.sqrt(pooled * (1 - pooled) * (1 / hits[0].size + 1 / hits[1].size))
        assert abs(hits[0].mean() - hits[1].mean()) < 4.42 * se


def test_opendp_lazyframe_entry_needs_polars_and_says_so(monkeypatch):
    """Without polars the Polars entry is "not in this release", naming what to install; with it, the
    case releases one sum a key and the tie count, in the layout it declares."""
    pytest.importorskip("opendp")
    entry = next(e for e in library("opendp").entries() if e.name == "measurements.make_private_lazyframe")
    with monkeypatch.context() as patch:
        patch.setattr("scenarios.libraries.opendp_polars.pl", None)  # as when `import polars` failed
        with pytest.raises(NotInRelease, match=r"polars is not installed.*opendp\[polars\]"):
            entry.build(entry.grid[0])
    pytest.importorskip("polars")
    case = entry.build(entry.grid[0])
    out = case.release(np.array([0.0]), None, **case.release_params)
    assert len(out) == len(case.layout) == entry.grid[0]["keys"] + 1
    assert case.claim.epsilon > 0 and case.known.startswith("opendp/opendp#2344")


def test_a_known_opendp_issue_is_marked_only_on_the_releases_that_have_it(monkeypatch):
    pytest.importorskip("opendp")
    from scenarios.libraries import opendp as catalogue

    from scenarios.libraries.catalogue import release_numbers

    assert release_numbers("0.15.0rc1") == (0, 15, 0) and release_numbers("0.14.2") == (0, 14, 2)
    for installed, marked in (("0.14.1", True), ("0.14.2.dev0", False), ("0.16.0", False), ("", True)):
        monkeypatch.setattr(catalogue, "_installed_release", lambda: installed)
        assert (catalogue._before("0.14.2", catalogue.OPENDP_2638) == catalogue.OPENDP_2638) is marked, installed


def test_release_numbers_is_the_release_a_version_string_is_numbered_for():
    """One parser for the catalogues' release comparisons (OpenDP's marks, Opacus's and diffprivlib's
    API checks): padded to three numbers so "1.5" compares equal to (1, 5, 0), and a suffix never
    read as a further number (a regex of every digit run read "1.5rc1" as 1.5.1)."""
    from scenarios.libraries.catalogue import release_numbers

    cases = {"1.5": (1, 5, 0), "1.5rc1": (1, 5, 0), "1.5.3": (1, 5, 3), "1.5.3.post1": (1, 5, 3),
             "0.14.2+local.7": (0, 14, 2), "0.15.0.dev3": (0, 15, 0), "v2.0": (2, 0, 0), "1": (1, 0, 0),
             "1.2.3.4": (1, 2, 3, 4), "": (), "unknown": ()}
    assert {text: release_numbers(text) for text in cases} == cases
