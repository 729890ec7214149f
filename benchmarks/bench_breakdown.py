"""Where the time of the three kernels above their speed goals goes, on Electricity (45,312 x 8, logistic).

`python benchmarks/run.py --only breakdown` (writes `results/speed_breakdown.csv`). Every row is the best of k
calls, divided by the floor `X.T @ r` (single-threaded BLAS, Fortran-ordered X, the speed section's floor) timed
in the same process; the load average is recorded on every row. The parts of each kernel are timed apart:

* DP-SGD, batch 64, one epoch: the epoch through `dp_sgd` (marginal cost, as in `speed.csv`); the kernel alone
  (`sgd_steps_dense` on batches and noise drawn beforehand); the same kernel on a C-ordered copy of X (rows
  contiguous: what the strided reads of the Fortran-ordered design cost); the gather alone (the epoch's records read
  from the Fortran-ordered X into the kernel's small buffer, with their margins: `_gather_dense`); the Poisson
  sampler of one epoch (`poisson_batches`) and its standard exponential draws alone; the noise of one epoch.
* DP-CD, logistic, one pass: the pass through `dp_cd` (marginal), the kernel alone (`dpcd_inner_dense`), the same
  kernel with the squared loss (no exponential), and the n*p logistic derivatives alone (`kernel_deriv_range` over
  a vector of n*p margins: the exponential and division every pass must evaluate).
* DP-GCD, one iteration on one thread: through `dp_gcd` (marginal), the n derivatives (`kernel_deriv_range`) and the
  n*p clipped column sums (`clipped_gradient_dense`).
"""
import os
import numpy as np
from numba import njit

from dp_cd.model.losses import LogisticLoss, SquaredLoss, kernel_deriv_range
from dp_cd.model.penalties import L2
from dp_cd.solvers.dpcd import dp_cd, dpcd_inner_dense, noise_blocks
from dp_cd.solvers.dpsgd import dp_sgd, poisson_batches, sgd_steps_dense, clipping_norms
from dp_cd.solvers.dpsgd import _gather_dense   # the kernel's own gather (a benchmark reads internals)
from dp_cd.solvers.dpgcd import dp_gcd, clipped_gradient_dense


@njit(cache=False)
def _gather_epoch(X, y, norms, ptr, idx, w):
    "The gather of `sgd_steps_dense` for every step of (ptr, idx), nothing else."
    Xb, zb = np.empty((X.shape[1], 256)), np.empty(256)
    yb, nb = np.empty(256), np.empty(256)
    for t in range(ptr.shape[0] - 1):
        for s in range(ptr[t], ptr[t + 1], 256):
            _gather_dense(X, y, norms, idx[s:min(s + 256, ptr[t + 1])], 0.0, Xb, yb, nb, w, zb)


