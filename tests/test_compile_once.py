"""One compiled kernel per path, whatever the input's layout (issue 29): C or F order, float32 or
float64, int32 or int64 sparse indices, CSC or CSR, through the estimators and the plain solvers.

numba compiles a kernel once per tuple of argument types; an array's type includes its layout, its
dtype and whether it is writeable. The count of compiled signatures of every `dp_cd` kernel (a
count, not a timing) may grow with the first input of a path (dense or sparse), never with the next
layouts. Before the fix a Fortran-ordered X, which is what pandas' `to_numpy()` gives, compiled
DP-CD's kernel again (the design was read-only when used in place, writeable when copied), and a
canonical CSC with int32 indices compiled the sparse kernel again.
"""
import sys, warnings
import pytest
import numpy as np
import scipy.sparse as sp
from numba.core.dispatcher import Dispatcher


def signatures():
    "Number of compiled signatures of every numba kernel of dp_cd, by qualified name."
    out = {}
    for name, mod in list(sys.modules.items()):
        if not name.startswith("dp_cd"): continue
        for attr, obj in list(vars(mod).items()):
            if isinstance(obj, Dispatcher): out[f"{name}.{attr}"] = len(obj.signatures)
    return out


def grown(before, after):
    return {k: (before.get(k, 0), v) for k, v in after.items() if v > before.get(k, 0)}


def layouts(X):
    "The same dense design in the layouts users pass."
    return [np.asfortranarray(X), X.astype(np.float32), np.asfortranarray(X.astype(np.float32)),
            X[:, ::1].copy(order="C"), X.tolist()]


def sparse_layouts(X):
    S = sp.csc_matrix(np.where(np.abs(X) > 1.0, X, 0.0))
    out = []
    for idx in (np.int64, np.int32):
        for fmt in ("csc", "csr"):
            A = S.asformat(fmt)
            A.indices, A.indptr = A.indices.astype(idx), A.indptr.astype(idx)
            out.append(A)
    return out + [S.astype(np.float32), sp.coo_matrix(S)]


def test_no_recompile_per_layout():
    from dp_cd import DPClassifier, DPRegressor
    from dp_cd.solvers.dpcd import dp_cd
    from dp_cd.model.losses import LogisticLoss
    from dp_cd.model.penalties import L2
    warnings.simplefilter("ignore")
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 4))
    y = (X[:, 0] > 0).astype(int)
    fits = [lambda A: DPClassifier(epsilon=1, classes=[0, 1], random_state=0).fit(A, y),
            lambda A: DPRegressor(epsilon=1, random_state=0).fit(A, X[:, 1]),
            lambda A: dp_cd(A, 2.0 * y - 1, LogisticLoss(), L2(1e-3), epsilon=1.0, delta=1e-6,
                            n_passes=2, random_state=0)]
    for family in (lambda: [X] + layouts(X), lambda: sparse_layouts(X)):
        first, *rest = family()
        for fit in fits: fit(first)   # compiles (or loads) the path's kernels
        before = signatures()
        for A in rest:
            for fit in fits: fit(A)
        assert grown(before, signatures()) == {}


DEFAULT_FITS = r"""
import json, sys, warnings
import numpy as np
from dp_cd import DPClassifier, DPRegressor
from dp_cd.model import losses
from dp_cd.solvers import dpgcd
warnings.simplefilter("ignore")
rng = np.random.default_rng(0)
X = rng.normal(size=(300, 4)); y = (X[:, 0] > 0).astype(int)
watched = {"weighted": (losses._weighted_sum_dense, losses._weighted_sum_sparse),
           "threaded": (dpgcd._derivatives_parallel, dpgcd._clipped_gradient_parallel)}
count = lambda: {k: sum(len(f.signatures) for f in fs) for k, fs in watched.items()}
out = {}
DPClassifier(epsilon=1, classes=[0, 1], random_state=0).fit(X, y)
DPRegressor(epsilon=1, random_state=0).fit(X, X[:, 1])
DPClassifier(epsilon=1, classes=[0, 1], random_state=0, solver="dp-gcd").fit(X, y)
out["default"] = count()
if sys.argv[1:] == ["controls"]:   # the same counts move when the paths are taken
    DPClassifier(epsilon=1, classes=[0, 1], random_state=0).fit(X, y, sample_weight=rng.uniform(0.5, 1, 300))
    DPClassifier(epsilon=1, classes=[0, 1], random_state=0, solver="dp-gcd",
                 solver_options=dict(n_jobs=2)).fit(X, y)
    out["controls"] = count()
print(json.dumps(out))
"""


@pytest.mark.heavy   # compiles the default paths from an empty cache in a new process
def test_default_fits_compile_only_what_they_run(tmp_path):
    """Default fits (DP-CD for both estimators, serial DP-GCD) compile neither the weighted loops
    nor the threaded gradient pass: counted in a fresh process with an empty numba cache (a cached
    kernel is loaded without compiling its callees). The former code compiled both every time (the
    weighted loops were 40 % of the first fit's compile, the threaded pass 1.8 s of DP-GCD's).
    The controls (a weighted fit, `n_jobs=2`) show the counts move when the paths are taken."""
    import json, os, subprocess
    from pathlib import Path
    root = Path(__file__).resolve().parents[1]
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path), "DP_CD_COMPILE_NOTICE": "0", "NUMBA_NUM_THREADS": "2",
           "PYTHONPATH": os.pathsep.join([str(root), os.environ.get("PYTHONPATH", "")])}
    r = subprocess.run([sys.executable, "-c", DEFAULT_FITS, "controls"], capture_output=True,
                       text=True, env=env, cwd=root, timeout=1800)
    assert r.returncode == 0, r.stderr[-3000:]
    out = json.loads(r.stdout.strip().splitlines()[-1])
    assert out["default"] == {"weighted": 0, "threaded": 0}, out
    assert out["controls"]["weighted"] >= 1 and out["controls"]["threaded"] >= 2, out
