"""Where the time of `from dp_cd import DPClassifier` goes, by `python -X importtime`.

Each statement runs in `k` fresh interpreters with its bytecode cached (as an installed package has it); the
self time of every module imported is summed by top-level package (numba with llvmlite; modules of the standard
library and small packages as "other"), and the median over the k runs is kept. Also stored: the cumulative time
of the subtree under `sklearn.base` if a statement imports it, and the self time of the modules of the statement
that a plain `import sklearn.base` loads by itself (scipy.stats and pandas among them, and numpy): the estimators
follow scikit-learn's protocol without importing it (`dp_cd.base`), so the subtree is 0 and the shared modules are
numpy's and the standard library's. `-X importtime` adds its own overhead, so the shares matter more than the
seconds, which the `import` rows of `first_fit.csv` measure without it. Writes `results/import_breakdown.csv`.

    python benchmarks/bench_import.py [--k 5] [--out benchmarks/results/import_breakdown.csv]
"""
import argparse, csv, os, subprocess, sys, tempfile
from collections import defaultdict
from pathlib import Path
import numpy as np

STATEMENTS = {"from dp_cd import DPClassifier": "from dp_cd import DPClassifier",
              "import dp_cd": "import dp_cd"}
GROUPS = {"llvmlite": "numba", "numba": "numba", "numpy": "numpy", "scipy": "scipy", "sklearn": "sklearn",
          "pandas": "pandas", "pyarrow": "pyarrow", "dp_cd": "dp_cd"}


def parse(stderr):
    "[(depth, module, self µs, cumulative µs)] of one `-X importtime` report."
    out = []
    for line in stderr.splitlines():
        if not line.startswith("import time:") or "self [us]" in line: continue
        head, cum, name = line.split("|")
        self_us = int(head.split(":", 1)[1])
        depth = (len(name) - len(name.lstrip(" "))) // 2
        out.append((depth, name.strip(), self_us, int(cum)))
    return out


def one(stmt, env):
    r = subprocess.run([sys.executable, "-X", "importtime", "-c", stmt], env=env, capture_output=True, text=True)
    if r.returncode: raise RuntimeError(r.stderr[-2000:])
    return parse(r.stderr)


def sklearn_base_modules(env):
    "The modules a fresh `import sklearn.base` loads."
    r = subprocess.run([sys.executable, "-c", "import sys, sklearn.base; print(' '.join(sys.modules))"], env=env,
                       capture_output=True, text=True, check=True)
    return set(r.stdout.split())


def bench_import(k=5):
    rows = []
    with tempfile.TemporaryDirectory() as pyc:
        env = {key: v for key, v in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}
        env["PYTHONPYCACHEPREFIX"] = pyc
        for stmt in STATEMENTS.values(): one(stmt, env)   # writes the bytecode
        base = sklearn_base_modules(env)
        for what, stmt in STATEMENTS.items():
            by_group, totals, sk_base, sk_mods = defaultdict(list), [], [], []
            for _ in range(k):
                mods = one(stmt, env)
                g = defaultdict(int)
                for depth, name, self_us, cum in mods:
                    g[GROUPS.get(name.split(".")[0], "other")] += self_us
                for name in set(GROUPS.values()) | {"other"}: by_group[name].append(g[name] / 1e6)
                totals.append(sum(m[2] for m in mods) / 1e6)
                sk_base.append(next((m[3] / 1e6 for m in mods if m[1] == "sklearn.base"), 0.0))
                sk_mods.append(sum(m[2] for m in mods if m[1] in base) / 1e6)
            load = os.getloadavg()[0]
            total = float(np.median(totals))
            for name, ts in sorted(by_group.items(), key=lambda kv: -np.median(kv[1])):
                rows.append(dict(statement=what, part="self time of the package's modules", what=name,
                                 seconds=float(np.median(ts)), share=float(np.median(ts)) / total, load=load, runs=k))
            rows.append(dict(statement=what, part="subtree", what="sklearn.base with what it imports",
                             seconds=float(np.median(sk_base)), share=float(np.median(sk_base)) / total, load=load,
                             runs=k))
            rows.append(dict(statement=what, part="modules that import sklearn.base loads by itself",
                             what=f"{len(base)} modules", seconds=float(np.median(sk_mods)),
                             share=float(np.median(sk_mods)) / total, load=load, runs=k))
            rows.append(dict(statement=what, part="total", what="all modules", seconds=total, share=1.0, load=load,
                             runs=k))
    return rows


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--k", type=int, default=5)
    ap.add_argument("--out", default=str(Path(__file__).parent / "results" / "import_breakdown.csv"))
    args = ap.parse_args(argv)
    rows = bench_import(args.k)
    for r in rows:
        print(f"  {r['statement']:32s} {r['part']:36s} {r['what']:36s} {r['seconds']:7.3f} s {r['share']:6.1%} "
              f"(load {r['load']:.1f})")
    with open(args.out, "w", newline="") as f:
        w = csv.DictWriter(f, list(rows[0])); w.writeheader(); w.writerows(rows)
    print(f"-> wrote {args.out}")


if __name__ == "__main__":
    main()
