/* What a native bot sees of /dev, /etc and the root, and what it can do
 * there: one JSON object on stdout (tests/sandbox/test_dev.py). It tries to
 * create, remove and change entries of /dev: it refuses to run anywhere but
 * as pid 1 of a sandbox, never on a host. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>

static void list(const char *key, const char *folder) {
    printf("\"%s\": [", key);
    DIR *d = opendir(folder);
    int first = 1;
    if (d) {
        struct dirent *e;
        while ((e = readdir(d))) {
            if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
                continue;
            printf("%s\"%s\"", first ? "" : ", ", e->d_name);
            first = 0;
        }
        closedir(d);
    }
    printf("], ");
}

static void entries(void) {
    printf("\"dev\": {");
    DIR *d = opendir("/dev");
    int first = 1;
    struct dirent *e;
    while (d && (e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        char path[300], target[300];
        struct stat st;
        snprintf(path, sizeof path, "/dev/%s", e->d_name);
        if (lstat(path, &st) != 0)
            continue;
        printf("%s\"%s\": ", first ? "" : ", ", e->d_name);
        first = 0;
        int mine = st.st_uid == getuid();
        if (S_ISCHR(st.st_mode)) {
            printf("[\"chr\", %d, %u, %u, %d]", (int)(st.st_mode & 07777), major(st.st_rdev), minor(st.st_rdev), mine);
        } else if (S_ISLNK(st.st_mode)) {
            ssize_t n = readlink(path, target, sizeof target - 1);
            target[n < 0 ? 0 : n] = 0;
            printf("[\"lnk\", \"%s\", %d]", target, mine);
        } else if (S_ISDIR(st.st_mode)) {
            printf("[\"dir\", %d]", mine);
        } else {
            printf("[\"other\", %d]", mine);
        }
    }
    if (d)
        closedir(d);
    printf("}, ");
}

static const char *result(int ok) { return ok ? "ok" : strerrorname_np(errno); }

int main(void) {
    if (getpid() != 1 || getuid() == 0) {
        fprintf(stderr, "dev_view: not in a sandbox (pid %d, uid %d): refusing to touch /dev\n", getpid(), getuid());
        return 2;
    }
    printf("{");
    entries();
    list("etc", "/etc");
    list("root", "/");
    list("dist_packages", "/usr/lib/python3/dist-packages");
    list("pts", "/dev/pts");
    int fd = open("/dev/x", O_WRONLY | O_CREAT | O_EXCL, 0600);
    printf("\"create\": \"%s\", ", result(fd >= 0));
    printf("\"mkdir\": \"%s\", ", result(mkdir("/dev/d", 0700) == 0));
    printf("\"mkfifo\": \"%s\", ", result(mkfifo("/dev/f", 0600) == 0));
    printf("\"symlink\": \"%s\", ", result(symlink("/tmp", "/dev/l") == 0));
    printf("\"unlink\": \"%s\", ", result(unlink("/dev/null") == 0));
    printf("\"chmod\": \"%s\", ", result(chmod("/dev", 0777) == 0));
    fd = open("/dev/null", O_WRONLY);
    printf("\"null\": \"%s\", ", result(fd >= 0 && write(fd, "x", 1) == 1));
    char buf[16];
    fd = open("/dev/urandom", O_RDONLY);
    printf("\"urandom\": %d, ", fd >= 0 ? (int)read(fd, buf, sizeof buf) : -1);
    fd = open("/dev/ptmx", O_RDWR);
    printf("\"ptmx\": \"%s\", ", result(fd >= 0));
    fd = open("/dev/shm/x", O_WRONLY | O_CREAT, 0600);
    printf("\"shm_write\": \"%s\", ", result(fd >= 0 && write(fd, "x", 1) == 1));
    struct statvfs v;
    statvfs("/dev/shm", &v);
    printf("\"shm\": [%lu, %lu], ", (unsigned long)(v.f_blocks * v.f_frsize), (unsigned long)v.f_files);
    statvfs("/dev", &v);
    printf("\"dev_readonly\": %d}\n", (v.f_flag & ST_RDONLY) != 0);
    return 0;
}
