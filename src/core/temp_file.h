// temp_file.h — files written atomically: a temporary file created exclusively
// beside the target (O_CREAT|O_EXCL|O_NOFOLLOW, an unpredictable name), then
// renamed over it. A link planted in a shared folder is never followed.
//
// Every file attnviz writes goes through here (one place for temporary names):
//  - temp_file_create: names attnviz chose itself inside a folder it owns for the
//    moment (export frames, frames.json): whatever is at the name is replaced.
//  - temp_file_open_target + temp_file_finish: a file the user named (--save,
//    --handout, --icon, progress.json). The target is checked first: a path that
//    exists and is not a regular file (a device, a FIFO, a folder, a socket) is
//    refused; a symbolic link is written through to the regular file it points to
//    (never replaced by a file), a dangling one refused; the target's mode is kept;
//    the data is fsync'ed before the rename. Temporary files of this target left by
//    a killed attnviz (their process is gone) are removed.
#ifndef ATTNVIZ_TEMP_FILE_H
#define ATTNVIZ_TEMP_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

// errno values of temp_file_open_target beyond the system's (temp_file_strerror).
#define TEMP_FILE_ENOTREG 4096  // the path exists and is not a regular file
#define TEMP_FILE_EDANGLING 4097 // a symbolic link to nothing (or a loop)
#define TEMP_FILE_EFOLDER 4098   // no permission to create a file in the target's folder
#define TEMP_FILE_ENOFOLDER 4099 // the target's folder does not exist

// Creates "PATH.tmp-PID-XXXXXXXX" (random hex; another name is tried when one
// exists) for writing and returns it as a stream, its name in tmp; NULL with
// errno set when it cannot be created.
FILE *temp_file_create(const char *path, char *tmp, size_t tmp_n);

// The target as it will be written: path itself, or the regular file a symbolic
// link leads to. False with errno set (TEMP_FILE_ENOTREG, TEMP_FILE_EDANGLING, or
// the system's) when path cannot be a target.
bool temp_file_target(const char *path, char *real, size_t real_n);

// A temporary file for the target path (checked as above), beside the file it will
// replace, with the mode of that file (new files: 0666 less the umask). NULL with
// errno set.
FILE *temp_file_open_target(const char *path, char *tmp, size_t tmp_n);

// Flushes, fsyncs and closes f, then renames tmp over path's target. 0, or the
// errno of the first failure (tmp is removed then).
int temp_file_finish(FILE *f, const char *tmp, const char *path);

// Renames tmp over path's target (path as temp_file_open_target resolved it); 0 or
// errno (tmp removed).
int temp_file_rename(const char *tmp, const char *path);

// strerror, and the two reasons above in words.
const char *temp_file_strerror(int e);

// Removes "PATH.tmp-PID-HEX" beside path whose process PID no longer runs (what
// a SIGKILLed attnviz left). Returns how many were removed.
int temp_file_clean_stale(const char *path);

// True when name (a directory entry) is one of the temporary names above for
// a target named *.png, *.svg, *.pdf, *.gif, *.mp4 or frames.json: what an export left behind when killed.
bool temp_file_is_export_leftover(const char *name);

// Creates dir and its missing parents (mode 0755), as mkdir -p; false with errno set.
bool temp_file_make_dirs(const char *dir);

#endif
