# tests/jsonschema.mk: the jsonschema tests (included by tests/Makefile.am):
# the official JSON Schema Test Suite (draft 2020-12) and the unit tests.
TESTS += test_jsonschema_suite test_jsonschema
check_PROGRAMS += test_jsonschema_suite test_jsonschema
test_jsonschema_suite_SOURCES = test_jsonschema_suite.c
test_jsonschema_SOURCES = test_jsonschema.c
EXTRA_DIST += jsonschema-suite

# Validation through the host: tools/call against test plugins with
# demanding input schemas and a broken output schema.
TESTS += test_mcp_validation
check_PROGRAMS += test_mcp_validation
test_mcp_validation_SOURCES = test_mcp_validation.c mcp_harness.c mcp_harness.h
check_LTLIBRARIES += schemaplugins/demanding.la schemaplugins/badoutput.la schemaplugins/badregex.la \
                     schemaplugins/costly.la
schemaplugins_demanding_la_SOURCES = schemaplugins/demanding.c
schemaplugins_demanding_la_LDFLAGS = $(TEST_MODULE_FLAGS)
schemaplugins_badoutput_la_SOURCES = schemaplugins/badoutput.c
schemaplugins_badoutput_la_LDFLAGS = $(TEST_MODULE_FLAGS)
schemaplugins_badregex_la_SOURCES = schemaplugins/badregex.c
schemaplugins_badregex_la_LDFLAGS = $(TEST_MODULE_FLAGS)
schemaplugins_costly_la_SOURCES = schemaplugins/costly.c
schemaplugins_costly_la_LDFLAGS = $(TEST_MODULE_FLAGS)
