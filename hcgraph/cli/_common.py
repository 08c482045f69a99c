"""Options and helpers shared by the commands."""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, TypeVar

import click
from rich.console import Console, ConsoleDimensions
from rich.markup import escape

from ..errors import visible
from ..limits import default_query_memory, parse_memory, run_limited
from ..store import DEFAULT_STORE, Store

F = TypeVar("F", bound=Callable[..., Any])
T = TypeVar("T")


#: The width output that is not a terminal is laid out at: wide enough that no line is
#: wrapped, so ``hcgraph trace URL | grep TITLE`` finds a whole title (rich pads nothing:
#: a line is as long as its text).
UNWRAPPED = 1_000_000


_WIDTH_KEY = "hcgraph.width"  # where --width keeps its value: the run's click context


class TermConsole(Console):
    """A rich console that wraps only for a terminal.

    rich lays out for the terminal's width (80 when it finds none) even when the output
    goes to a pipe or a file, breaking titles and URLs mid-string there. This console lays
    out a pipe or a file at :data:`UNWRAPPED` columns (whole lines), a terminal at its own
    width, and either at the ``--width`` of the running command when it has one.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if kwargs.get("width") is None:
            # rich takes an exported COLUMNS as a fixed width for a pipe too; here it counts
            # only for a terminal (rich reads it again there), so a pipe gets whole lines.
            self._width = None

    @property
    def fixed_width(self) -> int | None:
        """The running command's ``--width`` (None: not given, or no command running)."""
        ctx = click.get_current_context(silent=True)
        value = None if ctx is None else ctx.meta.get(_WIDTH_KEY)
        return value if isinstance(value, int) else None

    @property
    def size(self) -> ConsoleDimensions:
        """The terminal's size; a fixed or unwrapped width for the rest (see the class)."""
        if self._width is not None:  # set in code (console.width = N): as rich does
            return super().size
        width = self.fixed_width or (None if self.is_terminal else UNWRAPPED)
        return super().size if width is None else ConsoleDimensions(width, 25)

    @size.setter
    def size(self, new_size: tuple[int, int]) -> None:
        self._width, self._height = new_size


# No markup, highlighting or emoji codes are read from what is printed: untrusted text is
# escaped with errors.visible (and rich.markup.escape where a line has markup of its own).
out_console = TermConsole(highlight=False, soft_wrap=True, emoji=False)
err_console = TermConsole(stderr=True, highlight=False, soft_wrap=True, emoji=False)


def shown(text: object) -> str:
    """Untrusted text (a story's, a server's, a file name) for a line printed with rich
    markup: on one line, control and bidi characters escaped (:func:`~hcgraph.errors.visible`)
    and rich markup escaped, so it can neither send the terminal escape sequences nor be
    read as markup (``[link=…]``)."""
    return escape(visible(str(text), one_line=True))


def print_lines(lines: Iterable[tuple[str, Any]]) -> None:
    """Print a report the library rendered: each ``(stream, line)`` on stdout (``"out"``)
    or stderr (``"err"``), in order."""
    for stream, line in lines:
        (err_console if stream == "err" else out_console).print(line)


def on_store(func: Callable[..., T], store_dir: Path, *args: Any, **kwargs: Any) -> T:
    """``func(store, *args, **kwargs)`` on the store at ``store_dir``, open read-only."""
    with Store(store_dir, read_only=True) as store:
        return func(store, *args, **kwargs)


def run_limited_on_store(
    func: Callable[..., T], store_dir: Path, *args: Any, query_memory: int | None, **limits: Any
) -> T:
    """:func:`on_store` in a child process (:func:`~hcgraph.limits.run_limited`, given
    ``limits``: ``name``, ``timeout_s``, ``daemon``) under ``--query-memory`` (``None``: the
    default share; 0: none), so a query that runs away stops with one line, not a kernel
    kill; in this process when no limit applies."""
    memory = default_query_memory() if query_memory is None else query_memory
    if limits.get("timeout_s") is None and not memory:
        return on_store(func, store_dir, *args)
    result: T = run_limited(on_store, func, store_dir, *args, memory=memory, **limits)
    return result


def width_option(func: F) -> F:
    """``--width N``: lay the human output out at N columns (default: the terminal's width;
    no wrapping when the output is not a terminal)."""

    def apply(ctx: click.Context, param: click.Parameter, value: int | None) -> int | None:
        ctx.meta[_WIDTH_KEY] = value
        return value

    return click.option(
        "--width",
        type=click.IntRange(min=20),
        default=None,
        expose_value=False,
        callback=apply,
        help="Wrap the human output at N columns (default: the terminal's width; "
        "whole lines when the output is not a terminal).",
    )(func)


def store_option(func: F) -> F:
    """``--store DIR``: the store directory (default ``output/store``)."""
    return dir_option(
        "--store", "store_dir", help="Store directory.", default=DEFAULT_STORE, show_default=True
    )(func)


class _Bytes(click.ParamType[int]):
    """A size option's value as bytes, read by ``parse``; a bad one (``ValueError``) is a
    usage error naming the option. ``name`` is the metavar ``--help`` shows."""

    def __init__(self, name: str, parse: Callable[[str], int]) -> None:
        self.name, self.parse = name, parse

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> int:
        if isinstance(value, int):
            return value
        try:
            return self.parse(str(value))
        except ValueError as exc:
            self.fail(str(exc), param, ctx)


def max_bytes_option(help: str) -> Callable[[F], F]:
    """``--max-bytes SIZE`` (default ``10MB``): a body or file cap, passed on in bytes."""
    return click.option(
        "--max-bytes", type=_Bytes("text", size), default="10MB", show_default=True, help=help
    )


def query_memory_option(func: F) -> F:
    """``--query-memory SIZE``: the memory one query process may take (default: its share
    of half the machine's; ``0``: no limit). ``None`` when not given."""
    return click.option(
        "--query-memory", type=_Bytes("size", parse_memory), default=None,
        help="Stop a query that needs more memory than this (2G, 512M; 0: no limit); default:"
        " half the machine's memory, shared by the queries run at once.",
    )(func)  # fmt: skip


def file_option(
    *decls: str, help: str, exists: bool = False, directory: bool = False, **kw: Any
) -> Callable[[F], F]:
    """An option naming a file (``directory``: a directory), as a :class:`~pathlib.Path`
    (``exists``: it must exist)."""
    kind = click.Path(file_okay=not directory, dir_okay=directory, exists=exists, path_type=Path)
    return click.option(*decls, type=kind, help=help, **kw)


dir_option = functools.partial(file_option, directory=True)


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


class FiniteFloat(click.FloatRange):
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
    kind = FiniteFloat(min=0, min_open=True) if positive else float
    return click.option(name, type=kind, default=default, show_default=True, help=help)


def size(text: str) -> int:
    """A size like ``10MB``, ``500k`` or ``1024`` in bytes (for ``--max-bytes``).

    >>> size("10MB"), size("500k"), size("1024")
    (10485760, 512000, 1024)
    """
    value = text.strip().lower().removesuffix("b")
    factor = {"k": 1024, "m": 1024**2, "g": 1024**3}.get(value[-1:], 1)
    try:
        number = float(value[:-1] if factor > 1 else value) * factor
    except ValueError:
        number = math.nan
    # nan, inf (also ``1e400``, which overflows to inf) and negative sizes are no cap at all:
    # refused here, as a usage error, not as a crash where the cap is used.
    if not math.isfinite(number) or number < 0:
        raise ValueError(f"{text!r} is not a size like 10MB or 500k")
    return int(number)
