/*
 * Autotuning's cache on the CPU (src/plan/autotune.h): the round trip of entries through the
 * file, the process cache's lookup and store, a corrupt or foreign file ignored with one
 * warning and replaced at the next store, several processes storing at once (fork) leaving one
 * valid file with every key, the replace being atomic (a reader never sees half a file), and the
 * key: alignment classes and math modes give different keys; and the switch (TILEGEMM_AUTOTUNE,
 * tg_set_autotune).  No GPU needed.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "plan/autotune.h"
#include "testing.h"

static char g_dir[256];
static const tg_at_device kH100 = {"NVIDIA H100 80GB HBM3", 90, 132};
static const tg_at_device kOther = {"NVIDIA A100-SXM4-80GB", 80, 108};

static tg_problem problem(int64_t m, int64_t n, int64_t k, uintptr_t address, int64_t ld)
{
    tg_problem p = {0};
    p.m = m, p.n = n, p.k = k, p.batch = 1, p.alpha = 1.0f;
    p.A = (const float *)address, p.B = (const float *)address, p.C = (float *)address;
    p.a_rs = ld, p.a_cs = 1, p.b_rs = ld, p.b_cs = 1, p.ldc = ld;
    return p;
}

static tg_at_entry entry(int64_t m, int math, const char *rung, int slices, double ms)
{
    tg_at_entry e;
    const tg_problem p = problem(m, 64, 128, 4096, 256);
    tg_at_key_make(&e.key, math, &p);
    snprintf(e.rung, sizeof e.rung, "%s", rung);
    e.slices = slices;
    e.ms = ms;
    return e;
}

static void path_of(const tg_at_device *dev, char *buf, size_t size)
{
    EXPECT(tg_at_cache_path(dev, buf, size) == 0, "a cache path");
}

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        EXPECT(0, "cannot write %s", path);
        return;
    }
    fputs(text, f);
    fclose(f);
}

static int count_warnings(void)
{
    const char *status = tg_at_status();
    int n = 0;
    for (const char *s = status; (s = strstr(s, "warning:")); ++s)
        ++n;
    return n;
}

static void test_key(void)
{
    tg_at_key a, b;
    tg_problem p = problem(100, 200, 300, 0x10000, 300);
    tg_at_key_make(&a, 0, &p);
    EXPECT(a.align == 16 && a.a_k == 1 && a.b_n == 1, "aligned: class %d", a.align);
    EXPECT(!strcmp(a.version, tg_version()), "the library version is in the key");
    /* An address off by 4 bytes, or an odd leading dimension: another class, another key. */
    p.A = (const float *)0x10004;
    tg_at_key_make(&b, 0, &p);
    EXPECT(b.align == 4, "A 4 bytes off: class %d", b.align);
    p = problem(100, 200, 300, 0x10000, 302);
    tg_at_key_make(&b, 0, &p);
    EXPECT(b.align == 8, "ld 302: class %d", b.align);
    p = problem(100, 200, 300, 0x10000, 301);
    tg_at_key_make(&b, 0, &p);
    EXPECT(b.align == 4, "ld 301: class %d", b.align);
    /* Orientation and math mode are in the key. */
    p = problem(100, 200, 300, 0x10000, 300);
    p.a_rs = 1, p.a_cs = 100;
    tg_at_key_make(&b, 0, &p);
    EXPECT(b.a_k == 0 && b.align == 16, "A along m: a_k %d, class %d", b.a_k, b.align);

    /* Distinct keys are distinct entries of one cache. */
    tg_at_reset();
    const tg_at_device dev = {"Test GPU key", 90, 132};
    tg_problem q = problem(100, 200, 300, 0x10000, 300);
    tg_at_entry e;
    tg_at_key_make(&e.key, 0, &q);
    snprintf(e.rung, sizeof e.rung, "ffma128x128");
    e.slices = 1, e.ms = 1.0;
    EXPECT(tg_at_store(&dev, &e) == 0, "store: %s", tg_at_status());
    tg_at_key k;
    tg_at_entry got;
    tg_at_key_make(&k, 1, &q);
    EXPECT(!tg_at_lookup(&dev, &k, &got), "another math mode misses");
    tg_at_key_make(&k, 2, &q);
    EXPECT(!tg_at_lookup(&dev, &k, &got), "tf32 misses");
    q.C = (float *)0x10008;
    tg_at_key_make(&k, 0, &q);
    EXPECT(!tg_at_lookup(&dev, &k, &got), "another alignment class misses");
    q.C = (float *)0x10010;
    tg_at_key_make(&k, 0, &q);
    EXPECT(tg_at_lookup(&dev, &k, &got) && !strcmp(got.rung, "ffma128x128"),
           "the same class hits");
}

