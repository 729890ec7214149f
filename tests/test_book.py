"""The book builds from the notebooks, every chapter page carries its title, broken notebooks fail
the build, stored outputs show no machine's paths, and a reader's browser meets no JavaScript
error, no raw LaTeX and no markdown escape."""
import json
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
import build_book as bb
import check_book as cb

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope='module')
def html_dir():
    r = subprocess.run([sys.executable, 'tools/build_book.py'], cwd=ROOT, capture_output=True,
                       text=True)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    return ROOT / 'book' / '_build' / 'html'


def _h1s(page: Path):
    "The text of a page's H1 headings."
    return [re.sub(r'<a class="headerlink".*?</a>|<[^>]+>', '', h).strip()
            for h in re.findall(r'<h1[^>]*>(.*?)</h1>', page.read_text(), re.S)]


@pytest.mark.heavy   # builds the whole book (tens of seconds)
def test_every_chapter_has_its_page_and_title(html_dir):
    for nb_path in bb.notebooks():
        title = bb.title_of(json.loads(nb_path.read_text()))
        page = html_dir / f'{bb.page_of(nb_path)}.html'
        assert page.exists(), f'no page for {nb_path.name}'
        assert title in _h1s(page), f'{page.name}: title {title!r} not rendered as H1'


@pytest.mark.heavy   # builds the whole book (tens of seconds)
def test_norms_chapter_renders_math_figure_and_api(html_dir):
    s = (html_dir / '01_model' / '01_norms.html').read_text()
    assert r'\|w\|_{M,q}' in s                        # math survives to MathJax
    assert re.search(r'<img[^>]+\.png', s)             # the unit-ball figure
    for name in ('mahalanobis_norm', 'dual_norm'):     # API docs from show_doc, with an anchor
        assert f'<h3 id="api-{name}">{name}<a class="headerlink" href="#api-{name}"' in s


@pytest.mark.heavy   # builds the whole book (tens of seconds)
def test_api_docs_are_typeset_and_indexed(html_dir):
    s = (html_dir / '01_model' / '02_losses.html').read_text()
    entries = re.findall(r'<div class="api-entry ([^"]*)">', s)
    assert entries and all('mathjax_process' in e for e in entries)
    assert '<pre class="api-signature">' in s
    assert 'loss_conj' in (html_dir / 'genindex.html').read_text()


def _documented(lo: int = -30,  # the grid starts at 2^lo
                bound: float | None = None,  # |x| <= bound, or None
                ) -> float:  # ‖w‖_{M^{-1},q}, or F* at the optimum
    "A function whose docments hold characters that markdown escapes."


@dataclass
class _Documented:
    "A dataclass whose field comment spans two lines."
    # one dict per phase (epoch, phase, chunk [start, stop), eta,
    # iterations, points)
    phases: list


def _cells(html_text):
    return re.findall(r'<t[dh]>(.*?)</t[dh]>', html_text)


def test_api_tables_show_the_docments_as_written():
    "No `\\^` or `\\|` (fastcore's markdown escapes), no `<br>` shown as text, no star lost."
    cells = _cells(bb.BookDocRenderer(_documented)._repr_html_())
    assert cells == ['', 'Type', 'Default', 'Details',
                     'lo', 'int', '-30', 'the grid starts at 2^lo',
                     'bound', 'float | None', 'None', '|x| &lt;= bound, or None',
                     'Returns', 'float', '', '‖w‖_{M^{-1},q}, or F* at the optimum'], cells
    cells = _cells(bb.BookDocRenderer(_Documented)._repr_html_())
    assert 'one dict per phase (epoch, phase, chunk [start, stop), eta, iterations, points)' \
        in cells, cells


@pytest.mark.heavy   # builds the whole book (tens of seconds)
def test_mathjax_is_loaded_once_per_page_from_outside_static(html_dir):
    if not (html_dir / 'mathjax' / 'tex-chtml.js').exists():
        pytest.skip('npm unavailable: MathJax comes from its CDN')
    assert not (html_dir / '_static' / 'mathjax').exists()
    loads = {}   # pages without math load no MathJax
    for page in [html_dir / 'index.html', *html_dir.glob('0*/*.html')]:
        scripts = re.findall(r'<script[^>]*src="([^"]*)"', page.read_text())
        loads[page.name] = len([s for s in scripts if 'mathjax' in s.lower()])
    assert max(loads.values()) == 1 and loads['index.html'] == 1, loads


