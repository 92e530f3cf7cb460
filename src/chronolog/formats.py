"""RDF parsing and serialization through pyoxigraph, straight into dictionary-encoded triples.

Files are parsed by pyoxigraph from their path, so they are streamed: memory holds the
parser's buffer and the triples the caller keeps, never the file's text. Each triple is
encoded to ``(s, p, o)`` ints with a :class:`~chronolog.terms.TermDictionary` as it comes.

Graph names are ignored: parsing a TriG or N-Quads file yields the triples of its default
graph and of all its named graphs, which is what loading background knowledge wants.
Blank nodes are scoped per parsed document (see :class:`BlankNodeScope`): ``_:b`` in two
files are two nodes, and the labels given to them are deterministic within a process.
"""
from __future__ import annotations

import io
import itertools
import os
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import IO, Union

import pyoxigraph
from pyoxigraph import BlankNode, DefaultGraph, Literal, NamedNode, Quad, RdfFormat, Triple

from .errors import ChronologSyntaxError, SourceMap
from .terms import Term, TermDictionary

EncodedTriple = tuple[int, int, int]
Source = Union[str, "os.PathLike[str]", IO[bytes]]
Output = Union[str, "os.PathLike[str]", IO[bytes]]

FORMAT_BY_EXTENSION: dict[str, RdfFormat] = {
    ".nt": RdfFormat.N_TRIPLES,
    ".ttl": RdfFormat.TURTLE,
    ".n3": RdfFormat.N3,
    ".trig": RdfFormat.TRIG,
    ".nq": RdfFormat.N_QUADS,
    ".rdf": RdfFormat.RDF_XML,
    ".owl": RdfFormat.RDF_XML,
    ".xml": RdfFormat.RDF_XML,
    ".jsonld": RdfFormat.JSON_LD,
}
_FORMAT_BY_NAME: dict[str, RdfFormat] = {
    "ntriples": RdfFormat.N_TRIPLES,
    "n-triples": RdfFormat.N_TRIPLES,
    "turtle": RdfFormat.TURTLE,
    "nquads": RdfFormat.N_QUADS,
    "n-quads": RdfFormat.N_QUADS,
    "rdfxml": RdfFormat.RDF_XML,
    "rdf/xml": RdfFormat.RDF_XML,
    "json-ld": RdfFormat.JSON_LD,
    **{ext[1:]: fmt for ext, fmt in FORMAT_BY_EXTENSION.items()},
}
# pyoxigraph prefixes its messages with the position, which FILE:LINE:COL already gives.
_POSITION_PREFIX = re.compile(r"^Parser error [^:]*: ")


def rdf_format(format: RdfFormat | str | None = None, path: Source | None = None) -> RdfFormat:
    """The RDF format named by ``format`` (an RdfFormat, a name or an extension), else
    the one of ``path``'s extension; a clear ValueError when neither says."""
    if isinstance(format, RdfFormat):
        return format
    if format is not None:
        found = _FORMAT_BY_NAME.get(format.lower().lstrip("."))
        if found is None:
            raise ValueError(f"unknown RDF format {format!r}; known: {', '.join(sorted(_FORMAT_BY_NAME))}")
        return found
    if isinstance(path, (str, os.PathLike)):
        ext = os.path.splitext(os.fspath(path))[1].lower()
        if ext in FORMAT_BY_EXTENSION:
            return FORMAT_BY_EXTENSION[ext]
        raise ValueError(
            f"cannot tell the RDF format of {os.fspath(path)!r} from its extension "
            f"(known: {' '.join(sorted(FORMAT_BY_EXTENSION))}); give the format explicitly"
        )
    raise ValueError("the RDF format of a file object must be given explicitly")


_scope_ids = itertools.count()


class BlankNodeScope:
    """Maps the blank nodes of one document to ids of fresh, document-unique blank nodes.

    RDF blank node labels are local to a document, so two files (or two JSON Lines
    elements) that both say ``_:b`` mean two nodes. Labels are ``cl<scope>b<n>``: unique
    within a process and deterministic for a deterministic sequence of loads, unlike
    pyoxigraph's random renaming, so output built from them is reproducible.
    """

    __slots__ = ("_dictionary", "_nodes", "_prefix")

    def __init__(self, dictionary: TermDictionary) -> None:
        self._dictionary = dictionary
        self._nodes: dict[BlankNode, BlankNode] = {}  # terms, not ids: the dictionary may reclaim an id
        self._prefix = ""  # taken at the first blank node: most stream elements have none

    def __call__(self, node: BlankNode) -> int:
        renamed = self._nodes.get(node)
        if renamed is None:
            if not self._prefix:
                self._prefix = f"cl{next(_scope_ids)}b"
            renamed = self._nodes[node] = BlankNode(self._prefix + str(len(self._nodes)))
        return self._dictionary.encode(renamed)


