// export_format.c — the export-format table (export_format.h) and its lookups.
#include "export_format.h"

#include <assert.h>
#include <stdio.h>
#include <string.h>

// the writers (export_sinks.c): export_writer_png, …
#define EXPORT_FORMAT_WRITER(id, ext, kind, files, animated, even, key, page) extern const ExportWriter export_writer_##ext;
EXPORT_FORMATS(EXPORT_FORMAT_WRITER)
#undef EXPORT_FORMAT_WRITER

#define EXPORT_FORMAT_ROW(id, ext_, kind_, files_, animated_, even_, key_, page_)                                  \
    [EXPORT_##id] = {.format = EXPORT_##id, .ext = #ext_, .kind = kind_, .files = files_, .animated = animated_,   \
                     .even_size = even_, .menu_key = key_, .in_page = page_, .writer = &export_writer_##ext_},
static const ExportFormatInfo formats[EXPORT_FORMAT_COUNT] = {EXPORT_FORMATS(EXPORT_FORMAT_ROW)};
#undef EXPORT_FORMAT_ROW

const ExportFormatInfo *export_format_info(ExportFormat f)
{
    assert((unsigned)f < EXPORT_FORMAT_COUNT);
    return &formats[f];
}

const char *export_format_name(ExportFormat f) { return export_format_info(f)->ext; }

bool export_format_parse(const char *s, ExportFormat *f)
{
    for (int i = 0; i < EXPORT_FORMAT_COUNT; i++)
        if (strcmp(s, formats[i].ext) == 0) {
            *f = (ExportFormat)i;
            return true;
        }
    return false;
}

const ExportFormatInfo *export_format_menu(int digit, bool browser, bool *handout)
{
    *handout = (digit == EXPORT_MENU_HANDOUT || digit == EXPORT_MENU_WORKSHEET) && (EXPORT_HANDOUT_IN_PAGE || !browser);
    for (int i = 0; digit > 0 && i < EXPORT_FORMAT_COUNT; i++)
        if (formats[i].menu_key == digit && (formats[i].in_page || !browser)) return &formats[i];
    return NULL;
}

void export_format_list(char *out, size_t n, bool animated_only)
{
    int count = 0, k = 0;
    for (int i = 0; i < EXPORT_FORMAT_COUNT; i++) count += !animated_only || formats[i].animated;
    size_t used = 0;
    out[0] = '\0';
    for (int i = 0; i < EXPORT_FORMAT_COUNT && used < n; i++) {
        if (animated_only && !formats[i].animated) continue;
        const char *sep = k == 0 ? "" : k == count - 1 ? " or " : ", ";
        used += (size_t)snprintf(out + used, n - used, "%s%s", sep, formats[i].ext);
        k++;
    }
}
