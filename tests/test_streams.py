import io
import tracemalloc
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
import pyoxigraph
from pyoxigraph import BlankNode, Literal, NamedNode, RdfFormat, Triple

from chronolog.errors import ChronologSyntaxError, LateElementError
from chronolog.formats import graph_text
from chronolog.streams import (
    JsonlWriter,
    LateElement,
    LatePolicy,
    StreamElement,
    StreamError,
    TrigWriter,
    detect_stream_format,
    group_time_points,
    open_stream_writer,
    read_jsonl,
    read_stream,
    read_trig,
    write_stream,
)
from chronolog.terms import TermDictionary

FIXTURES = Path(__file__).parent / "fixtures" / "streams"
EX = "http://example.org/"
XSD = "http://www.w3.org/2001/XMLSchema#"
T0 = 1_406_878_200_000  # 2014-08-01T07:30:00Z


def canonical(elements, dictionary: TermDictionary, per_element: bool):
    """Elements as (time, triples of term strings), blank nodes numbered by first use:
    equality up to blank node renaming, per stream (TriG) or per element (JSON Lines)."""
    names: dict[int, str] = {}
    out = []
    for element in elements:
        if per_element:
            names = {}

        def show(tid: int) -> str:
            if dictionary.is_blank(tid):
                return names.setdefault(tid, f"_:{len(names)}")
            return str(dictionary.decode(tid))

        out.append((element.time, [tuple(map(show, t)) for t in element.triples]))
    return out


def test_detect_stream_format() -> None:
    assert detect_stream_format("a.trig") == "trig"
    assert detect_stream_format("a/b.JSONL") == "jsonl"
    assert detect_stream_format("b.ndjson") == "jsonl"
    with pytest.raises(ValueError, match=r"cannot tell the stream format of 'a.ttl'"):
        detect_stream_format("a.ttl")


def test_reads_a_trig_stream_in_both_layouts() -> None:
    dictionary = TermDictionary()
    elements = list(read_stream(FIXTURES / "sensors.trig", dictionary))
    room1, room2 = f"<{EX}room1>", f"<{EX}room2>"
    assert canonical(elements, dictionary, per_element=False) == [
        (T0, [
            (room1, f"<{EX}temperature>", f'"61.5"^^<{XSD}decimal>'),
            (room1, f"<{EX}label>", '"salle à manger"@fr'),
            ("_:0", f"<{EX}of>", room1),
        ]),
        (T0 + 250, [(room1, f"<{EX}smoke>", f'"true"^^<{XSD}boolean>'), ("_:0", f"<{EX}of>", room2)]),
        (T0 + 250, [(room2, f"<{EX}temperature>", f'"20"^^<{XSD}integer>')]),
        (T0 + 1000, []),  # a time without a graph: an empty time point
    ]
    assert [(t, len(group)) for t, group in group_time_points(elements)] == [(T0, 1), (T0 + 250, 2), (T0 + 1000, 1)]


def test_reads_a_jsonl_stream() -> None:
    dictionary = TermDictionary()
    elements = list(read_stream(FIXTURES / "sensors.jsonl", dictionary))
    assert [e.time for e in elements] == [10, 10, 20, 25]
    assert canonical(elements, dictionary, per_element=True)[1] == (
        10,
        [
            (f"<{EX}room1>", f"<{EX}smoke>", f'"true"^^<{XSD}boolean>'),
            (f"<{EX}room1>", f"<{EX}seenBy>", "_:0"),
            ("_:0", f"<{EX}name>", '"détecteur ☃"'),
        ],
    )
    assert elements[3].triples == ()


def test_trig_blank_nodes_are_shared_by_the_file_and_jsonl_ones_are_per_element(tmp_path: Path) -> None:
    dictionary = TermDictionary()
    trig = list(read_trig(FIXTURES / "sensors.trig", dictionary))
    assert trig[0].triples[2][0] == trig[1].triples[1][0]  # _:reading in g1 and g2
    path = tmp_path / "blank.jsonl"
    path.write_text('{"time": 1, "graph": "_:b <http://e/p> 1 ."}\n' * 2)
    first, second = read_jsonl(path, dictionary)
    assert first.triples[0][0] != second.triples[0][0]


# --- round trips -------------------------------------------------------------------

