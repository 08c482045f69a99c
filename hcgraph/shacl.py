"""SHACL validation, graph by graph: pySHACL judges, Oxigraph finds what is worth judging.

:func:`validate` checks every named graph against ``shapes.ttl``, one :class:`ShaclResult`
per violation; pySHACL sees one graph plus the ``rdf:type`` of every IRI it points to. The
default ``fast`` mode first compiles the shapes into SPARQL over the union (docs/queries.md)
returning the focus nodes that *may* violate a constraint (anything not compiled makes all
its focus nodes candidates), and pySHACL validates those; ``full`` validates every graph.
"""

from __future__ import annotations

import itertools
from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyoxigraph as ox
import rdflib
from rdflib.collection import Collection
from rdflib.namespace import RDF, RDFS, SH, XSD

from .errors import CheckError, first_line
from .store import Store

__all__ = [
    "MODES",
    "SHAPES_FILE",
    "ShaclResult",
    "candidates",
    "candidates_at",
    "load_shapes",
    "validate",
]

SHAPES_FILE = Path(__file__).resolve().parent / "shapes.ttl"
MODES = ("fast", "full")

# Keys of a property shape that either constrain nothing or are compiled below.
_DOC_KEYS = {SH.path, SH.message, SH.name, SH.description, SH.severity, SH.order, SH.group}
_COMPILED = {SH.minCount, SH.maxCount, SH.datatype, SH.nodeKind, SH["class"], SH["or"], SH.node}
# XSD datatypes Oxigraph casts to: a literal of one of them is well-formed iff the cast works.
_CASTS = {XSD[t] for t in ("string", "boolean", "integer", "decimal", "float", "double",
                           "dateTime", "date", "time")}  # fmt: skip
_YEARS = {XSD.dateTime, XSD.date}
_OTHER_TARGETS = (SH.targetNode, SH.targetSubjectsOf, SH.targetObjectsOf)
_NODE_KIND_FAILS = {
    SH.IRI: "!isIRI(?v)",
    SH.Literal: "!isLiteral(?v)",
    SH.BlankNode: "!isBlank(?v)",
    SH.BlankNodeOrIRI: "isLiteral(?v)",
    SH.IRIOrLiteral: "isBlank(?v)",
    SH.BlankNodeOrLiteral: "isIRI(?v)",
}


@dataclass(frozen=True)
class ShaclResult:
    """One SHACL validation result, tied to the story graph it was found in."""

    story: str
    focus: str
    path: str
    message: str
    severity: str
    shape: str
    value: str


def load_shapes(path: Path | str | None = None) -> rdflib.Graph:
    """The shapes graph: ``path`` or the packaged ``shapes.ttl``.

    Raises:
        CheckError: the file cannot be read or is not valid Turtle.
    """
    source = Path(path) if path is not None else SHAPES_FILE
    graph = rdflib.Graph()
    try:
        graph.parse(source, format="turtle")
    except (OSError, SyntaxError, ValueError) as exc:  # rdflib raises BadSyntax (a SyntaxError)
        reason = first_line(exc)
        # rdflib's BadSyntax: its first line, "at line 3 of <>:", says where but not what
        why, line = getattr(exc, "_why", None), getattr(exc, "lines", None)
        if isinstance(why, str) and isinstance(line, int):
            reason = f"line {line + 1}: {why}"
        raise CheckError(f"{source}: cannot load SHACL shapes: {reason}") from None
    if not any(graph.subjects(RDF.type, SH.NodeShape)):
        raise CheckError(f"{source}: no sh:NodeShape found")
    return graph


# --- pre-selection: shapes compiled to SPARQL -------------------------------------------------
def _iri(term: Any) -> str:
    return f"<{term}>"


def _sh_keys(graph: rdflib.Graph, node: Any) -> set[Any]:
    """The SHACL predicates on ``node`` (labels, comments and other vocabularies ignored)."""
    return {p for p in graph.predicates(node, None) if str(p).startswith(str(SH))}


