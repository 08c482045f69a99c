"""Citation-map projections, layouts and HTML, checked against ground truth (no browser).

The browser tests (tests/test_viz_browser.py) open the same maps in Chromium.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import sys
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import networkx as nx
import pytest

from hcgraph import Store, VizError, citation_graph, draw_map, ingest_bytes
from hcgraph.viz import compute_layout, default_map_path, render_map
from hcgraph.viz.render import VIS_SHA256, safe_json, visible_bidi
from hcgraph.viz.views import resolve_focus
from hcsample.corpus import generate_corpus
from tests.conftest import SEED, SEED_URL
from tests.hostile import hostile_story
from tests.support.groundtruth import ground_truth

HOSTILE_URL = "https://news.example.org/stories/2026-10-21/hostile/"
ATTRS = {"type", "label", "title", "iri", "id", "date", "url", "publishers", "newsrooms"}


def _corpus() -> list[dict[str, Any]]:
    seed = json.loads(SEED.read_text())
    return generate_corpus(40, seed=5, include_seed=seed).stories


@pytest.fixture(scope="module")
def corpus() -> list[dict[str, Any]]:
    return _corpus()


@pytest.fixture(scope="module")
def cstore(corpus: list[dict[str, Any]]) -> Iterator[Store]:
    """An in-memory store of the seed story, a hostile story and 40 generated stories."""
    with Store(None) as st:
        docs = [(json.dumps(s).encode(), f"corpus:{i}") for i, s in enumerate(corpus)]
        docs.append((json.dumps(hostile_story(SEED)).encode(), "hostile.json"))
        report = ingest_bytes(st, docs)
        assert not report.failures
        yield st


@pytest.fixture(scope="module")
def seed_store() -> Iterator[Store]:
    with Store(None) as st:
        ingest_bytes(st, [(SEED.read_bytes(), str(SEED))])
        yield st


def _types(graph: nx.DiGraph) -> dict[str, int]:
    counts: dict[str, int] = defaultdict(int)
    for _n, a in graph.nodes(data=True):
        counts[a["type"]] += 1
    return dict(counts)


# --- story view ---------------------------------------------------------------------------
def test_story_view_of_the_seed_matches_the_story(seed_store: Store) -> None:
    graph = citation_graph(seed_store, "story")  # the only story: no focus needed
    assert _types(graph) == {
        "Story": 1, "Section": 5, "Paragraph": 9, "KeyFact": 5, "Claim": 24,
        "Manifest": 5, "SourceDocument": 5, "Publisher": 4,
    }  # fmt: skip
    assert graph.graph["view"] == "story" and graph.graph["focus"] == SEED_URL
    for _n, attrs in graph.nodes(data=True):
        assert attrs.keys() >= ATTRS
    # The trail runs story → … → publisher with no step skipped.
    relations = {(graph.nodes[s]["type"], graph.nodes[o]["type"], a["relation"])
                 for s, o, a in graph.edges(data=True)}  # fmt: skip
    assert relations == {
        ("Story", "Section", "hasPart"),
        ("Story", "KeyFact", "hasPart"),
        ("Section", "Paragraph", "hasPart"),
        ("Paragraph", "Claim", "citesAsEvidence"),
        ("KeyFact", "Claim", "citesAsEvidence"),
        ("Claim", "Manifest", "isPartOf"),
        ("Manifest", "SourceDocument", "hadPrimarySource"),
        ("SourceDocument", "Publisher", "wasAttributedTo"),
    }
    assert nx.is_directed_acyclic_graph(graph)
    # Every claim leads to a publisher, and the facet says which.
    for n, attrs in graph.nodes(data=True):
        if attrs["type"] == "Claim":
            assert len(attrs["publishers"]) >= 1, n
    story = graph.nodes[SEED_URL]
    assert story["title"].startswith("Agentic RL grows up") and story["date"] == "2026-10-20"


def test_story_view_needs_a_focus_when_several_stories(cstore: Store) -> None:
    with pytest.raises(VizError, match="--focus"):
        citation_graph(cstore, "story")
    graph = citation_graph(cstore, "story", "hostile")
    assert graph.graph["focus"] == HOSTILE_URL
    # Hostile text is kept verbatim in the projection (escaping is the renderer's job).
    assert "<script>alert(1)</script>" in graph.nodes[HOSTILE_URL]["title"]


# --- reuse view -----------------------------------------------------------------------------
def test_reuse_view_matches_ground_truth(cstore: Store, corpus: list[dict[str, Any]]) -> None:
    stories = [*corpus, hostile_story(SEED)]
    truth = ground_truth(stories)
    graph = citation_graph(cstore, "reuse")
    nodes = dict(graph.nodes(data=True))
    story_nodes = {n for n, a in nodes.items() if a["type"] == "Story"}
    assert story_nodes == set(truth.story_urls)
    by_id = {a["id"]: n for n, a in nodes.items() if a["type"] == "Manifest"}
    cited = {mid for mid, urls in truth.manifest_citing_stories.items() if urls}
    assert cited <= set(by_id)
    for mid, urls in truth.manifest_citing_stories.items():
        m = by_id[mid]
        assert set(graph.predecessors(m)) == set(urls), mid
        assert nodes[m]["stories"] == len(urls)  # manifests sized by citing stories
    for url, mids in truth.story_cited_manifests.items():
        assert {nodes[m]["id"] for m in graph.successors(url)} == set(mids)
    # Edge width = distinct claims the story cites from that manifest.
    claims: dict[tuple[str, str], set[str]] = defaultdict(set)
    for story in stories:
        parts = [p for s in story["sections"] for p in s["paragraphs"]] + story["key_facts"]
        for part in parts:
            for cite in part.get("cites", []):
                key = (story["url"], str(cite["manifest_id"]))
                claims[key].update(str(c) for c in cite["claim_ids"])
    for (url, mid), ids in claims.items():
        assert graph.edges[url, by_id[mid]]["claims"] == len(ids), (url, mid)
    # Publishers: reach equals ground truth.
    for name, (n_stories, _n_manifests, _n_claims) in truth.publisher_reach.items():
        pub = next(n for n, a in nodes.items() if a["type"] == "Publisher" and a["id"] == name)
        assert nodes[pub]["stories"] == n_stories, name


def test_reuse_facets_name_publishers_and_newsrooms(cstore: Store) -> None:
    graph = citation_graph(cstore, "reuse")
    for n, a in graph.nodes(data=True):
        if a["type"] == "Story":
            pubs = {graph.nodes[p]["id"] for m in graph.successors(n) for p in graph.successors(m)}
            assert set(a["publishers"]) == pubs
            assert len(a["newsrooms"]) == 1
        if a["type"] == "Manifest" and a["stories"]:
            rooms = {r for s in graph.predecessors(n) for r in graph.nodes[s]["newsrooms"]}
            assert set(a["newsrooms"]) == rooms


def test_top_and_story_groups_fold_the_map(cstore: Store) -> None:
    full = citation_graph(cstore, "reuse")
    top = citation_graph(cstore, "reuse", top=3)
    manifests = [n for n, a in top.nodes(data=True) if a["type"] == "Manifest"]
    assert len(manifests) == 3
    most = sorted((a["stories"] for _n, a in full.nodes(data=True) if a["type"] == "Manifest"),
                  reverse=True)[:3]  # fmt: skip
    assert sorted((top.nodes[m]["stories"] for m in manifests), reverse=True) == most
    assert "top 3 manifests" in top.graph["note"]
    grouped = citation_graph(cstore, "reuse", group_stories="newsroom")
    groups = [a for _n, a in grouped.nodes(data=True) if a["type"] == "StoryGroup"]
    assert 1 <= len(groups) <= 4 and not any(
        a["type"] == "Story" for _n, a in grouped.nodes(data=True)
    )
    assert sum(a["stories"] for a in groups) == 42
    with pytest.raises(VizError, match="--top"):
        citation_graph(cstore, "reuse", top=0)


def test_top_with_the_overview_drills_into_the_kept_sources_only(cstore: Store) -> None:
    """``--top N --overview``: the drill-down lists the citers of the kept manifests (a story
    citing none of them was left out of the map, not a KeyError)."""
    graph = citation_graph(cstore, "reuse", top=3, overview=True)
    drill = graph.graph["drill"]
    kept = {n for n, a in graph.nodes(data=True) if a["type"] == "Manifest"}
    assert len(kept) == 3 and set(drill["citers"]) == kept
    listed = [s for s, _title, _date in drill["stories"]]
    cited = {listed[i] for citers in drill["citers"].values() for i in citers}
    assert cited == set(listed) and "top 3 manifests" in graph.graph["note"]


def test_reuse_focus_keeps_the_neighbourhood(cstore: Store) -> None:
    graph = citation_graph(cstore, "reuse", SEED_URL)
    full = citation_graph(cstore, "reuse")
    manifests = set(full.successors(SEED_URL))
    assert {n for n, a in graph.nodes(data=True) if a["type"] == "Manifest"} == manifests
    citing = {s for m in manifests for s in full.predecessors(m)}
    assert {n for n, a in graph.nodes(data=True) if a["type"] == "Story"} == citing


# --- publisher view, focus, all --------------------------------------------------------------
def test_publisher_view(cstore: Store, corpus: list[dict[str, Any]]) -> None:
    with pytest.raises(VizError, match="publisher"):
        citation_graph(cstore, "publisher")
    name = corpus[1]["manifests"][0]["source_name"]
    graph = citation_graph(cstore, "publisher", name)
    pubs = [a["id"] for _n, a in graph.nodes(data=True) if a["type"] == "Publisher"]
    assert pubs == [name]
    truth = ground_truth([*corpus, hostile_story(SEED)])
    stories = [n for n, a in graph.nodes(data=True) if a["type"] == "Story"]
    assert len(stories) == truth.publisher_reach[name][0]


def test_resolve_focus_by_every_kind_of_name(cstore: Store, corpus: list[dict[str, Any]]) -> None:
    seed = corpus[0]
    assert resolve_focus(cstore, SEED_URL).iri == SEED_URL
    assert resolve_focus(cstore, SEED_URL.rstrip("/")).iri == SEED_URL
    assert resolve_focus(cstore, seed["id"]).iri == SEED_URL
    assert resolve_focus(cstore, seed["slug"]).iri == SEED_URL
    manifest = resolve_focus(cstore, seed["manifests"][0]["manifest_id"])
    assert manifest.kind == "Manifest"
    assert resolve_focus(cstore, seed["manifests"][0]["source_name"]).kind == "Publisher"
    for bad in ("nothing-like-this", "'} ; DROP ALL ; {", "<script>", "https://x.example/ a"):
        with pytest.raises(VizError, match="no story"):
            resolve_focus(cstore, bad)
    with pytest.raises(VizError, match="unknown view"):
        citation_graph(cstore, "pie")


# --- layout and HTML -------------------------------------------------------------------------
def test_layouts_place_every_node_deterministically(cstore: Store) -> None:
    for view, focus in (("story", "hostile"), ("reuse", None), ("reuse", "hostile")):
        graph = citation_graph(cstore, view, focus)
        pos = compute_layout(graph)
        assert set(pos) == set(graph)
        assert pos == compute_layout(graph)
        assert len(set(pos.values())) == len(pos), f"{view}: two nodes share a position"


def test_any_other_graph_is_laid_out_without_numpy_or_scipy(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A graph of no hcgraph view (a user's own, to ``render_map``): every node placed, apart,
    the same each time, with numpy and scipy not importable (they are no dependency)."""
    undirected = nx.random_partition_graph([60] * 10, 0.15, 0.002, seed=3)  # 600 nodes
    graph = nx.DiGraph(nx.relabel_nodes(undirected, lambda n: f"n{n:04d}"))
    graph.add_node("lonely")
    for name in ("numpy", "scipy"):
        monkeypatch.setitem(sys.modules, name, None)  # ``import numpy`` raises ImportError
    pos = compute_layout(graph)
    assert set(pos) == set(graph)
    assert len(set(pos.values())) == len(pos)
    assert pos == compute_layout(nx.DiGraph(graph))


