// user_dir.h — where attnviz keeps the user's files, worked out in one place
// (XDG Base Directory rules): $XDG_DATA_HOME/attnviz when XDG_DATA_HOME is an
// absolute path, else $HOME/.local/share/attnviz when HOME is one; else nowhere
// (relative or empty values are ignored, as the specification says).
// progress.json and the lessons Ctrl+S saves (lessons/) live there.
#ifndef ATTNVIZ_USER_DIR_H
#define ATTNVIZ_USER_DIR_H

#include <stdbool.h>
#include <stddef.h>

// The folder itself; false (out empty) when there is none or it does not fit.
bool user_data_dir(char *out, size_t n);
// A name inside it ("progress.json", "lessons"); false (out empty) as above.
bool user_data_path(const char *name, char *out, size_t n);

#endif