@dataclass(frozen=True)
class _Query:
    """A query yielding candidate focus nodes as ``?r``; skipped when the two ``unless``
    variables of its task's pre-check are equal; answers kept to the ``kept`` classes."""

    sparql: str
    unless: tuple[str, str] | None = None
    kept: tuple[str, ...] = ()


@dataclass(frozen=True)
class _Task:
    """Pre-selection queries, and a one-row ``precheck`` that may prove some find nothing."""

    queries: tuple[_Query, ...]
    precheck: str | None = None


class _Groups:
    """The constraints of the target-class shapes grouped by property, so one pass over a
    property's triples proves each for every shape using it: → the target classes."""

    def __init__(self) -> None:
        self.minimum: defaultdict[tuple[str, int], set[Any]] = defaultdict(set)
        self.maximum: defaultdict[tuple[str, int], set[Any]] = defaultdict(set)
        self.bad: defaultdict[tuple[str, str], set[Any]] = defaultdict(set)
        self.typed: defaultdict[tuple[str, tuple[str, ...]], set[Any]] = defaultdict(set)

    def add(self, cls: Any, compiled: _Constraints) -> None:
        """Record one property shape's constraints for the targets of class ``cls``."""
        p, low, high, fails, options = compiled
        if low:
            self.minimum[p, low].add(cls)
        if high is not None:
            self.maximum[p, high].add(cls)
        for fail in fails:
            self.bad[p, fail].add(cls)
        for alternatives in options:
            self.typed[p, alternatives].add(cls)

    def tasks(self) -> list[_Task]:
        """A task per path with a count or value-test constraint, and per class requirement."""
        paths = sorted({p for p, _ in [*self.minimum, *self.maximum, *self.bad]})
        out = [self._property_task(p) for p in paths]
        out.extend(_class_task(p, alts, cls) for (p, alts), cls in sorted(self.typed.items()))
        return out

    def _property_task(self, p: str) -> _Task:
        """One pass over ``p``'s triples proving its count and value tests, and the exact
        queries for those it does not prove."""
        queries: list[_Query] = []
        aggregates = ["(COUNT(?v) AS ?n)", "(COUNT(DISTINCT ?s) AS ?d)", "(0 AS ?z)"]
        needed = self._min_count(p, queries, aggregates)
        self._max_count(p, queries)
        self._value_tests(p, queries, aggregates)
        rows = f"{{ ?s {p} ?v BIND (?s AS ?f0) }}"
        pattern = f"{_union(needed)} UNION {rows}" if needed else rows
        return _Task(tuple(queries), f"SELECT {' '.join(aggregates)} WHERE {{ {pattern} }}")

    def _min_count(self, p: str, queries: list[_Query], aggregates: list[str]) -> set[Any]:
        """``sh:minCount`` on ``p`` (``?u`` = ``?d`` proves a minimum of 1; a higher one is
        always counted); returns the classes whose instances need a value."""
        needed = self.minimum.get((p, 1), set())
        if needed:
            aggregates.append("(COUNT(DISTINCT ?f0) AS ?u)")
            queries.append(
                _Query(f"{_HEAD} {{ {_union(needed)} MINUS {{ ?f0 {p} ?v }} }}", ("u", "d"))
            )
        for (q, low), classes in sorted(self.minimum.items()):
            if q == p and low > 1:
                counts = f"SELECT ?f0 (COUNT(?v) AS ?n) WHERE {{ ?f0 {p} ?v }} GROUP BY ?f0"
                queries.append(_Query(
                    f"{_HEAD} {{ {_typed(classes)} OPTIONAL {{ {{ {counts} }} }}"
                    f" FILTER (!BOUND(?n) || ?n < {low}) }}"
                ))  # fmt: skip
        return needed

    def _max_count(self, p: str, queries: list[_Query]) -> None:
        """``sh:maxCount`` on ``p``: ``?n`` (triples) = ``?d`` (subjects) proves nobody has
        two values; else the subjects with too many, kept to the focus nodes."""
        for (q, high), classes in sorted(self.maximum.items()):
            if q == p:
                many = (
                    f"SELECT (?f0 AS ?r) WHERE {{ ?f0 {p} ?v }} GROUP BY ?f0"
                    f" HAVING (COUNT(?v) > {high})"
                )
                kept = tuple(str(c) for c in sorted(classes, key=str))
                queries.append(_Query(many, ("n", "d") if high else None, kept))

    def _value_tests(self, p: str, queries: list[_Query], aggregates: list[str]) -> None:
        """``sh:datatype``/``sh:nodeKind`` on ``p``: no bad value proves it; else a query."""
        for i, ((q, fail), classes) in enumerate(sorted(self.bad.items())):
            if q == p:
                aggregates.append(f"(SUM(IF(BOUND(?v) && COALESCE({fail}, true), 1, 0)) AS ?b{i})")
                test = f"FILTER (COALESCE({fail}, true))"
                query = f"{_HEAD} {{ {_typed(classes)} {_VALUES.format(p=p)} {test} }}"
                queries.append(_Query(query, (f"b{i}", "z")))


