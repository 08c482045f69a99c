# ruff: noqa: F811 -- the fixtures imported from tests.test_push are parameters here
"""The bulk path of ``hcgraph push`` against a real Oxigraph server (``oxigraph serve``).

A first push (or ``--all``) loads the graphs in chunks through the server's bulk loader
(``POST /store?no_transaction``); these tests check, by asking the server itself, that the
result is exactly the local store — after a first push, after ``--all`` over stale remote
graphs, and after a bulk push cut off in the middle of a chunk — and that the push state
then lets the next push send nothing.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pyoxigraph as ox
import pytest

from hcgraph import Store, ingest_bytes
from hcgraph.push import STATE_FILE, PushOptions, PushState, push_graphs, resolve_endpoint
from tests.conftest import OxigraphServer
from tests.test_push import (  # noqa: F401 -- the fixtures are used by name
    Proxy,
    corpus_docs,
    corpus_store,
    corpus_store_template,
    local_counts,
    push,
    remote_graph,
)

pytestmark = pytest.mark.slow  # a real Oxigraph server

TOTAL = 201 + 4  # the corpus store's story graphs and shared graphs


def assert_exact(server: OxigraphServer, store_dir: Path) -> None:
    """The server holds exactly the local store's quads: nothing missing, nothing stale (its
    whole dataset in one GSP ``GET``; each test starts with an emptied server)."""
    response = httpx.get(
        f"{server.url}/store", headers={"Accept": "application/n-quads"}, timeout=120
    )
    response.raise_for_status()
    remote = set(ox.parse(response.content, format=ox.RdfFormat.N_QUADS))
    with Store(store_dir, read_only=True) as st:
        assert remote == set(st.ox)
    assert server.graph_counts() == local_counts(store_dir)


def recorded(store_dir: Path, endpoint: str) -> dict[str, str]:
    state = json.loads((store_dir / STATE_FILE).read_text())
    graphs: dict[str, str] = state["endpoints"][endpoint]["graphs"]
    return graphs


def test_first_push_goes_in_bulk_and_the_next_sends_nothing(
    oxigraph: OxigraphServer,
    corpus_store: Path,
    invoke: Any,
):
    with Proxy(oxigraph.url) as proxy:
        first = push(invoke, corpus_store, proxy.url, "--bulk", "always", "--verify")
        assert first.exit_code == 0, first.output
        assert f"pushed {TOTAL} graphs" in first.output and "via bulk load in" in first.output
        assert "all match" in first.output
        # One graph list, then a few large POSTs, not a PUT per graph.
        assert "PUT" not in proxy.methods and 2 <= proxy.methods["POST"] <= 10, proxy.methods
        assert_exact(oxigraph, corpus_store)
        assert len(recorded(corpus_store, proxy.url)) == TOTAL

        again = push(invoke, corpus_store, proxy.url, "--bulk", "always")
        assert again.exit_code == 0, again.output
        assert (
            "pushed 0 graphs (0 triples)" in again.output and f"{TOTAL} unchanged" in again.output
        )


def test_auto_keeps_a_small_push_per_graph_and_never_forces_it(
    oxigraph: OxigraphServer,
    corpus_store: Path,
    invoke: Any,
):
    with Proxy(oxigraph.url) as proxy:
        auto = push(invoke, corpus_store, proxy.url)  # 205 graphs: under BULK_MIN_GRAPHS
        assert auto.exit_code == 0, auto.output
        assert proxy.methods == {"PUT": TOTAL}
        never = push(invoke, corpus_store, proxy.url, "--all", "--bulk", "never")
        assert never.exit_code == 0, never.output
        assert proxy.methods == {"PUT": 2 * TOTAL}
        assert "via gsp" in never.output


def test_all_in_bulk_replaces_stale_remote_graphs(
    oxigraph: OxigraphServer,
    corpus_store: Path,
    corpus_docs: list[tuple[bytes, str]],
    invoke: Any,
):
    """``--all`` over a server holding older versions: the graphs are dropped, then loaded
    whole; no old triple survives (the bulk loader alone would only add)."""
    assert push(invoke, corpus_store, oxigraph.url, "--bulk", "never").exit_code == 0
    raw, iri = corpus_docs[3]
    old = remote_graph(oxigraph, iri)
    story = json.loads(raw)
    story["headline"] = "A headline the second version has"
    with Store(corpus_store) as st:  # a new version of the story
        assert (
            ingest_bytes(st, [(json.dumps(story).encode(), iri)], replace=True).results[0].status
            == "replaced"
        )
    # Someone else's triple in one of our graphs: --all must leave exactly the local graph.
    other = sorted(local_counts(corpus_store))[-1]
    stale = "<urn:stale:s> <urn:stale:p> <urn:stale:o> .\n"
    httpx.post(
        f"{oxigraph.url}/store", params={"graph": other}, content=stale,
        headers={"Content-Type": "application/n-triples"},
    ).raise_for_status()  # fmt: skip

    with Proxy(oxigraph.url) as proxy:
        forced = push(invoke, corpus_store, proxy.url, "--all", "--bulk", "always", "--verify")
        assert forced.exit_code == 0, forced.output
        assert "PUT" not in proxy.methods, proxy.methods
    assert "all match" in forced.output and "via bulk load" in forced.output
    assert_exact(oxigraph, corpus_store)
    assert remote_graph(oxigraph, iri) != old


class CutOff(httpx.AsyncBaseTransport):
    """The real transport, except that bulk request number ``cut`` reaches the server only
    in part — its first half of graphs, loaded by the server — and then the connection is
    lost: a push stopped in the middle of a non-atomic chunk."""

    def __init__(self, cut: int) -> None:
        self.inner = httpx.AsyncHTTPTransport()
        self.cut = cut
        self.bulk = 0
        self.partial: bytes = b""

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if request.method == "POST" and "no_transaction" in request.url.query.decode():
            self.bulk += 1
            if self.bulk == self.cut:
                body = await request.aread()
                blocks = body.split(b"}\n<")
                self.partial = b"}\n<".join(blocks[: len(blocks) // 2]) + b"}\n"
                kind = {"Content-Type": request.headers["Content-Type"]}
                half = httpx.Request("POST", request.url, headers=kind, content=self.partial)
                answer = await self.inner.handle_async_request(half)
                await answer.aread()
                assert answer.status_code == 204, answer.status_code
                raise httpx.ConnectError("connection lost mid-chunk", request=request)
        return await self.inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self.inner.aclose()


def test_bulk_push_cut_off_mid_chunk_is_retried_exactly(
    oxigraph: OxigraphServer,
    corpus_store: Path,
    corpus_docs: list[tuple[bytes, str]],
):
    endpoint = resolve_endpoint(oxigraph.url)
    options = PushOptions(bulk="always", bulk_bytes=1 << 20, retries=0, concurrency=1)
    cut = CutOff(cut=4)
    with Store(corpus_store, read_only=True) as st:
        report = push_graphs(st, endpoint, options, transport=cut)
    assert report.aborted is not None and "cannot reach" in report.aborted
    acked = recorded(corpus_store, endpoint.url)
    assert 0 < len(acked) == report.pushed < TOTAL
    # The server holds part of the cut chunk: graphs the state does not count as pushed.
    on_server = set(oxigraph.graph_counts())
    partial = sorted(on_server - set(acked))
    assert partial, "the cut chunk left nothing on the server"

    # Before the rerun, one of those half-sent stories changes locally.
    raw, url = next((raw, url) for raw, url in corpus_docs if url in partial)
    story = json.loads(raw)
    story["headline"] = "Changed after the cut"
    with Store(corpus_store) as st:
        assert (
            ingest_bytes(st, [(json.dumps(story).encode(), url)], replace=True).results[0].status
            == "replaced"
        )

    with Store(corpus_store, read_only=True) as st:
        rerun = push_graphs(st, endpoint, PushOptions(bulk="always", verify=True))
    assert rerun.ok and rerun.verify is not None and rerun.verify.ok, rerun
    assert rerun.bulk == rerun.pushed >= TOTAL - len(acked)
    assert_exact(oxigraph, corpus_store)  # replaced, not added to: nothing stale
    with Store(corpus_store, read_only=True) as st:
        third = push_graphs(st, endpoint, PushOptions(), state=PushState.for_store(corpus_store))
    assert third.pushed == 0 and third.unchanged == TOTAL
