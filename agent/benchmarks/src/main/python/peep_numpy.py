"""NumPy reference for PeepBenchmark: the same arithmetic per face (centre, project onto 128
eigenfaces, clamp, scale to [0,1], add Laplace noise), timed in the same run as the JMH
benchmark so the ratio is taken on the same machine state. Prints microseconds per face."""
import sys
import time

import numpy as np

d, nc = 47 * 62, 128
rng = np.random.default_rng(1)
U = rng.standard_normal((nc, d))
mu = rng.random(d)
lo, hi = -np.ones(nc) * 3, np.ones(nc) * 3
x = rng.random(d)
eps = 8.0


def perturb(face):
    c = U @ (face - mu)
    s = (np.clip(c, lo, hi) - lo) / (hi - lo)
    return s + rng.laplace(0.0, nc / eps, nc)


n = int(sys.argv[1]) if len(sys.argv) > 1 else 20000
for _ in range(2000):
    perturb(x)
best = float("inf")
for _ in range(5):
    t = time.perf_counter()
    for _ in range(n):
        perturb(x)
    best = min(best, (time.perf_counter() - t) / n)
print(f"{best * 1e6:.2f}")
