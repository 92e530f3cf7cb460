"""chronolog.sparql: API, bad input, result formats, the query command."""
from __future__ import annotations

import argparse
import io
import json
import tracemalloc

import pyoxigraph as ox
import pytest
from pyoxigraph import Literal, NamedNode

import chronolog.sparql as sparql
from chronolog.errors import ChronologSyntaxError
from chronolog.sparql import command, evaluate, incremental, prepare, results
from chronolog.sparql.parse import Unsupported
from chronolog.sparql.results import write_results
from chronolog.store import Database, Layers
from chronolog.terms import TermDictionary

E = "http://e/"
XSD = "http://www.w3.org/2001/XMLSchema#"


def _db(d: TermDictionary, triples) -> Database:
    db = Database()
    for s, p, o in triples:
        db.triples.add((d.iri(E + s), d.iri(E + p), d.encode_value(o) if isinstance(o, (int, float)) else d.iri(E + o)))
    return db


# ---- bad input -------------------------------------------------------------------------------
def test_malformed_query_names_file_line_column() -> None:
    text = "PREFIX : <http://e/>\nSELECT ?x WHERE {\n  ?x :p ?y .\n  FILTER(?y > )\n}\n"
    with pytest.raises(ChronologSyntaxError) as info:
        prepare(text, TermDictionary(), filename="bad.rq")
    e = info.value
    assert e.filename == "bad.rq" and e.lineno >= 2
    assert str(e).startswith(f"bad.rq:{e.lineno}:{e.offset}: ")
    assert "^" in str(e)


def test_unknown_prefix_is_located() -> None:
    text = "SELECT ?x WHERE {\n  ?x ex:p ?y\n}"
    with pytest.raises(ChronologSyntaxError) as info:
        prepare(text, TermDictionary(), filename="q.rq")
    assert (info.value.lineno, info.value.offset) == (2, 6)
    assert "unknown prefix 'ex'" in str(info.value)


@pytest.mark.parametrize("text", [
    "SELECT ?s ?v { ?s <http://e/p> ?v } GROUP BY ?s",
    "SELECT * { ?s <http://e/p> ?o BIND(1 AS ?o) }",
    "SELECT * { VALUES (?a ?b) { (1) } }",
    "SELECT * { _:a <http://e/p> ?v . { _:a <http://e/q> 1 } }",
    "INSERT DATA { <http://e/a> <http://e/b> <http://e/c> }",
])
def test_static_errors(text: str) -> None:
    with pytest.raises(ChronologSyntaxError):
        prepare(text, TermDictionary())


def test_filter_type_errors_are_values_not_exceptions() -> None:
    d = TermDictionary()
    db = _db(d, [("a", "p", 1), ("b", "p", "c")])
    db.triples.add((d.iri(E + "d"), d.iri(E + "p"), d.encode(Literal("x"))))
    q = prepare("""PREFIX : <http://e/> SELECT ?s WHERE { ?s :p ?o
        FILTER(?o + 1 > 1 || STRLEN(?o) > 0) FILTER(?nope != 3 || true) }""", d)
    got = sorted(row[0].value for row in q.execute(Layers([db])))
    assert got == [E + "a", E + "d"]  # the IRI object errors in both disjuncts: dropped
    q2 = prepare("PREFIX : <http://e/> SELECT ?s (?o / 0 AS ?z) (xsd:integer(\"x\") AS ?w) WHERE { ?s :p ?o }"
                 .replace("xsd:", "<http://www.w3.org/2001/XMLSchema#>".replace(">", "") + "") if False else
                 "PREFIX : <http://e/> PREFIX xsd: <http://www.w3.org/2001/XMLSchema#> "
                 "SELECT ?s (?o / 0 AS ?z) (xsd:integer(\"x\") AS ?w) WHERE { ?s :p ?o }", d)
    rows = list(q2.execute(Layers([db])))
    assert len(rows) == 3 and all(r[1] is None and r[2] is None for r in rows)