static void test_round_trip(void)
{
    tg_at_reset();
    char path[512];
    path_of(&kH100, path, sizeof path);
    unlink(path);
    EXPECT(strstr(path, g_dir) == path, "the path %s is under TILEGEMM_CACHE_DIR", path);
    EXPECT(strstr(path, "nvidia-h100-80gb-hbm3-sm90-132.txt") != NULL, "path %s", path);
    const tg_at_entry e1 = entry(512, 0, "shortk128", 1, 0.125);
    const tg_at_entry e2 = entry(1024, 1, "ffma128x128", 8, 2.5);
    tg_at_entry got;
    EXPECT(!tg_at_lookup(&kH100, &e1.key, &got), "an empty cache misses");
    EXPECT(tg_at_store(&kH100, &e1) == 0 && tg_at_store(&kH100, &e2) == 0, "stores: %s",
           tg_at_status());
    EXPECT(tg_at_lookup(&kH100, &e1.key, &got) && !strcmp(got.rung, "shortk128"),
           "the process remembers");
    /* Another process (a fresh cache) reads the file. */
    tg_at_reset();
    EXPECT(tg_at_lookup(&kH100, &e2.key, &got), "read back from the file");
    EXPECT(!strcmp(got.rung, "ffma128x128") && got.slices == 8 && got.ms == 2.5,
           "entry: %s %d %g", got.rung, got.slices, got.ms);
    EXPECT(tg_at_lookup(&kH100, &e1.key, &got) && got.ms == 0.125, "the other entry");
    EXPECT(count_warnings() == 0, "no warning: %s", tg_at_status());
    /* A new measurement of a key replaces the old one. */
    const tg_at_entry e3 = entry(512, 0, "ffma128x256", 2, 0.1);
    EXPECT(tg_at_store(&kH100, &e3) == 0, "store");
    tg_at_entry *all = NULL;
    int n = 0;
    EXPECT(tg_at_file_read(path, &kH100, &all, &n, NULL, 0) == 1 && n == 2, "2 entries, %d", n);
    free(all);
    tg_at_reset();
    EXPECT(tg_at_lookup(&kH100, &e1.key, &got) && !strcmp(got.rung, "ffma128x256"),
           "the newer measurement: %s", got.rung);
    /* No file at all: 0, nothing. */
    char missing[600];
    snprintf(missing, sizeof missing, "%s/none.txt", g_dir);
    EXPECT(tg_at_file_read(missing, &kH100, &all, &n, NULL, 0) == 0 && n == 0, "no file");
}

