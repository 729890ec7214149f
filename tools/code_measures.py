#!/usr/bin/env python
"""Code-style measures of the notebooks: cell sizes, long lines, `;`-joined statements and
functions with many positional parameters, for the exported code cells and for all code cells.

    python tools/code_measures.py              # a plain-text table (what CI prints)
    python tools/code_measures.py --json       # a machine-readable summary
    python tools/code_measures.py --check      # exit 1 when a target below is missed
    python tools/code_measures.py some/dir     # the notebooks under another folder

A cell's lines are its non-blank lines without its leading `#|` directives; a cell is exported
when a directive is `export`, `exports` or `exporti`. A `;` counts when it joins two statements
on a line (found with `tokenize`, so not in strings or comments; a trailing `;` that only hides
a notebook output joins nothing). Lines of IPython magics (`%`, `!`) are not tokenized, and the
functions are read with `ast` from the exported cells that have no magic and parse.

A function's *positional* parameters are its positional-only and positional-or-keyword ones
(those a caller can pass by position), without a method's `self` or `cls`; `*args`, `**kwargs`
and the keyword-only options after `*` are not counted. The target is that no exported function
has TOO_MANY_PARAMS (12) positional parameters or more: kernels pack theirs into a few small
tuples, public functions take their options by keyword. Functions with TOO_MANY_PARAMS
keyword-only options or more are listed apart, not counted as a miss: scikit-learn-style public
APIs (`f(X, y, loss, penalty, *, epsilon, delta, n_passes=..., ...)`), whose options are named at
every call. The targets of `--check` apply to the exported code (the package); the numbers for
all code cells, and per notebook, are printed to show where the debt is. Standard library only.
"""
import argparse
import ast
import io
import json
import re
import statistics
import sys
import tokenize
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MAX_MEDIAN_EXPORTED_LINES = 15    # median lines of an exported cell
MAX_SHARE_LONG = 0.01             # share of exported code lines longer than LONG characters
MAX_SHARE_SEMICOLON = 0.005       # share of exported code lines joining statements with `;`
TOO_MANY_PARAMS = 12              # no function should have this many positional parameters
LONG, VERY_LONG = 100, 120        # line lengths (characters) measured
TOP = 5                           # largest cells and widest functions listed
EXPORT_DIRECTIVES = {'export', 'exports', 'exporti'}
MAGIC = re.compile(r'\s*[%!]')
DIRECTIVE = re.compile(r'\s*#\|')


def notebooks(folder):
    "The notebooks under `folder`, sorted, without Jupyter's checkpoints."
    return sorted(p for p in Path(folder).rglob('*.ipynb') if '.ipynb_checkpoints' not in p.parts)


def directives(source):
    "The names of a cell's leading `#|` directives (`#| export foo` gives 'export')."
    names = []
    for line in source.splitlines():
        if DIRECTIVE.match(line):
            names += line.strip()[2:].replace(':', ' ').split()[:1]
        elif line.strip():
            break
    return names


def code_lines(source):
    "The (index, line) of a cell's non-blank lines that are not `#|` directives."
    return [(i, line) for i, line in enumerate(source.splitlines())
            if line.strip() and not DIRECTIVE.match(line)]


def has_magic(source):
    "Whether a cell holds IPython magics or shell escapes (a line starting with `%` or `!`)."
    return any(MAGIC.match(line) for line in source.splitlines())


def semicolon_lines(source):
    "Indices (0-based) of the lines where a `;` token joins two statements."
    text = '\n'.join('' if MAGIC.match(l) else l for l in source.splitlines()) + '\n'
    tokens, found = [], set()
    try:
        tokens.extend(tokenize.generate_tokens(io.StringIO(text).readline))
    except (tokenize.TokenError, SyntaxError):
        pass    # keep the tokens read before the error
    ends = {tokenize.NEWLINE, tokenize.NL, tokenize.COMMENT, tokenize.ENDMARKER}
    for tok, nxt in zip(tokens, tokens[1:]):
        if tok.type == tokenize.OP and tok.string == ';' and nxt.type not in ends:
            found.add(tok.start[0] - 1)
    return found


def param_count(node, in_class):
    """(positional, keyword-only) parameter counts of a function definition: positional-only and
    positional-or-keyword ones without a method's `self` or `cls`, then those after `*`."""
    a = node.args
    positional = a.posonlyargs + a.args
    skip = in_class and positional and positional[0].arg in ('self', 'cls')
    return len(positional) - bool(skip), len(a.kwonlyargs)


def functions(tree):
    "(qualified name, (positional, keyword-only) counts) of every function in a module's tree."
    found = []

    def visit(node, prefix, in_class):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                found.append((prefix + child.name, param_count(child, in_class)))
                visit(child, f'{prefix}{child.name}.', False)
            elif isinstance(child, ast.ClassDef):
                visit(child, f'{prefix}{child.name}.', True)
            else:
                visit(child, prefix, in_class)

    visit(tree, '', False)
    return found


