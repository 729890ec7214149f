"""Loss dispatch designs and numba's on-disk cache (benchmarks/README.md, section `loss_dispatch`).

Today every loss kernel switches on an integer `code` at run time (`if code == SQUARED: ...`). Issue
32 asks for losses as classes that carry their own numba functions, with no code outside a loss
branching on its identity, while keeping numba's ON-DISK cache (`cache=True`) and today's speed.
This script measures these designs on the same small kernel, u_i = phi'(z_i, y_i) over n records,
for two losses (squared, Huber), each in a fresh module directory and numba cache:

* `switch`: today's pattern, a runtime `if code == ...` chain in the cached kernel;
* `funcarg`: skglm's pattern, the loss's jitted function passed as an ARGUMENT to the cached kernel;
* `literal`: each loss registers its scalar njit function in a registry keyed by its code, and one
  generic `@overload` resolves `code` at typing time (the kernel calls `numba.literally(code)`),
  so the kernel is written once and contains no branch on any loss;
* `typed`: each loss is an object of a numba type keyed by (code, hash of its scalar function's
  source) that carries `param`; one `@overload` resolves the type to that function at typing time
  (no `literally`, no branch on any loss; an edited loss is a new type, hence a new specialisation);
* `record`: as `typed`, but the loss's token is an EMPTY ARRAY OF A STRUCTURED DTYPE whose one field
  names the loss and a hash of its function's bytecode: numba's C dispatcher fingerprints such an
  array (the dtype is interned) without calling back into Python, so dispatch costs what an int
  argument costs, while `typed`'s custom type goes through `typeof` in Python.

Each design runs in process 1 (cold cache: compiles and writes) and process 2 (warm: should load).
Columns: `cold_s` / `warm_s`, the wall time of the first calls of the kernel for both losses in that
process (compile or load); `warm_hits` / `warm_misses`, numba's counts of loaded / compiled
signatures in process 2 (`kernel.stats`); `run_ms`, the best of 20 runs of the kernel for both losses
on n = 10^6 records (process 2); `call_us`, the best time of one call on 11 records (the cost of
dispatch: typing the arguments and finding the compiled entry); `new_loss_hit`, whether a loss defined in ANOTHER module (as a user
or a test would) is computed by the unchanged kernel and loaded from the cache in a third process;
`stale_after_edit`, whether, after that loss's body is edited (same code), the kernel still returns
the OLD result (numba's cache does not watch other files). Run:
`python benchmarks/bench_loss_dispatch.py` -> `benchmarks/results/loss_dispatch.csv`."""
import csv, json, zlib, os, subprocess, sys, tempfile, textwrap
from pathlib import Path