/* A file that is not a valid cache of this GPU: ignored with one warning, then replaced. */
static void expect_ignored(const char *text, const char *what)
{
    tg_at_reset();
    char path[512];
    path_of(&kH100, path, sizeof path);
    write_text(path, text);
    const tg_at_entry e = entry(512, 0, "shortk128", 1, 0.125);
    tg_at_entry got;
    EXPECT(!tg_at_lookup(&kH100, &e.key, &got), "%s: nothing is read", what);
    EXPECT(count_warnings() == 1, "%s: one warning: %s", what, tg_at_status());
    /* More lookups and another device's lookups add no warning. */
    EXPECT(!tg_at_lookup(&kH100, &e.key, &got), "%s", what);
    EXPECT(count_warnings() == 1, "%s: still one warning: %s", what, tg_at_status());
    EXPECT(tg_at_store(&kH100, &e) == 0, "%s: a store replaces the file: %s", what,
           tg_at_status());
    EXPECT(count_warnings() == 1, "%s: one warning after the store: %s", what, tg_at_status());
    tg_at_entry *all = NULL;
    int n = 0;
    char why[512] = "";
    EXPECT(tg_at_file_read(path, &kH100, &all, &n, why, sizeof why) == 1 && n == 1,
           "%s: the file is a valid cache again (%s)", what, why);
    free(all);
}

static void test_corrupt_and_foreign(void)
{
    char good_header[256];
    snprintf(good_header, sizeof good_header, "# tilegemm autotune cache %d\ndevice\t%s\t%d\t%d\n",
             TG_AT_FORMAT, kH100.name, kH100.cc, kH100.sms);
    char text[1024];
    expect_ignored("garbage\x01\x02 not a cache\n", "garbage");
    expect_ignored("", "empty");
    expect_ignored("# tilegemm autotune cache 999\ndevice\tNVIDIA H100 80GB HBM3\t90\t132\n",
                   "another format version");
    snprintf(text, sizeof text, "# tilegemm autotune cache %d\ndevice\t%s\t%d\t%d\n",
             TG_AT_FORMAT, kOther.name, kOther.cc, kOther.sms);
    expect_ignored(text, "another GPU");
    snprintf(text, sizeof text, "# tilegemm autotune cache %d\ndevice\t%s\t%d\t%d\n",
             TG_AT_FORMAT, kH100.name, kH100.cc, 114);
    expect_ignored(text, "another SM count");
    snprintf(text, sizeof text, "%s0.1.0 512 64 128 1 1 1 0 16\tshortk128\t1\t0.1\n"
                                "0.1.0 512 64 128 1 1 1 0 16\tshortk128\n", good_header);
    expect_ignored(text, "a line cut short");
    snprintf(text, sizeof text, "%s0.1.0 512 64 128 1 1 1 7 16\tshortk128\t1\t0.1\n",
             good_header);
    expect_ignored(text, "a math mode out of range");
    snprintf(text, sizeof text, "%s0.1.0 512 64 128 1 1 1 0 16\tshort k\t1\t0.1\n", good_header);
    expect_ignored(text, "a bad rung name");
    snprintf(text, sizeof text, "%s0.1.0 512 64 128 1 1 1 0 16\tshortk128\t1\t0.1", good_header);
    expect_ignored(text, "no final newline");
    /* Entries of another library version are kept, never matched. */
    tg_at_reset();
    char path[512];
    path_of(&kH100, path, sizeof path);
    snprintf(text, sizeof text, "%s0.0.9 512 64 128 1 1 1 0 16\tshortk128\t1\t0.1\n", good_header);
    write_text(path, text);
    const tg_at_entry e = entry(512, 0, "ffma128x128", 1, 0.2);
    tg_at_entry got;
    EXPECT(!tg_at_lookup(&kH100, &e.key, &got) && count_warnings() == 0,
           "another version's entry: no match, no warning: %s", tg_at_status());
    EXPECT(tg_at_store(&kH100, &e) == 0, "store");
    tg_at_entry *all = NULL;
    int n = 0;
    EXPECT(tg_at_file_read(path, &kH100, &all, &n, NULL, 0) == 1 && n == 2,
           "both versions' entries kept: %d", n);
    free(all);
}

