"""Claims with their text: manifest replies in, and the check that each paragraph says what
the claims it cites say (the fifth promise of a story's ``disclosure``).

Modules, one job each:

- :mod:`~hcgraph.claims.reply`: the manifest API's reply shape, read into plain data (the one
  place that knows the shape).
- :mod:`~hcgraph.claims.fetching`: fetch replies by id over HTTP (politely, never twice) or
  read saved ones from a directory, into the store's manifest archive.
- :mod:`~hcgraph.claims.support`: the deterministic support check of one text against the
  claims it cites (numbers, names, negation, quotes, lexical overlap).
"""
