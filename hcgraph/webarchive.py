"""The raw archive as WARC 1.1 records (warcio) in a WACZ 1.1.1 package (py-wacz), and back.

Each fetch's ``metadata`` record holds the fetch record itself (:data:`FETCH_RECORD_TYPE`),
so a rebuild from the WARC replays the same fetches; a WARC of another crawler is read as one
fetch per response, resource and revisit. The records and the package: docs/crawling.md.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import hashlib
import http.client
import importlib
import io
import json
import os
import re
import shutil
import tempfile
import uuid
import zipfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import IO, Any, cast
from urllib.parse import quote, urlsplit

from ._io import ensure_dir
from ._version import __version__
from .archive import Archive, FetchRecord
from .errors import ArchiveError, ExportError, InputError, OutputError
from .ingest import Failure
from .rebuilding import RebuildReport, rebuild
from .store import source_date_epoch

__all__ = [
    "FETCH_RECORD_TYPE",
    "MAX_BODY",
    "ReadReport",
    "WaczReport",
    "WarcReport",
    "archive_from_wacz",
    "export_wacz",
    "read_warc",
    "rebuild_from_wacz",
    "write_warc",
]

#: Content type of the metadata record carrying a :class:`~hcgraph.archive.FetchRecord`.
FETCH_RECORD_TYPE = "application/vnd.hcgraph.fetch-record+json"

_NOT_MODIFIED = "http://netpreserve.org/warc/1.1/revisit/server-not-modified"
# A body is archived decoded, so the headers that described its transfer do not hold.
_TRANSFER = frozenset({"content-length", "content-encoding", "transfer-encoding"})
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
# Kept as they are in a WARC-Target-URI: RFC 3986's reserved characters and ``%``; anything
# else (a control character, a space, non-ASCII) is percent-encoded as UTF-8, so a hostile URL
# cannot add a header line. The exact URL stays in the fetch's metadata record.
_URI_SAFE = "!#$%&'()*+,/:;=?@[]~"
#: The largest body read back from a WARC (decoded): an archive pack's size.
MAX_BODY = 256 * 1024 * 1024
_NOT_TOKEN = re.compile(r"[^!#$%&'*+.^_`|~0-9A-Za-z-]")  # what a header name cannot hold
_WARC_NAME = "data.warc.gz"
_TITLE = "hcgraph crawl archive"
# The namespace of the WARC-Record-IDs derived from content (uuid5): a fixed random UUID.
_RECORD_IDS = uuid.UUID("6f0c5a4e-2d1b-4c57-9a43-5b8e0d7c1f26")
_DATE = "%Y-%m-%dT%H:%M:%S.%fZ"
_EPOCH = dt.datetime.fromtimestamp(0, dt.UTC)


def load(*names: str) -> ModuleType:
    """The first of the modules ``names`` (the ``archive`` extra: warcio, py-wacz), imported
    on first use; their absence is a one-line user error, not a traceback."""
    try:
        modules = [importlib.import_module(name) for name in names]
    except ImportError as exc:
        raise ExportError(
            f"WARC/WACZ needs {exc.name or names[0]}: pip install 'hcgraph[archive]'"
        ) from None
    return modules[0]


def _warcio() -> ModuleType:
    return load(
        "warcio",
        "warcio.warcwriter",
        "warcio.archiveiterator",
        "warcio.statusandheaders",
        "warcio.exceptions",
    )


@dataclass
class WarcReport:
    """What :func:`write_warc` wrote: WARC ``records`` per type, ``pages`` (the first 200
    capture of each URL, as ``pages.jsonl`` lines), the URLs whose body the archive could
    not give back (``unreadable``: their fetch is a metadata record only), and the WARC's
    date (``made``: ``SOURCE_DATE_EPOCH`` when set, else the newest fetch's time)."""

    fetches: int = 0
    records: Counter[str] = field(default_factory=Counter)
    pages: list[dict[str, str]] = field(default_factory=list)
    unreadable: list[str] = field(default_factory=list)
    made: dt.datetime = _EPOCH


def _header(value: str) -> str:
    return _CONTROL.sub(" ", value)


class _Writer:
    """Turns fetch records into WARC records (one writer per WARC file, its warcinfo first)."""

    def __init__(self, archive: Archive, out: IO[bytes], made: dt.datetime, key: str) -> None:
        self.archive = archive
        self.warcio = _warcio()
        self.writer = self.warcio.warcwriter.WARCWriter(out, gzip=True, warc_version="1.1")
        self.report = WarcReport(made=made)
        # (URI, body) of each response written → its record id and date, for revisits
        self.first: dict[bytes, tuple[str, str]] = {}
        self.paged: set[str] = set()
        self.fetch_key = ""  # the current fetch record's digest: its records' ids derive from it
        info = {
            "software": f"hcgraph {__version__}",
            "format": "WARC File Format 1.1",
            "description": "the raw archive of an hcgraph crawl",
        }
        warcinfo = self.writer.create_warcinfo_record(_WARC_NAME, info)
        warcinfo.rec_headers.replace_header("WARC-Record-ID", _record_id(f"warcinfo {key}"))
        warcinfo.rec_headers.replace_header("WARC-Date", made.strftime(_DATE))
        self.writer.write_record(warcinfo)
        self.report.records["warcinfo"] += 1

    def fetch(self, record: FetchRecord) -> None:
        self.report.fetches += 1
        self.fetch_key = hashlib.sha256(record.to_json()).hexdigest()
        date = record.time.astimezone(dt.UTC).strftime(_DATE)
        local = record.url.startswith("file:")
        uri = quote(record.url if local else record.final_url, safe=_URI_SAFE)
        main: Any = None
        if record.error is None and record.sha256 is not None:
            main = self._with_body(record, uri, date, local)
        elif record.error is None and record.status is not None:
            main = self._capture(record, uri, date, b"", False)
        if main is not None and not local:
            self._request(record, uri, date, main)
        self._metadata(record, date, main)

    def _with_body(self, record: FetchRecord, uri: str, date: str, local: bool) -> Any:
        sha = record.sha256
        assert sha is not None
        key = hashlib.blake2b(f"{uri}\0{sha}".encode(), digest_size=16).digest()
        earlier = self.first.get(key)
        if earlier is not None and not local and record.status is not None:
            return self._revisit(record, uri, date, earlier)
        try:
            body = self.archive.get_body(sha)
        except ArchiveError:
            self.report.unreadable.append(record.url)
            return None
        # (a 304 whose earlier body is not in this WARC under this URL: the body here)
        main = self._capture(record, uri, date, body, local)
        self.first[key] = (main.rec_headers.get_header("WARC-Record-ID"), date)
        self._page(record, uri, date, body)
        return main

    def _http_headers(self, record: FetchRecord, body: bytes | None) -> Any:
        status = record.status or 200
        headers = [
            (_NOT_TOKEN.sub("-", name).title(), _header(value))
            for name, value in record.headers.items()
            if name.lower() not in _TRANSFER
        ]
        if body is not None:
            headers.append(("Content-Length", str(len(body))))
        line = f"{status} {http.client.responses.get(status, 'Unknown')}"
        return self.warcio.statusandheaders.StatusAndHeaders(line, headers, protocol="HTTP/1.1")

    def _write(self, uri: str, kind: str, body: bytes | None = None, **options: Any) -> Any:
        if body is not None:
            options.update(payload=io.BytesIO(body), length=len(body))
        options["warc_headers_dict"]["WARC-Record-ID"] = self._id(kind)
        made = self.writer.create_warc_record(uri, kind, **options)
        self.writer.write_record(made)
        self.report.records[kind] += 1
        return made

    def _capture(self, record: FetchRecord, uri: str, date: str, body: bytes, local: bool) -> Any:
        """A ``response`` record of ``body``, or for a local file a ``resource``."""
        fields = {"WARC-Date": date}
        if record.sha256 is not None:
            fields["WARC-Payload-Digest"] = f"sha256:{record.sha256}"
        if local:
            kind = _header(record.headers.get("content-type", "application/json"))
            return self._write(
                uri, "resource", body, warc_content_type=kind, warc_headers_dict=fields
            )
        http_headers = self._http_headers(record, body)
        return self._write(
            uri, "response", body, http_headers=http_headers, warc_headers_dict=fields
        )

    def _revisit(self, record: FetchRecord, uri: str, date: str, earlier: tuple[str, str]) -> Any:
        assert record.sha256 is not None
        refers_id, refers_date = earlier
        main = self.writer.create_revisit_record(
            uri,
            f"sha256:{record.sha256}",
            uri,
            refers_date,
            http_headers=self._http_headers(record, None),
            warc_headers_dict={"WARC-Date": date, "WARC-Record-ID": self._id("revisit")},
        )
        if record.status == 304:
            main.rec_headers.replace_header("WARC-Profile", _NOT_MODIFIED)
        main.rec_headers.add_header("WARC-Refers-To", refers_id)
        self.writer.write_record(main)
        self.report.records["revisit"] += 1
        self._page(record, uri, date, None)
        return main

    def _request(self, record: FetchRecord, uri: str, date: str, main: Any) -> None:
        parts = urlsplit(uri)
        target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        headers = [("Host", parts.netloc), ("Accept", "application/json, */*;q=0.1")]
        asked = self.warcio.statusandheaders.StatusAndHeaders(
            f"GET {target} HTTP/1.1", headers, is_http_request=True
        )
        concurrent = main.rec_headers.get_header("WARC-Record-ID")
        fields = {"WARC-Date": date, "WARC-Concurrent-To": concurrent}
        self._write(uri, "request", http_headers=asked, warc_headers_dict=fields)

    def _metadata(self, record: FetchRecord, date: str, main: Any) -> None:
        fields = {"WARC-Date": date}
        if main is not None:
            fields["WARC-Concurrent-To"] = main.rec_headers.get_header("WARC-Record-ID")
        # Not the fetch's URL: a replay tool looking that URL up must find the response only.
        uri = f"urn:hcgraph:fetch:{record.sort_key}"
        options = {"warc_content_type": FETCH_RECORD_TYPE, "warc_headers_dict": fields}
        self._write(uri, "metadata", record.to_json(), **options)

    def _id(self, kind: str) -> str:
        """The WARC-Record-ID of the current fetch's ``kind`` record (one of each a fetch)."""
        return _record_id(f"{kind} {self.fetch_key}")

    def _page(self, record: FetchRecord, uri: str, date: str, body: bytes | None) -> None:
        if record.status != 200 or uri in self.paged:
            return  # a local file (status None) is no page a replay tool can open
        self.paged.add(uri)
        title = _title(body) if body is not None else None
        self.report.pages.append({"url": uri, "ts": date, "title": title or uri})


def _title(body: bytes) -> str | None:
    """A story's headline, for the page list (None if the body is not a story)."""
    try:
        doc = json.loads(body)
    except (ValueError, RecursionError):  # a hostile body the crawl refused is archived too
        return None
    title = doc.get("headline") if isinstance(doc, dict) else None
    return title if isinstance(title, str) else None


def write_warc(archive: Archive, out: IO[bytes]) -> WarcReport:
    """Write every fetch of ``archive`` to ``out`` as a gzipped WARC 1.1 file.

    The bytes depend on the archive alone (and ``SOURCE_DATE_EPOCH``): record ids derive
    from each fetch record (uuid5), and the warcinfo record is dated ``SOURCE_DATE_EPOCH``
    when set, else by the newest fetch.

    Raises:
        ExportError: warcio is not installed (the ``archive`` extra).
    """
    made, key = _made_at(archive)
    writer = _Writer(archive, out, made, key)
    for record in archive.records():
        writer.fetch(record)
    return writer.report


def _made_at(archive: Archive) -> tuple[dt.datetime, str]:
    """When an export of ``archive`` is dated (``SOURCE_DATE_EPOCH`` when set, else the
    newest fetch's time, else the Unix epoch), and a digest of all its fetch records: the
    same archive gives the same WARC and WACZ bytes, whenever and wherever exported."""
    newest, digest = _EPOCH, hashlib.sha256()
    for record in archive.records():
        newest = max(newest, record.time.astimezone(dt.UTC))
        digest.update(hashlib.sha256(record.to_json()).digest())
    return source_date_epoch() or newest, digest.hexdigest()


def _record_id(name: str) -> str:
    return f"<urn:uuid:{uuid.uuid5(_RECORD_IDS, name)}>"


@dataclass
class ReadReport:
    """What :func:`read_warc` read: records per type, fetches and distinct bodies added,
    records skipped as ``damaged`` (not matching their digest) or ``too_large`` (over
    :data:`MAX_BODY` decoded), and whether the WARC was ``foreign`` (no hcgraph fetch
    records: fetches were read from its responses, resources and revisits)."""

    records: Counter[str] = field(default_factory=Counter)
    fetches: int = 0
    bodies: set[str] = field(default_factory=set)
    damaged: list[str] = field(default_factory=list)
    too_large: list[str] = field(default_factory=list)
    foreign: bool = False


def read_warc(stream: IO[bytes], archive: Archive, report: ReadReport | None = None) -> ReadReport:
    """Add the bodies and fetch records of the WARC in ``stream`` to ``archive``.

    Raises:
        ArchiveError: the stream is not a WARC file.
        ExportError: warcio is not installed (the ``archive`` extra).
    """
    warcio = _warcio()
    reader = _Reader(archive, report or ReadReport())
    try:
        for rec in warcio.archiveiterator.ArchiveIterator(stream, check_digests=True):
            reader.read(rec)
    except (warcio.exceptions.ArchiveLoadFailed, ValueError, OSError, EOFError) as exc:
        raise ArchiveError(f"not a readable WARC file: {exc}") from None
    return reader.finish()


class _Reader:
    """WARC records into an archive: hcgraph's own fetch records when the WARC has them,
    else one fetch derived from each response, resource and revisit."""

    def __init__(self, archive: Archive, report: ReadReport) -> None:
        self.archive = archive
        self.report = report
        self.derived: list[FetchRecord] = []
        self.by_digest: dict[str, str] = {}  # payload digest as written → the body's SHA-256
        self.own = False  # hcgraph's fetch records were met: the responses say no more

    def read(self, rec: Any) -> None:
        kind = rec.rec_type
        self.report.records[kind] += 1
        if kind == "metadata" and rec.rec_headers.get_header("Content-Type") == FETCH_RECORD_TYPE:
            self._fetch_record(rec)
        elif kind in ("response", "resource"):
            self._body(rec)
        elif kind == "revisit" and not self.own:
            digest = rec.rec_headers.get_header("WARC-Payload-Digest") or ""
            self.derived.append(_derived(rec, self.by_digest.get(digest), 0))

    def _fetch_record(self, rec: Any) -> None:
        data = rec.content_stream().read()
        uri = rec.rec_headers.get_header("WARC-Target-URI") or ""
        if rec.digest_checker.passed is False:
            self.report.damaged.append(uri)
            return
        try:  # a WACZ from elsewhere may say it holds one and not
            record = FetchRecord.from_json(data)
            _ = record.sort_key  # a text URL and an ISO date: what the archive reads
        except (ValueError, TypeError, AttributeError, RecursionError) as exc:
            why = " ".join(str(exc).split())[:200]
            raise ArchiveError(f"{uri}: not an hcgraph fetch record ({why})") from None
        self.archive.add_record(record)
        self.report.fetches += 1
        self.own, self.derived = True, []

    def _body(self, rec: Any) -> None:
        body = rec.content_stream().read(MAX_BODY + 1)
        uri = rec.rec_headers.get_header("WARC-Target-URI") or ""
        if len(body) > MAX_BODY:  # a WACZ from elsewhere can hold a gzip bomb
            self.report.too_large.append(uri)
            return
        if rec.digest_checker.passed is False:
            self.report.damaged.append(uri)
            return
        sha = self.archive.put_body(body)
        self.report.bodies.add(sha)
        if digest := rec.rec_headers.get_header("WARC-Payload-Digest"):
            self.by_digest[digest] = sha
        if not self.own:
            self.derived.append(_derived(rec, sha, len(body)))

    def finish(self) -> ReadReport:
        """Add the derived fetches, if the WARC had no fetch records of hcgraph's."""
        if not self.own:
            self.report.foreign = bool(self.derived)
            for found in self.derived:
                self.archive.add_record(found)
                self.report.fetches += 1
        return self.report


def _derived(rec: Any, sha: str | None, size: int) -> FetchRecord:
    """A fetch record from a response, resource or revisit record of another crawler."""
    uri = rec.rec_headers.get_header("WARC-Target-URI") or ""
    when = dt.datetime.fromisoformat(rec.rec_headers.get_header("WARC-Date").replace("Z", "+00:00"))
    status: int | None = None
    headers: dict[str, str] = {}
    if rec.http_headers is not None:
        with contextlib.suppress(ValueError):
            status = int(rec.http_headers.get_statuscode())
        headers = {name.lower(): value for name, value in rec.http_headers.headers}
    elif not uri.startswith("file:"):
        status = 200  # a resource record: the capture of a URL that answered
    return FetchRecord(
        url=uri,
        final_url=uri,
        fetch_url=uri,
        status=status,
        fetched_at=when.isoformat(),
        sha256=sha,
        size=size,
        headers={k: v for k, v in headers.items() if k not in _TRANSFER},
        etag=headers.get("etag"),
        last_modified=headers.get("last-modified"),
    )


@dataclass
class WaczReport:
    """What :func:`export_wacz` wrote: the file, its size, and the WARC's figures."""

    path: Path
    size: int
    warc: WarcReport


def export_wacz(
    out: Path | str, store_dir: Path | str, archive_dir: Path | str | None = None
) -> WaczReport:
    """Write the raw archive of ``store_dir`` (or ``archive_dir``) as the WACZ file ``out``,
    whole or not at all (written beside ``out``, then renamed).

    Raises:
        ExportError: there is no archive, or warcio / py-wacz are not installed.
        OutputError: ``out`` cannot be written.
    """
    out = Path(out)
    archive = Archive(Path(archive_dir) if archive_dir else Path(store_dir) / "archive")
    if not archive.exists():
        raise ExportError(f"{archive.directory}: no raw archive here (run 'hcgraph crawl' first)")
    wacz = load("wacz.main")  # py-wacz's command module (wacz create)
    try:
        work = tempfile.TemporaryDirectory(prefix=".hcgraph-wacz-", dir=out.parent)
    except OSError as exc:
        raise OutputError(f"{out}: cannot write: {exc.strerror or exc}") from None
    with work as tmp:
        warc, pages, built = Path(tmp) / _WARC_NAME, Path(tmp) / "pages.jsonl", Path(tmp) / "w"
        with warc.open("wb") as handle:
            report = write_warc(archive, handle)
        _write_pages(pages, report.pages)
        args = ["create", "-o", str(built), "-p", str(pages), "--title", _TITLE, str(warc)]
        said = io.StringIO()
        try:
            with contextlib.redirect_stdout(said):
                code = wacz.main(args)
        except (ValueError, OSError, zipfile.BadZipFile) as exc:
            raise ExportError(f"{out}: py-wacz could not package the WARC: {exc}") from None
        if code:
            raise ExportError(f"{out}: py-wacz could not package the WARC: {said.getvalue()}")
        try:
            _pin(built, Path(tmp) / "pinned", report.made)
            os.replace(Path(tmp) / "pinned", out)
        except OSError as exc:
            raise OutputError(f"{out}: cannot write: {exc.strerror or exc}") from None
    return WaczReport(out, out.stat().st_size, report)


def _pin(built: Path, out: Path, made: dt.datetime) -> None:
    """Copy py-wacz's zip ``built`` to ``out`` with its "now"s replaced by ``made``: each
    entry's time and mode (and its maker, Unix on any platform), and datapackage.json's
    ``created`` (so its digest file too).
    The entries keep their order, compression and bytes otherwise."""
    # a zip entry's time runs from 1980 to 2107
    first, last = dt.datetime(1980, 1, 1, tzinfo=dt.UTC), dt.datetime(2107, 12, 31, tzinfo=dt.UTC)
    stamp = min(max(made, first), last).timetuple()[:6]
    with zipfile.ZipFile(built) as source, zipfile.ZipFile(out, "w") as pinned:
        package = json.loads(source.read("datapackage.json"))
        package["created"] = made.strftime("%Y-%m-%dT%H:%M:%SZ")
        data = json.dumps(package, indent=2).encode()  # as py-wacz writes them
        digest = json.loads(source.read("datapackage-digest.json"))
        digest["hash"] = f"sha256:{hashlib.sha256(data).hexdigest()}"
        replaced = {
            "datapackage.json": data,
            "datapackage-digest.json": json.dumps(digest, indent=2).encode(),
        }
        for entry in source.infolist():
            copy = zipfile.ZipInfo(entry.filename, stamp)
            copy.compress_type, copy.file_size = entry.compress_type, entry.file_size
            # a regular file (not the temporary file's mode), in Unix's mode bits: made by
            # Unix (3) on any platform, where Windows would say MS-DOS
            copy.external_attr, copy.create_system = 0o644 << 16, 3
            if entry.filename in replaced:
                pinned.writestr(copy, replaced[entry.filename])
                continue
            with source.open(entry) as stream, pinned.open(copy, "w") as sink:
                shutil.copyfileobj(stream, sink, 1 << 20)


def _write_pages(path: Path, pages: list[dict[str, str]]) -> None:
    """``pages.jsonl`` for py-wacz: a header line, then one page a line (stable ids)."""
    lines = [json.dumps({"format": "json-pages-1.0", "id": "pages", "title": "Pages"})]
    for page in pages:
        page_id = hashlib.sha256(f"{page['ts']} {page['url']}".encode()).hexdigest()[:24]
        lines.append(json.dumps({"id": page_id, **page}, ensure_ascii=False))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def archive_from_wacz(wacz: Path | str, archive_dir: Path | str) -> ReadReport:
    """Read the WARCs of the WACZ file ``wacz`` into a raw archive at ``archive_dir``.

    Raises:
        InputError: ``wacz`` is not a WACZ file (no zip, no datapackage.json, no WARC).
        ArchiveError: a WARC does not match its digest in datapackage.json, or is not one.
        ExportError: warcio is not installed (the ``archive`` extra).
    """
    wacz = Path(wacz)
    try:
        package = zipfile.ZipFile(wacz)
    except (OSError, zipfile.BadZipFile) as exc:
        raise InputError(f"{wacz}: not a WACZ file: {exc}") from None
    report = ReadReport()
    with package, Archive(archive_dir) as archive:
        digests = _digests(wacz, package)
        names = sorted(
            name
            for name in package.namelist()
            if name.startswith("archive/") and name.endswith((".warc", ".warc.gz"))
        )
        if not names:
            raise InputError(f"{wacz}: not a WACZ file: no archive/*.warc(.gz) in it")
        for name in names:
            _check(wacz, package, name, digests.get(name))
            with package.open(name) as stream:
                try:
                    read_warc(stream, archive, report)
                except ArchiveError as exc:
                    raise ArchiveError(f"{wacz}: {name}: {exc}") from None
    return report


def _digests(wacz: Path, package: zipfile.ZipFile) -> dict[str, str]:
    """Each file's ``hash`` in datapackage.json."""
    try:
        data: Any = json.loads(package.read("datapackage.json"))
        return {
            str(item["path"]): str(item["hash"])
            for item in data["resources"]
            if isinstance(item, dict) and "path" in item and "hash" in item
        }
    except KeyError:
        raise InputError(f"{wacz}: not a WACZ file: no datapackage.json resources") from None
    except (ValueError, TypeError, OSError, zipfile.BadZipFile) as exc:
        raise InputError(f"{wacz}: not a WACZ file: bad datapackage.json: {exc}") from None


def _check(wacz: Path, package: zipfile.ZipFile, name: str, expected: str | None) -> None:
    """The WARC ``name`` matches its SHA-256 in datapackage.json (one is required)."""
    algorithm, _, value = (expected or "").partition(":")
    if algorithm not in ("sha256", "md5") or not value:
        raise ArchiveError(f"{wacz}: {name} has no digest in datapackage.json")
    try:
        with package.open(name) as stream:
            digest = hashlib.file_digest(cast(zipfile.ZipExtFile, stream), algorithm)
    except (OSError, zipfile.BadZipFile) as exc:
        raise ArchiveError(f"{wacz}: {name} cannot be read: {exc}") from None
    if digest.hexdigest() != value:
        raise ArchiveError(f"{wacz}: {name} does not match its digest in datapackage.json")


def rebuild_from_wacz(
    store_dir: Path | str,
    wacz: Path | str,
    *,
    keep_outcomes: bool = True,
    drop_unarchived: bool = False,
) -> RebuildReport:
    """Rebuild ``store_dir``'s graph from the raw archive inside the WACZ file ``wacz`` (read
    into a scratch archive in the store); damaged or oversized records are listed unreadable.

    Raises:
        InputError, ArchiveError: see :func:`archive_from_wacz`.
        CrawlError, StoreError: see :func:`~hcgraph.rebuilding.rebuild`.
    """
    store_dir = Path(store_dir)
    created = not store_dir.exists()  # removed again if nothing is rebuilt into it
    ensure_dir(store_dir)
    scratch = store_dir / ".wacz-archive"
    shutil.rmtree(scratch, ignore_errors=True)
    try:
        read = archive_from_wacz(wacz, scratch)
        if not (scratch / "packs").is_dir():
            raise InputError(f"{wacz}: the WACZ holds no fetches")
        report = rebuild(
            store_dir, scratch, keep_outcomes=keep_outcomes, drop_unarchived=drop_unarchived
        )
    except BaseException:
        if created:
            shutil.rmtree(store_dir, ignore_errors=True)
        raise
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    for uris, why in (
        (read.damaged, "its WARC record does not match its digest (damaged)"),
        (read.too_large, "its WARC record's body is larger than hcgraph reads"),
    ):
        report.unreadable.extend(Failure(uri, why) for uri in uris)
    return report
