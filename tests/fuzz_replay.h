// fuzz_replay.h — replays every file of a folder through a fuzz target's entry point
// (test_fuzz_regressions, test_fuzz_targets): the seeds and every crash kept. Include
// after <cmocka.h>, <dirent.h>, <stdint.h>, <stdio.h>.
#ifndef ATTNVIZ_FUZZ_REPLAY_H
#define ATTNVIZ_FUZZ_REPLAY_H

// Runs one() on each file of dir (none: 0); the number of files replayed.
static int fuzz_replay(const char *dir, int (*one)(const uint8_t *, size_t))
{
    DIR *d = opendir(dir);
    if (!d) return 0;
    int n = 0;
    struct dirent *de;
    while ((de = readdir(d))) {
        if (de->d_name[0] == '.') continue;
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
        FILE *f = fopen(path, "rb");
        assert_non_null(f);
        static uint8_t buf[1 << 20];
        size_t len = fread(buf, 1, sizeof buf, f);
        fclose(f);
        one(buf, len); // traps on a violation
        n++;
    }
    closedir(d);
    return n;
}

#endif
