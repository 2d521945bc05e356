// picker.c — listing lesson files and moving through them (see picker.h).
#include "picker.h"

#include <dirent.h>
#include <limits.h>
#include <math.h>
#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "jsonpath.h"

void picker_init(Picker *p)
{
    memset(p, 0, sizeof *p);
    p->sel = p->current = -1;
}

static void item_free(PickerItem *it)
{
    free(it->path);
    free(it->shown);
    free(it->short_name);
    for (int l = 0; l < LANG_COUNT; l++) free(it->title[l]);
    free(it->error);
}

void picker_free(Picker *p)
{
    for (int i = 0; i < p->n; i++) item_free(&p->items[i]);
    free(p->items);
    bool open = p->open;
    picker_init(p);
    p->open = open;
}

static char *dup_str(const char *s)
{
    if (!s) return NULL;
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d) memcpy(d, s, n);
    return d;
}

static bool ends_with_json(const char *name)
{
    size_t n = strlen(name);
    return n > 5 && strcmp(name + n - 5, ".json") == 0 && name[0] != '.';
}

void picker_display_path(const char *path, const char *cwd, char *out, size_t n)
{
    // split into segments, dropping "." and folding "name/.." (lexically)
    char buf[PATH_MAX];
    snprintf(buf, sizeof buf, "%s", path);
    const char *seg[256];
    int k = 0;
    bool abs = buf[0] == '/';
    for (char *save = NULL, *t = strtok_r(buf, "/", &save); t && k < 256; t = strtok_r(NULL, "/", &save)) {
        if (strcmp(t, ".") == 0) continue;
        if (strcmp(t, "..") == 0 && k > 0 && strcmp(seg[k - 1], "..") != 0) {
            k--;
            continue;
        }
        seg[k++] = t;
    }
    char norm[PATH_MAX];
    size_t len = 0;
    norm[0] = '\0';
    for (int i = 0; i < k; i++) {
        int w = snprintf(norm + len, sizeof norm - len, "%s%s", i || abs ? "/" : "", seg[i]);
        if (w < 0 || (size_t)w >= sizeof norm - len) break; // a path longer than PATH_MAX (a folder's, a file's name)
        len += (size_t)w;
    }
    size_t cl = cwd ? strlen(cwd) : 0;
    if (abs && cl > 1 && strncmp(norm, cwd, cl) == 0 && norm[cl] == '/')
        snprintf(out, n, "%s", norm + cl + 1); // under the working directory: relative
    else
        snprintf(out, n, "%s", len ? norm : path);
}

// Reads one lesson file into an item: its titles, or its one-line error. The
// title comes from the file's first PICKER_PEEK_BYTES; a file up to
// PICKER_CHECK_BYTES is also checked in full while the scan's *budget of bytes
// to check lasts, a larger one when it is opened. So a folder of huge or
// hostile files costs at most PICKER_CHECK_TOTAL bytes of parsing and
// PICKER_PEEK_BYTES of reading a file, on the window's thread.
static bool item_load(PickerItem *it, const char *dir, const char *name, const char *cwd, size_t *budget)
{
    memset(it, 0, sizeof *it);
    size_t dl = strlen(dir), nl = strlen(name);
    while (dl > 1 && dir[dl - 1] == '/') dl--;
    it->path = malloc(dl + 1 + nl + 1);
    if (!it->path) return false;
    memcpy(it->path, dir, dl);
    it->path[dl] = '/';
    memcpy(it->path + dl + 1, name, nl + 1);
    it->name = it->path + dl + 1;
    char shown[PATH_MAX];
    picker_display_path(it->path, cwd, shown, sizeof shown);
    it->shown = dup_str(shown);
    if (!it->shown) return false;
    Lesson ls;
    char err[LESSON_ERR_MAX];
    size_t size = 0;
    bool peeked = lesson_peek_title(it->path, PICKER_PEEK_BYTES, it->title, &size, err, sizeof err);
    if (!peeked && err[0]) {   // cannot be opened or read: not a regular file, no permission
        it->error = dup_str(err);
        return it->error != NULL;
    }
    if (size > PICKER_CHECK_BYTES || size > *budget) {
        it->unchecked = true;   // checked when opened (the window shows its error then)
        return true;
    }
    *budget -= size;
    for (int l = 0; l < LANG_COUNT; l++) free(it->title[l]), it->title[l] = NULL;
    if (lesson_load(&ls, it->path, err, sizeof err)) {
        for (int l = 0; l < LANG_COUNT; l++) it->title[l] = dup_str(ls.title[l]);
        lesson_free(&ls);
        if (!it->title[LANG_EN]) it->error = dup_str("out of memory");
    } else {
        it->error = dup_str(err);
    }
    return it->title[LANG_EN] || it->error;
}

