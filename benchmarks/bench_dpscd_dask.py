"""DP-SCD (Algorithm 1, private) on row chunks against the in-memory solver, in the same process:
in process (chunks read per use) and on a LocalCluster of 2 one-thread workers (127.0.0.1).

    python benchmarks/bench_dpscd_dask.py [--out benchmarks/results] [--quick]

One pass over the data; the step count is N / L, one reduce per step on chunks (on the cluster
the chunks and their duals' moves held by the workers' actors, `ChunkRounds`). On the cluster the
fit runs where the cost model places it ("2 workers": `data_path` says where) and with the chunks
held spread ("2 workers, spread", forced). Every time is the best of k runs; the table reports
seconds per step and the ratio to the in-memory run, checks that the chunked model is the
in-memory model (same seed), and writes the load average before and after each row (the machine
is shared). Written to `dpscd_dask.csv`.
"""
import argparse, csv, os, time, warnings
from pathlib import Path
import numpy as np
from dp_cd.model.losses import LogisticLoss
from dp_cd.model.penalties import L2
from dp_cd.solvers.dpscd import dp_scd
from dp_cd.solvers.chunks import placement
import dp_cd.solvers.distributed  # noqa: F401  (registers the chunked runs)

P = 10


def best_of(fit, k):
    out = None
    for _ in range(k):
        t = time.perf_counter()
        r = fit()
        s = time.perf_counter() - t
        if out is None or s < out[0]: out = (s, r)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default="benchmarks/results")
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    import dask.array as da
    from distributed import Client, LocalCluster
    warnings.simplefilter("ignore")
    k = 1 if args.quick else 3
    cases = [(20_000, 1000), (20_000, 200)] if args.quick else [(20_000, 1000), (20_000, 200),
                                                                 (200_000, 10_000)]
    rng = np.random.default_rng(0)
    rows = []
    with LocalCluster(host="127.0.0.1", protocol="tcp://", dashboard_address=None, n_workers=2,
                      threads_per_worker=1, processes=True,
                      scheduler_kwargs={"dashboard_address": "127.0.0.1:0"}) as cluster:
        for N, L in cases:
            X = rng.normal(size=(N, P)) / np.sqrt(P)
            y = np.sign(X @ rng.normal(size=P) + 0.1 * rng.normal(size=N))
            fit = lambda Z: dp_scd(Z, y, LogisticLoss(), L2(1e-3), epsilon=1.0, delta=1.0 / N**2,
                                   n_passes=1, batch_size=L, clip=1.0, random_state=0)
            fit(X)   # compile
            Xd = da.from_array(X, chunks=(N // 4, P))
            base, ref = best_of(lambda: fit(X), k)
            def timed(name, Z, where):
                load0 = os.getloadavg()[0]
                with placement(where): s, r = best_of(lambda: fit(Z), k)
                diff = float(np.abs(r.coef - ref.coef).max())
                assert diff < 1e-9 * max(1.0, float(np.abs(ref.coef).max())), diff
                rows.append(dict(setting=name, N=N, p=P, L=L, steps=r.n_iter, seconds=s,
                                 in_memory_seconds=base, ms_per_step=1e3 * s / r.n_iter,
                                 vs_in_memory=s / base, max_coef_diff=diff,
                                 data_path=r.params["data_path"], load_before=load0,
                                 load_after=os.getloadavg()[0]))
                print(f"{name:18s} N={N:7d} L={L:6d} steps={r.n_iter:4d}: "
                      f"{1e3 * s / r.n_iter:7.2f} ms/step, x{s / base:7.1f} the in-memory run "
                      f"({base:.3f} s; {r.params['data_path']}; load {load0:.1f})")
            timed("in process", Xd, None)   # no client: the chunks read in this process
            with Client(cluster):
                Zp = Xd.persist()
                timed("2 workers", Zp, None)   # where the cost model places it
                timed("2 workers, spread", Zp, "spread")   # the chunks held by the workers
    Path(args.out).mkdir(parents=True, exist_ok=True)
    with open(Path(args.out) / "dpscd_dask.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)


if __name__ == "__main__":
    main()
