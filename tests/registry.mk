# tests/registry.mk: the registry tests (included by tests/Makefile.am).
