"""The Dask sections of `benchmarks/run.py`: `--only dask` (rounds per second and time per pass of
DP-GCD, DP-SGD and block DP-CD on row chunks, in process and on 1 and 2 local workers, against the
in-memory solvers in the same process; each row records where the fit ran, `data_path`: "chunks"
(held by the workers' actors, or read per round in process), "gathered" (the cost model gathered
the chunks into this process, which ran the in-memory solver), "one worker" (the same on the worker
holding most of the chunks); the load
average at each row; the cost model fitted on them) and `--only ooc` (one pass
of block DP-CD and of DP-GCD over a design on disk: peak RSS and time against reading the files
once with plain reads, page cache cold and warm).

    python benchmarks/run.py --only dask [--quick]
    python benchmarks/run.py --only ooc [--ooc-rows 10000000] [--ooc-dir /tmp]
"""
import json, os, subprocess, sys, time, warnings
from pathlib import Path
import numpy as np

from dp_cd.model.losses import SquaredLoss
from dp_cd.model.penalties import L1
from dp_cd.solvers.block_cd import dp_bcd
from dp_cd.solvers.dpgcd import dp_gcd
from dp_cd.solvers.dpsgd import dp_sgd

P = 10   # columns of the benchmark designs (as the 10^8 x 10)


def problem(n, seed=0, p=P):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p)) / np.sqrt(p)
    return X, X @ rng.normal(size=p) + 0.1 * rng.normal(size=n)


