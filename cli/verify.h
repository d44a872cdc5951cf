#ifndef TG_VERIFY_H
#define TG_VERIFY_H

/* `tilegemm verify`: every rung (and the CPU path) on a sweep of shapes, layouts and
 * transposes against the float64 reference.  Returns the exit code: 0 all passed, 1 a case
 * failed, 2 bad arguments or a case the check could not run (memory), 77 when the
 * GPU it needs (--gpu-only, a rung, device memory) is missing. */
int tg_verify_main(int argc, char **argv);

#endif
