/*
 * bot-exec: the first program of every sandboxed bot's start (decision 164).
 *
 *   bot-exec [--netns-fd=FD] --uid=UID --gid=GID [--RESOURCE=SOFT:HARD ...] -- PROGRAM [ARG ...]
 *   bot-exec --stdio-socket=FD -- PROGRAM [ARG ...]
 *
 * The worker starts it as root with a vfork (nothing of the worker's memory
 * is copied). In this order it joins the network namespace FD (an empty one
 * of the worker's pool, decision 165) and closes FD, drops every
 * supplementary group, sets the gid and then the uid (real, effective and
 * saved), sets each rlimit (RESOURCE as prlimit(1) names them: as, cpu,
 * nproc, fsize, nofile, core, memlock, msgqueue; "unlimited" or a number),
 * and executes PROGRAM (bwrap) with the environment it was given.
 *
 * In both forms it first gives every signal its default disposition and
 * blocks none: an ignored signal and the signal mask survive an exec, so a
 * worker started with SIGINT ignored (any `&` launch from a shell) would
 * otherwise hand that on to every bot (decision 207).
 *
 * With --stdio-socket it is the first program inside a node or native bot's
 * sandbox (decision 166), as the bot's uid: it waits on the Unix socket FD
 * for two descriptors (SCM_RIGHTS), the bot's stdin and stdout, puts them on
 * 0 and 1, closes FD and executes the bot. The worker sends them once the
 * sandbox is in its cgroups, so nothing of the bot runs before; and only the
 * bot holds its pipes (not the outer bwrap, which started with stand-ins),
 * so a bot that closes its stdout is seen at once.
 *
 * It fails closed: an unknown option, a malformed number, a uid or gid of 0,
 * no uid or gid, or any system call failing, and it writes one line to
 * stderr and exits with 126, before PROGRAM runs. It never returns to root.
 *
 * Freestanding (no C library, system calls made directly): a glibc program's
 * start-up reads the CPU's features with CPUID, which a virtual machine
 * traps, so every exec of one costs about 0.4 ms of CPU here; this exec
 * costs a few microseconds. x86-64 Linux only, like the native runtime.
 */

#if !defined(__x86_64__) || !defined(__linux__)
#error "bot-exec is written for x86-64 Linux"
#endif

typedef unsigned long u64;

#define SYS_write 1
#define SYS_close 3
#define SYS_rt_sigaction 13
#define SYS_rt_sigprocmask 14
#define SYS_dup2 33
#define SYS_recvmsg 47
#define SYS_execve 59
#define SYS_exit 60
#define SYS_setgroups 116
#define SYS_setresuid 117
#define SYS_setresgid 119
#define SYS_prlimit64 302
#define SYS_setns 308
#define CLONE_NEWNET 0x40000000
#define SOL_SOCKET 1
#define SCM_RIGHTS 1
#define MSG_CMSG_CLOEXEC 0x40000000
#define MSG_CTRUNC 0x8
#define RLIM_INFINITY (~0UL)
#define EXIT_REFUSED 126
#define SIG_SETMASK 2
#define SIGKILL 9
#define SIGSTOP 19
#define LAST_SIGNAL 64

static long syscall4(long number, long a, long b, long c, long d)
{
    long result;
    register long r10 __asm__("r10") = d;
    __asm__ volatile("syscall"
                     : "=a"(result)
                     : "a"(number), "D"(a), "S"(b), "d"(c), "r"(r10)
                     : "rcx", "r11", "memory");
    return result;
}

static unsigned long length(const char *text)
{
    unsigned long n = 0;
    while (text[n])
        n++;
    return n;
}

static void say(const char *text)
{
    syscall4(SYS_write, 2, (long)text, (long)length(text), 0);
}

static void __attribute__((noreturn)) refuse(const char *what, const char *detail)
{
    say("bot-exec: ");
    say(what);
    if (detail) {
        say(": ");
        say(detail);
    }
    say("\n");
    for (;;)
        syscall4(SYS_exit, EXIT_REFUSED, 0, 0, 0);
}

/* "name=" at the start of arg: the text after it, else 0. */
static const char *value_of(const char *arg, const char *name)
{
    while (*name)
        if (*arg++ != *name++)
            return 0;
    return arg;
}

