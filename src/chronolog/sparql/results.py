"""Query results and the W3C result formats (JSON, XML, CSV, TSV), written as they stream.

A SELECT result iterates its rows lazily, and every writer writes a row as soon as it is
produced, so a huge result set is never held in memory.

>>> import io
>>> from pyoxigraph import NamedNode, Literal
>>> r = SelectResult(["x", "n"], iter([(NamedNode("http://e/a"), Literal("1")), (None, Literal("x y"))]))
>>> out = io.StringIO(); write_results(r, out, "csv"); print(out.getvalue().replace("\\r\\n", "|"))
x,n|http://e/a,1|,x y|
"""
from __future__ import annotations

import json
from typing import Any, Iterable, Iterator, Sequence, TextIO
from xml.sax.saxutils import escape, quoteattr

from pyoxigraph import BlankNode, Literal, NamedNode

XSD = "http://www.w3.org/2001/XMLSchema#"
_XSD_STRING = XSD + "string"
FORMATS = ("json", "xml", "csv", "tsv")


class SelectResult:
    """Solutions of a SELECT: ``variables`` (names) and rows (tuples of terms or None)."""

    kind = "select"

    def __init__(self, variables: Sequence[str], rows: Iterable[tuple]) -> None:
        self.variables = [str(v) for v in variables]
        self._rows = iter(rows)

    def __iter__(self) -> Iterator[tuple]:
        return self._rows

    def bindings(self) -> Iterator[dict[str, Any]]:
        """Rows as dicts from variable name to term (unbound variables left out)."""
        for row in self._rows:
            yield {v: t for v, t in zip(self.variables, row) if t is not None}


class BooleanResult:
    kind = "ask"

    def __init__(self, value: bool) -> None:
        self.value = bool(value)

    def __bool__(self) -> bool:
        return self.value


class GraphResult:
    """Triples of a CONSTRUCT or DESCRIBE (terms), distinct."""

    kind = "graph"

    def __init__(self, triples: Iterable[tuple]) -> None:
        self._triples = iter(triples)

    def __iter__(self) -> Iterator[tuple]:
        return self._triples


# ---- term syntax ---------------------------------------------------------------------------
def _nt_string(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\r", "\\r").replace("\t", "\\t") + '"'


def nt(t: Any) -> str:
    """N-Triples syntax of a term."""
    if isinstance(t, NamedNode):
        return f"<{t.value}>"
    if isinstance(t, BlankNode):
        return f"_:{t.value}"
    if isinstance(t, Literal):
        if t.language:
            return f"{_nt_string(t.value)}@{t.language}"
        if t.datatype.value == _XSD_STRING:
            return _nt_string(t.value)
        return f"{_nt_string(t.value)}^^<{t.datatype.value}>"
    raise TypeError(t)


def _json_term(t: Any) -> dict:
    if isinstance(t, NamedNode):
        return {"type": "uri", "value": t.value}
    if isinstance(t, BlankNode):
        return {"type": "bnode", "value": t.value}
    out = {"type": "literal", "value": t.value}
    if t.language:
        out["xml:lang"] = t.language
    elif t.datatype.value != _XSD_STRING:
        out["datatype"] = t.datatype.value
    return out


_XML_ENT = {"\n": "&#10;", "\r": "&#13;", "\t": "&#9;"}


def _xml_term(t: Any) -> str:
    if isinstance(t, NamedNode):
        return f"<uri>{escape(t.value)}</uri>"
    if isinstance(t, BlankNode):
        return f"<bnode>{escape(t.value)}</bnode>"
    if t.language:
        return f"<literal xml:lang={quoteattr(t.language)}>{escape(t.value, _XML_ENT)}</literal>"
    if t.datatype.value != _XSD_STRING:
        return f"<literal datatype={quoteattr(t.datatype.value)}>{escape(t.value, _XML_ENT)}</literal>"
    return f"<literal>{escape(t.value, _XML_ENT)}</literal>"


def _csv_field(t: Any) -> str:
    if t is None:
        return ""
    s = f"_:{t.value}" if isinstance(t, BlankNode) else t.value
    if any(c in s for c in ',"\n\r'):
        s = '"' + s.replace('"', '""') + '"'
    return s


_TSV_BARE = {XSD + "integer", XSD + "decimal", XSD + "double"}


def _tsv_term(t: Any) -> str:
    if t is None:
        return ""
    if isinstance(t, Literal) and not t.language and t.datatype.value in _TSV_BARE:
        return t.value
    return nt(t)


# ---- writers -------------------------------------------------------------------------------
def write_results(result: Any, out: TextIO, fmt: str = "json") -> None:
    """Write ``result`` to ``out`` in ``fmt`` (json, xml, csv, tsv), row by row.

    Graph results (CONSTRUCT/DESCRIBE) are written as N-Triples whatever ``fmt`` is.
    """
    if fmt not in FORMATS:
        raise ValueError(f"unknown result format {fmt!r}; expected one of {', '.join(FORMATS)}")
    if isinstance(result, GraphResult):
        for s, p, o in result:
            out.write(f"{nt(s)} {nt(p)} {nt(o)} .\n")
        return
    globals()["_write_" + fmt](result, out)


def _write_json(result: Any, out: TextIO) -> None:
    if isinstance(result, BooleanResult):
        out.write(json.dumps({"head": {}, "boolean": result.value}) + "\n")
        return
    out.write('{"head": {"vars": ' + json.dumps(result.variables) + '}, "results": {"bindings": [')
    first = True
    names = result.variables
    for row in result:
        b = {v: _json_term(t) for v, t in zip(names, row) if t is not None}
        out.write(("\n  " if first else ",\n  ") + json.dumps(b, ensure_ascii=False))
        first = False
    out.write("\n]}}\n")


def _write_xml(result: Any, out: TextIO) -> None:
    out.write('<?xml version="1.0"?>\n<sparql xmlns="http://www.w3.org/2005/sparql-results#">\n')
    if isinstance(result, BooleanResult):
        out.write(f"<head/>\n<boolean>{'true' if result.value else 'false'}</boolean>\n</sparql>\n")
        return
    out.write("<head>" + "".join(f"<variable name={quoteattr(v)}/>" for v in result.variables) + "</head>\n<results>\n")
    names = result.variables
    for row in result:
        out.write("<result>" + "".join(
            f"<binding name={quoteattr(v)}>{_xml_term(t)}</binding>" for v, t in zip(names, row) if t is not None
        ) + "</result>\n")
    out.write("</results>\n</sparql>\n")


def _write_csv(result: Any, out: TextIO) -> None:
    if isinstance(result, BooleanResult):
        out.write("_askResult\r\n" + ("true" if result.value else "false") + "\r\n")
        return
    out.write(",".join(result.variables) + "\r\n")
    for row in result:
        out.write(",".join(_csv_field(t) for t in row) + "\r\n")


def _write_tsv(result: Any, out: TextIO) -> None:
    if isinstance(result, BooleanResult):
        out.write("?_askResult\n" + ("true" if result.value else "false") + "\n")
        return
    out.write("\t".join("?" + v for v in result.variables) + "\n")
    for row in result:
        out.write("\t".join(_tsv_term(t) for t in row) + "\n")
