"""The Opacus catalogue: DP-SGD through ``PrivacyEngine.make_private`` and the three accountants.

Opacus states its privacy through an accountant: after T steps of DP-SGD with noise multiplier σ,
clipping norm C and Poisson sampling at rate q, ``PrivacyEngine.get_epsilon(delta)`` "Computes
the (epsilon, delta) privacy budget spent so far" (its docstring), by the accountant chosen at
construction (``PrivacyEngine(accountant="prv")`` by default).  Every accountant accounts for the
same mechanism, T compositions of the Poisson-subsampled Gaussian

    Y_t = Σ_i B_ti clip_C(g_i) + σC·Z_t,   B_ti ~ Bernoulli(q),  Z_t ~ N(0, I),

under the add/remove relation (Opacus's ``DPDataLoader`` docstring: "each sample from the
dataset is included in the batch with probability ``sample_rate``"; the analyses it cites assume
add/remove neighbours).  Entries:

- ``PrivacyEngine.make_private``: the parameter trajectory of a tiny model trained by Opacus
  itself (``GradSampleModule`` per-sample gradients, ``DPOptimizer`` clipping and noise,
  ``DPDataLoader`` Poisson sampling), claimed private at the default PRV accountant's profile; grid
  points also train with Opacus's default ``loss_reduction="mean"`` (whose divisor
  int(len(dataset)·q) reads the dataset's size, meta-pytorch/opacus#819), per-layer and adaptive
  clipping (Andrew et al. 2021), ghost clipping and ``BatchMemoryManager``;
- ``accountants.RDPAccountant``, ``PRVAccountant``, ``GaussianAccountant``: each accountant's
  statement for (q, σ, T) is a claim about the composed subsampled Gaussian, audited on a
  vectorized sampler of that mechanism (:class:`mechanisms.subsampled_gaussian.PoissonSubsampledGaussian`).

Claims, per accountant (``mechanisms.training.accountants`` builds the first two):

==================  ===========================================================================
RDPAccountant       (α, ε_α)-RDP at Opacus's ``DEFAULT_ALPHAS`` (``compute_rdp``, Mironov, Talwar
                    & Zhang 2019), converted as Opacus's ``get_privacy_spent`` converts it
                    (Balle et al. 2020, Thm 21)
PRVAccountant       the discretised privacy random variable's δ̂(ε − ε_err) + δ_err, the bound its
                    ``get_epsilon`` guarantees (Gopi, Lee & Wutschitz 2021)
GaussianAccountant  μ-GDP with μ = q·√(T(e^{1/σ²} − 1)) (``compute_mu_poisson``, the CLT of Bu,
                    Dong, Long & Su 2020); ``get_epsilon`` is that μ's exact GDP ε(δ)
==================  ===========================================================================

Opacus warns that the GDP accountant "is experimental and can underestimate privacy expenditure";
its ε is below the exact one at this grid (docs/libraries/opacus.md): a refutation is a finding.

References
----------
Yousefpour et al. (2021), "Opacus: user-friendly differential privacy library in PyTorch",
arXiv:2109.12298; Mironov, Talwar & Zhang (2019), "Rényi differential privacy of the sampled
Gaussian mechanism"; Gopi, Lee & Wutschitz (2021), "Numerical composition of differential
privacy"; Bu, Dong, Long & Su (2020), "Deep learning with Gaussian differential privacy";
Balle et al. (2020), "Hypothesis testing interpretations and Rényi differential privacy";
Andrew, Thakkar, McMahan & Ramaswamy (2021), "Differentially private learning with adaptive
clipping", NeurIPS.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import inspect
import logging
import warnings
from typing import Any

import numpy as np

from mechanisms.adapters.released import LibraryRelease
from mechanisms.claims import GaussianDP, Relation
from mechanisms.subsampled_gaussian import PoissonSubsampledGaussian
from mechanisms.training.accountants import accountant_claim

from .. import scenario as _scenario
from .catalogue import Case, Entry, Library, NotInRelease, point_label, release_numbers, require_library
from .registry import register_library


def _require(module: str):
    return require_library(module, catalogue="opacus", install='pip install "dpaudit[torch]"')


torch = _require("torch")
opacus = _require("opacus")
PrivacyEngine = opacus.PrivacyEngine
BatchMemoryManager = _require("opacus.utils.batch_memory_manager").BatchMemoryManager
# An empty Poisson batch is a legitimate release; Opacus logs a warning for each one.
logging.getLogger("opacus.data_loader").setLevel(logging.ERROR)

__all__ = ["LIBRARY", "train", "subsampled_gaussian", "entries", "public_api", "gdp_mu", "expected_batch_size",
           "ENGINE_GRID", "OPACUS_819", "OPACUS_751"]

ADD_REMOVE = Relation.ADD_REMOVE
#: The reference δ of every claim (the report's headline ε is read there).
DELTA = 1e-5


# -- release functions (their source goes into reproduction scripts: names np, torch, PrivacyEngine) --
def train(data, random_state, *, noise_multiplier, max_grad_norm, batch_size, steps, lr=1.0, loss_reduction="sum",
          clipping="flat", grad_sample_mode="hooks", physical_batch_size=0, tokens=0, **optimizer_options):
    """T = ``steps`` steps of DP-SGD with Opacus's ``PrivacyEngine.make_private`` (Poisson sampling,
    sample rate 1/len(data_loader)) on a linear model f(x) = w·x + b, started at 0, with the loss
    −y·f(x) per example (gradient −y·(x, 1)), reduced by ``loss_reduction``; rows of ``data`` are
    (x, y).  With ``tokens`` = L > 0 a row is a sequence (x_1..x_L, y_1..y_L) of L one-feature tokens:
    the model maps (batch, L, 1) to (batch, L, 1) and a sequence's loss is Σ_t −y_t·f(x_t) (the privacy
    unit is the sequence, its gradient −Σ_t y_t·(x_t, 1)).  ``clipping``, ``grad_sample_mode`` and ``optimizer_options`` go to ``make_private``
    ("per_layer" takes one clip norm per parameter, "adaptive" AdaClip's options, "ghost" fast gradient
    clipping through the criterion it returns); ``physical_batch_size`` > 0 splits each Poisson batch
    with ``BatchMemoryManager``.  The release is the parameters (w, b) after every optimizer step:
    the whole trajectory the accountant accounts for."""
    generator = torch.Generator().manual_seed(int(random_state.randint(2**31)))
    if tokens:
        x = torch.tensor(data[:, :tokens], dtype=torch.float32).reshape(len(data), tokens, 1)
        y = torch.tensor(data[:, tokens:], dtype=torch.float32)
    else:
        x = torch.tensor(data[:, :-1], dtype=torch.float32)
        y = torch.tensor(data[:, -1], dtype=torch.float32)
    model = torch.nn.Linear(x.shape[-1], 1)
    torch.nn.init.zeros_(model.weight)
    torch.nn.init.zeros_(model.bias)
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)

    class Loss(torch.nn.Module):
        """−y·f(x) per example (summed over a sequence's tokens), reduced as ``reduction`` says (ghost
        clipping sets it to "none")."""
        reduction = loss_reduction

        def forward(self, output, target):
            loss = -(output.squeeze(-1) * target)
            loss = loss.sum(-1) if loss.dim() > 1 else loss
            return loss if self.reduction == "none" else loss.sum() if self.reduction == "sum" else loss.mean()

    # make_private's DPDataLoader samples with the original loader's generator (no secure_mode).
    loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(x, y), batch_size=batch_size,
                                         generator=generator)
    # Releases before 1.5.3 take no `criterion` (only ghost clipping needs it); pass it where accepted.
    # There (1.5-1.5.2) ghost clipping is make_private(grad_sample_mode="ghost", clipping="ghost") and
    # the two backward passes of opacus.utils.fast_gradient_clipping_utils.double_backward.
    accepted = inspect.signature(PrivacyEngine.make_private).parameters
    two_pass = grad_sample_mode == "ghost" and "criterion" not in accepted
    private = PrivacyEngine().make_private(
        module=model, optimizer=optimizer, data_loader=loader, noise_multiplier=noise_multiplier,
        max_grad_norm=max_grad_norm, poisson_sampling=True, loss_reduction=loss_reduction, noise_generator=generator,
        clipping="ghost" if two_pass else clipping, grad_sample_mode=grad_sample_mode, **optimizer_options,
        **({"criterion": Loss()} if "criterion" in accepted else {}))
    if grad_sample_mode == "ghost" and not two_pass:
        model, optimizer, criterion, loader = private
    else:
        (model, optimizer, loader), criterion = private, Loss()
    batches = (BatchMemoryManager(data_loader=loader, max_physical_batch_size=physical_batch_size, optimizer=optimizer)
               if physical_batch_size else contextlib.nullcontext(loader))
    trajectory = []
    with batches as physical:
        while len(trajectory) < steps:
            for xb, yb in physical:
                optimizer.zero_grad()
                if two_pass:  # double_backward, its first pass reduced as loss_reduction says (1.5.2 fixes "mean")
                    criterion.reduction = "none"
                    per_sample = criterion(model(xb), yb)
                    (per_sample.sum() if loss_reduction == "sum" else per_sample.mean()).backward(retain_graph=True)
                    optimizer.zero_grad()
                    model.disable_hooks()
                    (model.get_coeff() * per_sample).sum().backward()  # Σ_i min(1, C/‖g_i‖)·loss_i
                    model.enable_hooks()
                else:
                    criterion(model(xb), yb).backward()
                optimizer.step()
                if optimizer._is_last_step_skipped:  # BatchMemoryManager: a physical batch, not a step yet
                    continue
                trajectory.append(torch.cat([p.detach().ravel() for p in model.parameters()]).numpy().copy())
                if len(trajectory) == steps:
                    break
    return np.concatenate(trajectory)


def subsampled_gaussian(data, random_state, *, noise_multiplier, sample_rate, steps):
    """The mechanism Opacus's accountants account for: T = ``steps`` releases of
    Σ_i B_i·g_i + σ·Z with B_i ~ Bernoulli(q) (Poisson sampling), g_i = 2x_i − 1 ∈ [−1, 1] a
    gradient clipped to C = 1, and Z ~ N(0, 1)."""
    g = 2.0 * np.ravel(data) - 1.0
    included = random_state.random_sample((steps, g.size)) < sample_rate
    return included @ g + noise_multiplier * random_state.standard_normal(steps)


# -- claims --------------------------------------------------------------------------------------------
def gdp_mu(q: float, sigma: float, steps: int) -> float:
    """μ of Opacus's ``GaussianAccountant`` with Poisson sampling: ``compute_mu_poisson``,
    μ = q·√(T(e^{1/σ²} − 1)) (Bu, Dong, Long & Su 2020, the CLT of Thm 5)."""
    from opacus.accountants.analysis.gdp import compute_mu_poisson  # optional extra: torch

    return float(compute_mu_poisson(steps=steps, noise_multiplier=sigma, sample_rate=q))


def _gdp_epsilon(q: float, sigma: float, steps: int, delta: float) -> float:
    """``GaussianAccountant.get_epsilon(delta)`` as Opacus reports it (its constructor's warning silenced)."""
    from opacus.accountants import GaussianAccountant  # optional extra: torch

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        engine = GaussianAccountant()
    engine.history = [(sigma, q, steps)]
    return float(engine.get_epsilon(delta))


@functools.lru_cache(maxsize=None)  # a claim is immutable; the PRV's discretisation takes a second
def claim_of(accountant: str, q: float, sigma: float, steps: int):
    """The claim of Opacus's ``accountant`` ("rdp", "prv" or "gdp") for T subsampled Gaussian steps
    (module table), and the ε its ``get_epsilon(DELTA)`` reports, computed by Opacus's own code from
    the same curve: ``get_privacy_spent`` of the RDP, the discretised PRV's ``compute_epsilon``
    upper bound, the GDP accountant itself."""
    if accountant == "gdp":
        return GaussianDP(gdp_mu(q, sigma, steps), ADD_REMOVE), _gdp_epsilon(q, sigma, steps, DELTA)
    if accountant not in ("rdp", "prv"):
        raise ValueError(f"`accountant` must be one of ('rdp', 'prv', 'gdp'), got {accountant!r}")
    claim = accountant_claim(accountant, q, sigma, steps, DELTA)
    if accountant == "prv":
        return claim, claim.profile.reported_epsilon()
    from opacus.accountants.analysis.rdp import get_privacy_spent  # optional extra: torch

    reported, _ = get_privacy_spent(orders=list(claim.orders), rdp=np.asarray(claim.epsilons), delta=DELTA)
    return claim, float(reported)


# -- entries ---------------------------------------------------------------------------------------------
_ENGINE_TEXT = ("opacus.PrivacyEngine.make_private docstring: 'Add privacy-related responsibilities to the main "
                "PyTorch training objects ... Optimizer is now responsible for gradient clipping and adding noise "
                "to the gradients ... DataLoader is updated to perform Poisson sampling'; DPOptimizer docstring: "
                "'Add Gaussian noise to p.grad calibrated to a given noise multiplier and max grad norm limit "
                "(std = noise_multiplier * max_grad_norm)'; PrivacyEngine.get_epsilon: 'Computes the (epsilon, "
                "delta) privacy budget spent so far' with the default accountant 'prv'. Claim: the PRV "
                "accountant's profile for (q = 1/len(data_loader), σ, T); add/remove (Poisson sampling)")


#: make_private's options a grid point may set (besides σ, C, rows, batch size and steps).
_ENGINE_OPTIONS = ("loss_reduction", "clipping", "grad_sample_mode", "physical_batch_size", "target_unclipped_quantile",
                   "clipbound_learning_rate", "max_clipbound", "min_clipbound", "unclipped_num_std", "tokens")
#: meta-pytorch/opacus#819 (open; reported against v1.0-v1.6.0): with loss_reduction="mean",
#: DPOptimizer divides the noisy sum by expected_batch_size = int(len(dataset) · sample_rate), a
#: number read from the private dataset's size.
OPACUS_819 = "meta-pytorch/opacus#819"


#: meta-pytorch/opacus#664 (released in 1.5.3): 1.5-1.5.2's make_private built the ghost-clipping
#: module without max_grad_norm, so per-sample gradients were clipped to 1 and the noise was σ·C.
OPACUS_664 = "meta-pytorch/opacus#664 (ghost clipping clipped to 1, not max_grad_norm; fixed in 1.5.3)"


def _release() -> tuple[int, ...]:
    """The installed Opacus's version numbers, e.g. (1, 5, 3)."""
    return release_numbers(str(getattr(opacus, "__version__", "0")))


def _clips_ghost_to_one(options: dict) -> bool:
    """Whether the installed release is one whose ghost clipping ignores ``max_grad_norm`` (1.5-1.5.2)."""
    return options.get("grad_sample_mode") == "ghost" and (1, 5) <= _release() < (1, 5, 3)


#: meta-pytorch/opacus#751 (released in 1.5.4): before it, ghost clipping's norm of a Linear bias's
#: per-sample gradient on sequence inputs was ‖G Gᵀ‖_F (G a sequence's L × d output gradients), not
#: ‖Gᵀ1‖ = ‖Σ_t g_t‖; for d = 1 and L equal token gradients a that is L·a², below the true L·|a| when
#: |a| < 1, so such a sequence is clipped too little.
OPACUS_751 = ("meta-pytorch/opacus#751 (ghost clipping's per-sample norm of a Linear bias on sequence inputs was "
              "‖GGᵀ‖_F, not ‖Σ_t g_t‖; fixed in 1.5.4)")


def _misnorms_sequence_bias(options: dict) -> bool:
    """Whether the installed release's ghost clipping takes a sequence bias's norm wrong (1.5-1.5.3)."""
    return options.get("grad_sample_mode") == "ghost" and bool(options.get("tokens")) and (1, 5) <= _release() < (1, 5, 4)


def expected_batch_size(rows: int, batch_size: int) -> int:
    """What ``make_private`` divides a mean-reduced step by: int(N · 1/len(data_loader)), N = ``rows``."""
    return int(rows * (1.0 / -(-rows // batch_size)))


def _check_release(options: dict) -> None:
    """Raise :class:`NotInRelease` for an option of ``make_private`` the installed Opacus lacks."""
    if options.get("grad_sample_mode") == "ghost" and not hasattr(opacus.grad_sample, "GradSampleModuleFastGradientClipping"):
        raise NotInRelease("ghost clipping (opacus.grad_sample.GradSampleModuleFastGradientClipping, Opacus 1.5 on)")
    if options.get("clipping") == "adaptive" and not hasattr(opacus.optimizers, "AdaClipDPOptimizer"):
        raise NotInRelease("adaptive clipping (opacus.optimizers.AdaClipDPOptimizer)")


def _engine_build(point):
    n, batch = point["rows"], point["batch_size"]
    if -(-n // batch) != -(-(n + 1) // batch):
        raise ValueError(f"rows={n}, batch_size={batch}: len(data_loader) differs between D and D' (the sample "
                         "rate 1/len(data_loader) would read the data)")
    q = 1.0 / -(-n // batch)
    sigma, steps, clip = point["noise_multiplier"], point["steps"], point["max_grad_norm"]
    options = {k: point[k] for k in _ENGINE_OPTIONS if k in point}
    _check_release(options)
    claim, reported = claim_of("prv", q, sigma, steps)
    params = {"noise_multiplier": sigma, "max_grad_norm": clip, "batch_size": batch, "steps": steps, **options}
    tokens = int(point.get("tokens", 0))
    if tokens:
        # Sequences of L tokens.  Any sequence clipped to C is a worst case; the two added here spread
        # their gradient over the tokens: x_t = 0, y_t = a, gradient (0, −L·a).  With a = √(C/L) each
        # token's is small and the sequence's is √(LC) > C (a long sequence of weak signals, where
        # ghost clipping's bias norm before 1.5.4 read L·a² = C: unclipped); with a = 10 it is 10·L.
        base = np.hstack([np.full((n, tokens), 0.5), np.zeros((n, tokens))])
        spread = float(np.sqrt((clip[1] if isinstance(clip, (list, tuple)) else clip) / tokens))
        extra = [([0.0] * tokens + [spread] * tokens,
                  f"add a sequence of {tokens} tokens with gradient √(C/L) each (norm √(LC), clipped to C)"),
                 ([0.0] * tokens + [10.0] * tokens, f"add a sequence of {tokens} tokens with gradient 10 each "
                                                    "(clipped to C)")]
    else:
        base = np.tile([0.5, 0.0], (n, 1))  # y = 0: rows whose gradient is 0
        # Any row clipped to norm C is a worst case (the noise is isotropic): one at C, one far above.
        # Per-layer clipping (C_w, C_b): the row x = C_w/C_b, y = C_b has gradient (−C_w, −C_b), at both.
        at_clip = [clip[0] / clip[1], clip[1]] if isinstance(clip, (list, tuple)) else [0.0, clip]
        extra = [(at_clip, "add a row with gradient norm C (at the clip norm)"),
                 ([100.0, 10.0], "add a row with gradient norm ≈ 1000 (clipped to C)")]
    pairs = [(base, np.vstack([base, row]), label) for row, label in extra]
    scenario = _scenario.from_pairs(pairs, ADD_REMOVE)
    width = 2 * steps
    # The mechanism is the subsampled Gaussian the accountant accounts for unless the step's
    # divisor reads N (opacus#819), the clip norm adapts (AdaClip) or ghost clipping ignores it
    # (opacus#664) or misreads a sequence's bias norm (opacus#751): then its exact ε is unknown.
    reads_n = options.get("loss_reduction") == "mean" and expected_batch_size(n, batch) != expected_batch_size(n + 1, batch)
    exact = not reads_n and options.get("clipping") != "adaptive" and not _clips_ghost_to_one(options) and \
        not _misnorms_sequence_bias(options)
    reference = PoissonSubsampledGaussian(sigma, q, steps, epsilon=reported, delta=DELTA) if exact else None
    mechanism = LibraryRelease(train, params, f"opacus.PrivacyEngine.make_private({point_label(point)})", claim, width + 1,
                               reference=reference)
    layout = tuple((f"{name} after step {t + 1}", None) for t in range(steps) for name in ("w", "b"))
    return Case("PrivacyEngine.make_private", point_label(point), {**point, "sample_rate": q, "opacus_epsilon": reported,
                                                               "delta": DELTA},
                mechanism, claim, scenario, train, params, "fit", statistic="coordinates", layout=layout,
                known=OPACUS_819 if reads_n else OPACUS_664 if _clips_ghost_to_one(options) else
                OPACUS_751 if _misnorms_sequence_bias(options) else "")


#: Opacus's own defaults on a tiny model: loss_reduction="sum" (the accountant's mechanism exactly),
#: then each option make_private offers.  With the default loss_reduction="mean" the step is divided
#: by int(N·q): 1 at N = 3 and 2 at N + 1 = 4 (batch 2), 3 at both N = 6 and 7 (batch 4).
ENGINE_GRID = (
    {"noise_multiplier": 2.0, "max_grad_norm": 1.0, "rows": 3, "batch_size": 2, "steps": 2},
    {"noise_multiplier": 1.5, "max_grad_norm": 1.0, "rows": 5, "batch_size": 2, "steps": 3},
    {"noise_multiplier": 2.0, "max_grad_norm": 1.0, "rows": 3, "batch_size": 2, "steps": 2, "loss_reduction": "mean"},
    {"noise_multiplier": 2.0, "max_grad_norm": 1.0, "rows": 6, "batch_size": 4, "steps": 2, "loss_reduction": "mean"},
    {"noise_multiplier": 2.0, "max_grad_norm": [0.6, 0.8], "rows": 3, "batch_size": 2, "steps": 2,
     "clipping": "per_layer"},
    # C = 0.2: a release that clips to the default norm 1 instead of max_grad_norm (Opacus 1.5-1.5.2, fixed
    # in 1.5.3 by meta-pytorch/opacus#664) adds noise σC for a sensitivity 5C, i.e. σ/5; at 1500 releases a
    # side, C = 0.5 (σ/2) would certify ε ≈ 1.0 at best, below the claim's 1.84 (docs/libraries/opacus.md).
    {"noise_multiplier": 2.0, "max_grad_norm": 0.2, "rows": 3, "batch_size": 2, "steps": 2, "grad_sample_mode": "ghost"},
    # A sequence model (a Linear on (batch, L, 1) inputs): ghost clipping's norms of 3-dimensional
    # activations.  Before 1.5.4 (meta-pytorch/opacus#751) the bias norm of a sequence whose L tokens
    # each have gradient a = √(C/L) read L·a² = C for the true √(LC): at L = 8, C = 0.2 it passed
    # unclipped, 6.3·C, against noise σC (docs/libraries/opacus.md).
    {"noise_multiplier": 2.0, "max_grad_norm": 0.2, "rows": 3, "batch_size": 2, "steps": 2, "tokens": 8,
     "grad_sample_mode": "ghost"},
    {"noise_multiplier": 2.0, "max_grad_norm": 1.0, "rows": 5, "batch_size": 4, "steps": 2, "physical_batch_size": 1},
    # AdaClipDPOptimizer raises on an empty Poisson batch (RuntimeError: cannot reshape tensor of 0
    # elements, Opacus 1.6.0): 39 rows at q = 1/2 make one empty with probability 2^-39 a step.
    {"noise_multiplier": 2.0, "max_grad_norm": 1.0, "rows": 39, "batch_size": 20, "steps": 3, "clipping": "adaptive",
     "target_unclipped_quantile": 0.5, "clipbound_learning_rate": 0.2, "max_clipbound": 1.0, "min_clipbound": 0.1,
     "unclipped_num_std": 4.0},
)


def _engine_entry() -> Entry:
    api = ("opacus.PrivacyEngine", "opacus.optimizers.DPOptimizer", "opacus.GradSampleModule",
           "opacus.grad_sample.GradSampleModule", "opacus.data_loader.DPDataLoader",
           "opacus.optimizers.DPPerLayerOptimizer", "opacus.optimizers.AdaClipDPOptimizer",
           "opacus.optimizers.DPOptimizerFastGradientClipping", "opacus.GradSampleModuleFastGradientClipping",
           "opacus.grad_sample.GradSampleModuleFastGradientClipping",
           "opacus.utils.batch_memory_manager.BatchMemoryManager",
           "opacus.utils.batch_memory_manager.BatchSplittingSampler",
           "opacus.utils.batch_memory_manager.wrap_data_loader")
    return Entry("PrivacyEngine.make_private", api, "model", _ENGINE_TEXT, ADD_REMOVE, ENGINE_GRID, _engine_build)


_ACCOUNTANTS = {
    "rdp": ("RDPAccountant", "opacus.accountants.RDPAccountant.get_epsilon: 'Return privacy budget (epsilon) "
                             "expended so far' from the RDP of the sampled Gaussian (compute_rdp) at "
                             "DEFAULT_ALPHAS; claim: that RDP curve (Mironov, Talwar & Zhang 2019)"),
    "prv": ("PRVAccountant", "opacus.accountants.PRVAccountant.get_epsilon(delta, eps_error=0.01): the "
                             "discretised PRV's ε within eps_error (Gopi, Lee & Wutschitz 2021); claim: its "
                             "profile δ̂(ε − 0.01) + δ/1000"),
    "gdp": ("GaussianAccountant", "opacus.accountants.GaussianAccountant.get_epsilon(delta, poisson=True): μ-GDP "
                                  "with μ = compute_mu_poisson (CLT, Bu, Dong, Long & Su 2020); its constructor "
                                  "warns 'GDP accounting is experimental and can underestimate privacy expenditure'"),
}
#: (q, σ, T): a moderate DP-SGD step count, one step of a small batch with little noise (where
#: the CLT is known to be least accurate), and one large-batch step.
_ACCOUNTANT_GRID = ({"sample_rate": 0.25, "noise_multiplier": 1.0, "steps": 4},
                    {"sample_rate": 0.1, "noise_multiplier": 0.5, "steps": 1},
                    {"sample_rate": 0.5, "noise_multiplier": 1.0, "steps": 1})


#: meta-pytorch/opacus#384: the GDP accountant's CLT can under-report ε (a warning since PR #400).
OPACUS_384 = "meta-pytorch/opacus#384 (GDP accounting can underestimate ε; warned about since PR #400)"


def _accountant_entry(accountant: str) -> Entry:
    name, text = _ACCOUNTANTS[accountant]

    def build(point):
        q, sigma, steps = point["sample_rate"], point["noise_multiplier"], point["steps"]
        claim, reported = claim_of(accountant, q, sigma, steps)
        truth = PoissonSubsampledGaussian(sigma, q, steps, epsilon=reported, delta=DELTA)
        params = {"noise_multiplier": sigma, "sample_rate": q, "steps": steps}
        pairs = [(np.array([[0.5]]), np.array([[0.5], [1.0]]), "add a row with clipped gradient +C"),
                 (np.zeros((0, 1)), np.array([[0.0]]), "empty vs one row with clipped gradient −C")]
        mechanism = LibraryRelease(subsampled_gaussian, params, f"opacus.accountants.{name}({point_label(point)})", claim,
                                   steps + 1, batch=truth, reference=truth)
        return Case(f"accountants.{name}", point_label(point), {**point, "opacus_epsilon": reported, "delta": DELTA},
                    mechanism, claim, _scenario.from_pairs(pairs, ADD_REMOVE), subsampled_gaussian, params, "batch",
                    statistic="coordinates" if steps > 1 else "auto",
                    layout=tuple((f"step {t + 1}", None) for t in range(steps)),
                    known=OPACUS_384 if accountant == "gdp" else "")
    return Entry(f"accountants.{name}", (f"opacus.accountants.{name}",), "accountant", text, ADD_REMOVE,
                 _ACCOUNTANT_GRID, build)


def entries() -> tuple[Entry, ...]:
    """The whole catalogue."""
    return (_engine_entry(),) + tuple(_accountant_entry(a) for a in ("rdp", "prv", "gdp"))


def _defined_in(module) -> list[str]:
    """Public classes and functions ``module`` defines itself (not the names it imports)."""
    return [n for n in dir(module) if not n.startswith("_") and getattr(getattr(module, n), "__module__", None)
            == module.__name__ and callable(getattr(module, n))]


def public_api() -> tuple[str, ...]:
    """The installed release's DP-relevant public names: ``opacus.__all__`` (without ``utils`` and
    ``__version__``), ``__all__`` of ``accountants``, ``optimizers`` and ``grad_sample``, and the
    classes and functions ``data_loader``, ``utils.uniform_sampler`` and
    ``utils.batch_memory_manager`` define."""
    packages = {name: importlib.import_module(f"opacus.{name}") for name in
                ("accountants", "optimizers", "grad_sample", "data_loader", "utils.uniform_sampler",
                 "utils.batch_memory_manager")}
    names = [f"opacus.{n}" for n in opacus.__all__ if n not in ("utils", "__version__")]
    for name in ("accountants", "optimizers", "grad_sample"):
        names += [f"opacus.{name}.{n}" for n in packages[name].__all__]
    for name in ("data_loader", "utils.uniform_sampler", "utils.batch_memory_manager"):
        names += [f"opacus.{name}.{n}" for n in _defined_in(packages[name])]
    return tuple(sorted(set(names)))


_DISTRIBUTED = "not yet written: needs a torch.distributed process group"
_HOOKS = "not DP: per-sample gradient machinery; privacy comes from the optimizer's clipping and noise"
_EXCLUDED = {
    "opacus.accountants.IAccountant": "not DP: an abstract base class",
    "opacus.accountants.register_accountant": "not DP: registers a user's accountant class",
    "opacus.accountants.create_accountant": "covered through another entry: accountants.* (it builds "
                                            "RDPAccountant, PRVAccountant or GaussianAccountant by name)",
    "opacus.optimizers.DistributedDPOptimizer": _DISTRIBUTED,
    "opacus.optimizers.DistributedDPOptimizerFastGradientlipping": _DISTRIBUTED,
    "opacus.optimizers.FSDPOptimizerFastGradientClipping": _DISTRIBUTED,
    "opacus.optimizers.SimpleDistributedPerLayerOptimizer": _DISTRIBUTED,
    "opacus.data_loader.CollateFnWithEmpty": "not DP: the collate function of empty Poisson batches "
                                             "(covered through PrivacyEngine.make_private, whose batches may be empty)",
    "opacus.data_loader.collate": "not DP: collates a (possibly empty) Poisson batch",
    "opacus.data_loader.wrap_collate_with_empty": "not DP: wraps a collate function for empty batches",
    "opacus.data_loader.shape_safe": "not DP: a shape helper",
    "opacus.data_loader.dtype_safe": "not DP: a dtype helper",
    "opacus.data_loader.switch_generator": "not DP: replaces a data loader's generator",
    "opacus.utils.uniform_sampler.UniformWithReplacementSampler": "covered through another entry: "
        "PrivacyEngine.make_private (the Poisson batch sampler of its DPDataLoader; which rows are in a batch is "
        "not DP by itself)",
    "opacus.utils.uniform_sampler.DistributedUniformWithReplacementSampler": _DISTRIBUTED,
}
for _name in ("AbstractGradSampleHooks", "GradSampleHooks", "GradSampleHooksFastGradientClipping",
              "GradSampleHooksFastGradientClippingFSDP", "GradSampleHooksFastGradientClippingTP", "GradSampleHooksNoOp",
              "register_grad_sampler", "register_norm_sampler", "create_or_accumulate_grad_sample", "prepare_module",
              "wrap_model", "get_gsm_class", "AbstractGradSampleModule", "GradSampleModuleNoOp",
              "GradSampleModuleExpandedWeights"):
    _EXCLUDED[f"opacus.grad_sample.{_name}"] = _HOOKS
_EXCLUDED["opacus.grad_sample.GradSampleModuleFastGradientClippingFSDP"] = _DISTRIBUTED
_EXCLUDED["opacus.grad_sample.GradSampleModuleFastGradientClippingTP"] = _DISTRIBUTED

LIBRARY = register_library(Library(
    name="opacus", distribution="opacus", entries=entries, public_api=public_api, excluded=_EXCLUDED,
    script_header=("import contextlib\nimport inspect\nimport logging\n\nimport numpy as np\nimport torch\nfrom opacus import PrivacyEngine\n"
                   "from opacus.utils.batch_memory_manager import BatchMemoryManager\n\n"
                   "logging.getLogger('opacus.data_loader').setLevel(logging.ERROR)  # empty Poisson batches\n"),
    helpers=(), seeded=True))
