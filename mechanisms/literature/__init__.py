"""The DP-testing literature's benchmark mechanisms (StatDP, DP-Sniper), with claim and known truth.

Each mechanism is one of the suite shared by StatDP (Ding, Wang, Wang, Zhang & Kifer, CCS 2018)
and DP-Sniper (Bichsel, Steffen, Bogunovic & Vechev, S&P 2021), at the published parameters.  It
takes a vector of query answers, carries the pure ε its authors claim, and says what is known of
the true ε (exact, a lower value, a proof that the claim holds, or nothing).

- :mod:`.base`: :class:`LiteratureMechanism`, :class:`LiteratureTruth`, StatDP's input patterns;
- :mod:`.noisy_answers`: Laplace, truncated geometric, noisy histograms, parallel Laplace, prefix sums;
- :mod:`.noisy_max`: the four report-noisy-max variants;
- :mod:`.rappor`: RAPPOR and one-time RAPPOR (Bloom filter + randomized response);
- :mod:`.svt`: the sparse vector technique variants SVT1–SVT6, SVT34Parallel and NumericalSVT.

Every public name of these modules is importable from ``mechanisms.literature``.
"""

from .base import LiteratureMechanism, LiteratureTruth, TruthKind, laplace_noise, statdp_patterns
from .noisy_answers import LaplaceParallel, LiteratureLaplace, NoisyHist1, NoisyHist2, PrefixSum, TruncatedGeometric
from .noisy_max import ReportNoisyMax1, ReportNoisyMax2, ReportNoisyMax3, ReportNoisyMax4
from .rappor import OneTimeRappor, Rappor, murmur3_32
from .svt import (ABOVE, BELOW, HALTED, NumericalSVT, SparseVectorTechnique1, SparseVectorTechnique2,
                  SparseVectorTechnique3, SparseVectorTechnique4, SparseVectorTechnique5,
                  SparseVectorTechnique6, SVT34Parallel, pattern_probability)

__all__ = [
    # base
    "LiteratureMechanism",
    "LiteratureTruth",
    "TruthKind",
    "laplace_noise",
    "statdp_patterns",
    # noisy_answers
    "LiteratureLaplace",
    "TruncatedGeometric",
    "NoisyHist1",
    "NoisyHist2",
    "LaplaceParallel",
    "PrefixSum",
    # noisy_max
    "ReportNoisyMax1",
    "ReportNoisyMax2",
    "ReportNoisyMax3",
    "ReportNoisyMax4",
    # rappor
    "Rappor",
    "OneTimeRappor",
    "murmur3_32",
    # svt
    "SparseVectorTechnique1",
    "SparseVectorTechnique2",
    "SparseVectorTechnique3",
    "SparseVectorTechnique4",
    "SparseVectorTechnique5",
    "SparseVectorTechnique6",
    "SVT34Parallel",
    "NumericalSVT",
    "pattern_probability",
    "ABOVE",
    "BELOW",
    "HALTED",
]
