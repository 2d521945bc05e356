// geom.h — a rectangle on screen and a colour, the two plain values every layer that
// places or paints something passes around (a leaf: no other include).
#ifndef ATTNVIZ_GEOM_H
#define ATTNVIZ_GEOM_H

#include <stdint.h>

typedef struct Rect {
    int x, y, w, h;
} Rect;

typedef struct Rgb {
    uint8_t r, g, b;
} Rgb;

#endif
