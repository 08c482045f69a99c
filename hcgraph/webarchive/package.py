"""A WACZ 1.1.1 package of the raw archive (py-wacz), and the raw archive back from one.

``export_wacz`` writes the archive's fetches as one WARC (:mod:`.warc`) and the page list
(the first 200 capture of each URL, titled with the story's headline), and lets py-wacz
package them with their CDXJ index and ``datapackage.json``; it only reads the archive, so it
may run beside a crawl. ``archive_from_wacz`` reads a WACZ's WARCs back (each checked against
its digest); ``rebuild_from_wacz`` rebuilds the graph from them.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
import shutil
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from .._io import ensure_dir
from ..archive import Archive
from ..errors import ArchiveError, ExportError, InputError, OutputError
from ..ingest import Failure
from ..rebuilding import RebuildReport, rebuild
from .warc import ReadReport, WarcReport, load, read_warc, write_warc

__all__ = ["WaczReport", "archive_from_wacz", "export_wacz", "rebuild_from_wacz"]

_WARC_NAME = "data.warc.gz"
_TITLE = "hcgraph crawl archive"


@dataclass
class WaczReport:
    """What :func:`export_wacz` wrote: the file, its size, and the WARC's figures."""

    path: Path
    size: int
    warc: WarcReport


def export_wacz(
    out: Path | str, store_dir: Path | str, archive_dir: Path | str | None = None
) -> WaczReport:
    """Write the raw archive of ``store_dir`` (or ``archive_dir``) as the WACZ file ``out``.

    The file appears whole or not at all (it is written beside ``out``, then renamed).

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
            os.replace(built, out)
        except OSError as exc:
            raise OutputError(f"{out}: cannot write: {exc.strerror or exc}") from None
    return WaczReport(out, out.stat().st_size, report)


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
        resources = data["resources"]
        return {
            str(item["path"]): str(item["hash"])
            for item in resources
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
    """Rebuild ``store_dir``'s graph from the raw archive inside the WACZ file ``wacz``.

    The WARC is read into a temporary archive in the store directory, which
    :func:`~hcgraph.rebuilding.rebuild` reads; records that do not match their WARC digest
    are listed as unreadable.

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
    report.unreadable.extend(
        Failure(uri, "its WARC record does not match its digest (damaged)") for uri in read.damaged
    )
    report.unreadable.extend(
        Failure(uri, "its WARC record's body is larger than hcgraph reads")
        for uri in read.too_large
    )
    return report
