#!/usr/bin/env python
"""Open every page of the built book in headless Chromium and count what a reader would meet.

    python tools/check_book.py                    # check book/_build/html
    python tools/check_book.py --shots /tmp/shots # also save a full-page screenshot of each page

The pages are served over HTTP from a local server (as a reader gets them) and driven through
Chromium's DevTools protocol. Per page it counts: JavaScript errors (uncaught exceptions,
`console.error`, failed loads), raw LaTeX left after MathJax ran (text outside MathJax's output,
code and preformatted blocks that still holds `\\(`, `$$`, `\\frac`, ... ) and MathJax's own
error boxes, markdown escapes shown as text in the tables of API entries (a backslash before
punctuation, as in `2\\^lo`, or a literal `<br>`), the MathJax scripts loaded, and elements
that scroll sideways or cut off their content (scrollWidth > clientWidth), leaving out outputs
that are HTML tables, which may keep scrolling (printed outputs wrap). The search page is also asked
for a word of the book.

What a reader meets, per chapter: its figures (each of the core chapters `CORE` must show one),
class names printed as `__main__.X`, pseudo-TeX left as plain text in the text and the API docs
(`‖w‖_{M,q}`, `e^ε`, `2^lo`; single-letter subscripts such as `M_j` are counted apart), formulas
typeset token by token (inline math glued to a formula character left as text, `‖$x_i$‖₂`, or two
math spans joined by an operator as text, `$B_j$ ≥ |$x_{ij}$|`: one formula, one `$...$`), rows of
API parameter tables without a description, warnings stored in outputs (unless the cell is tagged
`warning-shown`: `#| warning: shown`), the page's length and the screens before its first API entry that is not a kernel or
private (goal: at most `API_SCREENS`; reported), the length of its reader part: the screens
before its "Implementation and checks" section, when it has one (reported), the kernels and private
helpers documented in that reader part (the whole page when it has no such section; reported per
chapter), and punctuation that wraps onto a line of its own after inline math (`$x$` ending a line,
its `.` starting the next).

Exits 1 on any JavaScript error, raw LaTeX, MathJax error, markdown escape, `__main__.` name,
pseudo-TeX span, plain-text subscript, formula typeset token by token, punctuation wrapped alone
after math, API table row without a description, stored warning or core
chapter without a figure, or a search without results;
2 when no Chromium is found (set CHROMIUM to its path) or the book is not built.
"""
import argparse
import base64
import functools
import http.server
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import websocket

ROOT = Path(__file__).resolve().parents[1]
HTML = ROOT / 'book' / '_build' / 'html'
BROWSERS = ('chromium', 'chromium-browser', 'google-chrome', 'google-chrome-stable', 'chrome')
SEARCH_WORD = 'mahalanobis'
WIDTH, HEIGHT = 1280, 900

