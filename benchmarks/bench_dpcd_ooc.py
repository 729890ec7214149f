"""DP-CD, the default solver, out of core: one pass (p coordinate updates, `n_passes=1`) over a
design of n × 10 float64 on disk, in process, against one plain read of the same files.

    python benchmarks/bench_dpcd_ooc.py [--rows 100000000] [--dir /tmp] [--reps 3]
                                        [--out benchmarks/results] [--csv dpcd_out_of_core.csv]
                                        [--runs read,dp-cd,dp-cd-sample,dp-classifier]

`--rows` takes a comma-separated list (e.g. `10000000,30000000`): each size is written, run and
deleted in turn, and all rows go to one CSV (`--csv`), to show how memory and time scale with n.

The design is written once as a Fortran-ordered `.npy` file (column after column), the labels
±1 as a second `.npy` file (an (n, 1) array, passed as `npy_chunks(y)[:, 0]`: the solver's one
validated copy is the only one in memory); both are deleted at the end. Each measured run is a fresh process
(`NUMBA_NUM_THREADS=1`), started after the files' pages were dropped from the page cache
("cold": `posix_fadvise(POSIX_FADV_DONTNEED)` on each file, the fraction still cached read back
by util-linux `fincore`) or after they were read once ("warm"). Runs, interleaved `reps` times:

- `read`: X and y read once with plain reads into one reused buffer (the floor);
- `dp-cd`: `dp_cd(npy_chunks(X), y, LogisticLoss(), L2(1e-3), epsilon=1, delta=1/n², n_passes=1)`
  with public M_j; its chunks stay on disk and each update reads only its columns
  (`dp_cd.solvers.chunks.ColumnChunks`); the labels are read inside the timed run;
- `dp-cd-sample`: the same with per-sample clipping (`clipping="sample"`, C = 1): the row norms
  read every column once when the chunks' states are made (each record's threshold kept in
  float32, rounded down), then a permutation of the p coordinates (every column read in the pass);
- `dp-classifier` (with `--runs ...,dp-classifier`): the default estimator,
  `DPClassifier(epsilon=1, classes=[-1, 1], n_passes=1)` with every other option at its default
  (private bounds, centre and scales; per-sample clipping; an intercept) on the same chunks: its
  records are the file's columns mapped into the box (clipped, centred, divided) as they are
  read (`dp_cd.solvers.chunks.map_on_read`), so the run holds the solver's state (margins 8 B,
  per-sample thresholds 4 B (float32, rounded down), one-byte labels), never the mapped design;
- `dp-bcd` (with `--runs ...,dp-bcd`): block DP-CD with B = p on the same file (every chunk
  read whole, once per pass).

- `dp-classifier-cold` (with `--runs ...,dp-classifier-cold`): the same fit, the files' pages
  dropped again at the start of each phase below (and after the chunks' states), so that every
  phase, the DP-CD pass included, is timed from a cold cache, as one cold read is.

`read_bytes` is what the timed part asked of `read()` (from the page cache or the disk,
`/proc/self/io` rchar), `disk_bytes` what came from the disk (`read_bytes` of `/proc/self/io`):
with coordinate-wise clipping DP-CD draws its p coordinates uniformly with replacement, so a pass
reads the columns it drew, not always all of them.

The estimator's runs are also timed by phase (`install_phase_timers`: each private release of
the preprocessing, the solver's chunk states (the per-sample clipping's row norms), the solver's
run on the chunks, whose remainder is the DP-CD pass), with the wall-clock and CPU seconds and
the bytes asked of `read()` and read from the disk during each; written to `<csv>_phases.csv`
beside the runs' CSV, each phase also against the median cold read (`vs_one_read`).

Peak RSS is the process's `VmHWM`. A pass is compared with the median of the reads in the same
cache state (`vs_one_read`). The load average is written with every row: the machine is shared.
Results: `dpcd_out_of_core.csv`.
"""
import argparse, csv, json, os, resource, subprocess, sys, time
from pathlib import Path
import numpy as np

P = 10

# the phases of a fit timed by `install_phase_timers`: (module, attribute, label); a name the
# library does not define (any more) is skipped with a message, not an error
# (names separated by "|": the first one the module defines)
PHASES = (("dp_cd.estimators", "_prepare_chunked", "prepare (chunks checked, labels read)"),
          ("dp_cd.estimators", "private_data_bounds|_private_data_bounds",
           "release: bounds (histogram)"),
          ("dp_cd.estimators", "refined_public_bounds|_refined_public_bounds",
           "release: refined public bounds"),
          ("dp_cd.estimators", "add_label_mean|_add_label_mean", "release: labels' mean"),
          ("dp_cd.estimators", "add_private_center|_add_private_center", "release: centre"),
          ("dp_cd.estimators", "add_private_spread|_add_private_spread",
           "release: bounds around the centre"),
          ("dp_cd.estimators", "add_private_scale|_add_private_scale", "release: scales"),
          ("dp_cd.solvers.contract", "Solver.fit", "solver"),
          ("dp_cd.solvers.dpcd", "DPCD.run_chunks", "solver: run on the chunks"),
          ("dp_cd.solvers.dpcd", "hold_chunks", "solver: chunk states (row norms)"))


