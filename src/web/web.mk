# web.mk — the browser build (included by the Makefile).
#
#   make web         the static site in build/web/: index.html, web.js, web_export.js, web_touch.js,
#                    offline.js, web_present.js, presenter.html, presenter.js, web_type.js, sw.js (the service worker), manifest.webmanifest, icons/,
#                    attnviz.js, attnviz.wasm, attnviz.data (strings, Latin fonts, the default lesson and
#                    the manifest of the others), lessons/*.json (each fetched when it is opened) and
#                    fonts/wqy-microhei.ttc (fetched only when Chinese is shown)
#   make serve-web   serve it on http://127.0.0.1:8080/ (PORT=…)
#   make test-web    build it, then drive it in headless Chromium (tests/web/)
#   make bench-web   its speed: first frame, frame time, edit → frame, transfer
#
# The same sources as the desktop app, compiled by Debian's emscripten against a
# sysroot of SDL2, SDL2_ttf, FreeType, HarfBuzz, zlib, libspng, cJSON, pixman and cairo
# built from Debian's source packages (src/web/sysroot.sh, once; cached in build/web-sysroot).
# Left out: video.c (FFmpeg), main.c — their places are taken by web_video.c (GIF:
# gif_write.c; MP4: the browser's H.264 encoder through web_export.js) and web_main.c.

WEB        := build/web
WEB_OBJ    := build/web-obj
WEB_SYS    := build/web-sysroot
WEB_DATA   := build/web-data
DEB_WEB    := emcc:emscripten chromium:chromium dpkg-source:dpkg-dev cmake:cmake ninja:ninja-build \
              node:nodejs npm:npm
WEB_FONTS  := /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf /usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf \
              /usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf
