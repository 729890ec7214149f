#!/usr/bin/env python
"""Render the notebooks in nbs/ into the book at book/_build/html with jupyter-book 1.x.

    python tools/build_book.py              # render the outputs stored in the notebooks (fast)
    python tools/build_book.py --execute    # re-execute the notebooks (slow cells skipped)

Quarto is not available here, so instead of `nbdev_docs` each notebook goes through nbdev's own
processors (API docs from `show_doc`, hidden cells and export cells removed, directives honoured)
and the result is written to book/_src, with a table of contents generated from the notebook
order (index first, then chapters by number, one part per folder) and the list of chapters added
to the front page. API entries get an anchor, an index entry and MathJax; MathJax itself is served
from `mathjax/` beside the pages (from the npm registry, cached in book/.mathjax). The build fails
(exit 1) on a notebook that is not valid, has no `# Title`, shows code above its title, holds a
control character (a lost backslash), stores an error output, or whose exported code or API docs
fail to execute, and on any Sphinx warning. Punctuation right after inline math is kept on the
math's line. `tools/check_book.py` then checks the pages in a browser; tests/test_book.py runs
every command the text shows in a cheap form (`cheap_forms`).
"""
import argparse, base64, configparser, functools, html, inspect, json, re, shutil, subprocess, sys
from functools import partial
from pathlib import Path

import warnings
import nbformat, nbformat.warnings
warnings.filterwarnings('ignore', category=nbformat.warnings.MissingIDFieldWarning)
from execnb.nbio import read_nb, write_nb
from nbdev.process import NBProcessor, extract_directives
from nbdev import processors as P
from nbdev.showdoc import BasicHtmlRenderer, _fmt_sig
from fastcore.docments import _docments

ROOT = Path(__file__).resolve().parents[1]
NBS, BOOK = ROOT / 'nbs', ROOT / 'book'
SRC = BOOK / '_src'

class BookError(Exception): pass

_settings = configparser.ConfigParser()
_settings.read(ROOT / 'settings.ini')
LIB = _settings['DEFAULT']['lib_name']   # the package (`dp_cd`)

def _inline(text: str) -> str:
    "Docstring text as safe HTML: escaped, `code` spans, $math$ for MathJax."
    t = html.escape(text, quote=False)
    t = re.sub(r'`([^`]+)`', r'<code>\1</code>', t)
    return re.sub(r'(?<![\\$])\$([^$]+)\$', r'\\(\1\\)', t)

def _plain(value) -> str:
    """A cell of a parameters table as plain text: a type or function by its name, nothing for an
    empty value, a comment's lines joined by spaces (fastcore's `_maybe_nm`, without markdown)."""
    if value is inspect.Parameter.empty: return ''
    if hasattr(value, '__name__'): return value.__name__
    return ' '.join(str(value).split('\n')).strip()

def _public_names(text: str, module: str) -> str:
    """`text` with the classes of the notebook being documented named by the module they are
    exported to: its code runs in `__main__`, so `PLDPmf` would read `__main__.PLDPmf`."""
    return re.sub(r'\b__main__\.', f'{module}.', text) if module else text

def _is_internal(fn) -> bool:
    "A numba kernel or a private name: not what a reader of the chapter calls."
    return hasattr(fn, 'py_func') or getattr(fn, '__name__', '').startswith('_')