def io_counters() -> tuple:
    "(bytes asked of read(), bytes read from the disk) by this process so far (/proc/self/io)."
    got = {}
    for line in open("/proc/self/io"):
        k, v = line.split(":")
        got[k] = int(v)
    return got["rchar"], got["read_bytes"]


def install_phase_timers(drop=None, # drop(): the files' pages dropped at each phase's start
                        ) -> list: # the records, appended to as the phases run
    """Wrap the functions of `PHASES` so that each call appends (phase, start, seconds, CPU
    seconds, bytes asked of read(), bytes from the disk); the wrappers call the originals."""
    import importlib
    records, depth = [], [0]
    def cpu():
        r = resource.getrusage(resource.RUSAGE_SELF)
        return r.ru_utime + r.ru_stime
    def wrap(fn, label):
        def timed(*args, **kw):
            if drop is not None: drop()
            t, c, (r, d) = time.perf_counter(), cpu(), io_counters()
            depth[0] += 1
            try: return fn(*args, **kw)
            finally:
                depth[0] -= 1
                r1, d1 = io_counters()
                records.append(dict(phase=label, depth=depth[0], start=t,
                                    seconds=time.perf_counter() - t, cpu_seconds=cpu() - c,
                                    read_bytes=r1 - r, disk_bytes=d1 - d))
                if drop is not None and label.endswith("(row norms)"): drop()   # the pass: cold
        return timed
    for module, names, label in PHASES:
        for name in names.split("|"):
            owner = importlib.import_module(module)
            *path, attr = name.split(".")
            for part in path: owner = getattr(owner, part, None)
            if owner is not None and hasattr(owner, attr):
                setattr(owner, attr, wrap(getattr(owner, attr), label))
                break
        else: print(f"phase {label!r}: {module}.{names} not found, not timed", file=sys.stderr)
    return records


def drop_pages(paths):
    "Drop the files' pages from the page cache (`posix_fadvise(POSIX_FADV_DONTNEED)`)."
    for name in paths:
        fd = os.open(name, os.O_RDONLY)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        os.close(fd)

SNIPPET = r"""
import json, resource, sys, time
import numpy as np
sys.path.insert(0, BENCHMARKS)
from bench_dpcd_ooc import drop_pages, install_phase_timers, io_counters
from dp_cd.model.losses import LogisticLoss
from dp_cd.model.penalties import L2
from dp_cd.solvers.dpcd import dp_cd
from dp_cd.solvers.block_cd import dp_bcd
from dp_cd.solvers.chunks import npy_chunks
from dp_cd import DPClassifier
what, path, ypath, rows = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
def status(key):
    for line in open("/proc/self/status"):
        if line.startswith(key): return int(line.split()[1]) * 1024
def cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime
def read_once(*paths):
    buf = memoryview(np.empty(rows * 10)).cast("B")
    for name in paths:
        with open(name, "rb", buffering=0) as f:
            while f.readinto(buf): pass
# the same modules and kernels loaded in every mode before the clock starts (same RSS baseline)
r = np.random.default_rng(0)
Xw, yw = r.normal(size=(200, 10)), np.where(r.normal(size=200) > 0, 1.0, -1.0)
dp_cd(Xw, yw, LogisticLoss(), L2(1e-3), epsilon=1.0, delta=1e-6, n_passes=1,
      smoothness=np.full(10, 0.25), random_state=0)
phases = (install_phase_timers(lambda: drop_pages((path, ypath)) if what.endswith("-cold")
                               else None) if what.startswith("dp-classifier") else [])
base, t, c, (r0, d0) = status("VmHWM"), time.perf_counter(), cpu(), io_counters()
if what == "read":
    read_once(path, ypath)
else:
    X, y = npy_chunks(path, rows=rows), npy_chunks(ypath, rows=rows)[:, 0]   # both on disk
    n, p = X.shape
    kw = dict(epsilon=1.0, delta=1.0 / n**2, n_passes=1, smoothness=np.full(p, 0.25 / p),
              random_state=0)
    if what == "dp-cd": res = dp_cd(X, y, LogisticLoss(), L2(1e-3), **kw)
    elif what == "dp-cd-sample":   # per-sample clipping: every column once per pass (a permutation)
        res = dp_cd(X, y, LogisticLoss(), L2(1e-3), clipping="sample", clip=1.0, **kw)
    elif what.startswith("dp-classifier"):   # the default estimator, one pass
        res = DPClassifier(epsilon=1.0, classes=[-1.0, 1.0], n_passes=1, random_state=0).fit(X, y)
        res.coef = res.coef_
    else: res = dp_bcd(X, y, LogisticLoss(), L2(1e-3), block_size=p, **kw)
    assert np.all(np.isfinite(res.coef))
r1, d1 = io_counters()
for ph in phases: ph["start"] -= t
print(json.dumps(dict(what=what, seconds=time.perf_counter() - t, cpu_seconds=cpu() - c,
                      peak_rss=status("VmHWM"), rss_before=base, read_bytes=r1 - r0,
                      disk_bytes=d1 - d0, phases=phases)))
"""


