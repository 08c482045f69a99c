"""The raw archive out as WARC records in a WACZ, and back in: `warcio check` and `wacz
validate` pass, every body and fetch record round-trips, the graph rebuilt from the WACZ
has the crawled graph's per-graph digests, re-fetches are revisits, hostile URLs, headers
and bodies stay inert, and pywb replays a story. Real loopback crawls throughout."""

from __future__ import annotations

import contextlib
import datetime as dt
import gzip
import hashlib
import io
import json
import shutil
import subprocess
import sys
import time
import urllib.request
import zipfile
from argparse import Namespace
from collections import defaultdict
from pathlib import Path

import pytest

from hcgraph.archive import Archive, FetchRecord
from hcgraph.errors import ArchiveError, InputError
from hcgraph.store import Store
from tests.crawlserver import CrawlServer, Reply, Site, page, story

warcio = pytest.importorskip("warcio")
wacz_main = pytest.importorskip("wacz.main")

from warcio.archiveiterator import ArchiveIterator  # noqa: E402
from warcio.checker import Checker  # noqa: E402

from hcgraph.webarchive import (  # noqa: E402
    archive_from_wacz,
    export_wacz,
    read_warc,
    rebuild_from_wacz,
    write_warc,
)

HOSTILE_404 = (
    b"\r\n\r\nWARC/1.1\r\nWARC-Type: response\r\nContent-Length: 5\r\n\r\nevil\n"
    b"HCA1 B " + b"0" * 64 + b" 4 - 0\n\xff\xfe\x00\x1f\x8b not utf-8 <script>x</script>"
)


def graph_digests(store_dir: Path) -> dict[str, str]:
    """SHA-256 of each named graph's sorted N-Quads lines."""
    graphs: dict[str, list[str]] = defaultdict(list)
    with Store(store_dir, read_only=True) as st:
        for quad in st.ox:
            graphs[str(quad.graph_name)].append(str(quad))
    return {
        name: hashlib.sha256("\n".join(sorted(lines)).encode()).hexdigest()
        for name, lines in graphs.items()
    }


