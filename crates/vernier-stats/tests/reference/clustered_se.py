"""Golden value for clustered_mean_se from statsmodels' cluster-robust covariance.

Run: python3 clustered_se.py (statsmodels 0.15.0, NumPy 2.4.6). WLS of the samples on a
constant, weights 1/n_k (each task weighs the same), cov_type='cluster' with groups = task.
statsmodels' default correction is G/(G - 1) * (N - 1)/(N - k) with k = 1, i.e. G/(G - 1),
which turns the sandwich sum_k (m_k - mu)^2 / G^2 into s^2 / G, the crate's formula.
"""
import numpy as np
import statsmodels.api as sm

tasks = [[1, 1, 0, 1], [0, 0, 0], [1, 1, 1, 1, 1], [0.5, 1], [0, 1, 0, 0, 1, 1]]
sizes = [len(t) for t in tasks]
y = np.concatenate(tasks)
task = np.repeat(np.arange(len(tasks)), sizes)
w = np.repeat([1 / k for k in sizes], sizes)
fit = sm.WLS(y, np.ones_like(y), weights=w).fit(cov_type="cluster", cov_kwds={"groups": task})
print(repr(fit.params[0]), repr(fit.bse[0]))  # 0.5999999999999999 0.16955824957813162
raw = sm.WLS(y, np.ones_like(y), weights=w).fit(
    cov_type="cluster", cov_kwds={"groups": task, "use_correction": False})
print(repr(raw.bse[0]))  # 0.15165750888103094 = 0.1695582... * sqrt(4/5)
