"""The f-DP one-run bound (Mahloujifar, Melis & Chaudhuri, ICML 2025), stated and proved here.

**Game.**  m canaries; S₁, …, S_m are independent fair coins (S_j = 1: canary j is in the run),
independent of everything else.  The mechanism runs once and outputs Y.  The auditor makes exactly
k guesses T_j ∈ {0, 1} and abstains on the other m − k canaries (here: "in" for the k₊ highest
scores, "out" for the k₋ lowest, k = k₊ + k₋ fixed before anything is seen, ties broken by a random
order independent of S).  C is the number of correct guesses, W = k − C the wrong ones.

**Proposition.**  Suppose that for every canary j and every value s of the other bits S₋ⱼ the
laws of Y given (S_j = 0, s) and given (S_j = 1, s), a pair of neighbouring datasets, have trade-off
curve ≥ f in both orders, and let F = 1 − f (concave, non-decreasing).  Then for i = 1, …, k

    (★)   E[C·1{C ≥ i}]  ≤  m · F( E[W·1{C ≥ i − 1}] / m ).

*Proof.*  Fix j, b ∈ {0, 1} and i, and let E = {T_j = b, C₋ⱼ ≥ i − 1}, with C₋ⱼ the correct guesses
among the other canaries.  E is a function of (Y, S₋ⱼ) and the auditor's own randomness, so given
S₋ⱼ = s it is a test between the two neighbours and P(E | S_j = b, s) ≤ F(P(E | S_j = 1 − b, s));
averaging over s (the same law under both values of S_j) and Jensen's inequality for the concave F
give P(E | S_j = b) ≤ F(P(E | S_j ≠ b)).  On {S_j = b}, E is "guess j correct and C ≥ i"; on
{S_j ≠ b} it is "guess j wrong and C ≥ i − 1".  So x_{jb} = P(T_j = b = S_j, C ≥ i) and
y_{jb} = P(T_j = b ≠ S_j, C ≥ i − 1) satisfy x_{jb} ≤ ½F(2y_{jb}).  Summing over b and j and using
concavity twice, Σ_{j,b} x_{jb} ≤ m F(Σ_{j,b} y_{jb}/m), and the two sums are E[C·1{C ≥ i}] and
E[W·1{C ≥ i − 1}].  ∎

**The test.**  Let p_t = P(C = t) and, normalized by m, R_i = Σ_{t≥i} t·p_t/m and
H_i = Σ_{t≥i} (k − t)·p_t/m; (★) is R_i ≤ F(H_{i−1}) and the total mass is (m/k)(R₀ + H₀) ≤ 1.
Define the greedy sequence, from (r_v, h_v) = (τv/m, τ(k − v)/m) down to i = 0,

    h_i = max(h_{i+1}, F⁻¹(r_{i+1})),    r_i = r_{i+1} + i/(k − i)·(h_i − h_{i+1}).

*Lemma.*  Some law of C with P(C ≥ v) ≥ τ satisfies (★) for every i iff r₀ + h₀ ≤ k/m.
(⇐) p_v = τ, p_i = m(h_i − h_{i+1})/(k − i) ≥ 0 for i < v and the rest of the mass at 0 (which only
enlarges H₀) satisfies (★).  (⇒) Moving all mass above v to v keeps (★) (R_i = 0 for i > v; for
i ≤ v, R_i falls and H_{i−1} grows); then, with κ_i = i/(k − i) increasing in i, induction from
i = v down gives H_i ≥ h_i and R_i − r_i ≥ κ_i(H_i − h_i) ≥ 0 (at i = v both differences are
(p_v − τ)·(v, k − v)/m), so R₀ + H₀ ≥ r₀ + h₀.  ∎

So when r₀ + h₀ > k/m at τ = γ, every mechanism meeting the hypothesis has P(C ≥ v) < γ: observing
v correct guesses rejects f at level γ.  The rejection region is {C ≥ v*} (P(C ≥ v + 1) ≤
P(C ≥ v)), so the test has size < γ.  A pointwise smaller F⁻¹ (a larger μ or ε) gives a pointwise
smaller greedy sequence (same induction), so the rejected parameters form an interval [0, θ*) and
the certified bound is θ* (:func:`audit.one_run.families.largest_rejected`).  Once
F⁻¹(r_{i+1}) ≤ h_{i+1} the sequence stays constant, and r and h only grow, so the loop stops at
the first of these events.  The last comparison uses a relative margin of 1e-9 against rounding,
in the claim's favour.

What the proposition does not need: any independence between the canaries' scores (the mechanism
may entangle them arbitrarily).  What it needs: fair, independent inclusion coins; k fixed in
advance (a k chosen after seeing the scores is paid for by Bonferroni); and the claim f for every
single-canary neighbour pair, in both orders (true of the symmetric G_μ and f_{ε,δ}).

References
----------
S. Mahloujifar, L. Melis and K. Chaudhuri (2025), *Auditing f-differential privacy in one run*,
ICML, PMLR 267:42615–42641: the guessing game with abstentions, its f-DP bound and the recursive
algorithm above (the greedy sequence).
J. Dong, A. Roth and W. J. Su (2022), *Gaussian differential privacy*, JRSS B (trade-off functions).
"""

from __future__ import annotations

from typing import Callable

from .families import PARAMETER_MAX, blow_up_inverse, largest_rejected

__all__ = ["fdp_rejects", "fdp_bound", "greedy_mass"]

_MARGIN = 1e-9


def greedy_mass(m: int, k: int, v: int, level: float, inverse: Callable[[float], float]) -> float:
    """(m/k)·(r₀ + h₀) of the greedy sequence: the least total probability a law of C with
    P(C ≥ v) ≥ ``level`` needs under the curve whose F⁻¹ is ``inverse`` (> 1: impossible).

    The loop stops early once the mass exceeds 1 + 1e-9 (it can only grow), returning that value.
    """
    capacity = k / m
    r = level * v / m
    h = level * (k - v) / m
    stop = capacity * (1.0 + _MARGIN)
    for i in range(v - 1, -1, -1):
        h_next = inverse(r)
        if h_next <= h:
            break  # constant from here on
        r += i / (k - i) * (h_next - h)
        h = h_next
        if r + h > stop:
            break
    return (r + h) / capacity


def fdp_rejects(m: int, k: int, v: int, level: float, inverse: Callable[[float], float]) -> bool:
    """Whether v correct guesses out of k (m canaries) reject the curve with F⁻¹ ``inverse`` at
    ``level``: no law of C with P(C ≥ v) ≥ level satisfies (★)."""
    return greedy_mass(m, k, v, level, inverse) > 1.0 + _MARGIN


def fdp_bound(m: int, k: int, v: int, level: float, family: str, delta: float) -> float:
    """The family parameter certified at ``level``: sup of the rejected μ (or ε at ``delta``)."""
    if v == 0:
        return 0.0
    return largest_rejected(lambda theta: fdp_rejects(m, k, v, level, blow_up_inverse(family, theta, delta)),
                            PARAMETER_MAX[family])
