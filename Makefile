# attnviz — one Makefile. `make run` and `make test` install what is missing first.
#
#   make            build build/attnviz
#   make run        open the default lesson in a window
#   make test       build and run every test (in CI also under ASan+UBSan)
#   make SAN=1 test the same with address + undefined sanitizers
#   make deps       install missing Debian packages (apt-get; sudo when not root)

CC      ?= cc
SAN     ?= 0
LESSON  ?= lessons/arange-2x4x4.json

ifeq ($(SAN),1)
  B        := build/san
  SANFLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
  OPT      := -O1 -g
else
  B        := build
  SANFLAGS :=
  OPT      := -O2 -g
endif
# The core's loops are written so independent outputs vectorise (-O3) while
# every sum keeps its order: IEEE results, never -ffast-math / -Ofast.
CORE_OPT := $(if $(filter 1,$(SAN)),,-O3)

WARN := -Wall -Wextra -Wpedantic -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Wformat=2 \
        -Wdouble-promotion -Wvla
ifeq ($(CI),true)
  WARN += -Werror
endif

# Libraries, by pkg-config name, and the Debian packages that provide them.
PKGS      := sdl2 SDL2_ttf libcjson cmocka spng fontconfig
DEB_LIBS  := libsdl2-dev libsdl2-ttf-dev libcjson-dev libcmocka-dev libspng-dev libfontconfig-dev
# Tools the tests use (command -> package) and fonts (fc-list family -> package).
DEB_TOOLS := pkg-config:pkg-config xvfb-run:xvfb xdotool:xdotool import:imagemagick \
             xwininfo:x11-utils fc-list:fontconfig
DEB_FONTS := DejaVuSans.ttf:fonts-dejavu-core wqy-microhei:fonts-wqy-microhei

PC = $(shell pkg-config $(1) $(2) 2>/dev/null)
CORE_CFLAGS := $(call PC,--cflags,libcjson)
APP_CFLAGS  := $(call PC,--cflags,sdl2 SDL2_ttf spng fontconfig)
CORE_LIBS   := $(call PC,--libs,libcjson) -lm
APP_LIBS    := $(call PC,--libs,sdl2 SDL2_ttf spng fontconfig) -lpthread
TEST_LIBS   := $(call PC,--libs,cmocka)

CFLAGS  := -std=c11 -D_POSIX_C_SOURCE=200809L $(OPT) $(WARN) $(SANFLAGS) -MMD -MP
LDFLAGS := $(SANFLAGS)

CORE_SRC := $(wildcard src/core/*.c)
APP_SRC  := $(filter-out src/app/main.c,$(wildcard src/view/*.c src/draw/*.c src/app/*.c))
CORE_OBJ := $(CORE_SRC:%.c=$(B)/%.o)
APP_OBJ  := $(APP_SRC:%.c=$(B)/%.o)
TEST_SRC := $(wildcard tests/test_*.c)
TEST_BIN := $(TEST_SRC:tests/%.c=$(B)/tests/%)
BENCH_SRC := $(wildcard tests/bench/bench_*.c)
BENCH_BIN := $(BENCH_SRC:tests/bench/%.c=$(B)/bench/%)

.PHONY: all run test test-run deps clean bench
all: $(B)/attnviz

# The core is compiled without SDL's flags: an SDL include there fails to build.
$(B)/src/core/%.o: src/core/%.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(CORE_OPT) $(CORE_CFLAGS) -Isrc/core -c $< -o $@

$(B)/src/%.o: src/%.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(APP_CFLAGS) $(CORE_CFLAGS) -Isrc -Isrc/core -Isrc/view -Isrc/draw -c $< -o $@

$(B)/libattncore.a: $(CORE_OBJ)
	$(AR) rcs $@ $^

$(B)/libattnapp.a: $(APP_OBJ)
	@mkdir -p $(B)
	$(AR) rcs $@ $^

$(B)/attnviz: $(B)/src/app/main.o $(B)/libattnapp.a $(B)/libattncore.a
	$(CC) $(LDFLAGS) $^ $(APP_LIBS) $(CORE_LIBS) -o $@

$(B)/tests/%.o: tests/%.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(APP_CFLAGS) $(CORE_CFLAGS) $(call PC,--cflags,cmocka) -Isrc -Isrc/core -Isrc/view -Isrc/draw -c $< -o $@

$(B)/tests/%: $(B)/tests/%.o $(B)/libattnapp.a $(B)/libattncore.a
	$(CC) $(LDFLAGS) $^ $(TEST_LIBS) $(APP_LIBS) $(CORE_LIBS) -o $@

$(B)/bench/%.o: tests/bench/%.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(APP_CFLAGS) $(CORE_CFLAGS) -Isrc -Isrc/core -Isrc/view -Isrc/draw -c $< -o $@

$(B)/bench/%: $(B)/bench/%.o $(B)/libattnapp.a $(B)/libattncore.a
	$(CC) $(LDFLAGS) $^ $(APP_LIBS) $(CORE_LIBS) -o $@

# Speed is measured here, never in timed tests: one table for the whole app.
bench: deps
	@$(MAKE) --no-print-directory $(B)/attnviz $(BENCH_BIN)
	@echo "| benchmark | median | p99 | target | |"
	@echo "|---|---|---|---|---|"
	@for b in $(BENCH_BIN); do $$b || exit 1; done

run: deps
	@$(MAKE) --no-print-directory $(B)/attnviz
	$(B)/attnviz $(LESSON)

test: deps
	@$(MAKE) --no-print-directory test-run
ifeq ($(CI),true)
ifneq ($(SAN),1)
	@$(MAKE) --no-print-directory SAN=1 test-run
endif
endif

test-run: $(B)/attnviz $(TEST_BIN)
	@sh tests/run_tests.sh $(B)

# Installs only what is missing: libraries pkg-config does not find, tools not
# on PATH, fonts fontconfig does not list. Root runs apt-get; others go via sudo.
deps:
	@missing=""; \
	set -- $(DEB_LIBS); for pc in $(PKGS); do \
	  pkg-config --exists $$pc 2>/dev/null || missing="$$missing $$1"; shift; done; \
	for pair in $(DEB_TOOLS); do \
	  command -v $${pair%%:*} >/dev/null 2>&1 || missing="$$missing $${pair#*:}"; done; \
	for pair in $(DEB_FONTS); do \
	  fc-list 2>/dev/null | grep -q "$${pair%%:*}" || missing="$$missing $${pair#*:}"; done; \
	if [ -n "$$missing" ]; then \
	  echo "attnviz: installing Debian packages:$$missing"; \
	  if [ "$$(id -u)" = 0 ]; then SUDO=; else SUDO=sudo; fi; \
	  $$SUDO apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq --no-install-recommends $$missing \
	    || { echo "attnviz: could not install:$$missing" >&2; exit 1; }; \
	fi

clean:
	rm -rf build

-include $(CORE_OBJ:.o=.d) $(APP_OBJ:.o=.d) $(B)/src/app/main.d $(TEST_BIN:=.d) $(BENCH_BIN:=.d)
