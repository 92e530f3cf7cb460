import io
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pyoxigraph import BlankNode, Literal, NamedNode, RdfFormat

from chronolog.errors import ChronologSyntaxError
from chronolog.formats import encode_text, iter_encoded_triples, load_graph, rdf_format, write_triples
from chronolog.terms import TermDictionary
from shared_data import shared_path

EX = "http://example.org/"

TURTLE = f"""@prefix ex: <{EX}> .
ex:room1 a ex:Room ; ex:temperature 21.5 ; ex:label "salle"@fr, "☃ \\"q\\"" .
ex:room1 ex:sensor [ ex:id 7 ] .
"""


def decoded(triples, dictionary: TermDictionary) -> set[tuple[str, str, str]]:
    """Triples as N-Triples term strings, blank nodes replaced by one placeholder."""
    def show(tid: int) -> str:
        return "_:" if dictionary.is_blank(tid) else str(dictionary.decode(tid))

    return {tuple(map(show, t)) for t in triples}


def test_formats_from_extensions_and_names() -> None:
    assert rdf_format(path="a.ttl") == RdfFormat.TURTLE
    assert rdf_format(path="ssn.owl") == RdfFormat.RDF_XML
    assert rdf_format(path="x.NQ") == RdfFormat.N_QUADS
    assert rdf_format("turtle", "a.nt") == RdfFormat.TURTLE
    assert rdf_format(".trig") == RdfFormat.TRIG
    with pytest.raises(ValueError, match=r"cannot tell the RDF format of 'a.txt' from its extension"):
        rdf_format(path="a.txt")
    with pytest.raises(ValueError, match="unknown RDF format 'yaml'"):
        rdf_format("yaml")


@pytest.mark.parametrize("ext", ["nt", "ttl", "n3", "nq", "trig", "rdf"])
def test_each_format_parses_to_the_same_graph(tmp_path: Path, ext: str) -> None:
    dictionary = TermDictionary()
    expected = list(encode_text(TURTLE, dictionary, format="ttl"))
    path = tmp_path / f"graph.{ext}"
    write_triples(expected, dictionary, path)
    assert decoded(iter_encoded_triples(path, dictionary), dictionary) == decoded(expected, dictionary)
    with open(path, "rb") as stream:  # a binary file object with an explicit format
        assert len(list(iter_encoded_triples(stream, dictionary, format=ext))) == len(expected)


def test_named_graphs_are_loaded_into_one_graph() -> None:
    dictionary = TermDictionary()
    trig = f"<{EX}a> <{EX}p> 1 . <{EX}g> {{ <{EX}a> <{EX}p> 2 . }}"
    assert len(list(encode_text(trig, dictionary, format="trig"))) == 2


def test_blank_nodes_do_not_collide_across_documents(tmp_path: Path) -> None:
    for name in ("a.ttl", "b.ttl"):
        (tmp_path / name).write_text(f"_:b <{EX}p> <{EX}o> .\n_:b <{EX}q> [] .\n")
    dictionary = TermDictionary()
    triples = load_graph([tmp_path / "a.ttl", tmp_path / "b.ttl"], dictionary)
    assert len(triples) == 4
    subjects = {s for s, _, _ in triples}
    assert len(subjects) == 2  # one _:b per file, shared by both of its triples
    labels = sorted(dictionary.decode(tid).value for tid in {*subjects, *(o for *_, o in triples)} if dictionary.is_blank(tid))
    assert len(labels) == 4 and all(label.startswith("cl") for label in labels)


def test_load_graph_keeps_distinct_triples_in_first_seen_order(tmp_path: Path) -> None:
    path = tmp_path / "dup.ttl"
    path.write_text(f"<{EX}b> <{EX}p> 1 .\n<{EX}a> <{EX}p> 1 .\n<{EX}b> <{EX}p> 1 .\n")
    dictionary = TermDictionary()
    triples = load_graph(path, dictionary)
    assert [str(dictionary.decode(s)) for s, _, _ in triples] == [f"<{EX}b>", f"<{EX}a>"]


