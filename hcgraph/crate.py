"""A crawl and its outputs as an RO-Crate 1.1 (``hcgraph package --rocrate DIR``).

Written with `ro-crate-py <https://github.com/ResearchObject/ro-crate-py>`_: the exports, the
audit, the crawl report and (``wacz=True``) the raw archive, made by one ``CreateAction``
(``docs/graph.md``, "Packaging: RO-Crate").
"""

from __future__ import annotations

import json
import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ._io import atomic_writer, ensure_dir
from ._version import __version__
from .errors import ExportError, OutputError
from .exporting import export
from .iris import minted
from .store import Store, now_utc

__all__ = ["CrateReport", "write_rocrate"]

_SOFTWARE = {
    "@type": ["SoftwareApplication", "http://www.w3.org/ns/prov#SoftwareAgent"],
    "name": "hcgraph",
    "softwareVersion": __version__,
    "url": "https://w3id.org/hcgraph",
}
_LICENSES = "SELECT DISTINCT ?license WHERE { ?s a hc:Story ; schema:license ?license }"


@dataclass
class CrateReport:
    """What :func:`write_rocrate` wrote."""

    directory: Path  # the crate's directory
    files: dict[str, int] = field(default_factory=dict)  # each data file → its size in bytes
    inputs: list[str] = field(default_factory=list)  # seed URLs, or the stories' URLs


def _read_report(path: Path | None) -> dict[str, Any] | None:
    """The crawl report at ``path`` (None: no such file); ExportError naming what is wrong."""
    if path is None or not path.is_file():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ExportError(f"{path}: not a crawl report ({exc})") from None
    if not isinstance(data, dict):
        raise ExportError(f"{path}: not a crawl report (a JSON object)")
    seeds = data.get("seeds", [])
    if not isinstance(seeds, list) or not all(isinstance(s, str) for s in seeds):
        raise ExportError(f"{path}: not a crawl report (its seeds are no list of URLs)")
    for key in ("started_at", "finished_at"):
        if not isinstance(data.get(key, ""), str | None):
            raise ExportError(f"{path}: not a crawl report ({key} is no date and time)")
    return data


def write_rocrate(
    store_dir: Path,
    out_dir: Path,
    *,
    report: Path | None = None,
    wacz: bool = False,
    license_url: str | None = None,
) -> CrateReport:
    """Write the store's exports and the run that made them into ``out_dir`` (new or empty) as
    an RO-Crate: the crawl ``report`` (default ``STORE/crawl-report.json``, if any), with
    ``wacz`` the raw archive, under ``license_url`` (default: the stories' ``schema:license``).

    Raises:
        OutputError: ``out_dir`` is a file or a non-empty directory.
        ExportError: the report is not JSON, or the crate cannot be described.
    """
    try:
        import rocrate  # noqa: F401 (the extra is installed: _build imports its classes)
    except ImportError:
        raise ExportError(
            "hcgraph package needs ro-crate-py: pip install 'hcgraph[rocrate]'"
        ) from None

    if out_dir.exists() and (not out_dir.is_dir() or any(out_dir.iterdir())):
        raise OutputError(f"--rocrate {out_dir}: must be a new or empty directory")
    ensure_dir(out_dir.parent)
    # Built beside the target and renamed when complete: a failure leaves no half crate.
    work = out_dir.parent / f".{out_dir.name}.partial-{os.getpid()}"
    shutil.rmtree(work, ignore_errors=True)
    try:
        work.mkdir()
    except OSError as exc:
        raise OutputError(f"--rocrate {out_dir}: cannot write: {exc.strerror or exc}") from None
    try:
        result = _build(store_dir, work, report, wacz, license_url)
        try:
            if out_dir.exists():
                out_dir.rmdir()
            work.rename(out_dir)
        except OSError as exc:
            raise OutputError(f"--rocrate {out_dir}: cannot write: {exc.strerror or exc}") from None
    finally:
        shutil.rmtree(work, ignore_errors=True)
    result.directory = out_dir
    return result


#: Each file a crate may hold, in the order described: (encodingFormat, name, description).
_FILES = {
    "graph.trig": (
        "application/trig",
        "The knowledge graph",
        "Every named graph of the hcgraph store as TriG: stories, shared graphs, "
        "manifest replies and support verdicts.",
    ),
    "claimreview.jsonld": (
        "application/ld+json",
        "Claim reviews",
        "Each (passage, cited claim) support verdict as a schema.org ClaimReview "
        "(ClaimsKG ratings TRUE/FALSE/OTHER).",
    ),
    "audit.json": (
        "application/json",
        "Disclosure audit",
        "hcgraph audit: each story checked against its disclosure.",
    ),
    "crawl-report.json": (
        "application/json",
        "Crawl report",
        "What the crawl fetched, stored, skipped and failed.",
    ),
    "archive.wacz": (
        "application/wacz",
        "Raw archive",
        "Every fetch the crawl kept, as WARC 1.1 records in a WACZ.",
    ),
}


