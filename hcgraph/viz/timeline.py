"""The ``time`` view: stories on a date axis, their citations drawn to their sources' dates.

News provenance is about time: how fast a source is picked up, which sources an edition
leans on. The page (``template_time.html``, a 2D canvas) puts every dated story at its
publication date (x) in its newsroom's lane (y), every dated source document at its
published date in a sources band below, and draws each citation as a line from the story
to its source: the line's horizontal extent is the *source lag* (story date - source date).
Brushing a date range highlights the stories in it, the sources they cite and those lines,
and sums the lags of the range; a tooltip gives a story's or a source's lags.

The graph is the reuse graph (stories → manifests → publishers, counts over the whole
store); a manifest's ``date`` is its source document's. :func:`lag_summary` is the lag
summary the page shows (the same nearest-rank quantiles in both).
"""

from __future__ import annotations

import datetime as dt
from typing import Any

import networkx as nx

from ..store import Store
from .data import load_reuse
from .focus import Focus

__all__ = ["LAG_BINS", "lag_days", "lag_summary", "render_time", "time_payload", "time_view"]

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


def _day(text: str) -> int | None:
    """Days since 1970-01-01 of a ``YYYY-MM-DD`` date, or None (no or bad date)."""
    try:
        return dt.date.fromisoformat(text[:10]).toordinal() - 719163 if text else None
    except ValueError:
        return None


def time_view(
    store: Store, focus: Focus | None, *, include_withdrawn: bool = False, **_: Any
) -> nx.DiGraph:
    """The reuse graph of every story for the time axis; ``focus`` (a story or a source)
    is selected when the page opens."""
    from .views import _reuse_graph

    data = load_reuse(store, claims=False, include_withdrawn=include_withdrawn)
    graph = _reuse_graph(data, data.citations(), claims=False)
    kinds = ("Story", "Manifest")
    undated = {k: sum(1 for _n, a in graph.nodes(data=True)
                      if a["type"] == k and _day(a["date"]) is None) for k in kinds}  # fmt: skip
    notes = [f"{n} undated {'stories' if k == 'Story' else 'sources'} not placed"
             for k, n in undated.items() if n]  # fmt: skip
    graph.graph.update(view="time", focus=focus.iri if focus else None, note="; ".join(notes),
                       title="Stories and their sources in time")  # fmt: skip
    return graph


def lag_days(graph: nx.DiGraph) -> list[int]:
    """Every citation's source lag in days (story date - source date), dated at both ends."""
    out = []
    for s, m in graph.edges():
        if graph.nodes[s]["type"] == "Story":
            a, b = _day(graph.nodes[s]["date"]), _day(graph.nodes[m]["date"])
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


def time_payload(graph: nx.DiGraph) -> dict[str, Any]:
    """The page's data as columns: dated stories and sources, citations as index pairs.

    ``stories``: ``id``, ``t`` (headline), ``day`` (days since 1970), ``d`` (date), ``r``
    (lane: index into ``rooms``, the busiest newsroom first); ``sources``: ``id``, ``t``,
    ``day``, ``d``, ``u`` (URL), ``p`` (index into ``publishers``), ``n`` (citing stories);
    ``cites``: ``s`` and ``m`` (indices of the story and the source).
    """
    from .render import _http, page_meta, visible_bidi, visible_label

    nodes = graph.nodes

    def dated(kind: str) -> list[str]:
        rows = [n for n in graph if nodes[n]["type"] == kind and _day(nodes[n]["date"]) is not None]
        return sorted(rows, key=lambda n: (nodes[n]["date"], n))

    stories, sources = dated("Story"), dated("Manifest")
    count: dict[str, int] = {}
    for s in stories:
        name = nodes[s]["newsrooms"][0] if nodes[s]["newsrooms"] else "(no newsroom)"
        count[name] = count.get(name, 0) + 1
    rooms = sorted(count, key=lambda r: (-count[r], r))
    room_ix = {r: k for k, r in enumerate(rooms)}
    pubs = sorted({p for m in sources for p in graph.successors(m)})
    pub_ix = {p: k for k, p in enumerate(pubs)}
    s_ix, m_ix = {n: k for k, n in enumerate(stories)}, {n: k for k, n in enumerate(sources)}
    cites = sorted((s_ix[s], m_ix[m]) for s, m in graph.edges() if s in s_ix and m in m_ix)

    def room(s: str) -> int:
        rs = nodes[s]["newsrooms"]
        return room_ix[rs[0] if rs else "(no newsroom)"]

    def pub(m: str) -> int:
        ps = sorted(graph.successors(m))
        return pub_ix[ps[0]] if ps else -1

    def column(rows: list[str], key: str) -> list[Any]:
        return [nodes[n][key] for n in rows]

    def text(rows: list[str]) -> list[str]:
        return [visible_bidi(nodes[n]["title"] or nodes[n]["label"]) for n in rows]

    return {
        "stories": {
            "id": stories, "t": text(stories), "d": column(stories, "date"),
            "day": [_day(d) for d in column(stories, "date")],
            "u": [_http(u) for u in column(stories, "url")], "r": [room(s) for s in stories],
        },
        "sources": {
            "id": sources, "t": text(sources), "d": column(sources, "date"),
            "day": [_day(d) for d in column(sources, "date")],
            "u": [_http(u) for u in column(sources, "url")], "p": [pub(m) for m in sources],
            "n": [int(nodes[m].get("stories", 0)) for m in sources],
        },
        "cites": {"s": [c[0] for c in cites], "m": [c[1] for c in cites]},
        "rooms": [visible_label(r) for r in rooms],
        "publishers": [visible_bidi(nodes[p]["label"] or p) for p in pubs],
        "bins": [[label, _finite(lo), _finite(hi)] for label, lo, hi in LAG_BINS],
        "lag": lag_summary(lag_days(graph)),
        "meta": page_meta(graph, "time"),
    }  # fmt: skip


def render_time(graph: nx.DiGraph) -> str:
    """The time view as one self-contained page (no vendored script: a 2D canvas)."""
    from .render import render_page

    return render_page("template_time.html", time_payload(graph))