class BookDocRenderer(BasicHtmlRenderer):
    """API docs as HTML for the book: escaped (a `<` no longer truncates a docstring), no links to a
    documentation host, an anchor per entry and the class MathJax needs to typeset an output.
    Kernels and private names are marked `api-internal`; `module` (the notebook's `default_exp`
    module, set while its API docs run) replaces `__main__` in signatures and tables."""
    module = ''
    def __init__(self, sym, *args, **kwargs):
        self.internal = _is_internal(sym)   # before fastcore unwraps a kernel to its Python code
        super().__init__(sym, *args, **kwargs)
        self._star_docments()

    def _star_docments(self):
        """The comments of `*args` and `**kwargs`, which fastcore's `docments` drops (it does not pass
        `args_kwargs` on) and then gives to the return annotation on the next line."""
        stars = [k for k, v in self.dm.dm.items()
                 if v.get('anno') in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)]
        if not stars: return
        try: found = _docments(self.sym, args_kwargs=True)
        except Exception: return
        for k in stars + ['return']:
            if k in self.dm.dm and k in found:
                self.dm.dm[k]['docment'] = found[k]['docment'] or inspect.Parameter.empty

    def _repr_html_(self):
        nm, lvl = html.escape(self.nm), self.title_level
        anchor = 'api-' + re.sub(r'[^A-Za-z0-9_.-]+', '-', self.nm)
        sig = html.escape(_public_names(_fmt_sig(self.sig), self.module)) if self.sig else ''
        kind = ' api-internal' if self.internal else ''
        out = (f'<div class="api-entry{kind} mathjax_process">\n<h{lvl} id="{anchor}">{nm}'
               f'<a class="headerlink" href="#{anchor}" title="Link to this entry">#</a></h{lvl}>\n'
               f'<pre class="api-signature"><code>{nm} {sig}</code></pre>')
        if self.docs: out += f'<p>{_inline(self.docs)}</p>'
        if self.dm.has_docment: out += self._params_table()
        return out + '</div>'

    def _params_table(self):
        """The parameters (and returns) as an HTML table, from the docments themselves: fastcore's
        markdown table escapes `|` and `^` (`2\\^lo`) and writes a newline as `<br>`."""
        dm = self.dm
        rows = [[_plain(v) for v in row] for row in dm._row_list]
        if dm.has_return:
            rows.append(['Returns', *(_plain(dm.dm['return'][c]) for c in dm._columns)])
        rows = [[_public_names(c, self.module) for c in r] for r in rows]
        if not rows: return ''
        head = ''.join(f'<th>{html.escape(c)}</th>' for c in ['', *dm._columns.values()])
        body = ''.join('<tr>' + ''.join(f'<td>{_inline(c)}</td>' for c in r) + '</tr>'
                       for r in rows)
        return f'<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'

class exec_show_docs_html(P.exec_show_docs):
    """nbdev's `exec_show_docs`, rendering API docs with `BookDocRenderer` (markdown starting with
    `---` breaks docutils)."""
    def begin(self):
        super().begin()
        BookDocRenderer.module = default_exp(self.nb)
        if hasattr(self, 'k'):
            self.k.user_ns['_BookDocRenderer'] = BookDocRenderer
            self.k.run_cell('from functools import partial as _p\n'
                            'show_doc = _p(show_doc, renderer=_BookDocRenderer)')

def default_exp(nb) -> str:
    "The module a notebook exports to (`dp_cd.` and its `#| default_exp`), '' if none."
    for c in nb.cells:
        if c.cell_type == 'code':
            m = re.search(r'^#\|\s*default_exp\s+(\S+)', c.source, re.M)
            if m: return f'{LIB}.{m.group(1)}'
    return ''

def _do_eval(cell):
    """Like nbdev's rule for which cells run to build API docs, but skip cells mixing imports with
    other code."""
    trees = cell.parsed_() if cell.cell_type == 'code' and cell.source else None
    imports = trees and P._ast_contains(trees, (P.ast.Import, P.ast.ImportFrom))
    if imports and P._ast_contains(trees, (P.ast.Expr, P.ast.Assign)) \
       and not (cell.directives_.keys() & {'export', 'exports', 'exporti', 'exec_doc'}):
        return False
    return _nbdev_do_eval(cell)
_nbdev_do_eval, P._do_eval = P._do_eval, _do_eval

# the parts of the book: one per notebook folder (folders and chapters numbered by dependency)
PARTS = {'00_start': 'Getting started', '00_core': 'Foundations', '01_model': 'Linear models',
         '02_privacy': 'Privacy', '03_solvers': 'Algorithms', '04_theory': 'Theory', '05_experiments': 'Reproductions',
         '06_api': 'Using dp_cd', '07_evidence': 'Evidence', '08_gallery': 'Gallery'}
# the parts a new reader needs first, before the chapters in dependency order
FRONT = ('00_start', '08_gallery')


def _part_key(folder: str) -> tuple:
    "A part's place in the book: the front parts first, then the folders by number."
    return (FRONT.index(folder) if folder in FRONT else len(FRONT), folder)


def notebooks():
    "index first, then the chapters in dependency (folder, then file name) order."
    chapters = [p for p in NBS.rglob('*.ipynb')
                if p != NBS / 'index.ipynb' and not p.name.startswith('_')
                and '.ipynb_checkpoints' not in p.parts]
    return [NBS / 'index.ipynb'] + sorted(chapters, key=_order)


