/* Hostile native bot, cpu_hog.py in C: on its first move it forks six busy
 * children, each calling setsid() (its own session, so its own scheduler
 * autogroup: without a cgroup cpu limit each weighs like a whole program),
 * which spin forever; it then spins itself 0.15 s on every move. It must
 * neither slow the honest seat's moves (it is frozen while they run) nor get
 * more than one core (expected: no forfeit; the honest seat's move times
 * stay normal). The sandbox benchmark's fairness figure plays it. */
#include <time.h>
#include <unistd.h>
#ifndef CHILDREN /* the benchmark builds a one-core thinker with -DCHILDREN=0 */
#define CHILDREN 6
#endif
#define ATTACK_MOVE 1
#define EACH_MOVE spin
static void spin(void);
#include "native_bot.h"

static void attack(void) {
    for (int i = 0; i < CHILDREN; i++) {
        if (fork() == 0) {
            setsid();
            for (volatile unsigned long n = 0;; n++) {
            }
        }
    }
}

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

static void spin(void) {
    double until = now() + 0.15;
    while (now() < until) {
    }
}