/* A decimal number of text[0..end) (end: the first char of `stop` or NUL). */
static int parse_number(const char *text, char stop, u64 *out, const char **rest)
{
    u64 value = 0;
    const char *p = text;
    if (*p < '0' || *p > '9')
        return 0;
    for (; *p >= '0' && *p <= '9'; p++) {
        u64 digit = (u64)(*p - '0');
        if (value > (RLIM_INFINITY - digit) / 10)
            return 0;
        value = value * 10 + digit;
    }
    if (*p != stop)
        return 0;
    *out = value;
    *rest = p;
    return 1;
}

static int parse_limit(const char *text, char stop, u64 *out, const char **rest)
{
    const char *unlimited = "unlimited";
    const char *p = text;
    while (*unlimited && *p == *unlimited) {
        p++;
        unlimited++;
    }
    if (!*unlimited && *p == stop) {
        *out = RLIM_INFINITY;
        *rest = p;
        return 1;
    }
    return parse_number(text, stop, out, rest);
}

static const struct {
    const char *option;
    int resource;
} RESOURCES[] = {
    {"--as=", 9},      {"--cpu=", 0},     {"--nproc=", 6},   {"--fsize=", 1},
    {"--nofile=", 7},  {"--core=", 4},    {"--memlock=", 8}, {"--msgqueue=", 12},
};
#define N_RESOURCES (sizeof RESOURCES / sizeof RESOURCES[0])

struct rlimit64 {
    u64 soft, hard;
};

struct iovec {
    void *base;
    u64 length;
};

struct msghdr {
    void *name;
    int name_length;
    struct iovec *iov;
    u64 iov_count;
    void *control;
    u64 control_length;
    int flags;
};

/* --stdio-socket=FD -- PROGRAM ...: receive stdin and stdout, then become PROGRAM. */
static void __attribute__((noreturn)) hand_over_stdio(long socket_fd, char **program, char **envp)
{
    char byte;
    struct iovec iov = {&byte, 1};
    /* A cmsghdr (length, level, type: 16 bytes) and two ints, and room to
       see that no more came. */
    u64 control[8] = {0};
    struct msghdr message = {0, 0, &iov, 1, control, sizeof control, 0};
    long got = syscall4(SYS_recvmsg, socket_fd, (long)&message, MSG_CMSG_CLOEXEC, 0);
    if (got <= 0)
        refuse("the bot's stdin and stdout never came", 0);
    int *fds = (int *)&control[2];
    if (message.flags & MSG_CTRUNC || message.control_length != 24 || control[0] != 24 ||
        ((int *)control)[2] != SOL_SOCKET || ((int *)control)[3] != SCM_RIGHTS)
        refuse("not the bot's stdin and stdout", 0);
    /* Received close-on-exec: after the two dup2, only 0 and 1 go on. */
    if (syscall4(SYS_dup2, fds[0], 0, 0, 0) < 0 || syscall4(SYS_dup2, fds[1], 1, 0, 0) < 0)
        refuse("cannot put the bot's stdin and stdout in place", 0);
    if (syscall4(SYS_close, socket_fd, 0, 0, 0) < 0)
        refuse("cannot close the socket", 0);
    syscall4(SYS_execve, (long)program[0], (long)program, (long)envp, 0);
    refuse("cannot execute", program[0]);
}

/* The kernel's struct sigaction; a handler of 0 is SIG_DFL. */
struct kernel_sigaction {
    u64 handler;
    u64 flags;
    u64 restorer;
    u64 mask;
};

static void default_signals(void)
{
    struct kernel_sigaction action = {0, 0, 0, 0};
    u64 none = 0;
    for (long signal = 1; signal <= LAST_SIGNAL; signal++)
        if (signal != SIGKILL && signal != SIGSTOP &&
            syscall4(SYS_rt_sigaction, signal, (long)&action, 0, sizeof none) < 0)
            refuse("cannot reset a signal's disposition", 0);
    if (syscall4(SYS_rt_sigprocmask, SIG_SETMASK, (long)&none, 0, sizeof none) < 0)
        refuse("cannot unblock the signals", 0);
}