# What the page reports once MathJax is done: run inside the page, returns a JSON-able object.
MEASURE_JS = r"""(() => {
  // search excerpts are the pages' text as typed (Sphinx cuts them from the page source, where
  // MathJax has not run): neither raw LaTeX nor pseudo-TeX there is what a reader of a page meets
  const SKIP = 'mjx-container, script, style, pre, code, textarea, mjx-assistive-mml, #search-results';
  const RAW = new RegExp([String.raw`\\[()\[\]]`, String.raw`\$\$`,
    String.raw`\\(frac|sum|sup|inf|sqrt|mathbb|mathcal|mathrm|operatorname|approx|leq?|geq?)\b`,
    String.raw`\\(varepsilon|epsilon|alpha|beta|lambda|phi|infty|cdot|left|right|begin|top)\b`,
    String.raw`\$[^$\n]*(\\[A-Za-z]+|[_^]\{)[^$\n]*\$`].join('|'));
  const raw = [];
  const walk = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  while (walk.nextNode()) {
    const node = walk.currentNode, parent = node.parentElement;
    if (!parent || parent.closest(SKIP) || !RAW.test(node.nodeValue)) continue;
    raw.push(node.nodeValue.trim().slice(0, 100));
  }
  // markdown escapes in the text of API tables: a backslash before ASCII punctuation, a <br>
  const ESCAPE = /\\[!-\/:-@\[-`{-~]|<br\s*\/?>/, escaped = [];
  for (const cell of document.querySelectorAll('.api-entry table td, .api-entry table th')) {
    const cells = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
    while (cells.nextNode()) {
      const node = cells.currentNode;
      if (node.parentElement.closest('mjx-container, mjx-assistive-mml')) continue;
      if (ESCAPE.test(node.nodeValue)) escaped.push(node.nodeValue.trim().slice(0, 100));
    }
  }
  const mathErrors = [...document.querySelectorAll('mjx-merror')]
    .map(e => (e.getAttribute('data-mjx-error') || e.textContent).slice(0, 100));
  const mjx = performance.getEntriesByType('resource')
    .filter(e => /mathjax/i.test(e.name) && /\.js(\?|$)/.test(e.name));
  // MathJax's hidden MathML copy (for screen readers) is clipped: not an overflow a reader sees
  const hide = document.head.appendChild(document.createElement('style'));
  hide.textContent = 'mjx-assistive-mml {display: none !important}';
  const over = [], allowed = [], math = [];
  for (const el of document.querySelectorAll('main *, article *')) {
    if (el.clientWidth === 0 || el.scrollWidth <= el.clientWidth + 1) continue;
    if (getComputedStyle(el).overflowX === 'visible') continue;
    if (el.parentElement.closest('mjx-container')) continue;   // MathJax's own clipped parts
    const what = `${el.tagName.toLowerCase()}.${[...el.classList].join('.')}`.slice(0, 60);
    const table = el.matches('table') || el.closest('table') || el.querySelector('table');
    // HTML tables may scroll; printed outputs wrap (the book's style sheet), so a wide one counts
    const kind = table ? allowed : el.matches('div.math, mjx-container') ? math : over;
    kind.push(`${what} (${el.scrollWidth}>${el.clientWidth})`);
  }
  hide.remove();
  const page = document.scrollingElement.scrollWidth > window.innerWidth + 1;
  if (page) over.push(`page (${document.scrollingElement.scrollWidth}>${window.innerWidth})`);
  const imgs = [...document.querySelectorAll('main img')].filter(i => i.naturalWidth > 0)
    .map(i => [i.naturalWidth, i.clientWidth]);
  // a class named by the module it was defined in while the notebook ran (`__main__.PLDPmf`)
  const article = document.querySelector('main') || document.body;
  const mainNames = article.textContent.match(/__main__\.\w+/g) || [];
  // pseudo-TeX shown as plain text outside MathJax, code and data outputs (API docs included):
  // braces or a caret (`‖w‖_{M,q}`, `e^{ε−L}`, `2^lo`); single-letter subscripts (`M_j`) apart
  const PSEUDO = new RegExp([String.raw`[_^]\{`, String.raw`[\p{L}\p{N}_)\]‖|]\^[-−+(\p{L}\p{N}]`,
                             String.raw`‖[^‖\s][^‖]*‖_`].join('|'), 'u');
  const SUBSCRIPT = /(?<![\w.])[A-Za-z]_[A-Za-z0-9]{1,2}(?![\w(])/;
  const pseudo = [], subscripts = [];
  const texts = document.createTreeWalker(article, NodeFilter.SHOW_TEXT);
  const context = (text, m) => text.slice(Math.max(0, m.index - 30), m.index + 40).trim();
  while (texts.nextNode()) {
    const node = texts.currentNode, parent = node.parentElement;
    if (!parent || parent.closest(SKIP)) continue;
    if (parent.closest('.cell_output') && !parent.closest('.api-entry')) continue;   // data
    if (parent.closest('.api-entry td:first-child')) continue;   // a parameter's name: code
    const m = node.nodeValue.match(PSEUDO), sub = node.nodeValue.match(SUBSCRIPT);
    if (m) pseudo.push(context(node.nodeValue, m));
    else if (sub) subscripts.push(context(node.nodeValue, sub));
  }
  // formulas typeset token by token: inline math glued to a formula character left as text
  // (`‖$x_i$‖₂`, `√$M_j$`, `|$g_j$|`), or two math spans joined by an operator as text
  // (`$B_j$ ≥ |$x_{ij}$|`, `$σ_j$/$Δ_j$`); one count per formula
  const units = [...new Set([...article.querySelectorAll('mjx-container:not([display="true"])')]
    .map(m => m.closest('span.math') || m))].filter(u => !u.closest('div.math, pre, code'));
  const isUnit = new Set(units), textOf = n => n && n.nodeType === 3 ? n.nodeValue : '';
  const GLUED_BEFORE = /[‖|√·\/^_=<>≤≥+−×*]$/, GLUED_AFTER = /^[‖|√·\/^_=<>≤≥+−×*₀-₉²³¹⁰⁻]/;
  const JOIN = /^\s*[=<>≤≥+−×·*\/|‖√]+\s*$/;
  const tokens = [];
  let joinedToPrevious = false;
  for (const u of units) {
    const before = textOf(u.previousSibling), after = textOf(u.nextSibling);
    const joined = JOIN.test(after) && isUnit.has(u.nextSibling.nextSibling);
    if (!joinedToPrevious && (GLUED_BEFORE.test(before) || GLUED_AFTER.test(after) || joined)) {
      const tex = u.querySelector('mjx-assistive-mml');
      tokens.push(`${before.slice(-20)}⟨${tex ? tex.textContent : u.textContent}⟩${after.slice(0, 20)}`
                  .replace(/\s+/g, ' ').trim());
    }
    joinedToPrevious = joined;
  }
  // warnings stored in outputs (not in a cell tagged `warning-shown`, whose text is about it)
  const WARN = /\w*Warning\b|<ipython-input-|warnings\.warn\(/;
  const warnings = [...document.querySelectorAll('.cell_output > .output')]
    .filter(o => !o.closest('.tag_warning-shown') && !o.querySelector('.api-entry')
                 && WARN.test(o.textContent))
    .map(o => o.textContent.match(WARN)[0] + ': ' +
         o.textContent.trim().split('\n').find(l => WARN.test(l)).trim().slice(0, 90));
  // rows of API parameter tables without a description (their last cell empty)
  const bare = [...document.querySelectorAll('.api-entry table tbody tr')]
    .filter(tr => tr.lastElementChild && !tr.lastElementChild.textContent.trim())
    .map(tr => tr.closest('.api-entry').querySelector('h2, h3, h4, h5').textContent.replace('#', '')
         + ': ' + tr.firstElementChild.textContent.trim());
  const rows = document.querySelectorAll('.api-entry table tbody tr').length;
  // how far down a reader scrolls (in screens) before the first API entry that is not internal
  const api = document.querySelector('.api-entry:not(.api-internal)');
  const apiScreens = api ? (api.getBoundingClientRect().top + window.scrollY) / window.innerHeight
                         : null;
  const apiName = api ? (api.querySelector('h2, h3, h4, h5') || api).textContent.replace('#', '')
                         .trim() : null;
  // the chapter's two parts: where its "Implementation and checks" section starts (in screens)
  const impl = [...article.querySelectorAll('h2')].find(h => /Implementation and checks/.test(h.textContent));
  const implScreens = impl ? (impl.getBoundingClientRect().top + window.scrollY) / window.innerHeight
                           : null;
  // kernels and private helpers documented in the reader part (above "Implementation and
  // checks", or anywhere on a page without one): a reader of the method should not meet them
  const implTop = impl ? impl.getBoundingClientRect().top : Infinity;
  const readerKernels = [...article.querySelectorAll('.api-entry.api-internal')]
    .filter(e => e.getBoundingClientRect().top < implTop)
    .map(e => (e.querySelector('h2, h3, h4, h5') || e).textContent.replace('#', '').trim());
  // punctuation after inline math that wraps onto the next line alone (`$x$` at a line's end,
  // its `.` or `,` starting the next one)
  const orphans = [];
  for (const u of units) {
    const next = u.nextSibling;
    if (!next || next.nodeType !== 3 || !/^[.,;:!?)\]]/.test(next.nodeValue)) continue;
    const range = document.createRange();
    range.setStart(next, 0); range.setEnd(next, 1);
    const c = range.getBoundingClientRect(), m = u.getBoundingClientRect();
    if (c.height && c.left < m.right - 1 && c.top > m.top + m.height / 2) {
      const tex = u.querySelector('mjx-assistive-mml');
      orphans.push(`⟨${(tex ? tex.textContent : u.textContent).slice(0, 40)}⟩${next.nodeValue.slice(0, 20)}`
                   .replace(/\s+/g, ' ').trim());
    }
  }
  return {readerKernels, orphans, implScreens, raw, mathErrors, escaped, mathjax: mjx.length, overflow: over, allowedOverflow: allowed,
          wideMath: math, mainNames, pseudo, subscripts, tokens, warnings, bare, rows, apiScreens, apiName,
          screens: document.scrollingElement.scrollHeight / window.innerHeight,
          mathjaxBytes: mjx.reduce((s, e) => s + (e.encodedBodySize || 0), 0), imgs,
          searchHits: document.querySelectorAll('#search-results li').length};
})()"""

