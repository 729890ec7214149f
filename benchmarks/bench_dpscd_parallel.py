"""DP-SCD's parallel angle: Algorithm 1's independent moves of a batch computed by 2 threads vs 1.

    python benchmarks/bench_dpscd_parallel.py [--out benchmarks/results]

One process, the same data and draws for both thread counts; every time is the best of 5 runs; the
table reports the ratio time(1 thread) / time(2 threads) and checks that both give the same bits.
Written to `dpscd_parallel.csv` under `--out`.
"""
import argparse, csv, os, time
from pathlib import Path
import numpy as np
import numba
from dp_cd.solvers.dpsgd import poisson_batches
from dp_cd.model.losses import SquaredLoss
from dp_cd.solvers.dpscd import scd_steps_dense, scd_steps_dense_parallel


def run(kernel, X, y, ptr, idx, na, nv, parallel):
    a, v = np.zeros(X.shape[0]), np.zeros(X.shape[1])
    scales = (1e-3, float(np.diff(ptr).mean()), 1.0, 0.01)
    args = (X, y, a, v, SquaredLoss().kernel_args(), scales, (ptr, idx), (na, nv), True)
    t = time.perf_counter()
    kernel(*args) if parallel else kernel(*args, False)
    return time.perf_counter() - t, np.concatenate([a, v])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default="benchmarks/results")
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    rows = []
    for N, p, L, T in [(20_000, 100, 1000, 20), (5_000, 1000, 500, 10)]:
        X = np.ascontiguousarray(rng.normal(size=(N, p)) / np.sqrt(p))
        y = rng.normal(size=N)
        ptr, idx = poisson_batches(rng, N, L / N, T)
        na, nv = rng.standard_normal((T, N)), rng.standard_normal((T, p))
        run(scd_steps_dense, X, y, ptr, idx, na, nv, False)   # compile
        times = {}
        for threads in (1, 2):
            numba.set_num_threads(threads)
            run(scd_steps_dense_parallel, X, y, ptr, idx, na, nv, True)
            best, out = min(run(scd_steps_dense_parallel, X, y, ptr, idx, na, nv, True) for _ in range(5))
            times[threads] = best
        serial, ref = min(run(scd_steps_dense, X, y, ptr, idx, na, nv, False) for _ in range(5))
        assert np.array_equal(ref, out)
        rows.append(dict(N=N, p=p, L=L, steps=T, serial_s=serial, one_thread_s=times[1],
                         two_threads_s=times[2], speedup_2_vs_1=times[1] / times[2]))
        print(rows[-1])
    Path(args.out).mkdir(parents=True, exist_ok=True)
    with open(Path(args.out) / "dpscd_parallel.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)


if __name__ == "__main__":
    main()
