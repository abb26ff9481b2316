/* preadx.c — the simplest obvious parallel reader: THREADS threads, each pread()s its own
 * contiguous range of FILE in BS-byte reads into its own buffer and XORs it (32-bit words,
 * little-endian, as ioscope's checksum). A reference reader for bench/fast.sh, written the
 * way a student would; not tuned.
 *
 *   cc -O3 -march=native -pthread -o preadx preadx.c
 *   ./preadx FILE [THREADS=16] [BS=1048576]     prints: xor=XXXXXXXX bytes=N seconds=S
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static const char *path;
static off_t size;
static size_t bs;
static int threads;

struct part { off_t from, to; uint32_t xor; };

static void *reader(void *arg)
{
    struct part *p = arg;
    int fd = open(path, O_RDONLY);
    if (fd < 0) { perror(path); exit(2); }
    uint32_t *buf = aligned_alloc(4096, bs);
    uint32_t x = 0;
    for (off_t at = p->from; at < p->to;) {
        size_t want = (size_t)(p->to - at) < bs ? (size_t)(p->to - at) : bs;
        ssize_t n = pread(fd, buf, want, at);
        if (n <= 0) { perror("pread"); exit(2); }
        /* whole words only: ranges and reads start at multiples of 4 except a short tail */
        size_t words = (size_t)n / 4;
        for (size_t i = 0; i < words; i++) x ^= buf[i];
        for (size_t i = words * 4; i < (size_t)n; i++)
            x ^= (uint32_t)((unsigned char *)buf)[i] << (8 * ((at + i) % 4));
        at += n;
    }
    p->xor = x;
    free(buf);
    close(fd);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc < 2) { fprintf(stderr, "usage: preadx FILE [THREADS] [BS]\n"); return 2; }
    path = argv[1];
    threads = argc > 2 ? atoi(argv[2]) : 16;
    bs = argc > 3 ? strtoull(argv[3], 0, 0) : 1 << 20;
    struct stat st;
    if (stat(path, &st)) { perror(path); return 2; }
    size = st.st_size;
    struct part *parts = calloc(threads, sizeof *parts);
    pthread_t *tid = calloc(threads, sizeof *tid);
    off_t step = (size / threads + 4095) / 4096 * 4096;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (int i = 0; i < threads; i++) {
        parts[i].from = (off_t)i * step < size ? (off_t)i * step : size;
        parts[i].to = (off_t)(i + 1) * step < size ? (off_t)(i + 1) * step : size;
        pthread_create(&tid[i], 0, reader, &parts[i]);
    }
    uint32_t x = 0;
    for (int i = 0; i < threads; i++) { pthread_join(tid[i], 0); x ^= parts[i].xor; }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double s = (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
    printf("xor=%08x bytes=%lld seconds=%.6f\n", x, (long long)size, s);
    return 0;
}