def _order(path: Path) -> tuple:
    "A chapter's place: the front parts first (getting started, gallery), then folders and files by number."
    parts = path.relative_to(NBS).parts
    return (*_part_key(parts[0]), *parts[1:])


def page_of(path: Path) -> str:
    "The book page of a notebook, relative to the book's root (e.g. `01_model/01_norms`)."
    return path.relative_to(NBS).with_suffix('').as_posix()


def table_of_contents(paths) -> str:
    "jupyter-book's _toc.yml: the index, then one part per folder."
    toc = 'format: jb-book\nroot: index\nparts:\n'
    for folder in sorted({p.relative_to(NBS).parts[0] for p in paths[1:]},
                         key=_part_key):
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

CONTROL = re.compile(r'[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]')   # all but tab, newline, return

def control_characters(nb):
    "(cell number, context) of each control character in a cell's source, e.g. a `\a` escape."
    found = []
    for i, c in enumerate(nb['cells']):
        src = ''.join(c['source'])
        found += [(i, repr(src[max(0, m.start() - 20):m.end() + 20]))
                  for m in CONTROL.finditer(src)]
    return found

# an absolute path of a machine (a temporary or home directory, a checkout, an installed package)
MACHINE_PATH = re.compile(r'(?<![\w.~-])(?:/work|/tmp|/home|/root|/Users|/private/var|/var/folders)/'
                          r'|[\w.-]+[/\\](?:site|dist)-packages\b|\b[A-Z]:\\\\?Users\b')

def _output_text(output) -> str:
    "The text an output shows: a stream, the text forms of a result or display, a traceback."
    text = output.get('text', '')
    parts = [text] if isinstance(text, str) else list(text)
    for mime, value in output.get('data', {}).items():
        if mime.startswith('text/'): parts += [value] if isinstance(value, str) else value
    return ''.join(parts) + '\n'.join(output.get('traceback', []))

def machine_paths(nb):
    "(cell number, line) of each stored output line that shows an absolute path of a machine."
    found = []
    for i, c in enumerate(nb['cells']):
        for o in c.get('outputs', []):
            found += [(i, line.strip()[:160]) for line in _output_text(o).splitlines()
                      if MACHINE_PATH.search(line)]
    return found

# a command a reader may type: in a code span or block of the text, it starts (after variables
# such as DP_CD_DATA=...) with python, a venv's python or the `dp-cd` console script
COMMAND = re.compile(r'^(?:\w+=\S+\s+)*(?:(?:\.venv/bin/)?python3?\s|dp-cd(?:\s|$))')
REPO_PATH = re.compile(r'^(?:nbs|tools|tests|benchmarks|dp_cd)/\S+\.(?:py|ipynb|md)$')

def shell_commands(nb) -> list:
    "(cell number, command) of the commands the markdown of a notebook shows (spans and blocks)."
    found = []
    for i, c in enumerate(nb['cells']):
        if c['cell_type'] != 'markdown': continue
        src = ''.join(c['source'])
        blocks = re.findall(r'^```[^\n]*\n(.*?)^```', src, re.M | re.S)
        spans = re.findall(r'(?<!`)`([^`\n]+)`(?!`)', re.sub(r'^```.*?^```', '', src, flags=re.M | re.S))
        lines = [l.strip() for b in blocks for l in b.splitlines()] + [s.strip() for s in spans]
        found += [(i, l) for l in lines if COMMAND.match(l)]
    return found

def _placeholder(token: str) -> bool:
    "A word the reader replaces (`NAME`, `nbs/CHAPTER.ipynb`, `/path/to/data`)."
    return bool(re.search(r'(?:^|/)[A-Z][A-Z_]+(?:\.\w+)?$', token)) or token.startswith('/path/')

def command_problems(command: str) -> list:
    """What would stop `command` from running as written: a file of the repository it names that
    does not exist; for `dp-cd`, arguments its parser refuses or a reproduction it does not know."""
    import shlex
    problems = []
    for part in re.split(r'&&|\|\||[|;]', command):   # each command of a pipe or a chain
        words = shlex.split(part, comments=True)   # a shell comment (`# ...`) is not an argument
        problems += [f'no file {w}' for w in words
                     if REPO_PATH.match(w) and not _placeholder(w) and not (ROOT / w).exists()]
        while words and re.match(r'^\w+=', words[0]): words = words[1:]
        if words and re.match(r'^(?:\.venv/bin/)?dp-cd$', words[0]):
            problems += _cli_problems(words[1:])
    return problems

