"""Benchmark of one DP-GCD iteration (`dp_cd.solvers.dpgcd`): full clipped gradient + exponential-mechanism selection +
proximal coordinate step with residual maintenance, noise included (drawn by NumPy, as `dp_gcd` does).

For each problem it prints, measured in the same process, the time of one DP-GCD iteration divided by the time of
one `X.T @ r` product on the same data (dense: NumPy/BLAS on the Fortran array; sparse: scipy CSC).
Problems: Electricity (45,312 x 8, logistic; the real data when `DP_CD_DATA` is set), a dense 100,000 x 100 design,
a Madelon-sized dense design (2600 x 500; the real Madelon when `DP_CD_DATA` is set) and a sparse CSC
design with 100,000 features (1,000 rows, 0.5% density). Target: ratio <= 2.
`X.T @ r` is timed with BLAS limited to one thread (threadpoolctl), and the iteration with numba limited to one
thread (`numba.set_num_threads(1)`): on a shared, loaded machine a multi-threaded BLAS product is much slower and would
flatter the ratio. Times are the best of k runs. Threads: the clipped gradient (derivatives + clipped column sums) and
the whole iteration are then timed with 1 and with all of numba's threads, interleaved in the same process; the
speed-up is printed with the load average (the machine is shared). The floor is ticked between the one-thread
timings (best of 20 products per tick, k ticks): its best tick divides, its median tick is stored next to it.
`--timer cpu` (the default) times the floor and the one-thread iteration and gradient by the CPU time of the
process, which a loaded machine does not inflate (a call longer than a time slice is preempted: its wall-clock
time grows with the load); the threads' comparison is wall-clock (the CPU time would add the threads up). The CSV
stores both: `iteration_1thread_s`, `gradient_1thread_s` by the timer; `*_wall_s` and `*_threads_s` wall-clock.
Also printed: the parts of one iteration (derivatives + clipped gradient, scores, noise draw, race) timed separately.

    python benchmarks/bench_dpgcd.py            # best of 7 x 20 single iterations (and of 7 x 20 products)
    python benchmarks/bench_dpgcd.py --quick    # best of 3 x 20
    python benchmarks/bench_dpgcd.py --repeat 15 --timer wall   # best of 15 x 20; wall-clock one-thread timings
    python benchmarks/bench_dpgcd.py --only electricity,dense   # some of the problems
    python benchmarks/bench_dpgcd.py --only electricity,dense --csv benchmarks/results/dpgcd_threads.csv
"""
import os, sys, time, warnings
import numba
import numpy as np
import scipy.sparse as sp
from dp_cd.model.losses import LogisticLoss
from dp_cd.model.penalties import L1, L2
from threadpoolctl import threadpool_limits
from dp_cd.solvers.dpgcd import dp_gcd, _dpgcd_block, _score_constants, _scores, exponential_race, clipped_gradient_dense, clipped_gradient_sparse
from dp_cd.solvers.dpgcd import _coordinate_constants, _design, _clipped_gradient
from dp_cd.model.losses import LogisticLoss
from dp_cd.model.losses import kernel_deriv_range
from dp_cd.utils import as_design, PrivacyLeakWarning

CLOCK = time.process_time   # the floor and the one-thread timings (--timer cpu, the default; wall: perf_counter)

def _best(f, repeat, clock=time.perf_counter):
    ts = []
    for _ in range(repeat):
        t = clock(); f(); ts.append(clock() - t)
    return min(ts)

def _madelon():
    if os.environ.get("DP_CD_DATA"):
        try:
            from dp_cd import datasets
            ds = datasets.load("madelon", standardize=True); return ds.X, ds.y, "madelon (real, standardised)"
        except Exception as e: print(f"  (could not load madelon: {e}; using a synthetic stand-in)")
    r = np.random.default_rng(0); X = r.normal(size=(2600, 500)); y = np.sign(X[:, :5].sum(1) + r.normal(size=2600))
    return X, y, "dense 2600 x 500 (synthetic stand-in for madelon)"

