// temp_file.c — exclusive temporary files for atomic writes (see temp_file.h).
#define _DEFAULT_SOURCE // realpath, dirfd
#include "temp_file.h"

#include <dirent.h>
#include <signal.h>
#include <stdlib.h>

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

// splitmix64 over the clock, the process id and a counter: names that another
// user cannot guess in advance (O_EXCL makes a guess harmless anyway).
static uint64_t next_random(void)
{
    static atomic_uint_fast64_t counter;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    uint64_t z = (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 30) ^ ((uint64_t)getpid() << 40);
    z += (atomic_fetch_add(&counter, 1) + 1) * 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

// Creates an exclusive temporary file for path; its descriptor, -1 with errno.
static int create_fd(const char *path, char *tmp, size_t tmp_n)
{
    for (int attempt = 0; attempt < 100; attempt++) {
        if ((size_t)snprintf(tmp, tmp_n, "%s.tmp-%ld-%08llx", path, (long)getpid(),
                             (unsigned long long)(next_random() & 0xffffffffull)) >= tmp_n) {
            errno = ENAMETOOLONG;
            return -1;
        }
        int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
        if (fd >= 0 || errno != EEXIST) return fd; // EEXIST: taken (or planted), another name
    }
    errno = EEXIST;
    return -1;
}

static FILE *stream(int fd, const char *tmp)
{
    FILE *f = fdopen(fd, "wb");
    if (!f) {
        int e = errno;
        close(fd);
        unlink(tmp);
        errno = e;
    }
    return f;
}

FILE *temp_file_create(const char *path, char *tmp, size_t tmp_n)
{
    int fd = create_fd(path, tmp, tmp_n);
    return fd < 0 ? NULL : stream(fd, tmp);
}

static bool copy_name(char *out, size_t n, const char *s)
{
    if ((size_t)snprintf(out, n, "%s", s) >= n) return errno = ENAMETOOLONG, false;
    return true;
}

bool temp_file_target(const char *path, char *real, size_t real_n)
{
    struct stat st;
    if (lstat(path, &st) != 0) return errno == ENOENT ? copy_name(real, real_n, path) : false;
    if (S_ISLNK(st.st_mode)) {
        char *r = realpath(path, NULL);
        if (!r) {
            if (errno == ENOENT || errno == ELOOP) errno = TEMP_FILE_EDANGLING;
            return false;
        }
        bool ok = stat(r, &st) == 0;
        if (ok && !S_ISREG(st.st_mode)) errno = TEMP_FILE_ENOTREG, ok = false;
        ok = ok && copy_name(real, real_n, r);
        free(r);
        return ok;
    }
    if (!S_ISREG(st.st_mode)) return errno = TEMP_FILE_ENOTREG, false;
    return copy_name(real, real_n, path);
}

FILE *temp_file_open_target(const char *path, char *tmp, size_t tmp_n)
{
    char real[4096];
    if (!temp_file_target(path, real, sizeof real)) return NULL;
    temp_file_clean_stale(real);
    int fd = create_fd(real, tmp, tmp_n);
    if (fd < 0) { // the folder is the problem, not a temporary name: said so
        if (errno == EACCES || errno == EPERM) errno = TEMP_FILE_EFOLDER;
        else if (errno == ENOENT) errno = TEMP_FILE_ENOFOLDER;
        return NULL;
    }
    struct stat st;   // the target's mode is kept (a new file: 0666 less the umask, as open gave)
    if (stat(real, &st) == 0 && fchmod(fd, st.st_mode & 07777) != 0) {
        int e = errno;
        close(fd);
        unlink(tmp);
        errno = e;
        return NULL;
    }
    return stream(fd, tmp);
}

int temp_file_rename(const char *tmp, const char *path)
{
    char real[4096];
    int e = 0;
    if (!temp_file_target(path, real, sizeof real)) e = errno;
    else if (rename(tmp, real) != 0) e = errno;
    if (e) unlink(tmp);
    return e;
}

int temp_file_finish(FILE *f, const char *tmp, const char *path)
{
    int e = 0;
    if (ferror(f)) e = errno ? errno : EIO;
    if (!e && fflush(f) != 0) e = errno;
    if (!e && fsync(fileno(f)) != 0) e = errno;
    if (fclose(f) != 0 && !e) e = errno;
    if (e) {
        unlink(tmp);
        return e;
    }
    return temp_file_rename(tmp, path);
}

const char *temp_file_strerror(int e)
{
    if (e == TEMP_FILE_ENOTREG) return "it exists and is not a regular file";
    if (e == TEMP_FILE_EDANGLING) return "a symbolic link to a file that does not exist";
    if (e == TEMP_FILE_EFOLDER) return "no permission to create a file in its folder";
    if (e == TEMP_FILE_ENOFOLDER) return "its folder does not exist";
    return strerror(e);
}

int temp_file_clean_stale(const char *path)
{
    char dir[4096];
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    if (!slash) snprintf(dir, sizeof dir, ".");
    else if ((size_t)(slash - path) >= sizeof dir) return 0;
    else if (slash == path) snprintf(dir, sizeof dir, "/");
    else snprintf(dir, sizeof dir, "%.*s", (int)(slash - path), path);
    size_t bl = strlen(base);
    DIR *d = opendir(dir);
    if (!d) return 0;
    int removed = 0;
    for (struct dirent *e; (e = readdir(d));) {
        const char *n = e->d_name;
        if (strncmp(n, base, bl) != 0 || strncmp(n + bl, ".tmp-", 5) != 0) continue;
        const char *p = n + bl + 5;
        char *end;
        errno = 0;
        long pid = strtol(p, &end, 10);
        if (end == p || *end != '-' || errno || pid <= 0 || pid == (long)getpid()) continue;
        if (strlen(end + 1) != 8 || strspn(end + 1, "0123456789abcdef") != 8) continue;
        if (kill((pid_t)pid, 0) == 0 || errno != ESRCH) continue; // still running (or not ours to ask)
        if (unlinkat(dirfd(d), n, 0) == 0) removed++;
    }
    closedir(d);
    return removed;
}

bool temp_file_is_export_leftover(const char *name)
{
    const char *t = strstr(name, ".tmp-");
    if (!t) return false;
    size_t stem = (size_t)(t - name);
    bool png = stem > 4 && (memcmp(t - 4, ".png", 4) == 0 || memcmp(t - 4, ".svg", 4) == 0 ||
                            memcmp(t - 4, ".pdf", 4) == 0 || memcmp(t - 4, ".gif", 4) == 0 ||
                            memcmp(t - 4, ".mp4", 4) == 0);
    bool index = stem == 12 && memcmp(name, ".frames.json", 12) == 0;
    if (!png && !index) return false;
    for (const char *p = t + 5; *p; p++)   // -PID-HEX or the older -PID
        if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f') || *p == '-')) return false;
    return true;
}

bool temp_file_make_dirs(const char *dir)
{
    char buf[1200];
    if (strlen(dir) >= sizeof buf) return errno = ENAMETOOLONG, false;
    snprintf(buf, sizeof buf, "%s", dir);
    for (char *p = buf + 1; *p; p++) {
        if (*p != '/') continue;
        *p = '\0';
        if (mkdir(buf, 0755) != 0 && errno != EEXIST) return false;
        *p = '/';
    }
    return mkdir(buf, 0755) == 0 || errno == EEXIST;
}
