"""Golden values for vernier-stats' Poisson rate statistics, computed independently with
mpmath (50 significant digits): the Garwood interval from mpmath's regularised incomplete
gamma function, the conditional binomial test by direct summation of exact binomial terms,
and the Clopper-Pearson bounds from mpmath's regularised incomplete beta function, each
solved with mpmath.findroot. Run: python3 poisson_rates.py (mpmath 1.3.0)."""
import mpmath as mp

mp.mp.dps = 50


def bisect(f, lo, hi):
    # f decreasing from positive to negative on [lo, hi]
    for _ in range(400):
        mid = (lo + hi) / 2
        if f(mid) > 0:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def garwood(k, t, conf=mp.mpf("0.95")):
    a = 1 - conf
    # P(X <= k; mu) = gammainc(k+1, mu, inf, regularized)
    upper = bisect(lambda mu: mp.gammainc(k + 1, mu, mp.inf, regularized=True) - a / 2, 0, 10 * k + 50)
    lower = 0 if k == 0 else bisect(lambda mu: (1 - mp.gammainc(k, 0, mu, regularized=True)) - (1 - a / 2), 0, 10 * k + 50)
    return k / t, lower / t, upper / t


def pmf(i, n, p):
    return mp.binomial(n, i) * p**i * (1 - p) ** (n - i)


def two_sided(x, n, p):
    d = pmf(x, n, p) * (1 + mp.mpf("1e-7"))
    return min(1, sum(pmf(i, n, p) for i in range(n + 1) if pmf(i, n, p) <= d))


def clopper_pearson(x, n, conf=mp.mpf("0.95")):
    a = 1 - conf
    # P(X >= x; p) = betainc(x, n-x+1, 0, p, regularized)
    lo = 0 if x == 0 else bisect(lambda p: (1 - mp.betainc(x, n - x + 1, 0, p, regularized=True)) - (1 - a / 2), 0, 1)
    hi = 1 if x == n else bisect(lambda p: (1 - mp.betainc(x + 1, n - x, 0, p, regularized=True)) - a / 2, 0, 1)
    return lo, hi


def compare(ka, ta, kb, tb):
    n = ka + kb
    p = mp.mpf(ta) / (ta + tb)
    pv = two_sided(ka, n, p)
    lo, hi = clopper_pearson(ka, n)
    odds = lambda q: mp.inf if q == 1 else q / (1 - q)
    ratio = mp.inf if kb == 0 else (mp.mpf(ka) / ta) / (mp.mpf(kb) / tb)
    return ratio, odds(lo) * tb / ta, odds(hi) * tb / ta, pv


for k, t in [(137, mp.mpf("24.19893")), (0, 1), (3, 1), (5, mp.mpf("2.5"))]:
    r, lo, hi = garwood(k, t)
    print(f"rate k={k} t={t}: rate {mp.nstr(r, 12)} lower {mp.nstr(lo, 12)} upper {mp.nstr(hi, 12)}")
for ka, ta, kb, tb in [(11, 800, 21, 3011), (0, 1, 3, 1), (2, 1, 9, 1), (4, 2, 1, mp.mpf("0.5")), (7, 3, 0, 3)]:
    r, lo, hi, pv = compare(ka, ta, kb, tb)
    print(f"compare {ka}/{ta} vs {kb}/{tb}: ratio {mp.nstr(r, 12)} [{mp.nstr(lo, 12)}, {mp.nstr(hi, 12)}] p {mp.nstr(pv, 12)}")
