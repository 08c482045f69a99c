"""Options and helpers shared by the commands."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click
from rich.console import Console

from ..store import DEFAULT_STORE

F = TypeVar("F", bound=Callable[..., Any])

__all__ = ["err_console", "out_console", "size", "store_option"]

out_console = Console(highlight=False, soft_wrap=True)
err_console = Console(stderr=True, highlight=False, soft_wrap=True)


def store_option(func: F) -> F:
    """``--store DIR``: the store directory (default ``output/store``)."""
    return click.option(
        "--store",
        "store_dir",
        type=click.Path(file_okay=False, path_type=Path),
        default=DEFAULT_STORE,
        show_default=True,
        help="Store directory.",
    )(func)


def size(text: str) -> int:
    """A size like ``10MB``, ``500k`` or ``1024`` in bytes (for ``--max-bytes``)."""
    units = {"k": 1024, "m": 1024**2, "g": 1024**3}
    value = text.strip().lower().removesuffix("b")
    factor = units.get(value[-1:], 1)
    value = value[:-1] if value[-1:] in units else value
    try:
        return int(float(value) * factor)
    except ValueError:
        raise click.BadParameter(f"{text!r} is not a size like 10MB or 500k") from None
