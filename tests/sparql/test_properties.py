"""Differential property tests: incremental == from scratch, merged == separate,
chronolog's evaluator == pyoxigraph's (the oracle)."""
from __future__ import annotations

from collections import Counter

import pyoxigraph as ox
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from chronolog.sparql import prepare
from chronolog.sparql.incremental import StandingQueries
from chronolog.store import Database, Layers
from chronolog.terms import TermDictionary

E = "http://e/"
PREFIX = "PREFIX : <http://e/> "
NODES = [f"n{i}" for i in range(5)]
PREDS = [f"p{i}" for i in range(3)]
VARS = ["?a", "?b", "?c", "?d"]

SETTINGS = settings(max_examples=100, deadline=None, suppress_health_check=list(HealthCheck))

triple = st.tuples(st.sampled_from(NODES), st.sampled_from(PREDS), st.one_of(st.sampled_from(NODES), st.integers(0, 9)))
graphs = st.lists(triple, max_size=25)


def _encode(d: TermDictionary, t: tuple) -> tuple:
    s, p, o = t
    return (d.iri(E + s), d.iri(E + p), d.encode_value(o) if isinstance(o, int) else d.iri(E + o))


def _oracle(text: str, view: Layers, d: TermDictionary) -> tuple[list[str], list[tuple]]:
    """pyoxigraph's answer to SELECT ``text`` over ``view``: (variables, rows)."""
    store = ox.Store()
    store.extend([ox.Quad(*map(d.decode, t)) for db in view.layers for t in db.triples])
    result = store.query(text)
    names = [v.value for v in result.variables]
    return names, [tuple(sol[i] for i in range(len(names))) for sol in result]


def _db(d: TermDictionary, triples, exclude=frozenset()) -> Database:
    db = Database()
    for t in triples:
        f = _encode(d, t)
        if f not in exclude:
            db.triples.add(f)
    return db


term_s = st.one_of(st.sampled_from(VARS), st.sampled_from([":" + n for n in NODES]))
term_p = st.one_of(st.sampled_from([":" + p for p in PREDS]), st.just("?p"))
term_o = st.one_of(st.sampled_from(VARS), st.sampled_from([":" + n for n in NODES]), st.integers(0, 9).map(str))
patterns = st.lists(st.tuples(term_s, term_p, term_o), min_size=1, max_size=4)


def _vars(pats) -> list[str]:
    return sorted({x for tr in pats for x in tr if x.startswith("?")})


@st.composite
def filters(draw, pats) -> str:
    vs = _vars(pats)
    if not vs or not draw(st.booleans()):
        return ""
    v = draw(st.sampled_from(vs))
    op = draw(st.sampled_from([">", "<", ">=", "<="]))
    return f"FILTER({v} {op} {draw(st.integers(0, 9))})"


def _bgp_query(pats, filt: str) -> str:
    body = " . ".join(" ".join(tr) for tr in pats)
    vs = _vars(pats)
    proj = " ".join(vs) if vs else "*"
    return PREFIX + f"SELECT {proj} WHERE {{ {body} {filt} }}"


def _rows(result) -> Counter:
    return Counter(tuple(result))


@st.composite
def standing_case(draw):
    pats = draw(patterns)
    filt = draw(filters(pats))
    vs = _vars(pats)
    if vs and draw(st.booleans()):  # a BIND, maybe filtered, projected
        v = draw(st.sampled_from(vs))
        filt += draw(st.sampled_from([f" BIND({v} * 2 AS ?z)", f" BIND(STR({v}) AS ?z)",
                                      f" BIND({v} + 1 AS ?z) FILTER(?z > 5)"]))
    return pats, filt, draw(graphs), draw(graphs)


@SETTINGS
@given(standing_case())
def test_incremental_equals_from_scratch(case) -> None:
    pats, filt, bg_triples, ov_triples = case
    d = TermDictionary()
    bg = _db(d, bg_triples)
    ov = _db(d, ov_triples, exclude=bg.triples.facts)  # layers are disjoint
    text = _bgp_query(pats, filt)
    if "?z" in filt:
        text = text.replace("SELECT ", "SELECT ?z ", 1)
    sq = StandingQueries(d, bg)
    reg = sq.register("q", text)
    assert reg.incremental
    new = sq.step(ov).get("q", [])
    incremental = Counter(sq.background_answer("q")) + Counter(new)
    pq = prepare(text, d)
    scratch = Counter(tuple(None if t is None else d.encode(t) for t in row) for row in pq.execute(Layers([bg, ov])))
    assert incremental == scratch
    # and a second time point reuses the compiled plans on a fresh overlay
    assert Counter(sq.step(Database()).get("q", [])) == Counter()
    again = Counter(sq.background_answer("q")) + Counter(sq.step(ov).get("q", []))
    assert again == scratch


