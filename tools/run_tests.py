#!/usr/bin/env python
"""The whole test suite: every notebook as a test (nbdev_test) and pytest tests/, on two slots.

    python tools/run_tests.py              # the fast part: deterministic, `#| heavy` and `#| slow` cells skipped
    python tools/run_tests.py --heavy      # the heavy checks: the notebooks with `#| heavy` cells (all
                                           # their cells) and the pytest tests marked heavy
    python tools/run_tests.py --slow       # everything, the experiments of `#| slow` cells too (hours)
    python tools/run_tests.py --explore    # property tests draw fresh examples (and keep failures)
    python tools/run_tests.py --details F  # also every cell's time and compiled specialisation (JSON)

By default the property tests are derandomised and use no example database (hypothesis's "ci"
profile, selected by the CI environment variable), so a run is the same on every machine and
cannot fail by chance; `--explore` gives hypothesis its random search and its database back.
Uses the tools of the interpreter that runs it (so `.venv/bin/python tools/run_tests.py` tests
with the virtual environment's packages). numba's on-disk caches of the package are cleared
first, since numba does not invalidate a cache when a kernel from another file changes (they are
kept when no source file, numba, numpy nor the interpreter changed since they were filled: every
entry is then what a compile gives; `--fresh` clears them always). For the same reason the notebooks run with a fresh cache directory of their own (XDG_CACHE_HOME, removed
afterwards): a kernel defined in a notebook cell is cached by IPython's numba locator in the
user-wide ~/.cache/ipython/numba_cache, keyed by that cell's source alone, so an entry compiled
against another version of a kernel it calls (another branch, an earlier edit) would be loaded
and could crash or give wrong results.
CI (.ci/run) runs the fast part, then `--heavy`, so that every check runs once. `#| slow` cells and
slow tests are experiments that regenerate the book's results (hours), not checks.
The notebooks run as nbdev_test runs them (its `test_nb`, two at a time), with a line when each
starts and its time when it ends (flushed, so CI logs show progress too). Each notebook runs in a
process of its own, forked from the runner once it has imported nbdev, IPython's shell, hypothesis
and every module of the package (and set up numba's compiler): a notebook sees no state that
another left (a solver it registered, a class it changed, a failure half-way, a crash), so its
result does not depend on which notebooks ran before it. pytest takes one of the two slots once
the notebooks from `nbs/06_api` on start (the earlier chapters have then compiled the package's
kernels into its cache, which pytest loads), its lines prefixed `pytest|`; the 10 slowest
notebooks, notebook cells (CPU seconds) and tests are listed at the end, with numba's share: the
CPU seconds it spent compiling (from its compile events) per notebook, cell and kernel, and in
pytest's process, and the CPU seconds spent compiling a specialisation (kernel and argument types)
that another notebook compiled too (two notebooks at once, or a kernel numba cannot cache).
Exits non-zero if any notebook or test fails.
"""
import argparse
import contextlib
import csv
import hashlib
import json
import multiprocessing
import os
import resource
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
# imported once by the runner: most notebooks import them (the package: all its modules)
PRELOAD = ('nbdev.test', 'execnb.shell', 'hypothesis', 'dp_cd.*')


class Lines:
    """A child process whose output is shown line by line as it comes (each line after `prefix`)
    and kept (for the durations report), read without a thread: `fileno()` for `wait`, `read()`
    when it is ready; `done` once it ended, then `result`: (exit code, output, seconds, CPU s)."""
    def __init__(self, cmd, env, prefix=''):
        print(prefix + '$ ' + ' '.join(map(str, cmd)), flush=True)
        self.prefix, self.start, self.chunks, self.partial, self.done = prefix, time.time(), [], b'', False
        self.proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE)

    def fileno(self): return self.proc.stdout.fileno()

    def read(self):
        "Show the lines that came; at the end of the output, wait for the process (its CPU time)."
        data = os.read(self.fileno(), 1 << 16)
        *lines, self.partial = (self.partial + data).split(b'\n') if data else (self.partial, b'')
        for line in lines + ([self.partial] if not data and self.partial else []):
            text = line.decode(errors='replace') + '\n'
            print(self.prefix + text, end='', flush=True)
            self.chunks.append(text)
        if data: return
        self.proc.stdout.close()
        _, status, usage = os.wait4(self.proc.pid, 0)
        self.proc.returncode = code = os.waitstatus_to_exitcode(status)
        seconds, cpu = time.time() - self.start, usage.ru_utime + usage.ru_stime
        print(f'{self.prefix}  ({seconds:.0f}s, {cpu:.0f} CPU s, exit {code})', flush=True)
        self.done, self.result = True, (code, ''.join(self.chunks), seconds, cpu)


