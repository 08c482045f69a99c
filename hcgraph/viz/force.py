"""A force-directed layout of the reuse map: ForceAtlas2, repulsion on a grid (numpy/scipy).

ForceAtlas2 (Jacomy et al. 2014, PLoS ONE 9(6): e98679), linear mode (docs/maps.md); the
repulsion ``k · m_i · m_j / d`` (mass: degree + 1) goes particle-mesh (masses on a grid,
convolved with ``r / |r|²`` by FFT): O(n + G² log G) a step, not n x n. Deterministic.
"""

from __future__ import annotations

import math

import networkx as nx
import numpy as np
from scipy import fft

from .layout import Positions
from .quality import pair_weights

__all__ = ["GRID", "ITERATIONS", "WEIGHT_POWER", "force_layout"]

#: Steps of the simulation.
ITERATIONS = 150
#: Grid cells a side for the repulsion, at most (about two a node along a side, at least 32).
GRID = 256
#: Edge weights enter the attraction as ``weight ** WEIGHT_POWER`` (0: unweighted).
WEIGHT_POWER = 0.5
_REPULSION = 2.0  # ForceAtlas2's scaling ratio
_GRAVITY = 1.0
_JITTER = 1.0  # ForceAtlas2's jitter tolerance


def force_layout(graph: nx.Graph, start: Positions, iterations: int = ITERATIONS) -> Positions:
    """ForceAtlas2 positions for ``graph`` from ``start`` (a position for every node),
    scaled back to the spread (root-mean-square radius) of ``start``."""
    nodes = sorted(graph)
    n = len(nodes)
    if n < 3 or graph.number_of_edges() == 0:
        return {v: start[v] for v in nodes}
    # Each undirected node pair once (weights of both directions summed), in a fixed order.
    weight = pair_weights(graph, {v: k for k, v in enumerate(nodes)})
    keys = sorted(weight)
    src, dst = np.array(keys, dtype=np.int64).reshape(-1, 2).T
    w = np.array([weight[k] for k in keys], dtype=np.float64) ** WEIGHT_POWER
    mass = np.bincount(np.concatenate([src, dst]), minlength=n).astype(np.float64) + 1.0
    xy = np.array([start[v] for v in nodes], dtype=np.float64)
    spread = _rms(xy)
    xy = _scaled(xy, math.sqrt(n) * 4.0)  # ForceAtlas2's own scale
    grid = _Grid(_grid_size(n))
    prev = np.zeros_like(xy)
    speed, efficiency = 1.0, 1.0
    for _ in range(iterations):
        force = _attraction(xy, src, dst, w) + grid.repulsion(xy, mass) * _REPULSION
        force += _gravity(xy, mass)
        speed, efficiency, step = _speed(force, prev, mass, speed, efficiency)
        xy += force * step[:, None]
        prev = force
    xy = _scaled(xy, spread)
    return {v: (float(x), float(y)) for v, (x, y) in zip(nodes, xy, strict=True)}


def _scaled(xy: np.ndarray, spread: float) -> np.ndarray:
    """``xy`` centred on the origin, at root-mean-square radius ``spread`` (if it has one)."""
    centred = xy - xy.mean(axis=0)
    rms = _rms(centred)
    return np.asarray(centred * (spread / rms)) if rms and spread else centred


def _rms(xy: np.ndarray) -> float:
    centred = xy - xy.mean(axis=0)
    return float(np.sqrt((centred**2).sum(axis=1).mean()))


