"""The ``time`` view: stories on a date axis, their citations drawn to their sources' dates.

The page (a 2D canvas; docs/maps.md) places dated stories in newsroom lanes and dated sources
below; a citation spans its *source lag* (story date - source date, :func:`lag_summary`).
"""

from __future__ import annotations

import datetime as dt
from collections import Counter
from typing import Any

import networkx as nx

from .data import index_of, nodes_of
from .render import _http, page_meta, visible_bidi, visible_label

__all__ = ["LAG_BINS", "day_number", "lag_days", "lag_summary", "time_payload"]

#: The lag histogram's bins: (label, lowest lag in days, highest lag in days).
LAG_BINS: tuple[tuple[str, float, float], ...] = (
    ("source after story", float("-inf"), -1),
    ("same day", 0, 0),
    ("1-7 days", 1, 7),
    ("8-30 days", 8, 30),
    ("31-90 days", 31, 90),
    ("91-365 days", 91, 365),
    ("over a year", 366, float("inf")),
)


def day_number(text: str) -> int | None:
    """Days since 1970-01-01 of a ``YYYY-MM-DD`` date, or None (no or bad date)."""
    try:
        return dt.date.fromisoformat(text[:10]).toordinal() - 719163 if text else None
    except ValueError:
        return None


def lag_days(graph: nx.DiGraph) -> list[int]:
    """Every citation's source lag in days (story date - source date), dated at both ends."""
    out = []
    for s, m in graph.edges():
        if graph.nodes[s]["type"] == "Story":
            a, b = day_number(graph.nodes[s]["date"]), day_number(graph.nodes[m]["date"])
            if a is not None and b is not None:
                out.append(a - b)
    return sorted(out)


def _rank(values: list[int], q: float) -> int:
    """The nearest-rank (lower) ``q`` quantile of sorted ``values``: ``values[floor(q(n-1))]``."""
    return values[int(q * (len(values) - 1))]


def lag_summary(lags: list[int]) -> dict[str, Any]:
    """Count, median, quartiles, 90th percentile, extremes and the :data:`LAG_BINS` counts."""
    lags = sorted(lags)
    bins = [[label, sum(1 for v in lags if lo <= v <= hi)] for label, lo, hi in LAG_BINS]
    if not lags:
        return {"n": 0, "bins": bins}
    return {
        "n": len(lags), "min": lags[0], "q1": _rank(lags, 0.25), "median": _rank(lags, 0.5),
        "q3": _rank(lags, 0.75), "p90": _rank(lags, 0.9), "max": lags[-1], "bins": bins,
    }  # fmt: skip


def _finite(v: float) -> int | None:
    """A bin edge for JSON: None for an open end."""
    return None if v in (float("inf"), float("-inf")) else int(v)


def _dated(graph: nx.DiGraph, kind: str) -> list[str]:
    """The nodes of type ``kind`` with a date, by date then IRI."""
    rows = [n for n in nodes_of(graph, kind) if day_number(graph.nodes[n]["date"]) is not None]
    return sorted(rows, key=lambda n: graph.nodes[n]["date"])  # stable: IRI order kept


def _room(attrs: dict[str, Any]) -> str:
    return attrs["newsrooms"][0] if attrs["newsrooms"] else "(no newsroom)"


def _columns(graph: nx.DiGraph, rows: list[str]) -> dict[str, list[Any]]:
    """The columns stories and sources share: ``id``, ``t``, ``d``, ``day``, ``u``."""
    attrs = [graph.nodes[n] for n in rows]
    return {
        "id": rows,
        "t": [visible_bidi(a["title"] or a["label"]) for a in attrs],
        "d": [a["date"] for a in attrs],
        "day": [day_number(a["date"]) for a in attrs],
        "u": [_http(a["url"]) for a in attrs],
    }


def time_payload(graph: nx.DiGraph) -> dict[str, Any]:
    """The page's data as columns: dated stories and sources, citations as index pairs.

    ``stories``: ``id``, ``t`` (headline), ``day`` (days since 1970), ``d`` (date), ``u``
    (URL), ``r`` (lane: index into ``rooms``), ``v`` (unsupported sentences); ``sources``:
    the same but ``p`` (index into ``publishers``, -1: none) and ``n`` (citing stories) for
    ``r`` and ``v``; ``cites``: ``s`` and ``m`` (indices of the story and the source).
    """
    nodes = graph.nodes
    stories, sources = _dated(graph, "Story"), _dated(graph, "Manifest")
    rooms, lanes = _lanes([_room(nodes[s]) for s in stories])
    pubs = sorted({p for m in sources for p in graph.successors(m)})
    return {
        "stories": {
            **_columns(graph, stories),
            "r": lanes,
            "v": _counts(graph, stories, "unsupported"),
        },
        "sources": {
            **_columns(graph, sources),
            "p": _owners(graph, sources, pubs),
            "n": _counts(graph, sources, "stories"),
        },
        "cites": _cites(graph, stories, sources),
        "rooms": [visible_label(r) for r in rooms],
        "publishers": [visible_bidi(nodes[p]["label"] or p) for p in pubs],
        "bins": [[label, _finite(lo), _finite(hi)] for label, lo, hi in LAG_BINS],
        "lag": lag_summary(lag_days(graph)),
        "meta": page_meta(graph, "time"),
    }


def _counts(graph: nx.DiGraph, rows: list[str], attr: str) -> list[int]:
    """The number in node attribute ``attr`` of each of ``rows`` (0 where absent)."""
    return [int(graph.nodes[n].get(attr, 0) or 0) for n in rows]


def _owners(graph: nx.DiGraph, sources: list[str], pubs: list[str]) -> list[int]:
    """Each source's publisher (the first by IRI) as an index into ``pubs``; -1: none."""
    pub_ix = {"": -1} | index_of(pubs)
    return [pub_ix[min(graph.successors(m), default="")] for m in sources]


def _cites(graph: nx.DiGraph, stories: list[str], sources: list[str]) -> dict[str, list[int]]:
    """The citations between dated stories and dated sources, as index columns."""
    s_ix, m_ix = index_of(stories), index_of(sources)
    cites = sorted((s_ix[s], m_ix[m]) for s, m in graph.edges() if s in s_ix and m in m_ix)
    return {"s": [s for s, _m in cites], "m": [m for _s, m in cites]}


def _lanes(rooms_of: list[str]) -> tuple[list[str], list[int]]:
    """The newsrooms, the busiest first, and each story's lane (an index into them)."""
    count = Counter(rooms_of)
    rooms = sorted(count, key=lambda r: (-count[r], r))
    lane = index_of(rooms)
    return rooms, [lane[r] for r in rooms_of]
