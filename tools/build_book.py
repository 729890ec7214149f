#!/usr/bin/env python
"""Render the notebooks in nbs/ into the book at book/_build/html with jupyter-book 1.x.

    python tools/build_book.py              # render the outputs stored in the notebooks (fast)
    python tools/build_book.py --execute    # re-execute every notebook while building (slow cells skipped)

Quarto is not available here, so instead of `nbdev_docs` each notebook goes through nbdev's own
processors (API docs from `show_doc`, hidden cells and export cells removed, directives honoured)
and the result is written to book/_src, with a table of contents generated from the notebook
order (index first, then chapters by number). The build fails (exit 1) on a notebook that is not
valid, has no `# Title`, stores an error output, or whose exported code or API docs fail to
execute, and on any Sphinx warning.
"""
import argparse, html, json, re, shutil, subprocess, sys
from functools import partial
from pathlib import Path

import warnings
import nbformat, nbformat.warnings
warnings.filterwarnings('ignore', category=nbformat.warnings.MissingIDFieldWarning)
from execnb.nbio import read_nb, write_nb
from nbdev.process import NBProcessor, extract_directives
from nbdev import processors as P
from nbdev.showdoc import BasicHtmlRenderer, _fmt_sig

ROOT = Path(__file__).resolve().parents[1]
NBS, BOOK = ROOT / 'nbs', ROOT / 'book'
SRC = BOOK / '_src'

class BookError(Exception): pass

def _inline(text: str) -> str:
    "Docstring text as safe HTML: escaped, `code` spans, $math$ for MathJax."
    t = html.escape(text, quote=False)
    t = re.sub(r'`([^`]+)`', r'<code>\1</code>', t)
    return re.sub(r'(?<![\\$])\$([^$]+)\$', r'\\(\1\\)', t)

class BookDocRenderer(BasicHtmlRenderer):
    "API docs as HTML for the book: escaped (a `<` no longer truncates a docstring), no links to a documentation host."
    def _repr_html_(self):
        nm, lvl = html.escape(self.nm), self.title_level
        sig = html.escape(_fmt_sig(self.sig)) if self.sig else ''
        out = f'<hr/>\n<h{lvl}>{nm}</h{lvl}>\n<blockquote><pre><code>{nm} {sig}</code></pre></blockquote>'
        if self.docs: out += f'<p>{_inline(self.docs)}</p>'
        if self.dm.has_docment:
            rows = [r for r in str(self.dm).strip().splitlines() if r.startswith('|')]
            cells = [[c.strip(' *').replace('\\|', '|') for c in re.split(r'(?<!\\)\|', r)[1:-1]] for r in rows]
            if len(cells) > 2:
                head = ''.join(f'<th>{html.escape(c)}</th>' for c in cells[0])
                body = ''.join('<tr>' + ''.join(f'<td>{_inline(c)}</td>' for c in r) + '</tr>' for r in cells[2:])
                out += f'<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'
        return out

class exec_show_docs_html(P.exec_show_docs):
    "nbdev's `exec_show_docs`, rendering API docs with `BookDocRenderer` (markdown starting with `---` breaks docutils)."
    def begin(self):
        super().begin()
        if hasattr(self, 'k'):
            self.k.user_ns['_BookDocRenderer'] = BookDocRenderer
            self.k.run_cell('from functools import partial as _p\nshow_doc = _p(show_doc, renderer=_BookDocRenderer)')

def _do_eval(cell):
    "Like nbdev's rule for which cells run to build API docs, but skip cells mixing imports with other code."
    trees = cell.parsed_() if cell.cell_type == 'code' and cell.source else None
    if trees and P._ast_contains(trees, (P.ast.Import, P.ast.ImportFrom)) and P._ast_contains(trees, (P.ast.Expr, P.ast.Assign)) \
       and not (cell.directives_.keys() & {'export', 'exports', 'exporti', 'exec_doc'}): return False
    return _nbdev_do_eval(cell)
_nbdev_do_eval, P._do_eval = P._do_eval, _do_eval