def _electricity():
    if os.environ.get("DP_CD_DATA"):
        try:
            from dp_cd import datasets
            ds = datasets.load("electricity", standardize=True); return ds.X, ds.y, "electricity (real, standardised)"
        except Exception as e: print(f"  (could not load electricity: {e}; using a synthetic stand-in)")
    r = np.random.default_rng(0); X = r.normal(size=(45312, 8)); y = np.sign(X[:, :3].sum(1) + r.normal(size=45312))
    return X, y, "dense 45312 x 8 (synthetic stand-in for electricity)"

def _dense():
    r = np.random.default_rng(2); X = np.asfortranarray(r.normal(size=(100_000, 100)))
    return X, np.sign(X[:, :5].sum(1) + r.normal(size=100_000)), "dense 100,000 x 100 (synthetic)"

def _sparse():
    r = np.random.default_rng(1)
    X = sp.random(1000, 100_000, density=0.005, format="csc", random_state=1, data_rvs=r.standard_normal)
    y = np.sign(r.normal(size=1000)); return X, y, "sparse CSC 1000 x 100,000 (0.5% density)"

def bench(X, y, name, pen, repeat, T=20):
    "Ratio (one iteration: noise draw + kernel) / (one X.T @ r); the kernel is the one `dp_gcd` runs, on a block of T iterations."
    Xd, sparse = as_design(X); n, p = Xd.shape; loss = LogisticLoss()
    M = loss.coordinate_smoothness(Xd); M = np.maximum(M, M[M > 0].min())   # empty columns: any positive public constant
    res = dp_gcd(Xd, y, loss, pen, epsilon=1.0, delta=1.0 / n**2, n_passes=T, clip=1.0, smoothness=M, random_state=0)   # calibration + compilation
    P = res.params; rng = np.random.default_rng(0)
    kappa = 1 / np.sqrt(M); sqM, iM, shr = _score_constants(pen, M); sens = P["sensitivities"]; rel = P["noise_scales"]; mult = P["calibration"].selection_noise
    Xf = np.zeros((1, 1), order="F") if sparse else Xd
    data, ind, ptr = (Xd.data, Xd.indices, Xd.indptr) if sparse else (np.zeros(1), np.zeros(1, np.int64), np.zeros(2, np.int64))
    u, g, sc, work, ch = np.empty(n), np.empty(p), np.empty(p), np.empty(p), np.empty(T, np.int64)
    w = np.zeros(p); z = np.zeros(n)
    design, lossp, penp = _design(Xd, y, sparse), loss.kernel_args(), pen.kernel_args()
    consts = _coordinate_constants(pen, 1, M, P["steps"], P["clip_thresholds"], sens, rel)
    selection, buffers, ch1 = (1, 0, mult, P["score_sensitivity"]), (u, g, sc, work), ch[:1]
    par = [False]   # the threaded gradient pass (dp_gcd's n_jobs != 1), off unless timing the threads
    def run():   # one iteration: its noise draw (one row of exponentials, one normal) and the kernel on a block of 1
        sel = rng.standard_exponential((1, p)); eta = rng.standard_normal(1)
        _dpgcd_block(design, lossp, penp, consts, selection, (sel, eta), z, w, buffers, ch1, par[0])
    for _ in range(T): run()   # compile, and move away from w = 0
    r = rng.normal(size=n)
    t_it, ticks = np.inf, []
    threads = numba.config.NUMBA_NUM_THREADS
    numba.set_num_threads(1)
    t_g1c = np.inf
    grad_k = lambda: _clipped_gradient(design, lossp, z, consts[6], u, g, par[0])   # row 6: the thresholds C_j
    for _ in range(repeat):   # interleaved, best of k of each (the machine is shared), by CLOCK
        ticks.append(_best(lambda: Xd.T @ r, 20, CLOCK)); t_it = min(t_it, _best(run, 20, CLOCK))
        t_g1c = min(t_g1c, _best(grad_k, 20, CLOCK))
    t_g1, t_gk, t_i1, t_ik = np.inf, np.inf, np.inf, np.inf
    for _ in range(repeat):   # 1 thread vs all, interleaved, wall-clock (CPU time would add the threads up)
        numba.set_num_threads(1); par[0] = False; t_g1 = min(t_g1, _best(grad_k, 20)); t_i1 = min(t_i1, _best(run, 20))
        numba.set_num_threads(threads); par[0] = True; t_gk = min(t_gk, _best(grad_k, 20)); t_ik = min(t_ik, _best(run, 20))
    numba.set_num_threads(1); par[0] = False
    t_xtr, t_xtr_median = min(ticks), float(np.median(ticks))   # best and median of the ticks
    # the parts, on the same data
    z = rng.normal(size=n) * 0.1; w = np.zeros(p); clips = P["clip_thresholds"]
    def grad():
        kernel_deriv_range(*loss.kernel_args(), z, y, u, 0, n)   # the kernels' per-loss derivative loop
        if sparse: clipped_gradient_sparse(data, ind, ptr, n, u, clips, g)
        else: clipped_gradient_dense(Xf, u, clips, g)
    grad(); t_g = _best(grad, repeat * 5)
    t_s = _best(lambda: _scores(1, *pen.kernel_args(), w, g, M, sqM, iM, shr, sc), repeat * 5)
    t_d = _best(lambda: rng.standard_exponential(p), repeat * 5)
    E = rng.standard_exponential(p); t_r = _best(lambda: exponential_race(sc, 0.01, E), repeat * 5)
    print(f"{name}, {type(pen).__name__}: X.T@r {t_xtr * 1e3:.4f} ms (median {t_xtr_median * 1e3:.4f} ms over "
          f"{len(ticks)} ticks), DP-GCD iteration {t_it * 1e3:.3f} ms (ratio {t_it / t_xtr:.2f}); "
          f"parts (ms): gradient {t_g * 1e3:.3f}, scores {t_s * 1e3:.3f}, noise draw {t_d * 1e3:.3f}, race {t_r * 1e3:.3f}")
    print(f"    threads: clipped gradient 1 thread {t_g1 * 1e3:.3f} ms, {threads} threads {t_gk * 1e3:.3f} ms "
          f"(speed-up {t_g1 / t_gk:.2f}); iteration {t_i1 * 1e3:.3f} -> {t_ik * 1e3:.3f} ms (speed-up {t_i1 / t_ik:.2f}, "
          f"wall-clock); load average {os.getloadavg()[0]:.2f}", flush=True)
    ROWS.append(dict(problem=name, n=n, p=p, penalty=type(pen).__name__, threads=threads, floor_s=t_xtr,
                     floor_median_s=t_xtr_median, floor_ticks=len(ticks), iteration_1thread_s=t_it,
                     gradient_1thread_s=t_g1c, timer="cpu" if CLOCK is time.process_time else "wall",
                     iteration_1thread_wall_s=t_i1, iteration_threads_s=t_ik, gradient_1thread_wall_s=t_g1,
                     gradient_threads_s=t_gk, load_average=os.getloadavg()[0]))
    return t_it / t_xtr

