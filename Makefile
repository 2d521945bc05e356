# attnviz — one Makefile. `make run` and `make test` install what is missing first.
#
#   make            build build/attnviz
#   make run        open the default lesson in a window
#   make test       build and run every test, two at a time, on a sample of the
#                   lessons (in CI also under ASan+UBSan)
#   make test-full  the same with the full sweeps (every frame of every lesson,
#                   ATTNVIZ_FULL=1), then every lesson under valgrind (CI runs both)
#   make SAN=1 test the same with address + undefined sanitizers
#   make deps       install missing Debian packages (apt-get; sudo when not root)
#   make install    binary, assets, lessons, desktop entry, icons, man page, AppStream
#                   metainfo under $(DESTDIR)$(PREFIX) (default /usr/local); make uninstall

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
# -ffp-contract=off: a product and a sum are two roundings everywhere, so the
# kernels compiled for AVX2 / AVX-512 give the plain C loop's numbers bit for bit.
CORE_OPT := $(if $(filter 1,$(SAN)),,-O3) -ffp-contract=off

WARN := -Wall -Wextra -Wpedantic -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Wformat=2 \
        -Wdouble-promotion -Wvla
ifeq ($(CI),true)
  WARN += -Werror
endif

# Libraries, by pkg-config name, and the Debian packages that provide them.
PKGS      := sdl2 SDL2_ttf libcjson cmocka spng fontconfig cairo-ft libavcodec libavformat libswscale libavutil
DEB_LIBS  := libsdl2-dev libsdl2-ttf-dev libcjson-dev libcmocka-dev libspng-dev libfontconfig-dev libcairo2-dev \
             libavcodec-dev libavformat-dev libswscale-dev libavutil-dev
# Tools the tests use (command -> package) and fonts (fc-list family -> package).
DEB_TOOLS := pkg-config:pkg-config python3:python3 clang:clang xvfb-run:xvfb xdotool:xdotool import:imagemagick \
             xwininfo:x11-utils fc-list:fontconfig gdb:gdb desktop-file-validate:desktop-file-utils \
             appstreamcli:appstream man:man-db pdftotext:poppler-utils rsvg-convert:librsvg2-bin ffprobe:ffmpeg \
             qemu-x86_64:qemu-user
DEB_FONTS := DejaVuSans.ttf:fonts-dejavu-core wqy-microhei:fonts-wqy-microhei
# Files (shell glob -> package): libFuzzer's runtime for `make fuzz`; the tiny language model's
# corpus, which its task's generator reads (test_task, bench_train, --train on tiny-lm-fortunes).
DEB_FILES := /usr/lib/llvm-*/lib/clang/*/lib/linux/libclang_rt.fuzzer-*.a:libclang-rt-14-dev \
             /usr/share/games/fortunes/riddles:fortunes-min
# `make bench` only: PyTorch (the core is measured against nn.MultiheadAttention) and
# OpenBLAS, the BLAS it runs with here (without torch the PyTorch rows say they were skipped).
DEB_BENCH_FILES := /usr/lib/*/openblas-pthread/libblas.so.3:libopenblas0-pthread \
                   /usr/lib/python3/dist-packages/torch/__init__.py:python3-torch
# `make test-full` only: scikit-learn, whose 8×8 digits lessons/train_vit.py trains on (the rerun of
# tests/train_lessons_test.sh; with torch only, which `make bench` installs)
DEB_FULL_FILES := /usr/lib/python3/dist-packages/sklearn/__init__.py:python3-sklearn

PC = $(shell pkg-config $(1) $(2) 2>/dev/null)
CORE_CFLAGS := $(call PC,--cflags,libcjson)
VIDEO_PKGS  := libavcodec libavformat libswscale libavutil
APP_CFLAGS  := $(call PC,--cflags,sdl2 SDL2_ttf spng fontconfig cairo-ft cairo-pdf $(VIDEO_PKGS))
CORE_LIBS   := $(call PC,--libs,libcjson) -lm -pthread
# FFmpeg's libraries are opened by video.c when a GIF or MP4 is written (dlopen): not linked
APP_LIBS    := $(call PC,--libs,sdl2 SDL2_ttf spng fontconfig cairo-ft cairo-pdf) -lpthread
TEST_LIBS   := $(call PC,--libs,cmocka)

CFLAGS  := -std=c11 -D_POSIX_C_SOURCE=200809L $(OPT) $(WARN) $(SANFLAGS) -MMD -MP
LDFLAGS := $(SANFLAGS)

