"""Vertical (feature-partitioned) DP-CD, solver "dp-vcd": fit time on a LocalCluster of 2
one-thread worker processes (127.0.0.1) and in process, against the in-memory `dp_cd` fit with
the same seed, in the same process.

    python benchmarks/bench_dask_vertical.py [--out benchmarks/results] [--quick]
                                             [--sizes 40000 400000] [--best-of 3]

Problem: logistic, n × 12 standard normal features / √12, L2(1e-3), 5 passes (60 updates),
public constants M_j, two feature parties of 6 columns (on the cluster: one actor per party, the
label holder on the first worker). Rows written (`dask_vertical.csv`):

1. `floor`: an empty actor round trip (a no-op method of an actor on a worker, called and waited
   for from the driver), milliseconds; an update of the protocol is one actor round trip (the
   label holder's actor asks the owner's for the column), an outer iteration one more.
2. `setup`: seconds to create the parties' actors with their columns shipped from the driver (in a
   federation each party loads its own columns), part of the fit's time on the cluster.
3. `fit`: seconds of `dp_vcd` on the cluster ("2 workers", setup included) and in process, of
   `dp_cd` in memory, the ratio to the in-memory fit, the time per update and its ratio to the
   floor, and the largest difference of the coefficients from the in-memory ones (same seed).

The load average (`os.getloadavg()`) before and after is written with the results: the machine
is shared, so the times are those of the load the run had.
"""
import argparse, csv, os, time, warnings
from pathlib import Path
import numpy as np
from dp_cd.model.losses import LogisticLoss
from dp_cd.model.penalties import L2
from dp_cd.solvers.dpcd import dp_cd
from dp_cd.solvers.vertical import dp_vcd, ColumnBlock, column_blocks

P, PASSES = 12, 5


class Empty:
    "An actor whose method does nothing: the floor of a round trip."
    def ping(self): return 0


def best_of(fn, k:int) -> tuple:
    "(seconds, result) of the fastest of k calls."
    best = None
    for _ in range(k):
        t = time.perf_counter()
        out = fn()
        s = time.perf_counter() - t
        if best is None or s < best[0]: best = (s, out)
    return best


def problem(n:int) -> tuple:
    "A logistic problem n × 12 (X, y) and the options of the fits."
    rng = np.random.default_rng(0)
    X = rng.normal(size=(n, P)) / np.sqrt(P)
    y = np.where(X @ rng.normal(size=P) + 0.3 * rng.normal(size=n) > 0, 1.0, -1.0)
    kw = dict(epsilon=1.0, delta=1.0 / n**2, n_passes=PASSES, random_state=0,
              smoothness=0.25 * (X**2).mean(0))
    return X, y, kw


def floor_ms(client, rounds:int) -> float:
    "Milliseconds of an empty actor round trip (an actor on a worker)."
    actor = client.submit(Empty, actor=True).result()
    actor.ping().result()
    t = time.perf_counter()
    for _ in range(rounds): actor.ping().result()
    return 1e3 * (time.perf_counter() - t) / rounds


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default="benchmarks/results")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--sizes", type=int, nargs="+", default=None,
                    help="the n of the fits (default 40,000 and 400,000; --quick: 40,000)")
    ap.add_argument("--best-of", type=int, default=None, help="k (default 3; --quick: 1)")
    args = ap.parse_args()
    from distributed import Client, LocalCluster
    warnings.simplefilter("ignore")
    k = args.best_of or (1 if args.quick else 3)
    sizes = tuple(args.sizes) if args.sizes else (40_000,) if args.quick else (40_000, 400_000)
    load0, rows = os.getloadavg(), []
    print(f"load average before: {load0[0]:.2f} {load0[1]:.2f} {load0[2]:.2f} (2 cores)")
    X, y, kw = problem(2_000)
    dp_cd(X, y, LogisticLoss(), L2(1e-3), **kw), dp_vcd(X, y, LogisticLoss(), L2(1e-3), **kw)
    with LocalCluster(host="127.0.0.1", dashboard_address=None, n_workers=2,
                      threads_per_worker=1, processes=True) as cluster, Client(cluster) as client:
        floor = floor_ms(client, 200 if args.quick else 1000)
        print(f"floor: empty actor round trip {floor:.3f} ms")
        rows.append(dict(what="floor: empty actor round trip", setting="2 workers", ms=floor))
        dp_vcd(X, y, LogisticLoss(), L2(1e-3), **kw)   # compile on the workers
        cluster_fits, workers = {}, sorted(client.scheduler_info()["workers"])
        for n in sizes:
            X, y, kw = problem(n)
            setup = best_of(lambda: [client.submit(ColumnBlock, b, X[:, b], np.zeros(len(b)),
                                                   actor=True, workers=[w]).result()
                                     for b, w in zip(column_blocks(P, 2), workers)], k)[0]
            rows.append(dict(what="setup: parties' actors with their columns",
                             setting="2 workers", n=n, seconds=setup))
            print(f"n={n:>8} setup of the parties' actors: {setup:.3f} s")
            cluster_fits[n] = best_of(lambda: dp_vcd(X, y, LogisticLoss(), L2(1e-3), **kw), k)
    for n in sizes:
        X, y, kw = problem(n)
        mem = best_of(lambda: dp_cd(X, y, LogisticLoss(), L2(1e-3), **kw), k)
        local = best_of(lambda: dp_vcd(X, y, LogisticLoss(), L2(1e-3), **kw), k)
        for setting, (s, fit) in (("2 workers", cluster_fits[n]), ("in process", local)):
            updates = fit.n_iter
            diff = float(np.abs(fit.coef - mem[1].coef).max())
            per = 1e3 * s / updates
            rows.append(dict(what="fit dp_vcd", setting=setting, n=n, seconds=s,
                             in_memory_seconds=mem[0], vs_in_memory=s / mem[0],
                             ms_per_update=per, vs_floor=per / floor,
                             max_coef_diff=diff))
            print(f"n={n:>8} {setting:>10}: {s:.3f} s, in memory {mem[0]:.4f} s, "
                  f"x{s / mem[0]:.1f}; {per:.2f} ms/update = {per / floor:.1f} x the floor; "
                  f"max |coef diff| {diff:.1e}")
    load1 = os.getloadavg()
    print(f"load average after: {load1[0]:.2f} {load1[1]:.2f} {load1[2]:.2f}")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    fields = ["what", "setting", "n", "ms", "seconds", "in_memory_seconds", "vs_in_memory",
              "ms_per_update", "vs_floor", "max_coef_diff", "load_before", "load_after"]
    with open(out / "dask_vertical.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields)
        w.writeheader()
        for r in rows: w.writerow({**r, "load_before": load0[0], "load_after": load1[0]})
    print(f"wrote {out / 'dask_vertical.csv'}")


if __name__ == "__main__":
    main()
