# symcomm build. Everything lands under $(BUILD) (build/ by default):
#   lib/libsymcomm.so, lib/libsymcomm.a, bin/ (tools), examples/, tests/
# `make SAN=1 BUILD=build-san` gives the AddressSanitizer + UBSan build and
# `make SAN=thread BUILD=build-tsan` the ThreadSanitizer build that `make test`
# also runs. Where nvcc is found (PATH, else /usr/local/cuda/bin), the plain
# build adds lib/libsymcomm_cuda.so, the CUDA backend (see below).

BUILD ?= build
SAN ?= 0
V ?= 0
Q := $(if $(filter 1,$(V)),,@)
PREFIX ?= /usr/local
CC ?= cc

CFLAGS_COMMON := -std=gnu11 -D_GNU_SOURCE -g -O2 -fPIC -pthread -Wall -Wextra -Wshadow -Wstrict-prototypes \
                 -Wno-unused-parameter -Wno-format-truncation -Werror -Iinclude -MMD -MP
LDLIBS := -pthread -lm -ldl
ifeq ($(SAN),1)
  CFLAGS_COMMON += -O1 -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
  LDFLAGS += -fsanitize=address,undefined
endif
ifeq ($(SAN),thread)
  CFLAGS_COMMON += -O1 -fsanitize=thread -fno-omit-frame-pointer
  LDFLAGS += -fsanitize=thread
endif
CFLAGS_ALL := $(CFLAGS_COMMON) $(CFLAGS)
# Only the library and its unit tests see src/; tools, examples, bench/ and
# multi-process tests get the public header alone. The library exports only
# what include/symcomm.h marks SYMCOMM_API.
$(BUILD)/obj/src/%.o: CFLAGS_ALL += -Isrc -fvisibility=hidden
$(BUILD)/obj/tests/unit/%.o: CFLAGS_ALL += -Isrc
# Tests also see their shared helpers.
$(BUILD)/obj/tests/%.o: CFLAGS_ALL += -Itests/common

