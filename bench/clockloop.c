/* bench/clockloop.c — N clock_gettime(CLOCK_MONOTONIC) calls through libc (the vDSO when
 * the program has one, a system call when it has not); prints nanoseconds per call,
 * timed by the same clock (bench/trace-clock.sh). */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
int main(int argc, char **argv) {
    long n = argc > 1 ? atol(argv[1]) : 100000;
    struct timespec a, b, t;
    clock_gettime(CLOCK_MONOTONIC, &a);
    for (long i = 0; i < n; i++) clock_gettime(CLOCK_MONOTONIC, &t);
    clock_gettime(CLOCK_MONOTONIC, &b);
    printf("%.1f\n", ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / n);
    return 0;
}