def _build(
    store_dir: Path, out_dir: Path, report: Path | None, wacz: bool, license_url: str | None
) -> CrateReport:
    """Write the crate's files into ``out_dir`` (the work directory), then describe them."""
    from .provenance.auditing import audit

    report_path = report if report is not None else store_dir / "crawl-report.json"
    crawl = _read_report(report_path)
    with Store(store_dir, read_only=True) as store:
        if license_url:
            licenses = [license_url]
        else:
            licenses = sorted(str(row["license"].value) for row in store.query(_LICENSES))
        if not licenses:
            raise ExportError(
                "the stories state no license (schema:license): give the crate's with --license URL"
            )
        for fmt, name in (("trig", "graph.trig"), ("claimreview", "claimreview.jsonld")):
            with atomic_writer(out_dir / name) as handle:
                export(store, fmt, handle)
        with atomic_writer(out_dir / "audit.json") as handle:
            handle.write(audit(store).to_json().encode("utf-8") + b"\n")
        stories = sorted(store.story_graphs())
    names = ["graph.trig", "claimreview.jsonld", "audit.json"]
    if crawl is not None:
        shutil.copyfile(report_path, out_dir / "crawl-report.json")  # the report's own bytes
        names.append("crawl-report.json")
    if wacz:
        from .webarchive import export_wacz

        export_wacz(out_dir / "archive.wacz", store_dir, None)
        names.append("archive.wacz")
    return _describe(out_dir, names, crawl or {}, stories, licenses)


def _describe(
    out_dir: Path, names: list[str], crawl: dict[str, Any], stories: list[str], licenses: list[str]
) -> CrateReport:
    """Describe the files and the run (the crawl's times, else the packaging time,
    ``SOURCE_DATE_EPOCH``) in ``ro-crate-metadata.json``."""
    from rocrate.model.contextentity import ContextEntity
    from rocrate.model.softwareapplication import SoftwareApplication
    from rocrate.rocrate import ROCrate

    ended = str(crawl.get("finished_at") or now_utc().isoformat().replace("+00:00", "Z"))
    result = CrateReport(out_dir, inputs=[str(s) for s in crawl.get("seeds", [])] or stories)
    crate = ROCrate(version="1.1")
    root = crate.root_dataset
    root["name"] = "hcgraph crawl and outputs"
    root["description"] = (
        f"A provenance knowledge graph of {len(stories)} Hanging Context stories built by "
        f"hcgraph {__version__}, with its claim reviews, audit and crawl report."
    )
    root["datePublished"] = ended
    root["license"] = [
        crate.add(ContextEntity(crate, url, {"@type": "CreativeWork", "name": url}))
        for url in licenses
    ]
    software = crate.add(
        SoftwareApplication(crate, minted("software", "hcgraph", __version__), _SOFTWARE)
    )
    inputs = [crate.add(ContextEntity(crate, *_input(i, s))) for i, s in enumerate(result.inputs)]
    files = {name: _add_file(crate, out_dir, name, result) for name in names}
    crate.add_action(
        software,
        identifier="#hcgraph-run",
        object=inputs + ([files.pop("archive.wacz")] if "archive.wacz" in files else []),
        result=list(files.values()),
        properties={
            "@type": "CreateAction",
            "name": "hcgraph run: crawl, ingest, claim check and exports",
            "startTime": str(crawl.get("started_at") or ended),
            "endTime": ended,
            "actionStatus": {"@id": "http://schema.org/CompletedActionStatus"},
        },
    )
    try:
        crate.write(out_dir)
    except (OSError, ValueError, KeyError) as exc:
        raise ExportError(f"cannot write the RO-Crate to {out_dir}: {exc}") from None
    return result


def _input(index: int, seed: str) -> tuple[str, dict[str, str]]:
    """A seed URL as a ``WebPage``; a seed that is no URL (a file) as a ``CreativeWork``."""
    if "://" in seed:
        return seed, {"@type": "WebPage", "name": seed, "url": seed}
    return f"#seed-{index}", {"@type": "CreativeWork", "name": seed}


def _add_file(crate: Any, out_dir: Path, name: str, result: CrateReport) -> Any:
    fmt, title, description = _FILES[name]
    size = (out_dir / name).stat().st_size
    result.files[name] = size
    properties = {
        "name": title,
        "description": description,
        "encodingFormat": fmt,
        "contentSize": str(size),
    }
    return crate.add_file(out_dir / name, dest_path=name, properties=properties)