def _cli_problems(args) -> list:
    """Problems of `dp-cd ARGS`: an option, sub-command or value its parser refuses, or a
    reproduction it does not know. The text may name a command without its arguments (`dp-cd fit
    --tune`, `dp-cd fit --scheduler ADDRESS`): a missing argument is not a problem, placeholders are
    replaced by a value."""
    import contextlib, io
    from dp_cd import cli
    words = ['x' if _placeholder(w) else w for w in args]
    try:
        with contextlib.redirect_stderr(io.StringIO()), contextlib.redirect_stdout(io.StringIO()):
            a = cli._parser().parse_args(words or ['--help'])
    except SystemExit as e: error = '' if e.code == 0 else str(e)   # --help; argparse's own exit
    except cli.CLIError as e: error = str(e)
    else:
        unknown = a.command == 'reproduce' and not _placeholder(args[args.index('reproduce') + 1]) \
            and a.name not in cli.REPRODUCTIONS
        error = f'unknown reproduction {a.name!r}' if unknown else ''
    incomplete = re.search(r'arguments are required|expected one argument', error)
    return [f'dp-cd {" ".join(args)}: {error}'] if error and not incomplete else []

PYTHON = re.compile(r'^(?:\.venv/bin/)?python3?$')
CLI = ('import sys; from dp_cd.cli import main; sys.exit(main(sys.argv[1:]))',)

def cheap_forms(command: str) -> list:
    """How a test runs `command` cheaply: for each `python` or `dp-cd` command of a pipe or chain,
    (argv, options): its program asked for `--help` (`dp-cd` with its sub-command; a script without
    an argument parser is compiled instead) and the `--options` the text gives it, which that help
    must name. A command's own run (a benchmark, a reproduction) is what the text promises; its
    help running and knowing the options is the part a test can afford."""
    import shlex
    forms = []
    for part in re.split(r'&&|\|\||[|;]', command):
        words = shlex.split(part, comments=True)
        while words and re.match(r'^\w+=', words[0]): words = words[1:]
        if not words: continue
        options = lambda ws: [w.split('=')[0] for w in ws if w.startswith('--') and w != '--help']
        if PYTHON.match(words[0]) and words[1:2] == ['-m'] and words[2:3] and \
                words[2].startswith('dp_cd'):
            forms.append(([sys.executable, '-m', words[2], '--help'], options(words[3:])))
        elif PYTHON.match(words[0]) and words[1:] and REPO_PATH.match(words[1]) \
                and words[1].endswith('.py') and not _placeholder(words[1]):
            parsed = 'argparse' in (ROOT / words[1]).read_text(encoding='utf-8')
            forms.append(([sys.executable, words[1], '--help'], options(words[2:])) if parsed
                         else ([sys.executable, '-m', 'py_compile', words[1]], []))
        elif re.match(r'^(?:\.venv/bin/)?dp-cd$', words[0]):
            sub = words[1:2] if words[1:2] and not words[1].startswith('-') else []
            forms.append(([sys.executable, '-c', *CLI, *sub, '--help'], options(words[1:])))
    return forms

@functools.lru_cache(maxsize=None)
def _run(argv: tuple):
    "Exit code and output of `argv`, run once from the repository's root."
    r = subprocess.run(list(argv), cwd=ROOT, capture_output=True, text=True, timeout=600)
    return r.returncode, r.stdout + r.stderr

def run_problems(command: str) -> list:
    "What goes wrong when `command` runs in its cheap form (`cheap_forms`): an exit code, an option."
    problems = []
    for argv, options in cheap_forms(command):
        code, out = _run(tuple(argv))
        shown = ' '.join(argv[3:] if argv[1] == '-c' else argv[1:])
        if code: problems.append(f'{shown}: exit {code}: {out.strip()[-300:]}')
        problems += [f'{shown}: does not name {o}' for o in options if o not in out]
    return problems

