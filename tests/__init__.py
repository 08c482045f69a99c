"""hcgraph's test suite. A regular package, so that ``tests`` is this folder and never a top-level
``tests`` package some installed distribution ships (pywb, in the test extra, does)."""
