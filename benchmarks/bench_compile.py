"""Compile, import and threads (issue 29), for `benchmarks/run.py --only compile,speed`.

Every measurement runs in fresh subprocesses (a process has one numba cache and one thread pool):
- import time of `dp_cd` and of the estimators (min and median of k fresh interpreters, bytecode
  cached), with the floors: numpy + numba, with scipy.sparse, and sklearn.base;
- the first default `DPClassifier` fit in a fresh process with an empty numba cache, for a C- and an
  F-ordered float64 X, a float32 X and a CSC X (each its own empty cache), then a fresh process with
  the cache filled (a second process), and `dp-cd warmup`'s time from an empty cache;
- per-layout recompiles: with the C-ordered fit cached, the number of kernels numba compiles for the
  other layouts (numba's "numba:compile" events; goal 0);
- DP-GCD per iteration on Electricity's shape (45,312 x 8, synthetic) through the estimator's
  solver: one thread (`NUMBA_NUM_THREADS=1`), the default (`n_jobs=1`) and the threaded pass
  (`n_jobs=-1`), on the machine as it is and with one competing busy-loop process started here.
The load average is recorded next to every row: the machine is shared.

`python benchmarks/bench_compile.py --compare BEFORE_TREE [--out CSV]` measures the code of another
checkout (e.g. the main branch) and this one in one run, interleaved (`compare`): the import times
and the first default fits (DPClassifier, DPRegressor, DP-GCD's DPClassifier) in fresh processes
with empty caches, wall-clock and CPU seconds (the compiler runs on one thread: its CPU time moves
little with the load of a shared machine, its wall-clock time a lot), with the number of kernels
each compiles, then `python -m dp_cd.warmup`; with `--imports-only`, the import times alone.
"""
import json, os, subprocess, sys, tempfile, time
import numpy as np

# the preamble of each measured process: the names of the dp_cd kernels numba compiles
LISTEN = r"""
import json, sys, time, warnings
from numba.core import event as ev
compiled = []
class L(ev.Listener):
    def on_start(self, e): pass
    def on_end(self, e):
        f = e.data["dispatcher"].py_func
        if f.__module__.startswith("dp_cd"): compiled.append(f.__name__)
ev.register("numba:compile", L())
"""

FIT = LISTEN + r"""
import numpy as np, scipy.sparse as sp
from dp_cd import DPClassifier
from dp_cd.solvers.dpcd import dp_cd
from dp_cd.model.losses import LogisticLoss
from dp_cd.model.penalties import L2
warnings.simplefilter("ignore")
rng = np.random.default_rng(0)
X = rng.normal(size=(2000, 10)); y = (X[:, 0] + 0.3 * rng.normal(size=2000) > 0).astype(int)
def layout(kind):
    if kind == "C": return X
    if kind == "F": return np.asfortranarray(X)
    if kind == "float32": return X.astype(np.float32)
    S = sp.csc_matrix(np.where(np.abs(X) > 1.0, X, 0.0))
    if kind == "sparse int64": S.indices, S.indptr = S.indices.astype(np.int64), S.indptr.astype(np.int64)
    return S
fits = {"DPClassifier": lambda A: DPClassifier(epsilon=1.0, classes=[0, 1], random_state=0).fit(A, y),
        "dp_cd": lambda A: dp_cd(A, 2.0 * y - 1, LogisticLoss(), L2(1e-3), epsilon=1.0, delta=1e-6,
                                 n_passes=2, random_state=0)}
out = []
for item in sys.argv[1:]:
    how, kind = item.split(":")
    n0, t, cpu = len(compiled), time.perf_counter(), time.process_time()
    fits[how](layout(kind))
    out.append(dict(layout=item, seconds=time.perf_counter() - t, cpu_seconds=time.process_time() - cpu,
                    compiled=len(compiled) - n0))
print(json.dumps(out))
"""

