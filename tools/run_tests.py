#!/usr/bin/env python
"""The whole test suite: every notebook as a test (nbdev_test), then pytest tests/.

    python tools/run_tests.py              # what CI runs: deterministic, `#| slow` cells skipped
    python tools/run_tests.py --slow       # also the heavy cells and the slow pytest tests (long)
    python tools/run_tests.py --explore    # property tests draw fresh examples (and keep failures)

By default the property tests are derandomised and use no example database (hypothesis's "ci"
profile, selected by the CI environment variable), so a run is the same on every machine and
cannot fail by chance; `--explore` gives hypothesis its random search and its database back.
Uses the tools of the interpreter that runs it (so `.venv/bin/python tools/run_tests.py` tests
with the virtual environment's packages). numba's on-disk caches of the package are cleared
first, since numba does not invalidate a cache when a kernel from another file changes. For the
same reason the notebooks run with a fresh cache directory of their own (XDG_CACHE_HOME, removed
afterwards): a kernel defined in a notebook cell is cached by IPython's numba locator in the
user-wide ~/.cache/ipython/numba_cache, keyed by that cell's source alone, so an entry compiled
against another version of a kernel it calls (another branch, an earlier edit) would be loaded
and could crash or give wrong results.
Exits non-zero if any notebook or test fails.
"""
import argparse
import contextlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent


def run(cmd, env):
    "Run `cmd` in the checkout and return its exit code, printing the command and its time."
    print('$', ' '.join(map(str, cmd)), flush=True)
    start = time.time()
    result = subprocess.run(cmd, cwd=ROOT, env=env)
    print(f'  ({time.time() - start:.0f}s, exit {result.returncode})', flush=True)
    return result.returncode


def notebooks():
    "Every notebook of the book, in sub-folders too."
    return sorted(p for p in (ROOT / 'nbs').rglob('*.ipynb') if '.ipynb_checkpoints' not in p.parts)


def count_slow_cells(paths):
    "Number of code cells flagged `#| slow` (skipped by the default run)."
    count = 0
    for path in paths:
        for cell in json.loads(path.read_text(encoding='utf-8'))['cells']:
            lines = ''.join(cell['source']).splitlines()
            directives = [l.replace(' ', '') for l in lines if l.startswith('#|')]
            count += cell['cell_type'] == 'code' and '#|slow' in directives
    return count


def hypothesis_env(explore):
    "The environment of the test processes: hypothesis's deterministic profile unless exploring."
    env = dict(os.environ)
    if explore:
        for name in ('CI', 'TF_BUILD', 'GITHUB_ACTIONS', 'BUILDKITE', 'CIRCLECI', 'GITLAB_CI'):
            env.pop(name, None)
    else:
        env['CI'] = env.get('CI') or 'true'   # hypothesis: derandomize=True, database=None
    return env


@contextlib.contextmanager
def notebook_env(env):
    """`env` with a fresh cache directory (XDG_CACHE_HOME) for the notebooks' kernels, removed
    afterwards: IPython's numba cache is keyed by a cell's source alone (see the docstring)."""
    with tempfile.TemporaryDirectory(prefix='dp_cd-test-cache-') as cache_home:
        yield {**env, 'XDG_CACHE_HOME': cache_home}


def main():
    lines = __doc__.splitlines()
    parser = argparse.ArgumentParser(description=lines[0], epilog='\n'.join(lines[1:]),
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--slow', action='store_true',
                        help='also run the `#| slow` cells and the slow pytest tests (long)')
    parser.add_argument('--explore', action='store_true',
                        help='random property-test examples with hypothesis\'s example database')
    args = parser.parse_args()
    for cache in (ROOT / 'dp_cd').rglob('__pycache__'):
        shutil.rmtree(cache, ignore_errors=True)
    env = hypothesis_env(args.explore)
    nbs = notebooks()
    workers = str(min(2, os.cpu_count() or 1))
    flags = ['--flags', 'slow'] if args.slow else []
    with notebook_env(env) as nb_env:
        nb_rc = run([BIN / 'nbdev_test', '--n_workers', workers, '--timing', *flags], nb_env)
    marker = [] if args.slow else ['-m', 'not slow']
    py_rc = run([sys.executable, '-m', 'pytest', 'tests', '-q', '-rs', *marker], env)
    print(f'notebooks ({len(nbs)}): ' + ('all passed' if nb_rc == 0 else 'FAILED (see above)'))
    if not args.slow:
        print(f'skipped {count_slow_cells(nbs)} `#| slow` notebook cells and the slow pytest tests: '
              'run them with `python tools/run_tests.py --slow`')
    print('property tests: ' + ('random examples (--explore)' if args.explore
                                else 'derandomised, no example database'))
    print('tests/: ' + ('all passed' if py_rc == 0 else 'FAILED (see above)'))
    sys.exit(1 if (nb_rc or py_rc) else 0)


if __name__ == '__main__':
    main()
