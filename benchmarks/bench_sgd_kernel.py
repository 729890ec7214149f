"""DP-SGD, batch 64, one epoch on Electricity (45,312 x 8, logistic): the counter-based batches against the
generator-drawn ones, phase by phase, in floors `X.T @ r` ticked in the same process (`floor.Floor`).

    python benchmarks/bench_sgd_kernel.py [--repeat 15] [--timer cpu]   (writes results/sgd_kernel.csv)

Rows (each the best of k calls; the load average on every row):
* the epoch through `dp_sgd` (marginal: 3 epochs minus 1, halved), Fortran-ordered X as the solver gets it;
* the kernel alone (`sgd_steps_dense` on an epoch of counter-based batches drawn beforehand), F and C order;
* the gather alone (the epoch's records copied into a small buffer, as the kernel does), F and C order;
* the counter-based batches of one epoch alone (`counter_batches`) and the generator-drawn ones (`poisson_batches`,
  standard exponentials from NumPy's ziggurat): the two samplers' costs;
* the solver's sampling and kernel: `counter_batches` then `sgd_steps_dense` (F order), and the same with the
  generator-drawn batches (`poisson_batches` then `sgd_steps_dense`);
* the solver's kernel, which draws each step's batch as the step comes (`_counter_steps_dense`);
* the noise of one epoch (`standard_normal((T, p))`).
"""
import argparse, os, sys, time
from pathlib import Path
import numpy as np
import pandas as pd
from numba import njit
sys.path.insert(0, str(Path(__file__).parent))
from floor import Floor, between
from dp_cd import datasets
from dp_cd.model.losses import LogisticLoss
from dp_cd.model.penalties import L2
from dp_cd.solvers.dpsgd import dp_sgd, poisson_batches, counter_batches, sgd_steps_dense, clipping_norms
try: from dp_cd.solvers.dpsgd import _counter_steps_dense, sampling_constants   # the solver's kernel
except ImportError: _counter_steps_dense = None   # (an older tree: batches drawn beforehand)


@njit(cache=True)
def gather_only(X, ptr, idx, buf):
    "The kernel's gather alone: each batch's records into the columns of `buf`, as `_gather_dense`."
    s = 0.0
    for t in range(ptr.shape[0] - 1):
        for j in range(X.shape[1]):
            for k in range(ptr[t + 1] - ptr[t]): buf[j, k] = X[idx[ptr[t] + k], j]
        s += buf[0, 0]
    return s


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=15)
    ap.add_argument("--timer", choices=("wall", "cpu"), default="wall")
    ap.add_argument("--data-dir", default=os.environ.get("DP_CD_DATA"))
    ap.add_argument("--out", default=str(Path(__file__).parent / "results" / "sgd_kernel.csv"))
    args = ap.parse_args()
    clock = time.process_time if args.timer == "cpu" else time.perf_counter
    k = args.repeat
    ds = datasets.load("electricity", args.data_dir, standardize=True)
    X, y = ds.X, ds.y
    n, p = X.shape
    loss, pen = LogisticLoss(), L2(1e-3)
    L = loss.smoothness(X)
    B, T = 64, int(round(n / 64))
    floor = Floor(X, clock=clock).__enter__()

    def best_of(f):
        ts = []
        for _ in range(k):
            between()
            t = clock(); f(); ts.append(clock() - t)
        return min(ts)

    rows = []
    def row(part, seconds, note=""):
        rows.append(dict(dataset="electricity", n=n, p=p, part=part, seconds=seconds, load=os.getloadavg()[0],
                         note=note))
        print(f"  {part:72s} {seconds * 1e3:8.3f} ms", flush=True)

    sgd = lambda P: dp_sgd(X, y, loss, pen, epsilon=1.0, delta=1.0 / n**2, n_passes=P, step=1.0 / L, clip=1.0,
                           batch_size=B, accountant="rdp", random_state=0)
    sgd(1), sgd(3)
    row("epoch through dp_sgd (marginal: 3 epochs - 1, halved)", (best_of(lambda: sgd(3)) - best_of(lambda: sgd(1))) / 2,
        "Fortran-ordered X, as the solver gets it")
    rng = np.random.default_rng(0)
    noise, norms, w = rng.standard_normal((T, p)), clipping_norms(X), np.zeros(p)
    fixed = (loss.kernel_args(), pen.kernel_args(), (1.0 / L, 1.0, 1.0 / B, 0.5))
    batches = counter_batches(5, n, B / n, 0, T)
    Xc = np.ascontiguousarray(X)
    given = lambda D, b: sgd_steps_dense(D, y, norms, w.copy(), *fixed, b, noise)
    for D, lay in ((X, "Fortran"), (Xc, "C")):
        given(D, batches)
        row(f"kernel alone (sgd_steps_dense on counter-based batches), {lay}-ordered X",
            best_of(lambda: given(D, batches)), "no sampling")
    buf = np.empty((p, int(np.diff(batches[0]).max()) + 1))
    for D, lay in ((X, "Fortran"), (Xc, "C")):
        gather_only(D, *batches, buf)
        row(f"gather alone (the epoch's records into a small buffer), {lay}-ordered X",
            best_of(lambda: gather_only(D, *batches, buf)), "no arithmetic")
    row("counter-based batches of one epoch (counter_batches)", best_of(lambda: counter_batches(5, n, B / n, 0, T)))
    g = np.random.default_rng(1)
    row("generator-drawn batches of one epoch (poisson_batches)", best_of(lambda: poisson_batches(g, n, B / n, T)),
        "NumPy's standard exponentials, gaps summed")
    new = lambda: given(X, counter_batches(5, n, B / n, 0, T))
    old = lambda: given(X, poisson_batches(g, n, B / n, T))
    new(), old()
    for _ in range(2):   # interleaved
        row("counter_batches then sgd_steps_dense, Fortran-ordered X (the solver's)", best_of(new))
        row("poisson_batches then sgd_steps_dense, Fortran-ordered X (generator-drawn)", best_of(old))
    if _counter_steps_dense is not None:   # the solver's kernel: each batch drawn as its step comes
        drawn = lambda: _counter_steps_dense(X, y, norms, w.copy(), *fixed,
                                             (5, 0, T) + sampling_constants(B / n), noise)
        drawn()
        row("batches drawn as the steps come (_counter_steps_dense), Fortran-ordered X (the solver's)",
            best_of(drawn))
    row("noise of one epoch (standard_normal((T, p)))", best_of(lambda: g.standard_normal((T, p))))
    floor.__exit__()
    out = pd.DataFrame(rows)
    out["vs_floor"] = out.seconds / floor.best
    for name, v in floor.fields().items(): out[name] = v
    out["timer"] = args.timer
    out.to_csv(args.out, index=False)
    print(floor)
    print(out[["part", "vs_floor", "load"]].to_string(index=False, float_format=lambda v: f"{v:.2f}"))


if __name__ == "__main__":
    main()