def check(path: Path):
    "Refuse notebooks that cannot be part of the book."
    try:
        nb = nbformat.read(path, as_version=4)
        nbformat.validator.normalize(nb)
        nbformat.validate(nb)
    except Exception as e: raise BookError(f'{path.name}: not a valid notebook ({e})')
    if not title_of(nb): raise BookError(f'{path.name}: no "# Title" markdown heading')
    for i, context in control_characters(nb):
        raise BookError(f'{path.name}: cell {i} holds a control character ({context}): '
                        'a lost backslash? write \\\\a, \\\\b, \\\\f ... in the JSON')
    for i, c in enumerate(nb.cells):
        for o in c.get('outputs', []):
            if o.get('output_type') == 'error':
                raise BookError(f'{path.name}: cell {i} stores an error output ({o.get("ename")}): '
                                're-run tools/execute_nbs.py')
    return nb

def _directives(cell):
    return extract_directives(cell, remove=False) if cell.cell_type == 'code' else {}

FULL_WIDTH = 760   # px: figures wider than the text column get the margin too (cell tag full-width)

def _png_width(output) -> int:
    "The display width of an output's PNG: its `width` metadata, else the image's own width."
    png = output.get('data', {}).get('image/png')
    if not png: return 0
    meta = output.get('metadata', {}).get('image/png', {})
    if meta.get('width'): return int(meta['width'])
    head = base64.b64decode(''.join(png)[:44])
    return int.from_bytes(head[16:20], 'big') if head[12:16] == b'IHDR' else 0

def _tags(cell, execute):
    "jupyter-book's cell tags for nbdev's directives (and wide figures)."
    d, tags = _directives(cell), []
    if d.get('echo:', [''])[0].lower() == 'false' or cell.source.lstrip().startswith('show_doc'):
        tags.append('remove-input')
    if d.get('output:', [''])[0].lower() == 'false': tags.append('remove-output')
    if execute and ({'slow'} & d.keys() or d.get('eval:', [''])[0].lower() == 'false'):
        tags.append('skip-execution')
    if d.get('warning:', [''])[0].lower() == 'shown': tags.append('warning-shown')
    if max(map(_png_width, cell.get('outputs', [])), default=0) > FULL_WIDTH:
        tags.append('full-width')
    return tags

# a warning raised by a cell's own code: `<ipython-input-1-ab12>:4: UserWarning: ...` and the line
IPYTHON_WARNING = re.compile(r'<ipython-input-[\w-]+>:\d+: (\w+: [^\n]*\n)(?:  [^\n]*\n)?')

def _book_cell(c, execute):
    "The cell as the book shows it (None to drop it): directives as tags, no machine paths."
    if c.cell_type == 'code':
        tags = _tags(c, execute)
        c.source = '\n'.join(l for l in c.source.splitlines() if not re.match(r'\s*#\|', l))
        if not c.source.strip() and not c.get('outputs'): return None
        c.metadata = {'tags': tags} if tags else {}
    else: c.metadata = {}
    for o in c.get('outputs', []):   # no machine-specific paths in the book
        if o.get('output_type') == 'stream':
            txt = ''.join(o['text']) if isinstance(o['text'], list) else o['text']
            txt = IPYTHON_WARNING.sub(r'\1', txt)
            o['text'] = txt.replace(str(ROOT) + '/', '').replace(str(ROOT), '.')
    for k in ('idx_', 'directives_'): c.pop(k, None)
    return c

ANCHOR = re.compile(r'id="(api-[^"]+)">([^<]*)<a class="headerlink" href="#\1"')

def _unique_anchors(cells):
    "Number repeated API anchors (`api-f`, `api-f-2`, ...) so every entry of a page can be linked."
    seen = {}
    def rename(m):
        seen[m[1]] = seen.get(m[1], 0) + 1
        new = m[1] if seen[m[1]] == 1 else f'{m[1]}-{seen[m[1]]}'
        return f'id="{new}">{m[2]}<a class="headerlink" href="#{new}"'
    for c in cells:
        for o in c.get('outputs', []):
            data = o.get('data', {})
            if 'text/html' in data:
                data['text/html'] = ANCHOR.sub(rename, ''.join(data['text/html']))

def _api_names(cell):
    "The names of the API entries a cell shows (from the anchors `BookDocRenderer` writes)."
    html_out = ''.join(''.join(o.get('data', {}).get('text/html', ''))
                       for o in cell.get('outputs', []))
    return re.findall(r'<div class="api-entry[^"]*">\s*<h\d id="[^"]+">([^<]+)<', html_out)

