/* exit_one.c - computes and prints the right XOR like correct.c.
 * BUG: exits with status 1 instead of 0. */
#define _FILE_OFFSET_BITS 64
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define BLOCK (64 * 1024)

/* XOR n bytes that start at file offset pos into x: the byte at file offset i goes to
 * bits 8*(i%4) of the XOR, so a partial last word is zero-padded. */
static uint32_t xor_bytes(uint32_t x, const unsigned char *p, size_t n, uint64_t pos)
{
    unsigned char b[8];
    uint64_t acc = 0;
    size_t i = 0, k;

    for (; i < n && (pos + i) % 4 != 0; i++)   /* up to a word boundary */
        x ^= (uint32_t)p[i] << (8 * ((pos + i) % 4));
    for (; i + 8 <= n; i += 8) {               /* bytewise XOR of 8-byte chunks */
        uint64_t w;
        memcpy(&w, p + i, 8);
        acc ^= w;
    }
    memcpy(b, &acc, 8);                        /* b[k] sits at offset = k (mod 4) */
    for (k = 0; k < 8; k++)
        x ^= (uint32_t)b[k] << (8 * (k % 4));
    for (; i < n; i++)                         /* the rest, zero-padded */
        x ^= (uint32_t)p[i] << (8 * ((pos + i) % 4));
    return x;
}

int main(int argc, char **argv)
{
    static unsigned char buf[BLOCK];
    uint32_t x = 0;
    uint64_t pos = 0;
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
        size_t got = 0;
        while (got < BLOCK) {
            ssize_t n = read(fd, buf + got, BLOCK - got);
            if (n < 0) {
                if (errno == EINTR)
                    continue;
                perror("read");
                return 2;
            }
            if (n == 0)
                break;
            got += (size_t)n;
        }
        if (got == 0)
            break;
        x = xor_bytes(x, buf, got, pos);
        pos += got;
        if (got < BLOCK)
            break;
    }
    close(fd);
    printf("Total XOR: %08x\n", (unsigned)x);
    return 1;                          /* BUG */
}
