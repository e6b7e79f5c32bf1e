# sandlock-oci — see README.md and docs/architecture.md.
#
# Sources are found by wildcard so a new file in a folder needs no edit here:
# every folder's *.c goes into the binary; oci/main.c is the only entry
# point; tests/unit/test_*.c are unit tests linked against the same objects
# built a second time with sanitizers.

PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
DESTDIR ?=
CC ?= gcc
VERSION := 0.1.0

CFLAGS ?= -O2 -g
WARN := -std=gnu11 -Wall -Wextra -Werror -Wshadow -Wmissing-prototypes \
        -Wformat=2 -Wno-format-nonliteral -Wswitch-default -Wno-unused-parameter
CPPFLAGS += -D_GNU_SOURCE -DSANDLOCK_VERSION='"$(VERSION)"' -I.
PKGS := libseccomp yajl libcap libarchive libcurl openssl libzstd
LIBS := $(shell pkg-config --libs $(PKGS) 2>/dev/null || echo -lseccomp -lyajl -lcap -larchive -lcurl -lssl -lcrypto -lzstd) -lpthread
# libarchive's tar reader is linked in from libarchive.a when the -dev
# package has it (Debian's does): that part of it needs nothing but libc,
# while libarchive.so.13 drags libxml2, ICU and libstdc++ in, ~3 ms of
# dynamic loading on every pull (docs/image.md).  ARCHIVE_LINK=shared
# dlopens the system's libarchive instead, as the other image libraries
# are; a static build must be rebuilt when libarchive gets a security fix.
ARCHIVE_A := $(shell $(CC) -print-file-name=libarchive.a)
ARCHIVE_LINK ?= $(if $(filter /%,$(ARCHIVE_A)),static,shared)
UNIT_LIBS = $(LIBS)
ifeq ($(ARCHIVE_LINK),static)
CPPFLAGS += -DIMG_ARCHIVE_STATIC=1
LIBS := $(filter-out -larchive,$(LIBS)) $(ARCHIVE_A)
# The unit tests also build gzip/zstd tars with libarchive's writers, whose
# static objects want the whole compressor set: they link the shared one.
UNIT_LIBS = $(filter-out $(ARCHIVE_A),$(LIBS)) -larchive
endif

