"""The store worker process: ``python -m hcgraph.crawl.worker STORE_DIR``.

Started by :class:`hcgraph.crawl.process.ProcessRunner`. Reads length-prefixed pickled
requests on stdin — ``("init", claims)``, ``("batch", items)``, ``("close",)`` — and answers
each on stdout with ``("ok", result)`` or ``("error", kind, message)``. It owns the store
while it runs and dies with its parent, so it can never outlive a killed crawl.
"""

from __future__ import annotations

import os
import pickle
import signal
import struct
import sys
from pathlib import Path
from typing import Any, BinaryIO

from .process import StoryProcessor, die_with_parent, open_store


def _read(stream: BinaryIO) -> Any:
    header = stream.read(8)
    if len(header) < 8:
        return None  # the crawl closed the pipe (or died)
    size = struct.unpack("!Q", header)[0]
    return pickle.loads(stream.read(size))


def _write(stream: BinaryIO, message: object) -> None:
    data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(struct.pack("!Q", len(data)) + data)
    stream.flush()


def main(store_dir: str) -> int:
    """Serve requests until ``close`` or end of input."""
    die_with_parent()
    # Ctrl-C reaches the whole process group; the crawl process decides how to stop.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # The protocol owns the real stdout; anything printed goes to stderr instead.
    out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    inp = sys.stdin.buffer
    processor: StoryProcessor | None = None
    try:
        while (request := _read(inp)) is not None:
            try:
                if request[0] == "init":
                    processor = StoryProcessor(open_store(Path(store_dir)), request[1])
                    _write(out, ("ok", None))
                elif request[0] == "batch":
                    assert processor is not None
                    _write(out, ("ok", processor.process(request[1])))
                elif request[0] == "close":
                    if processor is not None:
                        processor.store.close()
                        processor = None
                    _write(out, ("ok", None))
                    return 0
            except Exception as exc:
                _write(out, ("error", type(exc).__name__, str(exc)))
    finally:
        if processor is not None:
            processor.store.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1]))
