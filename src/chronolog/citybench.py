"""CityBench CSV streams as chronolog streams (the DOTR paper's section 5 workload).

CityBench (Ali et al., ISWC 2015; data GPL-3.0) ships Aarhus sensor data as CSV: traffic
(``status,avgMeasuredTime,avgSpeed,extID,medianMeasuredTime,TIMESTAMP,vehicleCount,_id,REPORT_ID``)
and weather (``hum,tempm,wspdm,TIMESTAMP``) and parking
(``vehiclecount,updatetime,_id,totalspaces,garagecode,streamtime``). Its stream players turn each row into RDF; this
module does the same, following the mapping of ``shared/data/citybench/README.md``:

- the sensor is ``ces:AarhusTrafficData<REPORT_ID>`` (weather: ``ces:AarhusWeatherData0``,
  or the ``AarhusWeatherData<N>`` of the file name), ``ces:`` being
  ``http://www.insight-centre.org/dataset/SampleEventService#``;
- for each property P the sensor ``ssn:observes`` in SensorRepository.n3, one observation
  node ``ob`` with ``ob a ssn:Observation ; ssn:observedBy sensor ; ssn:observedProperty P ;
  sao:hasValue v``, ``v`` an ``xsd:double`` chosen by P's type: AvgSpeed = avgSpeed,
  VehicleCount = vehicleCount, MeasureTime = avgMeasuredTime, CongestionLevel =
  vehicleCount / distance, EstimatedTime = distance / avgSpeed (-1 when avgSpeed is 0),
  Temperature = tempm, Humidity = hum, WindSpeed = wspdm, ParkingVacancy = totalspaces -
  vehiclecount (the sensor ``ces:AarhusParkingData<garagecode>``; CityBench writes this
  one as an ``xsd:int``, here it is a double like the others); ``distance`` is the
  DISTANCE_IN_METERS of the REPORT_ID's row of trafficMetaData.csv. A property of another
  type (e.g. ``ct:API``) gets no observation, as in CityBench;
- the observation IRI is ``ces:Observation-<sensor>-<line>-<k>`` (CityBench draws a UUID;
  a name made from the CSV line keeps conversions reproducible);
- the row's TIMESTAMP (``2014-08-01T07:50:00``, read as UTC; parking: updatetime) is the
  time, in epoch ms.

Several CSV files merge into one time-ordered stream, every reading with the same timestamp
in one element (DOTR does not tell streams apart: one graph per time instant). The real files
are not quite in order (AarhusTrafficData158505 repeats a stretch of August 18 after August
24): each file is sorted by timestamp (stably) and a row identical to an earlier row of the
same file is dropped; :class:`Conversion` counts both. ``rate`` compresses time as the paper
and CityBench do to vary the input rate: the i-th time point (from 0) gets the time
``first + round(i * 1000 / rate)`` ms (at most 1000 graphs per second: times are ms).
An empty field is a missing value (the weather file has 22 rows with one): that property
gets no observation in that row. A malformed row (wrong field count, a value or timestamp
that does not parse, an unknown REPORT_ID or sensor) is an error naming ``FILE:LINE``.

    python -m chronolog.citybench streams/AarhusTrafficData182955.stream \\
        streams/AarhusTrafficData158505.stream --rate 10 --limit 300 -o stream.trig

reads SensorRepository.n3 and trafficMetaData.csv from the streams' folder or its parent
(or ``--repository`` / ``--metadata``) and writes TriG or JSON Lines (by extension, or
``--format``), times as ``xsd:integer`` ms (``--time-datatype dateTime`` for epoch dateTimes).
"""
from __future__ import annotations

import argparse
import csv
import heapq
import itertools
import os
import sys
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Iterable, Iterator, Mapping, Sequence

from pyoxigraph import Literal, NamedNode

from chronolog.errors import ChronologError
from chronolog.formats import parse_quads
from chronolog.streams import StreamElement, write_stream
from chronolog.terms import XSD, TermDictionary

CES = "http://www.insight-centre.org/dataset/SampleEventService#"
SSN = "http://purl.oclc.org/NET/ssnx/ssn#"
SAO = "http://purl.oclc.org/NET/sao/"
CT = "http://www.insight-centre.org/citytraffic#"
RDF_TYPE = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"
XSD_DOUBLE = NamedNode(XSD + "double")

TRAFFIC_HEADER = ("status", "avgMeasuredTime", "avgSpeed", "extID", "medianMeasuredTime", "TIMESTAMP",
                  "vehicleCount", "_id", "REPORT_ID")