B := build
LIB_SRC := $(wildcard common/*.c runtime/*.c image/*.c cow/*.c criu-lite/*.c) \
           $(filter-out oci/main.c,$(wildcard oci/*.c))
LIB_OBJ := $(LIB_SRC:%.c=$(B)/obj/%.o)
ASAN_OBJ := $(LIB_SRC:%.c=$(B)/asan/%.o)
UNIT_SRC := $(wildcard tests/unit/test_*.c)
UNIT_BIN := $(UNIT_SRC:tests/unit/%.c=$(B)/unit/%)
# tests/helpers/rt-*.c drive the runtime's C API (linked with its objects,
# not copied into root filesystems); the others are static helpers.
HELPER_SRC := $(filter-out tests/helpers/rt-%.c,$(wildcard tests/helpers/*.c))
HELPER_BIN := $(HELPER_SRC:tests/helpers/%.c=$(B)/helpers/%)
RT_HELPER_SRC := $(wildcard tests/helpers/rt-*.c)
RT_HELPER_BIN := $(RT_HELPER_SRC:tests/helpers/%.c=$(B)/rt-helpers/%)
# SANDLOCK_DEBUG: assertions of the error contract (common/err.c).
ASAN := -fsanitize=address,undefined -fno-omit-frame-pointer -DSANDLOCK_DEBUG

all: sandlock-oci

# libcurl, openssl, libzstd and libarchive are in $(LIBS) for the unit tests,
# but the binary reaches them through dlopen (image/dl.c) when it pulls: said
# explicitly rather than left to the toolchain's default (Debian's gcc
# passes --as-needed, others do not), so that `create`, `start` and `state`
# load none of them (tests/integration/build.bats checks the binary).
LINK_AS_NEEDED := -Wl,--as-needed

sandlock-oci: $(LIB_OBJ) $(B)/obj/oci/main.o
	$(CC) $(CFLAGS) $(LDFLAGS) $(LINK_AS_NEEDED) -o $@ $^ $(LIBS)

$(B)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(WARN) $(CFLAGS) -MMD -MP -c -o $@ $<

$(B)/asan/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(WARN) -O1 -g $(ASAN) -MMD -MP -c -o $@ $<

$(B)/unit/%: tests/unit/%.c $(ASAN_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(WARN) -O1 -g $(ASAN) -o $@ $< $(ASAN_OBJ) $(UNIT_LIBS)

# Static helpers copied into test root filesystems (raw syscalls, receivers).
$(B)/helpers/%: tests/helpers/%.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(WARN) -O2 -static -o $@ $<

$(B)/rt-helpers/%: tests/helpers/%.c $(LIB_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(WARN) $(CFLAGS) -o $@ $< $(LIB_OBJ) $(LIBS)

unit: $(UNIT_BIN)
helpers: $(HELPER_BIN) $(RT_HELPER_BIN)

# Fuzz targets: every tests/fuzz/fuzz_*.c, twice.  build/fuzz/NAME is the
# libFuzzer binary (clang -fsanitize=fuzzer,address,undefined over the
# library built again with coverage), made only where clang and its
# libFuzzer runtime (Debian: libclang-rt-14-dev) link; build/fuzz-seeds/NAME
# is the same target behind tests/fuzz/driver.c's main(), built with $(CC)
# and ASan+UBSan, which runs the seeds anywhere.  `make fuzz` fuzzes each
# for FUZZ_SECONDS; `make check` runs a short fixed number of inputs
# (tests/fuzz/run.sh, docs/architecture.md "Tests").
FUZZ_CC ?= clang
FUZZ_SECONDS ?= 60
FUZZ_SRC := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_BIN := $(FUZZ_SRC:tests/fuzz/%.c=$(B)/fuzz/%)
FUZZ_DRV := $(FUZZ_SRC:tests/fuzz/%.c=$(B)/fuzz-seeds/%)
FUZZ_OBJ := $(LIB_SRC:%.c=$(B)/fuzzobj/%.o)
FUZZ_SAN := -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined \
            -DSANDLOCK_DEBUG
# Deferred: probed only when a fuzz recipe asks.
FUZZ_OK = $(shell printf 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { return 0; }' \
  | $(FUZZ_CC) -x c -fsanitize=fuzzer,address,undefined -o /dev/null - 2>/dev/null && echo yes)

$(B)/fuzzobj/%.o: %.c
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(CPPFLAGS) $(WARN) $(FUZZ_SAN) -fsanitize=fuzzer-no-link -MMD -MP -c -o $@ $<

$(B)/fuzz/%: tests/fuzz/%.c $(FUZZ_OBJ)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(CPPFLAGS) $(WARN) $(FUZZ_SAN) -fsanitize=fuzzer -o $@ $< $(FUZZ_OBJ) $(UNIT_LIBS)

$(B)/fuzz-seeds/%: tests/fuzz/%.c tests/fuzz/driver.c $(ASAN_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(WARN) -O1 -g $(ASAN) -o $@ $< tests/fuzz/driver.c $(ASAN_OBJ) $(UNIT_LIBS)

fuzzers: $(FUZZ_DRV)
	@$(if $(FUZZ_OK),$(MAKE) --no-print-directory $(FUZZ_BIN),echo "fuzzers: $(FUZZ_CC) cannot link -fsanitize=fuzzer (Debian: clang libclang-rt-14-dev): only the seed drivers are built")

fuzz: fuzzers
	@FUZZ_SECONDS=$(FUZZ_SECONDS) tests/fuzz/run.sh

# Installs what the build and the tests need on a fresh Debian machine.
deps:
	@tests/lib/deps.sh

# The main job on a fresh machine: a busybox container from Debian's
# busybox-static, run by the freshly built runtime.
demo:
	@tests/lib/deps.sh build
	@$(MAKE) --no-print-directory sandlock-oci
	@tests/lib/demo.sh

# `check` runs the three sets in one tests/run.sh, so that it still ends
# with one "N passed, M failed" line; each set also runs on its own:
# check-unit (C unit tests and fuzz seeds, no root), check-root (the
# runtime's bats files; they skip without root), check-engines (podman,
# containerd and docker driving the runtime).
check:
	@tests/lib/deps.sh
	@$(MAKE) --no-print-directory sandlock-oci unit helpers fuzzers
	@tests/run.sh

check-unit:
	@$(MAKE) --no-print-directory unit fuzzers
	@SUITES=unit tests/run.sh

check-root check-engines:
	@tests/lib/deps.sh
	@$(MAKE) --no-print-directory sandlock-oci helpers
	@SUITES=$(@:check-%=%) tests/run.sh

bench:
	@tests/lib/deps.sh
	@$(MAKE) --no-print-directory sandlock-oci helpers
	@tests/bench/run.sh

install: sandlock-oci
	install -D -m 0755 sandlock-oci $(DESTDIR)$(BINDIR)/sandlock-oci
	install -D -m 0644 contrib/completion/sandlock-oci.bash \
	  $(DESTDIR)$(PREFIX)/share/bash-completion/completions/sandlock-oci 2>/dev/null || true
	ln -sf sandlock-oci $(DESTDIR)$(BINDIR)/sandlock-oci-privileged
	install -D -m 0644 contrib/sandlock-oci/privileged.json \
	  $(DESTDIR)/etc/sandlock-oci/privileged.json

lint:
	cppcheck --quiet --error-exitcode=1 --enable=warning,performance,portability \
	  --suppress=missingIncludeSystem -I. $(LIB_SRC) oci/main.c

clean:
	rm -rf $(B) sandlock-oci

.PHONY: all unit helpers fuzzers fuzz deps demo check check-unit check-root \
        check-engines bench install lint clean
# Objects reached only through pattern rules would be deleted as
# intermediates, and every unit test or fuzz target relinked from scratch.
.SECONDARY: $(ASAN_OBJ) $(FUZZ_OBJ)
-include $(LIB_OBJ:.o=.d) $(ASAN_OBJ:.o=.d) $(FUZZ_OBJ:.o=.d) $(B)/obj/oci/main.d
