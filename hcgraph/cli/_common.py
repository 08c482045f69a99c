"""Options and helpers shared by the commands."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click
from rich.console import Console

from ..store import DEFAULT_STORE

F = TypeVar("F", bound=Callable[..., Any])

__all__ = ["err_console", "out_console", "store_option"]

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
