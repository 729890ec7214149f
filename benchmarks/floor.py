"""The memory-bound floor `X.T @ r` of the speed benchmarks, timed between the kernels' own timings.

One product reads X once at memory speed; its time moves with the machine (other processes, the state of the
caches) about as much as a kernel's. So it is not timed once, before the kernels, but *ticked*: while a
`Floor` is active, every repetition of a benchmark's `best_of` first times a few products (`tick`), so the floor
and the kernels are sampled alternately, under the same load, in the same process. The floor is the best of all
ticks (like every kernel time: the best of k), and its stability is the ratio of the median tick to the best one
(`spread`, 1 = perfectly stable), stored with every ratio next to both absolute times.

    with Floor(X, r) as floor:
        t = best_of(kernel, k)        # ticks the floor before each call
    ratio = t / floor.best
"""
import time
import numpy as np

ACTIVE = None   # the Floor ticked between timings, or None


def between():
    "Tick the active floor, if any (called by the benchmarks' `best_of` before each timed call)."
    if ACTIVE is not None: ACTIVE.tick()


class Floor:
    "Best-of-many `X.T @ r`, sampled between other timings (see the module's docstring)."
    def __init__(self, X, r=None, clock=time.perf_counter, reps=3, warm=20):
        self.X, self.clock, self.reps = X, clock, reps
        self.r = np.random.default_rng(0).normal(size=X.shape[0]) if r is None else r
        self.ticks = []
        for _ in range(warm): self.tick()   # at least `warm` samples before any kernel runs

    def tick(self):
        "Time `reps` products back to back; keep the best."
        best = np.inf
        for _ in range(self.reps):
            t = self.clock(); self.X.T @ self.r; best = min(best, self.clock() - t)
        self.ticks.append(best)

    @property
    def best(self): return float(np.min(self.ticks))
    @property
    def median(self): return float(np.median(self.ticks))
    @property
    def spread(self): return self.median / self.best

    def fields(self):
        "The columns stored with every ratio: the floor's best and median seconds and its number of ticks."
        return dict(floor_s=self.best, floor_median_s=self.median, floor_ticks=len(self.ticks))

    def __str__(self):
        return (f"floor X.T @ r: best {self.best * 1e3:.4f} ms, median {self.median * 1e3:.4f} ms "
                f"(spread x{self.spread:.2f}) over {len(self.ticks)} ticks")

    def __enter__(self):
        global ACTIVE
        self._outer, ACTIVE = ACTIVE, self
        return self

    def __exit__(self, *exc):
        global ACTIVE
        ACTIVE = self._outer