// The place of each item of dir (items[first..n), the dir-th directory listed) in dir's
// order file, if it has one: a line is a file name (spaces around it and "#…" ignored); at
// most PICKER_ORDER_BYTES read.
static void read_order(const char *dir, PickerItem *items, int first, int n, int dir_index)
{
    for (int i = first; i < n; i++) items[i].dir = dir_index;
    char path[PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/%s", dir, PICKER_ORDER_FILE);
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISREG(st.st_mode)) return; // (not a FIFO: never blocks)
    FILE *f = fopen(path, "r");
    if (!f) return;
    char line[512];
    size_t read = 0;
    for (int k = 1; read < PICKER_ORDER_BYTES && fgets(line, sizeof line, f);) {
        read += strlen(line);
        char *hash = strchr(line, '#');
        if (hash) *hash = '\0';
        char *b = line, *e = line + strlen(line);
        while (*b == ' ' || *b == '\t') b++;
        while (e > b && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\n' || e[-1] == '\r')) e--;
        *e = '\0';
        if (!*b) continue;
        for (int i = first; i < n; i++)
            if (!items[i].order && strcmp(items[i].name, b) == 0) items[i].order = k++;
    }
    fclose(f);
}

// The lessons dir's PICKER_MANIFEST_FILE names that are not among items[first..*n) (the page's
// lessons not fetched yet): items with the manifest's titles (read as a lesson's, by
// lesson_read_text), remote and unchecked. A manifest that cannot be read, or an entry without a
// plain file name or a title: skipped (the files that are there are listed all the same).
static void add_manifest(Picker *p, const char *dir, int first, int *cap, const char *cwd)
{
    char path[PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/%s", dir, PICKER_MANIFEST_FILE);
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size > (off_t)PICKER_MANIFEST_BYTES) return;
    FILE *f = fopen(path, "rb");
    if (!f) return;
    char *text = malloc((size_t)st.st_size + 1);
    size_t n = text ? fread(text, 1, (size_t)st.st_size, f) : 0;
    fclose(f);
    cJSON *root = text ? cJSON_ParseWithLength(text, n) : NULL;
    free(text);
    const cJSON *list = cJSON_GetObjectItemCaseSensitive(root, "lessons"), *e;
    if (!cJSON_IsArray(list)) list = NULL;
    cJSON_ArrayForEach(e, list) {
        const char *file = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(e, "file"));
        const cJSON *title = cJSON_GetObjectItemCaseSensitive(e, "title");
        if (!file || !ends_with_json(file) || strchr(file, '/') || !title || p->n >= PICKER_MAX_ITEMS) continue;
        bool here = false;
        for (int i = first; i < p->n && !here; i++) here = strcmp(p->items[i].name, file) == 0;
        if (here) continue;
        if (p->n == *cap) {
            int nc = *cap ? *cap * 2 : 16;
            PickerItem *ni = realloc(p->items, (size_t)nc * sizeof *ni);
            if (!ni) break;
            p->items = ni, *cap = nc;
        }
        PickerItem *it = &p->items[p->n];
        memset(it, 0, sizeof *it);
        char err[LESSON_ERR_MAX], shown[PATH_MAX];
        JsonCtx ctx = {path, err, sizeof err, false, false};
        size_t dl = strlen(dir), fl = strlen(file);
        it->path = malloc(dl + 1 + fl + 1);
        if (it->path) {
            memcpy(it->path, dir, dl), it->path[dl] = '/', memcpy(it->path + dl + 1, file, fl + 1);
            it->name = it->path + dl + 1;
            picker_display_path(it->path, cwd, shown, sizeof shown);
            it->shown = dup_str(shown);
        }
        it->remote = it->unchecked = true;
        if (it->shown && lesson_read_text(&ctx, title, "title", false, it->title) && it->title[LANG_EN])
            p->n++;
        else
            item_free(it);
    }
    cJSON_Delete(root);
}

