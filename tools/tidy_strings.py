"""Split long string literals (inside brackets) and long docstrings with backslashes into pieces
on separate lines; semantics checked by ast equality (implicit concatenation parses identically)."""
import ast, re, textwrap
WIDTH = 100

def words_outside(inner, fstring):
    "split `inner` at spaces that are outside {} (f-strings) and outside $...$ math"
    out, cur, depth, math = [], '', 0, False
    i = 0
    while i < len(inner):
        ch = inner[i]
        if fstring and ch in '{}':
            if i + 1 < len(inner) and inner[i + 1] == ch and depth == 0: cur += ch * 2; i += 2; continue
            depth += 1 if ch == '{' else -1
        if ch == '$' and depth == 0: math = not math
        cur += ch
        if ch == ' ' and depth == 0 and not math:
            out.append(cur); cur = ''
        i += 1
    if cur: out.append(cur)
    return out

def pack(words, width):
    lines, cur = [], ''
    for w in words:
        if cur and len(cur) + len(w.rstrip()) > width: lines.append(cur); cur = ''
        cur += w
    if cur: lines.append(cur)
    return lines

def odd_backslashes(s):
    n = len(s) - len(s.rstrip('\\'))
    return n % 2 == 1

def split_literals(src):
    tree = ast.parse(src)
    lines = src.split('\n')
    parents = {}
    for n in ast.walk(tree):
        for ch in ast.iter_child_nodes(n): parents[ch] = n
    edits = []
    for n in ast.walk(tree):
        if not isinstance(n, (ast.Constant, ast.JoinedStr)) or n.lineno != n.end_lineno: continue
        if isinstance(n, ast.Constant) and not isinstance(n.value, str): continue
        if isinstance(parents.get(n), ast.JoinedStr): continue
        l = lines[n.lineno - 1]
        if len(l) <= WIDTH: continue
        seg = l[n.col_offset:n.end_col_offset]
        m = re.match(r'([rRfFbBuU]{0,2})(["\'])', seg)
        if not m or seg[len(m.group(0)) - 1:len(m.group(0)) + 2] in ('"""', "'''"): continue
        prefix, q = m.group(1), m.group(2)
        if not seg.endswith(q): continue   # implicit concatenation already on this line
        before, after = l[:n.col_offset], l[n.end_col_offset:]
        parent = parents.get(n)
        is_doc = (isinstance(parent, ast.Expr) and isinstance(parents.get(parent), (ast.FunctionDef, ast.ClassDef, ast.AsyncFunctionDef))
                  and parents[parent].body[0] is parent)
        inner = seg[len(prefix) + 1:-1]
        if is_doc:
            if before.strip() or after.strip() or 'f' in prefix.lower(): continue
            words = words_outside(inner, False)
            parts = pack(words, WIDTH - len(before) - 3)
            parts = [p.rstrip() for p in parts]
            if len(parts) < 2 or any(odd_backslashes(p) for p in parts) or inner.endswith(q): continue
            new = [before + q * 3 + parts[0]] + [before + p for p in parts[1:]]
            new[-1] += q * 3
            edits.append((n.lineno, new)); continue
        # an ordinary literal: must be inside brackets so adjacent literals may span lines
        if not isinstance(parent, (ast.Call, ast.keyword, ast.List, ast.Tuple, ast.Dict, ast.Set)) and not before.rstrip().endswith(('(', '[', '{', ',')):
            continue
        if before.strip() and not before.strip().endswith(('(', '=', ',', '[', '{', ':')): continue
        col = len(before)
        # continuation column: if `before` has code, keep first piece there and align the rest under it
        words = words_outside(inner, 'f' in prefix.lower())
        width = WIDTH - col - len(prefix) - 2
        parts = pack(words, max(width, 30))
        if len(parts) < 2: continue
        new = []
        for k, p in enumerate(parts):
            piece = prefix + q + p + q
            if k == 0: new.append(before + piece)
            else: new.append(' ' * col + piece)
        new[-1] += after
        edits.append((n.lineno, new))
    for ln, new in sorted(edits, key=lambda e: e[0], reverse=True):
        lines[ln - 1:ln] = new
    return '\n'.join(lines)