def measure_cell(source):
    "The measures of one code cell's source."
    lines = code_lines(source)
    joined = semicolon_lines(source)
    return {'exported': bool(EXPORT_DIRECTIVES & set(directives(source))), 'lines': len(lines),
            'long': sum(len(l) > LONG for _, l in lines),
            'very_long': sum(len(l) > VERY_LONG for _, l in lines),
            'semicolon': sum(i in joined for i, _ in lines)}


def cell_functions(source):
    "The functions of a cell, or why they are not read: 'magic' or 'syntax'."
    if has_magic(source):
        return 'magic'
    try:
        return functions(ast.parse(source))
    except (SyntaxError, ValueError):
        return 'syntax'


def read_cells(folder):
    "Every code cell under `folder`: its notebook (relative), index among all cells and source."
    folder = Path(folder)
    for path in notebooks(folder):
        nb = json.loads(path.read_text(encoding='utf-8'))
        for index, cell in enumerate(nb.get('cells', [])):
            if cell.get('cell_type') == 'code':
                source = cell.get('source', '')
                source = ''.join(source) if isinstance(source, list) else source
                yield path.relative_to(folder).as_posix(), index, source


def group_summary(cells):
    "Counts and shares over a group of measured cells."
    sizes = [c['lines'] for c in cells]
    lines = sum(sizes)
    summary = {'cells': len(cells), 'lines': lines,
               'median_lines': statistics.median(sizes) if sizes else 0,
               'max_lines': max(sizes, default=0)}
    for key in ('long', 'very_long', 'semicolon'):
        summary[key] = sum(c[key] for c in cells)
        summary[f'share_{key}'] = summary[key] / lines if lines else 0.0
    return summary


def function_summary(cells):
    """The functions of the exported cells with TOO_MANY_PARAMS positional parameters or more
    (a miss), and those with TOO_MANY_PARAMS keyword-only options or more (listed), worst first."""
    wide, options, skipped = [], [], {'magic': 0, 'syntax': 0}
    for c in cells:
        found = cell_functions(c['source'])
        if isinstance(found, str):
            skipped[found] += 1
            continue
        for name, (n_pos, n_kw) in found:
            where = {'notebook': c['notebook'], 'cell': c['cell'], 'name': name}
            if n_pos >= TOO_MANY_PARAMS: wide.append({**where, 'params': n_pos})
            if n_kw >= TOO_MANY_PARAMS: options.append({**where, 'params': n_kw})
    for found in (wide, options):
        found.sort(key=lambda f: (-f['params'], f['notebook'], f['cell']))
    return {'too_many_params': TOO_MANY_PARAMS, 'count': len(wide), 'worst': wide[:TOP],
            'keyword_only_count': len(options), 'keyword_only': options,
            'cells_with_magics': skipped['magic'], 'cells_not_parsing': skipped['syntax']}


def per_notebook(cells):
    "Per notebook: the shares over all its code cells and the size of its exported cells."
    rows = []
    for name in dict.fromkeys(c['notebook'] for c in cells):
        mine = [c for c in cells if c['notebook'] == name]
        exported = [c['lines'] for c in mine if c['exported']]
        row = {'notebook': name, 'exported_cells': len(exported),
               'median_exported_lines': statistics.median(exported) if exported else 0}
        rows.append({**row, **group_summary(mine)})
    return rows


def violations(summary):
    "The targets that the exported code misses, as sentences."
    e, found = summary['exported'], []
    if e['median_lines'] > MAX_MEDIAN_EXPORTED_LINES:
        found.append(f"median exported cell {e['median_lines']:g} lines > "
                     f"{MAX_MEDIAN_EXPORTED_LINES}")
    if e['share_long'] > MAX_SHARE_LONG:
        found.append(f"lines > {LONG} chars {e['share_long']:.2%} > {MAX_SHARE_LONG:.1%}")
    if e['share_semicolon'] > MAX_SHARE_SEMICOLON:
        found.append(f"';'-joined lines {e['share_semicolon']:.2%} > {MAX_SHARE_SEMICOLON:.1%}")
    if summary['functions']['count']:
        found.append(f"{summary['functions']['count']} function(s) with >= {TOO_MANY_PARAMS} "
                     "positional parameters")
    return found


def measure(folder):
    "The summary of the measures of every notebook under `folder`."
    cells = [{'notebook': nb, 'cell': i, 'source': src, **measure_cell(src)}
             for nb, i, src in read_cells(folder)]
    exported = [c for c in cells if c['exported']]
    largest = sorted(exported, key=lambda c: (-c['lines'], c['notebook'], c['cell']))[:TOP]
    summary = {
        'folder': str(folder), 'notebooks': len(notebooks(folder)),
        'thresholds': {'max_median_exported_lines': MAX_MEDIAN_EXPORTED_LINES,
                       'max_share_long': MAX_SHARE_LONG, 'long': LONG,
                       'max_share_semicolon': MAX_SHARE_SEMICOLON,
                       'too_many_params': TOO_MANY_PARAMS},
        'exported': group_summary(exported), 'all': group_summary(cells),
        'largest_exported': [{k: c[k] for k in ('notebook', 'cell', 'lines')} for c in largest],
        'functions': function_summary(exported), 'per_notebook': per_notebook(cells)}
    summary['violations'] = violations(summary)
    return summary


