// export_format.h — every export format as one row of one table, and each format's
// writer behind one small interface, in the manner of stb_image_write: a writer gets a
// frame (its pixels, or a canvas to draw it on) and writes it to its sink.
//
// A row: the format's id and extension (also --format's name and frames.json's
// "format"), how its frames reach the writer (kind), one file for every frame or a file
// a frame, whether it is an animation of the transitions (it needs --animate; --hold and
// --split go with it; the window's E animates it), whether its width and height must be
// even, the digit that picks it after E in the window (0: not in that menu) and whether
// the page (the browser build, src/web) makes it.
//
// Adding a format (WebP, APNG, …): a row in EXPORT_FORMATS and its writer,
// export_writer_EXT, in export_sinks.c; tests/test_export_formats.c walks the table.
#ifndef ATTNVIZ_EXPORT_FORMAT_H
#define ATTNVIZ_EXPORT_FORMAT_H

#include <stdbool.h>
#include <stddef.h>

#include "paint.h"

// How a format's frames reach its writer.
typedef enum ExportKind {
    EXPORT_RASTER, // each frame's pixels, a file a frame, written by encoder threads
    EXPORT_VECTOR, // each frame drawn on the writer's vector canvas (text stays text)
    EXPORT_VIDEO,  // each frame's pixels into one animation, in order, on the drawing thread
} ExportKind;

typedef enum ExportFiles {
    EXPORT_FILE_A_FRAME, // DIR/NNNN-STAGE.EXT
    EXPORT_ONE_FILE,     // DIR/frames.EXT (an animation with --split: NNNN-STAGE.EXT a stage)
} ExportFiles;

//  X(ID,  ext, kind,          files,               animation, even size, E menu key, in the page)
#define EXPORT_FORMATS(X)                                                          \
    X(PNG, png, EXPORT_RASTER, EXPORT_FILE_A_FRAME, false,     false,     1,          true)  \
    X(SVG, svg, EXPORT_VECTOR, EXPORT_FILE_A_FRAME, false,     false,     5,          true)  \
    X(PDF, pdf, EXPORT_VECTOR, EXPORT_ONE_FILE,     false,     false,     6,          true)  \
    X(GIF, gif, EXPORT_VIDEO,  EXPORT_ONE_FILE,     true,      false,     4,          true)  \
    X(MP4, mp4, EXPORT_VIDEO,  EXPORT_ONE_FILE,     true,      true,      3,          true)

#define EXPORT_FORMAT_ENUM(id, ext, kind, files, animated, even, key, page) EXPORT_##id,
typedef enum ExportFormat { EXPORT_FORMATS(EXPORT_FORMAT_ENUM) EXPORT_FORMAT_COUNT } ExportFormat;
#undef EXPORT_FORMAT_ENUM

// The E menu's other entries: the PDF handout and the PDF worksheet (handout.h), documents
// rather than frames; and whether the page makes them (it has cairo: src/web/sysroot.sh).
#define EXPORT_MENU_HANDOUT 2
#define EXPORT_MENU_WORKSHEET 7
#define EXPORT_HANDOUT_IN_PAGE true

// Messages name a path and a reason; paths longer than the message are cut.
#define EXPORT_PATH_IN_MSG 400

// --- the writers' interface -----------------------------------------------------------

// Where a writer writes: the frames' size and the export's settings, and the writer's
// own state from open to close (a PDF document, a video, the vector canvas).
typedef struct ExportSink {
    int w, h, fps, zlib_level;
    void *state;
} ExportSink;

// Draws the frame on c (a vector writer's canvas).
typedef void (*ExportDrawFn)(Canvas *c, void *ctx);

typedef struct ExportWriter {
    // Opens the one file every frame goes to (path: DIR/frames.EXT; an animation with
    // --split: each stage's NNNN-STAGE.EXT, opened at its first frame), or with path
    // NULL what a file a frame needs (SVG: its canvas); sets s->state. NULL: nothing
    // to open. False with one line naming the file in err.
    bool (*open)(ExportSink *s, const char *path, char *err, size_t n);
    // Raster, video: one frame's pixels (h rows of w RGBA8, stride bytes apart),
    // lasting ticks frames of 1/fps, into path (a file a frame: from any encoder
    // thread, written under a temporary name and renamed) or into the open file.
    bool (*pixels)(ExportSink *s, const char *path, const unsigned char *rgba, int stride, int ticks, char *err,
                   size_t n);
    // Vector: one frame, drawn by draw on the writer's canvas (c's renderer measures
    // text), into path (a file a frame, renamed into place) or a page of the open file.
    bool (*draw)(ExportSink *s, const char *path, const Canvas *c, ExportDrawFn draw, void *ctx, char *err,
                 size_t n);
    // A GIF's palette: the writer sees each frame of its file once before the first
    // is written. NULL: not wanted.
    bool (*wants_observe)(const ExportSink *s);
    void (*observe)(ExportSink *s, const unsigned char *rgba, int stride);
    // Ends what open opened and frees s->state: the file renamed into place when
    // complete, else removed. False (one line in err) when a complete file could not
    // be kept; with !complete it says nothing.
    bool (*close)(ExportSink *s, bool complete, char *err, size_t n);
} ExportWriter;

// --- the table --------------------------------------------------------------------------

typedef struct ExportFormatInfo {
    ExportFormat format;
    const char *ext;       // "png": the files' extension and --format's name
    ExportKind kind;
    ExportFiles files;
    bool animated;         // an animation of the transitions: needs --animate, takes --hold and --split
    bool even_size;        // an even width and height (H.264)
    int menu_key;          // the digit after E in the window, 0: not in the menu
    bool in_page;          // the page (the browser build) makes it
    const ExportWriter *writer;
} ExportFormatInfo;

const ExportFormatInfo *export_format_info(ExportFormat f);
// "png", "svg", "pdf", "gif", "mp4"; and back (false for another name).
const char *export_format_name(ExportFormat f);
bool export_format_parse(const char *s, ExportFormat *f);
// What digit picks in the window's E menu: a format's row, or NULL with *handout true
// for the handout or the worksheet (EXPORT_MENU_HANDOUT, EXPORT_MENU_WORKSHEET), or NULL
// and false for nothing (another key cancels). The page (browser) offers only what it makes.
const ExportFormatInfo *export_format_menu(int digit, bool browser, bool *handout);
// The names of the formats (only the animated ones: animated_only) as a list for a
// message: "png, svg, pdf, gif or mp4".
void export_format_list(char *out, size_t n, bool animated_only);

#endif
