"""DP-CD, the default solver, on row chunks: the latency of a round on a LocalCluster of 2
one-thread worker processes (127.0.0.1), and the fit time on chunks against the in-memory fit,
in the same process.

    python benchmarks/bench_dpcd_dask.py [--out benchmarks/results] [--quick]
                                         [--sizes 40000 1000000] [--best-of 1]

1. Round latency (milliseconds) of one coordinate's clipped sums over 4 chunks of a 40,000 × 12
   design: (a) as DP-CD runs it, one call of each worker's actor holding its chunks and margins
   (`hold_chunks` / `HeldChunks.apply` of DP-CD's `_chunk_sum`), (b) as one task per chunk
   submitted and gathered (`open_chunks` / `map_chunks` of block DP-CD's `_bcd_chunk` with a block
   of one coordinate, the pattern of the other chunked solvers); and (c) DP-CD's own cost of an
   update, (time of a fit of 25 passes - time of 5 passes) / (extra updates); (d) the floor: an
   empty call of an actor on each worker, started together and awaited (a round that does no
   work); and (e) the call of (a) with DP-CD's arguments to a function doing no work. (a), (d)
   and (e) run interleaved, in blocks of 25 rounds, so that they meet the same load (medians of
   the blocks): (e) - (d) is the cost of the holders' call itself, (a) - (e) the chunks' work.
2. Fit time at n × 12, 5 passes (`n_passes=5` everywhere), n = 40,000 and 400,000 (best of k):
   `dp_cd` with public constants, and the default estimators `DPClassifier(epsilon=1,
   bounds=1.0)` (public bounds) and `DPClassifier(epsilon=1)` (private bounds and centres, every
   other option at its default), on the cluster and in process,
   against the in-memory fit; the largest difference of the coefficients from the in-memory ones
   is checked (same seed). On the cluster the dask array is persisted on the workers before the
   clock starts (the data lives on the cluster, as in `bench_dask.py`), so a fit does not ship
   the rows from the driver.
   On the cluster each fit runs where `dp_cd.solvers.chunks.one_worker_pays` (the cost model)
   places it, and an estimator gathers a design small for the cluster
   (`dp_cd.solvers.chunks.gathered_when_small`): "2 workers" rows; the estimators are also timed
   without gathering ("2 workers, not gathered": their small graphs of bounds, centres and M_j on
   the chunks, then the solver where the cost model places it) and with the spread placement
   forced ("2 workers, spread"); `dp_cd` is also timed with both placements forced ("2 workers,
   spread": one round trip per update; "2 workers, one worker": the in-memory run on the worker
   holding the most rows), and the model's predictions are written beside the measured times.
   The update latency of (c) is measured with the spread placement forced.

3. With `--phases` (instead of 1 and 2): the two estimators at each n of `--sizes`, in memory
   and on the 2 workers (the cost model's placement), interleaved `--best-of` times, each fit
   timed by phase in the driver (`bench_dpcd_ooc.install_phase_timers`: preparing the chunks,
   each private release, the solver's chunk states and its run; the rest of the fit is
   "other"), to see where the time of a fit on the cluster goes: per-round costs (the
   solver's run after its chunk states: the updates' round trips and work) against the fixed
   costs of the cluster (the releases' graphs, the chunks mapped and held by the workers).
   Results: `dpcd_dask_phases.csv` (one row per fit and phase, the first fit of each kind on
   the cluster marked `first`).

The load average (`os.getloadavg()`) is printed before and after and written with the results
(`dpcd_dask.csv`): the machine is shared, so the latencies are those of the load it ran under.
"""
import argparse, csv, os, time, warnings
from pathlib import Path
import numpy as np
from dp_cd import DPClassifier
from dp_cd.model.losses import LogisticLoss
from dp_cd.model.penalties import L2
from dp_cd.solvers.dpcd import dp_cd, _chunk_state, _chunk_sum
from dp_cd.solvers.distributed import _bcd_chunk
import dp_cd.solvers.chunks as chunks
import dp_cd.estimators as estimators
from dp_cd.solvers.chunks import executor, hold_chunks, map_chunks, open_chunks, placement_cost
from dp_cd.solvers.contract import Problem
from bench_dpscd_dask import best_of   # (seconds, result) of the fastest of k calls

