# tests/registry.mk: the registry tests (included by tests/Makefile.am):
# the register_tool scenarios and the ToolRegistry unit tests of the
# registry rules (doc/registry-rules.md).
check_PROGRAMS += test_register_tool test_registry
TESTS += test_register_tool test_registry
test_register_tool_SOURCES = test_register_tool.c
test_registry_SOURCES = test_registry.c
