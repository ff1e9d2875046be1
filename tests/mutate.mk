# tests/mutate.mk: the list of `make mutate` (scripts/mutate.sh) against the
# sources: each snippet a mutation replaces is still there, once. The run
# itself is not part of `make check` (it rebuilds the host per mutation).
TESTS += mutate/snippets.sh
EXTRA_DIST += mutate.mk mutate/snippets.sh mutate/mutations
