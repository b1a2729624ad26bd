/* The protocol loop of the native hostile bots (fork_bomb.c, memory_hog.c,
 * network.c, snooper.c): answers "start" and every "act" with the first
 * legal action (Allegory's distribute template filled with every chip on its
 * first card), and on act number ATTACK_MOVE (3 unless the bot defines it)
 * calls the bot's attack(), and EACH_MOVE() on every act if the bot defines
 * it. What to attack is in the file "targets" of the bot's folder, one
 * target a line. Compiled by the tests (and the sandbox benchmark) with the
 * machine's gcc. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef ATTACK_MOVE
#define ATTACK_MOVE 3
#endif

static void attack(void);

static void reply(const char *text) {
    fputs(text, stdout);
    fputc('\n', stdout);
    fflush(stdout);
}

/* One line of log on stderr, flushed at once. */
#define say(...) (fprintf(stderr, __VA_ARGS__), fflush(stderr))

/* Each line of "targets" (newline removed) to visit(); the count visited. */
__attribute__((unused)) static int each_target(void (*visit)(char *line)) {
    FILE *f = fopen("targets", "r");
    char line[4096];
    int n = 0;
    if (!f) return 0;
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = 0;
        if (line[0]) {
            visit(line);
            n++;
        }
    }
    fclose(f);
    return n;
}

static char message[1 << 21];
static char action[1 << 16];

int main(void) {
    int moves = 0;
    while (fgets(message, sizeof message, stdin)) {
        const char *legal = strstr(message, "\"legal\"");
        if (strstr(message, "\"type\":\"start\"")) {
            reply("{\"type\": \"ready\"}");
        } else if (legal) {
            if (++moves == ATTACK_MOVE) attack();
#ifdef EACH_MOVE
            EACH_MOVE();
#endif
            const char *p = strchr(legal, '{');
            int depth = 0;
            size_t i = 0;
            for (; p && p[i]; i++) {
                if (p[i] == '{') depth++;
                if (p[i] == '}' && --depth == 0) break;
            }
            if (!p || !p[i] || i + 2 > sizeof action) return 3;
            memcpy(action, p, i + 1);
            action[i + 1] = 0;
            const char *cards = strstr(action, "\"cards\":[\"");
            const char *total = strstr(action, "\"total\":");
            if (strstr(action, "\"distribute\"") && cards && total) { /* the template: all chips on its first card */
                cards += strlen("\"cards\":[\"");
                int n = (int)strcspn(cards, "\"");
                printf("{\"type\": \"action\", \"action\": {\"type\": \"distribute\", \"chips\": {\"%.*s\": %d}}}\n", n, cards,
                       atoi(total + strlen("\"total\":")));
            } else {
                printf("{\"type\": \"action\", \"action\": %s}\n", action);
            }
            fflush(stdout);
        } else {
            break; /* end */
        }
    }
    return 0;
}