@pytest.mark.heavy   # builds the whole book (tens of seconds)
def test_front_page_links_every_chapter(html_dir):
    s = (html_dir / 'index.html').read_text()
    for nb_path in bb.notebooks()[1:]:
        assert f'href="{bb.page_of(nb_path)}.html"' in s, f'index does not link {nb_path.name}'
    for part in bb.PARTS.values():
        assert f'<strong>{part}</strong>' in s


def _nb(cells):
    return {'cells': cells, 'metadata': {}, 'nbformat': 4, 'nbformat_minor': 5}


def _md(src): return {'cell_type': 'markdown', 'metadata': {}, 'source': src}


def _code(src, outputs=()):
    return {'cell_type': 'code', 'metadata': {}, 'source': src, 'execution_count': None,
            'outputs': list(outputs)}


def _write(path: Path, cells):
    path.write_text(json.dumps(_nb(cells)))
    return path


def test_broken_notebooks_are_refused(tmp_path):
    bad_json = tmp_path / 'a.ipynb'
    bad_json.write_text('{"cells": [')
    with pytest.raises(bb.BookError, match='not a valid notebook'): bb.check(bad_json)
    no_title = _write(tmp_path / 'b.ipynb', [_md('just text')])
    with pytest.raises(bb.BookError, match='no "# Title"'): bb.check(no_title)
    err = {'output_type': 'error', 'ename': 'ZeroDivisionError', 'evalue': '', 'traceback': []}
    with_err = _write(tmp_path / 'c.ipynb', [_md('# T'), _code('1/0', [err])])
    with pytest.raises(bb.BookError, match='stores an error output'): bb.check(with_err)


def test_control_characters_are_refused(tmp_path):
    "A `\\a` in a JSON string eats the backslash of `\\approx`: the build names the cell."
    lost = _write(tmp_path / 'e.ipynb', [_md('# T'), _md('error $\x07pprox 1$')])
    with pytest.raises(bb.BookError, match=r'cell 1 holds a control character.*x07pprox'):
        bb.check(lost)
    assert bb.control_characters(_nb([_md('tab\tand\nnewline are fine')])) == []


def test_the_notebooks_hold_no_control_characters():
    for path in bb.notebooks():
        assert bb.control_characters(json.loads(path.read_text())) == [], path.name


def test_code_above_the_title_is_refused(tmp_path):
    above = _write(tmp_path / 'f.ipynb', [_code('import math'), _md('# T')])
    with pytest.raises(bb.BookError, match='shown above the "# Title"'):
        bb.process(above, tmp_path / 'out.ipynb', execute=False)
    hidden = _write(tmp_path / 'g.ipynb', [_code('#| hide\nimport math'), _md('# T')])
    bb.process(hidden, tmp_path / 'out.ipynb', execute=False)


def test_failing_exported_code_fails_processing(tmp_path):
    bad = _write(tmp_path / 'd.ipynb', [_code('#| default_exp broken'), _md('# T'),
                                        _code('#| export\nraise RuntimeError("boom")')])
    with pytest.raises(bb.BookError, match='failed'):
        bb.process(bad, tmp_path / 'out.ipynb', execute=False)


def test_machine_paths_are_found():
    "Absolute paths of a machine in any kind of output are found; relative ones and URLs are not."
    bad = ['/work/main/dp_cd/accountants.py:238: IntegrationWarning',
           'model written to /tmp/x.json',
           '/home/me/.venv/lib/python3.11/site-packages/scipy/a.py:1: Warning', '/root/data',
           r'C:\Users\me\data', 'lib/python3/dist-packages/numba/core.py']
    good = ['<ipython-input-1-ab12>:5: PrivacyLeakWarning', 'dp_cd/solvers/dpgcd.py:311',
            'figure written to book/results/f.png', 'see https://example.org/home/a.html']
    outputs = [{'output_type': 'stream', 'name': 'stderr', 'text': bad[0] + '\n' + good[0]},
               {'output_type': 'display_data', 'data': {'text/plain': [bad[1], '\n', good[1]],
                                                        'image/png': '/tmp/not-text'}},
               {'output_type': 'execute_result', 'data': {'text/html': '\n'.join(bad[2:])}},
               {'output_type': 'stream', 'name': 'stdout', 'text': '\n'.join(good[2:])}]
    found = bb.machine_paths(_nb([_md('# T'), _code('x', outputs)]))
    assert [line for _, line in found] == bad and {i for i, _ in found} == {1}


