"""Review of crawl/push/fetch (2026-12-07): a body nested deeper than Python's recursion limit.

``json.loads`` raises ``RecursionError`` (not a ``ValueError``) for ``[[[[…`` deep enough; two
readers of bodies a server sent caught only ``ValueError``: the manifest reply parser (one
hostile reply ended ``hcgraph manifests fetch`` with a traceback) and the WACZ export's page
titles (a crawled body the crawl had refused still ended ``archive export``).
"""

from __future__ import annotations

import io
from pathlib import Path

import httpx
import pytest

from hcgraph.claims.fetching import manifest_archive, read_saved
from hcgraph.claims.reply import parse_reply
from hcgraph.errors import ReplyShapeError
from tests.crawlserver import CrawlServer, Site, page, story
from tests.manifestserver import manifest_id
from tests.test_manifests_fetch import Api, ids, run

DEEP = b"[" * 200_000 + b"]" * 200_000


def test_parse_reply_names_a_deep_nesting() -> None:
    with pytest.raises(ReplyShapeError) as info:
        parse_reply(b'{"manifest_id": ' + DEEP + b"}", "x.json")
    assert info.value.json_path == "" and "deep" in info.value.reason


def test_a_deep_reply_is_bad_shape_and_the_run_goes_on(tmp_path: Path) -> None:
    api = Api(**{manifest_id(1): [httpx.Response(200, content=DEEP)]})
    report, _archive = run(api, manifest_archive(tmp_path), ids(1, 2))
    assert report.fetched == ids(2)
    assert [(i, p) for i, p, _ in report.bad_shape] == [(manifest_id(1), "")]


def test_a_deep_saved_reply_is_bad_shape(tmp_path: Path) -> None:
    saved = tmp_path / "saved"
    saved.mkdir()
    (saved / f"{manifest_id(1)}.json").write_bytes(DEEP)
    report = read_saved(ids(1), saved, manifest_archive(tmp_path / "store"))
    assert [(i, p) for i, p, _ in report.bad_shape] == [(manifest_id(1), "")]


@pytest.mark.slow
def test_export_of_a_crawl_that_met_a_deep_body(crawl_server: CrawlServer, tmp_path: Path) -> None:
    pytest.importorskip("warcio")
    from hcgraph.archive import Archive
    from hcgraph.webarchive import write_warc

    site = Site(crawl_server)
    site.add("a", story("a", page("b")))
    site.add("b", DEEP)
    report = site.crawl(tmp_path / "store")
    assert [f["url"] for f in report.failures] == [page("b") + "index.json"]
    archive = Archive(tmp_path / "store" / "archive")
    buffer = io.BytesIO()
    warc = write_warc(archive, buffer)
    archive.close()
    assert warc.records["response"] == 2
    titles = {p["url"]: p["title"] for p in warc.pages}
    assert titles[page("b") + "index.json"] == page("b") + "index.json"  # no headline: the URL


@pytest.mark.parametrize(
    "payload",
    [b"[]", b"{}", b'{"url": 5, "final_url": "u", "fetch_url": "u", "status": 200, '
     b'"fetched_at": "2026-12-07T10:00:00+00:00"}', DEEP],
    ids=["a-list", "no-fields", "url-a-number", "deep"],
)  # fmt: skip
def test_a_wacz_fetch_record_of_the_wrong_shape_is_one_archive_error(
    tmp_path: Path, payload: bytes
) -> None:
    """A WACZ from elsewhere (``rebuild --from``) whose metadata record says it is an hcgraph
    fetch record but is not one: a TypeError/AttributeError/RecursionError traceback."""
    pytest.importorskip("warcio")
    from warcio.warcwriter import WARCWriter

    from hcgraph.archive import Archive
    from hcgraph.errors import ArchiveError
    from hcgraph.webarchive import FETCH_RECORD_TYPE, read_warc

    buffer = io.BytesIO()
    writer = WARCWriter(buffer, gzip=True)
    record = writer.create_warc_record(
        "urn:hcgraph:fetch:x", "metadata", payload=io.BytesIO(payload), length=len(payload),
        warc_content_type=FETCH_RECORD_TYPE,
    )  # fmt: skip
    writer.write_record(record)
    buffer.seek(0)
    with Archive(tmp_path / "a") as archive, pytest.raises(ArchiveError) as info:
        read_warc(buffer, archive)
    assert "urn:hcgraph:fetch:x" in str(info.value)
    assert "\n" not in str(info.value)