def bench_breakdown(load_problem, best_of, marginal, data_dir, k):
    X, y, src = load_problem("electricity", data_dir)
    n, p = X.shape
    loss, pen, delta = LogisticLoss(), L2(1e-3), 1.0 / n**2
    r = np.random.default_rng(0).normal(size=n)
    floor = best_of(lambda: X.T @ r, 10 * k)
    rows = []
    def row(solver, part, seconds, note=""):
        rows.append(dict(dataset="electricity", source=src, n=n, p=p, solver=solver, part=part, seconds=seconds,
                         vs_floor=seconds / floor, load=os.getloadavg()[0], note=note))
        print(f"  {solver:18s} {part:58s} {seconds * 1e3:9.3f} ms = {seconds / floor:6.2f} x floor", flush=True)
    row("floor", "X.T @ r", floor, "Fortran-ordered X, one BLAS thread")

    # DP-SGD, batch 64: one epoch = T = n/64 steps
    B, T = 64, int(round(n / 64))
    L = loss.smoothness(X)
    sgd = lambda P: dp_sgd(X, y, loss, pen, epsilon=1.0, delta=delta, n_passes=P, step=1.0 / L, clip=1.0,
                           batch_size=B, accountant="rdp", random_state=0)
    sgd(1)
    row("DP-SGD batch 64", "epoch through dp_sgd (marginal)", marginal(sgd, 1, k, cap=33), "as speed.csv")
    rng = np.random.default_rng(0)
    ptr, idx = poisson_batches(rng, n, B / n, T)
    noise, norms, w = rng.standard_normal((T, p)), clipping_norms(X), np.zeros(p)
    Xc = np.ascontiguousarray(X)
    def kern(design): sgd_steps_dense(design, y, norms, w.copy(), loss.kernel_args(), pen.kernel_args(),
                                      (1.0 / L, 1.0, 1.0 / B, 0.5), (ptr, idx), noise)
    for design, what in ((X, "kernel alone (Fortran-ordered X, as the solver runs it)"),
                         (Xc, "kernel alone on a C-ordered copy of X (contiguous rows)")):
        kern(design)
        row("DP-SGD batch 64", what, best_of(lambda: kern(design), k))
    _gather_epoch(X, y, norms, ptr, idx, w)
    row("DP-SGD batch 64", "gather alone: the epoch's records from the Fortran X", best_of(
        lambda: _gather_epoch(X, y, norms, ptr, idx, w), k), "p scattered reads per record, with its margin")
    g = np.random.default_rng(1)
    row("DP-SGD batch 64", "Poisson sampler of one epoch (poisson_batches)",
        best_of(lambda: poisson_batches(g, n, B / n, T), k))
    row("DP-SGD batch 64", "of which its standard exponential draws", best_of(
        lambda: g.standard_exponential(int(n + 10 * np.sqrt(n) + 16)), k), "one draw per sampled record")
    row("DP-SGD batch 64", "noise of one epoch (standard_normal((T, p)))", best_of(
        lambda: g.standard_normal((T, p)), k))

    # DP-CD, logistic: one pass = p coordinate updates
    M = loss.coordinate_smoothness(X)
    cd = lambda P: dp_cd(X, y, loss, pen, epsilon=1.0, delta=delta, n_passes=P, step=1.0, clip=1.0,
                         smoothness=M, random_state=0)
    cd(2)
    row("DP-CD logistic", "pass through dp_cd (marginal)", marginal(cd, 5, k), "as speed.csv")
    Mq = np.maximum(M, 1e-12)
    scales = (0.5 / Mq, np.sqrt(Mq / Mq.sum()))
    block = next(noise_blocks(np.random.default_rng(0), np.full(p, 1e-3), 1, 2 * p))
    for lo, what in ((loss, "kernel alone (dpcd_inner_dense), logistic"),
                     (SquaredLoss(), "kernel alone, squared loss (no exponential)")):
        run = lambda: dpcd_inner_dense(lo.kernel_args(), pen.kernel_args(), X, y, np.zeros(n), np.zeros(p),
                                       block, scales)
        run()
        row("DP-CD logistic", what, best_of(run, k) / 2)
    zz, yy = np.random.default_rng(2).normal(size=n * p), np.tile(y, p)
    uu = np.empty(n * p)
    dv = lambda: kernel_deriv_range(*loss.kernel_args(), zz, yy, uu, 0, n * p)
    dv()
    row("DP-CD logistic", "n*p logistic derivatives alone (kernel_deriv_range)", best_of(dv, k),
        "the exponential and division of every entry of a pass")

    # DP-GCD: one iteration on one thread (n_jobs=1, the default)
    gcd = lambda P: dp_gcd(X, y, loss, pen, epsilon=1.0, delta=delta, n_passes=int(P), smoothness=M,
                           random_state=0)
    gcd(2)
    row("DP-GCD 1 thread", "iteration through dp_gcd (marginal)", marginal(gcd, 5, k), "as speed.csv")
    z, u, gg, clips = np.random.default_rng(3).normal(size=n), np.empty(n), np.empty(p), np.ones(p)
    dv1 = lambda: kernel_deriv_range(*loss.kernel_args(), z, y, u, 0, n)
    dv1()
    row("DP-GCD 1 thread", "n derivatives (kernel_deriv_range)", best_of(dv1, 10 * k))
    cg = lambda: clipped_gradient_dense(X, u, clips, gg)
    cg()
    row("DP-GCD 1 thread", "n*p clipped column sums (clipped_gradient_dense)", best_of(cg, 10 * k))
    return rows
