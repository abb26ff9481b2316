/* small_buffer.c - copies the file into a fixed 10 MiB buffer (with a PROT_NONE guard page after it), then XORs it.
 * BUG: no size check; a file over 10 MiB overruns the buffer -> SIGSEGV on the guard page. */
#define _DEFAULT_SOURCE
#define _FILE_OFFSET_BITS 64
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define CAP (10 * 1024 * 1024)
#define PAGE 4096

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
    struct stat st;
    unsigned char *buf;
    size_t size;
    uint32_t x;
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
    if (fstat(fd, &st) < 0) {
        perror("fstat");
        return 2;
    }
    size = (size_t)st.st_size;
    buf = mmap(NULL, CAP + PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (buf == MAP_FAILED || mprotect(buf + CAP, PAGE, PROT_NONE) < 0) {
        perror("mmap");
        return 2;
    }
    if (size > 0) {
        void *src = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (src == MAP_FAILED) {
            perror("mmap");
            return 2;
        }
        memcpy(buf, src, size);        /* BUG: size may exceed CAP */
        munmap(src, size);
    }
    x = xor_bytes(0, buf, size, 0);
    close(fd);
    printf("checksum %08x\n", (unsigned)x);
    return 0;
}
