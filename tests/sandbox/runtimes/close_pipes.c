/* A native bot that closes its stdout (argument "stdout") or its stdin
 * (argument "stdin", then says so on stdout) and keeps running: the test
 * sees the end of its output, or a broken pipe, while it still runs. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "stdin") == 0) {
        close(0);
        fputs("closed\n", stdout);
        fflush(stdout);
    } else {
        fputs("hi\n", stdout);
        fflush(stdout);
        close(1);
    }
    sleep(60);
    return 0;
}
