# tests/jsonschema.mk: the jsonschema tests (included by tests/Makefile.am):
# the official JSON Schema Test Suite (draft 2020-12) and the unit tests.
TESTS += test_jsonschema_suite test_jsonschema
check_PROGRAMS += test_jsonschema_suite test_jsonschema
test_jsonschema_suite_SOURCES = test_jsonschema_suite.c
test_jsonschema_SOURCES = test_jsonschema.c
EXTRA_DIST += jsonschema-suite