nodes = st.one_of(
    st.text("abcé☃/", min_size=1, max_size=5).map(lambda s: NamedNode(EX + s)),
    st.sampled_from("uvwxyz").map(BlankNode),
)
literals = st.one_of(
    st.text(max_size=10).map(Literal),
    st.tuples(st.text(max_size=3), st.sampled_from(["en", "fr", "de-ch"])).map(lambda t: Literal(t[0], language=t[1])),
    st.integers(-(10**20), 10**20).map(lambda i: Literal(str(i), datatype=NamedNode(XSD + "integer"))),
    st.text("0123456789.-", min_size=1, max_size=5).map(lambda s: Literal(s, datatype=NamedNode(EX + "unit"))),
)
graphs = st.lists(st.tuples(nodes, nodes.filter(lambda t: isinstance(t, NamedNode)), st.one_of(nodes, literals)), max_size=6)
stream_contents = st.lists(st.tuples(st.integers(0, 50), graphs), max_size=8)


@settings(max_examples=80, deadline=None)
@given(stream_contents, st.sampled_from(["trig", "jsonl"]), st.sampled_from(["integer", "dateTime"]), st.integers(-(10**12), 10**12))
def test_written_streams_read_back_identically(stream, fmt: str, time_datatype: str, start: int) -> None:
    dictionary = TermDictionary()
    elements, time = [], start
    for step, graph in stream:  # non-decreasing times, repeats included
        time += step
        triples = tuple(dict.fromkeys(tuple(map(dictionary.encode, t)) for t in graph))
        elements.append(StreamElement(time, triples))
    out = io.BytesIO()
    assert write_stream(elements, out, dictionary, format=fmt, time_datatype=time_datatype) == len(elements)
    back = list(read_stream(io.BytesIO(out.getvalue()), dictionary, format=fmt))
    per_element = fmt == "jsonl"
    assert canonical(back, dictionary, per_element) == canonical(elements, dictionary, per_element)


@settings(max_examples=60, deadline=None)
@given(stream_contents, st.sampled_from(["trig", "jsonl"]), st.sampled_from(["integer", "dateTime"]))
def test_writing_an_elements_text_writes_its_triples_bytes(stream, fmt: str, time_datatype: str) -> None:
    """A Spark sink writes outputs from their N-Triples text (``write_text``, no
    dictionary); the bytes must be those the in-process writer makes from the triples,
    duplicates written once, graph names counted alike."""
    dictionary = TermDictionary()
    by_terms, by_text = io.BytesIO(), io.BytesIO()
    with open_stream_writer(by_terms, dictionary, format=fmt, time_datatype=time_datatype) as terms, \
            open_stream_writer(by_text, dictionary, format=fmt, time_datatype=time_datatype) as text:
        time = T0
        for step, graph in stream:
            time += step
            terms.write(StreamElement(time, tuple(dict.fromkeys(tuple(map(dictionary.encode, t)) for t in graph))))
            text.write_text(time, "".join(f"{s} {p} {o} .\n" for s, p, o in graph + graph[:1]))
    assert by_text.getvalue() == by_terms.getvalue()
    assert text.count == terms.count == len(stream)


@settings(max_examples=100, deadline=None)
@given(graphs)
def test_a_graphs_text_is_what_pyoxigraphs_n_triples_serializer_writes(graph) -> None:
    """JSON Lines elements carry ``graph_text`` (each term's cached text, joined) where
    they carried pyoxigraph's N-Triples: the bytes must not change."""
    dictionary = TermDictionary()
    triples = [tuple(map(dictionary.encode, t)) for t in graph]
    expected = pyoxigraph.serialize([Triple(*t) for t in graph], format=RdfFormat.N_TRIPLES).decode("utf-8")
    assert graph_text(triples, dictionary) == expected


def test_trig_writer_names_elements_and_writes_times() -> None:
    dictionary = TermDictionary()
    triple = (dictionary.iri(EX + "s"), dictionary.iri(EX + "p"), dictionary.encode(Literal("o")))
    out = io.BytesIO()
    with TrigWriter(out, dictionary, time_datatype="dateTime") as writer:
        writer.write(StreamElement(T0, (triple,)))
        writer.write(StreamElement(T0, ()))
    assert out.getvalue().decode() == (
        f"<urn:chronolog:element:{T0}:0> <http://www.w3.org/ns/prov#generatedAtTime> "
        f'"2014-08-01T07:30:00Z"^^<{XSD}dateTime> .\n'
        f"<urn:chronolog:element:{T0}:0> {{\n\t<{EX}s> <{EX}p> \"o\" .\n}}\n"
        f"<urn:chronolog:element:{T0}:1> <http://www.w3.org/ns/prov#generatedAtTime> "
        f'"2014-08-01T07:30:00Z"^^<{XSD}dateTime> .\n'
    )