def test_huge_results_stream() -> None:
    d = TermDictionary()
    db = Database()
    p = d.iri(E + "p")
    for i in range(300):
        db.triples.add((d.iri(f"{E}s{i}"), p, d.encode_value(i)))
    q = prepare("SELECT * { ?a <http://e/p> ?x . ?b <http://e/p> ?y . ?c <http://e/p> ?z }", d)  # 27M rows
    res = q.execute(Layers([db]))
    tracemalloc.start()
    it = iter(res)
    first = [next(it) for _ in range(50_000)]
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert len(first) == 50_000 and peak < 60_000_000
    # the writer writes rows as they come: stop it after a few rows
    class Stop(Exception):
        pass

    class Limited(io.StringIO):
        def write(self, s: str) -> int:
            if self.tell() > 10_000:
                raise Stop
            return super().write(s)

    with pytest.raises(Stop):
        write_results(q.execute(Layers([db])), Limited(), "json")


# ---- features over our evaluator ------------------------------------------------------------------
def test_select_features() -> None:
    d = TermDictionary()
    db = _db(d, [("a", "knows", "b"), ("b", "knows", "c"), ("a", "age", 30), ("b", "age", 20), ("c", "age", 40)])
    view = Layers([db])
    q = prepare("""PREFIX : <http://e/>
        SELECT ?x (COUNT(?y) AS ?n) (MAX(?age) AS ?m) WHERE {
          ?x :age ?age OPTIONAL { ?x :knows+ ?y } } GROUP BY ?x ORDER BY DESC(?n) ?x""", d)
    rows = [(r[0].value[len(E):], int(r[1].value), int(r[2].value)) for r in q.execute(view)]
    assert rows == [("a", 2, 30), ("b", 1, 20), ("c", 0, 40)]
    ask = prepare("PREFIX : <http://e/> ASK { :a :knows/:knows :c }", d).execute(view)
    assert ask.value is True
    g = prepare("PREFIX : <http://e/> CONSTRUCT { ?y :knownBy ?x } WHERE { ?x :knows ?y }", d).execute(view)
    assert sorted((s.value, o.value) for s, p, o in g) == [(E + "b", E + "a"), (E + "c", E + "b")]


# ---- what the evaluator does not run, and static errors, are located --------------------------------
def _error(text: str) -> ChronologSyntaxError:
    with pytest.raises(ChronologSyntaxError) as info:
        prepare(text, TermDictionary(), filename="q.rq")
    return info.value


def test_service_is_unsupported_at_its_place() -> None:
    e = _error("SELECT * {\n  ?s ?p ?o .\n  SERVICE <http://example.org/sparql> { ?s ?p ?o } }")
    assert isinstance(e, Unsupported)
    assert str(e) == ("q.rq:3:3: chronolog does not evaluate SERVICE\n"
                      "      SERVICE <http://example.org/sparql> { ?s ?p ?o } }\n"
                      "      ^")


def test_unknown_function_is_located() -> None:
    e = _error("PREFIX f: <http://e/f#>\nSELECT ?s WHERE { ?s ?p ?o\n  FILTER(?o > f:limit(?s, 2)) }")
    assert isinstance(e, Unsupported)
    assert (e.lineno, e.offset) == (3, 15)
    assert "unknown function http://e/f#limit (with 2 argument(s))" in str(e)
    assert str(e).endswith("  FILTER(?o > f:limit(?s, 2)) }\n                  ^")


def test_cast_with_two_arguments_is_located() -> None:
    e = _error("PREFIX xsd: <http://www.w3.org/2001/XMLSchema#>\nSELECT ?s WHERE { ?s ?p ?o BIND(xsd:integer(?o, 2) AS ?n) }")
    assert (e.lineno, e.offset) == (2, 33)
    assert e.message == "unknown function http://www.w3.org/2001/XMLSchema#integer (with 2 argument(s))"


