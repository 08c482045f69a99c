"""``hcgraph package --rocrate DIR``: the store's outputs as an RO-Crate 1.1, read back with
ro-crate-py and accepted by roc-validator (the RO-Crate 1.1 profile, REQUIRED level)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from unittest import mock

import pytest

from hcgraph._version import __version__
from tests.conftest import SEED_URL
from tests.test_claims import _changed_number, _pulled

REPORT = {
    "seeds": [SEED_URL],
    "status": "complete",
    "started_at": "2026-10-20T01:00:00Z",
    "finished_at": "2026-10-20T01:02:03Z",
    "counts": {"stories": 1},
}


def _crate(invoke: Any, tmp_path: Path, *extra: object) -> Path:
    store_dir = _pulled(tmp_path, _changed_number())
    (store_dir / "crawl-report.json").write_text(json.dumps(REPORT), encoding="utf-8")
    out = tmp_path / "crate"
    result = invoke("package", "--rocrate", out, "--store", store_dir, *extra)
    assert result.exit_code == 0, result.output
    assert "wrote RO-Crate" in result.output
    return out


def _entities(crate_dir: Path) -> dict[str, dict[str, Any]]:
    data = json.loads((crate_dir / "ro-crate-metadata.json").read_text(encoding="utf-8"))
    assert data["@context"] == "https://w3id.org/ro/crate/1.1/context"
    return {e["@id"]: e for e in data["@graph"]}


def test_the_crate_holds_the_outputs_and_the_run(invoke: Any, tmp_path: Path) -> None:
    from rocrate.rocrate import ROCrate

    out = _crate(invoke, tmp_path)
    crate = ROCrate(out)  # ro-crate-py's reader
    files = {e.id: e for e in crate.data_entities}
    assert set(files) == {"graph.trig", "claimreview.jsonld", "audit.json", "crawl-report.json"}
    formats = {name: e["encodingFormat"] for name, e in files.items()}
    assert formats == {
        "graph.trig": "application/trig",
        "claimreview.jsonld": "application/ld+json",
        "audit.json": "application/json",
        "crawl-report.json": "application/json",
    }
    for name, entity in files.items():
        assert int(entity["contentSize"]) == (out / name).stat().st_size > 0
    (action,) = [e for e in crate.contextual_entities if e.type == "CreateAction"]
    instrument = action["instrument"]
    assert instrument["name"] == "hcgraph" and instrument["softwareVersion"] == __version__
    assert "http://www.w3.org/ns/prov#SoftwareAgent" in instrument.type
    assert [o.id for o in action["object"]] == [SEED_URL]
    assert sorted(r.id for r in action["result"]) == sorted(files)
    assert (action["startTime"], action["endTime"]) == (
        REPORT["started_at"], REPORT["finished_at"])  # fmt: skip
    root = crate.root_dataset
    assert root["datePublished"] == REPORT["finished_at"]
    assert [lic.id for lic in root["license"]] == ["https://hangingcontext.com/terms/reuse/"]
    # The files are the exports themselves: 35 claim reviews, 2 of them FALSE.
    reviews = json.loads((out / "claimreview.jsonld").read_text(encoding="utf-8"))
    assert len(reviews) == 35
    assert sum(r["reviewRating"]["alternateName"] == "FALSE" for r in reviews) == 2
    assert json.loads((out / "crawl-report.json").read_text(encoding="utf-8")) == REPORT


def test_same_store_same_metadata(invoke: Any, tmp_path: Path) -> None:
    """Packaging one store twice gives the same bytes. (Two stores built a moment apart
    differ: their graphs record when each fetch and ingest ran.)"""
    one = _crate(invoke, tmp_path)
    two = tmp_path / "again"
    result = invoke("package", "--rocrate", two, "--store", tmp_path / "store")
    assert result.exit_code == 0, result.output
    assert (one / "ro-crate-metadata.json").read_bytes() == (
        two / "ro-crate-metadata.json").read_bytes()  # fmt: skip
    assert (one / "claimreview.jsonld").read_bytes() == (two / "claimreview.jsonld").read_bytes()


def test_refuses_a_non_empty_directory_and_an_unlicensed_store(invoke: Any, tmp_path: Path) -> None:
    store_dir = _pulled(tmp_path)
    full = tmp_path / "full"
    full.mkdir()
    (full / "keep.txt").write_text("mine", encoding="utf-8")
    result = invoke("package", "--rocrate", full, "--store", store_dir)
    assert result.exit_code == 1 and "new or empty directory" in result.output
    assert (full / "keep.txt").read_text(encoding="utf-8") == "mine"
    from hcgraph.store import Store

    with Store(tmp_path / "empty"):
        pass
    result = invoke("package", "--rocrate", tmp_path / "c1", "--store", tmp_path / "empty")
    assert result.exit_code == 1 and "--license" in result.output
    result = invoke(
        "package", "--rocrate", tmp_path / "c2", "--store", tmp_path / "empty",
        "--license", "https://creativecommons.org/licenses/by/4.0/",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    entities = _entities(tmp_path / "c2")
    assert json.loads((tmp_path / "c2" / "claimreview.jsonld").read_text()) == []
    assert entities["./"]["license"] == [{"@id": "https://creativecommons.org/licenses/by/4.0/"}]


def _validate(crate_dir: Path) -> Any:
    """roc-validator on the crate, at the RO-Crate 1.1 profile's REQUIRED level.

    The validator fetches the crate's JSON-LD context (w3id.org) over HTTP, and this machine
    has no network: the context is served from ro-crate-py's bundled copy, everything else
    the validator reads or checks runs as it does for users.
    """
    import requests
    import rocrate

    pytest.importorskip("rocrate_validator", reason="roc-validator is not installed")
    from rocrate_validator import models, services
    from rocrate_validator.utils.http import HttpRequester

    bundled = Path(rocrate.__file__).parent / "data" / "ro-crate.jsonld"
    context = {"@context": json.loads(bundled.read_text(encoding="utf-8"))["@context"]}
    asked: list[str] = []

    def get(self: object, url: str, *args: object, **kwargs: object) -> requests.Response:
        asked.append(url)
        response = requests.Response()
        response.url = url
        response.status_code = 504
        if url.startswith("https://w3id.org/ro/crate/1.1/context"):
            response.status_code = 200
            response._content = json.dumps(context).encode()
            response.headers["Content-Type"] = "application/ld+json"
        return response

    with mock.patch.object(HttpRequester, "get", get, create=True):
        settings = services.ValidationSettings(
            rocrate_uri=str(crate_dir),
            profile_identifier="ro-crate-1.1",
            requirement_severity=models.Severity.REQUIRED,
        )
        result = services.validate(settings)
    assert asked, "the validator never asked for the context: the check did not run"
    return result


@pytest.mark.slow
def test_roc_validator_accepts_the_crate(invoke: Any, tmp_path: Path) -> None:
    out = _crate(invoke, tmp_path)
    result = _validate(out)
    issues = [(i.check.identifier if i.check else "", i.message) for i in result.get_issues()]
    assert result.passed(), issues
    # …and it is a real check: a crate missing a required property and a listed file fails.
    data = json.loads((out / "ro-crate-metadata.json").read_text(encoding="utf-8"))
    (root,) = [e for e in data["@graph"] if e["@id"] == "./"]
    del root["datePublished"]
    (out / "ro-crate-metadata.json").write_text(json.dumps(data), encoding="utf-8")
    (out / "audit.json").unlink()
    bad = _validate(out)
    messages = " ".join(i.message for i in bad.get_issues())
    assert not bad.passed() and "datePublished" in messages and "audit.json" in messages


@pytest.mark.slow
def test_a_real_crawl_with_its_wacz(crawl_server: Any, invoke: Any, tmp_path: Path) -> None:
    """A crawl over a loopback site: the crate names the crawl's seeds and times, and holds
    the raw archive as a WACZ among the run's inputs; roc-validator accepts it."""
    pytest.importorskip("wacz.main")
    from tests.crawlserver import Site, page, story

    site = Site(crawl_server)
    site.add("a", story("a", page("b")))
    site.add("b", story("b"))
    report = site.crawl(tmp_path / "store")
    out = tmp_path / "crate"
    cc_by = "https://creativecommons.org/licenses/by/4.0/"  # the test stories state none
    result = invoke(
        "package", "--rocrate", out, "--wacz", "--license", cc_by, "--store", tmp_path / "store"
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    entities = _entities(out)
    (action,) = [e for e in entities.values() if e["@type"] == "CreateAction"]
    objects = [o["@id"] for o in action["object"]]
    assert objects == [*report.seeds, "archive.wacz"]
    assert (action["startTime"], action["endTime"]) == (report.started_at, report.finished_at)
    assert entities["archive.wacz"]["encodingFormat"] == "application/wacz"
    assert {"archive.wacz", "crawl-report.json"} <= {p["@id"] for p in entities["./"]["hasPart"]}
    assert (out / "archive.wacz").stat().st_size == int(entities["archive.wacz"]["contentSize"])
    assert _validate(out).passed()