CORE_SRC := $(wildcard src/core/*.c)
VIEW_SRC := $(wildcard src/view/*.c)
DRAW_SRC := $(wildcard src/draw/*.c)
APP_SRC  := $(filter-out src/app/main.c,$(wildcard src/app/*.c))
CORE_OBJ := $(CORE_SRC:%.c=$(B)/%.o)
VIEW_OBJ := $(VIEW_SRC:%.c=$(B)/%.o)
DRAW_OBJ := $(DRAW_SRC:%.c=$(B)/%.o)
APP_OBJ  := $(APP_SRC:%.c=$(B)/%.o)
TEST_SRC := $(wildcard tests/test_*.c)
TEST_BIN := $(TEST_SRC:tests/%.c=$(B)/tests/%)
# Tests of the pure layers: built and linked without SDL (the view, the core and the session).
PURE_TESTS := $(B)/tests/test_scene $(B)/tests/test_edit $(B)/tests/test_quiz $(B)/tests/test_study $(B)/tests/test_numbers \
              $(B)/tests/test_task $(B)/tests/test_bpe $(B)/tests/test_sample $(B)/tests/test_expview
BENCH_SRC := $(wildcard tests/bench/bench_*.c)
BENCH_BIN := $(BENCH_SRC:tests/bench/%.c=$(B)/bench/%)
# bench_core again with tensor.c built without its avx512f clone: an AVX-512 machine times
# the avx2 clone (the AVX2-only machines') natively too (where the CPU has no AVX-512 it says so)
BENCH_BIN += $(B)/bench/bench_core_avx2
# and built with the default clone only (no target_clones): the default clone's code (plain
# x86-64, no AVX), timed natively on this CPU
BENCH_BIN += $(B)/bench/bench_core_default

.PHONY: all run test test-run test-full deps clean bench fuzz valgrind soak install uninstall icons FORCE
all: $(B)/attnviz

# Where `make install` puts things; the data directory is compiled into the
# binary (build/gen/datadir.h, rewritten only when it changes), which also finds
# ../share/attnviz beside its bin/ (a DESTDIR install, a moved tree).
PREFIX     ?= /usr/local
BINDIR     ?= $(PREFIX)/bin
DATAROOT   ?= $(PREFIX)/share
PKGDATADIR := $(DATAROOT)/attnviz
MANDIR     ?= $(DATAROOT)/man
APP_ID     := io.github.attnviz.attnviz
ICON_SIZES := 16 24 32 48 64 128 256 512

$(B)/gen/datadir.h: FORCE
	@mkdir -p $(dir $@)
	@printf '#define ATTNVIZ_DATADIR "%s"\n' '$(PKGDATADIR)' > $@.new
	@if cmp -s $@.new $@; then rm -f $@.new; else mv $@.new $@; fi
FORCE:
$(B)/src/app/assets.o: $(B)/gen/datadir.h
$(B)/src/app/assets.o: CFLAGS += -I$(B)/gen

# The core is compiled without SDL's flags: an SDL include there fails to build.
$(B)/src/core/%.o: src/core/%.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(CORE_OPT) $(CORE_CFLAGS) -Isrc/core -c $< -o $@

# The view is pure too: compiled without SDL's flags (an SDL include fails to build).
$(B)/src/view/%.o: src/view/%.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(CORE_CFLAGS) -Isrc/core -Isrc/view -c $< -o $@

# draw/ sees a DrawList, a canvas and the view, never the app: no -Isrc/app (an app
# include there fails to build).
$(B)/src/draw/%.o: src/draw/%.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(APP_CFLAGS) $(CORE_CFLAGS) -Isrc/core -Isrc/view -Isrc/draw -c $< -o $@

$(B)/src/%.o: src/%.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(APP_CFLAGS) $(CORE_CFLAGS) -Isrc -Isrc/core -Isrc/view -Isrc/draw -c $< -o $@

$(B)/libattncore.a: $(CORE_OBJ)
	$(AR) rcs $@ $^

$(B)/libattnview.a: $(VIEW_OBJ)
	@rm -f $@
	$(AR) rcs $@ $^

$(B)/libattndraw.a: $(DRAW_OBJ)
	@rm -f $@
	$(AR) rcs $@ $^

$(B)/libattnapp.a: $(APP_OBJ)
	@mkdir -p $(B)
	@rm -f $@
	$(AR) rcs $@ $^

$(B)/attnviz: $(B)/src/app/main.o $(B)/libattnapp.a $(B)/libattndraw.a $(B)/libattnview.a $(B)/libattncore.a
	$(CC) $(LDFLAGS) $^ $(APP_LIBS) $(CORE_LIBS) -o $@

$(B)/tests/%.o: tests/%.c tests/fuzz/fuzz_lesson.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(APP_CFLAGS) $(CORE_CFLAGS) $(call PC,--cflags,cmocka) -Isrc -Isrc/core -Isrc/view -Isrc/draw -c $< -o $@

# (kept: once their .d files name them, a deleted object would be rebuilt by the next make)
.SECONDARY: $(TEST_BIN:=.o)
$(B)/tests/%: $(B)/tests/%.o $(B)/libattnapp.a $(B)/libattndraw.a $(B)/libattnview.a $(B)/libattncore.a
	$(CC) $(LDFLAGS) $^ $(TEST_LIBS) $(APP_LIBS) $(CORE_LIBS) -o $@

# The pure tests: no SDL flags to compile, no SDL to link (an SDL include or call fails).
$(PURE_TESTS:%=%.o): $(B)/tests/%.o: tests/%.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(CORE_CFLAGS) $(call PC,--cflags,cmocka) -Isrc -Isrc/core -Isrc/view -c $< -o $@

$(PURE_TESTS): %: %.o $(B)/libattnview.a $(B)/libattncore.a
	$(CC) $(LDFLAGS) $(filter %.o,$^) $(filter %.a,$^) $(TEST_LIBS) $(CORE_LIBS) -o $@
$(B)/tests/test_study: $(B)/src/app/progress.o # the progress file: plain C, no SDL

$(B)/bench/%.o: tests/bench/%.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(APP_CFLAGS) $(CORE_CFLAGS) -Isrc -Isrc/core -Isrc/view -Isrc/draw -Isrc/app -c $< -o $@

$(B)/bench/%: $(B)/bench/%.o $(B)/libattnapp.a $(B)/libattndraw.a $(B)/libattnview.a $(B)/libattncore.a
	$(CC) $(LDFLAGS) $^ $(APP_LIBS) $(CORE_LIBS) -o $@

$(B)/bench/%_avx2.o: src/core/%.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(CORE_OPT) $(CORE_CFLAGS) -DTENSOR_AVX2_AT_MOST -Isrc/core -c $< -o $@

# (the two objects define every symbol of tensor.c and tensor_gemm.c: the library's are never linked)
$(B)/bench/bench_core_avx2: $(B)/bench/bench_core.o $(B)/bench/tensor_avx2.o $(B)/bench/tensor_gemm_avx2.o \
                            $(B)/libattnapp.a $(B)/libattndraw.a $(B)/libattnview.a $(B)/libattncore.a
	$(CC) $(LDFLAGS) $^ $(APP_LIBS) $(CORE_LIBS) -o $@

$(B)/bench/%_default.o: src/core/%.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(CORE_OPT) $(CORE_CFLAGS) -DTENSOR_DEFAULT_ONLY -Isrc/core -c $< -o $@

$(B)/bench/bench_core_default: $(B)/bench/bench_core.o $(B)/bench/tensor_default.o $(B)/bench/tensor_gemm_default.o \
                               $(B)/libattnapp.a $(B)/libattndraw.a $(B)/libattnview.a $(B)/libattncore.a
	$(CC) $(LDFLAGS) $^ $(APP_LIBS) $(CORE_LIBS) -o $@

# attnviz itself linked with those objects (clones_test: every clone's --dump of every shipped
# lesson run natively, on the CPU's own vector units, against the CPU's clone)
CLONE_BINS := $(B)/clones/attnviz_avx2 $(B)/clones/attnviz_default
$(B)/clones/attnviz_%: $(B)/src/app/main.o $(B)/bench/tensor_%.o $(B)/bench/tensor_gemm_%.o \
                       $(B)/libattnapp.a $(B)/libattndraw.a $(B)/libattnview.a $(B)/libattncore.a
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $^ $(APP_LIBS) $(CORE_LIBS) -o $@

# Speed is measured here, never in timed tests: one table for the whole app.
bench:
	@$(MAKE) --no-print-directory deps DEB_FILES="$(DEB_FILES) $(DEB_BENCH_FILES)"
	@$(MAKE) --no-print-directory $(B)/attnviz $(BENCH_BIN)
	@echo "| benchmark | median | p99 | target | |"
	@echo "|---|---|---|---|---|"
	@for b in $(BENCH_BIN); do \
	  if { [ "$${b##*/}" = bench_process ] || [ "$${b##*/}" = bench_teacher ]; } && [ -z "$$DISPLAY" ] && \
	     command -v xvfb-run >/dev/null; then \
	    xvfb-run -a -s "-screen 0 1920x1080x24" $$b $(B)/attnviz || exit 1; \
	  else $$b $(B)/attnviz || exit 1; fi; done
	@$(MAKE) --no-print-directory bench-web

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

test-run: $(B)/attnviz $(TEST_BIN) $(CLONE_BINS)
	@sh tests/run_tests.sh $(B)

# The sweeps `make test` samples: every frame of every lesson, every lesson exported as
# SVG and PDF (tests read ATTNVIZ_FULL), then every lesson's export under valgrind.
test-full:
	@$(MAKE) --no-print-directory deps DEB_FILES="$(DEB_FILES) $(DEB_FULL_FILES)"
	@ATTNVIZ_FULL=1 $(MAKE) --no-print-directory test-run
	@$(MAKE) --no-print-directory valgrind

# libFuzzer (clang; address + undefined sanitizers) on seven targets: the lesson
# loader (its corpus starts from lessons/, the references and the bad lessons), the
# --set grammar, the study mode's answer parser, the progress file's reader and
# writer, a language-model lesson with a typed text and a checkpoint through load →
# retext → forward (its corpus also starts from the shipped language models), the
# tokenizer on arbitrary bytes, and the page's address read as its command line
# (src/app/url_args.c) (tests/fuzz/seeds/). Each runs FUZZ_SECONDS/7. Every crash found is kept in
# tests/fuzz/regressions/ (the lesson's) or tests/fuzz/regressions/TARGET/ and
# replayed by `make test` (test_fuzz_regressions, test_fuzz_targets).
FUZZ_SECONDS ?= 60
FUZZ_CC      ?= clang
FUZZ_TARGETS := fuzz_lesson fuzz_set fuzz_quiz_answer fuzz_progress fuzz_lm fuzz_tokenizer fuzz_url_args
FUZZ_FLAGS   := -std=c11 -D_POSIX_C_SOURCE=200809L -g -O1 -ffp-contract=off -fsanitize=fuzzer,address,undefined \
                -fno-sanitize-recover=all $(CORE_CFLAGS) -Isrc -Isrc/core -Isrc/view -Isrc/app
FUZZ_EACH    := $(shell echo $$(( ($(FUZZ_SECONDS) + 6) / 7 )))
FUZZ_RUN     := -max_total_time=$(FUZZ_EACH) -rss_limit_mb=2048 -malloc_limit_mb=512 -timeout=10 -print_final_stats=1
# the sources under test compiled once (instrumented, not linked with the fuzzer's
# main), each target linked against them
FUZZ_SRC := $(CORE_SRC) $(VIEW_SRC) src/app/progress.c src/app/url_args.c
FUZZ_OBJ := $(FUZZ_SRC:src/%.c=build/fuzz/obj/%.o)
build/fuzz/obj/%.o: src/%.c src/*/*.h
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(subst -fsanitize=fuzzer,-fsanitize=fuzzer-no-link,$(FUZZ_FLAGS)) -c $< -o $@
build/fuzz/libfuzzsrc.a: $(FUZZ_OBJ)
	@rm -f $@
	$(AR) rcs $@ $^
build/fuzz/fuzz_%: tests/fuzz/fuzz_%.c build/fuzz/libfuzzsrc.a
	$(FUZZ_CC) $(FUZZ_FLAGS) $< build/fuzz/libfuzzsrc.a $(CORE_LIBS) -o $@

fuzz: deps
	@$(MAKE) --no-print-directory -j2 $(FUZZ_TARGETS:%=build/fuzz/%)
	@mkdir -p build/fuzz/corpus tests/fuzz/regressions $(foreach t,set quiz_answer progress lm tokenizer url_args,build/fuzz/corpus-$(t) tests/fuzz/regressions/$(t))
	@cp lessons/*.json tests/ref/*.lesson.json tests/bad/*.json build/fuzz/corpus/ 2>/dev/null; true
	@cp tests/fuzz/seeds/set/* build/fuzz/corpus-set/; cp tests/fuzz/seeds/quiz/* build/fuzz/corpus-quiz_answer/
	@cp tests/fuzz/seeds/progress/* build/fuzz/corpus-progress/; cp tests/fuzz/seeds/url/* build/fuzz/corpus-url_args/
	@cp tests/fuzz/seeds/lm/* build/fuzz/corpus-lm/; cp tests/fuzz/seeds/tokenizer/* build/fuzz/corpus-tokenizer/
	@for l in $$(grep -l '"vocab"' lessons/*.json); do [ $$(wc -c <$$l) -le 131072 ] && cp $$l build/fuzz/corpus-lm/; done; true
	build/fuzz/fuzz_lesson $(FUZZ_RUN) -max_len=65536 -dict=tests/fuzz/lesson.dict \
	  -artifact_prefix=tests/fuzz/regressions/ build/fuzz/corpus
	build/fuzz/fuzz_set $(FUZZ_RUN) -max_len=201 -dict=tests/fuzz/set.dict \
	  -artifact_prefix=tests/fuzz/regressions/set/ build/fuzz/corpus-set
	build/fuzz/fuzz_quiz_answer $(FUZZ_RUN) -max_len=256 -artifact_prefix=tests/fuzz/regressions/quiz_answer/ \
	  build/fuzz/corpus-quiz_answer
	build/fuzz/fuzz_progress $(FUZZ_RUN) -max_len=16384 -dict=tests/fuzz/progress.dict \
	  -artifact_prefix=tests/fuzz/regressions/progress/ build/fuzz/corpus-progress
	build/fuzz/fuzz_lm $(FUZZ_RUN) -max_len=131072 -dict=tests/fuzz/lesson.dict \
	  -artifact_prefix=tests/fuzz/regressions/lm/ build/fuzz/corpus-lm
	build/fuzz/fuzz_tokenizer $(FUZZ_RUN) -max_len=4097 -artifact_prefix=tests/fuzz/regressions/tokenizer/ \
	  build/fuzz/corpus-tokenizer
	build/fuzz/fuzz_url_args $(FUZZ_RUN) -max_len=8208 -dict=tests/fuzz/url.dict \
	  -artifact_prefix=tests/fuzz/regressions/url_args/ build/fuzz/corpus-url_args

# valgrind: the core tests, and an export of every lesson (no leak, no invalid access).
VG := valgrind -q --error-exitcode=9 --leak-check=full --errors-for-leak-kinds=definite,indirect
valgrind: deps
	@$(MAKE) --no-print-directory $(B)/attnviz $(TEST_BIN)
	@for t in test_tensor test_attention test_lesson test_fuzz_regressions; do \
	  echo "== valgrind $$t"; $(VG) $(B)/tests/$$t >/dev/null || exit 1; done
	@d=$$(mktemp -d); for l in lessons/*.json; do \
	  echo "== valgrind export $$l"; \
	  env -u DISPLAY $(VG) $(B)/attnviz --export $$d/$$(basename $$l .json) $$l >/dev/null || { rm -rf $$d; exit 1; }; \
	done; rm -rf $$d; echo "valgrind: clean"

# The real window under random input (SOAK_SECONDS, default 60).
soak: deps $(B)/attnviz
	sh tests/soak.sh $(B)

# Installs only what is missing: libraries pkg-config does not find, tools not
# on PATH, fonts fontconfig does not list. Root runs apt-get; others go via sudo.
deps:
	@missing=""; \
	set -- $(DEB_LIBS); for pc in $(PKGS); do \
	  pkg-config --exists $$pc 2>/dev/null || missing="$$missing $$1"; shift; done; \
	for pair in $(DEB_TOOLS); do \
	  command -v $${pair%%:*} >/dev/null 2>&1 || missing="$$missing $${pair#*:}"; done; \
	for pair in $(DEB_FILES); do \
	  ls $${pair%%:*} >/dev/null 2>&1 || missing="$$missing $${pair#*:}"; done; \
	for pair in $(DEB_FONTS); do \
	  fc-list 2>/dev/null | grep -q "$${pair%%:*}" || missing="$$missing $${pair#*:}"; done; \
	if [ -n "$$missing" ]; then \
	  echo "attnviz: installing Debian packages:$$missing"; \
	  if [ "$$(id -u)" = 0 ]; then SUDO=; else SUDO=sudo; fi; \
	  $$SUDO apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq --no-install-recommends $$missing \
	    || { echo "attnviz: could not install:$$missing" >&2; exit 1; }; \
	fi

# The icon is drawn by attnviz itself (`--icon`): the scalable SVG and the PNG sizes.
icons: $(B)/icons/stamp
$(B)/icons/stamp: $(B)/attnviz
	@mkdir -p $(B)/icons
	$(B)/attnviz --icon $(B)/icons/$(APP_ID).svg
	@for s in $(ICON_SIZES); do $(B)/attnviz --icon $(B)/icons/$$s.png --size $$s || exit 1; done
	@touch $@

install: $(B)/attnviz $(B)/icons/stamp
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(PKGDATADIR)/assets/lang $(DESTDIR)$(PKGDATADIR)/lessons \
	  $(DESTDIR)$(DATAROOT)/applications $(DESTDIR)$(DATAROOT)/metainfo $(DESTDIR)$(MANDIR)/man1 \
	  $(DESTDIR)$(DATAROOT)/icons/hicolor/scalable/apps
	install -m 755 $(B)/attnviz $(DESTDIR)$(BINDIR)/attnviz
	install -m 644 assets/lang/*.txt $(DESTDIR)$(PKGDATADIR)/assets/lang/
	install -m 644 lessons/*.json lessons/order.txt lessons/README.md $(DESTDIR)$(PKGDATADIR)/lessons/
	install -m 755 lessons/from_torch.py $(DESTDIR)$(PKGDATADIR)/lessons/
	install -m 644 lessons/from_torch_parts.py lessons/from_torch_blocks.py lessons/lesson_file.py \
	  lessons/lesson_torch.py lessons/torch_modules.py lessons/torch_mla.py lessons/torch_delta.py lessons/bpe.py $(DESTDIR)$(PKGDATADIR)/lessons/
	install -m 644 assets/install/$(APP_ID).desktop $(DESTDIR)$(DATAROOT)/applications/
	install -m 644 assets/install/$(APP_ID).metainfo.xml $(DESTDIR)$(DATAROOT)/metainfo/
	install -m 644 assets/install/attnviz.1 $(DESTDIR)$(MANDIR)/man1/
	install -m 644 $(B)/icons/$(APP_ID).svg $(DESTDIR)$(DATAROOT)/icons/hicolor/scalable/apps/
	@for s in $(ICON_SIZES); do \
	  install -d $(DESTDIR)$(DATAROOT)/icons/hicolor/$${s}x$${s}/apps && \
	  install -m 644 $(B)/icons/$$s.png $(DESTDIR)$(DATAROOT)/icons/hicolor/$${s}x$${s}/apps/$(APP_ID).png || exit 1; done

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/attnviz $(DESTDIR)$(DATAROOT)/applications/$(APP_ID).desktop \
	  $(DESTDIR)$(DATAROOT)/metainfo/$(APP_ID).metainfo.xml $(DESTDIR)$(MANDIR)/man1/attnviz.1 \
	  $(DESTDIR)$(DATAROOT)/icons/hicolor/scalable/apps/$(APP_ID).svg
	@for s in $(ICON_SIZES); do rm -f $(DESTDIR)$(DATAROOT)/icons/hicolor/$${s}x$${s}/apps/$(APP_ID).png; done
	rm -rf $(DESTDIR)$(PKGDATADIR)
	@# the folders install made, when nothing else is in them (up to, not including, bin/, share/,
	@# share/man and PREFIX: the standard ones stay)
	@for d in $(DESTDIR)$(DATAROOT)/applications $(DESTDIR)$(DATAROOT)/metainfo $(DESTDIR)$(MANDIR)/man1 \
	  $(DESTDIR)$(DATAROOT)/icons/hicolor/scalable/apps \
	  $(foreach s,$(ICON_SIZES),$(DESTDIR)$(DATAROOT)/icons/hicolor/$(s)x$(s)/apps); do \
	  while case "$$d" in "$(DESTDIR)$(PREFIX)"/*) true;; *) false;; esac && [ "$$d" != "$(DESTDIR)$(BINDIR)" ] && \
	    [ "$$d" != "$(DESTDIR)$(DATAROOT)" ] && [ "$$d" != "$(DESTDIR)$(MANDIR)" ] && rmdir "$$d" 2>/dev/null; do \
	    d=$$(dirname "$$d"); done; done

clean:
	rm -rf build

-include $(CORE_OBJ:.o=.d) $(VIEW_OBJ:.o=.d) $(DRAW_OBJ:.o=.d) $(APP_OBJ:.o=.d) $(B)/src/app/main.d $(TEST_BIN:=.d) $(BENCH_BIN:=.d) $(B)/bench/tensor_avx2.d $(B)/bench/tensor_gemm_avx2.d

include src/web/web.mk