def test_ungrouped_projection_is_located() -> None:
    e = _error("PREFIX : <http://e/>\nSELECT ?g (COUNT(?x) AS ?n) ?x\nWHERE { ?x :in ?g } GROUP BY ?g")
    assert not isinstance(e, Unsupported)
    assert (e.lineno, e.offset) == (2, 29)
    assert e.message == "?x is projected but neither grouped nor aggregated"
    e = _error("SELECT (?x + 1 AS ?y) (COUNT(?x) AS ?n) WHERE { ?x ?p ?o } GROUP BY ?p")
    assert (e.lineno, e.offset, e.message) == (1, 8, "?x is used outside an aggregate but not grouped")


def test_aggregate_outside_grouping_is_located() -> None:
    e = _error("SELECT ?x WHERE {\n  ?x ?p ?o FILTER(SUM(?o) > 2) }")
    assert (e.lineno, e.offset) == (2, 19)
    assert e.message == "aggregate SUM(...) outside SELECT, HAVING or ORDER BY"


# ---- results formats round-trip through pyoxigraph's parsers ------------------------------------------
@pytest.mark.parametrize("fmt,oxfmt", [("json", ox.QueryResultsFormat.JSON), ("xml", ox.QueryResultsFormat.XML),
                                       ("tsv", ox.QueryResultsFormat.TSV)])
def test_result_writers_round_trip(fmt: str, oxfmt) -> None:
    rows = [(NamedNode(E + "a"), Literal("x \"y\"\n", language="en"), None),
            (ox.BlankNode("b1"), Literal("1.5", datatype=NamedNode(XSD + "decimal")), Literal("tab\tz"))]
    out = io.StringIO()
    write_results(results.SelectResult(["s", "o", "z"], iter(rows)), out, fmt)
    parsed = ox.parse_query_results(out.getvalue().encode(), format=oxfmt)
    got = [tuple(sol[i] for i in range(3)) for sol in parsed]
    assert got == rows
    b = io.StringIO()
    write_results(results.BooleanResult(True), b, fmt)
    assert bool(ox.parse_query_results(b.getvalue().encode(), format=oxfmt)) is True


def test_csv_writer_quotes() -> None:
    out = io.StringIO()
    write_results(results.SelectResult(["a"], iter([(Literal('x,"y"'),)])), out, "csv")
    assert out.getvalue() == 'a\r\n"x,""y"""\r\n'


# ---- the query command ------------------------------------------------------------------------------
def _args(**kw) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    command.add_query_arguments(parser)
    argv = [kw.pop("query")] + kw.pop("data") + [f"--{k}={v}" for k, v in kw.items()]
    return parser.parse_args(argv)


def test_query_command(tmp_path) -> None:
    (tmp_path / "d.ttl").write_text("@prefix : <http://e/> . :a :p 1 . :b :p 2 .\n")
    (tmp_path / "q.rq").write_text("PREFIX : <http://e/> SELECT ?s WHERE { ?s :p ?o FILTER(?o > 1) }\n")
    out, err = io.StringIO(), io.StringIO()
    assert command.query_command(_args(query=str(tmp_path / "q.rq"), data=[str(tmp_path / "d.ttl")]), out, err) == 0
    assert json.loads(out.getvalue())["results"]["bindings"] == [{"s": {"type": "uri", "value": E + "b"}}]
    out = io.StringIO()
    assert command.query_command(_args(query=str(tmp_path / "q.rq"), data=[str(tmp_path / "d.ttl")], results="csv"), out, err) == 0
    assert out.getvalue() == "s\r\nhttp://e/b\r\n"
    (tmp_path / "bad.rq").write_text("SELECT ?s WHERE {\n  ?s ?p \n")
    err = io.StringIO()
    assert command.query_command(_args(query=str(tmp_path / "bad.rq"), data=[str(tmp_path / "d.ttl")]), io.StringIO(), err) == 1
    assert err.getvalue().startswith(str(tmp_path / "bad.rq") + ":")


# ---- standing queries ----------------------------------------------------------------------------------
def test_background_only_query_is_reported() -> None:
    d = TermDictionary()
    bg = _db(d, [("r1", "in", "b1")])
    sq = incremental.StandingQueries(d, bg, stream_predicates=[E + "temp"])
    with pytest.warns(incremental.BackgroundOnlyWarning):
        reg = sq.register("static", "PREFIX : <http://e/> SELECT ?r WHERE { ?r :in ?b }")
    assert reg.background_only and sq.background_answer("static") == [(d.iri(E + "r1"),)]
    reg2 = sq.register("hot", "PREFIX : <http://e/> SELECT ?r WHERE { ?r :in ?b . ?r :temp ?t FILTER(?t > 5) }")
    assert not reg2.background_only


