/* Autotuning's persistent cache; see autotune.h. */
#define _GNU_SOURCE /* mkstemp, fsync, flock */
#include "autotune.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../include/tilegemm.h" /* TG_MAX_SPLIT_K */

/* The library's version (tg_version's), from the build; a key of another version never
 * matches. */
#ifndef TG_VERSION_STRING
#define TG_VERSION_STRING "unknown"
#endif

#define HEADER "# tilegemm autotune cache"

int tg_at_align_class(const tg_problem *p)
{
    uintptr_t bits = (uintptr_t)p->A | (uintptr_t)p->B | (uintptr_t)p->C;
    const int64_t strides[] = {p->a_rs, p->a_cs, p->b_rs, p->b_cs, p->ldc};
    for (size_t i = 0; i < sizeof strides / sizeof strides[0]; ++i)
        if (strides[i] != 1)
            bits |= (uintptr_t)strides[i] * sizeof(float);
    if (p->batch > 1)
        bits |= (uintptr_t)(p->stride_a | p->stride_b | p->stride_c) * sizeof(float);
    return bits % 16 == 0 ? 16 : bits % 8 == 0 ? 8 : 4;
}

void tg_at_key_make(tg_at_key *key, int math, const tg_problem *p)
{
    memset(key, 0, sizeof *key);
    snprintf(key->version, sizeof key->version, "%s", TG_VERSION_STRING);
    key->m = p->m;
    key->n = p->n;
    key->k = p->k;
    key->batch = p->batch;
    key->a_k = p->a_cs == 1;
    key->b_n = p->b_cs == 1;
    key->math = math;
    key->align = tg_at_align_class(p);
}

static int same_key(const tg_at_key *a, const tg_at_key *b)
{
    return !strcmp(a->version, b->version) && a->m == b->m && a->n == b->n && a->k == b->k &&
           a->batch == b->batch && a->a_k == b->a_k && a->b_n == b->b_n &&
           a->math == b->math && a->align == b->align;
}

/* A device name as the file holds it: no tab, newline or other control character. */
static void clean_name(const char *name, char *out, size_t size)
{
    size_t j = 0;
    for (size_t i = 0; name[i] && j + 1 < size; ++i)
        out[j++] = (unsigned char)name[i] < 32 ? ' ' : name[i];
    out[j] = '\0';
}

static int same_device(const tg_at_device *a, const tg_at_device *b)
{
    char x[sizeof a->name], y[sizeof b->name];
    clean_name(a->name, x, sizeof x);
    clean_name(b->name, y, sizeof y);
    return !strcmp(x, y) && a->cc == b->cc && a->sms == b->sms;
}

/* --- Where ------------------------------------------------------------------------------------ */

int tg_at_cache_dir(char *buf, size_t size)
{
    const char *dir = getenv("TILEGEMM_CACHE_DIR");
    if (dir && *dir)
        return snprintf(buf, size, "%s", dir) < (int)size ? 0 : -1;
    const char *xdg = getenv("XDG_CACHE_HOME");
    if (xdg && *xdg == '/')
        return snprintf(buf, size, "%s/tilegemm", xdg) < (int)size ? 0 : -1;
    const char *home = getenv("HOME");
    if (home && *home)
        return snprintf(buf, size, "%s/.cache/tilegemm", home) < (int)size ? 0 : -1;
    return -1;
}

int tg_at_cache_path(const tg_at_device *dev, char *buf, size_t size)
{
    char dir[3072];
    if (tg_at_cache_dir(dir, sizeof dir) != 0)
        return -1;
    char slug[sizeof dev->name];
    size_t j = 0;
    for (size_t i = 0; dev->name[i] && j + 1 < sizeof slug; ++i) {
        const unsigned char c = (unsigned char)dev->name[i];
        if (isalnum(c))
            slug[j++] = (char)tolower(c);
        else if (j > 0 && slug[j - 1] != '-')
            slug[j++] = '-';
    }
    while (j > 0 && slug[j - 1] == '-')
        --j;
    slug[j] = '\0';
    return snprintf(buf, size, "%s/%s-sm%d-%d.txt", dir, j ? slug : "gpu", dev->cc, dev->sms) <
                   (int)size
               ? 0
               : -1;
}