WEATHER_HEADER = ("hum", "tempm", "wspdm", "TIMESTAMP")
PARKING_HEADER = ("vehiclecount", "updatetime", "_id", "totalspaces", "garagecode", "streamtime")
#: the property types a reading has a value for, and the CSV column (or formula) giving it
PROPERTY_TYPES = ("AvgSpeed", "VehicleCount", "MeasureTime", "CongestionLevel", "EstimatedTime",
                  "Temperature", "Humidity", "WindSpeed", "ParkingVacancy")


class CityBenchError(ChronologError):
    """A CityBench file that cannot be converted; the message starts with ``FILE:LINE:``."""


@dataclass(frozen=True)
class Reading:
    """One CSV row: its sensor, time (epoch ms), values by property type, and origin."""

    time: int
    sensor: str
    values: Mapping[str, float]
    file: str
    line: int


@dataclass
class Conversion:
    """What a conversion read: counts per file, reordered and duplicate rows."""

    rows: dict[str, int] = field(default_factory=dict)
    out_of_order: dict[str, int] = field(default_factory=dict)
    duplicates: dict[str, int] = field(default_factory=dict)
    time_points: int = 0
    triples: int = 0

    def summary(self) -> str:
        parts = []
        for name, n in self.rows.items():
            extra = []
            if self.out_of_order.get(name):
                extra.append(f"{self.out_of_order[name]:,} out of order, sorted")
            if self.duplicates.get(name):
                extra.append(f"{self.duplicates[name]:,} duplicate rows dropped")
            parts.append(f"{name}: {n:,} rows" + (f" ({'; '.join(extra)})" if extra else ""))
        parts.append(f"{self.time_points:,} time points, {self.triples:,} triples")
        return "\n".join(parts)


# -- background --------------------------------------------------------------------------

def load_repository(path: str | os.PathLike[str]) -> dict[str, tuple[tuple[str, str], ...]]:
    """sensor IRI -> ((property IRI, property type local name), ...) for the property types
    of :data:`PROPERTY_TYPES`, in the repository's order."""
    observes: dict[str, list[str]] = {}
    types: dict[str, str] = {}
    for quad in parse_quads(path):
        p = quad.predicate.value
        if p == SSN + "observes":
            observes.setdefault(quad.subject.value, []).append(quad.object.value)
        elif p == RDF_TYPE and quad.object.value.startswith(CT):
            local = quad.object.value[len(CT):]
            if local in PROPERTY_TYPES:
                types[quad.subject.value] = local
    return {sensor: tuple((prop, types[prop]) for prop in props if prop in types)
            for sensor, props in observes.items()}


def load_distances(path: str | os.PathLike[str]) -> dict[str, float]:
    """REPORT_ID -> DISTANCE_IN_METERS, from trafficMetaData.csv."""
    out: dict[str, float] = {}
    with open(path, newline="", encoding="utf-8") as f:
        reader = csv.DictReader(f)
        for row in reader:
            try:
                out[row["REPORT_ID"]] = float(row["DISTANCE_IN_METERS"])
            except (KeyError, TypeError, ValueError):
                raise CityBenchError(f"{path}:{reader.line_num}: no REPORT_ID / DISTANCE_IN_METERS") from None
    return out


# -- CSV rows ----------------------------------------------------------------------------

def parse_timestamp(text: str) -> int:
    """``2014-08-01T07:50:00`` (UTC unless it says otherwise) -> epoch milliseconds."""
    moment = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    return round(moment.timestamp() * 1000)


def read_csv(path: str | os.PathLike[str], distances: Mapping[str, float] | None = None,
             stats: Conversion | None = None) -> list[Reading]:
    """The readings of one traffic or weather CSV file, sorted by time, duplicates dropped."""
    name = os.fspath(path)
    weather_sensor = CES + (Path(name).stem if Path(name).stem.startswith("AarhusWeatherData") else "AarhusWeatherData0")
    out: list[Reading] = []
    seen: set[tuple[str, ...]] = set()
    duplicates = disorder = 0
    with open(path, newline="", encoding="utf-8") as f:
        rows = csv.reader(f)
        header = tuple(next(rows, ()))
        if header == TRAFFIC_HEADER:
            kind = "traffic"
        elif header == WEATHER_HEADER:
            kind = "weather"
        elif header == PARKING_HEADER:
            kind = "parking"
        else:
            raise CityBenchError(f"{name}:1: not a CityBench traffic, weather or parking header: {','.join(header)!r}")
        for row in rows:
            line = rows.line_num
            if not row or row == [""]:
                continue
            key = tuple(row)
            if key in seen:
                duplicates += 1
                continue
            seen.add(key)
            reading = _reading(kind, header, row, name, line, weather_sensor, distances)
            if out and reading.time < out[-1].time:
                disorder += 1
            out.append(reading)
    out.sort(key=lambda r: r.time)
    if stats is not None:
        stats.rows[name] = len(out)
        stats.out_of_order[name] = disorder
        stats.duplicates[name] = duplicates
    return out


