"""Regenerate this example's streams and background from the CityBench data.

    PYTHONPATH=src python examples/citybench-csparql/make_excerpt.py CITYBENCH_CHECKOUT [../shared/data/citybench]

traffic.trig: AarhusTrafficData158505 (../shared/data/citybench/streams/); parking.trig:
AarhusParkingDataKALKVAERKSVEJ (streams/ of a CityBench checkout: the shared data has no
parking stream). Each stream is replayed as CityBench replays it, from its own first reading,
the gaps between readings divided by ``SPEEDUP`` (5 minutes of traffic readings become 1 s,
half an hour of parking readings 6 s), both starting at time 0; the first ``SECONDS`` s of
the replay are kept. background.ttl: what the query needs from SensorRepository.n3 (the two
sensors, the properties they ssn:observe and the properties' types).
"""
from __future__ import annotations

import sys
from pathlib import Path

from chronolog.citybench import Mapper, load_distances, load_repository, read_csv
from chronolog.streams import StreamElement, write_stream
from chronolog.terms import TermDictionary

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE.parent / "citybench"))
from make_excerpt import background  # noqa: E402  (the DOTR example's SensorRepository excerpt)

SPEEDUP = 300
SECONDS = 30
STREAMS = {"traffic": "AarhusTrafficData158505", "parking": "AarhusParkingDataKALKVAERKSVEJ"}


def replay(path: Path, repo: dict, distances: dict, d: TermDictionary) -> list[StreamElement]:
    readings = read_csv(path, distances)
    first = readings[0].time
    mapper = Mapper(repo, d)
    out = []
    for reading in readings:
        time = round((reading.time - first) / SPEEDUP)
        if time >= SECONDS * 1000:
            break
        out.append(StreamElement(time, tuple(mapper.triples(reading))))
    return out


def main() -> None:
    citybench = Path(sys.argv[1])
    data = Path(sys.argv[2]) if len(sys.argv) > 2 else HERE.parents[2] / ".." / "shared" / "data" / "citybench"
    repo = load_repository(data / "SensorRepository.n3")
    distances = load_distances(data / "trafficMetaData.csv")
    files = {"traffic": data / "streams" / f"{STREAMS['traffic']}.stream",
             "parking": citybench / "streams" / f"{STREAMS['parking']}.stream"}
    for name, path in files.items():
        d = TermDictionary()
        with open(HERE / f"{name}.trig", "wb") as out:
            out.write(f"# CityBench (https://github.com/CityBench/Benchmark, GPL-3.0: see LICENSE-CityBench): "
                      f"{STREAMS[name]}, replayed {SPEEDUP}x faster,\n# converted by chronolog.citybench "
                      f"(examples/citybench-csparql/make_excerpt.py).\n".encode())
            write_stream(replay(path, repo, distances, d), out, d, format="trig")
    (HERE / "background.ttl").write_bytes(
        background(data / "SensorRepository.n3", list(STREAMS.values())).replace(b"../LICENSE", b"LICENSE"))


if __name__ == "__main__":
    main()