@SETTINGS
@given(patterns, st.lists(st.tuples(st.sampled_from([">", "<", ">=", "<="]), st.integers(0, 9)), min_size=1, max_size=5),
       graphs, graphs)
def test_merged_equals_separate(pats, conds, bg_triples, ov_triples) -> None:
    d = TermDictionary()
    bg = _db(d, bg_triples)
    ov = _db(d, ov_triples, exclude=bg.triples.facts)
    vs = _vars(pats)
    v = vs[0] if vs else None
    texts = [_bgp_query(pats, f"FILTER({v} {op} {k})" if v else "") for op, k in conds]
    shared, separate = StandingQueries(d, bg, share=True), StandingQueries(d, bg, share=False)
    for i, t in enumerate(texts):
        shared.register(f"q{i}", t)
        separate.register(f"q{i}", t)
    a, b = shared.step(ov), separate.step(ov)
    assert {k: Counter(x) for k, x in a.items()} == {k: Counter(x) for k, x in b.items()}


@st.composite
def general_query(draw) -> str:
    pats = draw(patterns)
    body = " . ".join(" ".join(tr) for tr in pats)
    extra = draw(st.sampled_from([
        "", "OPTIONAL { ?a :p1 ?z }", "OPTIONAL { ?b :p2 ?z FILTER(?z != 3) }",
        "MINUS { ?a :p0 :n1 }", "FILTER NOT EXISTS { ?a :p2 ?a }", "BIND(?b AS ?z)",
        "VALUES ?a { :n0 :n1 }", "FILTER(isIRI(?b) || ?b > 4)",
    ]))
    form = draw(st.sampled_from(["plain", "union", "count", "distinct", "path"]))
    if form == "union":
        where = f"{{ {body} }} UNION {{ ?a :p1 ?b }} {extra}"
    elif form == "path":
        where = f"{body} . ?a (:p0|^:p1)+ ?q {extra}"
    else:
        where = f"{body} {extra}"
    if form == "count":
        return PREFIX + f"SELECT ?a (COUNT(*) AS ?n) WHERE {{ {where} }} GROUP BY ?a"
    return PREFIX + ("SELECT DISTINCT * " if form == "distinct" else "SELECT * ") + f"WHERE {{ {where} }}"


@SETTINGS
@given(general_query(), graphs)
def test_fast_path_equals_general_path(text, triples) -> None:
    d = TermDictionary()
    view = Layers([_db(d, triples)])
    a = prepare(text, d).execute(view)
    b_names, b_rows = _oracle(text, view, d)
    names = sorted(a.variables)
    assert names == sorted(b_names)

    def rows(variables, result):
        idx = [variables.index(n) for n in names]
        return Counter(tuple(row[i] for i in idx) for row in result)

    assert rows(a.variables, a) == rows(b_names, b_rows)


EXPRESSIONS = [
    "?o + 1", "?o * 2.5", "?o / 4", "?o / 0", "-?o", "ABS(?o - 5)", "ROUND(?o / 3)", "CEIL(?o / 3)",
    "FLOOR(?o / 3)", "STR(?o)", "STRLEN(STR(?o))", "UCASE(STR(?a))", "LCASE(STR(?o))",
    "IF(isNumeric(?o), ?o, -1)", "COALESCE(?nope, ?o)", "DATATYPE(?o)", "isIRI(?o)", "isLiteral(?o)",
    'CONCAT(STR(?a), "-", STR(?o))', "SUBSTR(STR(?a), 10, 3)", 'REPLACE(STR(?a), "n([0-9])", "N$1")',
    '?o > 4 && ?o < 8', "?o > 4 || isIRI(?o)", "!(?o = 3)", "?o IN (1, 2, :n1)", "?o NOT IN (1, :n2)",
    "sameTerm(?o, :n1)", 'STRSTARTS(STR(?o), "http")', 'CONTAINS(STR(?o), "n")', 'STRAFTER(STR(?a), "e/")',
    'STRBEFORE(STR(?a), "/n")', "MD5(STR(?o))", "SHA1(STR(?o))", "xsd:double(?o)", "xsd:string(?o)",
    "xsd:decimal(?o) / 4", "xsd:integer(?o)", "xsd:boolean(?o)", 'LANGMATCHES(LANG(STRLANG(STR(?o), "en-GB")), "en")',
    'STRDT(STR(?o), xsd:integer) + 1', 'REGEX(STR(?a), "N[0-3]$", "i")', "ENCODE_FOR_URI(STR(?a))",
    "BOUND(?o)", "?o = ?a", "?o != 3", "?o <= 5", "IRI(CONCAT(\"http://e/x\", STR(?o)))",
]
AGGREGATES = ["COUNT(?o)", "COUNT(DISTINCT ?o)", "SUM(?o)", "AVG(?o)", "MIN(?o)", "MAX(?o)", "COUNT(*)",
              "SUM(DISTINCT ?o)", "MAX(STR(?o))"]


