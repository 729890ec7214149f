"""The test runner gives the notebooks a cache of their own (issue 15: a suite that cannot fail by
chance). numba caches a kernel defined in a notebook cell in IPython's user-wide cache, keyed by
that cell's source alone: an entry compiled against another version of a kernel it calls is
loaded as it is. Two runs of the same caller with a changed callee show it."""
import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RUNNER = ROOT / 'tools' / 'run_tests.py'
CELLS = ('from numba import njit\n@njit(cache=True)\ndef inner():\n    return {value}',
         '@njit(cache=True)\ndef outer():\n    return inner()')
SHELL = ('import json, sys\nfrom execnb.shell import CaptureShell\nshell = CaptureShell()\n'
         'for cell in json.loads(sys.argv[1]):\n    shell.run_cell(cell)\n'
         '    if shell.exc: raise shell.exc\nprint(shell.user_ns["outer"]())\n')


def runner():
    "tools/run_tests.py as a module."
    spec = importlib.util.spec_from_file_location('run_tests', RUNNER)
    module = importlib.util.module_from_spec(spec)
    sys.modules['run_tests'] = module   # its worker function is pickled by name
    spec.loader.exec_module(module)
    return module


def outer_in_notebook(value, env):
    "What the cell `outer()` returns in a notebook shell whose `inner` returns `value`."
    cells = json.dumps([CELLS[0].format(value=value), CELLS[1]])
    r = subprocess.run([sys.executable, '-c', SHELL, cells], env=env, capture_output=True,
                       text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    return int(r.stdout.split()[-1])


def test_each_run_of_the_notebooks_has_its_own_kernel_cache(tmp_path):
    base = {**os.environ, 'XDG_CACHE_HOME': str(tmp_path / 'shared')}
    assert outer_in_notebook(1, base) == 1
    stale = outer_in_notebook(2, base)   # the user-wide cache: numba reuses outer's entry
    print(f'shared cache after inner changed: outer() = {stale} (the edited inner returns 2)')
    homes = []
    for value in (1, 2):
        with runner().notebook_env(base) as env:
            homes.append(env['XDG_CACHE_HOME'])
            assert outer_in_notebook(value, env) == value
    assert homes[0] != homes[1] and not any(map(os.path.exists, homes))


def notebook(path, *cells):
    "A minimal notebook of code `cells` at `path`."
    nb = {'cells': [{'cell_type': 'code', 'execution_count': None, 'id': f'c{i}', 'metadata': {},
                     'outputs': [], 'source': c} for i, c in enumerate(cells)],
          'metadata': {'kernelspec': {'display_name': 'Python 3', 'language': 'python', 'name': 'python3'}},
          'nbformat': 4, 'nbformat_minor': 5}
    path.write_text(json.dumps(nb))
    return path


def test_the_notebooks_report_progress_times_and_failures(tmp_path, capsys):
    paths = [notebook(tmp_path / 'a_pass.ipynb', 'import time\ntime.sleep(1.5)', '#| slow\nassert False'),
             notebook(tmp_path / 'b_fail.ipynb', 'assert 1 == 2'),
             notebook(tmp_path / 'c_pass.ipynb',   # 1 s of CPU work: counted in the worker
                      'import time\nt = time.process_time()\nwhile time.process_time() - t < 1: pass')]
    cells = {}
    results = runner().run_notebooks(paths, 2, [], dict(os.environ), cells=cells)
    out = capsys.readouterr().out
    assert [ok for ok, *_ in (results[p] for p in paths)] == [True, False, True]   # slow cell skipped
    assert results[paths[0]][1] >= 1.5 and results[paths[2]][2] >= 1.0   # wall s, CPU s
    (cpu, wall, k, line, compiling), = cells[paths[2]]   # each cell run: its CPU and wall seconds
    assert cpu >= 1.0 and wall >= 0.9 and k == 0 and line == 'import time' and compiling == 0
    assert [(k, line) for *_, k, line, _ in cells[paths[0]]] == [(0, 'import time')]   # not the slow one
    for k, p in enumerate(paths, 1):
        assert f'[{k}/3] {p} ...' in out and f'{p}: ' in out
        assert 'CPU s)' in out.split(f'{p}: ')[1].splitlines()[0]
    assert f'{paths[1]}: ' in out and 'FAILED' in out.split(f'{paths[1]}: ')[1].splitlines()[0]
    top = runner().slowest({'a': 1.0, 'b': 3.0, 'c': 2.0}, k=2)
    assert [line.split()[-1] for line in top] == ['b', 'c']


def test_pytest_durations_are_read_from_its_report():
    report = ('============ slowest durations ============\n'
              '12.31s call     tests/test_a.py::test_x\n'
              '0.52s setup    tests/test_a.py::test_x\n'
              '3.00s call     tests/test_b.py::test_y[1]\n')
    times = runner().pytest_durations(report)
    assert times == {'tests/test_a.py::test_x': 12.83, 'tests/test_b.py::test_y[1]': 3.0}


def test_one_worker_runs_notebook_after_notebook_as_the_script(tmp_path):
    """Run as a script, the worker function lives in `__main__`, which a notebook's IPython shell
    replaces in the worker: the next notebook sent to that worker could not be unpickled, and the
    whole pool broke (every notebook FAILED in the first CI run of the new runner)."""
    paths = [str(notebook(tmp_path / f'{k}.ipynb', f'x = {k}')) for k in range(3)]
    source = RUNNER.read_text().replace("if __name__ == '__main__':\n    main()", '')
    code = (f'import os\n__file__ = {str(RUNNER)!r}\nexec(compile({source!r}, {str(RUNNER)!r}, "exec"))\n'
            f'from pathlib import Path\n'
            f'r = run_notebooks([Path(p) for p in {paths!r}], 1, [], dict(os.environ))\n'
            f'print("RESULT", [ok for ok, *_ in r.values()])\n')
    out = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, timeout=600,
                         cwd=ROOT)
    assert 'RESULT [True, True, True]' in out.stdout, (out.stdout[-2000:], out.stderr[-2000:])


