"""Tidy notebook code cells to the project's style, without changing what they do.

Puts statements joined by ';' on their own lines, wraps code lines over 100 characters (ruff range-format of that statement only), moves long
trailing comments above their line, wraps long one-line docstrings, splits long string literals
by implicit concatenation, then splits exported cells over 15 lines at top-level definitions.
Every edit is checked by comparing the cell's AST before and after; an edit that changes it is
dropped. Run nbdev_export, nbdev_clean and the notebooks' tests afterwards."""
import ast, io, json, re, subprocess, sys, textwrap, tokenize
from tidy_strings import split_literals
RUFF = str(__import__('pathlib').Path(sys.executable).parent / 'ruff')   # the dev extra's ruff
WIDTH, MAX = 100, 15
DIRECTIVE = re.compile(r'\s*#\|')
EXPORT = re.compile(r'#\|\s*(export|exports|exporti)\b')

def ruff_range(src, line):
    r = subprocess.run([RUFF, 'format', '--isolated', '--line-length', str(WIDTH),
                        '--config', 'format.quote-style="preserve"',
                        f'--range={line}-{line + 1}', '--stdin-filename', 'cell.py', '-'],
                       input=src, capture_output=True, text=True)
    return r.stdout if r.returncode == 0 and r.stdout else src

def signature_lines(tree):
    out = set()
    for n in ast.walk(tree):
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and n.body:
            out.update(range(n.lineno, n.body[0].lineno))
    return out

def comments(src):
    "line -> (col, text) of comment tokens"
    out = {}
    try:
        for t in tokenize.generate_tokens(io.StringIO(src).readline):
            if t.type == tokenize.COMMENT: out[t.start[0]] = (t.start[1], t.string)
    except (tokenize.TokenError, IndentationError, SyntaxError): pass
    return out

def move_comments(src):
    tree = ast.parse(src)
    sig, com = signature_lines(tree), comments(src)
    lines = src.split('\n')
    for i in range(len(lines), 0, -1):
        l = lines[i - 1]
        if len(l) <= WIDTH or i not in com or i in sig: continue
        col, text = com[i]
        code = l[:col].rstrip()
        if not code.strip() or DIRECTIVE.match(l): continue
        indent = re.match(r'\s*', l).group(0)
        body = text.lstrip('#').strip()
        wrapped = textwrap.wrap(body, WIDTH - len(indent) - 2) or ['']
        lines[i - 1:i] = [indent + '# ' + w for w in wrapped] + [code]
    return '\n'.join(lines)

def wrap_docstrings(src):
    tree = ast.parse(src)
    lines = src.split('\n')
    edits = []
    for n in ast.walk(tree):
        if not isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) or not n.body: continue
        d = n.body[0]
        if not (isinstance(d, ast.Expr) and isinstance(d.value, ast.Constant) and isinstance(d.value.value, str)): continue
        if d.lineno != d.end_lineno or len(lines[d.lineno - 1]) <= WIDTH: continue
        l = lines[d.lineno - 1]
        seg = l[d.col_offset:d.end_col_offset]
        if seg[:1] not in '"\'' or seg[:3] in ('"""', "'''") or '\\' in seg or l[d.end_col_offset:].strip(): continue
        q, inner = seg[0], seg[1:-1]
        indent = l[:d.col_offset]
        parts = textwrap.wrap(inner, WIDTH - len(indent) - 3, break_long_words=False, break_on_hyphens=False)
        if inner.endswith(q) or not parts: continue
        new = [indent + q * 3 + parts[0]] + [indent + w for w in parts[1:]]
        new[-1] += q * 3
        edits.append((d.lineno, new))
    for ln, new in sorted(edits, reverse=True): lines[ln - 1:ln] = new
    return '\n'.join(lines)

def wrap_code(src):
    tried = set()
    while True:
        lines = src.split('\n')
        sig = signature_lines(ast.parse(src))
        todo = [i + 1 for i, l in enumerate(lines) if len(l) > WIDTH and l.strip() not in tried
                and not l.lstrip().startswith('#')]
        if not todo: return src
        i = todo[0]
        new = ruff_range(src + '\n', i).rstrip('\n')
        if new == src or len(new.split('\n')[i - 1]) > WIDTH:
            tried.add(lines[i - 1].strip())   # ruff cannot shorten it: leave it
        src = new

def semicolon_lines(src):
    "Line numbers holding a ';' that joins statements."
    return sorted({t.start[0] for t in tokenize.generate_tokens(io.StringIO(src).readline)
                   if t.type == tokenize.OP and t.string == ';'})

