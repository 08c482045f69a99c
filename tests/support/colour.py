"""Colour science for chart tests: CIEDE2000 and colour-vision-deficiency simulation.

- sRGB → linear RGB → CIE XYZ (D65) → CIELAB, by the sRGB standard (IEC 61966-2-1).
- CIEDE2000 colour difference (Sharma, Wu & Dalal 2005; checked against their test data).
- Protanopia, deuteranopia and tritanopia simulated with the severity-1.0 matrices of
  Machado, Oliveira & Fernandes 2009, applied in linear RGB.
"""

from __future__ import annotations

import math

__all__ = ["DEUTERANOPIA", "PROTANOPIA", "TRITANOPIA", "ciede2000", "lab", "min_delta_e"]

Matrix = tuple[tuple[float, float, float], ...]

PROTANOPIA: Matrix = (
    (0.152286, 1.052583, -0.204868),
    (0.114503, 0.786281, 0.099216),
    (-0.003882, -0.048116, 1.051998),
)
DEUTERANOPIA: Matrix = (
    (0.367322, 0.860646, -0.227968),
    (0.280085, 0.672501, 0.047413),
    (-0.011820, 0.042940, 0.968881),
)
TRITANOPIA: Matrix = (
    (1.255528, -0.076749, -0.178779),
    (-0.078411, 0.930809, 0.148602),
    (0.004733, 0.691367, 0.303900),
)
_XYZ: Matrix = (
    (0.4124564, 0.3575761, 0.1804375),
    (0.2126729, 0.7151522, 0.0721750),
    (0.0193339, 0.1191920, 0.9503041),
)
_WHITE = (0.95047, 1.0, 1.08883)


def _linear(c: float) -> float:
    return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4


def _apply(m: Matrix, v: tuple[float, ...]) -> tuple[float, float, float]:
    a, b, c = (sum(m[i][j] * v[j] for j in range(3)) for i in range(3))
    return a, b, c


def lab(color: str, deficiency: Matrix | None = None) -> tuple[float, float, float]:
    """CIELAB of a ``#rrggbb`` colour, as seen with ``deficiency`` (a Machado matrix)."""
    rgb = tuple(_linear(int(color[i : i + 2], 16) / 255) for i in (1, 3, 5))
    if deficiency is not None:
        rgb = tuple(min(1.0, max(0.0, v)) for v in _apply(deficiency, rgb))
    xyz = _apply(_XYZ, rgb)

    def f(t: float) -> float:
        return t ** (1 / 3) if t > (6 / 29) ** 3 else t / (3 * (6 / 29) ** 2) + 4 / 29

    fx, fy, fz = (f(v / w) for v, w in zip(xyz, _WHITE, strict=True))
    return 116 * fy - 16, 500 * (fx - fy), 200 * (fy - fz)


def ciede2000(lab1: tuple[float, float, float], lab2: tuple[float, float, float]) -> float:
    """The CIEDE2000 colour difference ΔE00 (kL = kC = kH = 1)."""
    (l1, a1, b1), (l2, a2, b2) = lab1, lab2
    c_bar = (math.hypot(a1, b1) + math.hypot(a2, b2)) / 2
    g = 0.5 * (1 - math.sqrt(c_bar**7 / (c_bar**7 + 25**7)))
    a1p, a2p = (1 + g) * a1, (1 + g) * a2
    c1p, c2p = math.hypot(a1p, b1), math.hypot(a2p, b2)
    h1p = math.degrees(math.atan2(b1, a1p)) % 360
    h2p = math.degrees(math.atan2(b2, a2p)) % 360
    dlp, dcp = l2 - l1, c2p - c1p
    if c1p * c2p == 0:
        dhp = 0.0
    elif abs(h2p - h1p) <= 180:
        dhp = h2p - h1p
    else:
        dhp = h2p - h1p - 360 if h2p - h1p > 180 else h2p - h1p + 360
    dh = 2 * math.sqrt(c1p * c2p) * math.sin(math.radians(dhp / 2))
    lbp, cbp = (l1 + l2) / 2, (c1p + c2p) / 2
    if c1p * c2p == 0:
        hbp = h1p + h2p
    elif abs(h1p - h2p) <= 180:
        hbp = (h1p + h2p) / 2
    else:
        hbp = (h1p + h2p + 360) / 2 if h1p + h2p < 360 else (h1p + h2p - 360) / 2
    cos = [math.cos(math.radians(v)) for v in (hbp - 30, 2 * hbp, 3 * hbp + 6, 4 * hbp - 63)]
    t = 1 - 0.17 * cos[0] + 0.24 * cos[1] + 0.32 * cos[2] - 0.20 * cos[3]
    d_theta = 30 * math.exp(-(((hbp - 275) / 25) ** 2))
    rc = 2 * math.sqrt(cbp**7 / (cbp**7 + 25**7))
    sl = 1 + 0.015 * (lbp - 50) ** 2 / math.sqrt(20 + (lbp - 50) ** 2)
    sc, sh = 1 + 0.045 * cbp, 1 + 0.015 * cbp * t
    rt = -math.sin(math.radians(2 * d_theta)) * rc
    return math.sqrt((dlp / sl) ** 2 + (dcp / sc) ** 2 + (dh / sh) ** 2
                     + rt * (dcp / sc) * (dh / sh))  # fmt: skip


def min_delta_e(a: str, b: str) -> float:
    """The smallest ΔE00 between two colours: seen normally, with protanopia, with
    deuteranopia."""
    return min(ciede2000(lab(a, m), lab(b, m)) for m in (None, PROTANOPIA, DEUTERANOPIA))
