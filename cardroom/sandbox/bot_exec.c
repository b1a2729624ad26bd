/*
 * bot-exec: the first program of every sandboxed bot's start (decision 164).
 *
 *   bot-exec [--netns-fd=FD] --uid=UID --gid=GID [--RESOURCE=SOFT:HARD ...] -- PROGRAM [ARG ...]
 *   bot-exec --stdio-socket=FD [--listener-only] -- PROGRAM [ARG ...]
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
 * With --stdio-socket it is the first program inside every bot's sandbox
 * (decisions 166 and 237), as the bot's uid. First it installs the start-up
 * filter (below) and sends its listener to the worker over the Unix socket
 * FD. Then, for a node or native bot, it waits on FD for two descriptors
 * (SCM_RIGHTS), the bot's stdin and stdout, puts them on 0 and 1, closes FD
 * and executes the bot. The worker sends them once the sandbox is in its
 * cgroups, so nothing of the bot runs before; and only the bot holds its
 * pipes (not the outer bwrap, which started with stand-ins), so a bot that
 * closes its stdout is seen at once. With --listener-only (a Python bot) it
 * executes the program at once and leaves FD open: the interpreter's shim
 * receives stdin and stdout on it itself.
 *
 * The start-up filter (decision 237): a second seccomp filter whose calls
 * are answered by the worker through the listener (SECCOMP_RET_USER_NOTIF):
 * the calls that make a new pipe, socket, memfd, pidfd or shared memory
 * object (each takes an inode number of a host-wide counter, which any seat
 * reads by making one). The worker lets them run until the bot has answered
 * `ready` and refuses them with EPERM from then on. It fails closed: once
 * the worker's end of the listener is gone they fail with ENOSYS. The bot
 * never holds the listener (close-on-exec, and closed here before the
 * exec), so it cannot answer for itself.
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
#define SYS_sendmsg 46
#define SYS_prctl 157
#define SYS_seccomp 317
#define PR_SET_NO_NEW_PRIVS 38
#define EBUSY 16
#define SECCOMP_SET_MODE_FILTER 1
#define SECCOMP_FILTER_FLAG_NEW_LISTENER (1UL << 3)
#define CLONE_NEWNET 0x40000000
#define SOL_SOCKET 1
#define SCM_RIGHTS 1
#define MSG_CMSG_CLOEXEC 0x40000000
#define MSG_CTRUNC 0x8
#define MSG_NOSIGNAL 0x4000
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
    register long r8 __asm__("r8") = 0; /* a fifth argument of 0 (prctl checks it) */
    __asm__ volatile("syscall"
                     : "=a"(result)
                     : "a"(number), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8)
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

/* -- the start-up filter (decision 237) -------------------------------- */

struct sock_filter {
    unsigned short code;
    unsigned char jt, jf;
    unsigned int k;
};

struct sock_fprog {
    unsigned short len;
    const struct sock_filter *filter;
};

#define BPF_LD_W_ABS 0x20    /* BPF_LD | BPF_W | BPF_ABS */
#define BPF_JEQ_K 0x15       /* BPF_JMP | BPF_JEQ | BPF_K */
#define BPF_JGE_K 0x35       /* BPF_JMP | BPF_JGE | BPF_K */
#define BPF_JSET_K 0x45      /* BPF_JMP | BPF_JSET | BPF_K */
#define BPF_AND_K 0x54       /* BPF_ALU | BPF_AND | BPF_K */
#define BPF_RET_K 0x06       /* BPF_RET | BPF_K */
#define AUDIT_ARCH_X86_64 0xc000003eU
#define SECCOMP_RET_ALLOW 0x7fff0000U
#define SECCOMP_RET_USER_NOTIF 0x7fc00000U
#define X32_SYSCALL_BIT 0x40000000U
/* struct seccomp_data: nr at 0, arch at 4, args[i] at 16 + 8 i (low half first) */
#define DATA_NR 0
#define DATA_ARCH 4
#define DATA_ARG_LOW(i) (16 + 8 * (i))
#define CLONE_PIDFD 0x1000U
#define MAP_SHARED_ANONYMOUS 0x21U /* MAP_SHARED (or MAP_SHARED_VALIDATE) | MAP_ANONYMOUS */

#define STMT(code, k) {code, 0, 0, k}
#define JUMP(code, k, jt, jf) {code, jt, jf, k}

/* Another ABI (x32, int 0x80) is refused as a whole by the main filter:
   allowed here, the strictest answer of the two stands. */