WEB_CJK    := /usr/share/fonts/truetype/wqy/wqy-microhei.ttc
WEB_SRC    := $(CORE_SRC) $(VIEW_SRC) $(DRAW_SRC) $(filter-out src/app/video.c,$(APP_SRC)) $(wildcard src/web/*.c)
WEB_OBJS   := $(WEB_SRC:%.c=$(WEB_OBJ)/%.o)
# emcc runs node scripts that need Debian's acorn
WEB_ENV    := NODE_PATH=/usr/share/nodejs
# -msimd128: WebAssembly's 128-bit vectors (Chrome 91, Firefox 89, Safari 16.4 and later): the
# core's 8-wide vectors become two of them (its products in tiles of 4 × 8 there, which fit
# V8's registers: tensor_gemm.c); IEEE operations lane by lane, so the same bits
# (make web WEB_SIMD= WEB=… WEB_OBJ=… builds a page without them, to compare)
WEB_SIMD   := -msimd128
WEB_CFLAGS := -std=gnu11 -O2 $(WEB_SIMD) $(filter-out -Wdouble-promotion,$(WARN)) -MMD -MP -I$(WEB_SYS)/include \
              -I$(WEB_SYS)/include/SDL2 -I$(WEB_SYS)/include/cairo -I$(WEB_SYS)/include/freetype2 -DATTNVIZ_FONT_DIR='"/attnviz/fonts"' -I$(WEB_OBJ)/gen \
              -Isrc -Isrc/core -Isrc/view -Isrc/draw -Isrc/app
WEB_LIBS   := -L$(WEB_SYS)/lib -lSDL2_ttf -lSDL2 -lcairo -lpixman-1 -lharfbuzz -lfreetype -lspng -lz -lcjson
WEB_LDFLAGS := -O2 -sALLOW_MEMORY_GROWTH=1 -sINITIAL_MEMORY=64MB -sTOTAL_STACK=1MB -sENVIRONMENT=web \
              -sEXPORTED_FUNCTIONS=_main,_malloc,_free,_attnviz_open,_attnviz_resize,_attnviz_font_arrived,_attnviz_state,_attnviz_frame,_attnviz_dump,_attnviz_describe,_attnviz_frame_times,_attnviz_bench_forward,_attnviz_heap_used,_attnviz_text_cache_bytes,_attnviz_url,_attnviz_here,_attnviz_a11y,_attnviz_key,_attnviz_reduced_motion,_attnviz_pinch,_attnviz_train,_attnviz_compare,_attnviz_export_failed,_attnviz_presenter,_attnviz_text,_attnviz_lesson_failed \
              -sEXPORTED_RUNTIME_METHODS=UTF8ToString,stringToUTF8,FS,callMain -sINVOKE_RUN=0 -sEXIT_RUNTIME=0 \
              -lidbfs.js --preload-file $(WEB_DATA)/attnviz@/attnviz

.PHONY: web serve-web test-web bench-web web-deps
web-deps: # the desktop's packages too: test-web compares the page with the desktop binary
	@$(MAKE) --no-print-directory deps DEB_TOOLS="$(DEB_TOOLS) $(DEB_WEB)"

web: web-deps
	@$(WEB_ENV) sh src/web/sysroot.sh $(WEB_SYS)
	@$(MAKE) --no-print-directory $(WEB)/attnviz.js $(WEB)/index.html $(WEB)/web.js $(WEB)/web_export.js \
	  $(WEB)/fonts/wqy-microhei.ttc $(WEB)/lessons/stamp \
	  $(WEB)/sw.js
	@echo "attnviz: the site is in $(WEB)/ ($$(du -sh $(WEB) | cut -f1)); make serve-web to try it"

$(WEB_OBJ)/gen/datadir.h:
	@mkdir -p $(dir $@)
	@printf '#define ATTNVIZ_DATADIR "/attnviz"\n' > $@
$(WEB_OBJ)/src/app/assets.o: $(WEB_OBJ)/gen/datadir.h

# the core with the desktop's flags for it: the same sums in the same order, so
# the page's numbers are the desktop's bit for bit (tests/web checks --dump). With bulk
# memory (Chrome 75, Firefox 79, Safari 15: before SIMD) a memcpy is one memory.copy;
# without it emscripten's memcpy calls out to JavaScript from 512 bytes on (a packed row
# of a product: the 256×1024×256 product took 7.1 ms in node, 3.8 with memory.copy).
# Only the core: the other layers' _Thread_local would then need atomics to link.
$(WEB_OBJ)/src/core/%.o: src/core/%.c $(WEB_SYS)/stamp
	@mkdir -p $(dir $@)
	$(WEB_ENV) emcc $(WEB_CFLAGS) -O3 -ffp-contract=off -mbulk-memory -c $< -o $@
# EM_ASM's JavaScript is a GNU extension: the glue is compiled without -Wpedantic
$(WEB_OBJ)/src/web/%.o: src/web/%.c $(WEB_SYS)/stamp
	@mkdir -p $(dir $@)
	$(WEB_ENV) emcc $(filter-out -Wpedantic,$(WEB_CFLAGS)) -c $< -o $@
$(WEB_OBJ)/%.o: %.c $(WEB_SYS)/stamp
	@mkdir -p $(dir $@)
	$(WEB_ENV) emcc $(WEB_CFLAGS) -c $< -o $@

# what the page reads first: strings, the Latin fonts (Chinese comes on demand), the default
# lesson, order.txt and the manifest of the shipped lessons (src/web/lesson_manifest.py: what
# the picker lists; issue 39: any other lesson is fetched from lessons/ when it is opened, so a
# large one costs only the visits that open it).
# A string KEY with a KEY_web variant takes the variant in the page (what the page
# does instead: E makes PNG frames only, no key ends the session).
WEB_STRINGS := awk 'NR == FNR { i = index($$0, "_web = "); if (i) web[substr($$0, 1, i - 1)] = substr($$0, i + 7); next } \
                    { i = index($$0, " = "); k = substr($$0, 1, i - 1); if (i && (k in web)) print k " = " web[k]; else print }'
WEB_LESSON  := lessons/arange-2x4x4.json
WEB_MANIFEST := lessons.manifest

$(WEB_DATA)/stamp: $(wildcard assets/lang/*.txt) $(wildcard lessons/*.json) lessons/order.txt $(WEB_FONTS) src/web/lesson_manifest.py
	@rm -rf $(WEB_DATA) && mkdir -p $(WEB_DATA)/attnviz/assets/lang $(WEB_DATA)/attnviz/lessons $(WEB_DATA)/attnviz/fonts
	for f in assets/lang/*.txt; do $(WEB_STRINGS) "$$f" "$$f" > $(WEB_DATA)/attnviz/assets/lang/$${f##*/} || exit 1; done
	cp $(WEB_LESSON) lessons/order.txt $(WEB_DATA)/attnviz/lessons/
	python3 src/web/lesson_manifest.py $(WEB_DATA)/attnviz/lessons/$(WEB_MANIFEST) lessons/*.json
	cp $(WEB_FONTS) $(WEB_DATA)/attnviz/fonts/
	@touch $@
# the lessons as files of the site (lessons/NAME.json), fetched by the page when opened
$(WEB)/lessons/stamp: $(wildcard lessons/*.json)
	@rm -rf $(dir $@) && mkdir -p $(dir $@) && cp lessons/*.json $(dir $@) && touch $@

$(WEB)/attnviz.js: $(WEB_OBJS) $(WEB_DATA)/stamp
	@mkdir -p $(WEB)
	$(WEB_ENV) emcc $(WEB_OBJS) $(WEB_LIBS) $(WEB_LDFLAGS) -o $@
# (emcc writes them beside attnviz.js: without this, make -j2 asked for sw.js's inputs found no rule)
$(WEB)/attnviz.wasm $(WEB)/attnviz.data: $(WEB)/attnviz.js ;

$(WEB)/index.html: src/web/index.html
	@mkdir -p $(WEB) && cp $< $@
$(WEB)/web.js: src/web/web.js
	@mkdir -p $(WEB) && cp $< $@
$(WEB)/fonts/wqy-microhei.ttc: $(WEB_CJK)
	@mkdir -p $(dir $@) && cp $< $@

# Offline (issue 40, 6): the site's files a service worker keeps (the Chinese font is kept
# when first fetched, and so is each lesson fetched from lessons/), the web app manifest and the
# app's icon (drawn by attnviz --icon: the desktop's `make icons`). sw.js's version is a hash of
# all of them (attnviz.data holds the lessons' manifest: a changed lesson, a new version): a new
# build, a new worker, which replaces the old cache once it has the whole new site. LESSONS: each
# lesson's address (lessons/NAME.json?v=SHA, from the manifest): a kept copy moves to the new
# cache only when its address is still one of them (the same bytes).
WEB_KEPT   := index.html web.js web_export.js web_touch.js offline.js attnviz.js attnviz.wasm attnviz.data manifest.webmanifest \
              icons/256.png icons/512.png icons/$(APP_ID).svg web_present.js presenter.html presenter.js web_type.js
$(WEB)/web_touch.js $(WEB)/web_export.js $(WEB)/offline.js $(WEB)/manifest.webmanifest: $(WEB)/%: src/web/%
	@mkdir -p $(WEB) && cp $< $@
# the presenter as a second browser window (issue 40, 5: F5 in the page); typing on a phone
$(WEB)/web_present.js $(WEB)/presenter.html $(WEB)/presenter.js $(WEB)/web_type.js: $(WEB)/%: src/web/%
	@mkdir -p $(WEB) && cp $< $@
$(WEB)/icons/stamp: $(B)/icons/stamp
	@mkdir -p $(dir $@) && cp $(B)/icons/256.png $(B)/icons/512.png $(B)/icons/$(APP_ID).svg $(dir $@) && touch $@
$(WEB)/sw.js: src/web/sw.js $(WEB)/icons/stamp $(addprefix $(WEB)/,$(filter-out icons/%,$(WEB_KEPT))) $(WEB_DATA)/stamp
	@version=$$(cd $(WEB) && cat $(WEB_KEPT) | sha256sum | cut -c1-16) && \
	  files=$$(printf "'%s', " $(WEB_KEPT) | sed 's/, $$//') && \
	  lessons=$$(python3 -c 'import json, sys; print(", ".join("\x27lessons/%s?v=%s\x27" % (e["file"], e["sha256"]) for e in json.load(open(sys.argv[1]))["lessons"]))' \
	    $(WEB_DATA)/attnviz/lessons/$(WEB_MANIFEST)) && \
	  sed -e "s|@VERSION@|$$version|" -e "s|@FILES@|$$files|" -e "s|@LESSONS@|$$lessons|" $< > $@.tmp && mv $@.tmp $@

test-web: web
	@$(MAKE) --no-print-directory $(B)/attnviz $(B)/tests/test_colorvision
	@sh tests/web/test_web.sh $(B)

# the page's speed (make bench runs it after its own rows)
bench-web: web
	@$(MAKE) --no-print-directory $(B)/bench/bench_core $(B)/attnviz
	@node_dir=$$(sh tests/web/node_setup.sh) && cp tests/bench/bench_web.mjs tests/bench/bench_web_present.mjs tests/bench/bench_web_type.mjs $$node_dir/ && \
	  node $$node_dir/bench_web.mjs $(WEB) $(B)/bench/bench_core $(B)/attnviz

PORT ?= 8080
serve-web: web
	@echo "attnviz: http://127.0.0.1:$(PORT)/ (Ctrl+C stops)"
	@cd $(WEB) && python3 -m http.server --bind 127.0.0.1 $(PORT)

-include $(WEB_OBJS:.o=.d)