/* mkdir -p */
static int make_dirs(const char *path)
{
    char p[4096];
    if (snprintf(p, sizeof p, "%s", path) >= (int)sizeof p)
        return -1;
    for (char *s = p + 1; *s; ++s)
        if (*s == '/') {
            *s = '\0';
            if (mkdir(p, 0755) != 0 && errno != EEXIST)
                return -1;
            *s = '/';
        }
    return mkdir(p, 0755) != 0 && errno != EEXIST ? -1 : 0;
}

/* --- Lines ------------------------------------------------------------------------------------ */

/* Whether s is a word of letters, digits and the punctuation given, at least one long. */
static int word_ok(const char *s, const char *punctuation)
{
    if (!*s)
        return 0;
    for (; *s; ++s)
        if (!isalnum((unsigned char)*s) && !strchr(punctuation, *s))
            return 0;
    return 1;
}

static int rung_name_ok(const char *s) { return word_ok(s, "_-."); }
static int version_ok(const char *s) { return word_ok(s, ".-+"); }

/* One entry line (without its newline); 0 when it is well formed. */
static int parse_entry(const char *line, tg_at_entry *e)
{
    memset(e, 0, sizeof *e);
    long long m, n, k, batch;
    int a_k, b_n, math, align, slices, used = 0;
    char version[64], rung[128];
    double ms;
    if (sscanf(line, "%63s %lld %lld %lld %lld %d %d %d %d\t%127[^\t]\t%d\t%lf%n", version, &m,
               &n, &k, &batch, &a_k, &b_n, &math, &align, rung, &slices, &ms, &used) != 12 ||
        line[used] != '\0')
        return -1;
    if (strlen(version) >= sizeof e->key.version || !version_ok(version) ||
        strlen(rung) >= sizeof e->rung || !rung_name_ok(rung) || m < 1 || n < 1 || k < 1 ||
        batch < 1 || (a_k | b_n) & ~1 || math < 0 || math > 2 ||
        (align != 4 && align != 8 && align != 16) || slices < 1 || slices > TG_MAX_SPLIT_K ||
        !(ms >= 0.0) || ms > 1e9)
        return -1;
    snprintf(e->key.version, sizeof e->key.version, "%s", version);
    e->key.m = m, e->key.n = n, e->key.k = k, e->key.batch = batch;
    e->key.a_k = a_k, e->key.b_n = b_n, e->key.math = math, e->key.align = align;
    snprintf(e->rung, sizeof e->rung, "%s", rung);
    e->slices = slices;
    e->ms = ms;
    return 0;
}

static int write_entry(FILE *f, const tg_at_entry *e)
{
    const tg_at_key *k = &e->key;
    return fprintf(f, "%s %lld %lld %lld %lld %d %d %d %d\t%s\t%d\t%.6g\n", k->version,
                   (long long)k->m, (long long)k->n, (long long)k->k, (long long)k->batch, k->a_k,
                   k->b_n, k->math, k->align, e->rung, e->slices, e->ms) < 0
               ? -1
               : 0;
}

static int push(tg_at_entry **entries, int *count, int *cap, const tg_at_entry *e)
{
    for (int i = 0; i < *count; ++i)
        if (same_key(&(*entries)[i].key, &e->key)) {
            (*entries)[i] = *e;
            return 0;
        }
    if (*count == *cap) {
        const int grown = *cap ? 2 * *cap : 64;
        tg_at_entry *more = realloc(*entries, (size_t)grown * sizeof *more);
        if (!more)
            return -1;
        *entries = more;
        *cap = grown;
    }
    (*entries)[(*count)++] = *e;
    return 0;
}

