# tests/container.mk: the OCI image of contrib/container, built with podman
# from an mmdebstrap root filesystem and served over HTTP and stdio
# (container/image.sh; it skips without podman, mmdebstrap and curl).
if TH_CONTAINER_TESTS
TESTS += container/image.sh
endif
CLEANFILES = container/bookworm-minbase.tar
EXTRA_DIST += container.mk container/image.sh