# the parts of the book: one per notebook folder (folders and chapters numbered by dependency)
PARTS = {'00_core': 'Foundations', '01_model': 'Linear models', '02_privacy': 'Privacy',
         '03_solvers': 'Algorithms', '04_theory': 'Theory', '05_experiments': 'Reproductions',
         '06_api': 'Using dp_cd', '07_evidence': 'Evidence'}


def notebooks():
    "index first, then the chapters in dependency (folder, then file name) order."
    chapters = [p for p in NBS.rglob('*.ipynb')
                if p != NBS / 'index.ipynb' and not p.name.startswith('_')
                and '.ipynb_checkpoints' not in p.parts]
    return [NBS / 'index.ipynb'] + sorted(chapters, key=lambda p: p.relative_to(NBS).parts)


def page_of(path: Path) -> str:
    "The book page of a notebook, relative to the book's root (e.g. `01_model/01_norms`)."
    return path.relative_to(NBS).with_suffix('').as_posix()


def table_of_contents(paths) -> str:
    "jupyter-book's _toc.yml: the index, then one part per folder."
    toc = 'format: jb-book\nroot: index\nparts:\n'
    for folder in sorted({p.relative_to(NBS).parts[0] for p in paths[1:]}):
        toc += f'- caption: {PARTS.get(folder, folder)}\n  chapters:\n'
        toc += ''.join(f'  - file: {page_of(p)}\n' for p in paths[1:]
                       if p.relative_to(NBS).parts[0] == folder)
    return toc

def title_of(nb) -> str:
    for c in nb['cells']:
        if c['cell_type'] == 'markdown':
            m = re.search(r'^# (.+)$', ''.join(c['source']), re.M)
            if m: return m.group(1).strip()
    return ''

def check(path: Path):
    "Refuse notebooks that cannot be part of the book."
    try:
        nb = nbformat.read(path, as_version=4)
        nbformat.validator.normalize(nb); nbformat.validate(nb)
    except Exception as e: raise BookError(f'{path.name}: not a valid notebook ({e})')
    if not title_of(nb): raise BookError(f'{path.name}: no "# Title" markdown heading')
    for i, c in enumerate(nb.cells):
        for o in c.get('outputs', []):
            if o.get('output_type') == 'error':
                raise BookError(f'{path.name}: cell {i} stores an error output ({o.get("ename")}): re-run tools/execute_nbs.py')
    return nb

def _directives(cell):
    return extract_directives(cell, remove=False) if cell.cell_type == 'code' else {}

def process(path: Path, dest: Path, execute: bool):
    nb = read_nb(path)
    procs = [P.populate_language, P.add_show_docs, P.strip_ansi, P.hide_line, P.filter_stream_,
             P.rm_header_dash, P.clean_show_doc, exec_show_docs_html, P.rm_export, P.clean_magics,
             P.hide_, P.strip_hidden_metadata]
    try: NBProcessor(path, procs, nb=nb).process()
    except Exception as e: raise BookError(f'{path.name}: executing its exported code / API docs failed: {e}')
    cells = []
    for c in nb.cells:
        if c.cell_type == 'code':
            d = _directives(c)
            if not c.source.strip() and not c.get('outputs'): continue
            tags = []
            if d.get('echo:', [''])[0].lower() == 'false' or c.source.lstrip().startswith('show_doc'): tags.append('remove-input')
            if d.get('output:', [''])[0].lower() == 'false': tags.append('remove-output')
            if execute and ({'slow'} & d.keys() or d.get('eval:', [''])[0].lower() == 'false'): tags.append('skip-execution')
            c.source = '\n'.join(l for l in c.source.splitlines() if not re.match(r'\s*#\|', l))
            c.metadata = {'tags': tags} if tags else {}
        else: c.metadata = {}
        for o in c.get('outputs', []):   # no machine-specific paths in the book
            if o.get('output_type') == 'stream':
                txt = ''.join(o['text']) if isinstance(o['text'], list) else o['text']
                o['text'] = txt.replace(str(ROOT) + '/', '').replace(str(ROOT), '.')
        for k in ('idx_', 'directives_'): c.pop(k, None)
        c['id'] = f'cell-{len(cells)}'
        cells.append(c)
    nb.cells = cells
    nb.nbformat, nb.nbformat_minor = 4, 5
    nb.metadata = {'kernelspec': {'name': 'python3', 'display_name': 'Python 3', 'language': 'python'},
                   'language_info': {'name': 'python'}}
    write_nb(nb, dest)

