"""The raw archive as WARC records in a WACZ (out), and a WACZ back into a raw archive (in).

WARC 1.1 records inside a WACZ 1.1.1 package, the formats web-archive tools read (pywb,
ReplayWeb.page); a WACZ read back into a raw archive rebuilds the same graph.

Needs the ``archive`` extra (warcio, py-wacz). Modules: :mod:`.warc` (records, warcio),
:mod:`.package` (the WACZ, py-wacz).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_exports as _lazy_exports

_EXPORTS = {
    "FETCH_RECORD_TYPE": ".warc",
    "ReadReport": ".warc",
    "WarcReport": ".warc",
    "read_warc": ".warc",
    "write_warc": ".warc",
    "WaczReport": ".package",
    "archive_from_wacz": ".package",
    "export_wacz": ".package",
    "rebuild_from_wacz": ".package",
}

__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = _lazy_exports(__name__, globals(), _EXPORTS)

if TYPE_CHECKING:
    from .package import WaczReport as WaczReport
    from .package import archive_from_wacz as archive_from_wacz
    from .package import export_wacz as export_wacz
    from .package import rebuild_from_wacz as rebuild_from_wacz
    from .warc import FETCH_RECORD_TYPE as FETCH_RECORD_TYPE
    from .warc import ReadReport as ReadReport
    from .warc import WarcReport as WarcReport
    from .warc import read_warc as read_warc
    from .warc import write_warc as write_warc