static int item_cmp(const void *a, const void *b)
{
    const PickerItem *x = a, *y = b;
    if ((x->order > 0) != (y->order > 0)) return x->order > 0 ? -1 : 1; // the suggested order first
    if (x->order && x->dir != y->dir) return x->dir < y->dir ? -1 : 1;
    if (x->order != y->order) return x->order < y->order ? -1 : 1;
    int c = strcmp(x->name, y->name);
    return c ? c : strcmp(x->path, y->path);
}

// The line under each title: the file name without ".json", or its path where two
// items share a name (NULL when out of memory).
static void short_names(Picker *p)
{
    for (int i = 0; i < p->n; i++) {
        PickerItem *it = &p->items[i];
        bool twin = false;
        for (int j = 0; j < p->n && !twin; j++) twin = j != i && strcmp(p->items[j].name, it->name) == 0;
        size_t len = strlen(it->name) - 5; // (ends_with_json)
        it->short_name = twin ? dup_str(it->shown) : malloc(len + 1);
        if (it->short_name && !twin) memcpy(it->short_name, it->name, len), it->short_name[len] = '\0';
    }
}

static bool same_file(const char *a, const char *b)
{
    struct stat sa, sb;
    return a && b && stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

bool picker_add(Picker *p, const char *path, const char *short_name, const char *title_en, const char *title_zh)
{
    if (p->n >= PICKER_MAX_ITEMS) return false;
    PickerItem *items = realloc(p->items, (size_t)(p->n + 1) * sizeof *items);
    if (!items) return false;
    p->items = items;
    PickerItem *it = &items[p->n];
    memset(it, 0, sizeof *it);
    it->path = dup_str(path), it->shown = dup_str(path), it->short_name = dup_str(short_name);
    it->name = it->path;
    it->title[LANG_EN] = dup_str(title_en), it->title[LANG_ZH] = dup_str(title_zh);
    if (!it->path || !it->shown || !it->short_name || !it->title[LANG_EN] || (title_zh && !it->title[LANG_ZH])) {
        item_free(it);
        return false;
    }
    p->n++;
    if (p->sel < 0) p->sel = 0;
    return true;
}

int picker_scan(Picker *p, const char *const *dirs, int n_dirs, const char *current_path)
{
    bool open = p->open;
    picker_free(p);
    p->open = open;
    int cap = 0;
    char cwd[PATH_MAX];
    bool have_cwd = getcwd(cwd, sizeof cwd) != NULL;
    struct stat seen[PICKER_MAX_DIRS]; // directories listed: same device and inode = same directory
    int n_seen = 0;
    size_t used = 0, budget = PICKER_CHECK_TOTAL;
    for (int d = 0; d < n_dirs && d < PICKER_MAX_DIRS; d++) {
        if (!dirs[d] || !dirs[d][0]) continue;
        struct stat ds;
        if (stat(dirs[d], &ds) != 0 || !S_ISDIR(ds.st_mode)) continue;
        bool dup = false;
        for (int k = 0; k < n_seen; k++) dup |= seen[k].st_dev == ds.st_dev && seen[k].st_ino == ds.st_ino;
        if (dup) continue;
        seen[n_seen++] = ds;
        int w = snprintf(p->looked_in + used, sizeof p->looked_in - used, "%s%s", used ? ", " : "", dirs[d]);
        if (w > 0) used = used + (size_t)w < sizeof p->looked_in ? used + (size_t)w : sizeof p->looked_in - 1;
        DIR *dh = opendir(dirs[d]);
        if (!dh) continue;
        int first = p->n;
        for (struct dirent *e; (e = readdir(dh)) && p->n < PICKER_MAX_ITEMS;) {
            if (!ends_with_json(e->d_name)) continue;
            char path[PATH_MAX + 256];
            snprintf(path, sizeof path, "%s/%s", dirs[d], e->d_name);
            struct stat st;
            if (stat(path, &st) != 0 || !S_ISREG(st.st_mode)) continue;
            if (p->n == cap) {
                int nc = cap ? cap * 2 : 16;
                PickerItem *ni = realloc(p->items, (size_t)nc * sizeof *ni);
                if (!ni) break;
                p->items = ni, cap = nc;
            }
            if (item_load(&p->items[p->n], dirs[d], e->d_name, have_cwd ? cwd : NULL, &budget))
                p->n++;
            else
                item_free(&p->items[p->n]);
        }
        closedir(dh);
        add_manifest(p, dirs[d], first, &cap, have_cwd ? cwd : NULL);
        read_order(dirs[d], p->items, first, p->n, n_seen - 1);
    }
    if (p->n > 1) qsort(p->items, (size_t)p->n, sizeof p->items[0], item_cmp);
    short_names(p); // (out of memory: the items without one show their path)
    for (int i = 0; i < p->n && p->current < 0; i++)
        if (same_file(p->items[i].path, current_path)) p->current = i;
    p->sel = p->n == 0 ? -1 : p->current >= 0 ? p->current : 0;
    p->top = 0;
    return p->n;
}

const char *picker_title(const PickerItem *it, Lang lang)
{
    if (!it->title[LANG_EN]) return it->name;
    assert((unsigned)lang < LANG_COUNT);
    if (it->title[lang]) return it->title[lang];
    return it->title[LANG_EN];
}

void picker_select(Picker *p, int i)
{
    if (p->n == 0) {
        p->sel = -1;
        return;
    }
    p->sel = i < 0 ? 0 : i >= p->n ? p->n - 1 : i;
}

void picker_move(Picker *p, int delta)
{
    picker_select(p, (p->sel < 0 ? 0 : p->sel) + delta);
}

void picker_scroll_to_sel(Picker *p, int rows)
{
    if (rows < 1) rows = 1;
    if (p->sel >= 0 && p->sel < p->top) p->top = p->sel;
    if (p->sel >= p->top + rows) p->top = p->sel - rows + 1;
    if (p->top > p->n - rows) p->top = p->n - rows;
    if (p->top < 0) p->top = 0;
}

static int px(float s, float base)
{
    int v = 2 * (int)lrintf(base * s * 0.5f);
    return v < 8 ? 8 : v;
}

void picker_layout(const Picker *p, PickerLayout *pl, int w, int h, float s)
{
    memset(pl, 0, sizeof *pl);
    pl->px_title = px(s, 24), pl->px_row = px(s, 20), pl->px_small = px(s, 15);
    int pad = (int)lrintf(18 * s);
    int bw = (int)fminf((float)w * 0.8f, 960.0f * s), bh = (int)((float)h * 0.84f);
    pl->box = (Rect){(w - bw) / 2, (h - bh) / 2, bw, bh};
    pl->title = (Rect){pl->box.x + pad, pl->box.y + pad, bw - 2 * pad, pl->px_title * 14 / 10};
    int hint_h = pl->px_small * 14 / 10;
    pl->hint = (Rect){pl->box.x + pad, pl->box.y + bh - pad - hint_h, bw - 2 * pad, hint_h};
    // one row: the title, then the file name (and the error) in small type
    pl->row_h = pl->px_row * 13 / 10 + pl->px_small * 13 / 10 + (int)lrintf(10 * s);
    int list_y = pl->title.y + pl->title.h + (int)lrintf(10 * s);
    int list_h = pl->hint.y - (int)lrintf(8 * s) - list_y;
    int rows = pl->row_h > 0 ? list_h / pl->row_h : 0;
    if (rows > PICKER_MAX_ROWS) rows = PICKER_MAX_ROWS;
    if (rows < 1) rows = 1;
    pl->rows_fit = rows;
    int top = p->top > p->n - rows ? p->n - rows : p->top;
    if (top < 0) top = 0;
    pl->first = top;
    pl->n_rows = p->n - top < rows ? p->n - top : rows;
    for (int i = 0; i < pl->n_rows; i++)
        pl->row[i] = (Rect){pl->box.x + pad, list_y + i * pl->row_h, bw - 2 * pad, pl->row_h - 2};
}

int picker_hit(const PickerLayout *pl, const Picker *p, int x, int y)
{
    for (int i = 0; i < pl->n_rows; i++)
        if (rect_contains(pl->row[i], x, y) && pl->first + i < p->n) return pl->first + i;
    return -1;
}

bool picker_button_rect(const Layout *L, Rect *out)
{
    int bw = (int)lrintf(108 * L->s), inset = (int)lrintf(4 * L->s);
    Rect s = L->status;
    if (s.w < bw + (int)lrintf(40 * L->s)) return false;
    *out = (Rect){s.x + s.w - bw, s.y + inset, bw, s.h - 2 * inset};
    return true;
}

int picker_button_reserve(const Layout *L, const Picker *picker)
{
    Rect b;
    if (!picker || !picker_button_rect(L, &b)) return 0;
    int gap = (int)lrintf(16 * L->s);
    return b.w + (gap < 1 ? 1 : gap);
}
