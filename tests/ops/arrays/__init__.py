"""Tests of gradcli/ops/arrays/, a file per module (a package: a file here may share its name
with one of tests/ops/, which runs the same family in programs through the command line)."""
