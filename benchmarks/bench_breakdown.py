"""Where the time of the three kernels above their speed goals goes, on Electricity (45,312 x 8, logistic).

`python benchmarks/run.py --only breakdown [--timer cpu]` (writes `results/speed_breakdown.csv`). Every row is the
best of k calls, divided by the floor `X.T @ r` (single-threaded BLAS, Fortran-ordered X, the speed section's floor)
timed in the same process; the load average is recorded on every row, and the floor row's note gives the design's
size and the level-2 cache of one core. The parts of each kernel are timed apart:

* DP-SGD, batch 64, one epoch: the epoch through `dp_sgd` (marginal cost, as in `speed.csv`); the kernel alone
  (`sgd_steps_dense` on batches and noise drawn beforehand); the same kernel on a C-ordered copy of X (rows
  contiguous: what the strided reads of the Fortran-ordered design cost); the same kernel with a record-by-record
  gather (`_steps_rows`: the same iterate, bit for bit, checked); the gather alone (the epoch's records read
  from the Fortran-ordered X into the kernel's small buffer, with their margins: `_gather_dense`, column by column,
  and `_gather_rows`, record by record); the Poisson sampler of one epoch (`poisson_batches`) and its standard
  exponential draws alone; the noise of one epoch.
* DP-CD, logistic, one pass: the pass through `dp_cd` (marginal), with per-sample clipping and the intercept (the
  estimator's options) and through `DPClassifier`; the kernel alone (`dpcd_inner_dense`), the same kernel with the
  squared loss (no exponential), the n*p logistic derivatives alone (`kernel_deriv_range`, p times over n margins:
  the exponential and division every pass must evaluate), the same derivatives with the general
  `fast_exp` (the same values, checked), and the same loop with a multiplication in place of the exponential,
  then of the division (what each costs).
* DP-GCD, one iteration on one thread: through `dp_gcd` (marginal), the n derivatives (`kernel_deriv_range`) and the
  n*p clipped column sums (`clipped_gradient_dense`).
"""
import os
import numpy as np
from numba import njit

from dp_cd.estimators import DPClassifier
from dp_cd.model.losses import LogisticLoss, SquaredLoss, kernel_deriv_range, fast_exp
from dp_cd.model.losses import _exp_nonpos   # the logistic derivative's exponential (internals, as above)
from dp_cd.model.penalties import L2
from dp_cd.solvers.dpcd import dp_cd, dpcd_inner_dense, noise_blocks
from dp_cd.solvers.dpsgd import dp_sgd, poisson_batches, sgd_steps_dense, clipping_norms
from dp_cd.solvers.dpsgd import _gather_dense   # the kernel's own gather (a benchmark reads internals)
from dp_cd.solvers.dpsgd import _clip_factors, _add_weighted, _sgd_update_px, _SLICE
from dp_cd.solvers.dpgcd import dp_gcd, clipped_gradient_dense


def _l2_size():
    "The level-2 cache of one core, as Linux reports it (e.g. '2048K'), or 'unknown'."
    try:
        return open("/sys/devices/system/cpu/cpu0/cache/index2/size").read().strip()
    except OSError: return "unknown"


@njit(cache=False, error_model='numpy')
def _gather_rows(X, y, norms, rows, ones, Xb, yb, nb, w, zb):
    "The record-by-record gather (one chain of p dependent multiply-adds per margin), for comparison."
    p = X.shape[1]
    for k in range(rows.shape[0]):
        i = rows[k]
        z = 0.0
        for j in range(p):
            x = X[i, j]
            Xb[j, k] = x
            z += x * w[j]
        if ones != 0.0:
            Xb[p, k] = ones
            z += ones * w[p]
        zb[k], yb[k], nb[k] = z, y[i], norms[i]


@njit(cache=False)
def _gather_epoch(gather, X, y, norms, ptr, idx, w):
    "A gather (`_gather_dense` or `_gather_rows`) for every step of (ptr, idx), nothing else."
    Xb, zb = np.empty((X.shape[1], 256)), np.empty(256)
    yb, nb = np.empty(256), np.empty(256)
    for t in range(ptr.shape[0] - 1):
        for s in range(ptr[t], ptr[t + 1], 256):
            gather(X, y, norms, idx[s:min(s + 256, ptr[t + 1])], 0.0, Xb, yb, nb, w, zb)


@njit(cache=False, inline='always', error_model='numpy')
def _no_exp(z, y):
    "The logistic derivative's formula with a multiplication in place of its exponential."
    m = y * z
    e = 0.5 * abs(m)
    return -y * (e if m >= 0 else 1.0) / (1.0 + e)


@njit(cache=False, inline='always', error_model='numpy')
def _no_div(z, y):
    "The logistic derivative's formula with a multiplication in place of its division."
    m = y * z
    e = _exp_nonpos(-abs(m))
    return -y * (e if m >= 0 else 1.0) * (1.0 + e)


@njit(cache=False, inline='always', error_model='numpy')
def _with_fast_exp(z, y):
    "The logistic derivative with the general `fast_exp` (two powers of two) at -|m|."
    m = y * z
    e = fast_exp(-abs(m))
    return -y * (e if m >= 0 else 1.0) / (1.0 + e)


