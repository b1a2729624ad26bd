/* Hostile native bot: on its third move tries to fill 2 GiB of memory
 * (touched pages, 64 MiB at a time). The sandbox stops it (RLIMIT_AS, the
 * memory cgroup): malloc fails, it logs how far it got and exits with
 * status 1 (expected forfeit: crash). */
#include "native_bot.h"

static void attack(void) {
    long reached = 0;
    for (int i = 0; i < 32; i++) { /* 32 x 64 MiB = 2 GiB */
        char *chunk = malloc(64 << 20);
        if (!chunk) break;
        memset(chunk, 'x', 64 << 20);
        reached += 64;
    }
    say("memory hog reached %ld MiB\n", reached);
    if (reached >= 2048) say("HOGGED 2 GiB\n");
    exit(1);
}