def _value_key(t):
    from chronolog.sparql.expressions import numeric

    n = numeric(t) if t is not None else None
    if n is not None:
        v = n[1]
        return ("num", t.datatype.value, float(v) if v == v else "NaN")
    return t


@SETTINGS
@given(st.sampled_from(EXPRESSIONS), st.sampled_from(["", "?p", "?a"]), st.sampled_from(AGGREGATES), graphs)
def test_function_library_equals_pyoxigraph(expr, group, agg, triples) -> None:
    """Every SPARQL function and aggregate, chronolog's evaluator against pyoxigraph's."""
    d = TermDictionary()
    view = Layers([_db(d, triples)])
    prefix = PREFIX + "PREFIX xsd: <http://www.w3.org/2001/XMLSchema#> "
    queries = [prefix + f"SELECT ?a ?o (({expr}) AS ?z) WHERE {{ ?a ?p ?o }}",
               prefix + f"SELECT ?a WHERE {{ ?a ?p ?o FILTER({expr}) }}",
               prefix + f"SELECT {group} ({agg} AS ?g) WHERE {{ ?a ?p ?o }} {'GROUP BY ' + group if group else ''}"]
    for text in queries:
        a = prepare(text, d).execute(view)
        b_names, b_rows = _oracle(text, view, d)
        names = sorted(a.variables)

        def rows(variables, result):
            idx = [variables.index(n) for n in names]
            return Counter(tuple(_value_key(row[i]) for i in idx) for row in result)

        assert rows(a.variables, a) == rows(b_names, b_rows), text


@st.composite
def exists_case(draw):
    pats = draw(patterns)
    inner = draw(st.lists(st.tuples(term_s, term_p, term_o), min_size=1, max_size=2))
    negated = draw(st.booleans())
    inner_filter = draw(st.sampled_from(["", " FILTER(?c > 3)", " FILTER(?a != ?b)"]))
    filt = f"FILTER({'NOT ' if negated else ''}EXISTS {{ {' . '.join(' '.join(tr) for tr in inner)}{inner_filter} }})"
    if draw(st.booleans()):
        filt += draw(filters(pats))
    return pats, filt, draw(graphs), draw(graphs)


@SETTINGS
@given(exists_case())
def test_exists_incremental_equals_full_evaluation(case) -> None:
    """[NOT] EXISTS queries: the delta-driven path (taken when the BGP has no background
    solution) gives the general path's new solutions (full evaluation minus the background
    answer, as multisets), on every time point."""
    pats, filt, bg_triples, ov_triples = case
    d = TermDictionary()
    bg = _db(d, bg_triples)
    ov = _db(d, ov_triples, exclude=bg.triples.facts)
    text = _bgp_query(pats, filt)
    sq = StandingQueries(d, bg)
    event(f"incremental: {sq.register('q', text).incremental}")
    for overlay in (ov, Database(), ov):
        fast = Counter(sq.step(overlay).get("q", []))
        full = Counter(sq.from_scratch(Layers([bg, overlay])).get("q", []))
        assert fast == full


def test_exists_is_delta_driven_only_without_background_solutions() -> None:
    d = TermDictionary()
    bg = _db(d, [("s1", "in", "n0"), ("s1", "val", 3)])
    sq = StandingQueries(d, bg)
    q = PREFIX + "SELECT ?o ?v WHERE { ?o :by :s2 ; :val ?v FILTER NOT EXISTS { ?w :by :s3 } }"
    assert sq.register("fresh", q).incremental  # no :by :s2 fact in the background
    # the background has a solution, which a time point's facts could filter out: general path
    assert not sq.register("old", q.replace(":by :s2", ":in :n0")).incremental
    one = _db(d, [("o1", "by", "s2"), ("o1", "val", 5)])
    both = _db(d, [("o1", "by", "s2"), ("o1", "val", 5), ("w", "by", "s3")])
    assert sq.step(one)["fresh"] == [(d.iri(E + "o1"), d.encode_value(5))]
    assert "fresh" not in sq.step(both)
