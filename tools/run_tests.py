#!/usr/bin/env python
"""The whole test suite: every notebook as a test (nbdev_test), then pytest tests/.

    python tools/run_tests.py              # what CI runs; `#| slow` cells and slow pytest tests are skipped
    python tools/run_tests.py --slow       # also the heavy cells and tests (long)

Uses the tools of the interpreter that runs it (so `.venv/bin/python tools/run_tests.py` tests
with the virtual environment's packages). numba's on-disk caches of the package are cleared
first, since numba does not invalidate a cache when a kernel from another file changes.
Exits non-zero if any notebook or test fails.
"""
import argparse, os, re, shutil, subprocess, sys, time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent

def run(cmd, **kw):
    print('$', ' '.join(map(str, cmd)), flush=True)
    t0 = time.time(); r = subprocess.run(cmd, cwd=ROOT, **kw)
    print(f'  ({time.time() - t0:.0f}s, exit {r.returncode})', flush=True)
    return r.returncode

def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0], epilog='\n'.join(__doc__.splitlines()[1:]),
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--slow', action='store_true', help='also run the `#| slow` cells and the slow pytest tests (long)')
    slow = ap.parse_args().slow
    for d in (ROOT / 'dp_cd').rglob('__pycache__'): shutil.rmtree(d, ignore_errors=True)
    nbs = sorted((ROOT / 'nbs').glob('*.ipynb'))
    flags = ['--flags', 'slow'] if slow else []
    nb_rc = run([BIN / 'nbdev_test', '--n_workers', str(min(2, os.cpu_count() or 1)), '--timing', *flags])
    py_rc = run([sys.executable, '-m', 'pytest', 'tests', '-q', '-rs', *([] if slow else ['-m', 'not slow'])])
    print(f'notebooks ({len(nbs)}): ' + ('all passed' if nb_rc == 0 else 'FAILED (see above)'))
    print(f'tests/: ' + ('all passed' if py_rc == 0 else 'FAILED (see above)'))
    sys.exit(1 if (nb_rc or py_rc) else 0)

if __name__ == '__main__': main()
