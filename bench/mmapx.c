/* mmapx.c — the simplest obvious mapped reader: map FILE, THREADS threads take CHUNK-byte
 * chunks from an atomic counter and XOR them in place (32-bit words, little-endian, as
 * ioscope's checksum). A reference reader for bench/fast.sh, written the way a student
 * would; not tuned.
 *
 *   cc -O3 -march=native -pthread -o mmapx mmapx.c
 *   ./mmapx FILE [THREADS=nproc] [CHUNK=131072]   prints: xor=XXXXXXXX bytes=N seconds=S
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static const unsigned char *map;
static size_t size, chunk;
static atomic_size_t next;

static void *reader(void *arg)
{
    uint32_t x = 0;
    for (;;) {
        size_t at = atomic_fetch_add(&next, chunk);
        if (at >= size) break;
        size_t end = at + chunk < size ? at + chunk : size;
        size_t words = (end - at) / 4;
        const uint32_t *w = (const uint32_t *)(map + at);
        for (size_t i = 0; i < words; i++) x ^= w[i];
        for (size_t i = at + words * 4; i < end; i++) x ^= (uint32_t)map[i] << (8 * (i % 4));
    }
    *(uint32_t *)arg = x;
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc < 2) { fprintf(stderr, "usage: mmapx FILE [THREADS] [CHUNK]\n"); return 2; }
    int threads = argc > 2 ? atoi(argv[2]) : (int)sysconf(_SC_NPROCESSORS_ONLN);
    chunk = argc > 3 ? strtoull(argv[3], 0, 0) : 128 << 10;
    int fd = open(argv[1], O_RDONLY);
    struct stat st;
    if (fd < 0 || fstat(fd, &st)) { perror(argv[1]); return 2; }
    size = st.st_size;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    map = mmap(0, size, PROT_READ, MAP_SHARED, fd, 0);
    if (map == MAP_FAILED) { perror("mmap"); return 2; }
    uint32_t *xs = calloc(threads, sizeof *xs);
    pthread_t *tid = calloc(threads, sizeof *tid);
    for (int i = 0; i < threads; i++) pthread_create(&tid[i], 0, reader, &xs[i]);
    uint32_t x = 0;
    for (int i = 0; i < threads; i++) { pthread_join(tid[i], 0); x ^= xs[i]; }
    munmap((void *)map, size);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double s = (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
    printf("xor=%08x bytes=%zu seconds=%.6f\n", x, size, s);
    return 0;
}
