# tests/prompts.mk: the prompt and completion tests (included by
# tests/Makefile.am): the registry rules in-process (test_prompts), and the
# real toolhost serving promptplugins/ and the bundled prompts plugin in
# both isolation modes and both eras (test_mcp_prompts).
check_PROGRAMS += test_prompts test_mcp_prompts
TESTS += test_prompts test_mcp_prompts
test_prompts_SOURCES = test_prompts.c
test_mcp_prompts_SOURCES = test_mcp_prompts.c $(MCP_HARNESS)

check_LTLIBRARIES += promptplugins/promptfix.la promptplugins/promptlate.la
promptplugins_promptfix_la_SOURCES = promptplugins/promptfix.c
promptplugins_promptfix_la_LDFLAGS = $(TEST_MODULE_FLAGS)
promptplugins_promptlate_la_SOURCES = promptplugins/promptlate.c
promptplugins_promptlate_la_LDFLAGS = $(TEST_MODULE_FLAGS)