def run_pytest(cmd, env, prefix=''):
    """`run` for pytest, its output shown line by line as it comes (each line after `prefix`) and
    also returned (for the durations report): (exit code, output, seconds, CPU seconds)."""
    job = Lines(cmd, env, prefix)
    while not job.done: job.read()
    return job.result


def notebooks():
    "Every notebook of the book, in sub-folders too (as nbdev_test finds them)."
    return sorted(p for p in (ROOT / 'nbs').rglob('*.ipynb') if '.ipynb_checkpoints' not in p.parts
                  and not any(part[0] in '_.' for part in p.relative_to(ROOT / 'nbs').parts))


def slow_cells(path, flag='slow'):
    "Number of code cells of the notebook `path` flagged `#| {flag}` (skipped by the default run)."
    count = 0
    for cell in json.loads(path.read_text(encoding='utf-8'))['cells']:
        lines = ''.join(cell['source']).splitlines()
        directives = [l.replace(' ', '') for l in lines if l.startswith('#|')]
        count += cell['cell_type'] == 'code' and '#|' + flag in directives
    return count


def count_slow_cells(paths, flag='slow'):
    "Number of code cells flagged `#| {flag}` in the notebooks `paths`."
    return sum(slow_cells(p, flag) for p in paths)


def pytest_start(paths, folder='06_api'):
    """How many notebooks start before pytest takes a slot: those before the first one in `folder`
    (all of them if none is), whose chapters compile the package's kernels into its cache."""
    return next((k for k, p in enumerate(paths) if folder in p.parts), len(paths))


def cpu_seconds():
    """CPU seconds (user + system) of this process and of its waited-for children: a measure of
    the work that does not grow with the machine's load, as the wall time does."""
    return sum(r.ru_utime + r.ru_stime for r in map(resource.getrusage,
                                                      (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)))


def _test_notebook(path, skip_flags, force_flags):
    "One notebook as nbdev_test runs it: (passed, seconds, CPU seconds)."
    from nbdev.config import get_config
    from nbdev.test import test_nb
    cfg = get_config()
    os.chdir(cfg.nbs_path)
    start, cpu = time.time(), cpu_seconds()
    passed, _ = test_nb(Path(path), skip_flags=skip_flags, force_flags=force_flags,
                        basepath=cfg.config_path)
    return passed, time.time() - start, cpu_seconds() - cpu


class Compiles:
    """numba's compilations in this process, from its `numba:compile` events (a kernel compiled for
    a signature it had not in memory nor in its on-disk cache): `cpu`, the CPU seconds they took,
    and `kernels`, {kernel: [compilations, CPU s]} with each one's own time (the kernels that it
    compiled on the way counted to them), and `signatures`, {"kernel (argument types)": CPU s}: the
    specialisations compiled. Loads from the cache are not compilations."""
    def __init__(self):
        self.cpu, self.kernels, self.signatures, self.stack = 0.0, {}, {}, []

    def install(self):
        "Listen to numba's compile events from now on; returns whether it could (numba installed)."
        try:
            from numba.core import event
            listener = type('CompileListener', (event.Listener,), {
                'on_start': lambda _, e: self.start(e), 'on_end': lambda _, e: self.end(e)})()
            event.register('numba:compile', listener)
            return True
        except Exception:
            return False

    def start(self, event):
        self.stack.append([time.process_time(), 0.0])

    def end(self, event):
        start, inner = self.stack.pop()
        spent = time.process_time() - start
        if self.stack: self.stack[-1][1] += spent
        else: self.cpu += spent
        try:
            f = event.data['dispatcher'].py_func
            name = f'{f.__module__}.{f.__qualname__}'
        except Exception:
            name = '?'
        entry = self.kernels.setdefault(name, [0, 0.0])
        entry[0] += 1
        entry[1] += spent - inner
        signature = f'{name} {event.data.get("args", "?")}'
        self.signatures[signature] = self.signatures.get(signature, 0.0) + spent - inner