def _with_index_entries(cells):
    "Before each cell of API docs, an index entry per name: the book's index lists the API."
    out = []
    for c in cells:
        names = _api_names(c)
        if names:
            src = ''.join(f'```{{index}} single: {html.unescape(n)}\n```\n' for n in names)
            out.append(nbformat.v4.new_markdown_cell(src))
        out.append(c)
    return out

def _check_title_first(path, cells):
    "The title comes first: a reader should not meet code before it."
    for c in cells:
        if c.cell_type == 'markdown' and re.search(r'^# ', c.source, re.M): return
        if c.cell_type == 'code' and 'remove-input' not in c.metadata.get('tags', []):
            raise BookError(f'{path.name}: a code cell is shown above the "# Title": move it '
                            'below the title, or hide it (#| hide) if it only imports')

def api_entries(path: Path) -> list:
    """What the API entries of a notebook's page show, without building the book: one dict per
    public name its exported cells define (as nbdev documents them), with the rows of its
    parameters table that have no description (`bare`), whether it has a table, and its
    parameters. The objects are the package's (run `nbdev_export` first)."""
    import importlib
    nb = NBProcessor(path).nb
    module = importlib.import_module(default_exp(nb)) if default_exp(nb) else None
    out = []
    for cell in filter(P._want_doc, nb.cells) if module else ():
        for name in P._def_names(cell, set()):
            obj = getattr(module, name)
            r = BookDocRenderer(obj)
            rows = [[_plain(v) for v in row] for row in r.dm._row_list] if r.dm.has_docment else []
            if r.dm.has_docment and r.dm.has_return:
                rows.append(['Returns', *(_plain(r.dm.dm['return'][c]) for c in r.dm._columns)])
            try: params = [p for p in inspect.signature(obj).parameters if p not in ('self', 'cls')]
            except (TypeError, ValueError): params = []
            out.append(dict(name=name, internal=r.internal, table=bool(rows), params=params,
                            bare=[row[0] for row in rows if not row[-1]]))
    return out

def process(path: Path, dest: Path, execute: bool, extra_cells=()):
    nb = read_nb(path)
    procs = [P.populate_language, P.add_show_docs, P.strip_ansi, P.hide_line, P.filter_stream_,
             P.rm_header_dash, P.clean_show_doc, exec_show_docs_html, P.rm_export, P.clean_magics,
             P.hide_, P.strip_hidden_metadata]
    try: NBProcessor(path, procs, nb=nb).process()
    except Exception as e:
        raise BookError(f'{path.name}: executing its exported code / API docs failed: {e}')
    cells = [c for c in (_book_cell(c, execute) for c in nb.cells) if c is not None]
    _check_title_first(path, cells)
    cells += [nbformat.v4.new_markdown_cell(src) for src in extra_cells]
    cells = _with_index_entries(cells)
    _unique_anchors(cells)
    for i, c in enumerate(cells): c['id'] = f'cell-{i}'
    nb.cells = cells
    nb.nbformat, nb.nbformat_minor = 4, 5
    nb.metadata = {'kernelspec': {'name': 'python3', 'display_name': 'Python 3',
                                  'language': 'python'},
                   'language_info': {'name': 'python'}}
    write_nb(nb, dest)

def summary_of(nb) -> str:
    "The one-line summary (`> ...`) under a notebook's title."
    for c in nb['cells']:
        src = ''.join(c['source'])
        if c['cell_type'] == 'markdown' and re.search(r'^# ', src, re.M):
            m = re.search(r'^> ?(.+)$', src, re.M)
            return m.group(1).strip() if m else ''
    return ''

def chapter_list(paths) -> str:
    "Markdown for the front page: every chapter, with its summary, grouped by the book's parts."
    out = '## Chapters\n\nThe chapters by part, in dependency order (see also the '
    out += '[index](genindex) and the [search page](search)).\n'
    for folder in sorted({p.relative_to(NBS).parts[0] for p in paths[1:]},
                         key=_part_key):
        out += f'\n**{PARTS.get(folder, folder)}**\n\n'
        for p in (p for p in paths[1:] if p.relative_to(NBS).parts[0] == folder):
            nb = json.loads(p.read_text(encoding='utf-8'))
            summary = summary_of(nb)
            out += f'- [{title_of(nb)}]({page_of(p)}.ipynb)'
            out += f': {summary}\n' if summary else '\n'
    return out

MATHJAX = 'mathjax@3.2.2'