/* Several processes store their own keys at once: one valid file with all of them. */
static void test_concurrent_writers(void)
{
    tg_at_reset();
    char path[512];
    path_of(&kH100, path, sizeof path);
    unlink(path);
    enum { kProcesses = 6, kKeys = 25 };
    pid_t pids[kProcesses];
    for (int w = 0; w < kProcesses; ++w) {
        pids[w] = fork();
        if (pids[w] == 0) {
            tg_at_reset();
            int bad = 0;
            for (int i = 0; i < kKeys; ++i) {
                const tg_at_entry e = entry(1000 + w * kKeys + i, 0, "ffma128x128", 1, 1.0 + i);
                bad |= tg_at_store(&kH100, &e) != 0;
            }
            _exit(bad);
        }
        EXPECT(pids[w] > 0, "fork");
    }
    for (int w = 0; w < kProcesses; ++w) {
        int status = 0;
        if (pids[w] > 0) {
            waitpid(pids[w], &status, 0);
            EXPECT(WIFEXITED(status) && WEXITSTATUS(status) == 0, "writer %d", w);
        }
    }
    tg_at_entry *all = NULL;
    int n = 0;
    char why[512] = "";
    EXPECT(tg_at_file_read(path, &kH100, &all, &n, why, sizeof why) == 1, "valid: %s", why);
    EXPECT(n == kProcesses * kKeys, "every key: %d of %d", n, kProcesses * kKeys);
    free(all);
    tg_at_reset();
    for (int w = 0; w < kProcesses; ++w)
        for (int i = 0; i < kKeys; i += 7) {
            const tg_at_entry e = entry(1000 + w * kKeys + i, 0, "x", 1, 0);
            tg_at_entry got;
            EXPECT(tg_at_lookup(&kH100, &e.key, &got) && got.ms == 1.0 + i, "key %d %d", w, i);
        }
    /* No temporary file is left beside the cache. */
    DIR *d = opendir(g_dir);
    int leftovers = 0;
    for (struct dirent *f; d && (f = readdir(d));)
        leftovers += strstr(f->d_name, ".txt.") != NULL && !strstr(f->d_name, ".lock");
    if (d)
        closedir(d);
    EXPECT(leftovers == 0, "%d temporary files left", leftovers);
}

/* While one process keeps replacing the file, another keeps reading it: every read is a whole,
 * valid file (rename replaces it at once), never a half-written one. */