def _time_cells(times, compiles=None):
    """Make execnb's shell append (CPU s, wall s, cell number, first line, compile CPU s) of each
    code cell it runs to `times` (in a notebook's own process: the runner's shell is left as it
    is); the last is the CPU time numba spent compiling in that cell, from `compiles` (a
    `Compiles`, 0 without it)."""
    from execnb.shell import CaptureShell
    run = CaptureShell.cell
    def cell(self, cell, *args, **kwargs):
        start, cpu, comp = time.time(), cpu_seconds(), compiles.cpu if compiles is not None else 0.0
        try: return run(self, cell, *args, **kwargs)
        finally:
            if cell.cell_type == 'code':
                lines = [l for l in cell.source.splitlines() if l.strip() and not l.startswith('#|')]
                times.append((cpu_seconds() - cpu, time.time() - start, cell.idx_,
                              (lines or [''])[0][:60], (compiles.cpu if compiles is not None else 0.0) - comp))
    CaptureShell.cell = cell


def _notebook_process(path, skip_flags, force_flags, conn):
    """The process of one notebook (forked from the runner): sends `_test_notebook`'s result, the
    times of its cells, its compilations ({kernel: [count, CPU s]}) and their signatures."""
    cells, compiles = [], Compiles()
    compiles.install()
    _time_cells(cells, compiles)
    conn.send((_test_notebook(path, skip_flags, force_flags), cells, compiles.kernels,
               compiles.signatures))
    conn.close()


def preload(names):
    """Import the modules `names` (`'pkg.*'`: the package `pkg` with all its modules) in the runner,
    before it forks a process per notebook: each notebook then starts with them loaded, as it
    would after the notebooks before it in a shared process, but sees none of their state. A
    module that cannot be imported (an extra not installed) is left to the notebooks that need it."""
    import importlib, pkgutil
    from nbdev.config import get_config
    root = str(get_config().config_path)   # where nbdev_test imports the package from
    if root not in sys.path: sys.path.insert(0, root)
    for name in names:
        name, every = name.removesuffix('.*'), name.endswith('.*')
        try:
            module = importlib.import_module(name)
            for info in pkgutil.walk_packages(module.__path__, name + '.') if every else ():
                with contextlib.suppress(Exception): importlib.import_module(info.name)
        except Exception as e:
            print(f'  (not preloaded: {name}: {type(e).__name__})', flush=True)
    if 'numba' in sys.modules:   # its first compile sets up its CPU target (about 1 CPU s): once here
        with contextlib.suppress(Exception):
            import numba, numpy
            numba.njit(lambda x: numpy.sqrt(x).sum())(numpy.ones(2))


