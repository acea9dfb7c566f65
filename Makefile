# symcomm build. Everything lands under $(BUILD) (build/ by default):
#   lib/libsymcomm.so, lib/libsymcomm.a, bin/ (tools), examples/, tests/
# `make SAN=1 BUILD=build-san` gives the AddressSanitizer + UBSan build that
# `make test` also runs.

BUILD ?= build
SAN ?= 0
V ?= 0
Q := $(if $(filter 1,$(V)),,@)
PREFIX ?= /usr/local
CC ?= cc

CFLAGS_COMMON := -std=gnu11 -D_GNU_SOURCE -g -O2 -fPIC -pthread -Wall -Wextra -Wshadow -Wstrict-prototypes \
                 -Wno-unused-parameter -Wno-format-truncation -Werror -Iinclude -Isrc -MMD -MP
LDLIBS := -pthread -lm
ifeq ($(SAN),1)
  CFLAGS_COMMON += -O1 -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
  LDFLAGS += -fsanitize=address,undefined
endif
CFLAGS_ALL := $(CFLAGS_COMMON) $(CFLAGS)
# Tests also see their shared helpers.
$(BUILD)/obj/tests/%.o: CFLAGS_ALL += -Itests/common

# The library: every layer of src/ (each a folder; see DESIGN.md).
LIB_DIRS := src/util src/bootstrap src/topo src/device src/backend src/backend/host src/window \
            src/transport src/coll src/core
