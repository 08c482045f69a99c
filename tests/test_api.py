"""The stated public API: everything in __all__ exists and is documented."""

from __future__ import annotations

import inspect

import hcgraph


def test_all_names_exist_and_are_documented() -> None:
    assert len(hcgraph.__all__) == len(set(hcgraph.__all__))
    for name in hcgraph.__all__:
        obj = getattr(hcgraph, name)
        if inspect.isfunction(obj) or inspect.isclass(obj):
            assert inspect.getdoc(obj), f"{name} has no docstring"


def test_version_matches_package_metadata() -> None:
    from importlib.metadata import PackageNotFoundError, version

    try:
        assert version("hcgraph") == hcgraph.__version__
    except PackageNotFoundError:  # running from a checkout that is not installed
        assert hcgraph.__version__.count(".") == 2


def test_errors_share_one_root() -> None:
    for name in hcgraph.__all__:
        obj = getattr(hcgraph, name)
        if inspect.isclass(obj) and issubclass(obj, Exception):
            assert issubclass(obj, hcgraph.HcgraphError)
