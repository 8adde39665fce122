# xtts-prep — GNU make build.
#
# Sources are discovered by folder so that adding a file needs no edit here:
#   common/ formats/ kernels/ cache/*/ prep/*/ train/ *.c *.cc -> build/lib/libxtts.a
#   programs/xtts-*.c (each program's main)                   -> build/bin/xtts-*
#   tests/test_*.c                                            -> build/tests/test_* (cmocka)
#   tests/*.c (the others: code the tests share)              -> build/tests/libxtts-test.a
#   tests/e2e/*.sh                                            -> end-to-end shell tests
#   kernels/*.cu (when nvcc is found and CUDA != 0)           -> into libxtts.a
#   common/ formats/ cache/store/read/, -fPIC                 -> build/lib/libxtts-reader.so
#
# Variables: CC, CFLAGS_OPT (default -O2 -march=native), CUDA=0|1, PREFIX, DESTDIR,
#            DATA, OUT, SHARDS, TOKENIZE_OPTS, MELCACHE_OPTS (make cache), FUZZ_SECONDS (make fuzz),
#            SCALE_SIZES (make scale), DIR (make gpu-bundle), BUNDLE (make gpu-bench).

CC        ?= gcc
CXX       ?= g++
ifeq ($(origin CC),default)
CC        := gcc
endif
ifeq ($(origin CXX),default)
CXX       := g++
endif
PREFIX    ?= /usr/local
DESTDIR   ?=
BUILD     ?= build
CFLAGS_OPT ?= -O2 -march=native
SANITIZE  ?=
PYTHON    ?= /usr/bin/python3
VERSION   := $(shell cat VERSION 2>/dev/null || echo 0.0.0)

PKGS      := sndfile soxr samplerate lmdb libzstd fftw3f libutf8proc jansson espeak-ng libpng cmocka
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS   := $(shell pkg-config --libs $(PKGS) 2>/dev/null)
# liblmdb ships no .pc file on some releases; libcld2 never does.
ifeq ($(findstring -llmdb,$(PKG_LIBS)),)
PKG_LIBS  += -llmdb
endif
LIBS      := $(PKG_LIBS) -lz -lcld2 -lmecab -lstdc++ -lpthread -lm

WARN      := -Wall -Wextra -Werror
CPPFLAGS  += -I. -DXTTS_VERSION=\"$(VERSION)\" -D_GNU_SOURCE
CFLAGS    := -std=c17 $(CFLAGS_OPT) $(WARN) -fno-math-errno -fvect-cost-model=dynamic -fopenmp -g $(SANITIZE) $(PKG_CFLAGS) $(EXTRA_CFLAGS)
CXXFLAGS  := -std=c++17 $(CFLAGS_OPT) $(WARN) -fopenmp -g $(SANITIZE) $(EXTRA_CFLAGS)
# The FLAC codec is a weak reference of the record codec (formats/record.c, so that the reader
# library needs no libsndfile): every program and test links it in by name.
XTTS_LINK_FLAC := -Wl,-u,xtts_flac_encode_i16 -Wl,-u,xtts_flac_decode_i16
LDFLAGS   += -fopenmp $(SANITIZE) $(XTTS_LINK_FLAC)

# ---- CUDA detection --------------------------------------------------------
CUDA      ?= auto
NVCC      ?= $(shell command -v nvcc 2>/dev/null || (test -x /usr/local/cuda/bin/nvcc && echo /usr/local/cuda/bin/nvcc))
ifeq ($(CUDA),0)
HAVE_CUDA := 0
else ifneq ($(NVCC),)
HAVE_CUDA := 1
else ifeq ($(CUDA),1)
$(error CUDA=1 but nvcc was not found on PATH or at /usr/local/cuda/bin/nvcc)
else
HAVE_CUDA := 0
endif
CUDA_HOME ?= $(patsubst %/bin/nvcc,%,$(NVCC))
CUDA_ARCHS ?= -gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=sm_90 \
              -gencode arch=compute_90,code=compute_90