#: A compiled property shape: (path, minimum, maximum, value tests that fail, class
#: requirements: each a tuple of alternatives).
_Constraints = tuple[str, int, int | None, list[str], list[tuple[str, ...]]]
_HEAD = "SELECT DISTINCT (?f0 AS ?r) WHERE"
_VALUES = "{{ SELECT ?f0 ?v WHERE {{ ?f0 {p} ?v }} }}"


def _everyone(pattern: str) -> _Task:
    """A task making every ``?f0`` of ``pattern`` a candidate."""
    return _Task((_Query(f"{_HEAD} {{ {pattern} }}"),))


def _union(classes: Iterable[Any]) -> str:
    """A pattern binding ``?f0`` to the instances of any of ``classes``."""
    return " UNION ".join(f"{{ ?f0 a {_iri(c)} }}" for c in sorted(classes, key=str))


def _typed(classes: Iterable[Any]) -> str:
    """:func:`_union` as a subquery (Oxigraph then joins it by hashing)."""
    return f"{{ SELECT ?f0 WHERE {{ {_union(classes)} }} }}"


def _class_task(p: str, alternatives: tuple[str, ...], classes: set[Any]) -> _Task:
    """``sh:class``/``sh:or`` on ``p``: a value must be an instance of an option, typed in
    any graph; pre-check: no value of the property lacks every option."""
    kinds = " UNION ".join(f"{{ ?v a {c} }}" for c in alternatives)
    query = f"{_HEAD} {{ {_typed(classes)} {_VALUES.format(p=p)} MINUS {{ {kinds} }} }}"
    precheck = f"ASK {{ ?s {p} ?v MINUS {{ {kinds} }} }}"  # stops at the first
    return _Task((_Query(query, ("found", "none")),), precheck)