def test_syntax_error_in_a_file_names_file_line_column_and_shows_the_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.ttl"
    path.write_text(f'@prefix ex: <{EX}> .\nex:a ex:b ex:c .\nex:a ex:b "héllo ;\n  ex:c ex:d .\n')
    with pytest.raises(ChronologSyntaxError) as caught:
        list(iter_encoded_triples(path, TermDictionary()))
    assert str(caught.value) == (
        f"{path}:3:11: Unexpected end of file\n" '    ex:a ex:b "héllo ;\n' "              ^"
    )
    assert (caught.value.filename, caught.value.lineno, caught.value.offset) == (str(path), 3, 11)


def test_syntax_error_in_text() -> None:
    with pytest.raises(ChronologSyntaxError) as caught:
        list(encode_text(f"<{EX}a> <{EX}b> <not an iri> .", TermDictionary(), format="nt", filename="inline.nt"))
    assert str(caught.value).splitlines()[0] == "inline.nt:1:47: Invalid IRI code point ' '"


def test_missing_file_is_named() -> None:
    with pytest.raises(FileNotFoundError, match="/no/such/file.ttl: No such file"):
        iter_encoded_triples("/no/such/file.ttl", TermDictionary())


def test_sorted_output_does_not_depend_on_input_order_or_ids() -> None:
    first, second = TermDictionary(), TermDictionary()
    triples = list(encode_text(TURTLE.replace("[ ex:id 7 ]", "ex:s7"), first, format="ttl"))
    second.iri(EX + "unrelated")  # different id assignment
    reversed_triples = list(encode_text(TURTLE.replace("[ ex:id 7 ]", "ex:s7"), second, format="ttl"))[::-1]
    for fmt in ("nt", "ttl", "nq", "trig"):
        out = write_triples(triples, first, format=fmt, sort=True)
        assert out == write_triples(reversed_triples, second, format=fmt, sort=True)
    assert write_triples(triples, first, format="nt", sort=True).decode().splitlines()[0] == (
        f'<{EX}room1> <{EX}label> "salle"@fr .'
    )


def test_writes_to_a_binary_stream() -> None:
    dictionary = TermDictionary()
    out = io.BytesIO()
    assert write_triples(encode_text(f"<{EX}a> <{EX}b> 1 .", dictionary, format="ttl"), dictionary, out, format="nq") is None
    assert out.getvalue() == f'<{EX}a> <{EX}b> "1"^^<http://www.w3.org/2001/XMLSchema#integer> .\n'.encode()


terms = st.one_of(
    st.text("abcé☃", min_size=1, max_size=4).map(lambda s: NamedNode(EX + s)),
    st.sampled_from("xyz").map(BlankNode),
)
literals = st.one_of(
    st.text(max_size=8).filter(lambda s: "\x00" not in s).map(Literal),
    st.tuples(st.text("ab", max_size=3), st.sampled_from(["en", "fr", "de-ch"])).map(lambda t: Literal(t[0], language=t[1])),
    st.integers().map(lambda i: Literal(str(i), datatype=NamedNode("http://www.w3.org/2001/XMLSchema#integer"))),
)
graphs = st.lists(st.tuples(terms, terms.filter(lambda t: isinstance(t, NamedNode)), st.one_of(terms, literals)), max_size=8)


@settings(max_examples=60, deadline=None)
@given(graphs, st.sampled_from(["nt", "ttl", "nq", "trig", "rdf"]))
def test_serialize_then_parse_round_trips(graph, fmt: str) -> None:
    dictionary = TermDictionary()
    triples = [tuple(map(dictionary.encode, t)) for t in graph]
    back = list(encode_text(write_triples(triples, dictionary, format=fmt).decode(), dictionary, format=fmt))
    assert decoded(back, dictionary) == decoded(triples, dictionary)
    assert len(set(back)) == len(set(triples))


@pytest.mark.parametrize(
    ("path", "fmt", "count"),
    [
        ("SensorRepository.n3", "turtle", 44213),
        ("SensorRepository.n3", None, 44213),  # .n3: pyoxigraph's N3 parser
        ("ontology/ssn.owl", None, 767),  # RDF/XML
        ("ontology/city.n3", None, 52),
        ("ontology/ces.n3", "turtle", 191),
    ],
)
def test_citybench_files_parse(path: str, fmt: str | None, count: int) -> None:
    dictionary = TermDictionary()
    triples = load_graph(shared_path("data", "citybench", path), dictionary, format=fmt)
    assert len(triples) == count