int tg_at_file_read(const char *path, const tg_at_device *dev, tg_at_entry **entries, int *count,
                    char *why, size_t why_size)
{
    char scratch[8];
    if (!why)
        why = scratch, why_size = sizeof scratch;
    *entries = NULL;
    *count = 0;
    FILE *f = fopen(path, "r");
    if (!f) {
        if (errno == ENOENT)
            return 0;
        snprintf(why, why_size, "%s cannot be read: %s", path, strerror(errno));
        return -1;
    }
    char line[1024];
    int cap = 0, number = 0, status = 1;
    char format[32] = "";
    while (fgets(line, sizeof line, f)) {
        ++number;
        const size_t len = strlen(line);
        if (len == 0 || line[len - 1] != '\n') {
            snprintf(why, why_size, "%s line %d is cut short or too long", path, number);
            status = -1;
            break;
        }
        line[len - 1] = '\0';
        if (number == 1) {
            int version = 0, used = 0;
            if (strncmp(line, HEADER " ", sizeof HEADER) != 0 ||
                sscanf(line + sizeof HEADER, "%d%n", &version, &used) != 1 ||
                line[sizeof HEADER + used] != '\0') {
                snprintf(why, why_size, "%s is not a tilegemm autotune cache (its first line "
                                        "is not \"%s %d\")", path, HEADER, TG_AT_FORMAT);
                status = -1;
                break;
            }
            if (version != TG_AT_FORMAT) {
                snprintf(why, why_size, "%s has cache format %d, this library reads %d", path,
                         version, TG_AT_FORMAT);
                status = -1;
                break;
            }
            snprintf(format, sizeof format, "%d", version);
            continue;
        }
        if (number == 2) {
            tg_at_device found = {{0}, 0, 0};
            char *tab = strchr(line, '\t');
            char *name_end = tab ? strchr(tab + 1, '\t') : NULL;
            int used = 0;
            if (!tab || !name_end || strncmp(line, "device\t", 7) != 0 ||
                (size_t)(name_end - tab - 1) >= sizeof found.name ||
                sscanf(name_end, "\t%d\t%d%n", &found.cc, &found.sms, &used) != 2 ||
                name_end[used] != '\0') {
                snprintf(why, why_size, "%s line 2 does not name the device", path);
                status = -1;
                break;
            }
            memcpy(found.name, tab + 1, (size_t)(name_end - tab - 1));
            if (!same_device(&found, dev)) {
                snprintf(why, why_size, "%s belongs to another GPU (%s, sm_%d, %d SMs), not %s "
                                        "(sm_%d, %d SMs)", path, found.name, found.cc, found.sms,
                         dev->name, dev->cc, dev->sms);
                status = -1;
                break;
            }
            continue;
        }
        tg_at_entry e;
        if (parse_entry(line, &e) != 0) {
            snprintf(why, why_size, "%s line %d is malformed", path, number);
            status = -1;
            break;
        }
        if (push(entries, count, &cap, &e) != 0) {
            snprintf(why, why_size, "%s: out of host memory", path);
            status = -1;
            break;
        }
    }
    if (status == 1 && ferror(f)) {
        snprintf(why, why_size, "%s cannot be read: %s", path, strerror(errno));
        status = -1;
    }
    if (status == 1 && number < 2) {
        snprintf(why, why_size, "%s is %s", path, number == 0 ? "empty" : "cut short");
        status = -1;
    }
    fclose(f);
    if (status != 1) {
        free(*entries);
        *entries = NULL;
        *count = 0;
    }
    return status;
}

/* --- The process's warning and counters -------------------------------------------------------- */

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static char warning[768];
static char last_path[4096];
static long hits, timed, entries_known;

static void warn_once(const char *why)
{
    if (!warning[0])
        snprintf(warning, sizeof warning, "%s", why);
}

