"""Golden values for vernier-stats' Poisson rate statistics (src/poisson.rs), computed
independently with mpmath 1.3.0 at 50 significant digits:

- the Garwood interval of one rate: bisection on mpmath's regularised incomplete gamma
  function, P(X <= k; mu) = Q(k + 1, mu) and P(X >= k; mu) = P(k, mu);
- the conditional test of two rates: the exact binomial probabilities, summed as R's
  binom.test does (every outcome no more likely than the observed one, relative tolerance
  1e-7; 1 when x equals n p);
- the Clopper-Pearson bounds behind the interval of the rate ratio: bisection on binomial
  tails summed term by term (no incomplete beta function, unlike the Rust code).

Run: python3 poisson_rates.py (about half a minute). Prints 16 significant figures.
"""
import mpmath as mp

mp.mp.dps = 50
TOLERANCE = 1 + mp.mpf("1e-7")


def bisect(f, lo, hi, steps=400):
    """The root of f, increasing on [lo, hi]."""
    for _ in range(steps):
        mid = (lo + hi) / 2
        if f(mid) < 0:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def garwood(k, t, conf):
    half = (1 - mp.mpf(conf)) / 2
    hi = mp.mpf(k) + 10
    while mp.gammainc(k + 1, hi, mp.inf, regularized=True) > half:
        hi *= 2
    upper = bisect(lambda mu: half - mp.gammainc(k + 1, mu, mp.inf, regularized=True), mp.mpf(0), hi)
    if k == 0:
        lower = mp.mpf(0)
    else:
        lower = bisect(lambda mu: (1 - mp.gammainc(k, mu, mp.inf, regularized=True)) - half, mp.mpf(0), hi)
    return mp.mpf(k) / t, lower / t, upper / t


def pmf(i, n, p):
    return mp.binomial(n, i) * p**i * (1 - p) ** (n - i)


def pmfs(n, p):
    """P(X = i), i = 0..n, by the ratio of successive terms."""
    terms = [(1 - p) ** n]
    for i in range(n):
        terms.append(terms[-1] * (n - i) / (i + 1) * p / (1 - p))
    return terms


def tail_at_most(x, n, p):
    """P(X <= x) for X ~ Binomial(n, p), summed from x away from the mode until the terms
    no longer matter at 50 digits (1 - the upper tail when x is above the mean)."""
    if x < 0:
        return mp.mpf(0)
    if x >= n:
        return mp.mpf(1)
    if x < n * p:
        term = pmf(x, n, p)
        total, i = term, x
        while i > 0 and term > total * mp.mpf("1e-60"):
            term = term * i / (n - i + 1) * (1 - p) / p
            i -= 1
            total += term
        return total
    term = pmf(x + 1, n, p)
    total, i = term, x + 1
    while i < n and term > total * mp.mpf("1e-60"):
        term = term * (n - i) / (i + 1) * p / (1 - p)
        i += 1
        total += term
    return 1 - total


def two_sided(x, n, p):
    if x == n * p:
        return mp.mpf(1)
    terms = pmfs(n, p)
    limit = terms[x] * TOLERANCE
    return min(mp.mpf(1), mp.fsum(t for t in terms if t <= limit))


def clopper_pearson(x, n, conf):
    half = (1 - mp.mpf(conf)) / 2
    # P(X >= x; p) rises with p; P(X <= x; p) falls with p.
    lo = mp.mpf(0) if x == 0 else bisect(lambda p: (1 - tail_at_most(x - 1, n, p)) - half, mp.mpf(0), mp.mpf(1), 200)
    hi = mp.mpf(1) if x == n else bisect(lambda p: half - tail_at_most(x, n, p), mp.mpf(0), mp.mpf(1), 200)
    return lo, hi


def compare(ka, ta, kb, tb, conf):
    ta, tb = mp.mpf(ta), mp.mpf(tb)
    n = ka + kb
    p_value = two_sided(ka, n, ta / (ta + tb))
    lo, hi = clopper_pearson(ka, n, conf)
    odds = lambda q: mp.inf if q == 1 else q / (1 - q)
    ratio = mp.inf if kb == 0 else (ka / ta) / (kb / tb)
    return ratio, odds(lo) * tb / ta, odds(hi) * tb / ta, p_value


def show(v):
    return mp.nstr(v, 16)


RATES = [
    (137, "24.19893", "0.95"),  # R's ?poisson.test example
    (0, "1", "0.95"),
    (3, "1", "0.95"),
    (5, "2.5", "0.95"),
    (1, "1", "0.999999"),
    (1_000_000, "1", "0.01"),
]
COMPARISONS = [
    (11, "800", 21, "3011", "0.95"),  # R's ?poisson.test example
    (0, "1", 3, "1", "0.95"),
    (2, "1", 9, "1", "0.95"),
    (4, "2", 1, "0.5", "0.95"),
    (3, "0.7", 8, "2.9", "0.95"),
    (7, "3", 0, "3", "0.95"),
    (3, "1", 1, "1", "0.95"),
    (1, "1", 1, "1", "0.999999"),
    (49_000, "1", 51_000, "1", "0.95"),
    (49_000, "1", 51_000, "1", "0.10"),
]

for k, t, conf in RATES:
    rate, lower, upper = garwood(k, mp.mpf(t), conf)
    print(f"poisson_rate_interval({k}, {t}, {conf}): rate {show(rate)} [{show(lower)}, {show(upper)}]")
for ka, ta, kb, tb, conf in COMPARISONS:
    ratio, lower, upper, p_value = compare(ka, ta, kb, tb, conf)
    print(
        f"compare_poisson_rates({ka}, {ta}, {kb}, {tb}, {conf}): ratio {show(ratio)} "
        f"[{show(lower)}, {show(upper)}] p {show(p_value)}"
    )
