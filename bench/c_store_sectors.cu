/*
 * How fast a grid of 128 x 128 tiles writes a row-major C whose rows are off 16 bytes, by the
 * way each block cuts its rows: the question behind rung 7's 30% loss on such rows
 * (bench/results/shortk/README.md).  No products: each block of 256 threads (3 an SM, as rung 7)
 * writes its tile, a warp a row at a time, and nothing else, so the time is the stores'.
 *
 *   tile_elements_cs    columns [128 j, 128 j + 128) by coalesced element stores (st.global.cs),
 *                       as rung 7 writes such rows: each tile edge splits a 32-byte sector
 *                       between two blocks in 3 rows of 4
 *   tile_elements       the same with ordinary stores
 *   sector_elements_cs  columns from the first 32-byte boundary at or after 128 j to the one at
 *                       or after 128 j + 128: every sector written by one block
 *   sector_vectors_cs   the same by 16-byte vector stores, the at most 7 floats past the last
 *                       whole vector of a lane's share by element stores
 *   tile_vectors_cs     rung 7's path for aligned rows (16-byte stores), where ldc allows
 *
 *   nvcc -O3 -arch=sm_90a -o c_store_sectors bench/c_store_sectors.cu
 *   ./c_store_sectors [--json FILE] [MxN ...]     default 27182x26882 27182x26884 16384x16386
 *                                                 16384x16384; median of 15 timed runs after 3
 */
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace {

constexpr int kTile = 128, kThreads = 256, kWarps = kThreads / 32;
constexpr size_t kShared = 66 * 1024; /* rung 7's footprint: 3 blocks an SM */

enum Pattern { kTileElementsCs, kTileElements, kSectorElementsCs, kSectorVectorsCs, kTileVectorsCs };
const char *const kNames[] = {"tile_elements_cs", "tile_elements", "sector_elements_cs",
                              "sector_vectors_cs", "tile_vectors_cs"};

__device__ __forceinline__ float value(int64_t row, int64_t col) { return (float)((row ^ col) & 1023); }

/* The first column at or after c whose address in row `row` is a multiple of 32 bytes (c itself
 * at the ends). */
__device__ __forceinline__ int64_t sector_start(const float *C, int64_t ldc, int64_t row, int64_t c,
                                                int64_t n)
{
    if (c <= 0)
        return 0;
    if (c >= n)
        return n;
    const uintptr_t at = reinterpret_cast<uintptr_t>(C + row * ldc + c);
    const int64_t ahead = (int64_t)(((32 - at % 32) % 32) / 4);
    return c + ahead < n ? c + ahead : n;
}

template <Pattern P>
__global__ void __launch_bounds__(kThreads, 3) write_tiles(float *C, int64_t m, int64_t n, int64_t ldc)
{
    extern __shared__ float unused[];
    if (threadIdx.x == 1024)
        unused[0] = 0.0f; /* keeps the dynamic shared memory, so 3 blocks an SM as rung 7 */
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int64_t i0 = blockIdx.y * (int64_t)kTile, j0 = blockIdx.x * (int64_t)kTile;
    for (int r = warp; r < kTile; r += kWarps) {
        const int64_t row = i0 + r;
        if (row >= m)
            break;
        float *const c_row = C + row * ldc;
        if constexpr (P == kTileElementsCs || P == kTileElements) {
#pragma unroll
            for (int q = 0; q < 4; ++q) {
                const int64_t col = j0 + lane + 32 * q;
                if (col >= n)
                    break;
                if constexpr (P == kTileElementsCs)
                    __stcs(c_row + col, value(row, col));
                else
                    c_row[col] = value(row, col);
            }
        } else if constexpr (P == kTileVectorsCs) {
            const int64_t col = j0 + lane * 4;
            if (col + 3 < n)
                __stcs(reinterpret_cast<float4 *>(c_row + col),
                       make_float4(value(row, col), value(row, col + 1), value(row, col + 2),
                                   value(row, col + 3)));
        } else {
            const int64_t s = sector_start(C, ldc, row, j0, n);
            const int64_t e = sector_start(C, ldc, row, j0 + kTile, n);
            if constexpr (P == kSectorElementsCs) {
                for (int64_t col = s + lane; col < e; col += 32)
                    __stcs(c_row + col, value(row, col));
            } else {
                /* s is 32-byte aligned unless it is column 0 of a misaligned row */
                int64_t v0 = s;
                while (v0 < e && reinterpret_cast<uintptr_t>(c_row + v0) % 16 != 0)
                    ++v0;
                if (lane < v0 - s)
                    __stcs(c_row + s + lane, value(row, s + lane));
                const int64_t vectors = (e - v0) / 4;
                for (int64_t v = lane; v < vectors; v += 32) {
                    const int64_t col = v0 + 4 * v;
                    __stcs(reinterpret_cast<float4 *>(c_row + col),
                           make_float4(value(row, col), value(row, col + 1), value(row, col + 2),
                                       value(row, col + 3)));
                }
                const int64_t tail = v0 + 4 * vectors;
                if (tail + lane < e)
                    __stcs(c_row + tail + lane, value(row, tail + lane));
            }
        }
    }
}

template <Pattern P>
float time_pattern(float *C, int64_t m, int64_t n, int64_t ldc, int warm, int timed)
{
    const auto kernel = write_tiles<P>;
    cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)kShared);
    const dim3 grid((unsigned)((n + kTile - 1) / kTile), (unsigned)((m + kTile - 1) / kTile));
    cudaEvent_t a, b;
    cudaEventCreate(&a);
    cudaEventCreate(&b);
    std::vector<float> ms;
    for (int t = 0; t < warm + timed; ++t) {
        cudaEventRecord(a);
        kernel<<<grid, kThreads, kShared>>>(C, m, n, ldc);
        cudaEventRecord(b);
        cudaEventSynchronize(b);
        float x = 0.0f;
        cudaEventElapsedTime(&x, a, b);
        if (t >= warm)
            ms.push_back(x);
    }
    cudaEventDestroy(a);
    cudaEventDestroy(b);
    std::sort(ms.begin(), ms.end());
    return ms[ms.size() / 2];
}

