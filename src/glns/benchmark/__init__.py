"""Benchmark harness: final-testing runs of glns and baseline solvers, tables and records
(``glns bench``)."""
