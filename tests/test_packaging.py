"`pip install dp_cd` from the exported code: a wheel installs into a clean environment with working numba kernels."
import subprocess, sys, venv
from pathlib import Path
import pytest

ROOT = Path(__file__).resolve().parents[1]

def test_readme_is_generated_from_index():
    r = subprocess.run([sys.executable, 'tools/make_readme.py', '--check'], cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 0, r.stdout

def test_wheel_installs_into_clean_environment(tmp_path):
    r = subprocess.run([sys.executable, '-m', 'build', '--wheel', '--no-isolation', '--outdir', str(tmp_path / 'dist')],
                       cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    wheel, = (tmp_path / 'dist').glob('dp_cd-*.whl')
    env = tmp_path / 'env'; venv.create(env, with_pip=True)
    py = env / 'bin' / 'python'
    r = subprocess.run([py, '-m', 'pip', 'install', '-q', '-c', str(ROOT / 'constraints.txt'), str(wheel)], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    probe = ("import dp_cd, dp_cd.model.norms as n, pathlib, numpy as np; "
             "assert 'site-packages' in dp_cd.__file__, dp_cd.__file__; "
             "assert abs(n.mahalanobis_norm(np.array([3., 4.]), np.array([1., 1.]), 2) - 5) < 1e-12; "
             "print(len(list(pathlib.Path(dp_cd.__file__).parent.rglob('*.nbi'))))")
    out = [subprocess.run([py, '-c', probe], cwd=tmp_path, capture_output=True, text=True) for _ in range(2)]
    for o in out: assert o.returncode == 0, o.stderr[-2000:]
    assert int(out[0].stdout) > 0, 'numba kernels were not cached in the installed package'
    # the console script is installed
    assert (env / 'bin' / 'dp-cd').exists()

def test_modules_compile_without_warnings():
    "Exported modules compile with warnings as errors (e.g. an invalid escape like '\\e' in a docstring from a chapter summary)."
    import py_compile, warnings
    for f in sorted((ROOT / 'dp_cd').rglob('*.py')):
        with warnings.catch_warnings():
            warnings.simplefilter('error')
            py_compile.compile(str(f), cfile=str(ROOT / 'build' / 'pycheck.pyc'), doraise=True)
