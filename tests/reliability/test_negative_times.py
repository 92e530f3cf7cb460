"""Negative times are valid (issue 12, point 1): a stream moved to negative times gives
the same outputs, moved by the same amount, in process. (The Spark runner takes times
<= 0 too: tests/spark/test_run.py.)"""
from __future__ import annotations

import re

import pytest

from chronolog.engine import Engine
from chronolog.formats import encode_text
from chronolog.program import GraphOutput, SolutionsOutput
from chronolog.streams import StreamElement

DOTR = """PREFIX : <http://e/>
EVENT Hot AS SELECT ?s WHERE { ?s :temp ?v FILTER(?v > 40) }
EVENT Smoke AS SELECT ?s WHERE { ?s :smoke true }
RULE :alarm DEFINE { ?a a :Alarm ; :sensor ?s . }
  FROM Smoke AND LAST Hot WITHIN 100 FROM Smoke WHERE Hot.s = Smoke.s WITH ?s = Smoke.s
"""
CSPARQL = """REGISTER QUERY hot AS PREFIX : <http://e/>
SELECT ?s (COUNT(?v) AS ?n) FROM STREAM <http://e/s> [RANGE 100 STEP 50] WHERE { ?s :temp ?v } GROUP BY ?s
"""
LARS = "alarm :- time_win(100, 0, 1, diamond(smoke)) and time_win(100, 0, 1, diamond(hot))\n"
GRAPHS = [(0, "<http://e/s1> <http://e/temp> 45 ."), (60, "<http://e/s1> <http://e/smoke> true ."),
          (70, "<http://e/s2> <http://e/temp> 50 ."), (250, "<http://e/s2> <http://e/smoke> true ."),
          (260, "<http://e/s1> <http://e/temp> 41 .")]
ATOMS = [(0, ("hot",)), (60, ("smoke",)), (250, ("smoke",)), (300, ())]


def _outputs(language: str, text: str, shift: int) -> list[tuple]:
    engine = Engine(text, lang=language)
    if language == "lars":
        elements = [StreamElement(t + shift, atoms) for t, atoms in ATOMS]
    else:
        elements = [StreamElement(t + shift, tuple(encode_text(g, engine.dictionary, format="ttl"))) for t, g in GRAPHS]
    decode = engine.dictionary.decode
    out = []
    for output in engine.run(elements):
        if isinstance(output, GraphOutput):
            content: object = sorted(re.sub(r"<urn:chronolog:[^>]*>", "<fresh>", " ".join(str(decode(t)) for t in triple))
                                     for triple in output.triples)  # detection names hold their time
        elif isinstance(output, SolutionsOutput):
            content = sorted(sorted((k, str(decode(v))) for k, v in s.bindings.items()) for s in output.solutions)
        else:
            content = output.atoms
        out.append((output.time - shift, content))
    return out


@pytest.mark.parametrize("language, text", [("dotr", DOTR), ("csparql", CSPARQL), ("lars", LARS)])
def test_a_stream_moved_to_negative_times_gives_the_same_outputs_moved(language: str, text: str) -> None:
    expected = _outputs(language, text, 0)
    assert expected  # the program does output something
    for shift in (-1000, -150, -10_000_000_000):
        assert _outputs(language, text, shift) == expected