REG = '''
import numba
from numba import types
from numba.extending import overload
_DERIV = {}
def register(code, deriv):
    "The loss of `code` computes phi' by the njit function `deriv(param, z, y)`."
    _DERIV[code] = deriv
def deriv(code, param, z, y): raise NotImplementedError("numba only")
@overload(deriv, inline='always')
def _ov_deriv(code, param, z, y):
    if not isinstance(code, types.IntegerLiteral): return None
    f = _DERIV.get(code.literal_value)
    if f is None: raise numba.errors.TypingError(f"no loss has code {code.literal_value}")
    return lambda code, param, z, y: f(param, z, y)
'''
SCALARS = '''
from numba import njit
@njit(cache=True, inline='always')
def sq(param, z, y): return 2.0 * (z - y)
@njit(cache=True, inline='always')
def hub(param, z, y):
    r = z - y
    return -param if r < -param else (param if r > param else r)
'''
KERNELS = {
    "switch": SCALARS + '''
@njit(cache=True)
def kern(code, param, z, y, u):
    for i in range(z.shape[0]):
        if code == 0: u[i] = sq(param, z[i], y[i])
        elif code == 2: u[i] = hub(param, z[i], y[i])
        else: raise ValueError("unknown loss code")
def call(code, param, z, y, u): kern(code, param, z, y, u)
FUNCS = {0: 0, 2: 2}
''',
    "funcarg": SCALARS + '''
@njit(cache=True)
def kern(f, param, z, y, u):
    for i in range(z.shape[0]): u[i] = f(param, z[i], y[i])
FUNCS = {0: sq, 2: hub}
def call(code, param, z, y, u): kern(FUNCS[code], param, z, y, u)
''',
    "literal": SCALARS + '''
from numba import literally
from reg import register, deriv
register(0, sq); register(2, hub)
@njit(cache=True)
def kern(code, param, z, y, u):
    literally(code)
    for i in range(z.shape[0]): u[i] = deriv(code, param, z[i], y[i])
_ENTRY = {}
def call(code, param, z, y, u):
    f = _ENTRY.get(code)
    if f is None:   # first call: type with Literal[int](code), then keep its entry point
        kern(code, param, z, y, u)
        f = _ENTRY[code] = next(c.entry_point for sig, c in kern.overloads.items()
                                if getattr(sig[0], "literal_value", None) == code)
        return
    f(code, param, z, y, u)
''',
    "typed": SCALARS + '''
import hashlib, inspect
from numba import types
from numba.core import cgutils
from numba.extending import (typeof_impl, models, register_model, unbox, NativeValue,
                             make_attribute_wrapper, overload)
class KernelLossType(types.Type):
    "A loss as numba types it: (code, hash of its scalar function's source); carries param."
    def __init__(self, code, digest):
        self.code, self.digest = code, digest
        super().__init__(name=f"KernelLoss({code}, {digest})")
@register_model(KernelLossType)
class _Model(models.StructModel):
    def __init__(self, dmm, fe_type): super().__init__(dmm, fe_type, [("param", types.float64)])
make_attribute_wrapper(KernelLossType, "param", "param")
class KernelLoss:
    __slots__ = ("param", "ty")
    def __init__(self, ty, param): self.param, self.ty = float(param), ty
@typeof_impl.register(KernelLoss)
def _typeof(val, c): return val.ty
@unbox(KernelLossType)
def _unbox(typ, obj, c):
    s = cgutils.create_struct_proxy(typ)(c.context, c.builder)
    p = c.pyapi.object_getattr_string(obj, "param")
    s.param = c.pyapi.float_as_double(p)
    c.pyapi.decref(p)
    return NativeValue(s._getvalue(), is_error=c.pyapi.c_api_error())
_DERIV, _TYPES, _OBJ = {}, {}, {}
def register(code, f):
    "The loss of `code` computes phi' by the njit function `f(param, z, y)`; its type hashes f's source."
    ty = KernelLossType(code, hashlib.sha1(inspect.getsource(f.py_func).encode()).hexdigest()[:12])
    _DERIV[(ty.code, ty.digest)], _TYPES[code] = f, ty
def deriv(kl, z, y): raise NotImplementedError("numba only")
@overload(deriv, inline='always')
def _ov_deriv(kl, z, y):
    if not isinstance(kl, KernelLossType): return None
    f = _DERIV[(kl.code, kl.digest)]
    return lambda kl, z, y: f(kl.param, z, y)
@njit(cache=True)
def kern(kl, z, y, u):
    for i in range(z.shape[0]): u[i] = deriv(kl, z[i], y[i])
register(0, sq); register(2, hub)
FUNCS = {0: 0, 2: 2}
def call(code, param, z, y, u):
    kl = _OBJ.get((code, param))
    if kl is None: kl = _OBJ[(code, param)] = KernelLoss(_TYPES[code], param)
    kern(kl, z, y, u)
''',
    "record": SCALARS + '''
import hashlib
import numpy as np
from numba import types
from numba.extending import overload
_DERIV, _TOKENS = {}, {}
def register(code, f):
    # the loss of `code` computes phi' by the njit `f(param, z, y)`; its token: an empty array of a
    # structured dtype whose one field names the loss and hashes f's bytecode
    co = f.py_func.__code__
    key = f"loss{code}_" + hashlib.sha1(co.co_code + repr((co.co_consts, co.co_names)).encode()).hexdigest()[:12]
    _DERIV[key], _TOKENS[code] = f, np.zeros(0, np.dtype([(key, np.uint8)]))
def deriv(tok, param, z, y): raise NotImplementedError("numba only")
@overload(deriv, inline='always')
def _ov_deriv(tok, param, z, y):
    if not isinstance(tok, types.Array) or not isinstance(tok.dtype, types.Record): return None
    f = _DERIV[next(iter(tok.dtype.fields))]
    return lambda tok, param, z, y: f(param, z, y)
@njit(cache=True)
def kern(tok, param, z, y, u):
    for i in range(z.shape[0]): u[i] = deriv(tok, param, z[i], y[i])
register(0, sq); register(2, hub)
FUNCS = {0: 0, 2: 2}
def call(code, param, z, y, u): kern(_TOKENS[code], param, z, y, u)
''',
}
NEWLOSS = '''
from numba import njit
import kernels
@njit(cache=True, inline='always')
def smooth_hinge(param, z, y):
    m = y * z
    return {body}
CODE = {code}
if hasattr(kernels, "register"): kernels.register(CODE, smooth_hinge)
kernels.FUNCS[CODE] = smooth_hinge if kernels.FUNCS[0] is not 0 else CODE
'''
RUN = '''
import json, sys, time
import numpy as np
t0 = time.perf_counter()
import kernels
new = sys.argv[1] == "new"
if new:
    try: import newloss
    except Exception as e: print(json.dumps({"error": repr(e)})); sys.exit()
z = np.linspace(-3, 3, 11); y = np.where(np.arange(11) % 2, 1.0, -1.0); u = np.empty(11)
t = time.perf_counter()
codes = (newloss.CODE,) if new else (0, 2)
try:
    for c in codes: kernels.call(c, 1.0, z, y, u)
except Exception as e: print(json.dumps({"error": type(e).__name__})); sys.exit()
first = time.perf_counter() - t
st = kernels.kern.stats
out = {"first_s": first, "hits": sum(st.cache_hits.values()), "misses": sum(st.cache_misses.values()),
       "u": u.tolist()}
if sys.argv[1] == "speed":
    n = 10 ** 6; g = np.random.default_rng(0)
    Z, Y, U = g.normal(size=n), g.normal(size=n), np.empty(n)
    best = []
    for _ in range(20):
        t = time.perf_counter()
        for c in codes: kernels.call(c, 1.0, Z, Y, U)
        best.append(time.perf_counter() - t)
    out["run_ms"] = 1e3 * min(best)
    small = []   # one call on 11 records: the cost of dispatch (typing the arguments, finding the entry)
    for _ in range(5):
        t = time.perf_counter()
        for _ in range(2000): kernels.call(codes[0], 1.0, z, y, u)
        small.append((time.perf_counter() - t) / 2000)
    out["call_us"] = 1e6 * min(small)
print(json.dumps(out))
'''


