/* Hostile native bot: on its third move tries to read every path of its
 * targets file (a folder is listed, a file read), logging each as READ or
 * BLOCKED. Anything read: an illegal action (forfeit: illegal_action); all
 * blocked: exit status 0 (expected forfeit: exit). */
#include <dirent.h>
#include <errno.h>
#include "native_bot.h"

static int leaked = 0;

static void snoop(char *path) {
    DIR *dir = opendir(path);
    if (dir) {
        long entries = 0;
        while (readdir(dir)) entries++;
        closedir(dir);
        say("READ %s: %ld entries\n", path, entries);
        leaked = 1;
        return;
    }
    FILE *f = fopen(path, "rb");
    if (f) {
        char buf[4096];
        long bytes = (long)fread(buf, 1, sizeof buf, f);
        fclose(f);
        say("READ %s: %ld bytes\n", path, bytes);
        leaked = 1;
        return;
    }
    say("BLOCKED %s: %s\n", path, strerror(errno));
}

static void attack(void) {
    each_target(snoop);
    if (leaked) {
        reply("{\"type\": \"action\", \"action\": {\"type\": \"leaked\"}}");
        return;
    }
    exit(0);
}
