"""Regenerate this example's stream and background excerpts from the CityBench data.

    PYTHONPATH=src python examples/citybench/make_excerpt.py [../shared/data/citybench]

q1/stream.trig: AarhusTrafficData182955 + AarhusTrafficData158505, the first 80 time
points, compressed to 1 graph per second; q2/stream.trig: AarhusTrafficData158505 +
AarhusWeatherData0, the first 200 time points at 1 graph per second. Each background.ttl
holds what the query needs from SensorRepository.n3: the sensors, the properties they
ssn:observe and the properties' types.
"""
from __future__ import annotations

import io
import sys
from pathlib import Path

from pyoxigraph import DefaultGraph, Quad, RdfFormat, serialize

from chronolog.citybench import CES, RDF_TYPE, SSN, convert, load_distances, load_repository
from chronolog.formats import parse_quads
from chronolog.streams import write_stream
from chronolog.terms import TermDictionary

HERE = Path(__file__).parent
HEADER = """# An excerpt of CityBench's SensorRepository.n3 (https://github.com/CityBench/Benchmark,
# GPL-3.0: see ../LICENSE-CityBench), made by examples/citybench/make_excerpt.py: the
# sensors {sensors}, the properties they ssn:observe and the properties' types.
"""
QUERIES = {
    "q1": (["AarhusTrafficData182955", "AarhusTrafficData158505"], 80),
    "q2": (["AarhusTrafficData158505", "AarhusWeatherData0"], 200),
}


def background(repository: Path, sensors: list[str]) -> bytes:
    wanted = {CES + s for s in sensors}
    quads = list(parse_quads(repository))
    props = {q.object.value for q in quads if q.subject.value in wanted and q.predicate.value == SSN + "observes"}
    keep = [Quad(q.subject, q.predicate, q.object) for q in quads
            if (q.subject.value in wanted and q.predicate.value in (RDF_TYPE, SSN + "observes"))
            or (q.subject.value in props and q.predicate.value == RDF_TYPE)]
    body = serialize([q.triple for q in keep], format=RdfFormat.TURTLE,
                     prefixes={"ces": CES, "ssn": SSN, "ct": "http://www.insight-centre.org/citytraffic#"})
    return HEADER.format(sensors=", ".join(sensors)).encode() + body


PREFIXES = {"ces": CES, "ssn": SSN, "sao": "http://purl.oclc.org/NET/sao/",
            "xsd": "http://www.w3.org/2001/XMLSchema#", "prov": "http://www.w3.org/ns/prov#"}


def prefixed_trig(elements, d: TermDictionary, sensors: list[str]) -> bytes:
    """The stream as chronolog's TrigWriter writes it, with prefixes (a third of the size)."""
    buf = io.BytesIO()
    write_stream(elements, buf, d, format="trig")
    quads = parse_quads(io.BytesIO(buf.getvalue()), format="trig")
    head = (f"# CityBench (https://github.com/CityBench/Benchmark, GPL-3.0: see ../LICENSE-CityBench): "
            f"{' + '.join(sensors)},\n# converted by chronolog.citybench (examples/citybench/make_excerpt.py).\n")
    out, graph, block = [head.encode()], None, []
    for q in quads:  # one serialization per element keeps each element's graph one block
        block.append(q)
        if q.graph_name != DefaultGraph() and graph is None:
            graph = q.graph_name
        elif q.graph_name == DefaultGraph() and graph is not None:
            out.append(_block(block[:-1], len(out) == 1))
            block, graph = [q], None
    out.append(_block(block, len(out) == 1))
    return b"".join(out)


def _block(quads: list, first: bool) -> bytes:
    text = serialize(quads, format=RdfFormat.TRIG, prefixes=PREFIXES)
    return text if first else b"\n".join(line for line in text.split(b"\n") if not line.startswith(b"@prefix"))


def main() -> None:
    data = Path(sys.argv[1] if len(sys.argv) > 1 else HERE.parents[2] / ".." / "shared" / "data" / "citybench")
    repo = load_repository(data / "SensorRepository.n3")
    distances = load_distances(data / "trafficMetaData.csv")
    for name, (sensors, points) in QUERIES.items():
        d = TermDictionary()
        streams = [data / "streams" / f"{s}.stream" for s in sensors]
        elements = convert(streams, repo, distances, d, rate=1, limit=points)
        (HERE / name / "stream.trig").write_bytes(prefixed_trig(elements, d, sensors))
        (HERE / name / "background.ttl").write_bytes(background(data / "SensorRepository.n3", sensors))


if __name__ == "__main__":
    main()