MATHJAX = 'mathjax@3.2.2'

def local_mathjax():
    "Fetch MathJax from the npm registry once (cached in book/.mathjax) so the book renders math offline; None if npm is unavailable."
    cache = BOOK / '.mathjax'
    js = cache / 'es5' / 'tex-chtml.js'
    if js.exists(): return cache
    npm = shutil.which('npm')
    if npm is None: return None
    tmp = BOOK / '.mathjax-tmp'; shutil.rmtree(tmp, ignore_errors=True); tmp.mkdir(parents=True)
    try:
        r = subprocess.run([npm, 'pack', MATHJAX, '--silent'], cwd=tmp, capture_output=True, text=True, timeout=180)
        tgz = list(tmp.glob('mathjax-*.tgz'))
        if r.returncode or not tgz: return None
        import tarfile
        with tarfile.open(tgz[0]) as tf: tf.extractall(tmp, filter='data')
        shutil.rmtree(cache, ignore_errors=True); cache.mkdir(parents=True)
        shutil.copytree(tmp / 'package' / 'es5', cache / 'es5')
        return cache
    except (OSError, subprocess.SubprocessError): return None
    finally: shutil.rmtree(tmp, ignore_errors=True)

CONFIG = """\
title: dp_cd
author: the dp_cd developers
copyright: "2026"
only_build_toc_files: true
execute:
  execute_notebooks: {execute}
  allow_errors: false
  timeout: 600
parse:
  myst_enable_extensions: [dollarmath, amsmath, colon_fence, deflist, html_image]
html:
  use_repository_button: false
sphinx:
  config:
    suppress_warnings: ["myst.header", "mystnb.unknown_mime_type"]
    html_show_sourcelink: false
    myst_dmath_double_inline: true
    mathjax3_config:
      tex:
        tags: none
"""

def build(execute=False, keep=False):
    if SRC.exists(): shutil.rmtree(SRC)
    SRC.mkdir(parents=True)
    paths = notebooks()
    for p in paths:
        check(p)
        dest = SRC / p.relative_to(NBS)
        dest.parent.mkdir(parents=True, exist_ok=True)
        process(p, dest, execute)
    config = CONFIG.format(execute='force' if execute else 'off')
    mj = local_mathjax()
    if mj is not None:   # MathJax served with the book (offline reading); otherwise Sphinx's CDN default
        shutil.copytree(mj, SRC / '_static' / 'mathjax')
        config += "    html_static_path: ['_static']\n    mathjax_path: mathjax/es5/tex-chtml.js\n"
    else: print('note: npm unavailable, MathJax will be loaded from its CDN when the book is read')
    (SRC / '_config.yml').write_text(config)
    (SRC / '_toc.yml').write_text(table_of_contents(paths))
    cmd = [str(Path(sys.executable).parent / 'jupyter-book'), 'build', str(SRC), '--path-output', str(BOOK), '-W', '-n', '--keep-going']
    r = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    sys.stdout.write(r.stdout[-4000:]); sys.stderr.write(r.stderr[-4000:])
    if r.returncode != 0 or 'build succeeded' not in r.stdout:
        raise BookError(f'jupyter-book build failed (exit {r.returncode})')
    if not keep: shutil.rmtree(SRC)
    return BOOK / '_build' / 'html'

if __name__ == '__main__':
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--execute', action='store_true', help='re-execute notebooks while building')
    ap.add_argument('--keep', action='store_true', help='keep the processed notebooks in book/_src')
    a = ap.parse_args()
    try: out = build(a.execute, a.keep)
    except BookError as e: sys.exit(f'book build failed: {e}')
    print(f'book written to {out}')
