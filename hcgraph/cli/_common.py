"""Options and helpers shared by the commands."""

from __future__ import annotations

import math
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


class _Size(click.ParamType[int]):
    """A size option's value as bytes (:func:`size`); a bad one is a usage error naming it."""

    name = "text"  # the metavar --help has always shown (and docs/commands.md with it)

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> int:
        if isinstance(value, int):
            return value
        try:
            return size(str(value))
        except click.BadParameter as exc:
            self.fail(exc.message, param, ctx)


def max_bytes_option(help: str) -> Callable[[F], F]:
    """``--max-bytes SIZE`` (default ``10MB``): a body or file cap, passed on in bytes."""
    return click.option("--max-bytes", type=_Size(), default="10MB", show_default=True, help=help)


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


class _FiniteFloat(click.FloatRange):
    """A :class:`click.FloatRange` that also refuses ``nan`` and ``inf``: click lets them
    through (``nan`` passes every bound check), and they crash later (a NaN deadline)."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        number = super().convert(value, param, ctx)
        if not math.isfinite(number):
            self.fail(f"{value!r} is not a finite number.", param, ctx)
        return number


def float_option(
    name: str, default: float | None, help: str, *, positive: bool = False
) -> Callable[[F], F]:
    """A number option (finite and greater than 0 with ``positive``), its default shown when set."""
    # An unbounded FloatRange would show "x<=None" in --help: plain float there (push checks
    # its --timeout itself, nan and inf included).
    kind = _FiniteFloat(min=0, min_open=True) if positive else float
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
        number = float(value) * factor
    except ValueError:
        number = math.nan
    # nan, inf (also ``1e400``, which overflows to inf) and negative sizes are no cap at all:
    # refused here, as a usage error, not as a crash where the cap is used.
    if not math.isfinite(number) or number < 0:
        raise click.BadParameter(f"{text!r} is not a size like 10MB or 500k")
    return int(number)
