"""Claims with their text: manifest replies in, and the check that each paragraph says what
the claims it cites say (the fifth promise of a story's ``disclosure``).

Modules, one job each, in the order data flows::

    reply ─▶ fetching ─▶ replies ─▶ verdicts ─▶ graphing
                                  (support, plaintext)        pulling: the whole job

- :mod:`~hcgraph.claims.reply`: the manifest API's reply shape, read into plain data (the one
  place that knows the shape).
- :mod:`~hcgraph.claims.fetching`: fetch replies by id over HTTP (politely, never twice) or
  read saved ones from a directory, into the store's manifest archive.
- :mod:`~hcgraph.claims.replies`: the archived replies into one reply graph per manifest,
  rewritten only when an answer changed.
- :mod:`~hcgraph.claims.plaintext` and :mod:`~hcgraph.claims.support`: the deterministic
  support check of one text against the claims it cites (numbers, names, negation, quotes,
  lexical overlap), on Markdown read as sentences with their offsets.
- :mod:`~hcgraph.claims.verdicts`: every passage of every story checked against the claims'
  text, a story rechecked only when what it depends on changed.
- :mod:`~hcgraph.claims.graphing`: replies and verdicts as RDF (PROV, CiTO, schema.org).
- :mod:`~hcgraph.claims.pulling`: ``hcgraph manifests fetch`` as one library call.
"""