static const struct sock_filter STARTUP_FILTER[] = {
    /*  0 */ STMT(BPF_LD_W_ABS, DATA_ARCH),
    /*  1 */ JUMP(BPF_JEQ_K, AUDIT_ARCH_X86_64, 0, 19),
    /*  2 */ STMT(BPF_LD_W_ABS, DATA_NR),
    /*  3 */ JUMP(BPF_JGE_K, X32_SYSCALL_BIT, 17, 0),
    /*  4 */ JUMP(BPF_JEQ_K, 22, 17, 0),  /* pipe */
    /*  5 */ JUMP(BPF_JEQ_K, 293, 16, 0), /* pipe2 */
    /*  6 */ JUMP(BPF_JEQ_K, 41, 15, 0),  /* socket */
    /*  7 */ JUMP(BPF_JEQ_K, 53, 14, 0),  /* socketpair */
    /*  8 */ JUMP(BPF_JEQ_K, 43, 13, 0),  /* accept: a new socket of a listening one */
    /*  9 */ JUMP(BPF_JEQ_K, 288, 12, 0), /* accept4 */
    /* 10 */ JUMP(BPF_JEQ_K, 319, 11, 0), /* memfd_create */
    /* 11 */ JUMP(BPF_JEQ_K, 434, 10, 0), /* pidfd_open */
    /* 12 */ JUMP(BPF_JEQ_K, 29, 9, 0),   /* shmget */
    /* 13 */ JUMP(BPF_JEQ_K, 56, 2, 0),   /* clone: with CLONE_PIDFD */
    /* 14 */ JUMP(BPF_JEQ_K, 9, 3, 0),    /* mmap: shared and anonymous */
    /* 15 */ STMT(BPF_RET_K, SECCOMP_RET_ALLOW),
    /* 16 */ STMT(BPF_LD_W_ABS, DATA_ARG_LOW(0)),
    /* 17 */ JUMP(BPF_JSET_K, CLONE_PIDFD, 4, 3),
    /* 18 */ STMT(BPF_LD_W_ABS, DATA_ARG_LOW(3)),
    /* 19 */ STMT(BPF_AND_K, MAP_SHARED_ANONYMOUS),
    /* 20 */ JUMP(BPF_JEQ_K, MAP_SHARED_ANONYMOUS, 1, 0),
    /* 21 */ STMT(BPF_RET_K, SECCOMP_RET_ALLOW),
    /* 22 */ STMT(BPF_RET_K, SECCOMP_RET_USER_NOTIF),
};
#define STARTUP_FILTER_LENGTH (sizeof STARTUP_FILTER / sizeof STARTUP_FILTER[0])

/* Install the start-up filter and send its listener to the worker on
   socket_fd (one byte and the descriptor), then close the listener. */
static void install_startup_filter(long socket_fd)
{
    struct sock_fprog program = {STARTUP_FILTER_LENGTH, STARTUP_FILTER};
    if (syscall4(SYS_prctl, PR_SET_NO_NEW_PRIVS, 1, 0, 0) < 0)
        refuse("cannot set no_new_privs", 0);
    long listener = syscall4(SYS_seccomp, SECCOMP_SET_MODE_FILTER, (long)SECCOMP_FILTER_FLAG_NEW_LISTENER, (long)&program, 0);
    if (listener == -EBUSY)
        return; /* a filter of this process has a listener already: a bot ran
                   bot-exec in its sandbox, where the worker's gate binds it */
    if (listener < 0)
        refuse("cannot install the start-up filter", 0);
    char byte = 'L';
    struct iovec iov = {&byte, 1};
    u64 control[3] = {0}; /* a cmsghdr (16 bytes) and one int, padded */
    control[0] = 20;      /* cmsg_len: CMSG_LEN(sizeof(int)) */
    ((int *)control)[2] = SOL_SOCKET;
    ((int *)control)[3] = SCM_RIGHTS;
    ((int *)control)[4] = (int)listener;
    struct msghdr message = {0, 0, &iov, 1, control, sizeof control, 0};
    if (syscall4(SYS_sendmsg, socket_fd, (long)&message, MSG_NOSIGNAL, 0) != 1)
        refuse("cannot send the start-up filter's listener", 0);
    if (syscall4(SYS_close, listener, 0, 0, 0) < 0)
        refuse("cannot close the start-up filter's listener", 0);
}

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
        int listener_only = argc >= 3 && value_of(argv[2], "--listener-only") && argv[2][15] == 0;
        long rest_at = listener_only ? 3 : 2;
        if (argc < rest_at + 2)
            refuse("no program after --", 0);
        if (!(argv[rest_at][0] == '-' && argv[rest_at][1] == '-' && argv[rest_at][2] == 0))
            refuse("--stdio-socket takes no other option but --listener-only", argv[rest_at]);
        install_startup_filter((long)fd);
        if (listener_only) {
            syscall4(SYS_execve, (long)argv[rest_at + 1], (long)(argv + rest_at + 1), (long)envp, 0);
            refuse("cannot execute", argv[rest_at + 1]);
        }
        hand_over_stdio((long)fd, argv + rest_at + 1, envp);
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
