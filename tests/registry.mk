# tests/registry.mk: the registry tests (included by tests/Makefile.am):
# seed 000's register_tool scenarios and seed 001's ToolRegistry tests.
check_PROGRAMS += test_register_tool test_registry
TESTS += test_register_tool test_registry
test_register_tool_SOURCES = test_register_tool.c
test_registry_SOURCES = test_registry.c