def _attraction(xy: np.ndarray, src: np.ndarray, dst: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Each edge pulls its ends together by ``w · d``."""
    pull = (xy[dst] - xy[src]) * w[:, None]
    n = len(xy)
    force = np.empty_like(xy)
    for axis in (0, 1):
        force[:, axis] = np.bincount(src, pull[:, axis], n) - np.bincount(dst, pull[:, axis], n)
    return force


def _gravity(xy: np.ndarray, mass: np.ndarray) -> np.ndarray:
    """A pull of ``gravity · mass`` towards the centre of the layout."""
    centred = xy - xy.mean(axis=0)
    d = np.maximum(np.hypot(centred[:, 0], centred[:, 1]), 1e-9)
    return np.asarray(-centred * (_GRAVITY * mass / d)[:, None])


def _speed(
    force: np.ndarray, prev: np.ndarray, mass: np.ndarray, speed: float, efficiency: float
) -> tuple[float, float, np.ndarray]:
    """ForceAtlas2's adaptive speed: the global speed from swing and traction, and each
    node's step (smaller the more it swings; its move capped at 10 units)."""
    swing_i = np.hypot(*(force - prev).T)
    swing = float((mass * swing_i).sum())
    traction = float((mass * np.hypot(*(force + prev).T)).sum()) / 2
    n = len(force)
    jitter = _JITTER * max(
        math.sqrt(0.05 * math.sqrt(n)), min(10.0, 0.05 * math.sqrt(n) * traction / n**2)
    )
    if swing / max(traction, 1e-12) > 2.0:
        efficiency = max(0.05, efficiency * 0.5)
        jitter = max(jitter, _JITTER)
    target = jitter * efficiency * traction / swing if swing else speed * 1.5
    if swing > jitter * traction:
        efficiency = max(0.05, efficiency * 0.7)
    elif speed < 1000:
        efficiency *= 1.3
    speed += min(target - speed, 0.5 * speed)
    step = 0.1 * speed / (1.0 + np.sqrt(speed * swing_i))
    magnitude = np.maximum(np.hypot(*force.T), 1e-12)
    return speed, efficiency, np.minimum(step, 10.0 / magnitude)


def _grid_size(n: int) -> int:
    """Grid cells a side: about two per node along a side, 32 to :data:`GRID`."""
    return int(min(GRID, max(32, 2 ** math.ceil(math.log2(2 * math.sqrt(n))))))


class _Grid:
    """Particle-mesh repulsion on a ``size``-square grid over the layout's bounding box."""

    def __init__(self, size: int) -> None:
        self.size = size
        k = np.arange(-(size - 1), size, dtype=np.float64)
        gx, gy = np.meshgrid(k, k, indexing="ij")
        r2 = gx**2 + gy**2
        r2[size - 1, size - 1] = 1.0  # the centre: no force on a point from itself
        # The kernels' transforms, once: a step is one forward and two inverse FFTs.
        self.length = fft.next_fast_len(3 * size - 2)  # the full convolution: no wrap-around
        shape = (self.length, self.length)
        self.kernels = [fft.rfft2(k / r2, s=shape) for k in (gx, gy)]

    def repulsion(self, xy: np.ndarray, mass: np.ndarray) -> np.ndarray:
        """``Σ_j m_i m_j (x_i - x_j) / |x_i - x_j|²`` for every node ``i``, on the grid."""
        size = self.size
        low = xy.min(axis=0)
        cell = float(max((xy.max(axis=0) - low).max(), 1e-9)) / (size - 1)
        u = (xy - low) / cell
        i0 = np.minimum(np.floor(u).astype(np.int64), size - 2)
        f = u - i0
        weights = (
            ((1 - f[:, 0]) * (1 - f[:, 1]), 0, 0),
            (f[:, 0] * (1 - f[:, 1]), 1, 0),
            ((1 - f[:, 0]) * f[:, 1], 0, 1),
            (f[:, 0] * f[:, 1], 1, 1),
        )
        flat = np.zeros(size * size)
        for share, dx, dy in weights:
            cells = (i0[:, 0] + dx) * size + i0[:, 1] + dy
            flat += np.bincount(cells, share * mass, size * size)
        shape = (self.length, self.length)
        spectrum = fft.rfft2(flat.reshape(size, size), s=shape)
        middle = slice(size - 1, 2 * size - 1)  # the convolution's "same" part
        fields = [fft.irfft2(spectrum * k, s=shape)[middle, middle] for k in self.kernels]
        force = np.zeros_like(xy)
        for share, dx, dy in weights:
            a, b = i0[:, 0] + dx, i0[:, 1] + dy
            force[:, 0] += share * fields[0][a, b]
            force[:, 1] += share * fields[1][a, b]
        return np.asarray(force * (mass / cell)[:, None])
