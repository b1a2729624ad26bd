/* A native test bot: answers every "act" with the first entry of "legal"
 * (Allegra lists concrete actions only), copied as it came. Built by the
 * tests with the machine's gcc (tests/sandbox/native.py).
 *
 * Its first act, before it reads anything, is to write /proc/self/cgroup to
 * stderr: the test checks that the bot's very first instructions already ran
 * inside its cgroups (bwrap's --block-fd holds it until they are set). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char line[1 << 21];

static void first_cgroups(void) {
    char buf[4096];
    FILE *f = fopen("/proc/self/cgroup", "r");
    size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
    buf[n] = 0;
    fprintf(stderr, "first cgroups:\n%s--\n", buf);
    fflush(stderr);
    if (f) fclose(f);
}

/* The first {...} after "legal": (no braces inside an action's strings). */
static int first_legal(const char *msg, char *out, size_t cap) {
    const char *p = strstr(msg, "\"legal\"");
    if (!p || !(p = strchr(p, '{'))) return 0;
    int depth = 0;
    size_t i = 0;
    for (; p[i]; i++) {
        if (p[i] == '{') depth++;
        if (p[i] == '}' && --depth == 0) break;
    }
    if (!p[i] || i + 2 > cap) return 0;
    memcpy(out, p, i + 1);
    out[i + 1] = 0;
    return 1;
}

int main(void) {
    first_cgroups();
    static char action[1 << 16];
    while (fgets(line, sizeof line, stdin)) {
        if (strstr(line, "\"type\": \"start\"") || strstr(line, "\"type\":\"start\"")) {
            puts("{\"type\": \"ready\"}");
        } else if (strstr(line, "\"legal\"")) {
            if (!first_legal(line, action, sizeof action)) return 3;
            printf("{\"type\": \"action\", \"action\": %s}\n", action);
        } else {
            break; /* end */
        }
        fflush(stdout);
    }
    return 0;
}
