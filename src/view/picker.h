// picker.h — the lesson picker: which lesson files there are, their titles in
// both languages (or why they are invalid), the selection and the overlay's
// geometry. Plain state and pure functions, no SDL: the window feeds it keys
// and clicks (app.c), render_frame draws it (picker_draw.c); tests drive it
// directly. Like playback, it is view state: it sits in src/view.
#ifndef ATTNVIZ_PICKER_H
#define ATTNVIZ_PICKER_H

#include <stdbool.h>
#include <stddef.h>

#include "layout.h" // Rect, Layout
#include "lesson.h" // Lang

#define PICKER_MAX_DIRS 8
#define PICKER_MAX_ITEMS 1000
#define PICKER_MAX_ROWS 40 // rows shown at once
// What a scan may cost (issue 15): a title is read from a file's first 16 KiB;
// files up to 256 KiB are also checked in full, 8 MiB of them a scan at most.
#define PICKER_PEEK_BYTES (16u << 10)
#define PICKER_CHECK_BYTES (256u << 10)
#define PICKER_CHECK_TOTAL (8u << 20)
// A directory's suggested teaching order: a text file of lesson file names, one a line
// ("#" starts a comment); lessons/README.md gives the shipped order.
#define PICKER_ORDER_FILE "order.txt"
#define PICKER_ORDER_BYTES (64u << 10)
// A directory's lessons that are not there yet (the page: fetched when opened, issue 39): a JSON
// file {"lessons": [{"file": NAME.json, "title": as the lesson's, "bytes": N, ...}]}, written by
// src/web/lesson_manifest.py; its files missing from the directory are listed from it.
#define PICKER_MANIFEST_FILE "lessons.manifest"
#define PICKER_MANIFEST_BYTES (256u << 10)

typedef struct PickerItem {
    char *path;               // directory + "/" + name, as it is opened
    const char *name;         // the file name, inside path
    char *shown;              // path as shown: "dir/../" folded, relative to the working directory
    char *short_name;         // what the picker writes under the title: the file name without
                              // ".json", or `shown` when another item has the same name
    int order;                // its place in its directory's suggested order (PICKER_ORDER_FILE), from 1; 0 none
    int dir;                  // the directory it was listed from (its index among those scanned)
    char *title[LANG_COUNT];  // NULL when invalid; zh NULL falls back to en
    char *error;              // lesson_load's one-line error; NULL when valid (or unchecked)
    bool unchecked;           // too large to check in the picker: its title only, checked when opened
    bool remote;              // listed by its directory's PICKER_MANIFEST_FILE, not in it yet (unchecked too)
    bool studied;             // the study mode's score is kept for it (the window fills these in)
    int study_right, study_answered, study_total;
} PickerItem;

typedef struct Picker {
    bool open;
    PickerItem *items;
    int n;
    int sel;                  // selected item, -1 when there is none
    int top;                  // first row shown
    int current;              // the lesson on screen, -1 when not listed
    char looked_in[1024];     // the directories scanned, ", "-separated (for "none found")
    const char *title_key;    // the overlay's heading and key hint (i18n keys; NULL: the lesson
    const char *hint_key;     // picker's "picker.title", "picker.hint"), a list of another kind's
} Picker;

void picker_init(Picker *p);
void picker_free(Picker *p);

// Lists the *.json files of each directory in dirs (NULL entries, missing
// directories and directories already listed (same device and inode) are
// skipped), reads each one's titles from its start (lesson_peek_title) and
// checks it with lesson_load when it is small enough (PICKER_CHECK_*) for its
// error, adds the lessons a directory's PICKER_MANIFEST_FILE names that it does not hold
// (remote: their titles from the manifest), sorts them — the lessons a directory's PICKER_ORDER_FILE names first, in
// its order (the first directory's first), then the others by file name (then by
// path) —, marks and selects current_path (else the first item). Replaces what was
// listed before. Returns the number of items.
int picker_scan(Picker *p, const char *const *dirs, int n_dirs, const char *current_path);

// Appends an item of another list than lessons (the compare menu's): its path (what choosing it
// opens), the line under its title and its titles (zh NULL: en's). False when out of memory.
bool picker_add(Picker *p, const char *path, const char *short_name, const char *title_en, const char *title_zh);

// path with "." and "dir/.." folded away (lexically) and, when it lies under
// cwd (may be NULL), made relative to it: what the picker shows.
void picker_display_path(const char *path, const char *cwd, char *out, size_t n);

// The title of an item in lang (zh falls back to en); the file name when invalid.
const char *picker_title(const PickerItem *it, Lang lang);

// Moves the selection by delta items, clamped to the list.
void picker_move(Picker *p, int delta);
// Selects item i, clamped to the list.
void picker_select(Picker *p, int i);
// Scrolls so the selection is among the `rows` rows shown.
void picker_scroll_to_sel(Picker *p, int rows);

// The overlay's geometry for a w×h output at UI scale s.
typedef struct PickerLayout {
    Rect box, title, hint;        // dialog, heading, key hint at its bottom
    int row_h;
    int rows_fit;                 // rows that fit (≤ PICKER_MAX_ROWS)
    int n_rows;                   // rows shown (≤ rows_fit)
    int first;                    // item in row 0
    Rect row[PICKER_MAX_ROWS];
    int px_title, px_row, px_small;
} PickerLayout;

// Fills pl for p (call picker_scroll_to_sel(p, pl->rows_fit) after moving).
void picker_layout(const Picker *p, PickerLayout *pl, int w, int h, float s);
// The item under (x, y), or -1.
int picker_hit(const PickerLayout *pl, const Picker *p, int x, int y);

// The "Lessons…" button at the right end of the status row of L; false when
// the row is too narrow for it.
bool picker_button_rect(const Layout *L, Rect *out);
// The width the button and its gap take from the status row (0 without a picker).
int picker_button_reserve(const Layout *L, const Picker *picker);

#endif