/* Whether every element of C holds value(row, col): each pattern must write all of C. */
bool check(const float *dC, int64_t m, int64_t n)
{
    std::vector<float> h((size_t)(m * n));
    cudaMemcpy(h.data(), dC, h.size() * sizeof(float), cudaMemcpyDeviceToHost);
    for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j)
            if (h[(size_t)(i * n + j)] != (float)((i ^ j) & 1023))
                return false;
    return true;
}

} // namespace

int main(int argc, char **argv)
{
    const char *json = nullptr;
    std::vector<std::pair<int64_t, int64_t>> shapes;
    for (int i = 1; i < argc; ++i) {
        if (!strcmp(argv[i], "--json") && i + 1 < argc) {
            json = argv[++i];
            continue;
        }
        long long m = 0, n = 0;
        if (sscanf(argv[i], "%lldx%lld", &m, &n) != 2 || m <= 0 || n <= 0) {
            fprintf(stderr, "c_store_sectors: shape '%s' is not MxN\n", argv[i]);
            return 2;
        }
        shapes.push_back({m, n});
    }
    if (shapes.empty())
        shapes = {{27182, 26882}, {27182, 26884}, {16384, 16386}, {16384, 16384}};
    cudaDeviceProp prop;
    if (cudaGetDeviceProperties(&prop, 0) != cudaSuccess) {
        fprintf(stderr, "c_store_sectors: no CUDA device\n");
        return 1;
    }
    FILE *out = json ? fopen(json, "w") : nullptr;
    if (out)
        fprintf(out, "{\"device\": \"%s\", \"results\": [\n", prop.name);
    printf("%-14s %-20s %9s %7s %s\n", "shape", "pattern", "ms", "TB/s", "all of C written");
    bool first = true;
    for (const auto &[m, n] : shapes) {
        float *C = nullptr;
        if (cudaMalloc(&C, (size_t)(m * n) * sizeof(float)) != cudaSuccess) {
            fprintf(stderr, "c_store_sectors: %lldx%lld does not fit\n", (long long)m, (long long)n);
            return 1;
        }
        for (int pattern = 0; pattern < 5; ++pattern) {
            if (pattern == kTileVectorsCs && n % 4 != 0)
                continue;
            cudaMemset(C, 0xff, (size_t)(m * n) * sizeof(float));
            float ms = 0.0f;
            switch (pattern) {
            case kTileElementsCs: ms = time_pattern<kTileElementsCs>(C, m, n, n, 3, 15); break;
            case kTileElements: ms = time_pattern<kTileElements>(C, m, n, n, 3, 15); break;
            case kSectorElementsCs: ms = time_pattern<kSectorElementsCs>(C, m, n, n, 3, 15); break;
            case kSectorVectorsCs: ms = time_pattern<kSectorVectorsCs>(C, m, n, n, 3, 15); break;
            default: ms = time_pattern<kTileVectorsCs>(C, m, n, n, 3, 15); break;
            }
            const bool ok = cudaGetLastError() == cudaSuccess && check(C, m, n);
            const double tbs = (double)m * (double)n * 4.0 / (ms * 1e-3) / 1e12;
            printf("%6lldx%-7lld %-20s %9.4f %7.2f %s\n", (long long)m, (long long)n,
                   kNames[pattern], ms, tbs, ok ? "yes" : "NO");
            if (out)
                fprintf(out, "%s  {\"m\": %lld, \"n\": %lld, \"pattern\": \"%s\", \"ms\": %.5f, "
                             "\"tb_per_s\": %.4f, \"complete\": %s}",
                        first ? "" : ",\n", (long long)m, (long long)n, kNames[pattern], ms, tbs,
                        ok ? "true" : "false");
            first = false;
        }
        cudaFree(C);
    }
    if (out) {
        fprintf(out, "\n]}\n");
        fclose(out);
    }
    return 0;
}
