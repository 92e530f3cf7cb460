"""Datalog over RDF: the rule language, stratification, semi-naive reasoning per time point."""
from chronolog.datalog.loading import load_rules, materialize, reasoner_for
from chronolog.datalog.program import Program, Rule, load_program
from chronolog.datalog.reasoner import Reasoner

__all__ = ["Program", "Rule", "Reasoner", "load_program", "load_rules", "materialize", "reasoner_for"]