GCD = r"""
import json, sys, time, warnings
import numpy as np
from dp_cd.solvers.dpgcd import dp_gcd
from dp_cd.model.losses import LogisticLoss
from dp_cd.model.penalties import L2
warnings.simplefilter("ignore")
n_jobs, n, p = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
rng = np.random.default_rng(0)
X = np.asfortranarray(rng.normal(size=(n, p))); y = np.sign(X @ rng.normal(size=p) + 0.1)
kw = dict(epsilon=1.0, delta=1.0 / n**2, smoothness=np.ones(p), random_state=0)
try: dp_gcd(X, y, LogisticLoss(), L2(1e-3), n_passes=2, n_jobs=n_jobs, **kw); jobs = dict(n_jobs=n_jobs)
except TypeError: jobs = {}   # a version without n_jobs
run = lambda T: dp_gcd(X, y, LogisticLoss(), L2(1e-3), n_passes=T, **jobs, **kw)
run(2)
def timed(T):
    ts = []
    for _ in range(5):
        t0 = time.perf_counter(); run(T); ts.append(time.perf_counter() - t0)
    return min(ts)
a, b = 5, 405
print(json.dumps(dict(per_iteration=(timed(b) - timed(a)) / (b - a))))
"""


def _load():
    return os.getloadavg()[0] if hasattr(os, "getloadavg") else None


def _run(code, args, env, timeout=1800):
    r = subprocess.run([sys.executable, "-c", code, *map(str, args)], env=env, capture_output=True,
                       text=True, timeout=timeout)
    if r.returncode: raise RuntimeError(r.stderr[-2000:])
    return json.loads(r.stdout.strip().splitlines()[-1])


IMPORTS = (("import dp_cd", "import dp_cd"),
           ("from dp_cd import DPClassifier", "from dp_cd import DPClassifier"),
           ("from dp_cd import DPClassifier, DPRegressor, DPClassifierCV, DPRegressorCV",
            "from dp_cd import DPClassifier, DPRegressor, DPClassifierCV, DPRegressorCV"),
           ("floor: import numpy, numba", "import numpy, numba"),
           ("floor: import numpy, scipy.sparse, numba", "import numpy, scipy.sparse, numba"),
           ("floor: import sklearn.base", "import sklearn.base"))   # (what a fit's checks import)


def import_times(env, k=3):
    """Each import in `k` fresh interpreters: min and median wall seconds, min CPU seconds. The
    bytecode is cached first, in a private PYTHONPYCACHEPREFIX, as an installed package has it (an
    environment with PYTHONDONTWRITEBYTECODE would compile every module's source on each import)."""
    rows = []
    with tempfile.TemporaryDirectory() as pyc:
        env = {key: v for key, v in env.items() if key != "PYTHONDONTWRITEBYTECODE"}
        env["PYTHONPYCACHEPREFIX"] = pyc
        for _, stmt in IMPORTS: _run(f"{stmt}; print(1)", [], env)   # writes the bytecode
        for what, stmt in IMPORTS:
            code = (f"import time, json; t, c = time.perf_counter(), time.process_time(); {stmt}; "
                    "print(json.dumps([time.perf_counter() - t, time.process_time() - c]))")
            runs = [_run(code, [], env) for _ in range(k)]
            rows.append(dict(part="import", what=what, seconds=min(r[0] for r in runs),
                             median_seconds=float(np.median([r[0] for r in runs])),
                             cpu_seconds=min(r[1] for r in runs), load=_load()))
    return rows


def first_fits(env):
    """The first default `DPClassifier` fit per layout, each in a fresh process with its own empty
    cache; then, with the C fit cached, the kernels compiled by each next layout (and by the plain
    solver `dp_cd`), in one process; then `python -m dp_cd.warmup` from an empty cache."""
    rows = []
    for kind in ("C", "F", "float32", "sparse int32"):
        with tempfile.TemporaryDirectory() as cache:
            e = {**env, "NUMBA_CACHE_DIR": cache}
            (r,) = _run(FIT, [f"DPClassifier:{kind}"], e)
            rows.append(dict(part="first fit, empty cache", what=kind, seconds=r["seconds"], compiled=r["compiled"],
                             cpu_seconds=r["cpu_seconds"], load=_load()))
            if kind != "C": continue
            (r,) = _run(FIT, ["DPClassifier:C"], e)
            rows.append(dict(part="first fit, cache filled", what=kind, seconds=r["seconds"], compiled=r["compiled"],
                             cpu_seconds=r["cpu_seconds"], load=_load()))
            seq = ["DPClassifier:F", "DPClassifier:float32", "dp_cd:C", "dp_cd:F", "DPClassifier:sparse int32",
                   "DPClassifier:sparse int64", "dp_cd:sparse int32", "dp_cd:sparse int64"]
            for r in _run(FIT, seq, e):   # after the C fit; "DPClassifier:sparse int32": the sparse path's first
                rows.append(dict(part="compiled after the C fit", what=r["layout"], seconds=r["seconds"],
                                 compiled=r["compiled"], load=_load()))
    with tempfile.TemporaryDirectory() as cache:
        e = {**env, "NUMBA_CACHE_DIR": cache}
        t = time.perf_counter()
        w = subprocess.run([sys.executable, "-m", "dp_cd.warmup"], env=e, capture_output=True, text=True, timeout=3600)
        if w.returncode == 0:
            rows.append(dict(part="warmup, empty cache", what="python -m dp_cd.warmup", seconds=time.perf_counter() - t, load=_load()))
            (r,) = _run(FIT, ["DPClassifier:C"], e)
            rows.append(dict(part="first fit after warmup", what="C", seconds=r["seconds"], compiled=r["compiled"],
                             cpu_seconds=r["cpu_seconds"], load=_load()))
        else: print("  dp_cd.warmup not available:", w.stderr.strip().splitlines()[-1:])
    return rows