def run_notebooks(paths, workers, force_flags, env, side=None, preload_names=(), cells=None,
                  compiles=None, signatures=None):
    """Test the notebooks `paths`, `workers` at a time, with the environment `env`, printing each
    start and each time; returns {path: (passed, seconds, CPU seconds)}. Each notebook runs in a
    process of its own, forked from this one after `preload(preload_names)`: a notebook sees no
    state another one left (a solver it registered, a class it changed, a crash), whatever ran
    before it. `side`, if given, is `(k, start)`: `start()` starts a `Lines` job (pytest), which
    holds one of the `workers` slots from when the first `k` notebooks have started; its result
    is then under the key `'side'`. `cells`, a dict if given, receives {path: [(CPU s, wall s,
    cell number, first line, compile CPU s) of each code cell run]}; `compiles`, a dict if given,
    {path: {kernel: [compilations, CPU s]}} (numba's compilations, see `Compiles`); `signatures`,
    a dict if given, {path: {"kernel (argument types)": CPU s}}."""
    from multiprocessing.connection import wait as wait_for
    cells = {} if cells is None else cells
    compiles = {} if compiles is None else compiles
    signatures = {} if signatures is None else signatures
    from nbdev.config import get_config
    skip_flags, pending, running, out = get_config().tst_flags.split(), list(paths), {}, {}
    side_job, context = None, multiprocessing.get_context('fork')
    saved = dict(os.environ)
    os.environ.clear()
    os.environ.update({**env, 'IN_TEST': '1'})   # the notebooks' processes inherit it
    print(f'$ notebooks ({len(paths)}, {workers} at a time, like nbdev_test)', flush=True)
    try:
        if preload_names:
            cpu = cpu_seconds()
            preload(preload_names)
            print(f'  (preloaded {", ".join(preload_names)}: {cpu_seconds() - cpu:.1f} CPU s)', flush=True)
        while pending or running or side or (side_job and not side_job.done):
            busy = len(running) + bool(side_job and not side_job.done)
            while busy < workers and (pending or side):
                busy += 1
                if side and len(paths) - len(pending) >= side[0]:   # its turn: it goes first
                    side_job, side = side[1](), None
                    continue
                path = pending.pop(0)
                print(f'  [{len(paths) - len(pending)}/{len(paths)}] {_rel(path)} ...', flush=True)
                receive, send = context.Pipe(duplex=False)
                proc = context.Process(target=_notebook_process, args=(path, skip_flags, force_flags, send))
                proc.start()
                send.close()
                # watched by its pipe, not its exit: a result larger than the pipe's buffer is
                # sent only while it is read (the process would wait for the runner, and the runner
                # for its exit); a process that dies unsent closes the pipe (EOF)
                running[receive] = proc, receive, path, time.time()
            watch = list(running) + ([side_job] if side_job and not side_job.done else [])
            for ready in wait_for(watch):
                if ready is side_job:
                    side_job.read()
                    if side_job.done: out['side'] = side_job.result
                    continue
                proc, receive, path, start = running.pop(ready)
                try: out[path], cells[path], compiles[path], signatures[path] = receive.recv()
                except EOFError:   # the process died (a crash): no result
                    proc.join()
                    print(f'      {_rel(path)}: its process ended with exit code {proc.exitcode}', flush=True)
                    out[path] = (False, time.time() - start, float('nan'))
                receive.close()
                proc.join()
                passed, seconds, cpu = out[path]
                print(f'      {_rel(path)}: {seconds:.0f} s ({cpu:.0f} CPU s)'
                      + ('' if passed else '  FAILED'), flush=True)
    finally:
        os.environ.clear()
        os.environ.update(saved)
    return out


def _rel(path):
    "`path` relative to the checkout when inside it."
    return path.relative_to(ROOT) if path.is_relative_to(ROOT) else path


def slowest(times, k=10):
    "Lines of the `k` largest of {name: seconds}."
    top = sorted(times.items(), key=lambda kv: -kv[1])[:k]
    return [f'  {s:7.1f} s  {name}' for name, s in top]


def pytest_durations(output):
    "{test: seconds} from pytest's --durations report."
    found = re.findall(r'^\s*([\d.]+)s (?:call|setup|teardown)\s+(\S+)', output, re.M)
    times = {}
    for s, name in found: times[name] = times.get(name, 0.0) + float(s)
    return times


def hypothesis_env(explore):
    "The environment of the test processes: hypothesis's deterministic profile unless exploring."
    env = dict(os.environ)
    if explore:
        for name in ('CI', 'TF_BUILD', 'GITHUB_ACTIONS', 'BUILDKITE', 'CIRCLECI', 'GITLAB_CI'):
            env.pop(name, None)
    else:
        env['CI'] = env.get('CI') or 'true'   # hypothesis: derandomize=True, database=None
    return env