static void test_atomic_replace(void)
{
    tg_at_reset();
    char path[512];
    path_of(&kH100, path, sizeof path);
    unlink(path);
    const tg_at_entry first = entry(7, 0, "ffma128x128", 1, 1.0);
    EXPECT(tg_at_store(&kH100, &first) == 0, "store");
    const pid_t writer = fork();
    if (writer == 0) {
        tg_at_reset();
        int bad = 0;
        for (int i = 0; i < 200; ++i) {
            const tg_at_entry e = entry(10 + i, 1, "shortk128", 1, 0.5);
            bad |= tg_at_store(&kH100, &e) != 0;
        }
        _exit(bad);
    }
    int reads = 0, invalid = 0, last = 0;
    for (int done = 0; !done;) {
        int status = 0;
        done = waitpid(writer, &status, WNOHANG) == writer;
        if (done)
            EXPECT(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the writer");
        tg_at_entry *all = NULL;
        int n = 0;
        char why[512] = "";
        if (tg_at_file_read(path, &kH100, &all, &n, why, sizeof why) != 1) {
            ++invalid;
            fprintf(stderr, "read %d: %s\n", reads, why);
        }
        invalid += n < last; /* entries only ever grow */
        last = n;
        free(all);
        ++reads;
    }
    EXPECT(invalid == 0, "%d of %d reads saw an invalid or shrunk file", invalid, reads);
    EXPECT(last == 201, "the final file has every entry: %d", last);
}

static void test_cache_dir(void)
{
    char dir[4096];
    const char *saved = getenv("TILEGEMM_CACHE_DIR");
    char keep[512];
    snprintf(keep, sizeof keep, "%s", saved ? saved : "");
    unsetenv("TILEGEMM_CACHE_DIR");
    setenv("XDG_CACHE_HOME", "/xdg/cache", 1);
    EXPECT(tg_at_cache_dir(dir, sizeof dir) == 0 && !strcmp(dir, "/xdg/cache/tilegemm"), "%s",
           dir);
    unsetenv("XDG_CACHE_HOME");
    setenv("HOME", "/home/someone", 1);
    EXPECT(tg_at_cache_dir(dir, sizeof dir) == 0 && !strcmp(dir, "/home/someone/.cache/tilegemm"),
           "%s", dir);
    setenv("TILEGEMM_CACHE_DIR", keep, 1);
    EXPECT(tg_at_cache_dir(dir, sizeof dir) == 0 && !strcmp(dir, keep), "%s", dir);
}

/* The switch: TILEGEMM_AUTOTUNE at tg_create, tg_set_autotune, tg_get_autotune. */
static void test_switch(void)
{
    tg_handle *h = NULL;
    unsetenv("TILEGEMM_AUTOTUNE");
    EXPECT(tg_create(&h) == TG_SUCCESS && tg_get_autotune(h) == 0, "off by default");
    EXPECT(tg_set_autotune(h, 1) == TG_SUCCESS && tg_get_autotune(h) == 1, "on");
    EXPECT(tg_set_autotune(h, 0) == TG_SUCCESS && tg_get_autotune(h) == 0, "off");
    tg_destroy(h);
    EXPECT(tg_set_autotune(NULL, 1) == TG_ERROR_INVALID_HANDLE, "a NULL handle");
    EXPECT(tg_get_autotune(NULL) == 0, "a NULL handle is off");
    setenv("TILEGEMM_AUTOTUNE", "1", 1);
    h = NULL;
    EXPECT(tg_create(&h) == TG_SUCCESS && tg_get_autotune(h) == 1, "TILEGEMM_AUTOTUNE=1");
    /* Host operands run as planned (the CPU here, or staged through a GPU: not autotuned). */
    float a[6] = {1, 2, 3, 4, 5, 6}, b[6] = {1, 0, 0, 1, 1, 1}, c[4] = {1, 1, 1, 1};
    EXPECT(tg_sgemm(h, TG_ROW_MAJOR, TG_NO_TRANS, TG_NO_TRANS, 2, 2, 3, 1.0f, a, 3, b, 2, 2.0f,
                    c, 2) == TG_SUCCESS && c[0] == 6.0f && c[1] == 7.0f && c[2] == 12.0f &&
               c[3] == 13.0f,
           "a host call with autotuning on: %g %g %g %g", c[0], c[1], c[2], c[3]);
    tg_destroy(h);
    setenv("TILEGEMM_AUTOTUNE", "yes", 1);
    h = NULL;
    EXPECT(tg_create(&h) == TG_ERROR_INVALID_ARGUMENT && h == NULL &&
               strstr(tg_last_error(NULL), "TILEGEMM_AUTOTUNE"),
           "TILEGEMM_AUTOTUNE=yes is refused: %s", tg_last_error(NULL));
    tg_destroy(h);
    unsetenv("TILEGEMM_AUTOTUNE");
    EXPECT(strstr(tg_autotune_status(), "autotune cache") != NULL, "%s", tg_autotune_status());
}

int main(void)
{
    snprintf(g_dir, sizeof g_dir, "/tmp/tilegemm-autotune-test-%d/nested", (int)getpid());
    setenv("TILEGEMM_CACHE_DIR", g_dir, 1); /* made by the first store */
    test_switch();
    test_cache_dir();
    test_key();
    test_round_trip();
    test_corrupt_and_foreign();
    test_concurrent_writers();
    test_atomic_replace();
    char command[600];
    snprintf(command, sizeof command, "rm -rf /tmp/tilegemm-autotune-test-%d", (int)getpid());
    if (!tg_test_failures && system(command) != 0)
        fprintf(stderr, "could not remove %s\n", g_dir);
    return tg_test_result("test_autotune_cache");
}