DEFAULT_FIT = LISTEN + r"""
import numpy as np
import dp_cd
from dp_cd import DPClassifier, DPRegressor
warnings.simplefilter("ignore")
rng = np.random.default_rng(0)
X = rng.normal(size=(2000, 10)); y = (X[:, 0] + 0.3 * rng.normal(size=2000) > 0).astype(int)
fit = {"DPClassifier": lambda: DPClassifier(epsilon=1.0, classes=[0, 1], random_state=0).fit(X, y),
       "DPRegressor": lambda: DPRegressor(epsilon=1.0, random_state=0).fit(X, X[:, 1]),
       "DPClassifier(solver='dp-gcd')": lambda: DPClassifier(
           epsilon=1.0, classes=[0, 1], random_state=0, solver="dp-gcd").fit(X, y)}[sys.argv[1]]
t, cpu = time.perf_counter(), time.process_time()
m = fit()
print(json.dumps(dict(seconds=time.perf_counter() - t, cpu_seconds=time.process_time() - cpu,
                      compiled=len(compiled), file=dp_cd.__file__,
                      coef=np.ravel(m.coef_).tolist())))
"""


def _children_cpu() -> float:
    "CPU seconds (user + system) of the finished child processes so far."
    import resource
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def compare(before:str, now:str, env, rounds:int=2, imports_only:bool=False):
    """The trees `before` and `now` (repository roots) measured in one run, interleaved: import times
    (min and median of 5 fresh interpreters per round, the best round), then (unless `imports_only`)
    per default fit a fresh process with an empty numba cache (best of `rounds`), then
    `python -m dp_cd.warmup` from an empty cache (once each)."""
    trees = {"before": before, "now": now}
    os.chdir(tempfile.gettempdir())   # (a child's `-c` imports from its working directory first)
    envs = {k: {**env, "PYTHONPATH": v, "DP_CD_COMPILE_NOTICE": "0"} for k, v in trees.items()}
    best, rows, same = {}, [], {}
    for _ in range(rounds):
        for k, e in envs.items():
            for r in import_times(e, k=5):   # min and median of 5 per round; the best round's
                key = (k, r["part"], r["what"])
                best[key] = min(best.get(key, (np.inf, 0, None)), (r["seconds"], 0, r["load"]))
                key = (k, "import: median", r["what"])
                best[key] = min(best.get(key, (np.inf, 0, None)), (r["median_seconds"], 0, r["load"]))
                key = (k, "import: CPU seconds", r["what"])
                best[key] = min(best.get(key, (np.inf, 0, None)), (r["cpu_seconds"], 0, r["load"]))
        for fit in () if imports_only else ("DPClassifier", "DPRegressor", "DPClassifier(solver='dp-gcd')"):
            coefs = {}
            for k, e in envs.items():
                with tempfile.TemporaryDirectory() as cache:
                    r = _run(DEFAULT_FIT, [fit], {**e, "NUMBA_CACHE_DIR": cache})
                assert r["file"].startswith(trees[k]), (r["file"], trees[k])
                coefs[k] = r["coef"]
                key = (k, "first fit, empty cache", fit)
                best[key] = min(best.get(key, (np.inf, 0, None)), (r["seconds"], r["compiled"], _load()))
                key = (k, "first fit, empty cache: CPU seconds", fit)   # (robust to the load)
                best[key] = min(best.get(key, (np.inf, 0, None)), (r["cpu_seconds"], r["compiled"], _load()))
            same[fit] = coefs["before"] == coefs["now"]
    for k, e in () if imports_only else envs.items():
        with tempfile.TemporaryDirectory() as cache:
            t, c0 = time.perf_counter(), _children_cpu()
            w = subprocess.run([sys.executable, "-m", "dp_cd.warmup"], env={**e, "NUMBA_CACHE_DIR": cache},
                               capture_output=True, text=True, timeout=3600, cwd=tempfile.gettempdir())
            if w.returncode: raise RuntimeError(w.stderr[-2000:])
            best[(k, "warmup, empty cache", "python -m dp_cd.warmup")] = (time.perf_counter() - t, 0, _load())
            best[(k, "warmup, empty cache: CPU seconds", "python -m dp_cd.warmup")] = (
                _children_cpu() - c0, 0, _load())
    for (k, part, what), (s, c, load) in best.items():
        rows.append(dict(code=k, part=part, what=what, seconds=s, compiled=c, load=load,
                         identical=same.get(what) if k == "now" and part.startswith("first") else None))
    return rows


