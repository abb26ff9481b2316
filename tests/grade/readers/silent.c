/* silent.c - reads the whole file but computes nothing useful.
 * BUG: prints only "done", never the XOR. */
#define _FILE_OFFSET_BITS 64
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define BLOCK (64 * 1024)

int main(int argc, char **argv)
{
    static unsigned char buf[BLOCK];
    uint64_t total = 0;
    int fd;

    if (argc != 2) {
        fprintf(stderr, "usage: %s <file>\n", argv[0]);
        return 2;
    }
    fd = open(argv[1], O_RDONLY);
    if (fd < 0) {
        perror(argv[1]);
        return 2;
    }
    for (;;) {
        ssize_t n = read(fd, buf, BLOCK);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            perror("read");
            return 2;
        }
        if (n == 0)
            break;
        total += (uint64_t)n;
    }
    close(fd);
    (void)total;
    printf("done\n");
    return 0;
}