void tg_at_warning(char *buf, size_t size)
{
    pthread_mutex_lock(&lock);
    snprintf(buf, size, "%s", warning);
    pthread_mutex_unlock(&lock);
}

void tg_at_count_hit(void)
{
    pthread_mutex_lock(&lock);
    ++hits;
    pthread_mutex_unlock(&lock);
}

void tg_at_count_timed(void)
{
    pthread_mutex_lock(&lock);
    ++timed;
    pthread_mutex_unlock(&lock);
}

void tg_at_counters(long *h, long *t)
{
    pthread_mutex_lock(&lock);
    *h = hits;
    *t = timed;
    pthread_mutex_unlock(&lock);
}

const char *tg_at_status(void)
{
    static _Thread_local char text[6144];
    pthread_mutex_lock(&lock);
    char dir[4096] = "";
    if (!last_path[0] && tg_at_cache_dir(dir, sizeof dir) != 0)
        snprintf(dir, sizeof dir, "(none: set TILEGEMM_CACHE_DIR or HOME)");
    snprintf(text, sizeof text, "autotune cache %s: %ld entries known, %ld plans followed a "
                                "cached choice, %ld keys timed%s%s",
             last_path[0] ? last_path : dir, entries_known, hits, timed,
             warning[0] ? "; warning: " : "", warning);
    pthread_mutex_unlock(&lock);
    return text;
}

/* --- Merge and replace ------------------------------------------------------------------------- */

static int write_file(FILE *f, const tg_at_device *dev, const tg_at_entry *e, int count)
{
    char name[sizeof dev->name];
    clean_name(dev->name, name, sizeof name);
    if (fprintf(f, "%s %d\ndevice\t%s\t%d\t%d\n", HEADER, TG_AT_FORMAT, name, dev->cc, dev->sms) <
        0)
        return -1;
    for (int i = 0; i < count; ++i)
        if (write_entry(f, &e[i]) != 0)
            return -1;
    return 0;
}

