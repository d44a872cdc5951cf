/* A gate for the stream-ordering test: a one-thread kernel that holds a stream until the host
 * opens the gate, so that work queued behind it (and work that must wait for it) is pending
 * for as long as the test needs, without timing anything. */
#ifndef TG_TEST_STREAM_GATE_H
#define TG_TEST_STREAM_GATE_H

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tg_stream_gate tg_stream_gate;

/* 0 on success; the gate lives in mapped, pinned host memory. */
int tg_stream_gate_create(tg_stream_gate **gate);
/* Closes the gate and queues the kernel that waits at it on `stream` (a cudaStream_t). Returns
 * the launch's cudaError_t as an int. */
int tg_stream_gate_hold(tg_stream_gate *gate, void *stream);
void tg_stream_gate_open(tg_stream_gate *gate);
/* 1 when the kernel gave up waiting (limit_seconds passed with the gate closed). */
int tg_stream_gate_gave_up(const tg_stream_gate *gate);
void tg_stream_gate_destroy(tg_stream_gate *gate);

#ifdef __cplusplus
}
#endif

#endif