def pct(x):
    "A share as a short percentage."
    return f'{100 * x:.1f}'


def shorten(name, width):
    "`name` cut from the left to at most `width` characters."
    return name if len(name) <= width else '...' + name[-(width - 3):]


def group_rows(summary):
    "The lines of the table of the two groups of cells."
    head = (f"{'':24}{'cells':>6}{'median':>8}{'max':>6}{'lines':>8}"
            f"{'>' + str(LONG) + ' %':>9}{'>' + str(VERY_LONG) + ' %':>9}{'; %':>7}")
    rows = [head]
    for label, key in (('exported code cells', 'exported'), ('all code cells', 'all')):
        g = summary[key]
        rows.append(f"{label:24}{g['cells']:>6}{g['median_lines']:>8g}{g['max_lines']:>6}"
                    f"{g['lines']:>8}{pct(g['share_long']):>9}{pct(g['share_very_long']):>9}"
                    f"{pct(g['share_semicolon']):>7}")
    return rows


def detail_rows(summary):
    "The lines listing the largest exported cells and the functions with many parameters."
    rows = ['largest exported cells (lines: non-blank, directives excluded):']
    rows += [f"  {c['lines']:>5}  {shorten(c['notebook'], 80)} cell {c['cell']}"
             for c in summary['largest_exported']]
    f = summary['functions']
    rows.append(f"functions with >= {TOO_MANY_PARAMS} positional parameters in exported cells: "
                f"{f['count']}")
    rows.append(f"  (cells not read: {f['cells_with_magics']} with magics, "
                f"{f['cells_not_parsing']} not parsing)")
    rows += function_rows(f['worst'])
    rows.append(f"functions with >= {TOO_MANY_PARAMS} keyword-only options: "
                f"{f['keyword_only_count']} — scikit-learn-style public APIs (not a miss)")
    return rows + function_rows(f['keyword_only'])


def function_rows(found):
    "One line per listed function: its count, name, notebook and cell."
    return [f"  {w['params']:>5}  {shorten(w['name'], 40)}  "
            f"{shorten(w['notebook'], 38)} cell {w['cell']}" for w in found]


def notebook_rows(summary):
    "The lines of the per-notebook table."
    rows = ["per notebook (shares over all code lines; exp: exported cells)",
            f"{'notebook':40}{'cells':>6}{'exp':>5}{'exp med':>8}{'lines':>7}"
            f"{'>' + str(LONG) + ' %':>8}{'>' + str(VERY_LONG) + ' %':>8}{'; %':>7}"]
    for r in summary['per_notebook']:
        rows.append(f"{shorten(r['notebook'], 39):40}{r['cells']:>6}{r['exported_cells']:>5}"
                    f"{r['median_exported_lines']:>8g}{r['lines']:>7}{pct(r['share_long']):>8}"
                    f"{pct(r['share_very_long']):>8}{pct(r['share_semicolon']):>7}")
    return rows


def table(summary):
    "The plain-text report (at most 100 columns)."
    t = summary['thresholds']
    rows = [f"code measures of {summary['notebooks']} notebooks under {summary['folder']}", '']
    rows += group_rows(summary) + [''] + detail_rows(summary) + [''] + notebook_rows(summary)
    rows += ['', f"targets for the exported code (--check): median cell <= "
                 f"{t['max_median_exported_lines']} lines, lines > {LONG} chars <= "
                 f"{t['max_share_long']:.1%},",
             f"  ';'-joined lines <= {t['max_share_semicolon']:.1%}, "
             f"no function with >= {TOO_MANY_PARAMS} positional parameters"]
    missed = summary['violations']
    if missed:
        rows += [f'targets missed: {len(missed)}'] + [f'  - {m}' for m in missed]
    else:
        rows.append('all targets met')
    return '\n'.join(rows)


def main(argv=None):
    lines = __doc__.splitlines()
    parser = argparse.ArgumentParser(description=lines[0], epilog='\n'.join(lines[1:]),
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('folder', nargs='?', default=ROOT / 'nbs',
                        help='the folder of the notebooks (default: nbs/ of the checkout)')
    parser.add_argument('--json', action='store_true', help='print a JSON summary')
    parser.add_argument('--check', action='store_true', help='exit 1 when a target is missed')
    args = parser.parse_args(argv)
    summary = measure(args.folder)
    print(json.dumps(summary, indent=1) if args.json else table(summary))
    return 1 if args.check and summary['violations'] else 0


if __name__ == '__main__':
    sys.exit(main())
