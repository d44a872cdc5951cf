/*
 * How much host memory a tool may fill.  Linux lets malloc promise more than the machine has
 * (overcommit): a tool that then writes its buffers is killed by the kernel without a word.  So
 * bench and verify weigh a shape's buffers against this before they allocate anything.
 */
#ifndef TG_TOOLS_HOST_MEMORY_H
#define TG_TOOLS_HOST_MEMORY_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The machine's physical memory (sysconf _SC_PHYS_PAGES x _SC_PAGE_SIZE) in bytes, or the
 * process's control group's memory limit where that is lower; *what (may be NULL) says which
 * ("this machine's physical memory" or "this process's memory limit (...)").  0 when unknown. */
double tg_host_memory_bytes(const char **what);

/* NULL when `bytes` of host buffers fit in tg_host_memory_bytes (or it is unknown), else a
 * sentence in buf, e.g. "A, B and C need 34.2 GiB of host memory, more than this machine's
 * physical memory, 23.5 GiB", `needs` naming what needs them. */
const char *tg_host_memory_refusal(const char *needs, double bytes, char *buf, size_t size);

#ifdef __cplusplus
}
#endif

#endif
