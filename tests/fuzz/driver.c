/*
** driver.c -- a stand-in for libFuzzer where clang's -fsanitize=fuzzer is
** not available: link it with a target (LLVMFuzzerTestOneInput) and it
** replays every file of the corpus directories given, then runs random
** mutations of them (bit flips, byte changes, inserts, deletes, splices,
** interesting integers) until -max_total_time=SECONDS (default 60).  No
** coverage feedback: it finds less than libFuzzer, but the same crashes
** reproduce in both.  An input that crashes is in crash-<pid>.bin, written
** before each run.  -seed=N replays a run.
*/
#define _DEFAULT_SOURCE
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_INPUT 65536

typedef struct input {
    uint8_t *data;
    size_t size;
} input;

static input *corpus;
static int ncorpus, capcorpus;
static uint64_t rng;

/* xorshift64*: a fast generator, seeded for replay. */
static uint64_t next(void)
{
    rng ^= rng >> 12;
    rng ^= rng << 25;
    rng ^= rng >> 27;
    return rng * 2685821657736338717ULL;
}

/* Add the file PATH to the corpus. */
static void add_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    uint8_t *buf;
    size_t n;

    if (!f)
        return;
    buf = malloc(MAX_INPUT);
    n = buf ? fread(buf, 1, MAX_INPUT, f) : 0;
    fclose(f);
    if (!buf)
        return;
    if (ncorpus == capcorpus) {
        capcorpus = capcorpus ? 2 * capcorpus : 64;
        corpus = realloc(corpus, (size_t)capcorpus * sizeof *corpus);
        if (!corpus)
            exit(2);
    }
    corpus[ncorpus].data = buf;
    corpus[ncorpus++].size = n;
}

/* Add every regular file of DIR (or DIR itself when it is a file). */
static void add_dir(const char *dir)
{
    struct stat sb;
    struct dirent *e;
    DIR *d;
    char path[4096];

    if (stat(dir, &sb) != 0)
        return;
    if (S_ISREG(sb.st_mode)) {
        add_file(dir);
        return;
    }
    if (!(d = opendir(dir)))
        return;
    while ((e = readdir(d))) {
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (stat(path, &sb) == 0 && S_ISREG(sb.st_mode))
            add_file(path);
    }
    closedir(d);
}

/* Run one input, saving it first so that a crash leaves it behind. */
static void run(const char *crash, const uint8_t *data, size_t size)
{
    FILE *f = fopen(crash, "wb");

    if (f) {
        fwrite(data, 1, size, f);
        fclose(f);
    }
    LLVMFuzzerTestOneInput(data, size);
}

/* Mutate BUF (*SIZE bytes of at most MAX_INPUT) in place, a few times. */
static void mutate(uint8_t *buf, size_t *size)
{
    static const int64_t interesting[] = {
        0, 1, -1, 2, 16, 64, 127, 128, 255, 256, 1024, 65535, 65536,
        0x7fffffff, -0x7fffffffLL - 1, 0x80000000LL, 0xffffffffLL,
        0x100000000LL, 0x10000005aLL, 0x7fffffffffffffffLL,
        (int64_t)0x8000000000000000ULL, 1LL << 62 };
    int k, rounds = 1 + (int)(next() % 4);

    for (k = 0; k < rounds; k++) {
        size_t n = *size, pos = n ? next() % n : 0;

        switch (next() % 7) {
        case 0:
            if (n)
                buf[pos] ^= (uint8_t)(1u << (next() % 8));
            break;
        case 1:
            if (n)
                buf[pos] = (uint8_t)next();
            break;
        case 2:       /* insert a byte (digits and JSON punctuation too) */
            if (n < MAX_INPUT) {
                static const char chars[] = "0123456789-.eE\"{}[],: ";
                memmove(buf + pos + 1, buf + pos, n - pos);
                buf[pos] = next() % 2 ? (uint8_t)chars[next() % (sizeof chars - 1)]
                                      : (uint8_t)next();
                (*size)++;
            }
            break;
        case 3:       /* delete a run */
            if (n) {
                size_t len = 1 + next() % 8;
                if (len > n - pos)
                    len = n - pos;
                memmove(buf + pos, buf + pos + len, n - pos - len);
                *size -= len;
            }
            break;
        case 4:       /* an interesting integer, as bytes */
            if (n >= 8) {
                int64_t v = interesting[next() % (sizeof interesting / sizeof interesting[0])];
                pos = next() % (n - 7);
                memcpy(buf + pos, &v, 8);
            }
            break;
        case 5:       /* an interesting integer, as text */
            if (n + 24 < MAX_INPUT) {
                char num[32];
                int64_t v = interesting[next() % (sizeof interesting / sizeof interesting[0])];
                int len = snprintf(num, sizeof num, "%lld", (long long)v);
                memmove(buf + pos + len, buf + pos, n - pos);
                memcpy(buf + pos, num, (size_t)len);
                *size += (size_t)len;
            }
            break;
        default:      /* splice in part of another input */
            if (ncorpus) {
                const input *o = &corpus[next() % (uint64_t)ncorpus];
                size_t from = o->size ? next() % o->size : 0;
                size_t len = o->size - from;
                if (len > 64)
                    len = 1 + next() % 64;
                if (n + len < MAX_INPUT) {
                    memmove(buf + pos + len, buf + pos, n - pos);
                    memcpy(buf + pos, o->data + from, len);
                    *size += len;
                }
            }
            break;
        }
    }
}

int main(int argc, char **argv)
{
    double limit = 60;
    unsigned long long seed = (unsigned long long)time(NULL) ^ (unsigned long long)getpid();
    char crash[64];
    uint8_t *buf = malloc(MAX_INPUT);
    time_t start = time(NULL);
    long runs = 0;
    int i;

    for (i = 1; i < argc; i++) {
        if (!strncmp(argv[i], "-max_total_time=", 16))
            limit = atof(argv[i] + 16);
        else if (!strncmp(argv[i], "-seed=", 6))
            seed = strtoull(argv[i] + 6, NULL, 10);
        else if (argv[i][0] == '-')
            continue;             /* other libFuzzer flags: ignored */
        else
            add_dir(argv[i]);
    }
    if (!buf)
        return 2;
    rng = seed ? seed : 1;
    snprintf(crash, sizeof crash, "crash-%ld.bin", (long)getpid());
    fprintf(stderr, "driver: seed %llu (-seed=%llu to replay), %d corpus inputs, "
            "%.0f s\n", seed, seed, ncorpus, limit);
    run(crash, (const uint8_t *)"", 0);
    for (i = 0; i < ncorpus; i++, runs++)
        run(crash, corpus[i].data, corpus[i].size);
    while (difftime(time(NULL), start) < limit) {
        size_t size = 0;

        if (ncorpus) {
            const input *o = &corpus[next() % (uint64_t)ncorpus];
            size = o->size;
            memcpy(buf, o->data, size);
        }
        mutate(buf, &size);
        run(crash, buf, size);
        runs++;
    }
    unlink(crash);
    fprintf(stderr, "driver: %ld runs in %.0f s, no crash\n", runs,
            difftime(time(NULL), start));
    free(buf);
    return 0;
}