def busy_loop():
    "A competing process that keeps one core busy (killed by the caller)."
    return subprocess.Popen([sys.executable, "-c", "while True: pass"])


def threads(env, n=45312, p=8, rounds=3):
    """DP-GCD per iteration with one thread, the default and the threaded pass, each in its own
    process, the three modes interleaved over `rounds` rounds (best of each: the machine is shared),
    on the machine as it is, then with one busy-loop process."""
    modes = (("NUMBA_NUM_THREADS=1", 1, {"NUMBA_NUM_THREADS": "1"}), ("default (n_jobs=1)", 1, {}),
             ("threaded (n_jobs=-1)", -1, {}))
    rows = []
    for busy in (False, True):
        proc = busy_loop() if busy else None
        try:
            time.sleep(1.0 if busy else 0.0)
            best, loads = {}, []
            for _ in range(rounds):
                for label, n_jobs, extra in modes:
                    e = {k: v for k, v in env.items() if k != "NUMBA_NUM_THREADS"} | extra
                    s = _run(GCD, [n_jobs, n, p], e)["per_iteration"]
                    best[label] = min(best.get(label, np.inf), s)
                    loads.append(_load())
            for label, _, _ in modes:
                rows.append(dict(part="DP-GCD iteration, Electricity's shape" + (", one busy core" if busy else ""),
                                 what=label, seconds=best[label], vs_one_thread=best[label] / best[modes[0][0]],
                                 load=float(np.mean(loads))))
        finally:
            if proc is not None: proc.kill(); proc.wait()
    return rows


def report(rows):
    for r in rows:
        extra = "".join(f", {k} {r[k]:.2f}" if isinstance(r[k], float) else f", {k} {r[k]}"
                        for k in ("compiled", "vs_one_thread") if r.get(k) is not None)
        unit = f"{r['seconds'] * 1e3:9.3f} ms" if r["seconds"] < 0.1 else f"{r['seconds']:9.2f} s "
        print(f"  {r['part']:44s} {r['what']:30s} {unit}{extra} (load {r['load']:.1f})")


if __name__ == "__main__":
    import argparse, csv
    from pathlib import Path
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--compare", required=True, help="root of the checkout measured as 'before'")
    ap.add_argument("--out", default=str(Path(__file__).parent / "results" / "first_fit_compare.csv"))
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--imports-only", action="store_true", help="the import times alone (no fits, no warmup)")
    a = ap.parse_args()
    now = str(Path(__file__).resolve().parents[1])
    a.out = str(Path(a.out).resolve())   # (compare works in the temporary directory)
    print(f"load average at the start: {os.getloadavg()}", flush=True)
    rows = compare(str(Path(a.compare).resolve()), now, dict(os.environ), a.rounds, a.imports_only)
    for r in rows: print(r, flush=True)
    with open(a.out, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0])); w.writeheader(); w.writerows(rows)
    print(f"load average at the end: {os.getloadavg()}; wrote {a.out}")