def local_mathjax():
    """Fetch MathJax from the npm registry once (cached in book/.mathjax) so the book renders math
    offline; None if npm is unavailable."""
    cache = BOOK / '.mathjax'
    js = cache / 'es5' / 'tex-chtml.js'
    if js.exists(): return cache
    npm = shutil.which('npm')
    if npm is None: return None
    tmp = BOOK / '.mathjax-tmp'
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    try:
        r = subprocess.run([npm, 'pack', MATHJAX, '--silent'], cwd=tmp, capture_output=True,
                           text=True, timeout=180)
        tgz = list(tmp.glob('mathjax-*.tgz'))
        if r.returncode or not tgz: return None
        import tarfile
        with tarfile.open(tgz[0]) as tf: tf.extractall(tmp, filter='data')
        shutil.rmtree(cache, ignore_errors=True)
        cache.mkdir(parents=True)
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
  favicon: _static/favicon.svg
sphinx:
  local_extensions:
    build_book: {tools}
  config:
    html_context:
      default_mode: auto
    suppress_warnings: ["myst.header", "mystnb.unknown_mime_type"]
    html_show_sourcelink: false
    myst_dmath_double_inline: true
    myst_mathjax_classes: "tex2jax_process|mathjax_process|math|output_area|text_html"
    mathjax3_config:
      tex:
        tags: none
"""

# The book's own style sheet (jupyter-book links every *.css and *.js found under _static into
# every page, which is also why MathJax must not live there).
CSS = """\
/* code the book wrote (cells, code blocks of the text, API signatures) wraps instead of
   scrolling sideways; outputs (data) are left as they are */
.bd-article div.notranslate:not(.output) > div.highlight > pre, .api-entry pre.api-signature {
  white-space: pre-wrap;
  overflow-wrap: anywhere;
}
/* printed outputs (privacy reports, logs, warnings) wrap at the column's width instead of
   scrolling sideways; HTML tables keep their own layout */
div.cell_output div.output.stream pre, div.cell_output div.output.stderr pre,
div.cell_output div.output.text_plain pre {
  white-space: pre-wrap;
  overflow-wrap: anywhere;
}
/* inline math is not clipped by the few pixels its glyphs overhang */
span.math { overflow: visible; }
/* inline math and the punctuation that follows it are kept on one line */
span.math-punct { white-space: nowrap; }
.api-entry { border-top: 1px solid var(--pst-color-border); }
.api-entry h3, .api-entry h4 { margin-top: 0.75rem; }
.api-entry pre.api-signature {
  overflow-x: visible;
  padding: 0.5rem 0.75rem;
  border-left: 3px solid var(--pst-color-primary);
}
.api-entry h3 a.headerlink, .api-entry h4 a.headerlink { visibility: hidden; }
.api-entry h3:hover a.headerlink, .api-entry h4:hover a.headerlink { visibility: visible; }
.api-entry table { display: block; max-width: 100%; overflow-x: auto; }
/* whole words in parameter tables ("Default", "NoneType" were cut anywhere); a long type or
   value still breaks rather than widening the table */