def quad_encoder(
    dictionary: TermDictionary, scope: BlankNodeScope | None = None
) -> Callable[[Quad], EncodedTriple]:
    """The function encoding a quad's triple (graph name ignored): the one encoding loop
    body, with blank nodes mapped through ``scope`` (a fresh scope by default)."""
    encode = dictionary.encode
    blank = scope or BlankNodeScope(dictionary)

    def encode_quad(quad: Quad) -> EncodedTriple:
        s = quad.subject
        o = quad.object
        return (
            blank(s) if type(s) is BlankNode else encode(s),
            encode(quad.predicate),
            blank(o) if type(o) is BlankNode else encode(o),
        )

    return encode_quad


def source_name(source: Source) -> str | None:
    """The name to show in messages: a path, or a file object's ``name`` when it has one."""
    if isinstance(source, (str, os.PathLike)):
        return os.fspath(source)
    name = getattr(source, "name", None)
    return name if isinstance(name, str) else None


def parse_quads(
    source: Source | None = None,
    *,
    text: str | None = None,
    format: RdfFormat | str | None = None,
    base_iri: str | None = None,
    filename: str | None = None,
) -> Iterator[Quad]:
    """pyoxigraph quads of a path, a binary file object or ``text``, in document order.

    The format and the file are checked now; parsing happens as the quads are consumed.

    Syntax errors become ChronologSyntaxError at FILE:LINE:COL with the offending line;
    ``filename`` names ``text`` or a file object in messages.
    """
    fmt = rdf_format(format, source)
    if text is not None:
        parser = pyoxigraph.parse(_utf8(text, filename), fmt, base_iri=base_iri)
        name = filename
    elif isinstance(source, (str, os.PathLike)):
        try:
            parser = pyoxigraph.parse(path=source, format=fmt, base_iri=base_iri)
        except OSError as error:  # pyoxigraph's message does not name the file
            raise type(error)(f"{os.fspath(source)}: {error}") from None
        name = source_name(source)
    elif source is not None:
        parser = pyoxigraph.parse(source, fmt, base_iri=base_iri)
        name = filename or source_name(source)
    else:
        raise TypeError("parse_quads needs a source or text")
    path = source if text is None and isinstance(source, (str, os.PathLike)) else None
    return _reraising(parser, name, text, path)


def _utf8(text: str, filename: str | None) -> bytes:
    """``text`` as UTF-8; a lone surrogate (``\\ud800`` from a JSON string) is no Unicode
    character, so it is a syntax error at its place."""
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError as error:
        code = ord(text[error.start])
        raise SourceMap(text, filename).error(f"lone surrogate \\u{code:04x} (not a Unicode character)",
                                              error.start) from None


def _reraising(
    parser: Iterator[Quad], name: str | None, text: str | None, path: str | os.PathLike[str] | None
) -> Iterator[Quad]:
    try:
        yield from parser
    except SyntaxError as error:
        raise _syntax_error(error, name, text=text, path=path) from None


def _syntax_error(
    error: SyntaxError,
    filename: str | None,
    *,
    text: str | None = None,
    path: str | os.PathLike[str] | None = None,
) -> ChronologSyntaxError:
    """A ChronologSyntaxError for pyoxigraph's ``error``, with the offending line taken
    from ``text`` or read again from ``path`` (file objects give no line text)."""
    message = _POSITION_PREFIX.sub("", error.msg or str(error))
    lineno = error.lineno
    line = None
    if lineno and text is not None:
        line = next(itertools.islice(io.StringIO(text), lineno - 1, None), None)
    elif lineno and path is not None:
        with open(path, encoding="utf-8", errors="replace") as lines:
            line = next(itertools.islice(lines, lineno - 1, None), None)
    return ChronologSyntaxError(message, filename, lineno, error.offset, line)


def iter_encoded_triples(
    source: Source,
    dictionary: TermDictionary,
    *,
    format: RdfFormat | str | None = None,
    base_iri: str | None = None,
) -> Iterator[EncodedTriple]:
    """Encoded triples of an RDF file (path or binary file object), streamed.

    The format comes from ``format`` or the file extension. Triples of all graphs are
    yielded (graph names dropped), in document order, duplicates included.
    """
    return map(quad_encoder(dictionary), parse_quads(source, format=format, base_iri=base_iri))


