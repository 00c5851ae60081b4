"""Benchmarks: each compares blake2sign_web with the engines people use today, in one run.

Run one with ``python -m example_project.benchmarks.<name>``; each prints progress on
stderr and a table on stdout.
"""