N, P, PASSES = 40_000, 12, 5


class _Empty:
    "An actor doing nothing: the floor of a round."
    def ping(self): return 0.0


def _idle(Xc, yc, state, *args): return 0.0   # a held call doing no work


def actor_rounds(ex, held, loss, rounds, block=25) -> dict:
    """Milliseconds per round of DP-CD's call of the holders ("sums"), the same call to a function
    doing no work ("idle") and an empty call of an actor per worker ("floor"): interleaved in
    blocks of `block` rounds (the same load), medians of the blocks."""
    actors = [ex.submit(_Empty, actor=True, workers=[w]).result()
              for w in ex.scheduler_info()["workers"]]
    kinds = {"sums": lambda r: sum(held.apply(_chunk_sum, loss, r % P, 1.0, (0, 0.0))),
             "idle": lambda r: held.apply(_idle, loss, r % P, 1.0, (0, 0.0)),
             "floor": lambda r: [f.result() for f in [a.ping() for a in actors]]}
    times = {k: [] for k in kinds}
    for f in kinds.values(): f(0)
    for _ in range(max(1, rounds // block)):
        for k, f in kinds.items():
            t = time.perf_counter()
            for r in range(block): f(r)
            times[k].append(1e3 * (time.perf_counter() - t) / block)
    return {k: float(np.median(v)) for k, v in times.items()}


def round_latency(Xd, y, rounds):
    """(actor calls, submitted tasks, floor, actor calls doing no work): milliseconds per round
    of one coordinate's clipped sums."""
    ex, loss, w = executor(), LogisticLoss().kernel_args(), np.zeros(P)
    prob = Problem(Xd, y, LogisticLoss(), L2(0.0), False)
    held = hold_chunks(ex, prob, _chunk_state, w, 0.0, None)
    ms = actor_rounds(ex, held, loss, rounds)
    handles, clips = open_chunks(ex, prob), np.ones(P)
    zs, _ = map_chunks(ex, handles, _bcd_chunk, [None] * len(handles), w, None,
                       np.array([0]), clips, loss, True)
    t, few = time.perf_counter(), max(5, rounds // 10)
    for r in range(few):
        zs, parts = map_chunks(ex, handles, _bcd_chunk, zs, w, None, np.array([r % P]), clips,
                               loss, True)
        sum(parts)
    return ms["sums"], 1e3 * (time.perf_counter() - t) / few, ms["floor"], ms["idle"]


def fits(X, y):
    "name -> fit(design): the runs timed."
    kw = dict(epsilon=1.0, delta=1.0 / len(y)**2, n_passes=PASSES, random_state=0,
              smoothness=0.25 * (X**2).mean(0))
    return {"dp_cd (public M_j)": lambda Z: dp_cd(Z, y, LogisticLoss(), L2(1e-3), **kw),
            "DPClassifier(bounds=1.0)": lambda Z: DPClassifier(
                epsilon=1.0, bounds=1.0, classes=[-1, 1], n_passes=PASSES, random_state=0
            ).fit(Z, y),
            "DPClassifier() private bounds": lambda Z: DPClassifier(
                epsilon=1.0, classes=[-1, 1], n_passes=PASSES, random_state=0).fit(Z, y)}


ESTIMATORS = ("DPClassifier(bounds=1.0)", "DPClassifier() private bounds")


def _never(*args, **kw): return None   # the estimators without gathering


def _coef(r): return np.ravel(r.coef if hasattr(r, "coef") else r.coef_)


def problem(n:int):
    "A logistic problem n × 12 and its 4 row chunks."
    import dask.array as da
    rng = np.random.default_rng(0)
    X = rng.normal(size=(n, P)) / np.sqrt(P)
    y = np.where(X @ rng.normal(size=P) + 0.3 * rng.normal(size=n) > 0, 1.0, -1.0)
    return X, da.from_array(X, chunks=(n // 4, P)), y


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default="benchmarks/results")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--sizes", type=int, nargs="+", default=None,
                    help="the n of the fits (default 40,000 and 400,000; --quick: 40,000)")
    ap.add_argument("--best-of", type=int, default=None, help="k (default 3; --quick: 1)")
    ap.add_argument("--phases", action="store_true",
                    help="only the estimators' fits by phase (dpcd_dask_phases.csv)")
    args = ap.parse_args()
    from distributed import Client, LocalCluster
    warnings.simplefilter("ignore")
    if args.phases: return phase_rows(args.sizes or (N,), args.best_of or 2, args.out)
    k, rounds = (1, 100) if args.quick else (3, 500)
    k = args.best_of or k
    sizes = tuple(args.sizes) if args.sizes else (N,) if args.quick else (N, 10 * N)
    load0, rows = os.getloadavg(), []
    print(f"load average before: {load0[0]:.2f} {load0[1]:.2f} {load0[2]:.2f} (2 cores)")
    X, Xd, y = problem(N)
    for fit in fits(X, y).values(): fit(X), fit(Xd)   # compile, in process
    with LocalCluster(host="127.0.0.1", dashboard_address=None, n_workers=2,
                      threads_per_worker=1, processes=True) as cluster, Client(cluster):
        actor, task, floor, idle = round_latency(Xd, y, rounds)
        print(f"round latency, 2 workers: {actor:.2f} ms (actor calls), {task:.2f} ms "
              f"(one task per chunk); floor (empty actor calls) {floor:.2f} ms: "
              f"ratio {actor / floor:.2f}; the same call doing no work {idle:.2f} ms")
        rows += [dict(what="round latency: actor calls", setting="2 workers", n=N, ms=actor),
                 dict(what="round latency: one task per chunk", setting="2 workers", n=N, ms=task),
                 dict(what="round floor: empty actor calls", setting="2 workers", n=N, ms=floor),
                 dict(what="round latency: actor calls, no work", setting="2 workers", n=N,
                      ms=idle)]
        M = 0.25 * (X**2).mean(0)
        chunks.PLACEMENT = "spread"   # (c) is the cost of an update with the chunks held
        per = [best_of(lambda m=m: dp_cd(Xd, y, LogisticLoss(), L2(1e-3), epsilon=1.0,
                                         delta=1.0 / N**2, n_passes=m, random_state=0,
                                         smoothness=M), k)[0] for m in (PASSES, 5 * PASSES)]
        update = 1e3 * (per[1] - per[0]) / (4 * PASSES * P)
        print(f"dp_cd on chunks, 2 workers: {update:.2f} ms per coordinate update")
        rows.append(dict(what="dp_cd update", setting="2 workers", n=N, ms=update))
        chunks.PLACEMENT = None
        for n in sizes:   # the chunks persisted on the workers first (the data lives there)
            Xn, Xdn, yn = problem(n)
            Xdn = Xdn.persist()
            rows += _fit_rows(Xn, Xdn, yn, k, "2 workers")
            gather, estimators.gathered_when_small = estimators.gathered_when_small, _never
            try: rows += _fit_rows(Xn, Xdn, yn, k, "2 workers, not gathered", only=ESTIMATORS)
            finally: estimators.gathered_when_small = gather
            for forced in ("spread", "one worker"):
                chunks.PLACEMENT = forced
                rows += _fit_rows(Xn, Xdn, yn, k, f"2 workers, {forced}",
                                  only=None if forced == "spread" else ("dp_cd (public M_j)",))
            chunks.PLACEMENT = None
    for n in sizes: rows += _fit_rows(*problem(n), k, "in process")
    load1 = os.getloadavg()
    print(f"load average after: {load1[0]:.2f} {load1[1]:.2f} {load1[2]:.2f}")
    for r in rows: r.update(load_before=load0[0], load_after=load1[0])
    Path(args.out).mkdir(parents=True, exist_ok=True)
    names = ["what", "setting", "n", "ms", "seconds", "in_memory_seconds", "vs_in_memory",
             "max_coef_diff", "data_path", "predicted_spread", "predicted_one_worker",
             "load_before", "load_after"]
    with open(Path(args.out) / "dpcd_dask.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=names)
        w.writeheader()
        w.writerows(rows)


def _fit_rows(X, Xd, y, k, setting, only=None):
    "The fits of `fits` (or only one) on the chunks against in memory (same process, best of k)."
    rows, (n, p) = [], X.shape
    if Xd is not None and setting != "in process":   # each placement's kernels loaded first
        for name, fit in fits(X, y).items():
            if only is None or name in only: fit(Xd)
    cost = placement_cost(n, p, PASSES * p, 2)
    for name, fit in fits(X, y).items():
        if only is not None and name not in only: continue
        base, ref = best_of(lambda: fit(X), k)
        s, r = best_of(lambda: fit(Xd), k)
        diff = float(np.abs(_coef(r) - _coef(ref)).max())
        assert diff < 1e-9 * max(1.0, float(np.abs(_coef(ref)).max())), diff
        res = getattr(r, "fit_results_", [r])[0]   # (an estimator's first solver run)
        path = res.params.get("data_path", "memory")
        if setting != "in process" and path == "memory": path = "gathered"
        rows.append(dict(what=f"fit {name}", setting=setting, n=len(y), seconds=s,
                         in_memory_seconds=base, vs_in_memory=s / base, max_coef_diff=diff,
                         data_path=path, predicted_spread=cost["spread"],
                         predicted_one_worker=cost["one worker"]))
        print(f"{setting:10s} n={len(y):7d} {name:30s}: {s:.3f} s on chunks, "
              f"{base:.3f} s in memory, "
              f"x{s / base:5.1f}, max |coef diff| {diff:.1e} ({path})")
    return rows


def phase_rows(sizes, reps:int, out:str):
    "The estimators' fits by phase, in memory and on 2 workers, interleaved `reps` times."
    from distributed import Client, LocalCluster
    from bench_dpcd_ooc import install_phase_timers
    records, rows = install_phase_timers(), []
    load0 = os.getloadavg()
    print(f"load average before: {load0[0]:.2f} {load0[1]:.2f} {load0[2]:.2f} (2 cores)")
    X, Xd, y = problem(N)
    for name in ESTIMATORS: fits(X, y)[name](X), fits(X, y)[name](Xd)   # compile, in process
    with LocalCluster(host="127.0.0.1", dashboard_address=None, n_workers=2,
                      threads_per_worker=1, processes=True) as cluster, Client(cluster):
        for n in sizes:
            Xn, Xdn, yn = problem(n)
            Xdn = Xdn.persist()
            seen = set()
            for rep in range(reps):
                for name in ESTIMATORS:
                    for setting, Z in (("in memory", Xn), ("2 workers", Xdn)):
                        del records[:]
                        t = time.perf_counter()
                        r = fits(Xn, yn)[name](Z)
                        total = time.perf_counter() - t
                        res = r.fit_results_[0]
                        first = setting != "in memory" and name not in seen
                        if first: seen.add(name)
                        top = sum(ph["seconds"] for ph in records if ph["depth"] == 0)
                        base = dict(what=f"fit {name}", setting=setting, n=n, rep=rep,
                                    first=first, data_path=res.params.get("data_path", "memory"))
                        rows += [dict(base, **ph) for ph in records]
                        rows += [dict(base, phase="other", depth=0, seconds=total - top),
                                 dict(base, phase="fit", depth=-1, seconds=total)]
                        print(f"{setting:9s} n={n} rep {rep} {name:30s} {total:7.2f} s "
                              f"({res.params.get('data_path', 'memory')}): " + ", ".join(
                                  f"{ph['phase']} {ph['seconds']:.2f}" for ph in records),
                              flush=True)
    load1 = os.getloadavg()
    print(f"load average after: {load1[0]:.2f} {load1[1]:.2f} {load1[2]:.2f}")
    for r in rows: r.update(load_before=load0[0], load_after=load1[0])
    names = ["what", "setting", "n", "rep", "first", "data_path", "phase", "depth", "seconds",
             "cpu_seconds", "load_before", "load_after"]
    Path(out).mkdir(parents=True, exist_ok=True)
    with open(Path(out) / "dpcd_dask_phases.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=names, extrasaction="ignore")
        w.writeheader()
        w.writerows(rows)


if __name__ == "__main__":
    main()