def test_safe_json_escapes_everything_html_could_see() -> None:
    value = {"t": "</script><script>alert(1)</script> & \u2028\u2029 <!-- \ud800"}
    text = safe_json(value)
    assert not re.search("[<>&\u2028\u2029]", text)
    assert text.isascii()
    assert json.loads(text) == value


def test_html_is_self_contained_and_escaped(cstore: Store) -> None:
    graph = citation_graph(cstore, "story", "hostile")
    html = render_map(graph)
    assert html == render_map(graph)  # deterministic
    head = html.split("<style>", 1)[0]
    assert "Content-Security-Policy" in head and "default-src 'none'" in head
    # No external resource of any kind: no src/href attributes, no @import, no url(http…).
    assert not re.search(r"""<(script|link|img|iframe)[^>]*\s(src|href)=""", html, re.I)
    assert "sourceMappingURL" not in html
    for bad in ("<script>alert(1)", "<img src=x", 'onerror="alert', "<evil>"):
        assert bad not in html, bad
    # Exactly our three script elements: the JSON data, vis-network, the page script.
    assert len(re.findall(r"<script\b", html)) == 3
    payload = html.split('<script type="application/json" id="hc-data">', 1)[1]
    data = json.loads(payload.split("</script>", 1)[0])
    assert len(data["nodes"]) == len(graph) and len(data["edges"]) == graph.number_of_edges()
    titles = {n["t"] for n in data["nodes"]}
    assert any("<script>alert(1)</script>" in t for t in titles)  # the text survives intact
    # A javascript: URL in the data never becomes a link.
    assert all(n["u"] == "" or n["u"].startswith(("http://", "https://")) for n in data["nodes"])


