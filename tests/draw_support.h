// draw_support.h — shared set-up of the drawing tests (test_render, test_i18n):
// the interface strings from assets/ and one set of fonts. Include once, in a
// test's .c file; it defines the cmocka group set-up and tear-down.
#ifndef ATTNVIZ_DRAW_SUPPORT_H
#define ATTNVIZ_DRAW_SUPPORT_H

#include <stdio.h>

#include "i18n.h"
#include "text.h"

static Fonts *fonts;

static int draw_setup(Lang lang)
{
    char err[600];
    if (!i18n_load("assets", err, sizeof err)) {
        fprintf(stderr, "%s\n", err);
        return -1;
    }
    fonts = fonts_create(NULL, lang, err, sizeof err);
    if (!fonts) fprintf(stderr, "%s\n", err);
    return fonts ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    fonts_destroy(fonts);
    i18n_free();
    return 0;
}

#endif