def test_writers_flush_every_element(tmp_path: Path) -> None:
    dictionary = TermDictionary()
    triple = (dictionary.iri(EX + "s"), dictionary.iri(EX + "p"), dictionary.iri(EX + "o"))
    path = tmp_path / "out.jsonl"
    with JsonlWriter(path, dictionary) as writer:
        writer.write(StreamElement(5, (triple,)))
        assert path.read_text() == f'{{"time": 5, "graph": "<{EX}s> <{EX}p> <{EX}o> .\\n"}}\n'
        assert [e.time for e in read_jsonl(path, dictionary)] == [5]  # readable while open
    with pytest.raises(ValueError, match="time_datatype must be 'integer' or 'dateTime', not 'float'"):
        TrigWriter(io.BytesIO(), dictionary, time_datatype="float")


# --- streaming ---------------------------------------------------------------------

N_BIG = 200_000


@pytest.fixture(scope="module")
def big_streams(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """200k elements over a small vocabulary, so only the reader could grow memory."""
    root = tmp_path_factory.mktemp("big")
    trig, jsonl = root / "big.trig", root / "big.jsonl"
    prov = "http://www.w3.org/ns/prov#generatedAtTime"
    with open(trig, "w") as t, open(jsonl, "w") as j:
        for i in range(N_BIG):
            triple = f"<{EX}sensor{i % 100}> <{EX}value> {i % 50} ."
            t.write(f"<urn:e:{i}> <{prov}> {i} .\n<urn:e:{i}> {{ {triple} }}\n")
            j.write(f'{{"time": {i}, "graph": "{triple}"}}\n')
    return {"trig": trig, "jsonl": jsonl}


@pytest.mark.slow
@pytest.mark.parametrize("fmt", ["trig", "jsonl"])
def test_reading_a_long_stream_uses_bounded_memory(big_streams: dict[str, Path], fmt: str) -> None:
    dictionary = TermDictionary()
    tracemalloc.start()
    try:
        count = sum(1 for _ in read_stream(big_streams[fmt], dictionary))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert count == N_BIG
    assert len(dictionary) < 200
    assert peak < 1_000_000, f"peak {peak} bytes while reading {N_BIG} elements"


class CountingReader(io.RawIOBase):
    """A raw file that counts the bytes it hands out."""

    def __init__(self, path: Path) -> None:
        self._file = open(path, "rb", buffering=0)
        self.bytes_read = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        n = self._file.readinto(buffer)
        self.bytes_read += n
        return n

    def close(self) -> None:
        self._file.close()
        super().close()


@pytest.mark.parametrize("fmt", ["trig", "jsonl"])
def test_first_element_comes_before_the_file_is_read(big_streams: dict[str, Path], fmt: str) -> None:
    raw = CountingReader(big_streams[fmt])
    with io.BufferedReader(raw) as source:
        first = next(read_stream(source, TermDictionary(), format=fmt))
        assert first.time == 0
        assert raw.bytes_read < 100_000 < big_streams[fmt].stat().st_size // 100


# --- bad input ---------------------------------------------------------------------


def test_malformed_turtle_inside_a_trig_stream() -> None:
    path = FIXTURES / "bad_turtle.trig"
    with pytest.raises(ChronologSyntaxError) as caught:
        list(read_trig(path, TermDictionary()))
    assert str(caught.value) == (
        f"{path}:6:19: Unexpected end of file\n" '    ex:g2 { ex:a ex:b "unterminated . }\n' + " " * 22 + "^"
    )


def test_a_graph_without_a_time() -> None:
    path = FIXTURES / "no_time.trig"
    elements = read_trig(path, TermDictionary())
    assert next(elements).time == 1  # what came before the error is delivered
    with pytest.raises(StreamError) as caught:
        next(elements)
    assert str(caught.value) == (
        f"{path}: element 2 (graph <{EX}g2>): no prov:generatedAtTime for this graph; give its "
        "time in the default graph just before or just after the graph"
    )


@pytest.mark.parametrize(
    ("trig", "message"),
    [
        (
            "<http://e/g> <http://www.w3.org/ns/prov#generatedAtTime> 1 .\n<http://e/g> { <http://e/a> <http://e/b> 1 . }\n"
            "<http://e/g> <http://www.w3.org/ns/prov#generatedAtTime> 2 .\n",
            "element 1 (graph <http://e/g>): two different times, 1 and 2",
        ),
        (
            "<http://e/g> <http://www.w3.org/ns/prov#generatedAtTime> 1.5 .\n",
            'element 1 (graph <http://e/g>): the time "1.5"^^<http://www.w3.org/2001/XMLSchema#decimal> '
            "is neither an xsd:dateTime nor an xsd:integer literal",
        ),
        (
            '<http://e/g> <http://www.w3.org/ns/prov#generatedAtTime> "noon"^^<http://www.w3.org/2001/XMLSchema#dateTime> .\n',
            "element 1 (graph <http://e/g>): invalid time",
        ),
        (
            "<http://e/g> <http://e/label> 1 .\n",
            "after element 0: default-graph triple <http://e/g> <http://e/label> "
            '"1"^^<http://www.w3.org/2001/XMLSchema#integer> is not an element time',
        ),
    ],
)
def test_bad_trig_times(tmp_path: Path, trig: str, message: str) -> None:
    path = tmp_path / "bad.trig"
    path.write_text(trig)
    with pytest.raises(StreamError) as caught:
        list(read_trig(path, TermDictionary()))
    assert str(caught.value).startswith(f"{path}: {message}")


def test_malformed_json_line() -> None:
    path = FIXTURES / "bad_json.jsonl"
    elements = read_jsonl(path, TermDictionary())
    assert next(elements).time == 10
    with pytest.raises(ChronologSyntaxError) as caught:
        next(elements)
    assert str(caught.value).splitlines()[0] == f"{path}:2:75: invalid JSON: Expecting property name enclosed in double quotes"


def test_jsonl_element_without_time() -> None:
    path = FIXTURES / "no_time.jsonl"
    with pytest.raises(ChronologSyntaxError) as caught:
        list(read_jsonl(path, TermDictionary()))
    assert str(caught.value).splitlines()[0] == f'{path}:2:1: stream element has no "time"'


def test_malformed_turtle_inside_a_json_line_points_into_the_line() -> None:
    path = FIXTURES / "bad_graph.jsonl"
    with pytest.raises(ChronologSyntaxError) as caught:
        list(read_jsonl(path, TermDictionary()))
    error = caught.value
    assert error.msg == (
        'invalid Turtle in the "graph" of the element at time 10 (graph line 3, column 8): '
        "Invalid IRI code point ' '"
    )
    assert (error.lineno, error.offset) == (1, 92)
    assert error.text[error.offset - 1 :].startswith("<not an iri>")


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("[1, 2]", 'a stream element must be a JSON object {"time": ..., "graph": "..."}'),
        ('{"time": 1, "graph": "", "id": 3}', "unknown key 'id' in a stream element"),
        ('{"time": 1.5, "graph": ""}', '2: "time" must be an integer or an xsd:dateTime string, not 1.5'),
        ('{"time": "soon", "graph": ""}', "2: invalid \"time\": invalid xsd:dateTime 'soon'"),
        ('{"time": 1}', 'stream element at time 1 has no "graph"; expected Turtle or N-Triples text'),
        ('{"time": 1, "graph": ["x"]}', 'stream element at time 1 has a list as "graph"'),
    ],
)
def test_bad_json_elements(tmp_path: Path, line: str, message: str) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(line + "\n")
    with pytest.raises(ChronologSyntaxError) as caught:
        list(read_jsonl(path, TermDictionary()))
    assert str(caught.value).splitlines()[0].startswith(f"{path}:1:")
    assert message in str(caught.value)


