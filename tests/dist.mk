# tests/dist.mk: what the project publishes beside the binary (included by
# tests/Makefile.am): server.json for the MCP Registry, checked against the
# registry's schema (mcp-registry/) and configure.ac's version.
TESTS += test_server_json
check_PROGRAMS += test_server_json
test_server_json_SOURCES = test_server_json.c
EXTRA_DIST += dist.mk mcp-registry/README.md mcp-registry/server-2025-12-11.schema.json
# The systemd units as installed, through systemd-analyze verify.
TESTS += authors/systemd-units.sh
EXTRA_DIST += authors/systemd-units.sh
# The shell completions generated from the option table (src/gencompletion.c).
TESTS += authors/completion.sh
EXTRA_DIST += authors/completion.sh