def _reading(kind: str, header: tuple[str, ...], row: list[str], name: str, line: int, weather_sensor: str,
             distances: Mapping[str, float] | None) -> Reading:
    where = f"{name}:{line}"
    if len(row) != len(header):
        raise CityBenchError(f"{where}: expected {len(header)} fields, found {len(row)}")
    fields = dict(zip(header, row))

    def number(column: str) -> float | None:
        if not fields[column].strip():
            return None  # a missing value (the weather file has a few): no observation
        try:
            return float(fields[column])
        except ValueError:
            raise CityBenchError(f"{where}: {column} is not a number: {fields[column]!r}") from None

    stamp = "updatetime" if kind == "parking" else "TIMESTAMP"
    try:
        time = parse_timestamp(fields[stamp])
    except ValueError:
        raise CityBenchError(f"{where}: {stamp} is not a date-time: {fields[stamp]!r}") from None
    if kind == "parking":
        spaces, taken = number("totalspaces"), number("vehiclecount")
        vacancy = {} if spaces is None or taken is None else {"ParkingVacancy": spaces - taken}
        return Reading(time, CES + "AarhusParkingData" + fields["garagecode"].strip(), vacancy, name, line)
    if kind == "weather":
        found = {"Temperature": number("tempm"), "Humidity": number("hum"), "WindSpeed": number("wspdm")}
        return Reading(time, weather_sensor, {k: v for k, v in found.items() if v is not None}, name, line)
    report = fields["REPORT_ID"].strip()
    if not report.isdigit():
        raise CityBenchError(f"{where}: REPORT_ID is not a number: {report!r}")
    speed, count, measured = number("avgSpeed"), number("vehicleCount"), number("avgMeasuredTime")
    values = {"AvgSpeed": speed, "VehicleCount": count, "MeasureTime": measured}
    if distances is not None:
        if report not in distances:
            raise CityBenchError(f"{where}: REPORT_ID {report} is not in the traffic metadata")
        distance = distances[report]
        values["CongestionLevel"] = None if count is None else count / distance
        values["EstimatedTime"] = None if speed is None else distance / speed if speed != 0 else -1.0
    return Reading(time, CES + f"AarhusTrafficData{report}", {k: v for k, v in values.items() if v is not None},
                   name, line)


# -- RDF ---------------------------------------------------------------------------------

class Mapper:
    """Readings -> encoded triples, per the README's mapping (one observation node per
    observed property with a value)."""

    def __init__(self, repository: Mapping[str, Sequence[tuple[str, str]]], dictionary: TermDictionary) -> None:
        self.repository = repository
        self.d = dictionary
        iri = dictionary.iri
        self.type, self.observation = iri(RDF_TYPE), iri(SSN + "Observation")
        self.observed_by, self.observed_property = iri(SSN + "observedBy"), iri(SSN + "observedProperty")
        self.has_value = iri(SAO + "hasValue")

    def triples(self, reading: Reading) -> list[tuple[int, int, int]]:
        props = self.repository.get(reading.sensor)
        if props is None:
            raise CityBenchError(f"{reading.file}:{reading.line}: sensor {reading.sensor} is not in the repository")
        d = self.d
        sensor = d.iri(reading.sensor)
        local = reading.sensor[len(CES):] if reading.sensor.startswith(CES) else reading.sensor.rsplit("/", 1)[-1]
        out = []
        for k, (prop, ptype) in enumerate(props):
            if ptype not in reading.values:
                continue
            ob = d.iri(f"{CES}Observation-{local}-{reading.line}-{k}")
            value = d.encode(Literal(repr(float(reading.values[ptype])), datatype=XSD_DOUBLE))
            out += [(ob, self.type, self.observation), (ob, self.observed_by, sensor),
                    (ob, self.observed_property, d.iri(prop)), (ob, self.has_value, value)]
        return out