def split_semicolons(src):
    "One statement per line: ruff range-formats each statement joined by ';'."
    tried = set()
    while True:
        lines = src.split('\n')
        todo = [i for i in semicolon_lines(src) if lines[i - 1].strip() not in tried]
        if not todo: return src
        new = ruff_range(src + '\n', todo[0]).rstrip('\n')
        if new == src: tried.add(lines[todo[0] - 1].strip())   # ruff cannot split it: skip it
        src = new

def norm_dump(src):
    "ast dump with docstrings' whitespace normalised"
    tree = ast.parse(src)
    for m in ast.walk(tree):
        if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Module)) and m.body:
            d = m.body[0]
            if isinstance(d, ast.Expr) and isinstance(d.value, ast.Constant) and isinstance(d.value.value, str):
                d.value.value = ' '.join(d.value.value.split())
    return ast.dump(tree)

def tidy_source(src):
    if any(re.match(r'\s*[%!]', l) for l in src.split('\n')): return src
    try: before = norm_dump(src)
    except SyntaxError: return src
    out = src
    for step in (split_semicolons, move_comments, wrap_code, wrap_docstrings, split_literals):
        try:
            out2 = step(out)
            if norm_dump(out2) == before: out = out2
        except SyntaxError: pass
    return out

def nonblank(lines): return sum(1 for l in lines if l.strip())

def split_cell(cell):
    src = ''.join(cell['source'])
    lines = src.split('\n')
    if not any(EXPORT.match(l) for l in lines): return [cell]
    head = [l for l in lines if DIRECTIVE.match(l)]
    body = [l for l in lines if not DIRECTIVE.match(l)]
    if nonblank(body) <= MAX: return [cell]
    try: tree = ast.parse('\n'.join(body))
    except SyntaxError: return [cell]
    starts = []
    for n in tree.body:
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            s = n.decorator_list[0].lineno if n.decorator_list else n.lineno
            while s > 1 and body[s - 2].lstrip().startswith('#'): s -= 1   # leading comments
            starts.append(s)
    if len(starts) < 2: return [cell]
    cuts = [1] + starts[1:] + [len(body) + 1]
    units = [body[a - 1:b - 1] for a, b in zip(cuts, cuts[1:])]
    groups, cur = [], []
    for u in units:
        if cur and nonblank(cur) + nonblank(u) > MAX:
            groups.append(cur)
            cur = []
        cur = cur + u
    groups.append(cur)
    if len(groups) == 1: return [cell]
    out = []
    for g in groups:
        while g and not g[-1].strip(): g = g[:-1]
        while g and not g[0].strip(): g = g[1:]
        c = {k: v for k, v in cell.items() if k not in ('source', 'id')}
        text = '\n'.join(head + g)
        c['source'] = text.splitlines(keepends=True)
        c['outputs'] = []
        c['execution_count'] = None
        out.append(c)
    return out

def tidy_notebook(nb, split:bool=True) -> int:
    "Tidy the code cells of `nb` in place; the number of cells changed or added."
    cells, changed = [], 0
    for c in nb['cells']:
        if c['cell_type'] != 'code':
            cells.append(c)
            continue
        src = ''.join(c['source'])
        new = tidy_source(src)
        if new != src:
            c['source'] = new.splitlines(keepends=True)
            changed += 1
        parts = split_cell(c) if split else [c]
        changed += len(parts) - 1
        cells.extend(parts)
    nb['cells'] = cells
    return changed

def main(argv):
    import argparse
    ap = argparse.ArgumentParser(prog='python tools/tidy_notebooks.py', description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('notebooks', nargs='+', help='the .ipynb files to tidy (in place)')
    ap.add_argument('--check', action='store_true',
                    help='write nothing; list the notebooks that would change (exit 1 if any)')
    ap.add_argument('--no-split', action='store_true',
                    help='only wrap lines; never split exported cells')
    args = ap.parse_args(argv)
    would_change = []
    for p in args.notebooks:
        nb = json.load(open(p))
        n = tidy_notebook(nb, split=not args.no_split)
        if not n: continue
        would_change.append(p)
        if args.check:
            print(f'would tidy {p} ({n} cells)', flush=True)
            continue
        with open(p, 'w') as f:
            json.dump(nb, f, indent=1, ensure_ascii=False)
            f.write('\n')
        print(f'tidied {p} ({n} cells)', flush=True)
    return 1 if args.check and would_change else 0

if __name__ == '__main__': sys.exit(main(sys.argv[1:]))
