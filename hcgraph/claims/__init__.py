"""Claims with their text: manifest replies in, and the check that each paragraph says what
the claims it cites say (the fifth promise of a story's ``disclosure``).

In the order data flows: :mod:`~hcgraph.claims.reply` (the reply's shape),
:mod:`~hcgraph.claims.fetching` (replies into the manifest archive),
:mod:`~hcgraph.claims.replies` (one reply graph per manifest),
:mod:`~hcgraph.claims.support` with :mod:`~hcgraph.claims.plaintext` (the deterministic check
of one text), :mod:`~hcgraph.claims.verdicts` (every passage checked),
:mod:`~hcgraph.claims.graphing` (replies and verdicts as RDF, and read back for the views);
:mod:`~hcgraph.claims.pulling` is ``hcgraph manifests fetch`` as one call.
"""