ROWS = []

if __name__ == "__main__":
    repeat = 3 if "--quick" in sys.argv else 7
    if "--repeat" in sys.argv: repeat = int(sys.argv[sys.argv.index("--repeat") + 1])   # rounds (a loaded machine: more)
    if "--timer" in sys.argv and sys.argv[sys.argv.index("--timer") + 1] == "wall": CLOCK = time.perf_counter
    warnings.simplefilter("ignore", PrivacyLeakWarning)
    ratios = []
    problems = {"electricity": _electricity, "dense": _dense, "madelon": _madelon, "sparse": _sparse}
    only = next((a.split("=", 1)[1] if "=" in a else sys.argv[sys.argv.index(a) + 1] for a in sys.argv if a.startswith("--only")), None)
    chosen = only.split(",") if only else list(problems)
    print(f"numba threads: {numba.config.NUMBA_NUM_THREADS}; "
          f"load average at start {os.getloadavg()[0]:.2f}")
    with threadpool_limits(1):
        for key in chosen:
            X, y, name = problems[key]()
            for pen in ((L2(1e-3),) if key in ("electricity", "dense") else (L2(1.0), L1(0.05))):
                ratios.append(bench(X, y, name, pen, repeat))
    print(f"worst ratio {max(ratios):.2f} (target <= 2)")
    out = next((a.split("=", 1)[1] if "=" in a else sys.argv[sys.argv.index(a) + 1] for a in sys.argv if a.startswith("--csv")), None)
    if out:
        import csv
        with open(out, "w", newline="") as f:
            wr = csv.DictWriter(f, list(ROWS[0])); wr.writeheader(); wr.writerows(ROWS)
        print(f"  -> wrote {out}")