WAIT_MATHJAX_JS = """(async () => {
  if (window.MathJax && MathJax.startup && MathJax.startup.promise) await MathJax.startup.promise;
  return true;
})()"""


def find_browser():
    "The Chromium to drive: $CHROMIUM, else the first of the usual names on PATH; None if none."
    if os.environ.get('CHROMIUM'):
        return os.environ['CHROMIUM']
    return next((shutil.which(b) for b in BROWSERS if shutil.which(b)), None)


class Quiet(http.server.SimpleHTTPRequestHandler):
    "Static files without a log line per request."
    def log_message(self, *args):
        pass


def serve(folder: Path):
    "Serve `folder` over HTTP on a free local port in a background thread; returns the server."
    handler = functools.partial(Quiet, directory=str(folder))
    server = http.server.ThreadingHTTPServer(('127.0.0.1', 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


class Browser:
    "Headless Chromium with one page, driven over the DevTools protocol (one websocket)."

    def __init__(self, exe: str, width: int = WIDTH):
        self.profile = tempfile.mkdtemp(prefix='check-book-')
        flags = ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run',
                 '--disable-extensions', '--remote-debugging-port=0', '--remote-allow-origins=*',
                 f'--user-data-dir={self.profile}', 'about:blank']
        self.proc = subprocess.Popen([exe, *flags], stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL)
        self.ws = websocket.create_connection(self._ws_url(), timeout=60, suppress_origin=True)
        self.next_id, self.events = 0, []
        target = self.call('Target.createTarget', url='about:blank')['targetId']
        attached = self.call('Target.attachToTarget', targetId=target, flatten=True)
        self.session = attached['sessionId']
        for domain in ('Page', 'Runtime', 'Log'):
            self.call(f'{domain}.enable', session=True)
        self.width = width
        self.call('Emulation.setDeviceMetricsOverride', session=True, width=width, height=HEIGHT,
                  deviceScaleFactor=1, mobile=False)

    def _ws_url(self, timeout=30):
        "The browser's DevTools websocket, from the port file Chromium writes into its profile."
        port_file = Path(self.profile) / 'DevToolsActivePort'
        end = time.time() + timeout
        while time.time() < end:
            lines = port_file.read_text().split() if port_file.exists() else []
            if len(lines) == 2:
                return f'ws://127.0.0.1:{lines[0]}{lines[1]}'
            if self.proc.poll() is not None:
                break
            time.sleep(0.1)
        self.close()
        raise RuntimeError('Chromium did not open its DevTools port')

    def call(self, method, session=False, **params):
        "Send one command and return its result, keeping the events that arrive meanwhile."
        self.next_id += 1
        msg = {'id': self.next_id, 'method': method, 'params': params}
        if session:
            msg['sessionId'] = self.session
        self.ws.send(json.dumps(msg))
        while True:
            reply = json.loads(self.ws.recv())
            if reply.get('id') != self.next_id:
                self.events.append(reply)
            elif 'error' in reply:
                raise RuntimeError(f'{method}: {reply["error"]}')
            else:
                return reply.get('result', {})

    def wait_for(self, method, timeout=60):
        "Wait until the event `method` has arrived (it may have already)."
        end = time.time() + timeout
        while not any(e.get('method') == method for e in self.events):
            if time.time() > end:
                raise TimeoutError(method)
            self.events.append(json.loads(self.ws.recv()))

    def evaluate(self, expression):
        "The value of a JavaScript expression in the page (promises awaited)."
        r = self.call('Runtime.evaluate', session=True, expression=expression,
                      awaitPromise=True, returnByValue=True, timeout=60000)
        if 'exceptionDetails' in r:
            raise RuntimeError(r['exceptionDetails'].get('text', 'evaluation failed'))
        return r['result'].get('value')

    def open(self, url, settle=0.3):
        "Load `url`, wait for its load event and MathJax, return the errors it raised."
        self.events = []
        self.call('Page.navigate', session=True, url=url)
        self.wait_for('Page.loadEventFired')
        self.evaluate(WAIT_MATHJAX_JS)
        time.sleep(settle)
        self.evaluate('0')   # collects the events that arrived while settling
        return [e for e in map(js_error, self.events) if e]

    def screenshot(self, dest: Path):
        "A full-page PNG of the current page."
        h = self.evaluate('document.scrollingElement.scrollHeight')
        clip = {'x': 0, 'y': 0, 'width': self.width, 'height': min(h, 16000), 'scale': 1}
        shot = self.call('Page.captureScreenshot', session=True, format='png',
                         captureBeyondViewport=True, clip=clip)
        dest.write_bytes(base64.b64decode(shot['data']))

    def close(self):
        if getattr(self, 'ws', None):
            self.ws.close()
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        shutil.rmtree(self.profile, ignore_errors=True)


def js_error(event):
    "A one-line description of an error event from the page, or None for any other event."
    p, method = event.get('params', {}), event.get('method')
    if method == 'Runtime.exceptionThrown':
        d = p['exceptionDetails']
        return (d.get('exception', {}).get('description') or d.get('text', '')).splitlines()[0]
    if method == 'Runtime.consoleAPICalled' and p.get('type') in ('error', 'assert'):
        return 'console: ' + ' '.join(str(a.get('value', a.get('description', '')))
                                      for a in p.get('args', []))
    if method == 'Log.entryAdded' and p['entry']['level'] == 'error':
        e = p['entry']
        if e.get('source') != 'console-api':
            return f'{e.get("source")}: {e.get("text")} {e.get("url", "")}'.strip()
    return None


def pages(html: Path):
    "Every HTML page of the book (not the theme's templates under _static)."
    return sorted(p.relative_to(html).as_posix() for p in html.rglob('*.html')
                  if not p.relative_to(html).parts[0].startswith('_'))


def check_page(browser, base, page, shots=None):
    "The measurements of one page (a dict), with the JavaScript errors it raised."
    query = f'?q={SEARCH_WORD}' if page == 'search.html' else ''
    errors = browser.open(f'{base}/{page}{query}')
    if query:   # the search runs after the load event: give it a moment to list its results
        end = time.time() + 20
        while not browser.evaluate("document.querySelectorAll('#search-results li').length") \
                and time.time() < end:
            time.sleep(0.2)
    m = browser.evaluate(MEASURE_JS)
    m.update(page=page, errors=errors)
    if shots:
        browser.screenshot(Path(shots) / (page.replace('/', '__')[:-5] + '.png'))
    return m


COLUMNS = (('errors', 'js err'), ('raw', 'raw TeX'), ('mathErrors', 'mj err'),
           ('escaped', 'escaped'), ('overflow', 'overflow'), ('wideMath', 'wide eq'),
           ('allowedOverflow', 'tables'))


def print_table(results):
    "One row per page: the counts of each kind of problem and the MathJax scripts loaded."
    head = f'{"page":40} {"MathJax":>7} ' + ' '.join(f'{title:>8}' for _, title in COLUMNS)
    print(head + '\n' + '-' * len(head))
    for r in results:
        counts = ' '.join(f'{len(r[key]):8}' for key, _ in COLUMNS)
        print(f'{r["page"][:40]:40} {r["mathjax"]:7} {counts}')
    print('-' * len(head))


# the chapters where a reader would rather look at a figure (issue 31): each must show one
CORE = ('03_solvers/01_dp_cd.html', '02_privacy/03_accountants.html', '02_privacy/10_pld.html',
        '03_solvers/03_dp_gcd.html', '04_theory/02_fairness.html', '03_solvers/04_growth.html',
        '06_api/01_estimators.html')
API_SCREENS = 5   # goal: a chapter's first public function within this many screens
READER = (('mainNames', '__main__'), ('pseudo', 'pseudoTeX'), ('subscripts', 'x_j text'),
          ('tokens', 'tokenTeX'), ('orphans', 'lone punct'),
          ('warnings', 'warnings'), ('readerKernels', 'kernels'))


def is_chapter(page):
    "A chapter of the book (not the front page, the index or the search page)."
    return '/' in page


def print_reader_table(results):
    """One row per chapter: its figures, what a reader should not meet (`__main__.` names,
    pseudo-TeX as plain text, stored warnings), its length and the screens before its first public
    API entry."""
    head = (f'{"page":40} {"figures":>7} ' + ' '.join(f'{t:>9}' for _, t in READER)
            + f' {"screens":>7} {"to API":>6} {"reader":>6}  first API entry')
    print(head + '\n' + '-' * len(head))
    for r in filter(lambda r: is_chapter(r['page']), results):
        counts = ' '.join(f'{len(r[key]):9}' for key, _ in READER)
        to_api = '' if r['apiScreens'] is None else f'{r["apiScreens"]:6.1f}'
        reader = '' if r.get('implScreens') is None else f'{r["implScreens"]:6.1f}'
        mark = '*' if r['page'] in CORE and not r['imgs'] else ' '
        print(f'{r["page"][:40]:40} {len(r["imgs"]):6}{mark} {counts} {r["screens"]:7.1f} '
              f'{to_api:>6} {reader:>6}  {r["apiName"] or ""}'[:len(head) + 30])
    print('-' * len(head))


def reader_summary(results):
    "The counts of the reader's measures (a dict), printed as one line by `report`."
    chapters = [r for r in results if is_chapter(r['page'])]
    late = [r for r in chapters if r['apiScreens'] is not None and r['apiScreens'] > API_SCREENS]
    return {'chapters without a figure': sum(not r['imgs'] for r in chapters),
            'core chapters without a figure': sum(not r['imgs'] for r in chapters
                                                  if r['page'] in CORE),
            '__main__ names': sum(len(r['mainNames']) for r in results),
            'pseudo-TeX spans': sum(len(r['pseudo']) for r in results),
            'plain-text subscripts': sum(len(r['subscripts']) for r in results),
            'formulas typeset token by token': sum(len(r['tokens']) for r in results),
            'stored warnings': sum(len(r['warnings']) for r in results),
            'punctuation marks wrapped alone after math': sum(len(r['orphans']) for r in results),
            'kernels and private helpers in reader parts':
                sum(len(r['readerKernels']) for r in chapters),
            'API table rows without a description': sum(len(r['bare']) for r in results),
            'API table rows': sum(r['rows'] for r in results),
            f'chapters with their first API entry after {API_SCREENS} screens': len(late),
            'chapters in two parts (reader, then "Implementation and checks")':
                sum(r.get('implScreens') is not None for r in chapters)}


def print_details(results, verbose):
    "What each problem is (at most 5 per kind and page unless verbose; overflows when verbose)."
    kinds = [('errors', 'JS error'), ('raw', 'raw LaTeX'), ('mathErrors', 'MathJax error'),
             ('escaped', 'markdown escape in an API table'), ('mainNames', '__main__ name'),
             ('pseudo', 'pseudo-TeX'), ('tokens', 'formula typeset token by token'),
             ('warnings', 'stored warning'), ('orphans', 'punctuation wrapped alone after math')]
    if verbose:
        kinds += [('overflow', 'overflow'), ('wideMath', 'wide equation'),
                  ('subscripts', 'subscript as text'), ('bare', 'undescribed parameter'),
                  ('readerKernels', 'kernel or private helper in the reader part')]
    for r in results:
        for key, kind in kinds:
            for item in r[key][:None if verbose else 5]:
                print(f'  {r["page"]}: {kind}: {item}')


def report(results, verbose):
    "Print the table (and the details of problems); return True when the book passes."
    print_table(results)
    total = {key: sum(len(r[key]) for r in results) for key, _ in COLUMNS}
    print(f'{len(results)} pages: {total["errors"]} JavaScript errors, {total["raw"]} raw LaTeX, '
          f'{total["mathErrors"]} MathJax errors, '
          f'{total["escaped"]} markdown escapes in API tables, '
          f'{total["overflow"]} elements scrolling sideways or cut off '
          f'(+{total["wideMath"]} wide display equations, '
          f'+{total["allowedOverflow"]} wide tables, which may scroll); '
          f'MathJax scripts per page: at most {max(r["mathjax"] for r in results)} '
          f'({max(r["mathjaxBytes"] for r in results) / 1e6:.1f} MB)')
    print_reader_table(results)
    counts = reader_summary(results)
    print('reader: ' + ', '.join(f'{v} {k}' for k, v in counts.items())
          + '; core chapters without a figure: '
          + (', '.join(r['page'] for r in results if r['page'] in CORE and not r['imgs']) or 'none'))
    print_details(results, verbose)
    search = next((r for r in results if r['page'] == 'search.html'), None)
    if search is not None:
        print(f'search.html?q={SEARCH_WORD}: {search["searchHits"]} results')
    searching = search is None or search['searchHits'] > 0
    failures = total['errors'] or total['raw'] or total['mathErrors'] or total['escaped']
    reader_failures = counts['__main__ names'] or counts['pseudo-TeX spans'] \
        or counts['stored warnings'] or counts['core chapters without a figure'] \
        or counts['API table rows without a description'] or counts['plain-text subscripts'] \
        or counts['formulas typeset token by token'] \
        or counts['punctuation marks wrapped alone after math']
    return searching and not failures and not reader_failures


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--html', type=Path, default=HTML, help='the built book (default: %(default)s)')
    ap.add_argument('--shots', type=Path, help='save a full-page screenshot of each page here')
    ap.add_argument('--page', action='append', help='check only this page (repeatable)')
    ap.add_argument('--width', type=int, default=WIDTH, help='window width (default: %(default)s)')
    ap.add_argument('-v', '--verbose', action='store_true', help='list every overflow too')
    a = ap.parse_args(argv)
    exe = find_browser()
    if exe is None or not (a.html / 'index.html').exists():
        print('no Chromium found (set CHROMIUM)' if exe is None else f'no book in {a.html}')
        return 2
    if a.shots:
        a.shots.mkdir(parents=True, exist_ok=True)
    server, browser = serve(a.html), Browser(exe, a.width)
    base = f'http://127.0.0.1:{server.server_address[1]}'
    try:
        results = [check_page(browser, base, p, a.shots) for p in a.page or pages(a.html)]
    finally:
        browser.close()
        server.shutdown()
    return 0 if report(results, a.verbose) else 1


if __name__ == '__main__':
    sys.exit(main())
