/* bench/mixedcalls.c — a program that mixes file reads with many other system calls:
 * per read of 4 KiB, OTHER calls of getppid() and getuid() (calls no tracer counts as
 * file I/O). Used by bench/trace_count.sh to compare tracers' slowdown.
 *   mixedcalls FILE READS OTHER */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
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
    for (long i = 0; i < reads; i++) {
        if (pread(fd, buf, sizeof buf, (i % 256) * 4096) < 0)
            return 1;
        for (long j = 0; j < other; j++) {
            if (j & 1)
                syscall(SYS_getuid);
            else
                syscall(SYS_getppid);
        }
    }
    close(fd);
    return 0;
}