class _Compiler:
    """Turns node shapes into SPARQL queries over the union yielding ``?r`` (focus nodes):
    target-class constraints grouped by property (:class:`_Groups`), shapes reached through
    ``sh:node`` per property on the path from the target (:meth:`shape`)."""

    def __init__(self, shapes: rdflib.Graph) -> None:
        self.g = shapes
        self.counter = itertools.count()

    def tasks(self) -> list[_Task]:
        """Every pre-selection task of the shapes."""
        groups = _Groups()
        out = [task for shape in self.targeted() for task in self.shape_tasks(shape, groups)]
        return out + groups.tasks()

    def shape_tasks(self, shape: Any, groups: _Groups) -> list[_Task]:
        """The tasks of one targeted shape: its other targets (all candidates), and per
        target class every instance or its constraints (into ``groups``) and ``sh:node``."""
        out = [_everyone(pattern) for pattern in self.other_focus(shape)]
        targets = list(self.g.objects(shape, SH.targetClass))
        targets += [shape] if (shape, RDF.type, RDFS.Class) in self.g else []  # implicit target
        compiled = self.compiled(shape)
        for cls in targets:
            # pySHACL also targets instances of subclasses: those (rare) are all candidates
            out.append(_everyone(f"?sub <{RDFS.subClassOf}>+ {_iri(cls)} . ?f0 a ?sub"))
            focus = f"{{ SELECT ?f0 WHERE {{ ?f0 a {_iri(cls)} }} }}"
            if compiled is None:
                out.append(_everyone(focus))
                continue
            for prop, c in compiled:
                groups.add(cls, c)
                out.extend(_Task((_Query(q),)) for q in self.nested(prop, c[0], focus, "?f0", 0))
        return out

    def compiled(self, shape: Any) -> list[tuple[Any, _Constraints]] | None:
        """The property shapes of a targeted shape with their constraints; None when any is
        not compiled (then every focus node is a candidate)."""
        keys = _sh_keys(self.g, shape) - {SH.targetClass, SH.property, *_OTHER_TARGETS}
        out = [(prop, self.constraints(prop)) for prop in self.g.objects(shape, SH.property)]
        if keys - _DOC_KEYS or any(c is None for _, c in out):
            return None
        return [(prop, c) for prop, c in out if c is not None]

    def targeted(self) -> list[Any]:
        """The shapes with targets: explicit ones, or a shape that is also an ``rdfs:Class``."""
        shapes = {s for key in (SH.targetClass, *_OTHER_TARGETS) for s in self.g.subjects(key)}
        for cls in self.g.subjects(RDF.type, RDFS.Class):
            if _sh_keys(self.g, cls):
                shapes.add(cls)
        return sorted(shapes, key=str)

    def other_focus(self, shape: Any) -> list[str]:
        """Patterns binding ``?f0`` to the IRI targets of ``shape`` other than its classes
        (and to the nodes pointing at its ``sh:targetObjectsOf`` targets)."""
        out = [f"VALUES ?f0 {{ {_iri(n)} }}" for n in self.g.objects(shape, SH.targetNode)
               if isinstance(n, rdflib.URIRef)]  # fmt: skip
        out += [f"?f0 {_iri(p)} ?x" for p in self.g.objects(shape, SH.targetSubjectsOf)]
        for p in self.g.objects(shape, SH.targetObjectsOf):
            out.append(f"?x {_iri(p)} ?f0")
            # and whoever points at them: pySHACL must see the triple, in the pointer's graph
            out.append(f"?f0 {_iri(p)} ?x")
        return out

    def constraints(self, prop: Any) -> _Constraints | None:
        """A property shape as :data:`_Constraints`; None if it cannot be compiled."""
        path = self.g.value(prop, SH.path)
        keys = _sh_keys(self.g, prop)
        if not isinstance(path, rdflib.URIRef) or keys - _DOC_KEYS - _COMPILED:
            return None
        min_count = self.g.value(prop, SH.minCount)
        max_count = self.g.value(prop, SH.maxCount)
        datatype = self.g.value(prop, SH.datatype)
        fails = [] if datatype is None else [_datatype_fails(datatype)]
        kind = self.g.value(prop, SH.nodeKind)
        if kind is not None:
            if kind not in _NODE_KIND_FAILS:
                return None
            fails.append(_NODE_KIND_FAILS[kind])
        options = self.classes(prop)
        if options is None:
            return None
        low = int(min_count) if min_count is not None else 0
        high = int(max_count) if max_count is not None else None
        return _iri(path), max(low, 0), high, fails, options

    def classes(self, prop: Any) -> list[tuple[str, ...]] | None:
        """Each ``sh:class`` of a property shape, and each ``sh:or`` of ``sh:class`` shapes
        (None: an ``sh:or`` member that is not a lone ``sh:class``)."""
        out: list[tuple[str, ...]] = [(_iri(c),) for c in self.g.objects(prop, SH["class"])]
        for alternatives in self.g.objects(prop, SH["or"]):
            options = []
            for member in Collection(self.g, alternatives):
                member_keys = _sh_keys(self.g, member) - _DOC_KEYS
                classes = list(self.g.objects(member, SH["class"]))
                if member_keys != {SH["class"]} or len(classes) != 1:
                    return None
                options.append(_iri(classes[0]))
            out.append(tuple(sorted(options)))
        return sorted(set(out))

    def shape(self, shape: Any, focus: str, var: str, depth: int) -> list[str]:
        """Queries for a node shape reached through ``sh:node``, whose focus nodes ``var``
        come from pattern ``focus`` (the candidates are the targets ``?f0`` they hang from)."""
        everyone = [f"{_HEAD} {{ {focus} }}"]
        keys = _sh_keys(self.g, shape) - {SH.targetClass, SH.property}
        if keys - _DOC_KEYS or depth > 3:
            return everyone  # node-level constraints: not compiled, so all are candidates
        out: list[str] = []
        for prop in self.g.objects(shape, SH.property):
            compiled = self.property(prop, focus, var, depth)
            if compiled is None:
                return everyone
            out.extend(compiled)
        return out

    def property(self, prop: Any, focus: str, var: str, depth: int) -> list[str] | None:
        c = self.constraints(prop)
        if c is None:
            return None
        p, low, high, fails, options = c
        values = f"{{ SELECT {var} ?v WHERE {{ {var} {p} ?v }} }}"
        out: list[str] = []
        # minCount, maxCount, datatype and nodeKind in one pass: per focus node, its values
        # (no DISTINCT needed: a graph is a set) and its bad ones.
        tests: list[str] = []
        if low > 0:
            tests.append(f"!BOUND(?n) || ?n < {low}")
        if high is not None:
            tests.append(f"(BOUND(?n) && ?n > {high})")
        if fails:
            tests.append("(BOUND(?bad) && ?bad > 0)")
        if tests:
            bad = " || ".join(f"COALESCE({f}, true)" for f in fails) or "false"
            counts = (
                f"{{ SELECT {var} (COUNT(?v) AS ?n) (SUM(IF({bad}, 1, 0)) AS ?bad)"
                f" WHERE {{ {values} }} GROUP BY {var} }}"
            )
            out.append(
                f"{_HEAD} {{ {focus} OPTIONAL {{ {counts} }} FILTER ({' || '.join(tests)}) }}"
            )
        for alternatives in options:  # an instance of one of them, typed in any graph
            kinds = " UNION ".join(f"{{ SELECT ?v WHERE {{ ?v a {c} }} }}" for c in alternatives)
            out.append(f"{_HEAD} {{ {focus} {values} MINUS {{ {kinds} }} }}")
        out.extend(self.nested(prop, p, focus, var, depth))
        return out

    def nested(self, prop: Any, p: str, focus: str, var: str, depth: int) -> list[str]:
        """Queries for the shapes ``prop`` (path ``p``) reaches through ``sh:node``."""
        out: list[str] = []
        for shape in self.g.objects(prop, SH.node):
            inner = f"?f{next(self.counter) + 1}"
            hop = f"{{ SELECT {var} {inner} WHERE {{ {var} {p} {inner} }} }}"
            out.extend(self.shape(shape, f"{focus} {hop}", inner, depth + 1))
        return out