NVCCFLAGS ?= -O2 -std=c++17 $(CUDA_ARCHS) -Xcompiler -Wall,-Wextra,-Werror,-fopenmp -I.
ifeq ($(HAVE_CUDA),1)
# The programs link no CUDA library: the CUDA code is a plugin, libxtts-cuda.so, loaded when a
# device is asked for (kernels/cuda_plugin.h), so one build starts on CPU-only nodes too.
CPPFLAGS  += -DXTTS_HAVE_CUDA=1 -I$(CUDA_HOME)/include -DXTTS_CUDA_PLUGIN_DIR=\"$(PREFIX)/lib/xtts-prep\"
CUDA_PLUGIN_LIBS := -L$(CUDA_HOME)/lib64 -Wl,-rpath,$(CUDA_HOME)/lib64 -lcufft -lcublas -lcudart
endif

# ---- sources ---------------------------------------------------------------
# prep/ is cut by job into sub-folders (docs/design.md), found here so that a new one needs no edit
PREP_DIRS := $(sort $(patsubst %/,%,$(dir $(wildcard prep/*/*.c prep/*/*.cc prep/*/*/*.c prep/*/*/*.cc))))
# cache/ is two rooms, the store (cache/store/, its read side in cache/store/read/) and the
# audit tools (cache/audit/), found the same way
CACHE_DIRS := $(sort $(patsubst %/,%,$(dir $(wildcard cache/*/*.c cache/*/*/*.c))))
# formats/audio/: the audio codecs of the formats, over libsndfile (not in the reader library)
FORMATS_DIRS := formats $(sort $(patsubst %/,%,$(dir $(wildcard formats/*/*.c))))
LIBDIRS   := common $(FORMATS_DIRS) kernels $(CACHE_DIRS) $(PREP_DIRS) train
# the mains, one a program, in a room of their own above every library layer (as zstd's programs/)
PROG_SRCS := $(wildcard programs/xtts-*.c)
LIB_CSRCS := $(wildcard $(addsuffix /*.c,$(LIBDIRS)))
LIB_CXXSRCS := $(wildcard $(addsuffix /*.cc,$(LIBDIRS)))
CU_SRCS   := $(wildcard kernels/*.cu train/*.cu)
TEST_SRCS := $(wildcard tests/test_*.c)

OBJ       := $(BUILD)/obj
LIB_OBJS  := $(patsubst %.c,$(OBJ)/%.o,$(LIB_CSRCS)) $(patsubst %.cc,$(OBJ)/%.o,$(LIB_CXXSRCS))
LIBXTTS   := $(BUILD)/lib/libxtts.a
# The CUDA plugin: the .cu objects plus their own position-independent copies of the helpers
# they call (common, the mel parameters), exporting only xtts_cudaplugin_* (cuda_plugin.map).
CUDA_PLUGIN := $(BUILD)/lib/libxtts-cuda.so
CUDA_PLUGIN_OBJS := $(patsubst %.cu,$(OBJ)/%.cu.pic.o,$(CU_SRCS)) \
                    $(patsubst %.c,$(OBJ)/cuda-plugin/%.o,$(wildcard common/*.c)) $(OBJ)/cuda-plugin/kernels/mel.o
# The reader as a shared library with the stable C interface of cache/store/read/reader_api.h
# (what the Python package loads through ctypes), exporting only xtts_api_*
# (cache/store/read/reader_api.map). A folder rule, as zstd's decoder-only library: the
# position-independent copies of common/, formats/ (not its sub-folders: formats/audio/ is
# libsndfile's) and the store's read side, cache/store/read/; so it needs LMDB, zstd and
# jansson (the manifest) and nothing else (tests/e2e/reader_library_deps.sh). The record
# codec's FLAC waveforms are not in it (formats/record.c).
READER_SO := $(BUILD)/lib/libxtts-reader.so
READER_SO_DIRS := common formats cache/store/read
READER_SO_SRCS := $(wildcard $(addsuffix /*.c,$(READER_SO_DIRS)))
READER_SO_OBJS := $(patsubst %.c,$(OBJ)/pic/%.o,$(READER_SO_SRCS))
READER_SO_LIBS := $(shell pkg-config --libs lmdb libzstd jansson 2>/dev/null)
ifeq ($(findstring -llmdb,$(READER_SO_LIBS)),)
READER_SO_LIBS += -llmdb
endif
PROGS     := $(patsubst %.c,$(BUILD)/bin/%,$(notdir $(PROG_SRCS)))
TESTS     := $(patsubst tests/%.c,$(BUILD)/tests/%,$(TEST_SRCS))
# test helpers (not installed): build/tests/tools/NAME from tests/tools/NAME.c
TOOL_SRCS := $(wildcard tests/tools/*.c)
TOOLS     := $(patsubst tests/%.c,$(BUILD)/tests/%,$(TOOL_SRCS))
# code the tests and the test helpers share (tests/*.c other than test_*.c, e.g. the synthetic
# cache tests/synth.c), kept out of libxtts.a and out of the installed headers
TESTLIB_SRCS := $(filter-out $(TEST_SRCS),$(wildcard tests/*.c))
TESTLIB   := $(BUILD)/tests/libxtts-test.a

.PHONY: all test test-long layers typecheck unit e2e e2e-long asan demo bench scale cache install install-built wheel clean deps fuzz gpu-check cuda-check help fresh-check \
        gpu-bundle gpu-bundle-built gpu-bench
.DEFAULT_GOAL := all

all: $(LIBXTTS) $(READER_SO) $(PROGS) $(TESTS) $(TOOLS)
ifeq ($(HAVE_CUDA),1)
all: $(CUDA_PLUGIN)
endif

help:
	@echo "targets: all test layers typecheck asan demo bench scale cache install wheel clean fuzz fresh-check gpu-check" \
	    "gpu-bundle (DIR=path) gpu-bench (BUNDLE=path)"

$(OBJ)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -MMD -MP -c $< -o $@

$(OBJ)/%.o: %.cc
	@mkdir -p $(dir $@)
	$(CXX) $(CPPFLAGS) $(CXXFLAGS) -MMD -MP -c $< -o $@

# (cuda_plugin.h named too: it holds the ABI string, and objects made before nvcc wrote
# dependency files would otherwise keep a stale one)
$(OBJ)/%.cu.pic.o: %.cu kernels/cuda_plugin.h
	@mkdir -p $(dir $@)
	$(NVCC) $(CPPFLAGS) -DXTTS_CUDA_PLUGIN=1 $(NVCCFLAGS) -Xcompiler -fPIC -MMD -MP -MF $(@:.o=.d) -c $< -o $@

$(OBJ)/cuda-plugin/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) -DXTTS_CUDA_PLUGIN=1 $(CFLAGS) -fPIC -MMD -MP -c $< -o $@

$(CUDA_PLUGIN): $(CUDA_PLUGIN_OBJS) kernels/cuda_plugin.map
	@mkdir -p $(dir $@)
	$(CXX) -shared -fopenmp -o $@ $(CUDA_PLUGIN_OBJS) -Wl,--version-script=kernels/cuda_plugin.map \
	    -Wl,-soname,libxtts-cuda.so $(CUDA_PLUGIN_LIBS) $(shell pkg-config --libs fftw3f 2>/dev/null) -lpthread -lm

$(OBJ)/pic/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -fPIC -MMD -MP -c $< -o $@

$(READER_SO): $(READER_SO_OBJS) cache/store/read/reader_api.map
	@mkdir -p $(dir $@)
	$(CC) -shared $(SANITIZE) -o $@ $(READER_SO_OBJS) -Wl,--version-script=cache/store/read/reader_api.map \
	    -Wl,-soname,libxtts-reader.so -Wl,--no-undefined $(READER_SO_LIBS) -lpthread -lm

$(LIBXTTS): $(LIB_OBJS)
	@mkdir -p $(dir $@)
	rm -f $@
	ar rcs $@ $^

# a program: its main (programs/NAME.c) linked with the library
$(BUILD)/bin/%: $(OBJ)/programs/%.o $(LIBXTTS)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $< $(LIBXTTS) $(LIBS) -o $@

$(TESTLIB): $(patsubst %.c,$(OBJ)/%.o,$(TESTLIB_SRCS))
	@mkdir -p $(dir $@)
	rm -f $@
	ar rcs $@ $^

$(BUILD)/tests/%: $(OBJ)/tests/%.o $(TESTLIB) $(LIBXTTS)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $< $(TESTLIB) $(LIBXTTS) $(LIBS) -o $@
# A program's or a test's object is reached through a pattern rule only, which makes it an
# intermediate file that GNU make deletes after linking (and rebuilds on the next make): keep it.
.SECONDARY: $(patsubst $(BUILD)/tests/%,$(OBJ)/tests/%.o,$(TESTS) $(TOOLS)) $(patsubst %.c,$(OBJ)/%.o,$(PROG_SRCS))

-include $(shell find $(BUILD)/obj -name '*.d' 2>/dev/null)

# ---- dependencies ----------------------------------------------------------
deps:
	@bash scripts/install-deps.sh

# The library flags above are read from pkg-config when make starts: a build begun before the
# packages were there would link without them, so make stops at once, naming what is missing.
# (The goals that install the packages first run the build in a make of their own after deps.)
NO_PKGS_GOALS := deps demo test test-long asan clean help fresh-check
ifneq ($(filter-out $(NO_PKGS_GOALS),$(or $(MAKECMDGOALS),all)),)
PKGS_MISSING := $(shell for p in $(filter-out lmdb,$(PKGS)); do pkg-config --exists $$p 2>/dev/null || echo $$p; done)
ifneq ($(strip $(PKGS_MISSING)),)
$(error pkg-config finds no $(strip $(PKGS_MISSING)): run 'make deps' (scripts/install-deps.sh, as root) first; 'make demo' and 'make test' do it themselves)
endif
endif

# ---- tests -----------------------------------------------------------------
test: deps
	@$(MAKE) --no-print-directory all
	@$(MAKE) --no-print-directory layers typecheck unit e2e

# no include and no call goes up a layer or between rooms of prep/, no circle of calls between
# the files of a folder (CIRCLES_KNOWN: folders whose circles are still to be opened), every
# symbol libxtts.a exports starts with xtts_, and no function is over 100 lines
# (docs/design.md, "Parts and where they live")
CIRCLES_KNOWN ?= prep/text/num2words
layers: $(LIBXTTS)
	@bash scripts/dev/check-layers.sh $(CURDIR) $(abspath $(BUILD))/obj
	@CIRCLES_KNOWN="$(CIRCLES_KNOWN)" bash scripts/dev/check-circles.sh $(CURDIR) $(abspath $(BUILD))/obj
	@bash scripts/dev/check-symbols.sh $(abspath $(LIBXTTS))
	@$(PYTHON) scripts/dev/check-function-size.py $(CURDIR)

# the Python package (python/xtts_prep) under mypy --strict, configured in python/pyproject.toml
typecheck:
	@$(PYTHON) -c 'import mypy' 2>/dev/null || { echo "typecheck: mypy is not installed for $(PYTHON)" \
	    "(Debian: apt-get install python3-mypy; make deps installs it)" >&2; exit 2; }
	@$(PYTHON) -m mypy --strict --config-file python/pyproject.toml --cache-dir $(BUILD)/mypy-cache python/xtts_prep

unit: $(TESTS)
	@bash tests/run-unit.sh $(TESTS)

# the wheel too (tests/e2e/python_wheel.sh installs it), except in a sanitizer build, whose
# library an uninstrumented interpreter cannot load
e2e: $(PROGS) $(READER_SO) $(if $(SANITIZE),,wheel)
	@BUILD=$(abspath $(BUILD)) PYTHON=$(PYTHON) bash tests/run-e2e.sh short

# the end-to-end tests of several minutes (kill loops, a clean clone's whole path), marked
# "# e2e: long" in their first lines: not in make test, in CI
e2e-long: $(PROGS) $(READER_SO) $(if $(SANITIZE),,wheel)
	@BUILD=$(abspath $(BUILD)) PYTHON=$(PYTHON) bash tests/run-e2e.sh long

test-long: deps
	@$(MAKE) --no-print-directory all
	@$(MAKE) --no-print-directory e2e-long

# The whole suite again, under AddressSanitizer and UBSan, in its own build dir.
asan: deps
	@$(MAKE) --no-print-directory BUILD=build-asan CUDA=0 CFLAGS_OPT="-O1 -fno-omit-frame-pointer" \
	    SANITIZE="-fsanitize=address,undefined -fno-sanitize-recover=undefined" all
	@ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	    $(MAKE) --no-print-directory BUILD=build-asan CUDA=0 CFLAGS_OPT="-O1 -fno-omit-frame-pointer" \
	    SANITIZE="-fsanitize=address,undefined -fno-sanitize-recover=undefined" unit e2e

cuda-check:
ifeq ($(HAVE_CUDA),1)
	@$(MAKE) --no-print-directory $(CUDA_PLUGIN)
	@echo "cuda-check: $(words $(CU_SRCS)) CUDA source(s) compiled with $(NVCC) and linked into $(CUDA_PLUGIN)"
else
	@echo "cuda-check: nvcc not found; the build contains no CUDA code"
endif

# ---- demo, cache, bench ----------------------------------------------------
DEMO_DIR ?= $(BUILD)/demo
# (all in a make of its own, started after deps: this make's library flags were read from
# pkg-config before deps could install the packages they name)
demo: deps
	@$(MAKE) --no-print-directory all
	@BUILD=$(abspath $(BUILD)) DEMO_DIR=$(abspath $(DEMO_DIR)) bash scripts/demo.sh

DATA   ?=
OUT    ?= $(BUILD)/cache
SHARDS ?= 1
cache: all
	@test -n "$(DATA)" || { echo "make cache: set DATA=path/to/metadata.csv (and OUT=dir, SHARDS=N, MELCACHE_OPTS=, TOKENIZE_OPTS=)" >&2; exit 1; }
	@BUILD=$(abspath $(BUILD)) TOKENIZE_OPTS="$(TOKENIZE_OPTS)" MELCACHE_OPTS="$(MELCACHE_OPTS)" \
	    bash scripts/build-cache.sh "$(DATA)" "$(OUT)" "$(SHARDS)"

bench: all
	@BUILD=$(abspath $(BUILD)) bash bench/run.sh

# time and peak memory per record at 10,000 and 100,000 records (SCALE_SIZES=...)
scale: all
	@BUILD=$(abspath $(BUILD)) SCALE_SIZES="$(SCALE_SIZES)" bash bench/scale.sh

FUZZ_SECONDS ?= 60
fuzz:
	@BUILD=$(abspath $(BUILD)) FUZZ_SECONDS=$(FUZZ_SECONDS) bash tests/fuzz/run.sh

# README's two commands, the first time, in a debootstrap'ed Debian 12 (needs root and Debian's
# packages; scripts/dev/fresh-check.sh)
fresh-check:
	@bash scripts/dev/fresh-check.sh

gpu-check: all
	@BUILD=$(abspath $(BUILD)) bash scripts/gpu-check.sh

# make gpu-bundle DIR=path: what a GPU machine without Debian's libraries needs for the GPU check
# (docs/gpu.md, "The GPU check"): make install's portable build (PORTABLE_OPT, below) with the
# CUDA plugin and the CUDA tests, every non-glibc, non-CUDA library they load, generated clips,
# and gpu-bench.sh, which runs the whole check there: bash DIR/gpu-bench.sh.
# make gpu-bench: the same check here, on a bundle of $(BUILD) (or on BUNDLE=DIR, made before).
BUNDLE ?=
gpu-bundle:
	@test -n "$(DIR)" || { echo "make gpu-bundle: set DIR=path, a new folder for the bundle" >&2; exit 1; }
	@$(MAKE) --no-print-directory BUILD=$(BUILD)/portable CFLAGS_OPT="$(PORTABLE_OPT)" gpu-bundle-built
	@bash scripts/gpu-bundle.sh --from $(BUILD)/portable "$(DIR)"

gpu-bundle-built: $(PROGS) $(READER_SO) \
    $(if $(filter 1,$(HAVE_CUDA)),$(CUDA_PLUGIN) $(BUILD)/tests/test_mel_cuda $(BUILD)/tests/test_train_cuda)

# (its Python is python3 on PATH, where PyTorch usually is, unless PYTHON is given)
GPU_BENCH_ENV := $(if $(filter command line environment,$(origin PYTHON)),PYTHON=$(PYTHON))
gpu-bench:
ifeq ($(BUNDLE),)
	@$(MAKE) --no-print-directory all
	@bash scripts/gpu-bundle.sh --from $(BUILD) $(BUILD)/gpu-bench-bundle
	@$(GPU_BENCH_ENV) bash $(BUILD)/gpu-bench-bundle/gpu-bench.sh
else
	@$(GPU_BENCH_ENV) bash $(BUNDLE)/gpu-bench.sh
endif

# ---- install ---------------------------------------------------------------
PYTHONDIR ?= $(PREFIX)/lib/$(shell /usr/bin/python3 -c 'import sys; print("python%d.%d" % sys.version_info[:2])')/dist-packages
# make install builds its own copy for a baseline that every x86-64 machine of the last decade
# runs (x86-64-v2), so an install works on any node of a cluster; the hot code (the mel, CRC
# and fp16 kernels, the trainer's loops) picks AVX2 or AVX-512 at run time (docs/building.md).
# PORTABLE_OPT= overrides it, e.g. `make install PORTABLE_OPT="-O2 -march=native"` for one
# machine. `make portable` builds that copy in $(BUILD)/portable without installing it (make
# bench times it against the native build).
PORTABLE_OPT ?= -O2 -march=x86-64-v2 -mtune=generic
.PHONY: portable portable-built
install:
	@$(MAKE) --no-print-directory BUILD=$(BUILD)/portable CFLAGS_OPT="$(PORTABLE_OPT)" install-built

portable:
	@$(MAKE) --no-print-directory BUILD=$(BUILD)/portable CFLAGS_OPT="$(PORTABLE_OPT)" portable-built

portable-built: $(LIBXTTS) $(READER_SO) $(PROGS)

# One public face, as LMDB has lmdb.h: libxtts-reader.so with reader_api.h (its versioned C
# interface, which needs no other header of the project) as include/xtts-prep/reader_api.h,
# and a pkg-config file, xtts-reader.pc. libxtts.a and the other headers are the programs'
# own, free to change, and stay in the build tree (docs/design.md, "The public face").
PUBLIC_HEADERS := cache/store/read/reader_api.h
install-built: $(READER_SO) $(PROGS) $(if $(filter 1,$(HAVE_CUDA)),$(CUDA_PLUGIN))
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib $(DESTDIR)$(PREFIX)/share/man/man1 \
	    $(DESTDIR)$(PREFIX)/share/xtts-prep
	install -m 755 $(PROGS) $(DESTDIR)$(PREFIX)/bin/
	install -m 755 $(READER_SO) $(DESTDIR)$(PREFIX)/lib/
	if [ -f $(CUDA_PLUGIN) ]; then install -d $(DESTDIR)$(PREFIX)/lib/xtts-prep && \
	    install -m 755 $(CUDA_PLUGIN) $(DESTDIR)$(PREFIX)/lib/xtts-prep/; fi
	install -d $(DESTDIR)$(PREFIX)/include/xtts-prep $(DESTDIR)$(PREFIX)/lib/pkgconfig
	install -m 644 $(PUBLIC_HEADERS) $(DESTDIR)$(PREFIX)/include/xtts-prep/
	printf '%s\n' 'prefix=$(PREFIX)' 'libdir=$${prefix}/lib' 'includedir=$${prefix}/include' '' \
	    'Name: xtts-reader' 'Description: xtts-prep cache reader (reader_api.h, ABI versioned)' 'Version: $(VERSION)' \
	    'Cflags: -I$${includedir}' 'Libs: -L$${libdir} -lxtts-reader' > $(DESTDIR)$(PREFIX)/lib/pkgconfig/xtts-reader.pc
	-install -m 644 docs/man/*.1 $(DESTDIR)$(PREFIX)/share/man/man1/ 2>/dev/null
	install -m 755 scripts/slurm-melcache.sbatch scripts/parallel-melcache.sh $(DESTDIR)$(PREFIX)/share/xtts-prep/
	install -m 644 scripts/k8s-melcache-job.yaml $(DESTDIR)$(PREFIX)/share/xtts-prep/
	# the Python package xtts_prep (offline: Debian's setuptools, no build isolation)
	/usr/bin/python3 -m pip install --no-build-isolation --no-deps --no-index --root-user-action=ignore --upgrade \
	    --target $(DESTDIR)$(PYTHONDIR) ./python
	rm -rf python/build python/*.egg-info

# the Python package as a wheel that carries libxtts-reader.so (the portable build's, as make
# install's) and what it links: $(BUILD)/wheel/xtts_prep-VERSION-py3-none-manylinux_2_NN_x86_64.whl,
# tagged for this machine's glibc; offline, with Debian's setuptools and wheel
# (scripts/build-wheel.sh). The wheel's copy of the library links zstd statically and finds the
# libraries whose Debian archives are not position-independent (LMDB, jansson) in
# xtts_prep/_libs/, where build-wheel.sh copies them, as auditwheel does: so it loads on a
# machine without liblmdb0, libzstd1 or libjansson4.
WHEEL_DIR ?= $(BUILD)/wheel
READER_WHEEL_SO := $(BUILD)/lib/wheel/libxtts-reader.so
READER_WHEEL_LIBS := -Wl,--exclude-libs,ALL -Wl,-Bstatic -lzstd -Wl,-Bdynamic -llmdb -ljansson

$(READER_WHEEL_SO): $(READER_SO_OBJS) cache/store/read/reader_api.map
	@mkdir -p $(dir $@)
	$(CC) -shared $(SANITIZE) -o $@ $(READER_SO_OBJS) -Wl,--version-script=cache/store/read/reader_api.map \
	    -Wl,-soname,libxtts-reader.so -Wl,--no-undefined -Wl,-rpath,'$$ORIGIN/_libs' $(READER_WHEEL_LIBS) -lpthread -lm

wheel:
	@$(MAKE) --no-print-directory BUILD=$(BUILD)/portable CFLAGS_OPT="$(PORTABLE_OPT)" \
	    $(BUILD)/portable/lib/wheel/libxtts-reader.so
	@bash scripts/build-wheel.sh $(PYTHON) $(BUILD)/portable/lib/wheel/libxtts-reader.so $(WHEEL_DIR) \
	    $(BUILD)/wheel-stage

clean:
	rm -rf $(BUILD) build-asan build-fuzz
$(OBJ)/prep/text/langid/langid_model.o: prep/text/langid/langid_ngrams.bin