def _proc(d, arg):
    env = dict(os.environ, NUMBA_CACHE_DIR=str(d / "cache"), PYTHONPATH=str(d))
    r = subprocess.run([sys.executable, str(d / "run.py"), arg], capture_output=True, text=True,
                       env=env, cwd=d, check=True)
    return json.loads(r.stdout.strip().splitlines()[-1])


def measure(design):
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        (d / "reg.py").write_text(REG)
        src = KERNELS[design.replace("_hash", "")]
        if design.startswith("literal"): src += "\nregister = register\nFUNCS = {0: 0, 2: 2}\n"
        (d / "kernels.py").write_text(src)
        (d / "run.py").write_text(RUN)
        cold = _proc(d, "cold")
        warm = _proc(d, "speed")
        b1 = "-y if m < 0 else (-y * (1 - m) if m < 1 else 0.0)"
        b2 = "-2.0 * y if m < 0 else 0.0"
        key = (lambda b: 1000 + zlib.crc32(b.encode()) % 10**6) if design.endswith("hash") else (lambda b: 7)
        (d / "newloss.py").write_text(NEWLOSS.format(body=b1, code=key(b1)))
        _proc(d, "new")   # compiles (and caches) the new loss
        new = _proc(d, "new")
        (d / "newloss.py").write_text(NEWLOSS.format(body=b2, code=key(b2)))
        edited = _proc(d, "new")
        return {"design": design, "cold_s": round(cold["first_s"], 3), "warm_s": round(warm["first_s"], 3),
                "warm_hits": warm["hits"], "warm_misses": warm["misses"],
                "run_ms": round(warm["run_ms"], 3), "call_us": round(warm["call_us"], 2),
                "new_loss_hit": "error" not in new and new["hits"] > 0,
                "stale_after_edit": ("error" not in edited and "error" not in new
                                     and edited["u"] == new["u"])}


if __name__ == "__main__":
    rows = [measure(d) for d in ("switch", "funcarg", "literal", "literal_hash", "typed", "record")]
    load = os.getloadavg()[0]
    for r in rows:
        r["load"] = round(load, 2)
        print(r)
    out = Path(__file__).parent / "results" / "loss_dispatch.csv"
    with open(out, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader(); w.writerows(rows)
    print("wrote", out)