@pytest.mark.parametrize('path', bb.notebooks(), ids=bb.page_of)
def test_stored_outputs_show_no_machine_paths(path):
    "Outputs show package-relative paths or none: no checkout, temporary or home directory."
    assert bb.machine_paths(json.loads(path.read_text())) == [], path.name


def test_wide_figures_get_the_full_width():
    wide = {'output_type': 'display_data', 'data': {'image/png': 'x'},
            'metadata': {'image/png': {'width': 1429, 'height': 568}}}
    narrow = {**wide, 'metadata': {'image/png': {'width': 508}}}
    cell = bb.nbformat.from_dict(_code('plot()', [wide]))
    assert 'full-width' in bb._tags(cell, execute=False)
    assert 'full-width' not in bb._tags(bb.nbformat.from_dict(_code('plot()', [narrow])), False)


@pytest.mark.heavy   # builds the whole book (tens of seconds)
def test_pages_in_a_browser(html_dir):
    """Every page in headless Chromium: no JavaScript error, no raw LaTeX, no markdown escape in an
    API table (`2\\^lo`), search finds a word; a figure in every core chapter, no `__main__.` name,
    no pseudo-TeX or subscript as plain text, no API table row without a description, no stored
    warning, no punctuation wrapped alone after math."""
    if cb.find_browser() is None:
        pytest.skip('no Chromium on this machine (apt-get install chromium, or set CHROMIUM)')
    if not (html_dir / 'mathjax' / 'tex-chtml.js').exists():
        pytest.skip('npm unavailable: MathJax would come from its CDN, which is not reachable here')
    r = subprocess.run([sys.executable, 'tools/check_book.py', '--html', str(html_dir)],
                       cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stdout[-6000:] + r.stderr[-3000:]
    pages = f'{len(cb.pages(html_dir))} pages: '
    summary = next(l for l in r.stdout.splitlines() if l.startswith(pages))
    assert '0 JavaScript errors, 0 raw LaTeX, 0 MathJax errors, 0 markdown escapes' in summary
    assert '0 elements scrolling' in summary
    reader = next(l for l in r.stdout.splitlines() if l.startswith('reader: '))
    for goal in ('0 core chapters without a figure', '0 __main__ names', '0 pseudo-TeX spans',
                 '0 plain-text subscripts', '0 API table rows without a description',
                 '0 formulas typeset token by token', '0 punctuation marks wrapped alone after math',
                 '0 stored warnings'):
        assert re.search(rf'(?<!\d){goal}', reader), reader


_PAGE = '''<html><body><main>
<p>The scaled norm ‖w‖_{M,q} as text, <b>e^ε</b> too; code is not counted: <code>2^lo</code>.</p>
<p>Constants M_j and the variable max_iter.</p>
<p>Bounds |<mjx-container>x</mjx-container>| ≤ <mjx-container>B</mjx-container>,
one formula in pieces; <mjx-container>n</mjx-container> alone and (<mjx-container>p</mjx-container>) are not.</p>
<p style="width: 200px"><span class="math"><mjx-container style="display: inline-block; width: 200px">w</mjx-container></span>, a comma wrapped alone;
<span class="math"><mjx-container style="display: inline-block">v</mjx-container></span>, one that is not.</p>
<div class="cell"><div class="cell_output"><div class="output stderr"><pre>UserWarning: delta</pre></div>
<div class="output text_html"><div class="api-entry api-internal"><h3>f</h3>
<pre class="api-signature"><code>f (pmf:__main__.PLDPmf)</code></pre><p>About PrivacyLeakWarning.</p>
</div></div></div></div>
<div class="cell"><div class="cell_output"><div class="output stream"><pre>''' + 'x' * 300 + '''</pre>
</div></div></div>
<div class="cell tag_warning-shown"><div class="cell_output"><div class="output stderr">
<pre>BoundsFallbackWarning: said in the text</pre></div></div></div>
<div class="api-entry api-internal"><h3>kernel</h3></div>
<div style="height: 5000px"></div><div class="api-entry"><h3>public</h3></div>
<h2>Implementation and checks</h2>
</main></body></html>'''


def test_the_reader_measures_count_what_they_say(tmp_path):
    """On a page made for it (without the book's style sheet): pseudo-TeX of two kinds, `__main__`,
    a warning, a late API entry, a printed output that scrolls, a comma wrapped alone after math,
    two internal API entries before "Implementation and checks"."""
    if cb.find_browser() is None:
        pytest.skip('no Chromium on this machine (apt-get install chromium, or set CHROMIUM)')
    (tmp_path / 'index.html').write_text('<html><body><main>front</main></body></html>')
    (tmp_path / '03_solvers').mkdir()
    (tmp_path / '03_solvers' / '01_dp_cd.html').write_text(_PAGE)
    r = subprocess.run([sys.executable, 'tools/check_book.py', '--html', str(tmp_path), '-v'],
                       cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert r.returncode == 1, r.stdout + r.stderr   # the page misses the goals
    assert '1 elements scrolling sideways' in r.stdout   # a printed output that does not wrap
    reader = next(l for l in r.stdout.splitlines() if l.startswith('reader: '))
    for count in ('1 core chapters without a figure', '1 __main__ names', '2 pseudo-TeX spans',
                  '1 plain-text subscripts', '1 stored warnings', '1 formulas typeset token by token',
                  '1 chapters with their first API entry after 5 screens',
                  '1 chapters in two parts', '1 punctuation marks wrapped alone after math',
                  '2 kernels and private helpers in reader parts'):
        assert re.search(rf'(?<!\d){count}', reader), reader
    row = [l for l in r.stdout.splitlines() if l.startswith('03_solvers/01_dp_cd.html')][-1]
    assert row.rstrip().endswith('public'), row   # the kernel is not the first public entry


def test_commands_of_the_text_are_found_and_checked():
    "Commands in spans and blocks are found; a missing file, option or reproduction is named."
    nb = _nb([_md('Run `python tools/execute_nbs.py --flags slow nbs/11a_old.ipynb`, or\n'
                  '```\nDP_CD_DATA=/path/to/data dp-cd reproduce table-d1 --quick\n```\n'
                  'with `--quick` (not a command) and `dp-cd fit --scheduler ADDRESS`.'),
              _code('python tools/nothing.py')])
    assert [c for _, c in bb.shell_commands(nb)] == [
        'DP_CD_DATA=/path/to/data dp-cd reproduce table-d1 --quick',
        'python tools/execute_nbs.py --flags slow nbs/11a_old.ipynb', 'dp-cd fit --scheduler ADDRESS']
    assert bb.command_problems('python tools/execute_nbs.py nbs/11a_old.ipynb') == \
        ['no file nbs/11a_old.ipynb']
    for ok in ['python tools/execute_nbs.py --flags slow nbs/CHAPTER.ipynb', 'dp-cd reproduce NAME',
               'dp-cd fit --scheduler ADDRESS', 'dp-cd fit data.csv --target price --out m.json | head -3',
               'python3 -m venv .venv && .venv/bin/dp-cd demo']:
        assert bb.command_problems(ok) == [], ok
    for bad, why in [('dp-cd reproduce table-d9', 'unknown reproduction'),
                     ('dp-cd fit data.csv --epsilonn 1', 'unrecognized arguments'),
                     ('dp-cd frobnicate', 'invalid choice'), ('.venv/bin/dp-cd demo --runz 2', 'unrec')]:
        assert why in ' '.join(bb.command_problems(bad)), bad


@pytest.mark.parametrize('path', bb.notebooks(), ids=bb.page_of)
def test_commands_of_the_book_run_as_written(path):
    "Every command the text shows names files that exist and arguments `dp-cd` accepts."
    nb = json.loads(path.read_text())
    assert [(i, c, bb.command_problems(c)) for i, c in bb.shell_commands(nb)
            if bb.command_problems(c)] == []


def test_cheap_forms_of_commands():
    "Each `python` or `dp-cd` command of a chain is run with `--help` (or compiled), with its options."
    py = sys.executable
    assert bb.cheap_forms('DP_CD_DATA=/path/to/data python benchmarks/run.py --only accounting | head') \
        == [([py, 'benchmarks/run.py', '--help'], ['--only'])]
    assert bb.cheap_forms('python benchmarks/bench_dpgcd.py') == \
        [([py, '-m', 'py_compile', 'benchmarks/bench_dpgcd.py'], [])]
    assert bb.cheap_forms('.venv/bin/pip install -e . && .venv/bin/dp-cd reproduce NAME --out d') == \
        [([py, '-c', *bb.CLI, 'reproduce', '--help'], ['--out'])]
    assert bb.cheap_forms('python -m dp_cd.warmup') == [([py, '-m', 'dp_cd.warmup', '--help'], [])]


@pytest.mark.heavy   # one process per program of the book (about a minute)
def test_commands_of_the_book_run():
    "Every command of the book's text runs in its cheap form: its help, naming the options used."
    found = [(bb.page_of(p), c) for p in bb.notebooks()
             for _, c in bb.shell_commands(json.loads(p.read_text()))]
    assert len(found) > 50
    assert bb.run_problems('python benchmarks/run.py --onlyy speed') == \
        ['benchmarks/run.py --help: does not name --onlyy']
    assert [(page, c, bb.run_problems(c)) for page, c in found if bb.run_problems(c)] == []


def test_api_entries_name_public_classes_and_mark_kernels():
    "A class of the notebook is named by its module, not `__main__`; kernels are `api-internal`."
    from dp_cd.privacy.pld import PLDPmf, pld_delta
    from dp_cd.model.losses import loss_value_mean
    Local = type('PLDPmf', (), {'__module__': '__main__'})
    def local_delta(pmf: Local, epsilon: float) -> float: "δ(ε) of a discrete PLD."
    old = bb.BookDocRenderer.module
    try:
        bb.BookDocRenderer.module = 'dp_cd.privacy.pld'
        out = bb.BookDocRenderer(local_delta)._repr_html_()
    finally:
        bb.BookDocRenderer.module = old
    assert '__main__' not in out and 'pmf:dp_cd.privacy.pld.PLDPmf' in out, out
    assert 'api-internal' not in bb.BookDocRenderer(pld_delta)._repr_html_()
    assert 'api-internal' in bb.BookDocRenderer(loss_value_mean)._repr_html_()
    assert bb.default_exp(bb.nbformat.from_dict(_nb([_code('#| default_exp privacy.pld')]))) \
        == 'dp_cd.privacy.pld'


def test_warnings_of_a_cell_lose_the_ipython_prefix():
    "A warning a cell raised shows without `<ipython-input-…>:N:` and the echoed source line."
    text = ('<ipython-input-1-2885505abd09>:4: UserWarning: delta=1e-05 >= 1/n\n'
            '  report = build_report(check_privacy(1.5, 1e-5, 10**6), plan)\nafter\n')
    cell = bb.nbformat.from_dict(_code('x', [{'output_type': 'stream', 'name': 'stderr',
                                              'text': text}]))
    assert bb._book_cell(cell, False).outputs[0]['text'] == 'UserWarning: delta=1e-05 >= 1/n\nafter\n'
    shown = bb.nbformat.from_dict(_code('#| warning: shown\nx'))
    assert 'warning-shown' in bb._tags(shown, False)


HISTORY = re.compile(r'(?i)\bissue \d+|\bformer path\b|\bold leaks\b|\*\*Decision\b')
HISTORY_LEFT = set()   # (page, phrase) pairs the text may keep: none


def test_the_text_holds_no_development_history():
    "No issue numbers, 'former path', 'old leaks' or dependency decisions in the book's text."
    found = [(bb.page_of(p), i, m.group()) for p in bb.notebooks()
             for i, c in enumerate(json.loads(p.read_text())['cells']) if c['cell_type'] == 'markdown'
             for m in HISTORY.finditer(''.join(c['source']))]
    assert [f for f in found if (f[0], f[2]) not in HISTORY_LEFT] == [], found


def _starred(a: int,  # the first
             **options,  # passed on
             ) -> int:  # the result
    "A function whose `**options` has a comment."


def test_api_tables_describe_star_parameters():
    "fastcore drops the comment of `**options` and gives it to the return: the book reads both right."
    cells = _cells(bb.BookDocRenderer(_starred)._repr_html_())
    width = cells.index('a')   # the header's cells: a row's last one is its description
    assert cells[cells.index('options') + width - 1] == 'passed on', cells
    assert cells[cells.index('Returns') + width - 1] == 'the result', cells


KERNELS_WITHOUT_DOCMENTS = 49   # numba kernels shown without a parameters table (goal: fewer)


def test_every_api_table_row_is_described():
    """Every row of every API parameters table has a description (a docment), and every public
    function or class with parameters shows a table. Deliberate exception: numba kernels
    (`api-internal` entries, not what a reader calls) may have no docments at all, so no table;
    their number may only fall. A table a kernel shows is complete too."""
    bare, untabled, kernels = [], [], []
    for path in bb.notebooks():
        for e in bb.api_entries(path):
            where = f"{bb.page_of(path)}: {e['name']}"
            bare += [f"{where}: {row}" for row in e['bare']]
            if e['params'] and not e['table']: (kernels if e['internal'] else untabled).append(where)
    assert bare == [], f'{len(bare)} rows without a description: {bare}'
    assert untabled == [], f'{len(untabled)} public entries without docments: {untabled}'
    assert len(kernels) <= KERNELS_WITHOUT_DOCMENTS, kernels
