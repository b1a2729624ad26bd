/* Hostile native bot: on its third move tries a TCP connection to every
 * "host port" line of its targets file (IPv4 or IPv6), logging each as
 * CONNECTED or BLOCKED. Any connection: an illegal action (forfeit:
 * illegal_action); all blocked: exit status 0 (expected forfeit: exit). */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>
#include "native_bot.h"

static int leaked = 0;

static void probe(char *line) {
    char host[256];
    int port = 0;
    if (sscanf(line, "%255s %d", host, &port) != 2) return;
    struct sockaddr_storage addr = {0};
    socklen_t len;
    int family = strchr(host, ':') ? AF_INET6 : AF_INET;
    if (family == AF_INET6) {
        struct sockaddr_in6 *a = (struct sockaddr_in6 *)&addr;
        a->sin6_family = AF_INET6;
        a->sin6_port = htons(port);
        inet_pton(AF_INET6, host, &a->sin6_addr);
        len = sizeof *a;
    } else {
        struct sockaddr_in *a = (struct sockaddr_in *)&addr;
        a->sin_family = AF_INET;
        a->sin_port = htons(port);
        inet_pton(AF_INET, host, &a->sin_addr);
        len = sizeof *a;
    }
    int fd = socket(family, SOCK_STREAM, 0); /* the seccomp filter refuses this: EPERM */
    if (fd >= 0 && connect(fd, (struct sockaddr *)&addr, len) == 0) {
        say("CONNECTED %s %d\n", host, port);
        leaked = 1;
    } else {
        say("BLOCKED %s %d: %s\n", host, port, strerror(errno));
    }
    if (fd >= 0) close(fd);
}

static void attack(void) {
    each_target(probe);
    if (leaked) {
        reply("{\"type\": \"action\", \"action\": {\"type\": \"leaked\"}}");
        return;
    }
    exit(0);
}