.api-entry td, .api-entry th { overflow-wrap: break-word; }
.api-entry th, .api-entry td:first-child { white-space: nowrap; }
/* figures: as wide as their (full-width) cell allows, a click opens them at full size */
div.cell_output img { max-width: 100%; height: auto !important; }
a.image-reference img { cursor: zoom-in; }
"""

FAVICON = """<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32">\
<rect width="32" height="32" rx="6" fill="#2d5a8c"/><text x="16" y="22" font-size="15" \
font-family="sans-serif" font-weight="bold" text-anchor="middle" fill="#fff">dp</text></svg>
"""

def _dedupe_scripts(app, pagename, templatename, context, doctree):
    "One <script> per script: sphinx-thebe registers its `const` configuration twice (a JS error)."
    seen, unique = set(), []
    for js in context.get('script_files', []):
        attributes = sorted(getattr(js, 'attributes', {}).items())
        key = (getattr(js, 'filename', js) or '', repr(attributes))
        if key not in seen:
            seen.add(key)
            unique.append(js)
    context['script_files'][:] = unique

def setup(app):
    "This file is also the book's Sphinx extension (`local_extensions` in the configuration)."
    app.connect('html-page-context', _dedupe_scripts)
    return {'parallel_read_safe': True, 'parallel_write_safe': True}

def mathjax_config(src: Path) -> str:
    """Serve MathJax with the book (offline reading) from `mathjax/` beside the pages, copied there
    by `html_extra_path` (outside `_static`, so it is linked once per page); Sphinx's CDN default
    if npm is unavailable. Returns the lines to add to the Sphinx configuration."""
    mj = local_mathjax()
    if mj is None:
        print('note: npm unavailable, MathJax will be loaded from its CDN when the book is read')
        return ''
    shutil.copytree(mj / 'es5', src / '_extra' / 'mathjax')
    return ("    html_extra_path: ['_extra']\n"
            "    mathjax_path: ../mathjax/tex-chtml.js\n")   # relative to _static

def write_sources(paths, execute):
    "The processed notebooks, the style sheet and the configuration in book/_src."
    index_extra = [chapter_list(paths)]
    for p in paths:
        check(p)
        dest = SRC / p.relative_to(NBS)
        dest.parent.mkdir(parents=True, exist_ok=True)
        process(p, dest, execute, index_extra if p == NBS / 'index.ipynb' else ())
    (SRC / '_static').mkdir()
    (SRC / '_static' / 'book.css').write_text(CSS)
    (SRC / '_static' / 'favicon.svg').write_text(FAVICON)
    config = CONFIG.format(execute='force' if execute else 'off', tools=ROOT / 'tools')
    config += mathjax_config(SRC)
    (SRC / '_config.yml').write_text(config)
    (SRC / '_toc.yml').write_text(table_of_contents(paths))

IMG = re.compile(r'<img alt="[^"]*" src="((?:\.\./)*_images/[^"]+)"[^>]*/>')

def _link_figure(text, m):
    "An <img> as a link to its file, unless Sphinx already made it one (an image-reference)."
    if re.search(r'<a [^>]*>\s*$', text[max(0, m.start() - 400):m.start()]): return m[0]
    return f'<a class="reference internal image-reference" href="{m[1]}">{m[0]}</a>'

def link_figures(html_dir: Path):
    "Every figure of the book is a link to its image file, so a reader can open it at full size."
    for page in html_dir.rglob('*.html'):
        text = page.read_text(encoding='utf-8')
        new = IMG.sub(partial(_link_figure, text), text)
        if new != text: page.write_text(new, encoding='utf-8')

# inline math as Sphinx writes it, with the punctuation glued to it (`$x$.`, `$x$),`)
MATH_PUNCT = re.compile(r'(<span class="math notranslate nohighlight">[^<]*</span>|\\\((?:[^<\\]|\\(?!\)))*\\\))'
                        r'([.,;:!?)\]]+)')   # or as the API entries write it, `\(x\)`

def keep_punctuation_with_math(html_dir: Path):
    """Punctuation right after inline math stays on the math's line: both go in a span that does
    not wrap (a line could otherwise break between `$x$` and its `.`, which then starts a line)."""
    for page in html_dir.rglob('*.html'):
        text = page.read_text(encoding='utf-8')
        new = MATH_PUNCT.sub(r'<span class="math-punct">\1\2</span>', text)
        if new != text: page.write_text(new, encoding='utf-8')

def build(execute=False, keep=False):
    for d in (SRC, BOOK / '_build'): shutil.rmtree(d, ignore_errors=True)   # no stale pages
    SRC.mkdir(parents=True)
    write_sources(notebooks(), execute)
    cmd = [str(Path(sys.executable).parent / 'jupyter-book'), 'build', str(SRC),
           '--path-output', str(BOOK), '-W', '-n', '--keep-going']
    r = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    sys.stdout.write(r.stdout[-4000:])
    sys.stderr.write(r.stderr[-4000:])
    if r.returncode != 0 or 'build succeeded' not in r.stdout:
        raise BookError(f'jupyter-book build failed (exit {r.returncode})')
    if not keep: shutil.rmtree(SRC)
    html_dir = BOOK / '_build' / 'html'
    link_figures(html_dir)
    keep_punctuation_with_math(html_dir)
    return html_dir

if __name__ == '__main__':
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--execute', action='store_true', help='re-execute notebooks while building')
    ap.add_argument('--keep', action='store_true', help='keep the processed notebooks in book/_src')
    a = ap.parse_args()
    try: out = build(a.execute, a.keep)
    except BookError as e: sys.exit(f'book build failed: {e}')
    print(f'book written to {out}')
