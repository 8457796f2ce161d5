"""Golden values for sample_size_for_half_width with a paired discordance psi.

Independent check by simulation: draw data sets of n items from the table with equal margins p
and discordance psi (both right p - psi/2, only A psi/2, only B psi/2, neither 1 - p - psi/2),
compute Newcombe's (1998) method-10 paired interval on each (written here from the paper and
checked against Fagerland, Lydersen and Laake's Cavo example, -0.1186 to -0.0046), and find the
smallest n whose mean realised half-width is at most h. Every n uses 200,000 data sets drawn
with numpy default_rng(1987).

Run: python3 paired_sample_size.py (SciPy 1.17.1, NumPy 2.4.6).
"""
import math

import numpy as np
from scipy import stats


def wilson(x, n, z):
    p = x / n
    centre, denominator = p + z * z / (2 * n), 1 + z * z / n
    half = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    low = np.where(x <= 0, 0.0, (centre - half) / denominator)
    high = np.where(x >= n, 1.0, (centre + half) / denominator)
    return low, high


def newcombe_paired(a, b, c, d, confidence):
    a, b, c, d = (np.asarray(v, float) for v in (a, b, c, d))
    n = a + b + c + d
    z = stats.norm.ppf(1 - (1 - confidence) / 2)
    p1, p2 = (a + b) / n, (a + c) / n
    l1, u1 = wilson(a + b, n, z)
    l2, u2 = wilson(a + c, n, z)
    margins = (a + b) * (c + d) * (a + c) * (b + d)
    excess = a * d - b * c
    numerator = np.where(excess > n / 2, excess - n / 2, np.where(excess >= 0, 0.0, excess))
    with np.errstate(invalid="ignore", divide="ignore"):
        phi = np.where(margins > 0, numerator / np.sqrt(margins), 0.0)
    low = p1 - p2 - np.sqrt(np.maximum(
        (p1 - l1) ** 2 - 2 * phi * (p1 - l1) * (u2 - p2) + (u2 - p2) ** 2, 0))
    high = p1 - p2 + np.sqrt(np.maximum(
        (u1 - p1) ** 2 - 2 * phi * (u1 - p1) * (p2 - l2) + (p2 - l2) ** 2, 0))
    return np.maximum(low, -1), np.minimum(high, 1)


def mean_half_width(n, p, psi, confidence, data_sets=200_000, seed=1987):
    rng = np.random.default_rng(seed)
    tables = rng.multinomial(n, [p - psi / 2, psi / 2, psi / 2, 1 - p - psi / 2], size=data_sets)
    low, high = newcombe_paired(*tables.T, confidence)
    return ((high - low) / 2).mean()


print("Cavo", newcombe_paired(59, 6, 16, 80, 0.95))  # (-0.11862..., -0.00462...)
for p, h, confidence, psi in [(0.82, 0.02, 0.95, 0.1), (0.5, 0.05, 0.95, 0.3),
                              (0.7, 0.05, 0.95, 0.25), (0.5, 0.05, 0.95, 0.02),
                              (0.82, 0.05, 0.95, 0.05)]:
    normal = math.ceil(stats.norm.ppf(1 - (1 - confidence) / 2) ** 2 * psi / h / h)
    n = normal
    while mean_half_width(n, p, psi, confidence) > h:
        n += 1
    while n > 1 and mean_half_width(n - 1, p, psi, confidence) <= h:
        n -= 1
    print(p, h, confidence, psi, "z^2 psi / h^2 ->", normal, "smallest simulated n", n,
          "mean half-width there", repr(mean_half_width(n, p, psi, confidence)))
# Cavo (-0.11862119563870992, -0.004625113933050061)
# p     h    conf psi   z^2 psi/h^2  smallest simulated n  mean half-width there
# 0.82  0.02 0.95 0.1    961          979                  0.01999773972269918
# 0.5   0.05 0.95 0.3    461          459                  0.04999443869950547
# 0.7   0.05 0.95 0.25   385          386                  0.04993371336498014
# 0.5   0.05 0.95 0.02    31           54                  0.049716928495491884
# 0.82  0.05 0.95 0.05    77          107                  0.04984992608162949
