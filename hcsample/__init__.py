"""The sample-site generator behind ``hcgraph demo``, the tests and the benchmarks.

It lives beside the package, not in it: it makes seeded corpora of Hanging Context-shaped
stories (:mod:`hcsample.corpus`), the claim texts their paragraphs restate
(:mod:`hcsample.claims`) and the filler prose between them (:mod:`hcsample.filler`).
"""