def sources_digest(package):
    """SHA-256 of every source file of `package` (its relative path and bytes), the interpreter and
    the versions of numba, llvmlite and numpy."""
    import llvmlite, numba, numpy
    h = hashlib.sha256(f'{sys.executable} {sys.version} {numba.__version__} {llvmlite.__version__} '
                       f'{numpy.__version__}'.encode())
    for path in sorted(package.rglob('*.py')):
        if '__pycache__' in path.parts: continue
        h.update(str(path.relative_to(package)).encode() + b'\0' + path.read_bytes() + b'\0')
    return h.hexdigest()


def keep_or_clear_caches(package, fresh=False):
    """Delete the on-disk caches (`__pycache__`) of `package` unless no source file changed since
    they were filled (a digest of all sources, stored with them), or always if `fresh`; returns
    whether they were kept. numba keys a cached kernel on its own file only, so a change in any
    file may make any entry stale; with every file unchanged, every entry is what a compile gives."""
    stamp, digest = package / '__pycache__' / 'sources.sha256', sources_digest(package)
    if not fresh and stamp.exists() and stamp.read_text() == digest: return True
    for cache in package.rglob('__pycache__'):
        shutil.rmtree(cache, ignore_errors=True)
    stamp.parent.mkdir(exist_ok=True)
    stamp.write_text(digest)
    return False


@contextlib.contextmanager
def notebook_env(env):
    """`env` with a fresh cache directory (XDG_CACHE_HOME) for the notebooks' kernels, removed
    afterwards: IPython's numba cache is keyed by a cell's source alone (see the docstring)."""
    with tempfile.TemporaryDirectory(prefix='dp_cd-test-cache-') as cache_home:
        yield {**env, 'XDG_CACHE_HOME': cache_home}


def record(path, row):
    """Append `row` (a dict) to the CSV file `path`, with a header if the file is new; if `row` has
    columns the file has not, the file is rewritten with them (empty in its earlier rows)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    rows = list(csv.DictReader(path.open(newline=''))) if path.exists() and path.stat().st_size else []
    fields = list(rows[0]) if rows else []
    if rows and all(k in fields for k in row):
        with path.open('a', newline='') as f: csv.DictWriter(f, fieldnames=fields).writerow(row)
        return
    fields += [k for k in row if k not in fields]
    with path.open('w', newline='') as f:
        writer = csv.DictWriter(f, fieldnames=fields, restval='')
        writer.writeheader()
        writer.writerows(rows + [row])


def repeated_compiles(signatures):
    """`(count, CPU s)` of the compilations of a specialisation (kernel and argument types) that
    another notebook of the run compiled too (`signatures`: {notebook: {specialisation: CPU s}}),
    each beyond its costliest one: what a shared cache did not save, because two notebooks compiled
    it at the same time or numba cannot cache it (a kernel built at run time, an overload)."""
    seen = {}
    for specs in signatures.values():
        for spec, cpu in specs.items(): seen.setdefault(spec, []).append(cpu)
    again = [sorted(cpus)[:-1] for cpus in seen.values() if len(cpus) > 1]
    return sum(map(len, again)), sum(map(sum, again))


def write_details(path, cells, signatures, pytest_kernels, pytest_output):
    """Write to the JSON file `path` what the summary lists only the largest of: each notebook's
    cells (CPU s, wall s, cell number, first line, compile CPU s) and compiled specialisations
    ({"kernel (argument types)": CPU s}), pytest's kernels ({kernel: [compilations, CPU s]}) and
    its tests' times ({test: s}, from `pytest_output`)."""
    Path(path).write_text(json.dumps({
        'cells': {str(_rel(Path(p))): ts for p, ts in cells.items()},
        'signatures': {str(_rel(Path(p))): specs for p, specs in signatures.items()},
        'pytest_kernels': pytest_kernels, 'pytest_durations': pytest_durations(pytest_output)},
        indent=1))