def _datatype_fails(datatype: Any) -> str:
    """A filter true for a value that is not of ``datatype``, or ill-formed in it."""
    if datatype in _CASTS:  # ill-formed ("abc"^^xsd:integer): the cast to the datatype errs
        cast = f" || !isLiteral({_iri(datatype)}(?v))"
        if datatype in _YEARS:  # rdflib (pySHACL) parses years 1 to 9999 only
            cast += " || ABS(YEAR(?v) - 5000) > 4999"
        return f"(!isLiteral(?v) || DATATYPE(?v) != {_iri(datatype)}{cast})"
    if datatype == RDF.langString:
        return f"(!isLiteral(?v) || DATATYPE(?v) != {_iri(datatype)})"
    return "true"  # no cast tells an ill-formed value (which pySHACL reports): any may be


def _proof(store: Store, precheck: str | None) -> dict[str, Any]:
    """The one row of a pre-check, variable → value (an ``ASK``: ``found`` and ``none``)."""
    if precheck is None:
        return {}
    solutions = store.query(precheck)
    if isinstance(solutions, ox.QueryBoolean):
        return {"found": bool(solutions), "none": False}
    for row in solutions:
        return {v.value: row[v] for v in solutions.variables if row[v] is not None}
    return {}


def _instances(store: Store, nodes: list[ox.NamedNode], classes: tuple[str, ...]) -> list[Any]:
    """Those of ``nodes`` that are instances of one of ``classes``, typed in any graph."""
    wanted = {ox.NamedNode(c) for c in classes}
    return [n for n in nodes if any(q.object in wanted for q in store.quads(n, _TYPE))]


