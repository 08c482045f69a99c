"""Test-only helpers shared by tests and bench scripts.

Ground truth for generated corpora (computed from the JSON in plain Python) and the
Chromium launcher settings; kept out of the installed package.
"""