@pytest.mark.parametrize(
    ("name", "where"),
    [("late.trig", "late.trig: element 3 (graph <http://example.org/g3>)"), ("late.jsonl", "late.jsonl:3")],
)
def test_late_element_rejected(name: str, where: str) -> None:
    elements = read_stream(FIXTURES / name, TermDictionary(), late=LatePolicy.reject())
    assert [next(elements).time, next(elements).time] == [10, 20]
    with pytest.raises(LateElementError) as caught:
        next(elements)
    assert str(caught.value) == (
        f"{FIXTURES}/{where}: late element at time 15, older than the stream's current time 20 (late policy: reject)"
    )


@pytest.mark.parametrize("name", ["late.trig", "late.jsonl"])
def test_late_element_diverted(name: str) -> None:
    late: list[LateElement] = []
    policy = LatePolicy.divert(late)
    dictionary = TermDictionary()
    assert [e.time for e in read_stream(FIXTURES / name, dictionary, late=policy)] == [10, 20, 20]
    assert policy.count == 1
    (diverted,) = late
    assert (diverted.element.time, diverted.current_time) == (15, 20)
    assert str(dictionary.decode(diverted.element.triples[0][2])) == f'"3"^^<{XSD}integer>'
    calls: list[int] = []
    list(read_stream(FIXTURES / name, dictionary, late=LatePolicy.divert(lambda e: calls.append(e.element.time))))
    assert calls == [15]


def test_late_policies_are_validated_when_built() -> None:
    assert isinstance(LatePolicy.named("reject"), type(LatePolicy.reject()))
    with pytest.raises(ValueError, match="the 'divert' late policy needs a sink"):
        LatePolicy.named("divert")
    with pytest.raises(ValueError, match="unknown late policy 'drop'"):
        LatePolicy.named("drop")
    with pytest.raises(TypeError, match="a late-data sink must be a callable or a list, not int"):
        LatePolicy.divert(3)  # type: ignore[arg-type]
