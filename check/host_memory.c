/* How much host memory a tool may fill; see host_memory.h. */
#define _DEFAULT_SOURCE /* _SC_PHYS_PAGES */

#include "host_memory.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A limit in bytes read from a cgroup file; 0 for none ("max", unlimited, unreadable). */
static double read_limit(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return 0.0;
    char text[64] = "";
    const int got = fgets(text, sizeof text, f) != NULL;
    fclose(f);
    char *end = NULL;
    const double v = got ? strtod(text, &end) : 0.0;
    /* cgroup v1 writes "no limit" as a page-rounded 2^63 */
    return end && end != text && v > 0.0 && v < 0x1p62 ? v : 0.0;
}

/* The lowest memory limit of this process's control group (v2 memory.max, v1
 * memory.limit_in_bytes), looked for under its own path and at the root a container mounts;
 * 0 when there is none. */
static double cgroup_limit(void)
{
    double lowest = 0.0;
    char line[512], path[700];
    FILE *f = fopen("/proc/self/cgroup", "r");
    while (f && fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = '\0';
        const char *v2 = strncmp(line, "0::", 3) == 0 ? line + 3 : NULL;
        const char *v1 = strstr(line, ":memory:");
        const char *own = v2 ? v2 : v1 ? v1 + strlen(":memory:") : NULL;
        if (!own)
            continue;
        const char *base = v2 ? "/sys/fs/cgroup" : "/sys/fs/cgroup/memory";
        const char *file = v2 ? "memory.max" : "memory.limit_in_bytes";
        for (int root = 0; root < 2; ++root) {
            snprintf(path, sizeof path, "%s%s/%s", base, root ? "" : own, file);
            const double limit = read_limit(path);
            if (limit > 0.0 && (lowest == 0.0 || limit < lowest))
                lowest = limit;
        }
    }
    if (f)
        fclose(f);
    return lowest;
}

double tg_host_memory_bytes(const char **what)
{
    const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
    double bytes = pages > 0 && page > 0 ? (double)pages * (double)page : 0.0;
    const char *which = "this machine's physical memory";
    const double limit = cgroup_limit();
    if (limit > 0.0 && (bytes == 0.0 || limit < bytes))
        bytes = limit, which = "this process's memory limit (its control group's)";
    if (what)
        *what = which;
    return bytes;
}

const char *tg_host_memory_refusal(const char *needs, double bytes, char *buf, size_t size)
{
    const char *what = NULL;
    const double have = tg_host_memory_bytes(&what);
    if (have <= 0.0 || bytes <= have)
        return NULL;
    const double gib = 1024.0 * 1024.0 * 1024.0;
    snprintf(buf, size, "%s %.1f GiB of host memory, more than %s, %.1f GiB", needs,
             bytes / gib, what, have / gib);
    return buf;
}
