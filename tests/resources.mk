# tests/resources.mk: the resource tests (included by tests/Makefile.am): the
# registry rules and the methods in-process (test_resources), and the real
# toolhost serving resplugins/ and the bundled files plugin in both isolation
# modes and both eras (test_mcp_resources).
check_PROGRAMS += test_resources test_mcp_resources
TESTS += test_resources test_mcp_resources
test_resources_SOURCES = test_resources.c
test_mcp_resources_SOURCES = test_mcp_resources.c $(MCP_HARNESS)

check_LTLIBRARIES += resplugins/resfix.la resplugins/resrefused.la
resplugins_resfix_la_SOURCES = resplugins/resfix.c
resplugins_resfix_la_LDFLAGS = $(TEST_MODULE_FLAGS)
resplugins_resrefused_la_SOURCES = resplugins/resrefused.c
resplugins_resrefused_la_LDFLAGS = $(TEST_MODULE_FLAGS)
