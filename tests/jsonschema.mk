# tests/jsonschema.mk: the jsonschema tests (included by tests/Makefile.am).
