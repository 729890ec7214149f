#!/usr/bin/env python
"""Write README.md from nbs/index.ipynb (nbdev_readme needs Quarto, which is not available here).

    python tools/make_readme.py          # write README.md
    python tools/make_readme.py --check  # exit 1 if README.md is out of date
"""
import json, re, sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

def render() -> str:
    nb = json.loads((ROOT / 'nbs' / 'index.ipynb').read_text())
    parts = []
    for c in nb['cells']:
        src = ''.join(c['source']).strip()
        if c['cell_type'] == 'markdown': parts.append(src); continue
        if c['cell_type'] != 'code' or re.search(r'^#\|\s*(hide|echo:\s*false)\s*$', src, re.M):
            continue   # hidden cells, and figures whose code the book does not show
        code = '\n'.join(l for l in src.splitlines() if not l.lstrip().startswith('#|'))
        parts.append(f'```python\n{code}\n```')
        text = ''.join(''.join(o.get('text', '')) for o in c.get('outputs', []) if o.get('output_type') == 'stream').rstrip()
        if text: parts.append(f'```\n{text}\n```')
    head = '<!-- generated from nbs/index.ipynb by tools/make_readme.py: edit the notebook, not this file -->\n\n'
    return head + '\n\n'.join(parts) + '\n'

if __name__ == '__main__':
    text, out = render(), ROOT / 'README.md'
    if '--check' in sys.argv:
        ok = out.exists() and out.read_text() == text
        if not ok: print('README.md is out of date: run python tools/make_readme.py')
        sys.exit(0 if ok else 1)
    out.write_text(text)