def test_package_caches_are_kept_only_while_no_source_changes(tmp_path):
    pkg = tmp_path / 'pkg'
    (pkg / 'sub').mkdir(parents=True)
    (pkg / 'a.py').write_text('x = 1\n')
    (pkg / 'sub' / 'b.py').write_text('y = 2\n')
    entries = [pkg / '__pycache__' / 'a.nbi', pkg / 'sub' / '__pycache__' / 'b.nbi']
    def fill():
        for e in entries: e.parent.mkdir(exist_ok=True); e.write_text('cached')
    r = runner()
    assert not r.keep_or_clear_caches(pkg)   # no stamp yet: cleared
    fill()
    assert r.keep_or_clear_caches(pkg) and all(e.exists() for e in entries)   # unchanged: kept
    assert not r.keep_or_clear_caches(pkg, fresh=True) and not any(e.exists() for e in entries)
    fill()
    assert r.keep_or_clear_caches(pkg)
    (pkg / 'sub' / 'b.py').write_text('y = 3\n')   # another file's change: every entry may be stale
    assert not r.keep_or_clear_caches(pkg) and not any(e.exists() for e in entries)
    fill()
    (pkg / 'c.py').write_text('')   # a new file
    assert not r.keep_or_clear_caches(pkg) and not any(e.exists() for e in entries)


