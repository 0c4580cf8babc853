/*
 * uring_qd1: the smallest io_uring QD1 random-read loop, with raw syscalls and nothing
 * else — the control in bench/README.md's "io_uring QD1 on a loop device" note.
 *
 * It sets the ring up as fio 3.33 and ioscope do (COOP_TASKRUN, SINGLE_ISSUER,
 * DEFER_TASKRUN) and makes the same two io_uring_enter calls per I/O (submit, then wait
 * for one completion). If it reaches ioscope's figure rather than fio's on a device, the
 * difference is not in either tool's engine.
 *
 *   gcc -O2 -o /tmp/uring_qd1 bench/tools/uring_qd1.c
 *   /tmp/uring_qd1 /dev/loop0 [seconds] [getevents] [cq1] [fork]
 *
 * getevents=1: IORING_ENTER_GETEVENTS on the submit call too (as fio does).
 * cq1=1: a completion queue of one entry (IORING_SETUP_CQSIZE, as fio does).
 * fork=1: run the loop in a child process in its own session (setsid, as fio's job
 * processes do) while the parent polls for it every 10 ms.
 * Prints the reads per second. The device is only read, at 4 KiB-aligned offsets within
 * its first 512 MiB (or its size, if smaller), with O_DIRECT.
 *
 * SPDX-License-Identifier: MIT OR Apache-2.0
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <linux/fs.h>
#include <linux/io_uring.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static void die(const char *what) {
    perror(what);
    exit(1);
}

static void run(int fd, unsigned long long blocks, double secs, int getevents, int cq1) {
    struct io_uring_params p;
    memset(&p, 0, sizeof p);
    p.flags = IORING_SETUP_COOP_TASKRUN | IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN;
    if (cq1) {
        p.flags |= IORING_SETUP_CQSIZE;
        p.cq_entries = 1;
    }
    int ring = syscall(__NR_io_uring_setup, 1, &p);
    if (ring < 0) die("io_uring_setup");
    size_t sq_len = p.sq_off.array + p.sq_entries * sizeof(unsigned);
    size_t cq_len = p.cq_off.cqes + p.cq_entries * sizeof(struct io_uring_cqe);
    size_t len = sq_len > cq_len ? sq_len : cq_len;
    char *rings = mmap(0, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, ring, IORING_OFF_SQ_RING);
    struct io_uring_sqe *sqes = mmap(0, p.sq_entries * sizeof(struct io_uring_sqe),
                                     PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, ring, IORING_OFF_SQES);
    if (rings == MAP_FAILED || sqes == MAP_FAILED) die("mmap ring");
    _Atomic unsigned *sq_tail = (_Atomic unsigned *)(rings + p.sq_off.tail);
    unsigned *sq_array = (unsigned *)(rings + p.sq_off.array);
    _Atomic unsigned *cq_head = (_Atomic unsigned *)(rings + p.cq_off.head);
    _Atomic unsigned *cq_tail = (_Atomic unsigned *)(rings + p.cq_off.tail);
    void *buf = mmap(0, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
    if (buf == MAP_FAILED) die("mmap buffer");
    unsigned long long x = 88172645463325252ULL, ios = 0;
    double end = now() + secs;
    while (now() < end) {
        unsigned t = atomic_load_explicit(sq_tail, memory_order_relaxed);
        struct io_uring_sqe *s = &sqes[0];
        memset(s, 0, sizeof *s);
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        s->opcode = IORING_OP_READ;
        s->fd = fd;
        s->addr = (unsigned long)buf;
        s->len = 4096;
        s->off = (x % blocks) * 4096;
        s->user_data = 1;
        sq_array[0] = 0;
        atomic_store_explicit(sq_tail, t + 1, memory_order_release);
        if (syscall(__NR_io_uring_enter, ring, 1, 0, getevents ? IORING_ENTER_GETEVENTS : 0, NULL, 0) < 0)
            die("io_uring_enter (submit)");
        for (;;) {
            unsigned h = atomic_load_explicit(cq_head, memory_order_relaxed);
            if (h != atomic_load_explicit(cq_tail, memory_order_acquire)) {
                atomic_store_explicit(cq_head, h + 1, memory_order_release);
                break;
            }
            syscall(__NR_io_uring_enter, ring, 0, 1, IORING_ENTER_GETEVENTS, NULL, 0);
        }
        ios++;
    }
    printf("%.0f reads/s\n", ios / secs);
    fflush(stdout);
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s DEVICE [seconds] [getevents] [cq1] [fork]\n", argv[0]);
        return 2;
    }
    double secs = argc > 2 ? atof(argv[2]) : 2.0;
    int getevents = argc > 3 && atoi(argv[3]);
    int cq1 = argc > 4 && atoi(argv[4]);
    int forked = argc > 5 && atoi(argv[5]);
    int fd = open(argv[1], O_RDONLY | O_DIRECT);
    if (fd < 0) die(argv[1]);
    unsigned long long size = 0;
    if (ioctl(fd, BLKGETSIZE64, &size) < 0) {
        off_t end = lseek(fd, 0, SEEK_END);
        size = end > 0 ? (unsigned long long)end : 0;
    }
    unsigned long long blocks = (size < (512ULL << 20) ? size : (512ULL << 20)) / 4096;
    if (blocks == 0) {
        fprintf(stderr, "%s: smaller than 4 KiB\n", argv[1]);
        return 1;
    }
    if (!forked) {
        run(fd, blocks, secs, getevents, cq1);
        return 0;
    }
    pid_t child = fork();
    if (child < 0) die("fork");
    if (child == 0) {
        setsid();
        run(fd, blocks, secs, getevents, cq1);
        _exit(0);
    }
    int status;
    while (waitpid(child, &status, WNOHANG) == 0) usleep(10000);
    return 0;
}