def test_vendored_vis_network_is_the_npm_file() -> None:
    path = Path(__file__).parent.parent / "hcgraph" / "viz" / "static" / "vis-network.min.js"
    assert hashlib.sha256(path.read_bytes()).hexdigest() == VIS_SHA256
    assert "@version 10.1.5" in path.read_text()[:400]


# --- CLI -------------------------------------------------------------------------------------
def test_cli_writes_the_default_map(run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    store_dir = tmp_path / "output" / "store"
    with Store(store_dir) as st:
        ingest_bytes(st, [(SEED.read_bytes(), str(SEED))])
    proc = run_cli("viz", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    out = tmp_path / "output" / "map.html"
    assert out.exists() and "reuse map: 10 nodes, 10 edges" in proc.stderr
    proc = run_cli("viz", "--view", "story", "--focus", "agentic-rl-production", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "output" / "map-story-agentic-rl-production.html").exists()
    proc = run_cli("viz", "--view", "publisher", "--focus", "nobody", cwd=tmp_path)
    assert proc.returncode == 1
    assert proc.stderr.startswith("error: --focus 'nobody'") and "Traceback" not in proc.stderr
    assert proc.stderr.count("\n") == 1


def test_draw_map_and_default_paths(seed_store: Store, tmp_path: Path) -> None:
    info = draw_map(seed_store, "story", None, tmp_path / "deep" / "m.html")
    assert info.path.exists() and info.nodes == 58 and info.bytes == info.path.stat().st_size
    assert default_map_path("reuse", None) == Path("output/map.html")
    assert default_map_path("story", SEED_URL) == Path(
        "output/map-story-agentic-rl-production.html"
    )
    assert default_map_path("publisher", "a/../b <x>") == Path("output/map-publisher-b-x.html")


# --- counts against ground truth, every view and option (issue 12 item 1) ---------------------
def _group_of(story: dict[str, Any], kind: str) -> str:
    room = story.get("newsroom") or "(no newsroom)"
    date = str(story.get("published_at") or "")[:10] or "(undated)"
    return {"newsroom": room, "day": date, "newsroom-day": f"{room} · {date}"}[kind]


COMBOS: list[tuple[str, str | None, dict[str, Any]]] = [
    ("reuse", None, {}),
    ("reuse", None, {"top": 5}),
    ("reuse", "seed", {}),
    ("reuse", "manifest", {}),
    ("reuse", "publisher", {}),
    ("publisher", "publisher", {}),
    ("story", "seed", {}),
    ("story", "hostile", {}),
] + [
    (view, focus, {**opts, "group_stories": kind})
    for kind in ("newsroom", "day", "newsroom-day")
    for view, focus, opts in (
        ("reuse", None, {}),
        ("reuse", None, {"top": 3}),
        ("reuse", "publisher", {}),
        ("publisher", "publisher", {}),
    )
]


@pytest.mark.parametrize(("view", "focus", "opts"), COMBOS, ids=lambda v: str(v))
def test_counts_are_distinct_citing_stories(
    cstore: Store, corpus: list[dict[str, Any]], view: str, focus: str | None,
    opts: dict[str, Any],
) -> None:  # fmt: skip
    stories = [*corpus, hostile_story(SEED)]
    truth = ground_truth(stories)
    names = {
        "seed": SEED_URL,
        "hostile": HOSTILE_URL,
        "manifest": corpus[0]["manifests"][0]["manifest_id"],
        "publisher": corpus[1]["manifests"][0]["source_name"],
    }
    graph = citation_graph(cstore, view, names[focus] if focus else None, **opts)
    ids = {n: a["id"] for n, a in citation_graph(cstore, "reuse").nodes(data=True)}
    checked = {"Manifest": 0, "Publisher": 0, "StoryGroup": 0}
    for n, a in graph.nodes(data=True):
        if a["type"] == "Manifest":
            assert a["stories"] == len(truth.manifest_citing_stories.get(ids[n], ())), n
        elif a["type"] == "Publisher":
            assert a["stories"] == truth.publisher_reach.get(ids[n], (0,))[0], n
        else:
            continue
        checked[a["type"]] += 1
    assert checked["Manifest"] and checked["Publisher"]
    kind = opts.get("group_stories")
    if kind is None:
        return
    members: dict[str, set[str]] = defaultdict(set)
    for story in stories:
        members[_group_of(story, kind)].add(story["url"])
    # Stories on the map: those citing a manifest still on it (--top and --focus drop the rest).
    manifests = [ids[m] for m, a in graph.nodes(data=True) if a["type"] == "Manifest"]
    on_map = set().union(*(truth.manifest_citing_stories.get(m, frozenset()) for m in manifests))
    for n, a in graph.nodes(data=True):
        if a["type"] != "StoryGroup":
            continue
        checked["StoryGroup"] += 1
        shown = members[a["id"]] & on_map
        assert a["stories"] == len(shown), a["id"]
        for m in graph.successors(n):
            citing = truth.manifest_citing_stories[ids[m]] & shown
            assert graph.edges[n, m]["stories"] == len(citing), (a["id"], m)
    assert checked["StoryGroup"]


# --- pyvis for notebooks (issue 12 item 7) ----------------------------------------------------
def test_to_pyvis_gives_the_views_nodes_edges_and_titles(cstore: Store) -> None:
    from hcgraph.viz import to_pyvis

    graph = citation_graph(cstore, "story", "hostile")
    for net in (to_pyvis(graph), to_pyvis(cstore, view="story", focus="hostile")):
        assert {n["id"] for n in net.nodes} == set(graph)
        assert {(e["from"], e["to"]) for e in net.edges} == set(graph.edges())
        for n in net.nodes:
            attrs = graph.nodes[n["id"]]
            assert n["group"] == attrs["type"]
            assert visible_bidi(attrs["title"] or attrs["label"]) in n["title"]
        html = net.generate_html()
        # pyvis's template embeds the data with Jinja's tojson: hostile text stays text.
        assert "<script>alert(1)</script>" not in html
        assert "vis.DataSet" in html and graph.graph["focus"] in html


def test_publisher_view_layout_is_a_ring_with_groups(
    cstore: Store, corpus: list[dict[str, Any]]
) -> None:
    """The publisher in the centre, its manifests on a ring; a story citing one of them
    outside the ring (nearest that manifest), a story citing several inside it."""
    name = corpus[1]["manifests"][0]["source_name"]
    graph = citation_graph(cstore, "publisher", name)
    pos = compute_layout(graph)
    focus = graph.graph["focus"]
    assert pos[focus] == (0.0, 0.0)

    def radius(n: str) -> float:
        return float((pos[n][0] ** 2 + pos[n][1] ** 2) ** 0.5)

    manifests = [n for n, a in graph.nodes(data=True) if a["type"] == "Manifest"]
    stories = [n for n, a in graph.nodes(data=True) if a["type"] == "Story"]
    assert manifests and stories
    ring = max(radius(m) for m in manifests)
    assert min(radius(m) for m in manifests) > 0.99 * ring
    cited = {s: [m for m in graph.successors(s) if m in manifests] for s in stories}
    single = [s for s in stories if len(cited[s]) == 1]
    several = [s for s in stories if len(cited[s]) > 1]
    assert single
    for s in single:
        assert radius(s) > ring
        near = min(manifests, key=lambda m: math.dist(pos[s], pos[m]))
        assert near == cited[s][0], s
    assert all(radius(s) < ring for s in several)


@pytest.mark.parametrize("view", ["all", "pie"])
def test_unknown_views_are_refused_with_the_choices(seed_store: Store, view: str) -> None:
    """``all`` was dropped (issue 12): asking for it names the views that exist."""
    with pytest.raises(VizError, match="choose from story, reuse, publisher"):
        citation_graph(seed_store, view)


# --- the WebGL renderer (issue 27) and labels cut after escaping (issue 25, item 14) -----
def test_a_label_is_cut_after_its_bidi_controls_are_shown() -> None:
    from hcgraph.viz.render import visible_label

    heading = "\u202e" * 50 + " tail"
    label = visible_label(heading)
    assert len(label) <= 48 and label.startswith("[U+202E][U+202E]") and label.endswith("…")
    assert visible_label("short") == "short"


def test_the_renderer_is_picked_by_size_and_the_bundles_are_checked(
    cstore: Store,
) -> None:
    from hcgraph.viz import render

    graph = citation_graph(cstore, "reuse")
    assert render.pick_renderer(graph) == "canvas"
    assert render.pick_renderer(graph, "webgl") == "webgl"
    with pytest.raises(VizError, match="unknown renderer"):
        render.pick_renderer(graph, "svg")
    big = nx.DiGraph(view="reuse")
    big.add_nodes_from(str(i) for i in range(render.GL_NODES + 1))
    assert render.pick_renderer(big) == "webgl"
    for name, digest in (("sigma.min.js", render.SIGMA_SHA256),
                         ("graphology.umd.min.js", render.GRAPHOLOGY_SHA256)):  # fmt: skip
        static = Path(render.__file__).parent / "static"
        assert hashlib.sha256((static / name).read_bytes()).hexdigest() == digest
        assert (static / f"LICENSE-{name.split('.')[0]}.txt").exists()


def test_webgl_page_is_self_contained_and_escapes_story_text(tmp_path: Path) -> None:
    doc = hostile_story(SEED)
    with Store(None) as st:
        assert not ingest_bytes(st, [(json.dumps(doc).encode(), "h.json")]).failures
        graph = citation_graph(st, "reuse")
    html = render_map(graph, renderer="webgl")
    assert render_map(graph, renderer="webgl") == html  # deterministic (seeded Louvain)
    assert "sigma" in html and "graphology" in html
    assert not re.search(r"<script[^>]*\ssrc=", html) and "sourceMappingURL" not in html
    data = html.split('id="hc-data">', 1)[1].split("</script>", 1)[0]
    assert "<" not in data and ">" not in data and "&" not in data
    assert json.loads(data)["meta"]["view"] == "reuse"
    body = html.split("</style>", 1)[1]
    assert "innerHTML" not in body and "insertAdjacentHTML" not in body
    assert "default-src 'none'" in html and "'unsafe-inline'; img" in html  # styles only


def test_communities_are_seeded_and_cover_the_map(cstore: Store) -> None:
    from hcgraph.viz.render import communities

    graph = citation_graph(cstore, "reuse")
    first = communities(graph)
    assert first == communities(graph)
    assert sorted(n for c in first for n in c) == sorted(graph)
    assert [len(c) for c in first] == sorted((len(c) for c in first), reverse=True)


def test_tooltips_wrap_long_unbroken_strings(cstore: Store) -> None:
    """Both pages' tooltip rules break a 300-character URL anywhere (issue 25, item 14)."""
    graph = citation_graph(cstore, "reuse")
    canvas = render_map(graph, renderer="canvas")
    rules = re.findall(r"div\.vis-tooltip \{[^}]*\}", canvas)
    assert any("overflow-wrap: anywhere" in r and "pre-wrap" in r for r in rules), rules
    rules = re.findall(r"#tip \{[^}]*\}", render_map(graph, renderer="webgl"))
    assert any("overflow-wrap: anywhere" in r for r in rules), rules


def test_publisher_layout_groups_stories_by_the_manifests_they_cite() -> None:
    """A story citing one of the publisher's manifests sits nearer that manifest than any
    other; stories citing the same set sit together (the old rings made a solid disc)."""
    import math

    from hcgraph.viz.layout import publisher_layout

    g = nx.DiGraph(view="publisher", focus="pub")
    g.add_node("pub", type="Publisher", stories=400)
    for m in range(12):
        g.add_node(f"m{m}", type="Manifest", stories=0)
        g.add_edge(f"m{m}", "pub")
    for k in range(400):
        cited = [f"m{k % 12}"] if k % 5 else [f"m{k % 12}", f"m{(k + 3) % 12}"]
        g.add_node(f"s{k}", type="Story", date=f"2026-01-{1 + k % 28:02d}", newsrooms=["n"])
        for m in cited:
            g.add_edge(f"s{k}", m)
    pos = publisher_layout(g)
    assert set(pos) == set(g)

    def dist(a: str, b: str) -> float:
        return math.dist(pos[a], pos[b])

    manifests = [f"m{m}" for m in range(12)]
    for s in (f"s{k}" for k in range(400) if k % 5):
        (own,) = g.successors(s)
        assert min(manifests, key=lambda m: dist(s, m)) == own, s
    # Stories citing the same pair sit nearer one another than the map's radius / 4.
    radius = max(math.hypot(*p) for p in pos.values())
    pair = [f"s{k}" for k in range(400) if k % 5 == 0 and k % 12 == 0]
    assert len(pair) > 3 and max(dist(a, b) for a in pair for b in pair) < radius / 4