def candidates(
    store: Store, shapes: rdflib.Graph, part: tuple[int, int] = (0, 1)
) -> dict[str, set[str]]:
    """Graph → focus nodes that may violate a shape (a superset of the real ones); ``part``
    ``(i, n)`` runs every n-th task from the i-th (the union of all parts is the answer)."""
    index, parts = part
    focus: set[str] = set()
    for task in _Compiler(shapes).tasks()[index::parts]:
        focus.update(_task_focus(store, task))
    found: dict[str, set[str]] = defaultdict(set)
    for node in sorted(focus):
        for graph in {q.graph_name for q in store.quads(_node(node))}:
            if isinstance(graph, ox.NamedNode):
                found[graph.value].add(node)
    return dict(found)


def _task_focus(store: Store, task: _Task) -> Iterator[str]:
    """The focus nodes one task's queries find (those its pre-check proves empty skipped)."""
    proof = _proof(store, task.precheck)
    for q in task.queries:
        if q.unless and q.unless[0] in proof and proof[q.unless[0]] == proof.get(q.unless[1]):
            continue
        named = [row["r"] for row in store.query(q.sparql) if isinstance(row["r"], ox.NamedNode)]
        yield from (n.value for n in (_instances(store, named, q.kept) if q.kept else named))


def candidates_at(
    directory: str, shapes_path: str | None = None, part: tuple[int, int] = (0, 1)
) -> dict[str, set[str]]:
    """:func:`candidates` for the store at ``directory``, opened read-only (for workers)."""
    with Store(directory, read_only=True) as store:
        return candidates(store, load_shapes(shapes_path), part)


# --- validation with pySHACL ------------------------------------------------------------------
def _to_rdflib(term: Any) -> Any:
    if isinstance(term, ox.NamedNode):
        return rdflib.URIRef(term.value)
    if isinstance(term, ox.BlankNode):
        return rdflib.BNode(term.value)
    if term.language:
        return rdflib.Literal(term.value, lang=term.language)
    return rdflib.Literal(term.value, datatype=rdflib.URIRef(term.datatype.value))


_TYPE = ox.NamedNode(str(RDF.type))
_SUBCLASS = ox.NamedNode(str(RDFS.subClassOf))


def _data_graph(
    store: Store, name: str, focus: Iterable[str] | None
) -> tuple[rdflib.Graph, list[Any]]:
    """One graph (only the focus nodes' triples, if given) plus the types of what it cites,
    and the subjects of that graph: the only nodes validated there (a cited node's type is
    context, never a target)."""
    graph = rdflib.Graph()
    g = ox.NamedNode(name)
    quads = store.quads(graph=g) if focus is None else _focus_quads(store, g, focus, graph)
    targets: set[ox.NamedNode] = set()
    subjects: dict[Any, None] = {}
    for quad in quads:
        if isinstance(quad.object, ox.Triple) or isinstance(quad.subject, ox.Triple):
            continue  # an RDF 1.2 triple term: rdflib 7 cannot hold one, no shape names one
        subject = _to_rdflib(quad.subject)
        subjects[subject] = None
        graph.add((subject, _to_rdflib(quad.predicate), _to_rdflib(quad.object)))
        if isinstance(quad.object, ox.NamedNode):
            targets.add(quad.object)
    for target in sorted(targets, key=lambda t: t.value):
        for quad in store.quads(target, _TYPE):
            graph.add((_to_rdflib(quad.subject), RDF.type, _to_rdflib(quad.object)))
    return graph, sorted(subjects, key=str)


