"""Review of crawl/push/fetch (2026-12-07): the manifest API client against absurd answers."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from hcgraph.claims.fetching import manifest_archive
from tests.manifestserver import manifest_id
from tests.test_manifests_fetch import Api, ids, run


@pytest.mark.parametrize("retry_after", ["999999999999", "1" * 400], ids=["31k-years", "inf"])
def test_a_429_asking_to_wait_past_year_9999_stops_the_run_cleanly(
    tmp_path: Path, retry_after: str
) -> None:
    """The resume date overflowed ``datetime`` and the run ended in a traceback."""
    api = Api(**{manifest_id(1): [httpx.Response(429, headers={"Retry-After": retry_after})]})
    report, _archive = run(api, manifest_archive(tmp_path), ids(1, 2))
    assert report.stopped == "rate-limited"
    assert report.resume_after is None
    assert report.left == ids(1, 2)
    assert any("rate" in line for line in report.lines())