def test_standing_queries_share_bodies_and_fall_back() -> None:
    d = TermDictionary()
    bg = _db(d, [("r1", "in", "b1"), ("r2", "in", "b1")])
    sq = incremental.StandingQueries(d, bg)
    body = "PREFIX : <http://e/> SELECT ?r ?t WHERE { ?r :temp ?t . ?r :in ?b FILTER(?t > %d) }"
    for k in (10, 50, -5):
        sq.register(f"q{k}", body % k)
    assert sq.registrations["q50"].shared_with == ["q10"]
    assert sq.registrations["q-5"].shared_with == ["q10", "q50"]

    reg = sq.register("opt", "PREFIX : <http://e/> SELECT ?r ?t WHERE { ?r :in ?b OPTIONAL { ?r :temp ?t } }")
    assert not reg.incremental
    t = _db(d, [("r1", "temp", 30), ("r2", "temp", 60)])
    out = {k: sorted(tuple(x.value for x in sq.decode(r)) for r in v) for k, v in sq.step(t).items()}
    assert out["q10"] == [(E + "r1", "30"), (E + "r2", "60")]
    assert out["q50"] == [(E + "r2", "60")]
    assert out["opt"] == [(E + "r1", "30"), (E + "r2", "60")]
    assert sq.step(Database()) == {}


def test_interleaved_executions_see_their_own_views() -> None:
    d = TermDictionary()
    a, b = _db(d, [("a", "p", 1), ("a2", "p", 2)]), _db(d, [("b", "p", 1)])
    q = prepare("PREFIX : <http://e/> SELECT ?s WHERE { ?s :p ?o }", d)
    first = iter(q.execute(Layers([a])))
    one = next(first)
    second = [r[0].value for r in q.execute(Layers([b]))]
    rest = [r[0].value for r in first]
    assert second == [E + "b"]
    assert sorted([one[0].value] + rest) == [E + "a", E + "a2"]


def test_query_reading_no_triples_is_reported() -> None:
    d = TermDictionary()
    sq = incremental.StandingQueries(d, Database())
    with pytest.warns(incremental.BackgroundOnlyWarning):
        reg = sq.register("const", "SELECT ?x WHERE { VALUES ?x { 1 2 } }")
    assert reg.background_only and len(sq.background_answer("const")) == 2
    assert sq.step(_db(d, [("a", "p", 1)])) == {}


def test_query_command_reasons_first_with_materialize(tmp_path, monkeypatch) -> None:
    """With --rules the command calls chronolog.datalog.materialize(paths, rules, dictionary)."""
    import sys
    import types

    calls = []

    def materialize(paths, rules, dictionary):
        calls.append((paths, rules))
        view = command.load_data(paths, dictionary)
        p = dictionary.iri(E + "p")
        view.layers[0].triples.add((dictionary.iri(E + "derived"), p, dictionary.encode_value(5)))
        return view

    fake = types.ModuleType("chronolog.datalog")
    fake.materialize = materialize
    monkeypatch.setitem(sys.modules, "chronolog.datalog", fake)
    (tmp_path / "d.ttl").write_text("@prefix : <http://e/> . :a :p 1 .\n")
    (tmp_path / "q.rq").write_text("PREFIX : <http://e/> SELECT ?s WHERE { ?s :p ?o FILTER(?o > 1) }\n")
    out = io.StringIO()
    args = _args(query=str(tmp_path / "q.rq"), data=[str(tmp_path / "d.ttl")], results="tsv")
    args.rules = ["rdfs", "extra.dl"]
    assert command.query_command(args, out, io.StringIO()) == 0
    assert calls == [([str(tmp_path / "d.ttl")], ["rdfs", "extra.dl"])]
    assert out.getvalue() == "?s\n<http://e/derived>\n"