def fitters(n, p=P):
    "name -> (fit(X, y), rounds per pass): the runs timed, with public constants."
    M, args = np.full(p, 2.0 / p), (SquaredLoss(), L1(1e-3))
    budget = dict(epsilon=1.0, delta=1.0 / n**2)
    out = {f"dp-bcd B={B}": (lambda X, y, B=B: dp_bcd(X, y, *args, **budget, block_size=B,
                                                       n_passes=2, smoothness=M, random_state=0),
                             p // B)
           for B in (1, 2, p)}
    out["dp-gcd"] = (lambda X, y: dp_gcd(X, y, *args, **budget, n_passes=4, smoothness=M,
                                         random_state=0), 1)
    out["dp-sgd q=1%"] = (lambda X, y: dp_sgd(X, y, *args, **budget, n_passes=0.5, step=0.5,
                                              clip=1.0, batch_size=n / 100, random_state=0), 100)
    return out


def timed(fit, X, y, k):
    "(seconds, result) of the fastest of k fits."
    best = None
    for _ in range(k):
        t = time.perf_counter()
        r = fit(X, y)
        s = time.perf_counter() - t
        if best is None or s < best[0]: best = (s, r)
    return best


def timed_pair(fit, X, Xin, y, k):
    """((seconds, result) in memory, (seconds, result) on chunks): the fastest of k fits each, the
    two alternating, so that both meet the same load (the machine is shared)."""
    best = [None, None]
    for _ in range(k):
        for i, Z in enumerate((X, Xin)):
            t = time.perf_counter()
            r = fit(Z, y)
            s = time.perf_counter() - t
            if best[i] is None or s < best[i][0]: best[i] = (s, r)
    return best


def _rows(setting, n, X, y, Xin, k, names):
    rows, mem = [], {}
    for name, (fit, per_pass) in fitters(n, X.shape[1]).items():
        if name not in names: continue
        (base, ref), (s, r) = timed_pair(fit, X, Xin, y, k)
        rows.append(dict(setting=setting, solver=name, n=n, p=X.shape[1], rounds=r.n_iter,
                         passes=r.passes, seconds=s, in_memory_seconds=base,
                         rounds_per_second=r.n_iter / s, seconds_per_pass=s / r.passes,
                         seconds_per_round=s / r.n_iter, vs_in_memory=s / base,
                         max_coef_diff=float(np.abs(r.coef - ref.coef).max()),
                         data_path=r.params.get("data_path", "memory"),
                         load_avg=os.getloadavg()[0]))
        print(f"  {setting:12s} n={n:8d} {name:12s}: {r.n_iter / s:9.1f} rounds/s, "
              f"{s / r.passes:8.3f} s/pass, x{s / base:7.1f} the in-memory run")
    return rows


def bench_dask(args):
    """Rounds per second and time per pass: in process (chunks read per use) and 1, 2 workers (where
    the cost model places each fit; on 2 workers also with the chunks held spread, forced)."""
    import dask.array as da
    from distributed import Client, LocalCluster
    from dp_cd.solvers.chunks import placement
    warnings.simplefilter("ignore")
    sizes = (2_000, 20_000, 80_000) if args.quick else (2_000, 200_000, 800_000)
    k = 1 if args.quick else 5
    for name, (fit, _) in fitters(2000).items(): fit(*problem(2000))   # compile
    rows = []
    for workers in (0, 1, 2):   # 0: in process, no client
        cluster = None if workers == 0 else LocalCluster(
            host="127.0.0.1", dashboard_address=None, n_workers=workers, threads_per_worker=1,
            processes=True)
        client = None if cluster is None else Client(cluster)
        try:
            setting = "in process" if workers == 0 else f"{workers} worker{'s' * (workers > 1)}"
            for n in sizes:
                X, y = problem(n)
                Xd = da.from_array(X, chunks=(max(1, n // 4), P))
                names = set(fitters(n)) - ({"dp-bcd B=1"} if n == max(sizes) else set())
                Xin = Xd if client is None else Xd.persist()
                rows += _rows(setting, n, X, y, Xin, k, names)
                if workers == 2:   # the chunks held by the workers whatever the cost model says
                    with placement("spread"):
                        rows += _rows(f"{setting}, spread", n, X, y, Xin, k, names)
            if workers == 2:   # the 40,000 x 12 (block DP-CD with B = 1, 2, p = 12)
                X, y = problem(40_000, p=12)
                Xin = da.from_array(X, chunks=(10_000, 12)).persist()
                rows += _rows(setting, 40_000, X, y, Xin, k, set(fitters(40_000, 12)))
        finally:
            if client is not None: client.close(); cluster.close()
    return rows


def cost_model(rows):
    """Per solver and setting: latency L = seconds per round at the smallest n (2,000 rows, where
    the work is negligible); seconds per row per round c = median of (t_round - L) / n above it."""
    fits, rows = [], [r for r in rows if r["p"] == P]   # (the n x 10 designs)
    for key in sorted({(r["setting"], r["solver"]) for r in rows}):
        sel = sorted([r for r in rows if (r["setting"], r["solver"]) == key], key=lambda r: r["n"])
        if len(sel) < 2: continue
        lat = sel[0]["seconds_per_round"]
        per_row = float(np.median([(r["seconds_per_round"] - lat) / r["n"] for r in sel[1:]]))
        fits.append(dict(setting=key[0], solver=key[1], latency=lat,
                         seconds_per_row=max(per_row, 0.0), latency_n=sel[0]["n"],
                         largest_n=sel[-1]["n"], rounds_per_pass=sel[0]["rounds"] / sel[0]["passes"]))
        print(f"  {key[0]:12s} {key[1]:12s}: latency {lat * 1e3:7.2f} ms/round, "
              f"{fits[-1]['seconds_per_row'] * 1e9:7.2f} ns/row/round")
    return fits


OOC_SNIPPET = r"""
import json, os, resource, sys, time, numpy as np
from dp_cd.solvers.chunks import npy_chunks
from dp_cd.model.losses import SquaredLoss
from dp_cd.model.penalties import L1
from dp_cd.solvers.block_cd import dp_bcd
from dp_cd.solvers.dpgcd import dp_gcd
import dask.array as da
what, path, ypath, rows = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
def status(key):
    for line in open("/proc/self/status"):
        if line.startswith(key): return int(line.split()[1]) * 1024
def cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime
def read_once(*paths):   # the floor: plain reads of the files into one reused buffer
    buf = memoryview(np.empty(rows * 10)).cast("B")
    for name in paths:
        with open(name, "rb", buffering=0) as f:
            while f.readinto(buf): pass
# every mode loads the same modules and kernels before the clock starts (same RSS baseline)
Xw = da.from_array(np.random.default_rng(0).normal(size=(200, 10)), chunks=(50, 10))
kw = dict(smoothness=np.full(10, 0.2), random_state=0)
dp_bcd(Xw, np.zeros(200), SquaredLoss(), L1(1e-3), 1.0, 1e-6, block_size=10, n_passes=1, **kw)
dp_gcd(Xw, np.zeros(200), SquaredLoss(), L1(1e-3), 1.0, 1e-6, n_passes=1, **kw)
X, y = npy_chunks(path, rows=rows), npy_chunks(ypath, rows=rows)[:, 0]   # both on disk
n, p = X.shape
base, t, c = status("VmHWM"), time.perf_counter(), cpu()
if what == "read":
    read_once(path, ypath)
elif what == "dp-bcd":
    dp_bcd(X, y, SquaredLoss(), L1(1e-3), 1.0, 1.0 / n**2, block_size=p, n_passes=1,
           smoothness=np.full(p, 2.0 / p), random_state=0)
else:
    dp_gcd(X, y, SquaredLoss(), L1(1e-3), 1.0, 1.0 / n**2, n_passes=1,
           smoothness=np.full(p, 2.0 / p), random_state=0)
print(json.dumps(dict(what=what, seconds=time.perf_counter() - t, cpu_seconds=cpu() - c,
                      peak_rss=status("VmHWM"), rss_before=base)))
"""


def _set_cache(paths, cache:str) -> float:
    """Put the files in the page cache ("warm": read them once) or out of it ("cold":
    posix_fadvise DONTNEED, which drops a file's clean cached pages without root); the fraction
    of their bytes cached afterwards (util-linux `fincore`; NaN without it)."""
    for name in paths:
        if cache == "cold":
            fd = os.open(name, os.O_RDONLY)
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
            os.close(fd)
        else:
            with open(name, "rb", buffering=0) as f:
                buf = memoryview(bytearray(1 << 24))
                while f.readinto(buf): pass
    try:
        cmd = ["fincore", "--bytes", "--noheadings", "--output", "RES", *map(str, paths)]
        out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout.split()
        return sum(map(int, out)) / sum(os.path.getsize(p) for p in paths)
    except (OSError, subprocess.CalledProcessError, ValueError):
        return float("nan")


def bench_ooc(args):
    "One pass over a design on disk (fresh process each): peak RSS and time vs one read."
    out = []
    for n in map(int, str(args.ooc_rows).split(",")):
        out += _ooc(n, 1_000_000, Path(args.ooc_dir or "/tmp") / "dp_cd_ooc")
    return out


def _write_design(d, n:int, rows:int):
    "X (n, P) and the labels y as an (n, 1) array, both .npy files written chunk by chunk."
    X = np.lib.format.open_memmap(d / "X.npy", mode="w+", dtype=np.float64, shape=(n, P))
    y = np.lib.format.open_memmap(d / "y.npy", mode="w+", dtype=np.float64, shape=(n, 1))
    rng, w = np.random.default_rng(0), np.random.default_rng(1).normal(size=P)
    for a in range(0, n, rows):
        b = min(n, a + rows)
        X[a:b] = rng.normal(size=(b - a, P)) / np.sqrt(P)
        y[a:b, 0] = X[a:b] @ w + 0.1 * rng.normal(size=b - a)
    X.flush(), y.flush()
    del X, y


def _ooc(n, rows, d, reps:int=3):
    """Per cache state (cold, then warm), `reps` times: read, block DP-CD, DP-GCD, each in a fresh
    process (the machine is shared: the runs are interleaved and their medians compared); a pass
    is compared with the median of the reads in the same cache state."""
    d.mkdir(parents=True, exist_ok=True)
    paths, out = (d / "X.npy", d / "y.npy"), []
    try:
        _write_design(d, n, rows)
        for cache in ("cold", "warm"):
            got = [r for rep in range(reps) for what in ("read", "dp-bcd", "dp-gcd")
                   for r in [_ooc_run(what, paths, n, rows, cache, rep)] if r is not None]
            read = np.median([r["seconds"] for r in got if r["what"] == "read"])
            for r in got: r["vs_one_read"] = r["seconds"] / read
            out += got
    finally:
        for f in d.glob("*.npy"): f.unlink()
        d.rmdir()
    return out


def _ooc_run(what, paths, n, rows, cache, rep):
    "One run of the snippet in a fresh process, the page cache set first; its row (None: failed)."
    cached = _set_cache(paths, cache)
    env = dict(os.environ, NUMBA_NUM_THREADS="1")
    res = subprocess.run([sys.executable, "-c", OOC_SNIPPET, what, *map(str, paths), str(rows)],
                         capture_output=True, text=True, timeout=7200, env=env)
    if res.returncode: print(res.stderr[-2000:]); return None
    r = dict(json.loads(res.stdout.strip().splitlines()[-1]), n=n, p=P, cache=cache, rep=rep,
             cached_fraction=cached, file_bytes=n * (P + 1) * 8, chunk_rows=rows,
             load_avg=os.getloadavg()[0])
    print(f"  {cache} {what:7s} n={n}: {r['seconds']:8.2f} s (cpu {r['cpu_seconds']:.2f} s), "
          f"peak RSS {r['peak_rss'] / 2**30:.2f} GiB, cached {cached:.0%}")
    return r


# ------------------------------------------------------------------------ utility (Table D.1)
UTILITY_GRID = dict(steps=(0.1, 0.3, 1.0), clips=tuple(np.logspace(-2, 2, 9)), passes=(5, 20),
                    n_select=2, n_report=5,
                    sgd_steps=(1e-4, 1e-3, 1e-2, 1e-1, 1.0))   # DP-SGD: γ/β, the thesis' range


def _utility_fitters(p):
    "name -> fit(X, y, loss, pen, eps, delta, passes, step, clip, seed, info): the compared runs."
    from dp_cd.solvers.dpcd import dp_cd
    def bcd(B):
        return lambda X, y, lo, pe, e, d, P, st, C, s, info: dp_bcd(
            X, y, lo, pe, epsilon=e, delta=d, block_size=B, n_passes=P, step=st, clip=C,
            smoothness=info["M"], random_state=s)
    out = {f"DP-BCD B={B}": bcd(B) for B in sorted({1, min(8, p), p})}
    out["DP-CD"] = lambda X, y, lo, pe, e, d, P, st, C, s, info: dp_cd(
        X, y, lo, pe, epsilon=e, delta=d, n_passes=P, step=st, clip=C, smoothness=info["M"], random_state=s)
    out["DP-SGD"] = lambda X, y, lo, pe, e, d, P, st, C, s, info: dp_sgd(
        X, y, lo, pe, epsilon=e, delta=d, n_passes=P, step=st / info["beta"], clip=C, random_state=s)
    return out


def bench_block_utility(args):
    """Block DP-CD (B in {1, 8, p}) vs DP-CD vs DP-SGD at equal (epsilon, delta) on the Table D.1
    problems: per passes value, the (step, clip) of least mean objective over `n_select` runs of a
    small grid, then the mean relative error (F - F*)/F* of `n_report` fresh runs. M_j are the
    exact ones, treated as public as in the thesis' DP-CD rows."""
    from dp_cd.experiments.dpcd import problems, optimum, objective, problem_info, PROBLEMS
    g = UTILITY_GRID if not args.quick else dict(UTILITY_GRID, clips=(0.1, 1.0, 10.0), passes=(5,),
                                                  n_select=1, n_report=2, sgd_steps=(1e-3, 1e-2))
    names = [n for n in PROBLEMS if n != "sparse_lasso" or not args.quick]
    rows = []
    warnings.simplefilter("ignore")
    for name, (X, y, loss, pen, eps, delta) in problems(args.data_dir, names).items():
        Fstar, info = optimum(X, y, loss, pen), problem_info(X, loss)
        for solver, fit in _utility_fitters(X.shape[1]).items():
            for P in g["passes"]:
                rows.append(_tuned(name, solver, fit, (X, y, loss, pen, eps, delta), P, g, Fstar,
                                   info, objective))
    return rows


def _tuned(name, solver, fit, prob, P, g, Fstar, info, objective):
    "One row: the grid's best (step, clip) by mean objective, then fresh runs at it."
    X, y, loss, pen, eps, delta = prob
    F = lambda st, C, s: objective(X, y, loss, pen, fit(*prob, P, st, C, s, info).coef)
    steps = g["sgd_steps"] if solver == "DP-SGD" else g["steps"]
    best = min(((np.mean([F(st, C, s) for s in range(g["n_select"])]), st, C)
                for st in steps for C in g["clips"]), key=lambda t: t[0])
    rel = (np.array([F(best[1], best[2], 1000 + s) for s in range(g["n_report"])]) - Fstar) / Fstar
    print(f"  {name:22s} {solver:12s} {P:3d} passes: rel. error {rel.mean():.4f} "
          f"(step {best[1]:g}, clip {best[2]:.3g})")
    return dict(problem=name, solver=solver, passes=P, epsilon=eps, delta=delta, step=best[1],
                clip=best[2], rel_mean=rel.mean(), rel_std=rel.std(), runs=len(rel))