def compile_summary(compiles, pytest_kernels, nb_cpu, py_cpu, k=10):
    """Lines on numba's share of the run: the CPU seconds it spent compiling in the notebooks
    (`compiles`, {notebook: {kernel: [count, CPU s]}}) and in pytest's process (`pytest_kernels`,
    {kernel: [count, CPU s]}, None if not measured) against their CPU seconds, then the `k` kernels
    that took the most (CPU s, compilations, in how many notebooks / pytest)."""
    nb = sum(c for kernels in compiles.values() for _, c in kernels.values())
    py = None if pytest_kernels is None else sum(c for _, c in pytest_kernels.values())
    share = lambda part, whole: f'{part:.0f} of {whole:.0f} CPU s ({100 * part / whole:.0f} %)' \
        if whole and whole == whole else f'{part:.0f} CPU s'
    lines = [f'numba compilations: notebooks {share(nb, nb_cpu)}; pytest '
             + ('not measured' if py is None else share(py, py_cpu) + ' (its own process)')]
    total = {}
    for where, kernels in [*compiles.items(), ('pytest', pytest_kernels or {})]:
        for name, (count, cpu) in kernels.items():
            t = total.setdefault(name, [0.0, 0, set()])
            t[0] += cpu; t[1] += count; t[2].add(where)
    top = sorted(total.items(), key=lambda kv: -kv[1][0])[:k]
    lines.append(f'the {k} kernels with the most compile CPU time (CPU s, compilations, notebooks'
                 ' or pytest):')
    lines += [f'  {cpu:7.1f} {count:4d} {len(where):3d}  {name}' for name, (cpu, count, where) in top]
    return lines


