// temp_file.c — exclusive temporary files for atomic writes (see temp_file.h).
#include "temp_file.h"

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

FILE *temp_file_create(const char *path, char *tmp, size_t tmp_n)
{
    for (int attempt = 0; attempt < 100; attempt++) {
        if ((size_t)snprintf(tmp, tmp_n, "%s.tmp-%ld-%08llx", path, (long)getpid(),
                             (unsigned long long)(next_random() & 0xffffffffull)) >= tmp_n) {
            errno = ENAMETOOLONG;
            return NULL;
        }
        int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
        if (fd < 0) {
            if (errno == EEXIST) continue;   // taken (or planted): another name
            return NULL;
        }
        FILE *f = fdopen(fd, "wb");
        if (!f) {
            int e = errno;
            close(fd);
            unlink(tmp);
            errno = e;
        }
        return f;
    }
    errno = EEXIST;
    return NULL;
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
