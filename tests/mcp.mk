# tests/mcp.mk: the mcp tests (included by tests/Makefile.am).
