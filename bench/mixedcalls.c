/* bench/mixedcalls.c — a program that mixes file reads with many other system calls: READS
 * preads of 4 KiB, each followed by OTHER calls of getppid() and getuid() (calls no tracer
 * counts as file I/O); with OTHER 0 it is a tight loop of one traced call. It times its own
 * loop (two clock_gettime around it, so a tracer's start-up is not in it) and prints
 * `loop_ns N` on stdout. Used by bench/trace_overhead.sh to compare tracers.
 *   mixedcalls FILE READS OTHER */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv) {
    if (argc != 4) {
        fprintf(stderr, "usage: mixedcalls FILE READS OTHER\n");
        return 2;
    }
    long reads = atol(argv[2]), other = atol(argv[3]);
    int fd = open(argv[1], O_RDONLY);
    if (fd < 0) {
        perror(argv[1]);
        return 2;
    }
    char buf[4096];
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    for (long i = 0; i < reads; i++) {
        if (pread(fd, buf, sizeof buf, (i % 256) * 4096) < 0) {
            perror("pread");
            return 1;
        }
        for (long j = 0; j < other; j++) {
            if (j & 1)
                syscall(SYS_getuid);
            else
                syscall(SYS_getppid);
        }
    }
    clock_gettime(CLOCK_MONOTONIC, &b);
    close(fd);
    printf("loop_ns %lld\n", (long long)(b.tv_sec - a.tv_sec) * 1000000000LL + (b.tv_nsec - a.tv_nsec));
    return 0;
}
