# mk/portable.mk — one file to copy to a lab machine, and the data files it carries.
#
#   make portable        $(BUILD)/fencebench-portable: the objects of $(BUILD)/fencebench
#                        (no second compile), linked with liburcu, jemalloc, libpfm4,
#                        libnuma and jansson statically and libgcc statically; glibc
#                        stays dynamic (libc, libm, libpthread, libdl, the loader), and
#                        the GPU drivers (libcuda, libvulkan) are opened at run time, as
#                        in every build.  It runs on an x86-64 Linux with glibc
#                        $(PORTABLE_GLIBC_MAX) or newer and none of the project's packages.
#   make check-portable  scripts/check-portable.sh (part of `make test`): ldd names only
#                        glibc's parts, the newest GLIBC_x.y it needs is at most
#                        PORTABLE_GLIBC_MAX (the figure docs/comparing.md states), and the
#                        binary copied alone into an empty folder runs list, help, a
#                        scenario under a shipped profile and the shipped replay file.
#                        The same library check must refuse $(BUILD)/fencebench (linked
#                        against the shared libraries): the check can fail.
#
# The shipped data files (benchmarks/profiles/*.json, benchmarks/workloads/*.json)
# are compiled into every binary (benchmarks/embedded.h) so the one copied file
# finds them: scripts/embed-files.py writes $(BUILD)/gen/embedded_files.c on every
# make, but rewrites it only when a file or the list changed (so nothing relinks
# otherwise); its object joins libbenchmarks.a.  The files stay the source.
# Sanitizer builds (SANITIZER=...) link the runtimes dynamically: no portable check.

PORTABLE        = $(BUILD)/fencebench-portable
PORTABLE_STATIC = urcu-cds urcu urcu-common jemalloc pfm numa jansson
PORTABLE_LDLIBS = -static-libgcc -Wl,--start-group $(PORTABLE_STATIC:%=-l:lib%.a) -Wl,--end-group \
                  -lpthread -lm -ldl
PORTABLE_GLIBC_MAX = 2.35

EMBED_FILES = $(sort $(wildcard benchmarks/profiles/*.json benchmarks/workloads/*.json))
EMBED_C     = $(BUILD)/gen/embedded_files.c
EMBED_O     = $(BUILD)/gen/embedded_files.o

.PHONY: portable check-portable embed-check
TEST_DEPS += $(if $(SANITIZER),,check-portable)

$(EMBED_C): embed-check
	@$(PYTHON) scripts/embed-files.py $@ $(EMBED_FILES)
$(EMBED_O): $(EMBED_C) | $(DEPS_STAMP)
	$(CC) $(ALL_CFLAGS) -c $< -o $@
$(LIB_BENCHMARKS): $(EMBED_O)

portable: $(PORTABLE)

$(PORTABLE): $(BUILD)/benchmarks/main.o $(LIB)
	$(CC) $(ALL_LDFLAGS) $^ $(PORTABLE_LDLIBS) -o $@

check-portable: $(PORTABLE) $(FENCEBENCH)
	@scripts/check-portable.sh $(PORTABLE) $(PORTABLE_GLIBC_MAX)
	@if scripts/check-portable.sh --libs-only $(FENCEBENCH) >/dev/null 2>&1; then \
	   echo "check-portable: FAILED: the library check accepted $(FENCEBENCH), a dynamic build"; exit 1; fi