def test_describe_and_named_graphs() -> None:
    d = TermDictionary()
    db = _db(d, [("a", "p", "b"), ("a", "q", 1), ("c", "p", "a")])
    g = d.iri(E + "g1")
    quads = db.relation(evaluate.QUAD, 4)
    quads.add((g, d.iri(E + "x"), d.iri(E + "p"), d.encode_value(2)))
    view = Layers([db])
    described = prepare("DESCRIBE <http://e/a>", d).execute(view)
    assert sorted(p.value for s, p, o in described) == [E + "p", E + "q"]
    rows = list(prepare("SELECT ?g ?s WHERE { GRAPH ?g { ?s <http://e/p> 2 } }", d).execute(view))
    assert [(r[0].value, r[1].value) for r in rows] == [(E + "g1", E + "x")]
    rows = list(prepare("SELECT ?s FROM <http://e/g1> WHERE { ?s ?p ?o }", d).execute(view))
    assert [r[0].value for r in rows] == [E + "x"]


def test_negative_numbers_are_constants_for_filter_indexing() -> None:
    from chronolog.sparql import algebra as A
    from chronolog.sparql.evaluate import comparison

    q = sparql.parse_query("SELECT ?v WHERE { ?s <http://e/p> ?v FILTER(?v > -5) }")
    found = [comparison(f.expr) for f in q.walk() if isinstance(f, A.Filter)]
    assert found == [("v", ">", -5)]


# ---- NOW() is the evaluation time -----------------------------------------------------------------
def test_now_is_the_evaluation_time() -> None:
    q = prepare("SELECT (NOW() AS ?t) (YEAR(NOW()) AS ?y) WHERE { }", TermDictionary())
    at = lambda ms: [tuple(t.value for t in row) for row in q.execute(Layers([]), ms)]  # noqa: E731
    assert at(0) == [("1970-01-01T00:00:00Z", "1970")]
    assert at(1_500) == [("1970-01-01T00:00:01.500Z", "1970")]
    assert at(1_700_000_000_000) == at(1_700_000_000_000) == [("2023-11-14T22:13:20Z", "2023")]


def test_standing_query_now_follows_the_stream_time() -> None:
    d = TermDictionary()
    due = (d.iri(E + "job"), d.iri(E + "due"), d.encode(Literal(
        "1970-01-01T00:00:05Z", datatype=NamedNode("http://www.w3.org/2001/XMLSchema#dateTime"))))
    sq = incremental.StandingQueries(d, Database())
    reg = sq.register("late", "PREFIX : <http://e/> SELECT ?j WHERE { ?j :due ?d FILTER(?d < NOW()) }")
    assert not reg.incremental
    assert sq.step([due], 4_000) == {}
    assert sq.step([due], 6_000) == {"late": [(d.iri(E + "job"),)]}
    assert sq.step([due], 4_000) == {}


def test_extension_functions_run_on_chronologs_evaluator() -> None:
    """A language's own functions (C-SPARQL's f:timestamp) are given to prepare by IRI: they
    get the argument terms, their None is SPARQL's error (the BIND leaves the variable unbound)."""
    d = TermDictionary()
    db = _db(d, [("a", "p", "b"), ("c", "p", "d")])
    calls = []

    def double(term):
        calls.append(term)
        return Literal(term.value * 2) if term.value.endswith("a") else None

    text = "PREFIX : <http://e/> PREFIX x: <http://x/> SELECT ?s ?v { ?s :p ?o BIND(x:f(STR(?s)) AS ?v) }"
    q = prepare(text, d, functions={"http://x/f": double})
    got = sorted((s.value, v.value if v is not None else None) for s, v in q.execute(Layers([db])))
    assert got == [("http://e/a", "http://e/ahttp://e/a"), ("http://e/c", None)]
    assert sorted(t.value for t in calls) == ["http://e/a", "http://e/c"]
    with pytest.raises(Unsupported, match="unknown function http://x/f"):
        prepare(text, d)  # unknown to chronolog without the extension
