# tests/fuzz.mk: the mutation test of the MCP layer (included by
# tests/Makefile.am): tens of thousands of mutated messages of both eras fed
# in process to sessions serving the bundled plugins, every reply checked.
check_PROGRAMS += test_mcp_fuzz
TESTS += test_mcp_fuzz
test_mcp_fuzz_SOURCES = test_mcp_fuzz.c