@pytest.fixture(scope="module")
def crawled(crawl_server: CrawlServer, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store crawled three times: b revised, c re-fetched unchanged without validators
    (a 200 with the same body), a and e answered 304, d gone twice (withdrawn), e gzipped,
    and a 404 page of hostile bytes."""
    store = tmp_path_factory.mktemp("crawled") / "store"
    site = Site(crawl_server)
    hostile = "x%0D%0AWARC-Type:%20evil/\u00e9"
    site.add("a", story("a", page("b"), page("c"), page("d"), page("e"), page(hostile)))
    site.add("b", story("b", headline="first \u202eversion\x1b[31m"))
    site.add("c", story("c"), etag=False)
    site.add("d", story("d"))
    site.add("e", story("e", headline="zipped"), gzip=True)
    crawl_server.route(
        site.path("x%0D%0AWARC-Type:%20evil/%C3%A9"),
        Reply(404, HOSTILE_404, {"Content-Type": "text/x"}),
    )
    site.crawl(store)
    # A CDXJ index stamps captures to the second: two captures of one URL within a second are
    # one moment to a replay tool (pywb then serves either). Real re-crawls are far apart.
    time.sleep(1.0 - time.time() % 1.0 + 0.01)
    site.add("b", story("b", headline="second version"))
    site.add("d", b"gone", status=404)
    site.crawl(store)
    site.crawl(store)
    return store


@pytest.fixture(scope="module")
def exported(crawled: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wacz") / "crawl.wacz"
    report = export_wacz(out, crawled)
    assert report.size == out.stat().st_size and not report.warc.unreadable
    return out


def _warc_bytes(wacz: Path) -> bytes:
    with zipfile.ZipFile(wacz) as package:
        return package.read("archive/data.warc.gz")


def test_the_warc_passes_warcio_check(exported: Path, tmp_path: Path) -> None:
    warc = tmp_path / "data.warc.gz"
    warc.write_bytes(_warc_bytes(exported))
    said = io.StringIO()
    with contextlib.redirect_stdout(said):
        code = Checker(Namespace(inputs=[str(warc)], verbose=True)).process_all()
    assert code == 0, said.getvalue()
    assert "digest pass" in said.getvalue() and "failed" not in said.getvalue()
    # and the command line tool agrees
    run = subprocess.run(
        [sys.executable, "-m", "warcio.cli", "check", str(warc)], capture_output=True, text=True
    )
    assert run.returncode == 0, run.stdout + run.stderr


def test_the_wacz_validates_and_lists_its_files_with_digests(exported: Path) -> None:
    # `wacz validate` (py-wacz leaves files open in-process: a subprocess keeps them its own)
    run = subprocess.run(
        [sys.executable, "-m", "wacz", "validate", "-f", str(exported)],
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0 and "is valid" in run.stdout, run.stdout + run.stderr
    with zipfile.ZipFile(exported) as package:
        names = set(package.namelist())
        assert {"archive/data.warc.gz", "indexes/index.cdx.gz", "pages/pages.jsonl"} <= names
        meta = json.loads(package.read("datapackage.json"))
        digest = json.loads(package.read("datapackage-digest.json"))
        assert meta["wacz_version"] == "1.1.1"
        for item in meta["resources"]:
            data = package.read(item["path"])
            assert item["hash"] == "sha256:" + hashlib.sha256(data).hexdigest()
            assert item["bytes"] == len(data)
        assert (
            digest["hash"]
            == "sha256:" + hashlib.sha256(package.read("datapackage.json")).hexdigest()
        )
        assert package.getinfo("archive/data.warc.gz").compress_type == zipfile.ZIP_STORED
        pages = [json.loads(line) for line in package.read("pages/pages.jsonl").splitlines()]
        cdx = gzip.decompress(package.read("indexes/index.cdx.gz")).decode()
    assert pages[0]["format"] == "json-pages-1.0"
    by_url = {p["url"]: p for p in pages[1:]}
    assert by_url[page("b") + "index.json"]["title"] == "first \u202eversion\x1b[31m"
    assert {page(s) + "index.json" for s in "abcde"} <= set(by_url)
    assert "example,site)/stories/b/index.json " in cdx


class _Later(dt.datetime):
    """A clock three years on, for the "now" py-wacz and warcio would stamp."""

    @classmethod
    def now(cls, tz: dt.tzinfo | None = None) -> _Later:  # type: ignore[override]
        return cls(2029, 3, 4, 5, 6, 7, tzinfo=tz)


def test_the_same_archive_gives_the_same_wacz_bytes(
    crawled: Path, exported: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Record ids derive from the fetches, and every date is the newest fetch's: exported
    again at another "now", the file is the same byte for byte."""
    import wacz.main
    import wacz.util
    import wacz.waczindexer
    from warcio.recordbuilder import RecordBuilder

    later = lambda: _Later.now(dt.UTC).timetuple()[:6]  # noqa: E731
    for module in (wacz.main, wacz.util, wacz.waczindexer):
        monkeypatch.setattr(module, "now", later)
    monkeypatch.setattr(wacz.waczindexer, "datetime", Namespace(datetime=_Later, UTC=dt.UTC))
    monkeypatch.setattr(
        RecordBuilder, "_make_warc_date", classmethod(lambda cls, use_micros=False: "2029-03-04")
    )
    again = export_wacz(tmp_path / "again.wacz", crawled).path
    assert again.read_bytes() == exported.read_bytes()
    newest = max(r.time for r in Archive(crawled / "archive").records()).astimezone(dt.UTC)
    with zipfile.ZipFile(again) as package:
        created = json.loads(package.read("datapackage.json"))["created"]
        times = {info.date_time for info in package.infolist()}
        modes = {info.external_attr >> 16 for info in package.infolist()}
        warcinfo = next(ArchiveIterator(io.BytesIO(package.read("archive/data.warc.gz"))))
    assert created == newest.strftime("%Y-%m-%dT%H:%M:%SZ")
    assert times == {newest.replace(second=newest.second // 2 * 2).timetuple()[:6]}
    assert modes == {0o644}
    assert warcinfo.rec_headers.get_header("WARC-Date") == newest.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    ids = [
        rec.rec_headers.get_header("WARC-Record-ID")
        for rec in ArchiveIterator(io.BytesIO(_warc_bytes(again)))
    ]
    assert len(set(ids)) == len(ids) > 20  # one id a record still


def test_the_pinned_package_is_the_same_on_any_platform(
    exported: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Pinning is the same bytes wherever it runs: each entry says Unix made it (its mode
    bits are Unix's), not the platform's default (MS-DOS on Windows); and pinning a pinned
    package again changes nothing."""
    from hcgraph.webarchive import _pin

    with zipfile.ZipFile(exported) as package:
        created = json.loads(package.read("datapackage.json"))["created"]
        assert {info.create_system for info in package.infolist()} == {3}
    made = dt.datetime.strptime(created, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=dt.UTC)
    monkeypatch.setattr(sys, "platform", "win32")  # what zipfile.ZipInfo reads
    _pin(exported, tmp_path / "there.wacz", made)
    monkeypatch.undo()
    assert (tmp_path / "there.wacz").read_bytes() == exported.read_bytes()


def test_source_date_epoch_dates_the_wacz_in_any_process(
    crawled: Path, run_cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With ``SOURCE_DATE_EPOCH`` (the CLI's runs set 1790000000), the package is dated by
    it, and the CLI's export in a process of its own writes the bytes this one does."""
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1790000000")
    here = export_wacz(tmp_path / "here.wacz", crawled).path
    result = run_cli("archive", "export", "--wacz", tmp_path / "there.wacz", "--store", crawled)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "there.wacz").read_bytes() == here.read_bytes()
    with zipfile.ZipFile(here) as package:
        assert json.loads(package.read("datapackage.json"))["created"] == "2026-09-21T14:13:20Z"
        assert {info.date_time for info in package.infolist()} == {(2026, 9, 21, 14, 13, 20)}
        warcinfo = next(ArchiveIterator(io.BytesIO(package.read("archive/data.warc.gz"))))
    assert warcinfo.rec_headers.get_header("WARC-Date") == "2026-09-21T14:13:20.000000Z"


def test_re_fetches_are_revisits(exported: Path) -> None:
    """c (no validators, same body) is an identical-payload-digest revisit; a 304 is a
    server-not-modified revisit; each refers to the first response of its URL; the revised
    story is a second response."""
    responses: dict[str, list[str]] = defaultdict(list)
    revisits: list[tuple[str, str, str, str]] = []
    for rec in ArchiveIterator(io.BytesIO(_warc_bytes(exported))):
        uri = rec.rec_headers.get_header("WARC-Target-URI")
        if rec.rec_type == "response":
            responses[uri].append(rec.rec_headers.get_header("WARC-Record-ID"))
        elif rec.rec_type == "revisit":
            profile = rec.rec_headers.get_header("WARC-Profile").rsplit("/", 1)[-1]
            refers = rec.rec_headers.get_header("WARC-Refers-To")
            revisits.append((uri, profile, rec.http_headers.get_statuscode(), refers))
    a, b, c = (page(s) + "index.json" for s in "abc")
    assert revisits.count((c, "identical-payload-digest", "200", responses[c][0])) == 2
    assert (a, "server-not-modified", "304", responses[a][0]) in revisits
    assert all(refers in responses[uri] for uri, _, _, refers in revisits)
    assert len(responses[b]) == 2 and len(responses[c]) == 1


def test_every_body_and_fetch_record_round_trips(
    crawled: Path, exported: Path, tmp_path: Path
) -> None:
    original = Archive(crawled / "archive")
    read = archive_from_wacz(exported, tmp_path / "back")
    back = Archive(tmp_path / "back")
    assert list(back.records()) == list(original.records())
    shas = {r.sha256 for r in original.records() if r.sha256}
    assert len(shas) >= 6 and read.bodies == shas and not read.damaged and not read.foreign
    for sha in shas:
        body = back.get_body(sha)
        assert hashlib.sha256(body).digest() == hashlib.sha256(original.get_body(sha)).digest()
    assert HOSTILE_404 in {back.get_body(s) for s in shas}


def test_rebuild_from_the_wacz_gives_the_same_graphs(
    crawled: Path, exported: Path, run_cli, tmp_path: Path
) -> None:
    want = graph_digests(crawled)
    assert len(want) >= 5
    with Store(crawled, read_only=True) as st:
        assert page("d") in st.withdrawn_stories()  # the withdrawal is in the graph
    report = rebuild_from_wacz(tmp_path / "lib", exported)
    assert report.exit_code == 0 and report.stories == 5 and report.withdrawn == 1
    assert graph_digests(tmp_path / "lib") == want
    assert not (tmp_path / "lib" / ".wacz-archive").exists()
    result = run_cli("rebuild", "--from", exported, "--store", tmp_path / "cli")
    assert result.returncode == 0, result.stderr
    assert "rebuilt 5 stories, 1 withdrawn" in result.stdout
    # the CLI runs with SOURCE_DATE_EPOCH set (conftest): compare with its rebuild from the
    # raw archive itself
    plain = run_cli("rebuild", "--archive", crawled / "archive", "--store", tmp_path / "raw")
    assert plain.returncode == 0, plain.stderr
    assert graph_digests(tmp_path / "cli") == graph_digests(tmp_path / "raw")


def test_cli_export_then_rebuild(crawled: Path, run_cli, tmp_path: Path) -> None:
    out = tmp_path / "out.wacz"
    result = run_cli("archive", "export", "--wacz", out, "--store", crawled)
    assert result.returncode == 0, result.stderr
    assert "revisit" in result.stdout and "-> " in result.stdout and out.is_file()
    both = run_cli("rebuild", "--from", out, "--archive", crawled / "archive", "--store", tmp_path)
    assert both.returncode == 2 and "give one" in both.stderr
    unwritable = run_cli("archive", "export", "--wacz", "/proc/nope/x.wacz", "--store", crawled)
    lines = unwritable.stderr.strip().splitlines()
    assert unwritable.returncode == 1 and len(lines) == 1
    assert lines[0].startswith("error: /proc/nope/x.wacz: cannot write")


def _hostile_archive(directory: Path) -> tuple[Archive, list[FetchRecord], list[bytes]]:
    archive = Archive(directory)
    bodies = [HOSTILE_404, b'{"x": "\r\n\r\nWARC/1.0\r\n"}', b""]
    urls = [
        "https://e.example/a b\r\nWARC-Type: revisit\r\n\u00e9?q=<\"'>#f",
        "https://e.example/\u202e\x1b[31m/\x00",
        "https://e.example/empty",
    ]
    records = []
    for n, (url, body) in enumerate(zip(urls, bodies, strict=True)):
        sha = archive.put_body(body)
        record = FetchRecord(
            url=url, final_url=url, fetch_url=url, status=200,
            fetched_at=f"2026-12-0{n + 1}T10:00:00.123456+02:00", sha256=sha, size=len(body),
            headers={"content-type": "text/html\r\nWARC-Type: x", "etag": '"\x00\x7f"',
                     "x-evil\r\nWARC-Type: revisit": "1",
                     "content-encoding": "br", "content-length": "99999"},
            etag='"\x00\x7f"', redirects=[url + "/\r\n"],
        )  # fmt: skip
        archive.add_record(record)
        records.append(record)
    failed = FetchRecord(
        url=urls[0], final_url=urls[0], fetch_url=urls[0], status=None,
        fetched_at="2026-12-09T00:00:00+00:00", error="timeout\r\nWARC-Type: response",
    )  # fmt: skip
    archive.add_record(failed)
    archive.add_record(
        FetchRecord(**{**records[0].__dict__, "fetched_at": failed.fetched_at.replace("09", "10")})
    )
    archive.close()
    return archive, [*records, failed], bodies


def test_hostile_urls_headers_and_bodies_stay_inert(tmp_path: Path) -> None:
    archive, records, bodies = _hostile_archive(tmp_path / "a")
    buffer = io.BytesIO()
    report = write_warc(archive, buffer)
    assert report.records["response"] == 3 and report.records["revisit"] == 1
    assert report.records["metadata"] == 5  # the failed fetch is a metadata record only
    kinds = []
    for rec in ArchiveIterator(io.BytesIO(buffer.getvalue()), check_digests=True):
        rec.content_stream().read()
        assert rec.digest_checker.passed is not False
        kinds.append(rec.rec_type)
        for name, value in rec.rec_headers.headers:
            assert not any(ch in value for ch in "\r\n\x00 ") or name == "Content-Type"
        if rec.http_headers is not None:
            assert all("\r" not in v and "\n" not in v for _, v in rec.http_headers.headers)
            assert rec.http_headers.get_header("Content-Encoding") is None
            assert all(":" not in n and " " not in n for n, _ in rec.http_headers.headers)
    assert kinds.count("warcinfo") == 1 and "resource" not in kinds
    back = Archive(tmp_path / "b")
    read = read_warc(io.BytesIO(buffer.getvalue()), back)
    back.close()
    assert list(back.records()) == list(archive.records())
    assert {back.get_body(r.sha256) for r in records if r.sha256} == set(bodies)
    assert not read.damaged


def test_a_body_damaged_on_disk_is_named_by_export_and_by_rebuild(
    crawl_server: CrawlServer, run_cli, tmp_path: Path
) -> None:
    """Zeros over one archived body: the export keeps its fetch as a metadata record and
    exits 3 naming it; the rebuild from the WACZ names it unreadable, as from the archive."""
    site = Site(crawl_server)
    site.add("a", story("a", page("b")))
    site.add("b", story("b", headline="the damaged one"))
    site.crawl(tmp_path / "store")
    (pack,) = (tmp_path / "store" / "archive" / "packs").glob("*.pack")
    data = pack.read_bytes()
    at = data.index(b"the damaged one")
    pack.write_bytes(data[:at] + b"\0" * 15 + data[at + 15 :])
    out = tmp_path / "d.wacz"
    result = run_cli("archive", "export", "--wacz", out, "--store", tmp_path / "store")
    assert result.returncode == 3 and "Traceback" not in result.stderr
    assert f"unreadable body: {page('b')}index.json" in result.stderr
    rebuilt = run_cli("rebuild", "--from", out, "--store", tmp_path / "back")
    assert rebuilt.returncode == 3
    assert f"unreadable body: {page('b')}index.json" in rebuilt.stderr
    assert "rebuilt 1 stories" in rebuilt.stdout


def test_a_damaged_wacz_is_refused(exported: Path, tmp_path: Path) -> None:
    data = bytearray(exported.read_bytes())
    at = data.index(b"WARC/1.1") if b"WARC/1.1" in data else len(data) // 2
    data[at + 200] ^= 0xFF  # inside the stored (not deflated) WARC
    damaged = tmp_path / "damaged.wacz"
    damaged.write_bytes(bytes(data))
    with pytest.raises((ArchiveError, InputError), match=r"digest|not a WACZ|cannot be read"):
        archive_from_wacz(damaged, tmp_path / "x")


def test_not_a_wacz_is_one_line(run_cli, tmp_path: Path) -> None:
    bogus = tmp_path / "x.wacz"
    bogus.write_bytes(b"PK\x03\x04 not really")
    result = run_cli("rebuild", "--from", bogus, "--store", tmp_path / "s")
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert result.stderr.startswith("error: ") and "not a WACZ file" in result.stderr
    assert not (tmp_path / "s").exists()
    nothing = run_cli("archive", "export", "--wacz", tmp_path / "o.wacz", "--store", tmp_path)
    assert nothing.returncode == 1 and "no raw archive here" in nothing.stderr


def test_a_wacz_from_another_crawler_rebuilds(crawled: Path, tmp_path: Path) -> None:
    """A WARC of responses only (no hcgraph fetch records), packaged by py-wacz: each
    response is read as one fetch, and the stories come back."""
    from warcio.statusandheaders import StatusAndHeaders
    from warcio.warcwriter import WARCWriter

    warc = tmp_path / "other.warc.gz"
    with warc.open("wb") as handle:
        writer = WARCWriter(handle, gzip=True)
        for slug in "ab":
            body = story(slug)
            http = StatusAndHeaders("200 OK", [("Content-Type", "application/json")], "HTTP/1.1")
            writer.write_record(
                writer.create_warc_record(
                    page(slug) + "index.json",
                    "response",
                    payload=io.BytesIO(body),
                    length=len(body),
                    http_headers=http,
                )
            )
    out = tmp_path / "other.wacz"
    with contextlib.redirect_stdout(io.StringIO()):
        assert wacz_main.main(["create", "-o", str(out), str(warc)]) == 0
    report = rebuild_from_wacz(tmp_path / "store", out)
    assert report.stories == 2 and report.exit_code == 0


@pytest.mark.slow
def test_pywb_replays_a_story_from_the_wacz(exported: Path, crawled: Path, tmp_path: Path) -> None:
    """A collection made from the exported WACZ, served by pywb's ``wayback`` on loopback:
    a story's replay URL (its first capture) gives back the archived bytes."""
    manager, wayback = shutil.which("wb-manager"), shutil.which("wayback")
    if manager is None or wayback is None:
        pytest.skip("pywb is not installed")
    from tests.conftest import free_port

    subprocess.run([manager, "init", "hc"], cwd=tmp_path, check=True, capture_output=True)
    subprocess.run(
        [manager, "add", "--unpack-wacz", "hc", str(exported)],
        cwd=tmp_path, check=True, capture_output=True,
    )  # fmt: skip
    port = free_port()
    server = subprocess.Popen(
        [wayback, "-p", str(port), "-b", "127.0.0.1"],
        cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    want = next(
        Archive(crawled / "archive").get_body(r.sha256)
        for r in Archive(crawled / "archive").records()
        if r.url == page("b") + "index.json" and r.sha256
    )
    url = f"http://127.0.0.1:{port}/hc/2000id_/{page('b')}index.json"
    try:
        for _ in range(100):
            try:
                with urllib.request.urlopen(url, timeout=10) as reply:
                    status, got = reply.status, reply.read()
                break
            except OSError:
                time.sleep(0.2)
        else:
            pytest.fail("pywb did not answer")
    finally:
        server.terminate()
        server.wait(timeout=10)
    assert status == 200 and got == want
    assert b"first \\u202eversion" in got


def test_a_body_larger_than_the_cap_is_skipped_not_read_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A WACZ from elsewhere can decode to anything: a body over ``MAX_BODY`` is named and
    skipped, the rest read."""
    import hcgraph.webarchive as warc_module

    archive, _, bodies = _hostile_archive(tmp_path / "a")
    buffer = io.BytesIO()
    write_warc(archive, buffer)
    monkeypatch.setattr(warc_module, "MAX_BODY", 40)
    back = Archive(tmp_path / "b")
    read = read_warc(io.BytesIO(buffer.getvalue()), back)
    back.close()
    assert len(read.too_large) == 1 and read.too_large[0].startswith("https://e.example/a%20b")
    assert read.bodies == {hashlib.sha256(b).hexdigest() for b in bodies if len(b) <= 40}


def test_a_local_seed_file_is_a_resource_record_and_rebuilds(
    crawl_server: CrawlServer, tmp_path: Path
) -> None:
    """A crawl seeded with a local story file archives it as a file: fetch: in the WARC it
    is a ``resource`` record (no request, no page), and the rebuild from the WACZ keeps it."""
    site = Site(crawl_server)
    site.add("a", story("a"))
    local = tmp_path / "local.json"
    local.write_bytes(story("l", page("a")))
    site.crawl(tmp_path / "store", str(local))
    out = export_wacz(tmp_path / "l.wacz", tmp_path / "store")
    assert out.warc.records["resource"] == 1 and out.warc.records["request"] == 1
    assert [p["url"] for p in out.warc.pages] == [page("a") + "index.json"]
    rebuilt = rebuild_from_wacz(tmp_path / "back", out.path)
    assert rebuilt.stories == 2 and rebuilt.exit_code == 0
    assert graph_digests(tmp_path / "back") == graph_digests(tmp_path / "store")
