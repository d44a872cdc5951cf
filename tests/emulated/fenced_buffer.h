/*
 * The fenced buffers of test_emulated_rungs (its only includer): each operand between
 * inaccessible pages, and the fault handler that names the operand and the case when a kernel
 * reads or writes past one.
 */
#ifndef TG_EMULATED_FENCED_BUFFER_H
#define TG_EMULATED_FENCED_BUFFER_H

#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "cuda_runtime.h" /* emu::context */

namespace {

/* A buffer fenced by inaccessible pages: [4 MiB PROT_NONE][pages][4 MiB PROT_NONE], the view
 * placed to end at most 12 bytes before the upper fence (with `offset` floats past a 16-byte
 * boundary at its start), so a read or write past the end of the matrix faults, and the fault
 * handler names the operand and the case.  Everything in the pages outside the view is `fill`,
 * so a read of padding shows in the result and a write to it shows in the guard check. */
constexpr size_t kFence = 4u << 20;

struct Fenced {
    const char *name;
    char *lo, *hi; /* the fenced region, fences included */
    float *view, *view_end;
};
Fenced fenced[4]; /* A, B, C and a rung's workspace */

struct Buffer {
    char *map = nullptr;
    size_t map_bytes = 0;
    float *base = nullptr; /* the accessible pages */
    size_t total = 0;      /* floats in them */
    float *view = nullptr;
    Buffer(int slot, const char *name, int64_t len, int offset, float fill)
    {
        const size_t page = (size_t)sysconf(_SC_PAGESIZE);
        const size_t need = (size_t)(len + 8) * sizeof(float);
        const size_t rw = (need + page - 1) / page * page;
        map_bytes = kFence + rw + kFence;
        void *m = mmap(nullptr, map_bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (m == MAP_FAILED || mprotect((char *)m + kFence, rw, PROT_READ | PROT_WRITE) != 0) {
            perror("test_emulated_rungs: mmap");
            exit(1);
        }
        map = (char *)m;
        base = (float *)(map + kFence);
        total = rw / sizeof(float);
        /* view end = base + total - slack, start 4 * offset bytes past a 16-byte boundary */
        const size_t slack = (size_t)((16 * 4 - (len + offset) % 4) % 4);
        view = base + total - slack - (size_t)len;
        for (size_t i = 0; i < total; ++i)
            base[i] = fill;
        fenced[slot] = Fenced{name, map, map + map_bytes, view, view + len};
    }
    ~Buffer()
    {
        for (Fenced &f : fenced)
            if (f.lo == map)
                f = Fenced{};
        munmap(map, map_bytes);
    }
    Buffer(const Buffer &) = delete;
    Buffer &operator=(const Buffer &) = delete;
    std::vector<float> snapshot() const { return std::vector<float>(base, base + total); }
    bool same_as(const std::vector<float> &s) const
    {
        return memcmp(base, s.data(), total * sizeof(float)) == 0;
    }
};

/* A fault in a fence: say where, for which case, and fail (never a pass). */
void on_fault(int sig, siginfo_t *info, void *)
{
    const char *addr = (const char *)info->si_addr;
    char msg[512];
    int len = snprintf(msg, sizeof msg, "EMULATION ABORT: signal %d at address %p", sig, (const void *)addr);
    for (const Fenced &f : fenced)
        if (f.lo && addr >= f.lo && addr < f.hi) {
            const bool after = addr >= (const char *)f.view_end;
            const long floats = after ? (long)((addr - (const char *)f.view_end) / 4)
                                      : (long)(((const char *)f.view - addr + 3) / 4);
            len += snprintf(msg + len, sizeof msg - len, ", %ld float(s) %s of %s",
                            floats + (after ? 1 : 0), after ? "past the end" : "before the start",
                            f.name);
        }
    len += snprintf(msg + len, sizeof msg - len, ", while running: %s\n", emu::context);
    if (write(2, msg, (size_t)len) < 0) {
    }
    _exit(1);
}

} // namespace

#endif