int run(long argc, char **argv, char **envp)
{
    long netns_fd = -1;
    u64 uid = 0, gid = 0;
    struct rlimit64 limits[N_RESOURCES];
    int resources[N_RESOURCES];
    unsigned n_limits = 0;
    long i;
    const char *value, *rest;
    default_signals();
    if (argc >= 2 && (value = value_of(argv[1], "--stdio-socket="))) {
        u64 fd;
        if (!parse_number(value, 0, &fd, &rest) || fd > 0x7fffffff)
            refuse("not a descriptor", argv[1]);
        if (argc < 4)
            refuse("no program after --", 0);
        if (!(argv[2][0] == '-' && argv[2][1] == '-' && argv[2][2] == 0))
            refuse("--stdio-socket takes no other option", argv[2]);
        hand_over_stdio((long)fd, argv + 3, envp);
    }
    for (i = 1; i < argc; i++) {
        const char *arg = argv[i];
        unsigned r;
        if (arg[0] == '-' && arg[1] == '-' && arg[2] == 0) {
            i++;
            break;
        }
        if ((value = value_of(arg, "--uid="))) {
            if (!parse_number(value, 0, &uid, &rest) || uid == 0 || uid > 0xfffffffeUL)
                refuse("not a uid other than 0", arg);
            continue;
        }
        if ((value = value_of(arg, "--gid="))) {
            if (!parse_number(value, 0, &gid, &rest) || gid == 0 || gid > 0xfffffffeUL)
                refuse("not a gid other than 0", arg);
            continue;
        }
        if ((value = value_of(arg, "--netns-fd="))) {
            u64 fd;
            if (!parse_number(value, 0, &fd, &rest) || fd > 0x7fffffff)
                refuse("not a descriptor", arg);
            netns_fd = (long)fd;
            continue;
        }
        for (r = 0; r < N_RESOURCES; r++)
            if ((value = value_of(arg, RESOURCES[r].option)))
                break;
        if (r == N_RESOURCES)
            refuse("unknown option", arg);
        if (n_limits == N_RESOURCES)
            refuse("too many limits", arg);
        if (!parse_limit(value, ':', &limits[n_limits].soft, &rest) ||
            !parse_limit(rest + 1, 0, &limits[n_limits].hard, &rest) ||
            limits[n_limits].soft > limits[n_limits].hard)
            refuse("not SOFT:HARD with SOFT <= HARD", arg);
        resources[n_limits++] = RESOURCES[r].resource;
    }
    if (uid == 0 || gid == 0)
        refuse("--uid and --gid are required", 0);
    if (i >= argc)
        refuse("no program after --", 0);
    if (netns_fd >= 0) {
        if (syscall4(SYS_setns, netns_fd, CLONE_NEWNET, 0, 0) < 0)
            refuse("cannot join the network namespace", 0);
        if (syscall4(SYS_close, netns_fd, 0, 0, 0) < 0)
            refuse("cannot close the network namespace's descriptor", 0);
    }
    if (syscall4(SYS_setgroups, 0, 0, 0, 0) < 0)
        refuse("cannot drop the supplementary groups", 0);
    if (syscall4(SYS_setresgid, (long)gid, (long)gid, (long)gid, 0) < 0)
        refuse("cannot set the gid", 0);
    if (syscall4(SYS_setresuid, (long)uid, (long)uid, (long)uid, 0) < 0)
        refuse("cannot set the uid", 0);
    for (unsigned k = 0; k < n_limits; k++)
        if (syscall4(SYS_prlimit64, 0, resources[k], (long)&limits[k], 0) < 0)
            refuse("cannot set an rlimit", 0);
    syscall4(SYS_execve, (long)argv[i], (long)(argv + i), (long)envp, 0);
    refuse("cannot execute", argv[i]);
}

/* The kernel's entry: argc at the stack pointer, then argv and envp. */
__asm__(".text\n"
        ".global _start\n"
        "_start:\n"
        "  xor %rbp, %rbp\n"
        "  mov (%rsp), %rdi\n"
        "  lea 8(%rsp), %rsi\n"
        "  lea 16(%rsp,%rdi,8), %rdx\n"
        "  and $-16, %rsp\n"
        "  call run\n"
        "  mov %rax, %rdi\n"
        "  mov $60, %rax\n"
        "  syscall\n");
