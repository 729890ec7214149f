"""`pip install dp_cd` from the exported code: a wheel installs into a clean environment with
working numba kernels, also when the install is read-only and the user has no writable cache."""
import os
import pwd
import shutil
import stat
import subprocess
import sys
import tempfile
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
KERNEL_PROBE = (
    "import dp_cd, dp_cd.model.norms as n, numpy as np\n"
    "assert 'site-packages' in dp_cd.__file__, dp_cd.__file__\n"
    "assert abs(n.mahalanobis_norm(np.array([3., 4.]), np.array([1., 1.]), 2) - 5) < 1e-12\n")
NUMBA_ALONE = 'from numba import njit\n@njit(cache=True)\ndef one():\n    return 1\n'


def clean_env() -> dict:
    """This process's environment without PYTHONPATH/PYTHONHOME, so a new venv sees only itself, and
    without NUMBA_CACHE_DIR, so the installed kernels cache where a user's would (beside the package)."""
    return {k: v for k, v in os.environ.items()
            if k not in ('PYTHONPATH', 'PYTHONHOME', 'NUMBA_CACHE_DIR')}


def tail(result):
    "The end of a finished process's output, for assertion messages."
    return result.stdout[-2000:] + result.stderr[-2000:]


@pytest.fixture(scope='module')
def wheel(tmp_path_factory):
    "The package's wheel, built once for the module's tests."
    dist = tmp_path_factory.mktemp('dist')
    r = subprocess.run([sys.executable, '-m', 'build', '--wheel', '--no-isolation',
                        '--outdir', str(dist)], cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 0, tail(r)
    found, = dist.glob('dp_cd-*.whl')
    return found


def install(python, env_dir, wheel):
    "A virtual environment made by the interpreter `python`, with the wheel installed; its python."
    r = subprocess.run([str(python), '-m', 'venv', str(env_dir)], capture_output=True, text=True,
                       env=clean_env())
    assert r.returncode == 0, tail(r)
    py = env_dir / 'bin' / 'python'
    r = subprocess.run([py, '-m', 'pip', 'install', '-q', '-c', str(ROOT / 'constraints.txt'),
                        str(wheel)], capture_output=True, text=True, env=clean_env())
    assert r.returncode == 0, tail(r)
    return py


def test_readme_is_generated_from_index():
    r = subprocess.run([sys.executable, 'tools/make_readme.py', '--check'], cwd=ROOT,
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stdout


@pytest.mark.heavy   # builds the wheel and installs it into new environments
def test_wheel_installs_into_clean_environment(tmp_path, wheel):
    env = tmp_path / 'env'
    venv.create(env, with_pip=True)
    py = install(sys.executable, env, wheel)
    probe = KERNEL_PROBE + ("import pathlib\n"
                            "print(len(list(pathlib.Path(dp_cd.__file__).parent.rglob('*.nbi'))))")
    out = [subprocess.run([py, '-c', probe], cwd=tmp_path, capture_output=True, text=True,
                          env=clean_env())
           for _ in range(2)]
    for o in out:
        assert o.returncode == 0, o.stderr[-2000:]
    assert int(out[0].stdout) > 0, 'numba kernels were not cached in the installed package'
    # the console script is installed
    assert (env / 'bin' / 'dp-cd').exists()


def non_root_runner():
    "A command prefix that runs a program as a user for whom file modes count, or None."
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which('setpriv')
    try:
        nobody = pwd.getpwnam('nobody')
    except KeyError:
        return None
    if not setpriv or nobody.pw_uid == 0:
        return None
    runner = [setpriv, f'--reuid={nobody.pw_uid}', f'--regid={nobody.pw_gid}', '--clear-groups']
    ok = subprocess.run([*runner, 'true'], capture_output=True).returncode == 0
    return runner if ok else None


def usable_python(runner):
    "An interpreter with venv that the runner's user can execute (not one under root's home)."
    candidates = [getattr(sys, '_base_executable', None), sys.executable,
                  shutil.which('python3'), '/usr/bin/python3']
    check = 'import sys, venv, ensurepip; assert sys.version_info >= (3, 10)'
    for python in dict.fromkeys(c for c in candidates if c):
        r = subprocess.run([*runner, python, '-c', check], capture_output=True, cwd='/')
        if r.returncode == 0:
            return python
    return None


def make_read_only(path):
    "Remove write permission for everybody from `path` and everything under it."
    for directory, dirs, files in os.walk(path):
        for name in [*dirs, *files]:
            p = os.path.join(directory, name)
            if not os.path.islink(p):
                os.chmod(p, os.stat(p).st_mode & ~0o222)
    os.chmod(path, os.stat(path).st_mode & ~0o222)


def make_writable(path):
    "Give the owner write permission back on `path` and everything under it (for the clean-up)."
    for directory, dirs, files in os.walk(path):
        os.chmod(directory, os.stat(directory).st_mode | stat.S_IWUSR)
        for name in files:
            p = os.path.join(directory, name)
            if not os.path.islink(p):
                os.chmod(p, os.stat(p).st_mode | stat.S_IWUSR)


@pytest.fixture
def shared_dir():
    "A fresh directory that other users can enter (pytest's tmp_path is private to its user)."
    path = Path(tempfile.mkdtemp(prefix='dp_cd-ro-'))
    path.chmod(0o755)
    yield path
    make_writable(path)
    shutil.rmtree(path, ignore_errors=True)


@pytest.mark.heavy   # builds the wheel and installs it into new environments
def test_read_only_install_without_cache_dir_imports(shared_dir, wheel):
    """A non-root user, a read-only install and no writable HOME or XDG_CACHE_HOME: numba alone
    cannot cache there ("no locator"), `import dp_cd` still works and caches in the temp dir."""
    runner = non_root_runner()
    if runner is None:
        pytest.skip('running as root with no non-root user to switch to (setpriv, nobody)')
    python = usable_python(runner)
    if python is None:
        pytest.skip('no Python interpreter with venv that the non-root user can run')
    py = install(python, shared_dir / 'env', wheel)
    site, = (shared_dir / 'env' / 'lib').glob('python3*/site-packages')
    (site / 'numba_alone.py').write_text(NUMBA_ALONE)
    home, tmp = shared_dir / 'home', shared_dir / 'tmp'
    home.mkdir()
    tmp.mkdir()
    tmp.chmod(0o1777)
    make_read_only(shared_dir / 'env')
    make_read_only(home)
    env = {'PATH': os.environ.get('PATH', '/usr/bin:/bin'), 'HOME': str(home),
           'XDG_CACHE_HOME': str(home / '.cache'), 'TMPDIR': str(tmp)}

    def run(code):
        "Run `code` with the installed interpreter as the non-root user."
        return subprocess.run([*runner, str(py), '-c', code], env=env, cwd=str(tmp),
                              capture_output=True, text=True, timeout=600)

    r = run(f'import os; print(os.access({str(site / "dp_cd")!r}, os.W_OK))')
    assert r.stdout.strip() == 'False', 'the package is writable: ' + tail(r)
    control = run('import numba_alone')
    assert control.returncode != 0 and 'no locator' in control.stderr, tail(control)
    probe = KERNEL_PROBE + 'import os\nprint(os.environ["NUMBA_CACHE_DIR"])\n'
    first, second = run(probe), run(probe)
    for r in (first, second):
        assert r.returncode == 0, tail(r)
        assert 'dp_cd: numba' not in r.stderr, 'the fallback should be silent'
    cache = Path(first.stdout.split()[-1])
    assert cache.parent == tmp and cache.name.startswith('dp_cd-numba-cache-'), cache
    assert list(cache.rglob('*.nbi')), 'the kernel was not cached in the fallback directory'
    assert not list((site / 'dp_cd').rglob('*.nbi'))


def test_modules_compile_without_warnings():
    """Exported modules compile with warnings as errors (e.g. an invalid escape like '\\e' in a
    docstring from a chapter summary)."""
    import py_compile
    import warnings
    for f in sorted((ROOT / 'dp_cd').rglob('*.py')):
        with warnings.catch_warnings():
            warnings.simplefilter('error')
            py_compile.compile(str(f), cfile=str(ROOT / 'build' / 'pycheck.pyc'), doraise=True)