def main():
    lines = __doc__.splitlines()
    parser = argparse.ArgumentParser(description=lines[0], epilog='\n'.join(lines[1:]),
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument('--heavy', action='store_true',
                      help='only the heavy checks: the notebooks with `#| heavy` cells (all their '
                           'cells) and the pytest tests marked heavy')
    mode.add_argument('--slow', action='store_true',
                      help='everything: also the `#| slow` experiments and slow tests (hours)')
    parser.add_argument('--fresh', action='store_true',
                        help='clear the package\'s numba caches even if no source changed')
    parser.add_argument('--explore', action='store_true',
                        help='random property-test examples with hypothesis\'s example database')
    parser.add_argument('--record', metavar='CSV',
                        help='append the times of both phases, the load and the mode to this CSV')
    parser.add_argument('--details', metavar='JSON',
                        help="write each notebook's cell times and compiled specialisations (kernel "
                             "and argument types, CPU s) and pytest's test times to this JSON file")
    args = parser.parse_args()
    kept = keep_or_clear_caches(ROOT / 'dp_cd', fresh=args.fresh)
    print('numba cache of the package: ' + ('kept (no source changed since it was filled)' if kept
                                            else 'cleared'), flush=True)
    env = hypothesis_env(args.explore)
    every = notebooks()
    nbs = [p for p in every if slow_cells(p, 'heavy')] if args.heavy else every
    workers = min(2, os.cpu_count() or 1)
    marker = [] if args.slow else ['-m', 'heavy' if args.heavy else 'not slow and not heavy']
    pytest_cmd = [sys.executable, '-m', 'pytest', 'tests', '-q', '-rs', '--durations=0',
                  '--durations-min=0.5', *marker]
    start, load0, cells, compiles, signatures = time.time(), os.getloadavg(), {}, {}, {}
    with notebook_env(env) as nb_env, tempfile.TemporaryDirectory(prefix='dp_cd-compiles-') as tmp:
        py_env = {**env, 'DP_CD_TEST_COMPILES': str(Path(tmp) / 'pytest.json')}   # tests/conftest.py
        side = (pytest_start(nbs), lambda: Lines(pytest_cmd, py_env, prefix='pytest| '))
        results = run_notebooks(nbs, workers, ['slow', 'heavy'] if args.slow else ['heavy'] if args.heavy else [],
                                nb_env, side=side if workers > 1 else None, preload_names=PRELOAD,
                                cells=cells, compiles=compiles, signatures=signatures)
        py_rc, py_out, py_s, py_cpu = results.pop('side') if workers > 1 else run_pytest(pytest_cmd, py_env)
        try: py_kernels = json.loads(Path(py_env['DP_CD_TEST_COMPILES']).read_text())
        except (OSError, ValueError): py_kernels = None
    wall = time.time() - start
    nb_rc = int(not all(passed for passed, *_ in results.values()))
    nb_cpu = sum(cpu for *_, cpu in results.values())
    print(f'  (notebooks: {nb_cpu:.0f} CPU s, exit {nb_rc}; pytest: {py_s:.0f} s, {py_cpu:.0f} CPU s, '
          f'exit {py_rc}; both: {wall:.0f} s, load {os.getloadavg()[0]:.1f})', flush=True)
    print('the 10 slowest notebooks (wall):', *slowest({str(_rel(p)): s for p, (_, s, _) in results.items()}),
          sep='\n')
    compiling = {p: sum(c for _, c in compiles.get(p, {}).values()) for p in results}
    print('the 10 notebooks with the most CPU time (CPU s, of which compiling):',
          *[f'  {c:7.1f} {compiling[p]:7.1f}  {_rel(p)}' for p, (*_, c) in
            sorted(results.items(), key=lambda kv: -kv[1][2])[:10]],
          sep='\n')
    print('the 10 notebook cells with the most CPU time (CPU s, of which compiling, wall s, cell):',
          *[f'  {c:7.1f} {cc:7.1f} {w:7.1f}  {_rel(p)} cell {k}: {line}' for c, w, k, line, cc, p in
            sorted((t + (p,) for p, ts in cells.items() for t in ts), key=lambda t: -t[0])[:10]],
          sep='\n')
    print(*compile_summary(compiles, py_kernels, nb_cpu, py_cpu), sep='\n')
    repeats, repeat_cpu = repeated_compiles(signatures)
    print(f'the same specialisation compiled again in another notebook: {repeats} times, {repeat_cpu:.0f} '
          'CPU s (notebooks at the same time, or kernels numba does not cache)')
    print('the 10 slowest tests (call, set-up and tear-down):', *slowest(pytest_durations(py_out)), sep='\n')
    failed = [str(_rel(p)) for p, (ok, *_) in results.items() if not ok]
    print(f'notebooks ({len(nbs)}): ' + ('all passed' if nb_rc == 0 else 'FAILED: ' + ', '.join(failed)))
    if not (args.slow or args.heavy):
        print(f'skipped {count_slow_cells(nbs, "heavy")} `#| heavy` notebook cells and the heavy pytest '
              'tests (run them with `python tools/run_tests.py --heavy`; CI does), and '
              f'{count_slow_cells(nbs)} `#| slow` experiment cells and the slow tests (`--slow`, hours)')
    print('property tests: ' + ('random examples (--explore)' if args.explore
                                else 'derandomised, no example database'))
    print('tests/: ' + ('all passed' if py_rc == 0 else 'FAILED (see above)'))
    if args.details: write_details(args.details, cells, signatures, py_kernels, py_out)
    if args.record:
        load1 = os.getloadavg()
        record(args.record, {
            'mode': 'slow' if args.slow else 'heavy' if args.heavy else 'fast',
            'date': time.strftime('%Y-%m-%d %H:%M', time.gmtime()), 'notebooks': len(nbs),
            'wall_s': round(wall), 'notebook_cpu_s': round(nb_cpu), 'pytest_s': round(py_s),
            'pytest_cpu_s': round(py_cpu), 'cores': os.cpu_count(), 'workers': workers,
            'load_start': round(load0[0], 1), 'load_end': round(load1[0], 1),
            'load_15min_end': round(load1[2], 1), 'passed': int(not (nb_rc or py_rc)),
            'notebook_compile_cpu_s': round(sum(compiling.values())),
            'pytest_compile_cpu_s': '' if py_kernels is None else round(sum(c for _, c in py_kernels.values())),
            'notebook_repeat_compile_cpu_s': round(repeat_cpu)})
    sys.exit(1 if (nb_rc or py_rc) else 0)


if __name__ == '__main__':
    main()