def merge(readings: Iterable[Sequence[Reading]]) -> Iterator[tuple[int, list[Reading]]]:
    """(time, readings) per distinct time, over several time-sorted reading lists."""
    merged = heapq.merge(*readings, key=lambda r: r.time)
    for time, group in itertools.groupby(merged, key=lambda r: r.time):
        yield time, list(group)


def compress(times: Sequence[int], rate: float) -> list[int]:
    """New times for time points, ``rate`` per second from the first: the i-th is
    ``times[0] + round(i * 1000 / rate)``."""
    if not 0 < rate <= 1000:
        raise ValueError(f"rate must be in (0, 1000] graphs per second (times are milliseconds), not {rate}")
    if not times:
        return []
    return [times[0] + round(i * 1000 / rate) for i in range(len(times))]


def convert(streams: Sequence[str | os.PathLike[str]], repository: str | os.PathLike[str] | Mapping,
            metadata: str | os.PathLike[str] | Mapping[str, float] | None, dictionary: TermDictionary, *,
            rate: float | None = None, limit: int | None = None, skip: int = 0,
            stats: Conversion | None = None) -> list[StreamElement]:
    """The merged stream of CityBench CSV files, one element per time point.

    ``skip`` then ``limit`` select time points (before compression); ``rate`` compresses time.
    ``repository`` and ``metadata`` are paths or what :func:`load_repository` /
    :func:`load_distances` return (metadata may be None for weather-only streams).
    """
    stats = stats if stats is not None else Conversion()
    repo = repository if isinstance(repository, Mapping) else load_repository(repository)
    distances = metadata if metadata is None or isinstance(metadata, Mapping) else load_distances(metadata)
    readings = [read_csv(path, distances, stats) for path in streams]
    points = list(itertools.islice(merge(readings), skip, None if limit is None else skip + limit))
    times = [t for t, _ in points]
    if rate is not None:
        times = compress(times, rate)
    mapper = Mapper(repo, dictionary)
    out = []
    for time, (_, group) in zip(times, points):
        triples: dict[tuple[int, int, int], None] = {}
        for reading in group:
            triples.update(dict.fromkeys(mapper.triples(reading)))
        out.append(StreamElement(time, tuple(triples)))
        stats.triples += len(triples)
    stats.time_points = len(out)
    return out


def _find(name: str, streams: Sequence[str]) -> str:
    for folder in dict.fromkeys(p for s in streams for p in (Path(s).parent, Path(s).parent.parent)):
        if (folder / name).exists():
            return str(folder / name)
    raise CityBenchError(f"{name} is not next to the streams or in their parent folder: give its path")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m chronolog.citybench",
                                     description="Convert CityBench CSV streams into one chronolog stream (TriG or JSONL).")
    parser.add_argument("streams", nargs="+", metavar="CSV", help="CityBench .stream files (traffic or weather)")
    parser.add_argument("--repository", help="SensorRepository.n3 (default: next to the streams or in their parent)")
    parser.add_argument("--metadata", help="trafficMetaData.csv (default: next to the streams or in their parent)")
    parser.add_argument("--rate", type=float, help="compress time: this many graphs per second (at most 1000)")
    parser.add_argument("--skip", type=int, default=0, help="leave out the first N time points")
    parser.add_argument("--limit", type=int, help="at most N time points")
    parser.add_argument("-o", "--output", default="-", help="output stream (.trig or .jsonl); default stdout")
    parser.add_argument("--format", choices=["trig", "jsonl"], help="default: from -o, else TriG")
    parser.add_argument("--time-datatype", choices=["integer", "dateTime"], default="integer",
                        help="times as xsd:integer ms (default) or xsd:dateTime")
    args = parser.parse_args(argv)
    try:
        repository = args.repository or _find("SensorRepository.n3", args.streams)
        traffic = any(Path(s).name.startswith("AarhusTrafficData") for s in args.streams)
        metadata = args.metadata or (_find("trafficMetaData.csv", args.streams) if traffic else None)
        d = TermDictionary()
        stats = Conversion()
        elements = convert(args.streams, repository, metadata, d, rate=args.rate, limit=args.limit,
                           skip=args.skip, stats=stats)
        out = sys.stdout.buffer if args.output == "-" else args.output
        fmt = args.format or ("trig" if args.output == "-" else None)
        write_stream(elements, out, d, format=fmt, time_datatype=args.time_datatype)
    except (ChronologError, ValueError, OSError) as exc:
        print(f"chronolog.citybench: {exc}", file=sys.stderr)
        return 2
    print(stats.summary(), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