int tg_at_file_merge(const char *path, const tg_at_device *dev, const tg_at_entry *entries,
                     int count, char *why, size_t why_size)
{
    char scratch[8];
    if (!why)
        why = scratch, why_size = sizeof scratch;
    why[0] = '\0';
    char folder[4096];
    snprintf(folder, sizeof folder, "%s", path);
    char *slash = strrchr(folder, '/');
    if (slash && slash != folder) {
        *slash = '\0';
        if (make_dirs(folder) != 0) {
            snprintf(why, why_size, "the cache folder %s cannot be made: %s", folder,
                     strerror(errno));
            return -1;
        }
    }
    char lock_path[4200], temp[4200];
    snprintf(lock_path, sizeof lock_path, "%s.lock", path);
    snprintf(temp, sizeof temp, "%s.XXXXXX", path);
    const int lock_fd = open(lock_path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (lock_fd < 0) {
        snprintf(why, why_size, "%s cannot be opened: %s", lock_path, strerror(errno));
        return -1;
    }
    int status = -1;
    while (flock(lock_fd, LOCK_EX) != 0)
        if (errno != EINTR) {
            snprintf(why, why_size, "%s cannot be locked: %s", lock_path, strerror(errno));
            close(lock_fd);
            return -1;
        }
    tg_at_entry *merged = NULL;
    int n = 0, cap = 0;
    char read_why[768];
    if (tg_at_file_read(path, dev, &merged, &n, read_why, sizeof read_why) < 0) {
        /* Corrupt or foreign: replaced by ours. */
        snprintf(why, why_size, "%s (replaced)", read_why);
        merged = NULL, n = 0;
    }
    cap = n;
    for (int i = 0; i < count; ++i)
        if (push(&merged, &n, &cap, &entries[i]) != 0) {
            snprintf(why, why_size, "out of host memory");
            goto done;
        }
    const int fd = mkstemp(temp);
    if (fd < 0) {
        snprintf(why, why_size, "a temporary file beside %s cannot be made: %s", path,
                 strerror(errno));
        goto done;
    }
    (void)fchmod(fd, 0644);
    FILE *f = fdopen(fd, "w");
    if (!f) {
        close(fd);
        unlink(temp);
        snprintf(why, why_size, "%s cannot be written: %s", temp, strerror(errno));
        goto done;
    }
    int bad = write_file(f, dev, merged, n) != 0 || fflush(f) != 0 || fsync(fd) != 0;
    bad |= fclose(f) != 0;
    if (bad || rename(temp, path) != 0) {
        snprintf(why, why_size, "%s cannot be written: %s", path, strerror(errno));
        unlink(temp);
        goto done;
    }
    status = 0;
done:
    free(merged);
    (void)flock(lock_fd, LOCK_UN);
    close(lock_fd);
    return status;
}

/* --- The process's cache ----------------------------------------------------------------------- */

enum { kMaxDevices = 8 };
typedef struct table {
    tg_at_device dev;
    char path[4096]; /* its file, named when it was loaded ("": none) */
    tg_at_entry *entries;
    int count, cap;
} table;
static table tables[kMaxDevices];
static int table_count;

/* dev's table, its file loaded on first use; NULL when there is no room.  Under lock. */
static table *table_of(const tg_at_device *dev)
{
    for (int i = 0; i < table_count; ++i)
        if (same_device(&tables[i].dev, dev))
            return &tables[i];
    if (table_count == kMaxDevices)
        return NULL;
    table *t = &tables[table_count++];
    memset(t, 0, sizeof *t);
    t->dev = *dev;
    char why[768];
    if (tg_at_cache_path(dev, t->path, sizeof t->path) != 0) {
        t->path[0] = '\0';
        warn_once("no cache folder (set TILEGEMM_CACHE_DIR, XDG_CACHE_HOME or HOME): choices "
                  "are kept for this process only");
        return t;
    }
    snprintf(last_path, sizeof last_path, "%s", t->path);
    if (tg_at_file_read(t->path, dev, &t->entries, &t->count, why, sizeof why) < 0)
        warn_once(why); /* ignored: the next store replaces it */
    t->cap = t->count;
    entries_known += t->count;
    return t;
}

int tg_at_lookup(const tg_at_device *dev, const tg_at_key *key, tg_at_entry *out)
{
    pthread_mutex_lock(&lock);
    const table *t = table_of(dev);
    int found = 0;
    for (int i = 0; t && i < t->count && !found; ++i)
        if (same_key(&t->entries[i].key, key)) {
            *out = t->entries[i];
            found = 1;
        }
    pthread_mutex_unlock(&lock);
    return found;
}

int tg_at_store(const tg_at_device *dev, const tg_at_entry *e)
{
    pthread_mutex_lock(&lock);
    table *t = table_of(dev);
    char path[4096], why[768];
    int status = -1;
    if (t) {
        const int before = t->count;
        if (push(&t->entries, &t->count, &t->cap, e) == 0)
            entries_known += t->count - before;
        snprintf(path, sizeof path, "%s", t->path); /* the file it was loaded from */
    } else if (tg_at_cache_path(dev, path, sizeof path) != 0) {
        path[0] = '\0';
    }
    if (path[0]) {
        snprintf(last_path, sizeof last_path, "%s", path);
        status = tg_at_file_merge(path, dev, e, 1, why, sizeof why);
        if (why[0])
            warn_once(why);
    }
    pthread_mutex_unlock(&lock);
    return status;
}

void tg_at_reset(void)
{
    pthread_mutex_lock(&lock);
    for (int i = 0; i < table_count; ++i)
        free(tables[i].entries);
    memset(tables, 0, sizeof tables);
    table_count = 0;
    warning[0] = last_path[0] = '\0';
    hits = timed = entries_known = 0;
    pthread_mutex_unlock(&lock);
}
