"""The program contract every compiled program meets (:mod:`.contract`), and the kinds of
output programs produce (:mod:`.outputs`)."""
from chronolog.program.contract import (
    ATOMS_IN, GLOBAL_KEY, RDF, UNNAMED, GlobalPlan, Inputs, Options, Plan, Prepared, Processed, Program,
    ProgramSpec, ProgramWarning, Record, rule_warnings,
)
from chronolog.program.outputs import (
    ATOMS, GRAPHS, OUTPUT_KINDS, SOLUTIONS, AtomsOutput, GraphOutput, Output, Solution, SolutionsOutput, explained,
    explanation,
)

__all__ = [
    "ATOMS", "ATOMS_IN", "GLOBAL_KEY", "GRAPHS", "OUTPUT_KINDS", "RDF", "SOLUTIONS", "UNNAMED", "AtomsOutput",
    "GlobalPlan", "GraphOutput", "Inputs", "Options", "Output", "Plan", "Prepared", "Processed", "Program",
    "ProgramSpec", "ProgramWarning", "Record", "Solution", "SolutionsOutput", "explained", "explanation",
    "rule_warnings",
]
