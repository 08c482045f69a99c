"""The raw archive as WARC records in a WACZ (out), and a WACZ back into a raw archive (in).

WARC 1.1 records inside a WACZ 1.1.1 package, the formats web-archive tools read (pywb,
ReplayWeb.page); a WACZ read back into a raw archive rebuilds the same graph.

Needs the ``archive`` extra (warcio, py-wacz), imported on first use.
Modules: :mod:`.warc` (records, warcio), :mod:`.package` (the WACZ, py-wacz).
"""

from .package import WaczReport, archive_from_wacz, export_wacz, rebuild_from_wacz
from .warc import FETCH_RECORD_TYPE, ReadReport, WarcReport, read_warc, write_warc

__all__ = [
    "FETCH_RECORD_TYPE",
    "ReadReport",
    "WaczReport",
    "WarcReport",
    "archive_from_wacz",
    "export_wacz",
    "read_warc",
    "rebuild_from_wacz",
    "write_warc",
]