def test_pytest_holds_one_slot_from_its_chapter_on(tmp_path, capsys):
    """The side job (pytest in the runner) starts once its first `k` notebooks have started and
    holds one of the two slots: the notebooks after it run one at a time next to it."""
    import time
    stamps = tmp_path / 'stamps'
    cell = ('import time\nt = time.time()\ntime.sleep(0.6)\n'
            'open(STAMPS, "a").write(f"NB {t} {time.time()}\\n")').replace('STAMPS', repr(str(stamps)))
    paths = [notebook(tmp_path / f'{k}.ipynb', cell.replace('NB', str(k))) for k in range(4)]
    job = 'import time\nprint(time.time(), flush=True)\ntime.sleep(2.0)\nprint(time.time())'
    side = lambda: runner().Lines([sys.executable, '-c', job], dict(os.environ))
    results = runner().run_notebooks(paths, 2, [], dict(os.environ), side=(2, side))
    code, output, *_ = results.pop('side')
    span = [float(t) for t in output.split()]
    assert code == 0 and len(span) == 2 and all(ok for ok, *_ in results.values())
    runs = {int(k): (float(a), float(b)) for k, a, b in map(str.split, stamps.read_text().splitlines())}
    assert len(runs) == 4 and runs[2][0] >= span[0] and runs[3][0] >= span[0]
    assert runs[3][0] >= runs[2][1] or runs[2][0] >= runs[3][1]   # one slot left: not together
    stamps.unlink()   # its turn once the last notebook started: next to it
    results = runner().run_notebooks(paths[:1], 2, [], dict(os.environ), side=(1, side))
    (a, b), = [tuple(map(float, l.split()[1:])) for l in stamps.read_text().splitlines()]
    code, output, *_ = results.pop('side')
    assert code == 0 and float(output.split()[0]) < b
    r = runner()
    assert r.pytest_start([Path('nbs/a/x.ipynb'), Path('nbs/06_api/y.ipynb')]) == 1
    assert r.pytest_start([Path('nbs/a/x.ipynb')]) == 1


def test_heavy_cells_and_slow_cells_are_counted_apart(tmp_path):
    fast = notebook(tmp_path / 'fast.ipynb', 'x = 1')
    slow = notebook(tmp_path / 'slow.ipynb', 'x = 1', '#| slow\nx = 2', '#|slow\nx = 3', '#| heavy\nx = 4')
    r = runner()
    assert [r.slow_cells(p) for p in (fast, slow)] == [0, 2] and r.count_slow_cells([fast, slow]) == 2
    assert [r.slow_cells(p, 'heavy') for p in (fast, slow)] == [0, 1]


def test_each_notebook_starts_from_the_runners_state(tmp_path):
    """A notebook that changes a loaded module (as a chapter re-registers a solver) and fails
    half-way, or whose process dies, leaves nothing to the next one, even in the same slot."""
    paths = [notebook(tmp_path / 'a.ipynb', 'import json\njson.MARK = 1', 'assert False'),
             notebook(tmp_path / 'b.ipynb', 'import json\nassert not hasattr(json, "MARK")'),
             notebook(tmp_path / 'c.ipynb', 'import os\nos._exit(3)'),
             notebook(tmp_path / 'd.ipynb', 'import json\nassert not hasattr(json, "MARK")')]
    results = runner().run_notebooks(paths, 1, [], dict(os.environ), preload_names=('json',))
    assert [results[p][0] for p in paths] == [False, True, False, True]