def encode_text(
    text: str,
    dictionary: TermDictionary,
    *,
    format: RdfFormat | str,
    base_iri: str | None = None,
    filename: str | None = None,
) -> Iterator[EncodedTriple]:
    """Encoded triples of RDF ``text`` in ``format`` (same rules as iter_encoded_triples).

    >>> dictionary = TermDictionary()
    >>> list(encode_text('<http://e/a> <http://e/p> "x", "y" .', dictionary, format="ttl"))
    [(0, 1, 2), (0, 1, 3)]
    """
    quads = parse_quads(text=text, format=format, base_iri=base_iri, filename=filename)
    return map(quad_encoder(dictionary), quads)


def graph_text(triples: Iterable[EncodedTriple], dictionary: TermDictionary) -> str:
    """Encoded triples as N-Triples: each term's cached text (``TermDictionary.text``), the
    bytes pyoxigraph's N-Triples serializer writes."""
    text = dictionary.text
    return "".join(f"{text(s)} {text(p)} {text(o)} .\n" for s, p, o in triples)


def parse_terms(texts: Sequence[str]) -> list[Term]:
    """Terms of their N-Triples texts, in order (one pyoxigraph parse for all).

    >>> [str(t) for t in parse_terms(['<http://e/a>', '"5"^^<http://www.w3.org/2001/XMLSchema#integer>', '_:b1'])]
    ['<http://e/a>', '"5"^^<http://www.w3.org/2001/XMLSchema#integer>', '_:b1']
    """
    if not texts:
        return []
    document = "".join(f"<urn:s> <urn:p> {text} .\n" for text in texts)
    terms = [quad.object for quad in pyoxigraph.parse(document, RdfFormat.N_TRIPLES)]
    if len(terms) != len(texts):
        raise ValueError("a term text did not parse as one N-Triples term")
    return terms


def load_graph(
    paths: Source | Iterable[Source],
    dictionary: TermDictionary,
    *,
    format: RdfFormat | str | None = None,
) -> list[EncodedTriple]:
    """The distinct encoded triples of one or several RDF files, in first-seen order.

    For inputs that fit in memory as a list (background knowledge).
    """
    if isinstance(paths, (str, os.PathLike, io.IOBase)):
        paths = [paths]
    triples: dict[EncodedTriple, None] = {}
    for path in paths:
        triples.update(dict.fromkeys(iter_encoded_triples(path, dictionary, format=format)))
    return list(triples)


def rdf_only(triples: Iterable[EncodedTriple], dictionary: TermDictionary,
             skipped: list[EncodedTriple] | None = None) -> Iterator[EncodedTriple]:
    """The triples that are RDF: reasoning may derive generalized triples (a literal
    subject, as RDFS rule rdfs4b does; a non-IRI predicate), which no RDF syntax can
    write. Those go to ``skipped`` when given, so callers can say how many were left out."""
    terms = dictionary.decode
    for t in triples:
        if isinstance(terms(t[0]), Literal) or not isinstance(terms(t[1]), NamedNode):
            if skipped is not None:
                skipped.append(t)
            continue
        yield t


def decode_triples(triples: Iterable[EncodedTriple], dictionary: TermDictionary) -> Iterator[Triple]:
    """pyoxigraph Triples of encoded triples."""
    decode = dictionary.decode
    for s, p, o in triples:
        yield Triple(decode(s), decode(p), decode(o))


def _sort_key(triple: Triple) -> tuple[str, str, str]:
    """An order on triples that does not depend on id assignment (N-Triples text)."""
    return (str(triple.subject), str(triple.predicate), str(triple.object))


def write_triples(
    triples: Iterable[EncodedTriple],
    dictionary: TermDictionary,
    output: Output | None = None,
    *,
    format: RdfFormat | str | None = None,
    sort: bool = False,
    prefixes: dict[str, str] | None = None,
) -> bytes | None:
    """Serialize encoded triples; quad formats (N-Quads, TriG) put them in the default graph.

    Streams to ``output`` (a path or binary file object such as ``sys.stdout.buffer``), or
    returns the bytes when it is None. ``sort=True`` orders triples by their N-Triples
    text, for byte-stable golden files (this holds them all in memory).
    """
    fmt = rdf_format(format, output)
    decoded: Iterable[Triple] = decode_triples(triples, dictionary)
    if sort:
        decoded = sorted(decoded, key=_sort_key)
    items: Iterable[Triple | Quad] = decoded
    if fmt.supports_datasets:
        default = DefaultGraph()
        items = (Quad(t.subject, t.predicate, t.object, default) for t in decoded)
    result = pyoxigraph.serialize(items, output, fmt, prefixes=prefixes)
    if output is not None and hasattr(output, "flush"):
        output.flush()
    return result
