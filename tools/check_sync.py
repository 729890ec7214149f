#!/usr/bin/env python
"""Fail (exit 1) when the package, the README or the notebooks are out of sync.

Runs `nbdev_export`, `nbdev_clean` and `tools/make_readme.py` in the checkout, then asks git
whether any tracked file changed or whether an exported module is not tracked. Used by .ci/run;
run it yourself before committing. It leaves the regenerated files in place, so `git diff` shows
what to commit.
"""
import subprocess, sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent

def git(*a): return subprocess.run(['git', *a], cwd=ROOT, capture_output=True, text=True).stdout

def main():
    for cmd in ([BIN / 'nbdev_export'], [BIN / 'nbdev_clean'], [sys.executable, 'tools/make_readme.py']):
        r = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
        if r.returncode: sys.exit(f'{cmd[-1]} failed:\n{r.stdout}{r.stderr}')
    changed = git('status', '--porcelain', '--untracked-files=no').strip()
    new = [l for l in git('status', '--porcelain').splitlines() if l.startswith('?? dp_cd/')]
    if changed or new:
        print('FAIL: nbdev_export / nbdev_clean / make_readme change the checkout: the package or README is out of sync '
              'with the notebooks, or a notebook is not clean. Review `git diff` and commit:')
        print(changed); print('\n'.join(new))
        sys.exit(1)
    print('package, README and notebooks are in sync')

if __name__ == '__main__': main()
