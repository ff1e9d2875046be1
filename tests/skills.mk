# tests/skills.mk: the skills extension's tests (included by tests/Makefile.am):
# the frontmatter subset, the skill rules and the methods in-process
# (test_skills), and the real toolhost serving the conformance fixture and the
# bundled skills plugin in both isolation modes (test_mcp_skills).
check_PROGRAMS += test_skills
TESTS += test_skills
test_skills_SOURCES = test_skills.c
check_PROGRAMS += test_mcp_skills
TESTS += test_mcp_skills
test_mcp_skills_SOURCES = test_mcp_skills.c $(MCP_HARNESS)