# The library: every layer of src/ (each a folder; see docs/ARCHITECTURE.md).
LIB_DIRS := src/util src/bootstrap src/topo src/device src/backend src/backend/host src/window \
            src/transport src/transport/net src/coll src/core
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
# GPU-only tests (tests/gpu/test_*.c): built everywhere, run by tests/gpu/run.sh.
GPU_TEST_SRCS := $(wildcard tests/gpu/test_*.c)
GPU_TEST_BINS := $(GPU_TEST_SRCS:tests/gpu/%.c=$(BUILD)/tests/gpu/%)
TEST_COMMON := $(wildcard tests/common/*.c)
TEST_COMMON_OBJ := $(TEST_COMMON:%.c=$(BUILD)/obj/%.o)

SHLIB := $(BUILD)/lib/libsymcomm.so
STLIB := $(BUILD)/lib/libsymcomm.a
RPATH := -Wl,-rpath,'$$ORIGIN/../lib'

# The CUDA backend: libsymcomm_cuda.so, which libsymcomm.so loads with dlopen
# when SYMCOMM_BACKEND picks CUDA (src/backend/backend_select.c). Its host
# side is plain C (cc, with cuda.h for types only: nothing links libcuda or
# libcudart); its kernels are compiled by nvcc, a fatbin (Hopper code plus
# PTX for later GPUs) per file of src/backend/cuda/kernels/, which the object
# embeds (a change to one device program rebuilds its file only; the files
# build in parallel). Only the plain build makes
# it: the sanitizer builds reuse nothing of it and run without a CUDA backend
# (SYMCOMM_CUDA_BACKEND_PATH may name the plain build's). Without nvcc the
# build says so and goes on without it (SYMCOMM_BACKEND=auto then uses host).
NVCC ?= $(firstword $(shell command -v nvcc 2>/dev/null) $(wildcard /usr/local/cuda/bin/nvcc))
CUDA_HOME ?= $(patsubst %/bin/nvcc,%,$(NVCC))
# Compressed fatbins: libsymcomm_cuda.so 3.7 MB instead of 13 (the driver
# inflates a module when it loads it, once per device).
NVCC_FLAGS := -std=c++17 -O3 -Werror all-warnings -Isrc -Iinclude -Xfatbin=-compress-all \
              -gencode arch=compute_90,code=sm_90 -gencode arch=compute_90,code=compute_90
CUDA_LIB := $(BUILD)/lib/libsymcomm_cuda.so
CUDA_KERNEL_NAMES := $(patsubst src/backend/cuda/kernels/%.cu,%,$(wildcard src/backend/cuda/kernels/*.cu))
CUDA_FATBINS := $(CUDA_KERNEL_NAMES:%=$(BUILD)/obj/src/backend/cuda/kernels/%.fatbin)
# What the backend shares with the library is compiled into it again: pure
# functions (sentences of device errors, their result codes), no state.
CUDA_OBJS := $(patsubst %.c,$(BUILD)/obj/%.o,$(wildcard src/backend/cuda/*.c) src/device/describe.c \
               src/backend/dev_result.c) $(CUDA_FATBINS:%=%.o)
ifneq ($(NVCC),)
ifeq ($(SAN),0)
CUDA_TARGET := $(CUDA_LIB)
endif
endif
$(BUILD)/obj/src/backend/cuda/%.o: CFLAGS_ALL += -isystem $(CUDA_HOME)/include

.PHONY: cuda-note nccl-note test-gpu all lib tools examples tests run test check test-san test-tsan mutation install uninstall clean help
# Objects of tools are built through a pattern rule; keep them (no rebuilds).
.SECONDARY:
.DEFAULT_GOAL := all

all: lib tools examples

lib: $(SHLIB) $(STLIB) $(if $(CUDA_TARGET),$(CUDA_TARGET),cuda-note)
tools: $(TOOL_BINS)
examples: $(EXAMPLE_BINS)
# A stand-in libnvidia-ml.so.1 for tests of topology from NVML without a driver.
FAKE_NVML := $(BUILD)/tests/fake_nvml/libnvidia-ml.so.1
tests: all $(UNIT_BINS) $(MP_BINS) $(GPU_TEST_BINS) $(FAKE_NVML)

# The Makefile holds the flags: a build made before a change of them is
# rebuilt, not linked with objects of the old flags.
$(BUILD)/obj/%.o: %.c Makefile
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(CFLAGS_ALL) -c $< -o $@

$(SHLIB): $(LIB_OBJS)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) -shared -Wl,-soname,libsymcomm.so.0 $(LDFLAGS) -o $@ $^ $(LDLIBS)
	$(Q)ln -sf libsymcomm.so $(BUILD)/lib/libsymcomm.so.0

$(BUILD)/obj/src/backend/cuda/kernels/%.fatbin: src/backend/cuda/kernels/%.cu Makefile
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  NVCC    $<")
	$(Q)$(NVCC) $(NVCC_FLAGS) -fatbin -MMD -MF $@.d -o $@ $<

$(BUILD)/obj/src/backend/cuda/kernels/%.fatbin.o: $(BUILD)/obj/src/backend/cuda/kernels/%.fatbin \
                                                  src/backend/cuda/cuda_fatbin.S
	@$(if $(Q),echo "  AS      $<")
	$(Q)$(CC) -c -DSC_CUDA_FATBIN_PATH='"$<"' -DSC_CUDA_FATBIN_NAME=sc_cuda_fatbin_$* \
	  -o $@ src/backend/cuda/cuda_fatbin.S

# The module loader learns the fatbins' names from the build (one per kernel file).
$(BUILD)/obj/src/backend/cuda/cuda_module.o: $(CUDA_FATBINS:%=%.o)
$(BUILD)/obj/src/backend/cuda/cuda_module.o: CFLAGS_ALL += \
  -DSC_CUDA_FATBINS='$(foreach k,$(CUDA_KERNEL_NAMES),SC_CUDA_FATBIN($(k)))'

# -z defs: everything it uses of libsymcomm comes through its entry's services.
$(CUDA_LIB): $(CUDA_OBJS)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) -shared -Wl,-soname,libsymcomm_cuda.so -Wl,-z,defs $(LDFLAGS) -o $@ $^ -pthread -ldl

# The program table on the CPU (tests/scripts/test_cuda_kernel_names.sh):
# cuda_programs.c compiled into the test itself, with cuda.h for its types:
# built wherever nvcc is, the sanitizer builds too (they have no backend,
# but the table is plain C and worth running under them).
CUDA_PROGRAMS_TEST := $(BUILD)/tests/cuda_host/test_cuda_programs
ifneq ($(NVCC),)
tests: $(CUDA_PROGRAMS_TEST)
endif
$(CUDA_PROGRAMS_TEST): tests/cuda_host/test_cuda_programs.c src/backend/cuda/cuda_programs.c Makefile
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	@mkdir -p $(BUILD)/obj/tests/cuda_host
	$(Q)$(CC) $(CFLAGS_ALL) -MF $(BUILD)/obj/tests/cuda_host/test_cuda_programs.d -Isrc \
	  -isystem $(CUDA_HOME)/include $(LDFLAGS) -o $@ $<

# test_gpu_bulk (tests/gpu/run.sh): the host reference is device/reduce.h;
# its kernel, gpu_bulk_kernels.cu, is a fatbin of its own that it loads.
GPU_BULK_FATBIN := $(BUILD)/obj/tests/gpu/gpu_bulk_kernels.fatbin
$(BUILD)/obj/tests/gpu/test_gpu_bulk.o: CFLAGS_ALL += -Isrc
ifneq ($(CUDA_TARGET),)
tests: $(GPU_BULK_FATBIN)
endif
$(GPU_BULK_FATBIN): tests/gpu/gpu_bulk_kernels.cu Makefile
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  NVCC    $<")
	$(Q)$(NVCC) $(NVCC_FLAGS) -fatbin -MMD -MF $@.d -o $@ $<

# libnccl.so.2 (src/nccl/): NCCL's API over libsymcomm's public one, for
# programs written against nccl.h (README.md, "libnccl.so.2"). It is built
# against the machine's own nccl.h (/usr/include, else the CUDA folder), never
# a copy, so enum values and struct layouts are NCCL's; where there is none the
# build says so, writes the reason into lib/libnccl.skipped (its tests report
# that as SKIP) and goes on without it. Only the ncclXxx calls are exported.
NCCL_H ?= $(firstword $(wildcard /usr/include/nccl.h) $(if $(CUDA_HOME),$(wildcard $(CUDA_HOME)/include/nccl.h)))
# In a folder of its own, so that nothing that looks for NCCL in build/lib (the
# tools' runpath, LD_LIBRARY_PATH=build/lib) takes symcomm's by accident.
NCCL_LIB := $(BUILD)/lib/nccl/libnccl.so.2
NCCL_SKIPPED := $(BUILD)/lib/libnccl.skipped
NCCL_OBJS := $(patsubst %.c,$(BUILD)/obj/%.o,$(wildcard src/nccl/*.c))
NCCL_TEST := $(BUILD)/tests/nccl/test_nccl_shim
# nccl.h includes cuda_runtime.h (types only: nothing links the CUDA runtime).
NCCL_INC := $(if $(filter-out /usr/include/,$(dir $(NCCL_H))),-isystem $(dir $(NCCL_H))) \
            $(if $(CUDA_HOME),-isystem $(CUDA_HOME)/include)
$(BUILD)/obj/src/nccl/%.o $(BUILD)/obj/tests/nccl/%.o: CFLAGS_ALL += $(NCCL_INC)
ifneq ($(NCCL_H),)
lib: $(NCCL_LIB)
tests: $(NCCL_TEST)
else
lib: nccl-note
endif

$(NCCL_LIB): $(NCCL_OBJS) src/nccl/libnccl.map $(SHLIB)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)rm -f $(NCCL_SKIPPED)
	$(Q)$(CC) -shared -Wl,-soname,libnccl.so.2 -Wl,--version-script=src/nccl/libnccl.map $(LDFLAGS) \
	  -Wl,-rpath,'$$ORIGIN/..' -o $@ $(NCCL_OBJS) -L$(BUILD)/lib -lsymcomm -pthread -ldl

# The test is written against nccl.h alone and links libnccl.so.2 only.
$(NCCL_TEST): $(BUILD)/obj/tests/nccl/test_nccl_shim.o $(NCCL_LIB)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS) -Wl,-rpath,'$$ORIGIN/../../lib/nccl' -o $@ $< -L$(BUILD)/lib/nccl -l:libnccl.so.2 -pthread -ldl

nccl-note:
	@mkdir -p $(BUILD)/lib
	@echo "no nccl.h found (/usr/include, $(if $(CUDA_HOME),$(CUDA_HOME)/include,no CUDA folder)): building without libnccl.so.2" | tee $(NCCL_SKIPPED)

cuda-note:
	@$(if $(filter 0,$(SAN)),echo "  (no nvcc found: building without the CUDA backend, libsymcomm_cuda.so; SYMCOMM_BACKEND=auto will use the simulated GPUs)",true)

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

$(FAKE_NVML): tests/fake_nvml/fake_nvml.c Makefile
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(CFLAGS_ALL) -shared -Wl,-soname,libnvidia-ml.so.1 $(LDFLAGS) -o $@ $<

# An old CUDA driver (tests/fake_cuda/): the backend must refuse it by name.
FAKE_CUDA := $(BUILD)/tests/fake_cuda/libcuda.so.1
tests: $(FAKE_CUDA)
$(FAKE_CUDA): tests/fake_cuda/fake_cuda.c Makefile
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(CFLAGS_ALL) -shared -Wl,-soname,libcuda.so.1 $(LDFLAGS) -o $@ $<

$(MP_BINS) $(GPU_TEST_BINS): $(BUILD)/tests/%: $(BUILD)/obj/tests/%.o $(TEST_COMMON_OBJ) $(SHLIB)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS) -Wl,-rpath,'$$ORIGIN/../../lib' -o $@ $< $(TEST_COMMON_OBJ) -L$(BUILD)/lib -lsymcomm $(LDLIBS)

# The demo, one screen: the topology and TP/DP communicators of 8 ranks on 2
# simulated hosts, then an all-reduce sweep on 8 ranks of one simulated host,
# every result checked (collectives between hosts arrive with the TCP
# transport), and the command for the sweep of every collective and type. The
# build's progress lines stay off the screen (errors and warnings do not).
PERF_ALL := $(BUILD)/bin/symcomm-run -n 8 -- $(BUILD)/bin/symcomm-perf -o all -d all -b 8 -e 4M -f 4 -n 5 -w 1 -c 1
run:
	@echo "make all (quietly), then the demo"
	@$(MAKE) --no-print-directory all >/dev/null
	@bash examples/demo.sh $(BUILD)
	@echo "The sweep of every collective and type, 8 B to 4 MiB (a table each): $(PERF_ALL)"

# The suite on this build only, once the tools it needs are there.
check: tests
	bash tests/need_tools.sh
	bash tests/run.sh $(BUILD)

# The suite under AddressSanitizer + UndefinedBehaviorSanitizer.
test-san:
	$(MAKE) BUILD=build-san SAN=1 check

# The threaded tests under ThreadSanitizer: abort racing split and destroy,
# the threads that watch roots, run streams and serve roots; the eager
# message's claim racing its withdrawal; four ranks as threads of one
# process (symcomm-perf --threads), every collective.
TSAN_TESTS := abort_race|perf_threads_4|fault_|leave_|unit_host_streams|unit_host_waits|unit_store|p2p_two_streams|p2p_eager_put|net_engine_|net_threads_|net_p2p_sizes_2h|net_p2p_streams|net_coll_matrix_2x2
test-tsan:
	$(MAKE) BUILD=build-tsan SAN=thread tests
	bash tests/run.sh build-tsan '$(TSAN_TESTS)'

# What CI runs: the plain suite, then the sanitized ones.
test: check
	$(MAKE) test-san
	$(MAKE) test-tsan

# On a host with NVIDIA GPUs: the CUDA backend's checks (tests/gpu/run.sh),
# logs under $$OUT (default $(BUILD)/gpu-logs). Without a GPU it stops at
# once and says so.
test-gpu: tests
	bash tests/gpu/run.sh $(BUILD)

# Plants deliberate protocol bugs (tests/mutation/mutations.txt), each in a
# copy of the tree, and checks that the suite catches every one. On demand,
# not part of `make test`: it builds once per bug.
mutation:
	bash tests/mutation/run.sh

# Installs into $(DESTDIR)$(PREFIX): everything finds the rest through
# $$ORIGIN (the tools' runpath $$ORIGIN/../lib, libsymcomm its CUDA backend
# beside itself, the shim libsymcomm one folder up), so nothing points back
# into the build tree and the tree may be moved. The shim gets a folder of its
# own, never the one where the system's NCCL lives: a program takes it only
# when asked (LD_LIBRARY_PATH or LD_PRELOAD).
NCCL_INSTALL_DIR := lib/symcomm-nccl
INSTALLED := include/symcomm.h lib/libsymcomm.so.0 lib/libsymcomm.so lib/libsymcomm.a \
             lib/libsymcomm_cuda.so lib/pkgconfig/symcomm.pc $(TOOLS:%=bin/%) $(NCCL_INSTALL_DIR)/libnccl.so.2
# Quoted in the recipes: a DESTDIR with a space is one folder, not two
# (unquoted, install wrote into a relative one, uninstall removed the other).
INSTALL_TO = $(DESTDIR)$(PREFIX)
install: all
	$(if $(filter /%,$(PREFIX)),,$(error PREFIX=$(PREFIX) is not an absolute path (the installed pkg-config file names it)))
	install -d "$(INSTALL_TO)/include" "$(INSTALL_TO)/lib/pkgconfig" "$(INSTALL_TO)/bin"
	install -m 644 include/symcomm.h "$(INSTALL_TO)/include/"
	install -m 755 $(SHLIB) "$(INSTALL_TO)/lib/libsymcomm.so.0"
	$(if $(CUDA_TARGET),install -m 755 $(CUDA_LIB) "$(INSTALL_TO)/lib/")
	ln -sf libsymcomm.so.0 "$(INSTALL_TO)/lib/libsymcomm.so"
	install -m 644 $(STLIB) "$(INSTALL_TO)/lib/"
	install -m 755 $(TOOL_BINS) "$(INSTALL_TO)/bin/"
	$(if $(NCCL_H),install -d "$(INSTALL_TO)/$(NCCL_INSTALL_DIR)")
	$(if $(NCCL_H),install -m 755 $(NCCL_LIB) "$(INSTALL_TO)/$(NCCL_INSTALL_DIR)/")
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@VERSION@|$(shell sed -n 's/^#define SYMCOMM_VERSION_\(MAJOR\|MINOR\|PATCH\) //p' include/symcomm.h | paste -sd.)|' \
	  symcomm.pc.in > "$(INSTALL_TO)/lib/pkgconfig/symcomm.pc"

# Removes what install put there (and the folders it made, once empty).
uninstall:
	for f in $(INSTALLED); do rm -f "$(INSTALL_TO)/$$f" || exit 1; done
	-rmdir "$(INSTALL_TO)/$(NCCL_INSTALL_DIR)" "$(INSTALL_TO)/lib/pkgconfig" 2>/dev/null

clean:
	rm -rf build build-san build-tsan

help:
	@echo "make            build library, tools and examples into $(BUILD)/"
	@echo "make run        the demo: 8 ranks on 2 simulated hosts, one all-reduce sweep"
	@echo "make test       the whole suite, plain and under ASan+UBSan, and its threaded tests under TSan"
	@echo "make check      the suite on this build only"
	@echo "make test-gpu   the CUDA backend's checks, on a host with NVIDIA GPUs"
	@echo "make mutation   plant protocol bugs in copies of the tree; the suite must catch each"
	@echo "make install    PREFIX=/usr/local by default, DESTDIR honoured; make uninstall undoes it"

-include $(shell find $(BUILD)/obj -name '*.d' 2>/dev/null)