def write_design(d:Path, n:int, rows:int):
    "X (n, P) in Fortran order and the labels ±1 as an (n, 1) array, written chunk by chunk."
    X = np.lib.format.open_memmap(d / "X.npy", mode="w+", dtype=np.float64, shape=(n, P),
                                  fortran_order=True)
    y = np.lib.format.open_memmap(d / "y.npy", mode="w+", dtype=np.float64, shape=(n, 1))
    rng, w = np.random.default_rng(0), np.random.default_rng(1).normal(size=P)
    for a in range(0, n, rows):
        b = min(n, a + rows)
        Xa = rng.normal(size=(b - a, P)) / np.sqrt(P)
        X[a:b] = Xa
        y[a:b, 0] = np.where(Xa @ w + 0.3 * rng.normal(size=b - a) > 0, 1.0, -1.0)
    X.flush(), y.flush()
    del X, y
    os.sync()   # clean pages: DONTNEED can then drop them


def set_cache(paths, cache:str) -> float:
    "Drop the files' pages (cold) or read them once (warm); the fraction of bytes cached after."
    for name in paths:
        if cache == "cold": drop_pages([name])
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


def run(what, paths, n, rows, cache, rep):
    "One run in a fresh process, the page cache set first; its row (None: failed)."
    cached = set_cache(paths, cache)
    env = dict(os.environ, NUMBA_NUM_THREADS="1")
    code = SNIPPET.replace("BENCHMARKS", repr(str(Path(__file__).resolve().parent)))
    res = subprocess.run([sys.executable, "-c", code, what, *map(str, paths), str(rows)],
                         capture_output=True, text=True, timeout=7200, env=env)
    if res.returncode: print(res.stderr[-3000:]); return None
    r = dict(json.loads(res.stdout.strip().splitlines()[-1]), n=n, p=P, cache=cache, rep=rep,
             cached_fraction=cached, file_bytes=sum(os.path.getsize(p) for p in paths),
             chunk_rows=rows, load_avg=os.getloadavg()[0])
    print(f"  {cache} {what:12s} n={n}: {r['seconds']:8.2f} s (cpu {r['cpu_seconds']:.2f} s), "
          f"peak RSS {r['peak_rss'] / 2**30:.2f} GiB, read {r['read_bytes'] / 1e9:.2f} GB "
          f"({r['disk_bytes'] / 1e9:.2f} GB from the disk), "
          f"cached before {cached:.0%}, "
          f"load {r['load_avg']:.1f}", flush=True)
    for ph in r["phases"]:
        print(f"    {ph['phase']:38s} {ph['seconds']:8.2f} s (cpu {ph['cpu_seconds']:.2f} s), "
              f"read {ph['read_bytes'] / 1e9:.2f} GB ({ph['disk_bytes'] / 1e9:.2f} GB from the "
              f"disk)", flush=True)
    return r


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", default="100000000", help="n, or a comma-separated list of n")
    ap.add_argument("--chunk-rows", type=int, default=1_000_000)
    ap.add_argument("--dir", default="/tmp")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--caches", default="cold,warm")
    ap.add_argument("--runs", default="read,dp-cd,dp-cd-sample")
    ap.add_argument("--out", default="benchmarks/results")
    ap.add_argument("--csv", default="dpcd_out_of_core.csv")
    args = ap.parse_args()
    d = Path(args.dir) / "dp_cd_dpcd_ooc"
    d.mkdir(parents=True, exist_ok=True)
    paths, out, phases = (d / "X.npy", d / "y.npy"), [], []
    print(f"load average before: {os.getloadavg()}", flush=True)
    try:
        for n in map(int, args.rows.split(",")):
            write_design(d, n, args.chunk_rows)
            for cache in args.caches.split(","):
                got = [r for rep in range(args.reps) for what in args.runs.split(",")
                       for r in [run(what, paths, n, args.chunk_rows, cache, rep)]
                       if r is not None]
                read = np.median([r["seconds"] for r in got if r["what"] == "read"] or [np.nan])
                for r in got:
                    r["vs_one_read"] = r["seconds"] / read
                    for ph in r["phases"]:
                        phases.append(dict(what=r["what"], n=n, cache=cache, rep=r["rep"], **ph,
                                           file_bytes=r["file_bytes"], load_avg=r["load_avg"],
                                           vs_one_read=ph["seconds"] / read))
                out += got
            for f in paths: f.unlink()
    finally:
        for f in d.glob("*.npy"): f.unlink()
        d.rmdir()
    print(f"load average after: {os.getloadavg()}")
    Path(args.out).mkdir(parents=True, exist_ok=True)
    for r in out: del r["phases"]
    with open(Path(args.out) / args.csv, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(out[0]))
        w.writeheader()
        w.writerows(out)
    if phases:
        with open(Path(args.out) / args.csv.replace(".csv", "_phases.csv"), "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(phases[0]))
            w.writeheader()
            w.writerows(phases)


if __name__ == "__main__":
    main()
