# tests/fuzz.mk: the mutation test of the MCP layer (included by
# tests/Makefile.am): tens of thousands of mutated messages of both eras fed
# in process to sessions serving the bundled plugins, every reply checked;
# and a check that the libFuzzer harnesses of `make fuzz` still compile.
check_PROGRAMS += test_mcp_fuzz
TESTS += test_mcp_fuzz
test_mcp_fuzz_SOURCES = test_mcp_fuzz.c
# The libFuzzer harnesses of fuzz/ still compile (fuzz-harnesses.sh).
TESTS += fuzz-harnesses.sh
EXTRA_DIST += fuzz-harnesses.sh
AM_TESTS_ENVIRONMENT = FUZZ_CFLAGS='$(JSONC_CFLAGS) $(FFI_CFLAGS) $(PCRE2_CFLAGS) $(SECCOMP_CFLAGS)'; export FUZZ_CFLAGS;
