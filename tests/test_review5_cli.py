"""Review of maps, exports and the CLI (2026-12-07): output paths that cannot be written are
one ``error:`` line (exit 1), never a traceback."""

from __future__ import annotations

from pathlib import Path

import pytest

from hcgraph.ingest import ingest_bytes
from hcgraph.store import Store

SEED = Path(__file__).resolve().parent / "fixtures" / "agentic-rl-production.json"


@pytest.fixture
def store_dir(tmp_path: Path) -> Path:
    with Store(tmp_path / "store") as store:
        assert ingest_bytes(store, [(SEED.read_bytes(), "seed.json")]).ok
    return tmp_path / "store"


def test_package_under_a_file_is_one_line(invoke, store_dir: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "afile").write_text("not a directory")
    pytest.importorskip("rocrate")
    result = invoke("package", "--rocrate", tmp_path / "afile" / "crate", "--store", store_dir)
    assert result.exit_code == 1
    assert result.output.startswith("error: ") and "afile" in result.output
    assert len(result.output.strip().splitlines()) == 1


def test_package_where_no_one_may_write_is_one_line(  # type: ignore[no-untyped-def]
    invoke, store_dir: Path
) -> None:
    """sysfs refuses a new directory to root too (EPERM; a user gets EACCES): the crate's
    work directory cannot be made there."""
    pytest.importorskip("rocrate")
    result = invoke("package", "--rocrate", "/sys/hcgraph-review5-crate", "--store", store_dir)
    assert result.exit_code == 1
    assert result.output.startswith("error: --rocrate /sys/hcgraph-review5-crate: ")
    assert len(result.output.strip().splitlines()) == 1


@pytest.mark.parametrize(
    "report",
    ["[1, 2]", '{"seeds": "https://s.example/a/"}', '{"seeds": [5]}', '{"finished_at": 5}'],
    ids=["array", "seeds-a-string", "seed-a-number", "time-a-number"],
)
def test_package_with_a_report_of_another_shape_is_one_line(  # type: ignore[no-untyped-def]
    invoke, store_dir: Path, tmp_path: Path, report: str
) -> None:
    """A JSON array was left out without a word; a string ``seeds`` became one input a
    letter (``#seed-0`` "h", ``#seed-1`` "t", …) in ro-crate-metadata.json."""
    pytest.importorskip("rocrate")
    (tmp_path / "report.json").write_text(report)
    result = invoke(
        "package", "--rocrate", tmp_path / "crate", "--report", tmp_path / "report.json",
        "--store", store_dir,
    )  # fmt: skip
    assert result.exit_code == 1
    assert (
        result.output.startswith("error: ") and "report.json: not a crawl report" in result.output
    )
    assert not (tmp_path / "crate").exists()