LIB_SRCS := $(sort $(foreach d,$(LIB_DIRS),$(wildcard $(d)/*.c)))
LIB_OBJS := $(LIB_SRCS:%.c=$(BUILD)/obj/%.o)

# Tools: one folder each under tools/, built from every .c in it; tools/common/
# holds what they share with each other and with bench/.
TOOLS := $(notdir $(wildcard tools/symcomm-*))
TOOL_BINS := $(TOOLS:%=$(BUILD)/bin/%)

EXAMPLE_SRCS := $(wildcard examples/*.c)
EXAMPLE_BINS := $(EXAMPLE_SRCS:examples/%.c=$(BUILD)/examples/%)

# Tests: unit tests see the library's insides (static library); multi-process
# tests are ordinary programs that use the public API.
UNIT_SRCS := $(wildcard tests/unit/*.c)
UNIT_BINS := $(UNIT_SRCS:tests/unit/%.c=$(BUILD)/tests/unit/%)
MP_SRCS := $(wildcard tests/mp/*.c)
MP_BINS := $(MP_SRCS:tests/mp/%.c=$(BUILD)/tests/mp/%)
TEST_COMMON := $(wildcard tests/common/*.c)
TEST_COMMON_OBJ := $(TEST_COMMON:%.c=$(BUILD)/obj/%.o)

SHLIB := $(BUILD)/lib/libsymcomm.so
STLIB := $(BUILD)/lib/libsymcomm.a
RPATH := -Wl,-rpath,'$$ORIGIN/../lib'

.PHONY: all lib tools examples tests run test check test-san mutation install clean help
# Objects of tools are built through a pattern rule; keep them (no rebuilds).
.SECONDARY:
.DEFAULT_GOAL := all

all: lib tools examples

lib: $(SHLIB) $(STLIB)
tools: $(TOOL_BINS)
examples: $(EXAMPLE_BINS)
tests: all $(UNIT_BINS) $(MP_BINS)

$(BUILD)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(CFLAGS_ALL) -c $< -o $@

$(SHLIB): $(LIB_OBJS)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) -shared -Wl,-soname,libsymcomm.so.0 $(LDFLAGS) -o $@ $^ $(LDLIBS)
	$(Q)ln -sf libsymcomm.so $(BUILD)/lib/libsymcomm.so.0

$(STLIB): $(LIB_OBJS)
	@mkdir -p $(dir $@)
	$(Q)rm -f $@
	@$(if $(Q),echo "  LD      $@")
	$(Q)ar rcs $@ $^

# A tool is every .c file in its folder, linked to what it uses of
# tools/common/ and to the shared library.
tool_objs = $(patsubst %.c,$(BUILD)/obj/%.o,$(wildcard tools/$(1)/*.c))
TOOLS_COMMON := $(BUILD)/obj/tools/common/libcommon.a
$(TOOLS_COMMON): $(patsubst %.c,$(BUILD)/obj/%.o,$(wildcard tools/common/*.c))
	@$(if $(Q),echo "  AR      $@")
	$(Q)ar rcs $@ $^
.SECONDEXPANSION:
$(BUILD)/bin/%: $$(call tool_objs,$$*) $(TOOLS_COMMON) $(SHLIB)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS) $(RPATH) -o $@ $(filter %.o,$^) $(TOOLS_COMMON) -L$(BUILD)/lib -lsymcomm $(LDLIBS)

$(BUILD)/examples/%: $(BUILD)/obj/examples/%.o $(SHLIB)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS) $(RPATH) -o $@ $< -L$(BUILD)/lib -lsymcomm $(LDLIBS)

$(BUILD)/tests/unit/%: $(BUILD)/obj/tests/unit/%.o $(TEST_COMMON_OBJ) $(STLIB)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS) -o $@ $< $(TEST_COMMON_OBJ) $(STLIB) $(LDLIBS)

$(BUILD)/tests/mp/%: $(BUILD)/obj/tests/mp/%.o $(TEST_COMMON_OBJ) $(SHLIB)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS) -Wl,-rpath,'$$ORIGIN/../../lib' -o $@ $< $(TEST_COMMON_OBJ) -L$(BUILD)/lib -lsymcomm $(LDLIBS)

# The main demo: the topology and TP/DP communicators of 8 ranks on 2
# simulated hosts, then every collective in every type from 8 B to 4 MiB on 8
# ranks of one simulated host, each result checked (collectives between hosts
# arrive with the TCP transport).
run: all
	$(BUILD)/bin/symcomm-run -n 8 --hosts 2 --timeout 60 -- $(BUILD)/bin/symcomm-topo
	$(BUILD)/bin/symcomm-run -n 8 --hosts 2 --timeout 60 -- $(BUILD)/examples/tp_dp
	$(BUILD)/bin/symcomm-run -n 8 --timeout 600 -- $(BUILD)/bin/symcomm-perf -o all -d all -b 8 -e 4M -f 4 -n 5 -w 1 -c 1

# The suite on this build only.
check: tests
	bash tests/run.sh $(BUILD)

# The suite under AddressSanitizer + UndefinedBehaviorSanitizer.
test-san:
	$(MAKE) BUILD=build-san SAN=1 check

# What CI runs: the plain suite, then the sanitized one.
test: check
	$(MAKE) test-san

# Plants deliberate protocol bugs (tests/mutation/mutations.txt), each in a
# copy of the tree, and checks that the suite catches every one. On demand,
# not part of `make test`: it builds once per bug.
mutation:
	bash tests/mutation/run.sh

install: all
	install -d $(DESTDIR)$(PREFIX)/include $(DESTDIR)$(PREFIX)/lib/pkgconfig $(DESTDIR)$(PREFIX)/bin
	install -m 644 include/symcomm.h $(DESTDIR)$(PREFIX)/include/
	install -m 755 $(SHLIB) $(DESTDIR)$(PREFIX)/lib/libsymcomm.so.0
	ln -sf libsymcomm.so.0 $(DESTDIR)$(PREFIX)/lib/libsymcomm.so
	install -m 644 $(STLIB) $(DESTDIR)$(PREFIX)/lib/
	# The tools find the library through their rpath, $$ORIGIN/../lib.
	install -m 755 $(TOOL_BINS) $(DESTDIR)$(PREFIX)/bin/
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@VERSION@|$(shell sed -n 's/^#define SYMCOMM_VERSION_\(MAJOR\|MINOR\|PATCH\) //p' include/symcomm.h | paste -sd.)|' \
	  symcomm.pc.in > $(DESTDIR)$(PREFIX)/lib/pkgconfig/symcomm.pc

clean:
	rm -rf build build-san

help:
	@echo "make            build library, tools and examples into $(BUILD)/"
	@echo "make run        the demo: 8 ranks on 2 simulated hosts"
	@echo "make test       the whole suite, plain and under ASan+UBSan"
	@echo "make check      the suite on this build only"
	@echo "make mutation   plant protocol bugs in copies of the tree; the suite must catch each"
	@echo "make install PREFIX=/path"

-include $(shell find $(BUILD)/obj -name '*.d' 2>/dev/null)