def _focus_quads(
    store: Store, g: ox.NamedNode, focus: Iterable[str], graph: rdflib.Graph
) -> Iterator[ox.Quad]:
    """The focus nodes' quads in ``g``, after adding ``g``'s subclass links to ``graph``
    (pySHACL targets instances of subclasses through them)."""
    for quad in store.quads(None, _SUBCLASS, graph=g):
        graph.add((_to_rdflib(quad.subject), RDFS.subClassOf, _to_rdflib(quad.object)))
    return (q for node in sorted(focus) for q in store.quads(_node(node), graph=g))


def _node(text: str) -> ox.NamedNode | ox.BlankNode:
    return ox.BlankNode(text[2:]) if text.startswith("_:") else ox.NamedNode(text)


def _results(story: str, report: rdflib.Graph) -> Iterator[ShaclResult]:
    for result in report.subjects(RDF.type, SH.ValidationResult):

        def text(prop: Any, result: Any = result) -> str:
            value = report.value(result, prop)
            return "" if value is None else str(value)

        severity = text(SH.resultSeverity).rsplit("#", 1)[-1].lower() or "violation"
        shape = report.value(result, SH.sourceShape)
        yield ShaclResult(
            story=story,
            focus=text(SH.focusNode),
            path=text(SH.resultPath),
            message=text(SH.resultMessage),
            severity=severity,
            shape=str(shape) if isinstance(shape, rdflib.URIRef) else "",
            value=text(SH.value),
        )


def _pyshacl(
    store: Store, shapes: rdflib.Graph, story: str, focus: Iterable[str] | None
) -> list[ShaclResult]:
    import pyshacl  # imported here: it is slow to import and only `check` needs it

    data, owned = _data_graph(store, story, focus)
    try:
        conforms, report, _text = pyshacl.validate(
            data,
            shacl_graph=shapes,
            inference="none",
            advanced=False,
            inplace=True,
            focus_nodes=owned,
        )
    except Exception as exc:  # pyshacl raises many kinds; one story must not stop the run
        raise CheckError(f"{story}: SHACL validation failed: {exc}") from exc
    if conforms:
        return []
    return sorted(_results(story, report), key=lambda r: (r.focus, r.path, r.message, r.value))


def validate(
    store: Store,
    shapes: rdflib.Graph | None = None,
    *,
    mode: str = "fast",
    stories: Iterable[str] | None = None,
    preselected: dict[str, set[str]] | None = None,
) -> tuple[list[ShaclResult], int]:
    """Validate graphs (only ``stories``, if given) against ``shapes`` (default: the
    packaged ones): ``fast`` runs pySHACL on the focus nodes SPARQL pre-selects (or on
    ``preselected``, :func:`candidates` found already, e.g. in another process), ``full``
    on every graph, shared ones too. Returns the results and how many graphs pySHACL saw."""
    if mode not in MODES:
        raise CheckError(f"unknown SHACL mode {mode!r}; known: {', '.join(MODES)}")
    shapes = shapes if shapes is not None else load_shapes()
    wanted = set(stories) if stories is not None else None
    if mode == "full":
        todo: dict[str, set[str] | None] = dict.fromkeys(store.graph_names())
    else:
        todo = dict(preselected if preselected is not None else candidates(store, shapes))
    if wanted is not None:
        todo = {story: focus for story, focus in todo.items() if story in wanted}
    results: list[ShaclResult] = []
    for story in sorted(todo):
        results.extend(_pyshacl(store, shapes, story, todo[story]))
    return results, len(todo)
