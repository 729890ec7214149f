#!/usr/bin/env python
"""Execute notebooks in place so that their stored outputs (figures, tables) match the code.

The book renders the outputs stored in the notebooks, so run this after editing a chapter:

    python tools/execute_nbs.py nbs/01_model/01_norms.ipynb            # skips `#| slow` cells, keeps their old outputs
    python tools/execute_nbs.py --flags slow nbs/03_solvers/04_growth.ipynb  # also runs the heavy cells

Cells are skipped exactly as `nbdev_test` skips them (`#| eval: false`, and the flags of
`tst_flags` in settings.ini unless passed with --flags). Stops at the first error and leaves the
notebook untouched in that case. A cell that runs starts with no outputs (execnb keeps a cell's old
outputs when it prints nothing, so a stale warning would outlive the code that emitted it). Run
`nbdev_clean` afterwards.
"""
import argparse, os, sys, time
from pathlib import Path
from execnb.shell import CaptureShell
from execnb.nbio import read_nb, write_nb
from nbdev.config import get_config
from nbdev.process import NBProcessor, extract_directives
from fastcore.xtras import working_directory

def _directives(cell):
    return extract_directives(cell, remove=False) if cell.cell_type == 'code' else {}

def execute(fn: Path, flags: set, verbose=False):
    skip = set(get_config().get('tst_flags', '').split()) - flags
    nb = read_nb(fn)
    old = {i: c.get('outputs', []) for i, c in enumerate(nb.cells)}
    def _no_eval(cell):
        if cell.cell_type != 'code': return True
        d = _directives(cell)
        if d.get('eval:', [''])[0].lower() == 'false': return True
        return bool(skip & d.keys())
    for c in nb.cells:   # execnb stores a cell's outputs only when it has some: a cell that now
        if not _no_eval(c): c['outputs'] = []   # prints nothing must not keep its old ones
    t0 = time.time()
    k = CaptureShell(fn)
    os.environ.pop('IN_TEST', None)
    with working_directory(fn.parent):
        try: k.run_all(nb, exc_stop=True, preproc=_no_eval)
        except Exception:
            sys.stderr.write(k.prettytb(fname=fn) + '\n'); return False
    for i, c in enumerate(nb.cells):  # skipped cells keep the outputs of their last full run
        if c.cell_type == 'code' and _no_eval(c) and old[i]: c['outputs'] = old[i]
    write_nb(nb, fn)
    print(f'{fn}: executed in {time.time() - t0:.1f}s')
    return True

if __name__ == '__main__':
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('notebooks', nargs='+', type=Path)
    ap.add_argument('--flags', default='', help='space-separated test flags whose cells should run too (e.g. "slow")')
    a = ap.parse_args()
    ok = all([execute(f.resolve(), set(a.flags.split())) for f in a.notebooks])
    sys.exit(0 if ok else 1)
