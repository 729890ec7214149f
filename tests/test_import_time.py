"""`import dp_cd` stays light (issue 29): what a fresh interpreter has imported, not a timing.

Before the fix `import dp_cd` imported `scipy.signal` (through the PLD chapter, ~1/3 of the time)
and scikit-learn, which imports pandas (another 1/3); both were in `sys.modules` afterwards. The
estimators follow scikit-learn's protocol without importing it (`dp_cd.base`): scikit-learn is
imported by a fit, a score or a check, not by `from dp_cd import DPClassifier`.
"""
import json, os, subprocess, sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HEAVY = ("scipy.signal", "pandas", "matplotlib", "dask", "dp_cd.experiments", "sklearn")
# what no fit of the plain solvers needs at import: growth's grid filter (scipy.ndimage) and output
# perturbation's conjugate gradient (scipy.sparse.linalg, which imports scipy.linalg) are imported
# where used (before, `import dp_cd` loaded all three: 804 modules, now 705)
SOLVER_ONLY = ("scipy.ndimage", "scipy.sparse.linalg", "scipy.linalg")
# what a fit needs only on use: scipy.sparse for a sparse X (`dp_cd.utils.scipy_sparse` imports it on
# first use; it also loads numpy's f2py and testing through scipy's array-API layer) and numpy.ma
# (which np.unique imports)
ON_USE = ("scipy.sparse", "numpy.ma", "numpy.f2py")


def loaded_after(code, heavy=HEAVY):
    "The modules of `heavy` (or their submodules) in `sys.modules` after running `code` afresh."
    probe = (f"import sys, json\n{code}\n"
             "import dp_cd\n"
             f"assert dp_cd.__file__.startswith({str(ROOT)!r}), dp_cd.__file__\n"
             f"heavy = {heavy!r}\n"
             "print(json.dumps(sorted({h for h in heavy for m in list(sys.modules)"
             " if m == h or m.startswith(h + '.')})))\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    r = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env,
                       cwd=ROOT, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    return set(json.loads(r.stdout.strip().splitlines()[-1]))


def test_import_dp_cd_is_light():
    assert loaded_after("import dp_cd", HEAVY + SOLVER_ONLY + ON_USE) == set()


def test_public_api_unchanged():
    "Every name of `__all__` is importable from the top level and is what its module defines."
    code = ("import dp_cd as pkg\n"
            "from dp_cd import *   # binds dp_cd to the solver function of that name\n"
            "from dp_cd import DPClassifier, DPRegressorCV, BudgetAccountant, dp_sgd, L1\n"
            "import dp_cd.estimators as est, dp_cd.tuned as tuned\n"
            "missing = [n for n in pkg.__all__ if n not in globals()]\n"
            "assert not missing, missing\n"
            "assert DPClassifier is est.DPClassifier and DPRegressorCV is tuned.DPRegressorCV\n"
            "assert BudgetAccountant is pkg.BudgetAccountant and dp_cd is pkg.dp_cd\n"
            "assert set(pkg.__all__) <= set(dir(pkg))\n"
            "assert pkg.estimators is est and pkg.solvers.contract.SOLVERS\n"
            "try:\n    pkg.no_such_name\nexcept AttributeError: pass\n"
            "else: raise AssertionError('pkg.no_such_name')\n")
    assert loaded_after(code) == set()   # the estimators follow scikit-learn's protocol unimported


def test_the_estimators_import_light():
    "The estimators, tuned or not, and the transformer load neither scikit-learn nor scipy.stats."
    code = ("from dp_cd import DPClassifier, DPRegressor, DPClassifierCV, DPRegressorCV\n"
            "from dp_cd.preprocessing import DPStandardScaler\n"
            "assert DPClassifier._estimator_type == 'classifier'\n")
    assert loaded_after(code, HEAVY + ("scipy.stats", "scipy.optimize")) == set()


def test_default_fit_imports_no_plotting_nor_signal():
    "A default private fit through the estimator needs neither scipy.signal nor plots nor dask."
    code = ("import numpy as np\n"
            "from dp_cd import DPClassifier\n"
            "rng = np.random.default_rng(0)\n"
            "X = rng.uniform(-1, 1, (100, 3)); y = (X[:, 0] > 0).astype(int)\n"
            "DPClassifier(epsilon=1.0, delta=1e-3, bounds=1.0, classes=[0, 1], random_state=0).fit(X, y)\n")
    assert loaded_after(code) == {"sklearn", "pandas"}   # scikit-learn imports pandas itself
