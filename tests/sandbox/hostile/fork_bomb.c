/* Hostile native bot: on its third move forks without end (children fork
 * too). The sandbox bounds it (RLIMIT_NPROC of its uid, the pids cgroup): it
 * logs how many forks succeeded before the first refusal, then never answers
 * (expected forfeit: timeout). */
#include <errno.h>
#include <unistd.h>
#include "native_bot.h"

static void attack(void) {
    long made = 0;
    int errors = 0;
    while (errors < 200) {
        pid_t pid = fork();
        if (pid < 0) {
            if (++errors == 1) say("fork refused after %ld forks: %s\n", made, strerror(errno));
            continue;
        }
        if (pid == 0) { /* a child: fork on too, then linger */
            for (int i = 0; i < 1000; i++)
                if (fork() < 0) usleep(10000);
            sleep(3600);
            _exit(0);
        }
        made++;
    }
    sleep(3600);
}
