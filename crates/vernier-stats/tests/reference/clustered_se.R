# Golden value for clustered_mean_se: a weighted regression on a constant with a
# cluster-robust (sandwich) variance, clusters = tasks. Weights 1/n_k make every task weigh the
# same, so the coefficient is the mean of the task means. Run: Rscript clustered_se.R
# (R 4.2.2, sandwich 3.0.2).
#
# vcovCL's HC1 scales the sandwich by G/(G - 1) * (N - 1)/(N - k). Here k = 1 (the constant),
# so the second factor is 1; the bread is sum(w) = G and each cluster's score is
# sum_i w_i (y_i - mu) = m_k - mu, so V = G/(G - 1) * sum_k (m_k - mu)^2 / G^2 = s^2 / G:
# exactly the crate's se^2 = s(m)^2 / K.
options(digits = 17)
library(sandwich)
tasks <- list(c(1, 1, 0, 1), c(0, 0, 0), c(1, 1, 1, 1, 1), c(0.5, 1), c(0, 1, 0, 0, 1, 1))
y <- unlist(tasks)
task <- rep(seq_along(tasks), lengths(tasks))
w <- rep(1 / lengths(tasks), lengths(tasks))
fit <- lm(y ~ 1, weights = w)
print(coef(fit))                                            # 0.59999999999999976
print(sqrt(vcovCL(fit, cluster = task, type = "HC1")))      # 0.16955824957813165
