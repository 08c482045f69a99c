"""``hcgraph package``: a crawl and its outputs as an RO-Crate for research data exchange."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from ..errors import ExportError
from ._common import file_option, out_console, shown, store_option


@click.command("package")
@click.option(
    "--rocrate", "out_dir", type=click.Path(path_type=Path), required=True, metavar="DIR",
    help="Directory to write the RO-Crate into (new or empty).",
)  # fmt: skip
@file_option(
    "--report", exists=True,
    help="The crawl report to include (default: STORE/crawl-report.json, when it exists).",
)  # fmt: skip
@click.option(
    "--wacz", is_flag=True,
    help="Also include the raw archive as archive.wacz (WARC records), an input of the run.",
)  # fmt: skip
@click.option(
    "--license", "license_url", default=None, metavar="URL",
    help="The crate's license (default: the license the stories state, schema:license).",
)  # fmt: skip
@store_option
def package(out_dir: Path, store_dir: Path, **options: Any) -> None:
    """Package the store's graph, claim reviews, audit and crawl report as an RO-Crate.

    Writes DIR/ro-crate-metadata.json (RO-Crate 1.1) describing each file (encodingFormat,
    size) and the run as a CreateAction: hcgraph and its version as the instrument, the
    crawl's seed URLs (and the WACZ) as its object, the files as its result, the crawl's
    start and end times.

    \b
    Example:
      hcgraph package --rocrate output/crate --store output/store
      hcgraph package --rocrate crate/ --wacz --store output/store
    """
    from ..crate import write_rocrate

    if not store_dir.is_dir():
        raise ExportError(f"--store {store_dir}: no such store")
    done = write_rocrate(store_dir, out_dir, **options)  # --report, --wacz, --license
    files = ", ".join(f"{name} ({size:,} bytes)" for name, size in done.files.items())
    out_console.print(f"wrote RO-Crate {shown(done.directory)}: {files}")
