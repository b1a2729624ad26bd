/* Makes each kind of new file the start-up gate holds back (decision 237)
 * once as it starts, before it answers ready (a constructor: before main),
 * and again at its third move; logs "before|after KIND ok|ERRNO" for each,
 * and plays on. */
#define _GNU_SOURCE
#include <errno.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "native_bot.h"

static const char *outcome(long result) { return result >= 0 ? "ok" : errno == EPERM ? "EPERM" : strerror(errno); }

static void try_all(const char *when) {
    int fds[2];
    long r = pipe(fds);
    if (r == 0) close(fds[0]), close(fds[1]);
    say("%s pipe %s\n", when, outcome(r));
    r = socket(AF_UNIX, SOCK_STREAM, 0);
    if (r >= 0) close((int)r);
    say("%s socket %s\n", when, outcome(r));
    r = socketpair(AF_UNIX, SOCK_STREAM, 0, fds);
    if (r == 0) close(fds[0]), close(fds[1]);
    say("%s socketpair %s\n", when, outcome(r));
    r = syscall(SYS_memfd_create, "gate", 0);
    if (r >= 0) close((int)r);
    say("%s memfd %s\n", when, outcome(r));
    void *shared = mmap(0, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (shared != MAP_FAILED) munmap(shared, 4096);
    say("%s shared %s\n", when, outcome(shared == MAP_FAILED ? -1 : 0));
    r = syscall(SYS_pidfd_open, getpid(), 0);
    if (r >= 0) close((int)r);
    say("%s pidfd %s\n", when, outcome(r));
}

__attribute__((constructor)) static void before_ready(void) { try_all("before"); }

static void attack(void) { try_all("after"); }
