"""The vocabulary hcgraph writes, defined once.

Standard vocabularies (PROV-O, CiTO, schema.org, Dublin Core) do nearly all the work; the
``hc:`` terms exist only where none of them has one, each declared in ``ontology.ttl``
(docs/graph.md, "Vocabulary"). IRIs hcgraph mints for things without a URL of their own live
under ``ID``.
"""

from __future__ import annotations

import re
from pathlib import Path

from rdflib import Namespace
from rdflib.namespace import DCTERMS, PROV, RDF, RDFS, SDO, XSD, ClosedNamespace

__all__ = [
    "CITO",
    "DCTERMS",
    "GRAPH",
    "HC",
    "ID",
    "PREFIXES",
    "PROV",
    "RDF",
    "RDFS",
    "REPLY_GRAPHS",
    "SDO",
    "SHARED_GRAPHS",
    "SUPPORT_GRAPHS",
    "TURTLE_PREFIXES",
    "XSD",
]

CITO = Namespace("http://purl.org/spar/cito/")
ID = Namespace("https://w3id.org/hcgraph/id/")

#: Named graphs holding what many stories share, each thing described once (see
#: hcgraph.mapping): every triple lives in the graph of its subject's kind, so the union of all
#: graphs is a set. Story graphs are named by their story IRI and never start with this.
GRAPH = Namespace("https://w3id.org/hcgraph/graph/")
#: The shared graphs by name (``sources``, ``publishers``, …; docs/graph.md says what each
#: holds) → graph IRI.
SHARED_GRAPHS = {name: str(GRAPH[name]) for name in ("sources", "publishers", "agents", "links")}
#: One graph per manifest reply (``{REPLY_GRAPHS}{manifest_id}``) and one graph of support
#: verdicts per story (``{SUPPORT_GRAPHS}{story IRI, percent-encoded}``): replaced whole when
#: a reply or a check changes. Both are under GRAPH, so neither is ever taken for a story.
REPLY_GRAPHS = f"{GRAPH}manifest/"
SUPPORT_GRAPHS = f"{GRAPH}support/"


_ONTOLOGY = Path(__file__).resolve().parent / "ontology.ttl"
#: hcgraph's own terms (``https://w3id.org/hcgraph/ns#``): the classes and properties
#: ``ontology.ttl`` declares, read from it (its labels and comments say what each means), so
#: the two cannot drift apart. An attribute it does not declare is an AttributeError (an
#: item a KeyError), except the names a str or an rdflib ``Namespace`` already has (``title``,
#: ``count``, …): tests/test_ontology.py checks that the package names only declared terms and
#: that no declared term is shadowed by such a name.
HC = ClosedNamespace(
    "https://w3id.org/hcgraph/ns#",
    re.findall(r"^hc:(\w+) a owl:", _ONTOLOGY.read_text(encoding="utf-8"), re.MULTILINE),
)


# Prefixes used for readable Turtle/TriG and for the saved queries.
PREFIXES: dict[str, str] = {
    "hc": str(HC),
    "hcid": str(ID),
    "prov": str(PROV),
    "cito": str(CITO),
    "schema": str(SDO),
    "dcterms": str(DCTERMS),
    "rdf": str(RDF),
    "rdfs": str(RDFS),
    "xsd": str(XSD),
}

#: Prefixes for serialised RDF: the id namespaces get short, readable prefixes instead of
#: ``hcid:`` (whose local names would need escaped slashes).
TURTLE_PREFIXES: dict[str, str] = {
    **{k: v for k, v in PREFIXES.items() if k != "hcid"},
    "manifest": f"{ID}manifest/",
    "claim": f"{ID}claim/",
    "publisher": f"{ID}publisher/",
}
