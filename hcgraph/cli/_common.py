"""Options and helpers shared by the commands."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click
from rich.console import Console

from ..store import DEFAULT_STORE

F = TypeVar("F", bound=Callable[..., Any])

__all__ = [
    "allow_service_option",
    "err_console",
    "flag_option",
    "float_option",
    "int_option",
    "max_bytes_option",
    "out_console",
    "out_file_option",
    "size",
    "store_option",
]

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


def max_bytes_option(help: str) -> Callable[[F], F]:
    """``--max-bytes SIZE`` (default ``10MB``, read with :func:`size`): a body or file cap."""
    return click.option("--max-bytes", default="10MB", show_default=True, help=help)


def allow_service_option(help: str) -> Callable[[F], F]:
    """``--allow-service``: let SPARQL use SERVICE (off: a query makes no outbound request)."""
    return click.option("--allow-service", is_flag=True, help=help)


def out_file_option(help: str) -> Callable[[F], F]:
    """``--out FILE`` (default None: the command's own default, often stdout)."""
    return click.option(
        "--out", type=click.Path(dir_okay=False, path_type=Path), default=None, help=help
    )


def flag_option(name: str, help: str, dest: str | None = None) -> Callable[[F], F]:
    """An on/off flag (off unless given), stored as ``dest`` when named."""
    decls = (name,) if dest is None else (name, dest)
    return click.option(*decls, is_flag=True, help=help)


def int_option(
    name: str, default: int | None, help: str, *, at_least: int | None = None
) -> Callable[[F], F]:
    """An integer option (at least ``at_least`` when given), its default shown when set."""
    kind = int if at_least is None else click.IntRange(min=at_least)
    return click.option(name, type=kind, default=default, show_default=True, help=help)


def float_option(
    name: str, default: float | None, help: str, *, positive: bool = False
) -> Callable[[F], F]:
    """A number option (greater than 0 with ``positive``), its default shown when set."""
    kind = click.FloatRange(min=0, min_open=True) if positive else float
    return click.option(name, type=kind, default=default, show_default=True, help=help)


def size(text: str) -> int:
    """A size like ``10MB``, ``500k`` or ``1024`` in bytes (for ``--max-bytes``).

    >>> size("10MB"), size("500k"), size("1024")
    (10485760, 512000, 1024)
    """
    units = {"k": 1024, "m": 1024**2, "g": 1024**3}
    value = text.strip().lower().removesuffix("b")
    factor = units.get(value[-1:], 1)
    value = value[:-1] if value[-1:] in units else value
    try:
        return int(float(value) * factor)
    except ValueError:
        raise click.BadParameter(f"{text!r} is not a size like 10MB or 500k") from None