def test_numba_compilations_are_timed_per_cell_and_per_kernel(tmp_path):
    """numba's compile events: each kernel's compilations (one per new signature) and its own CPU
    time (a kernel compiled on the way by its caller counts to itself), the cell they ran in."""
    nb = notebook(tmp_path / 'k.ipynb',
                  'from numba import njit\n@njit\ndef inner(x):\n    return x + 1\n'
                  '@njit\ndef outer(x):\n    return 2 * inner(x)',
                  'assert outer(1) == 4 and outer(1.5) == 5.0',   # two signatures of each
                  'assert outer(2) == 6')                         # compiled already
    cells, compiles, signatures = {}, {}, {}
    results = runner().run_notebooks([nb], 1, [], dict(os.environ), cells=cells, compiles=compiles,
                                     signatures=signatures)
    assert results[nb][0]
    specs = signatures[nb]   # one per kernel and argument types, with its own CPU time
    assert sorted(specs) == ['__main__.inner (float64,)', '__main__.inner (int64,)',
                             '__main__.outer (float64,)', '__main__.outer (int64,)'], specs
    (*_, c0), (*_, c1), (*_, c2) = cells[nb]
    assert c0 == 0 and c1 > 0 and c2 == 0
    kernels = compiles[nb]
    assert sorted(kernels) == ['__main__.inner', '__main__.outer']
    assert [n for n, _ in kernels.values()] == [2, 2] and all(t > 0 for _, t in kernels.values())
    assert abs(sum(t for _, t in kernels.values()) - c1) < 1e-6   # own times add up to the cell's
    lines = runner().compile_summary({nb: kernels}, {'m.f': [1, 100.0]}, 4 * c1, 200.0, k=2)
    assert lines[0].startswith(f'numba compilations: notebooks {c1:.0f} of {4 * c1:.0f} CPU s (25 %)')
    assert 'pytest 100 of 200 CPU s (50 %)' in lines[0]
    assert len(lines) == 4 and lines[2].split() == ['100.0', '1', '1', 'm.f']
    assert lines[3].split()[-1] in kernels and lines[3].split()[1:3] == ['2', '1']
    assert 'not measured' in runner().compile_summary({}, None, 1.0, 1.0)[0]
    out = tmp_path / 'details.json'   # --details: every cell and specialisation, pytest's tests
    runner().write_details(out, cells, signatures, {'m.f': [1, 2.0]}, '  1.50s call     t.py::a\n')
    details = json.loads(out.read_text())
    assert [c[2:4] for c in details['cells'][str(nb)]] == [[0, 'from numba import njit'],
                                                          [1, 'assert outer(1) == 4 and outer(1.5) == 5.0'],
                                                          [2, 'assert outer(2) == 6']]
    assert details['signatures'][str(nb)] == specs and details['pytest_kernels'] == {'m.f': [1, 2.0]}
    assert details['pytest_durations'] == {'t.py::a': 1.5}


def test_a_result_larger_than_the_pipe_buffer_is_received(tmp_path):
    """A notebook's result (its cells' times, its compiled specialisations) can exceed the pipe's
    buffer (64 KiB): the runner reads it while it is sent, it does not wait for the process to end
    first (which would wait for the runner forever). 1,500 cells: about 150 KB of cell times."""
    import signal
    nb = notebook(tmp_path / 'big.ipynb', *[f'x_{i} = {i}  # {"a long first line " * 3}'
                                           for i in range(1500)])
    def hung(*_): raise TimeoutError('the runner and the notebook process wait for each other')
    old = signal.signal(signal.SIGALRM, hung)
    signal.alarm(300)
    try:
        cells = {}
        results = runner().run_notebooks([nb], 1, [], dict(os.environ), cells=cells)
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
    assert results[nb][0] and len(cells[nb]) == 1500


def test_the_same_specialisation_compiled_in_two_notebooks_is_counted_beyond_its_costliest():
    signatures = {'a': {'m.f (int64,)': 2.0, 'm.f (float64,)': 1.0},
                  'b': {'m.f (int64,)': 3.0, 'm.g (int64,)': 5.0},
                  'c': {'m.f (int64,)': 0.5}}
    assert runner().repeated_compiles(signatures) == (2, 2.5)   # m.f (int64,) in a and c
    assert runner().repeated_compiles({'a': {'m.f (int64,)': 2.0}}) == (0, 0)


def test_a_record_with_new_columns_keeps_the_earlier_rows(tmp_path):
    import csv
    path, r = tmp_path / 'runs.csv', runner()
    r.record(path, {'mode': 'fast', 'wall_s': 1})
    r.record(path, {'mode': 'heavy', 'wall_s': 2})
    r.record(path, {'mode': 'fast', 'wall_s': 3, 'compile_s': 4})
    r.record(path, {'mode': 'fast', 'wall_s': 5})
    rows = list(csv.DictReader(path.open()))
    assert [(d['mode'], d['wall_s'], d['compile_s']) for d in rows] == [
        ('fast', '1', ''), ('heavy', '2', ''), ('fast', '3', '4'), ('fast', '5', '')]
