"""Golden values for min_detectable_difference with a paired correlation.

The reference is the power of the test the formula plans for: McNemar's asymptotic test
without continuity correction, |b - c| / sqrt(b + c) > z, rejecting nothing when b + c = 0.
Items are pairs (A, B) of Bernoulli outcomes with margins p + d/2 and p - d/2 and correlation
rho, so P(both) = pa*pb + rho*sqrt(pa(1 - pa) pb(1 - pb)). The power is summed exactly over
the discordant count m ~ Bin(n, psi) and b | m ~ Bin(m, p10/psi); brentq finds the difference
d at which it equals the target. A Monte Carlo run that draws the correlated pairs one item at
a time (200,000 data sets, numpy default_rng(20240601)) checks the enumeration.

Run: python3 paired_power.py (SciPy 1.17.1, NumPy 2.4.6).
"""
import numpy as np
from scipy import optimize, stats


def cells(p, d, rho):
    pa, pb = p + d / 2, p - d / 2
    both = pa * pb + rho * np.sqrt(pa * (1 - pa) * pb * (1 - pb))
    return pa - both, pb - both  # only A, only B


def mcnemar_power(n, only_a, only_b, confidence):
    z = stats.norm.ppf(1 - (1 - confidence) / 2)
    psi = only_a + only_b
    total = 0.0
    for m in range(1, n + 1):
        b = np.arange(m + 1)
        rejects = np.abs(2 * b - m) / np.sqrt(m) > z
        total += stats.binom.pmf(m, n, psi) * stats.binom.pmf(b[rejects], m, only_a / psi).sum()
    return total


def simulated_power(n, p, confidence, d, rho, data_sets=200_000, seed=20240601):
    rng = np.random.default_rng(seed)
    pa, pb = p + d / 2, p - d / 2
    both = pa * pb + rho * np.sqrt(pa * (1 - pa) * pb * (1 - pb))
    z = stats.norm.ppf(1 - (1 - confidence) / 2)
    rejected = 0
    for _ in range(data_sets // 1000):
        a = rng.random((1000, n)) < pa
        u = rng.random((1000, n))
        b = np.where(a, u < both / pa, u < (pb - both) / (1 - pa))
        only_a, only_b = (a & ~b).sum(1), (~a & b).sum(1)
        m = only_a + only_b
        with np.errstate(invalid="ignore", divide="ignore"):
            rejected += np.sum((m > 0) & (np.abs(only_a - only_b) / np.sqrt(m) > z))
    return rejected / data_sets


for n, p, confidence, power, rho in [(280, 0.82, 0.95, 0.8, 0.6), (1000, 0.3, 0.90, 0.9, 0.25)]:
    d = optimize.brentq(
        lambda d: mcnemar_power(n, *cells(p, d, rho), confidence) - power, 1e-4, 0.1, xtol=1e-12)
    print(n, p, confidence, power, rho, "difference", repr(d),
          "simulated power there", simulated_power(n, p, confidence, d, rho))
# 280 0.82 0.95 0.8 0.6 difference 0.05680538414464921 simulated power there 0.799295
# 1000 0.3 0.9 0.9 0.25 difference 0.051910332297792926 simulated power there 0.90046
