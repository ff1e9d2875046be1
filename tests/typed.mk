# tests/typed.mk: the typed-function tests (included by tests/Makefile.am):
# generated schemas and registration refusals, argument conversion and
# errors, and the calling convention with many mixed parameters. The bundled
# typed plugins (add, text) are tested with the test kit (testing.mk).
check_PROGRAMS += test_typed_schema test_typed_call test_typed_abi
TESTS += test_typed_schema test_typed_call test_typed_abi
test_typed_schema_SOURCES = test_typed_schema.c typed/helpers.h
test_typed_call_SOURCES = test_typed_call.c typed/helpers.h
test_typed_abi_SOURCES = test_typed_abi.c typed/helpers.h

# Typed tools' limits: constraints, user_data, base64 (unit tests and
# the spawned host in both isolation modes with typedplugins/limits.c).
check_PROGRAMS += test_typed_limits
TESTS += test_typed_limits
test_typed_limits_SOURCES = test_typed_limits.c typed/helpers.h $(MCP_HARNESS)
check_LTLIBRARIES += typedplugins/limits.la
typedplugins_limits_la_SOURCES = typedplugins/limits.c
typedplugins_limits_la_LDFLAGS = $(TEST_MODULE_FLAGS)