@njit(cache=False, error_model='numpy')
def _parts_loop(which, z, y, u):
    "u_i = `_no_exp` (which = 0), `_no_div` (1) or `_with_fast_exp` (2) of (z_i, y_i), over all i."
    for i in range(z.shape[0]):
        if which == 0: u[i] = _no_exp(z[i], y[i])
        elif which == 1: u[i] = _no_div(z[i], y[i])
        else: u[i] = _with_fast_exp(z[i], y[i])


@njit(cache=False)
def _steps_rows(X, y, norms, w, loss, penalty, scales, batches, noise):
    "`sgd_steps_dense` (batches of at least `_FUSED_MIN` records) with the record-by-record gather."
    (code, param), (step, clip, inv_b, noise_std), (ptr, idx) = loss, scales, batches
    p = w.shape[0]
    Xb, g = np.empty((p, _SLICE)), np.empty(p)
    zb, yb, nb, db = np.empty(_SLICE), np.empty(_SLICE), np.empty(_SLICE), np.empty(_SLICE)
    for t in range(ptr.shape[0] - 1):
        g[:] = 0.0
        for s in range(ptr[t], ptr[t + 1], _SLICE):
            rows = idx[s:min(s + _SLICE, ptr[t + 1])]
            m = rows.shape[0]
            _gather_rows(X, y, norms, rows, 0.0, Xb, yb, nb, w, zb)
            kernel_deriv_range(code, param, zb, yb, db, 0, m)
            _clip_factors(db, nb, clip, m)
            _add_weighted(Xb, db, m, g)
        _sgd_update_px(w, g, penalty[0], penalty[1], step, inv_b, noise_std, noise, t, p)


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
    row("floor", "X.T @ r", floor, f"Fortran-ordered X ({X.nbytes / 2**20:.1f} MiB), one BLAS thread; "
        f"L2 cache per core: {_l2_size()}")

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
    args = (loss.kernel_args(), pen.kernel_args(), (1.0 / L, 1.0, 1.0 / B, 0.5), (ptr, idx), noise)
    def kern(design, steps=sgd_steps_dense):
        v = w.copy()
        steps(design, y, norms, v, *args)
        return v
    assert np.array_equal(kern(X), kern(X, _steps_rows))   # the two gathers: the same margins, bit for bit
    for design, what in ((X, "kernel alone (Fortran-ordered X, as the solver runs it)"),
                         (Xc, "kernel alone on a C-ordered copy of X (contiguous rows)")):
        kern(design)
        row("DP-SGD batch 64", what, best_of(lambda: kern(design), k))
    row("DP-SGD batch 64", "kernel alone, record-by-record gather (Fortran X)", best_of(
        lambda: kern(X, _steps_rows), k), "one chain of p dependent multiply-adds per margin")
    for gather, what, note in (
            (_gather_dense, "gather alone: the epoch's records from the Fortran X",
             "p scattered reads per record, with its margin; column by column, as the kernel"),
            (_gather_rows, "gather alone, record by record (Fortran X)", "the same reads and sums, record by record")):
        _gather_epoch(gather, X, y, norms, ptr, idx, w)
        row("DP-SGD batch 64", what, best_of(lambda: _gather_epoch(gather, X, y, norms, ptr, idx, w), k), note)
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
    # p passes over n margins (arrays of n, cache-resident like a pass's z and y): n*p derivatives
    zz, uu = np.random.default_rng(2).normal(size=n), np.empty(n)
    def dv():
        for _ in range(p): kernel_deriv_range(*loss.kernel_args(), zz, y, uu, 0, n)
    dv()
    row("DP-CD logistic", "n*p logistic derivatives alone (kernel_deriv_range)", best_of(dv, k),
        "the exponential and division of every entry of a pass (p loops over n margins)")
    u2 = np.empty(n)
    def parts(which, out):
        for _ in range(p): _parts_loop(which, zz, y, out)
    parts(2, u2)
    assert np.array_equal(u2, uu)   # `_exp_nonpos` is `fast_exp` at -|m|, bit for bit
    row("DP-CD logistic", "the same derivatives with the general fast_exp (two powers of two)",
        best_of(lambda: parts(2, u2), k), "what _exp_nonpos saves")
    for which, what, note in ((0, "the same loop, a multiplication in place of the exponential", "the division alone"),
                              (1, "the same loop, a multiplication in place of the division", "the exponential alone")):
        parts(which, u2)
        row("DP-CD logistic", what, best_of(lambda: parts(which, u2), k), note)
    # the estimator's rows last: a fit may leave threads (BLAS, numba) that the CPU clock of the process counts
    cds = lambda P: dp_cd(X, y, loss, pen, epsilon=1.0, delta=delta, n_passes=P, step=1.0, clip=1.0,
                          smoothness=M, random_state=0, clipping="sample", fit_intercept=True)
    cds(2)
    row("DP-CD logistic", "pass through dp_cd, per-sample clipping and intercept (marginal)", marginal(cds, 5, k),
        "the estimator's solver options")
    est = lambda P: DPClassifier(epsilon=1.0, n_passes=int(P), classes=[-1.0, 1.0], random_state=0).fit(X, y)
    est(2)
    row("DP-CD logistic", "pass through DPClassifier (marginal)", marginal(est, 5, k),
        "the default estimator: private bounds, scaled copy, per-sample clipping, intercept")

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
