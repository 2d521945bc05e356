// png_write.h — RGBA8 pixels to a PNG file with libspng, atomically: the data
// goes to a temporary file in the same directory, then rename() puts it in
// place, so a half-written PNG never appears under the final name.
#ifndef ATTNVIZ_PNG_WRITE_H
#define ATTNVIZ_PNG_WRITE_H

#include <stdbool.h>
#include <stddef.h>

// pixels: h rows of w RGBA8 pixels (bytes R,G,B,A in memory), rows pitch bytes apart.
// The PNG is RGB (the alpha byte is dropped: frames are opaque), unfiltered.
// zlib_level 0..9 (-1 = libspng default). On failure returns false with one
// line naming the path in err. user_target: a file the user named (--icon): checked
// and written as temp_file_open_target says (not a device, a link written through,
// the mode kept, fsync'ed); else a name attnviz chose (export frames, S).
bool png_write_rgba(const char *path, const void *pixels, int w, int h, int pitch, int zlib_level,
                    bool user_target, char *err, size_t err_len);

#endif
