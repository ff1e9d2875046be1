# tests/typed.mk: the typed tests (included by tests/Makefile.am).
