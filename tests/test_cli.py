"""End to end through the command line: ``python -m chronolog`` as a user runs it."""
from __future__ import annotations

import gc
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EX = "http://example.org/"


def chronolog(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "chronolog", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=300)


def test_materialize_rooms_example(tmp_path: Path) -> None:
    out = tmp_path / "closure.nt"
    done = chronolog("materialize", "examples/rooms/background.ttl", "--rules", "rdfs",
                     "--rules", "examples/rooms/rules.dl", "-o", str(out), "--sort")
    assert done.returncode == 0, done.stderr
    lines = set(out.read_text().splitlines())
    assert f"<{EX}s1> <{EX}is_in_room> <{EX}roomA> ." in lines
    assert f"<{EX}s1> <{EX}shares_room_with> <{EX}s2> ." in lines
    assert f"<{EX}s1> <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> <{EX}Sensor> ." in lines
    assert not any(f"<{EX}s1> <{EX}shares_room_with> <{EX}s1>" in line for line in lines)
    assert sorted(out.read_text().splitlines()) == out.read_text().splitlines()


def test_materialize_to_stdout_without_rules() -> None:
    done = chronolog("materialize", "examples/rooms/background.ttl")
    assert done.returncode == 0, done.stderr
    assert len(done.stdout.splitlines()) == 9


def test_bad_rules_file_names_the_place(tmp_path: Path) -> None:
    rules = tmp_path / "bad.dl"
    rules.write_text("PREFIX : <http://example.org/>\n:p(?x) :- :q(?y).\n")
    done = chronolog("materialize", "examples/rooms/background.ttl", "--rules", str(rules))
    assert done.returncode == 2
    assert f"{rules}:2:4: unsafe rule: head variable ?x is not bound in the body" in done.stderr


def test_malformed_rdf_names_the_place(tmp_path: Path) -> None:
    data = tmp_path / "bad.ttl"
    data.write_text("@prefix : <http://example.org/> .\n:a :b :c .\n:a :b .\n")
    done = chronolog("materialize", str(data))
    assert done.returncode == 2
    assert f"{data}:3:" in done.stderr


def test_unknown_rule_set() -> None:
    done = chronolog("materialize", "examples/rooms/background.ttl", "--rules", "owl-full")
    assert done.returncode == 2
    assert "owl-full" in done.stderr and "rdfs" in done.stderr


def test_generalized_triples_are_counted_not_written(tmp_path: Path) -> None:
    data = tmp_path / "lit.ttl"
    data.write_text('@prefix : <http://example.org/> .\n:a :b "x" .\n')
    done = chronolog("materialize", str(data), "--rules", "rdfs")
    assert done.returncode == 0, done.stderr
    assert '"x"' not in "".join(line.split(" ")[0] for line in done.stdout.splitlines())
    assert "generalized triples (literal subjects) are not RDF and were not written" in done.stderr


def test_materialize_on_spark_equals_in_process(tmp_path: Path) -> None:
    args = ["materialize", "examples/rooms/background.ttl", "--rules", "examples/rooms/rules.dl", "--sort"]
    spark = chronolog(*args, "--runner", "spark", "--master", "local[1]")
    local = chronolog(*args)
    assert spark.returncode == 0, spark.stderr
    assert spark.stdout == local.stdout and len(local.stdout.splitlines()) == 11


FREEZE_COUNT = """
import gc, sys
from chronolog import cli
sys.argv = ["chronolog", "run", "examples/fire", "--runner", "inprocess", "-o", sys.argv[1]]
code = cli.main()
print(code, gc.get_freeze_count())
"""


def test_the_command_freezes_its_compiled_program_out_of_the_collector(tmp_path: Path) -> None:
    """Run as the process's own command, ``run`` moves the compiled program out of the garbage
    collector's walks; called with arguments (a library, a test), it leaves the collector alone."""
    from chronolog import cli

    done = subprocess.run([sys.executable, "-c", FREEZE_COUNT, str(tmp_path / "own.trig")], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)
    code, frozen = done.stdout.split()
    assert code == "0" and int(frozen) > 10_000, done.stderr
    before = gc.get_freeze_count()
    assert cli.main(["run", str(ROOT / "examples" / "fire"), "--runner", "inprocess",
                     "-o", str(tmp_path / "called.trig")]) == 0
    assert gc.get_freeze_count() == before
