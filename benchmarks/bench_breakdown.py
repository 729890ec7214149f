"""Where the time of the three kernels above their speed goals goes, on Electricity (45,312 x 8, logistic).

`python benchmarks/run.py --only breakdown [--timer cpu]` (writes `results/speed_breakdown.csv`). Every row is the
best of k calls, divided by the floor `X.T @ r` (single-threaded BLAS, Fortran-ordered X, the speed section's floor)
ticked between those calls in the same process (`floor.Floor`: its best and median tick are stored on every row);
the load average is recorded on every row, and the floor row's note gives the design's size and the level-2 cache
of one core. The parts of each kernel are timed apart:

* DP-SGD, batch 64, one epoch: the epoch through `dp_sgd` (marginal cost, as in `speed.csv`); the kernel alone
  (`sgd_steps_dense` on batches and noise drawn beforehand); the same kernel on a C-ordered copy of X (rows
  contiguous: what the strided reads of the Fortran-ordered design cost); the same kernel with a record-by-record
  gather (`_steps_rows`: the same iterate, bit for bit, checked); the gather alone (the epoch's records read
  from the Fortran-ordered X into the kernel's small buffer, with their margins: `_gather_dense`, column by column,
  and `_gather_rows`, record by record; and `_gather_columns`, all the epoch's records gathered ahead one column
  of X at a time, so that a column's cache lines serve many records: it needs an n x p buffer, O(np) memory, and
  shows what locality alone would buy), and the kernel with the records gathered so (`_steps_ahead`, at most 2^18
  numbers gathered ahead, then each slice copied from that buffer with its margins: the same iterate, bit for
  bit, checked); the Poisson sampler of one epoch (`poisson_batches`) and its standard
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
from dp_cd.solvers.dpsgd import _clip_factors, _add_weighted, _sgd_update_px, _SLICE, _FUSED_MIN, _records_dense
from dp_cd.solvers.dpgcd import dp_gcd, clipped_gradient_dense
from floor import Floor


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


@njit(cache=False, error_model='numpy')
def _gather_columns(X, idx, buf):
    "The records `idx` gathered one column of X at a time into the rows of `buf` (p, len(idx)): O(np) memory."
    for j in range(X.shape[1]):
        for k in range(idx.shape[0]): buf[j, k] = X[idx[k], j]


_AHEAD = 1 << 18   # numbers gathered ahead by `_steps_ahead` (2 MiB, like a block of noise)


@njit(cache=False, error_model='numpy')
def _from_buffer(buf, off, m, y, norms, rows, Xb, yb, nb, w, zb):
    "`_gather_dense` (no intercept) from the records gathered ahead into `buf[:, off:off + m]`: the same margins."
    for k in range(m):
        i = rows[k]
        zb[k], yb[k], nb[k] = 0.0, y[i], norms[i]
    for j in range(buf.shape[0]):
        wj = w[j]
        for k in range(m):
            x = buf[j, off + k]
            Xb[j, k] = x
            zb[k] += x * wj


@njit(cache=False)
def _steps_ahead(X, y, norms, w, loss, penalty, scales, batches, noise):
    "`sgd_steps_dense` (no intercept) reading the records of up to `_AHEAD` numbers' worth of steps gathered ahead."
    (code, param), (step, clip, inv_b, noise_std), (ptr, idx) = loss, scales, batches
    p, T = w.shape[0], ptr.shape[0] - 1
    Xb, g = np.empty((p, _SLICE)), np.empty(p)
    zb, yb, nb, db = np.empty(_SLICE), np.empty(_SLICE), np.empty(_SLICE), np.empty(_SLICE)
    ahead = max(_SLICE, _AHEAD // p)
    buf = np.empty((p, min(ahead, ptr[T] - ptr[0])))
    t0 = 0
    while t0 < T:
        t1 = t0
        while t1 < T and ptr[t1 + 1] - ptr[t0] <= ahead: t1 += 1
        fits = t1 > t0
        if fits: _gather_columns(X, idx[ptr[t0]:ptr[t1]], buf)
        for t in range(t0, max(t1, t0 + 1)):
            g[:] = 0.0
            lo, hi = ptr[t], ptr[t + 1]
            if hi - lo < _FUSED_MIN:
                _records_dense(X, y, norms, w, code, param, clip, idx[lo:hi], 0.0, g)
            else:
                for s in range(lo, hi, _SLICE):
                    rows = idx[s:min(s + _SLICE, hi)]
                    m = rows.shape[0]
                    if fits: _from_buffer(buf, s - ptr[t0], m, y, norms, rows, Xb, yb, nb, w, zb)
                    else: _gather_dense(X, y, norms, rows, 0.0, Xb, yb, nb, w, zb)
                    kernel_deriv_range(code, param, zb, yb, db, 0, m)
                    _clip_factors(db, nb, clip, m)
                    _add_weighted(Xb, db, m, g)
            _sgd_update_px(w, g, penalty[0], penalty[1], step, inv_b, noise_std, noise, t, p)
        t0 = max(t1, t0 + 1)


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


def bench_breakdown(load_problem, best_of, marginal, data_dir, k, clock=None):
    X, y, src = load_problem("electricity", data_dir)
    n, p = X.shape
    loss, pen, delta = LogisticLoss(), L2(1e-3), 1.0 / n**2
    r = np.random.default_rng(0).normal(size=n)
    floor = Floor(X, r, *([clock] if clock else [])).__enter__()   # ticked before every timed call (`best_of`), in this process
    rows = []
    def row(solver, part, seconds, note=""):   # the ratio at the end, with the floor's best tick
        rows.append(dict(dataset="electricity", source=src, n=n, p=p, solver=solver, part=part, seconds=seconds,
                         vs_floor=None, load=os.getloadavg()[0], note=note))
        print(f"  {solver:18s} {part:58s} {seconds * 1e3:9.3f} ms", flush=True)
    row("floor", "X.T @ r", np.nan, f"Fortran-ordered X ({X.nbytes / 2**20:.1f} MiB), one BLAS thread; "
        f"L2 cache per core: {_l2_size()}; best of the ticks between the timings below")

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
    assert np.array_equal(kern(X), kern(X, _steps_ahead))   # and the gather ahead
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
    buf = np.empty((p, idx.shape[0]))
    _gather_columns(X, idx, buf)
    assert np.array_equal(buf, X[idx].T)
    row("DP-SGD batch 64", "gather ahead: the epoch's records one column at a time (O(np) buffer)",
        best_of(lambda: _gather_columns(X, idx, buf), k), "each column's lines reused by many records; no margins")
    row("DP-SGD batch 64", "kernel alone, records gathered ahead one column at a time (2 MiB buffer)",
        best_of(lambda: kern(X, _steps_ahead), k), "_steps_ahead: the gather above, then each slice copied back")
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
    floor.__exit__()
    rows[0]["seconds"] = floor.best
    for r_ in rows: r_.update(vs_floor=r_["seconds"] / floor.best, **floor.fields())
    print(f"  {floor}")
    for r_ in rows:
        print(f"  {r_['solver']:18s} {r_['part']:58s} {r_['seconds'] * 1e3:9.3f} ms / {floor.best * 1e3:.4f} ms "
              f"= {r_['vs_floor']:6.2f} x floor")
    return rows
