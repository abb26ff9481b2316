/* bench/syscalls.c — the same loops as `ioscope syscalls`, in plain C, as a reference.
 * Build: gcc -O2 -o /tmp/syscalls bench/syscalls.c
 * Usage: /tmp/syscalls FILE CALLS   -> one line per op: "op ns_per_call calls_per_second"
 * ioscope's figures should be within a factor of 2 of these (issue 3). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec * 1e-9; }
static void report(const char *op, double s, long n) { printf("%-10s %8.1f ns %12.0f calls/s\n", op, s * 1e9 / n, n / s); }

int main(int argc, char **argv) {
    if (argc != 3) { fprintf(stderr, "usage: syscalls FILE CALLS\n"); return 2; }
    long n = atol(argv[2]);
    int fd = open(argv[1], O_RDONLY);
    if (fd < 0) { perror(argv[1]); return 1; }
    char b; unsigned x = 0; double t;
    for (long i = 0; i < n; i++) if (read(fd, &b, 1) != 1) return 1;   /* warm the cache */
    t = now(); for (long i = 0; i < n; i++) syscall(SYS_getpid); report("getpid", now() - t, n);
    t = now(); for (long i = 0; i < n; i++) lseek(fd, 0, SEEK_CUR); report("lseek", now() - t, n);
    t = now(); for (long i = 0; i < n; i++) { if (pread(fd, &b, 1, i) != 1) return 1; x ^= (unsigned)(unsigned char)b << (8 * (i % 4)); } report("pread 1 B", now() - t, n);
    lseek(fd, 0, SEEK_SET);
    t = now(); for (long i = 0; i < n; i++) { if (read(fd, &b, 1) != 1) return 1; x ^= (unsigned)(unsigned char)b << (8 * (i % 4)); } report("read 1 B", now() - t, n);
    return x == 0xdeadbeef; /* keep x live */
}
