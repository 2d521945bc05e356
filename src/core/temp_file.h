// temp_file.h — files written atomically: a temporary file created exclusively
// beside the target (O_CREAT|O_EXCL|O_NOFOLLOW, an unpredictable name), then
// renamed over it. A link planted in a shared folder is never followed.
#ifndef ATTNVIZ_TEMP_FILE_H
#define ATTNVIZ_TEMP_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

// Creates "PATH.tmp-PID-XXXXXXXX" (random hex; another name is tried when one
// exists) for writing and returns it as a stream, its name in tmp; NULL with
// errno set when it cannot be created.
FILE *temp_file_create(const char *path, char *tmp, size_t tmp_n);

// True when name (a directory entry) is one of the temporary names above for
// a target named *.png, *.svg, *.pdf, *.gif, *.mp4 or frames.json: what an export left behind when killed.
bool temp_file_is_export_leftover(const char *name);

// Creates dir and its missing parents (mode 0755), as mkdir -p; false with errno set.
bool temp_file_make_dirs(const char *dir);

#endif
