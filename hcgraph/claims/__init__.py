"""Claims with their text: manifest replies in, and the check that each paragraph says what
the claims it cites say (the fifth promise of a story's ``disclosure``).

Data flows reply (its shape) → fetching (the archive) → replies (reply graphs) → support with
plaintext (one text checked) → verdicts (every passage) → graphing (as RDF, and read back);
pulling is ``hcgraph manifests fetch`` as one call.
"""
