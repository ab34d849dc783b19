/* The supervisor every bot runs under: it applies the bot's limits, counts its CPU and stops it.
 *
 * The arena never forks (it has imported grpc), so limits are applied in a fresh process: the arena runs each bot
 * as ``arena-supervisor [LIMITS] -- COMMAND...`` (arena/launch/sandbox.py builds the command line;
 * arena/launch/native.py finds or builds this program). It runs outside the bot's jail, as the arena's user, and:
 *
 * - with cgroups, makes the bot's own group below the arena's cgroup in each hierarchy (arena-bot-<its pid>): a
 *   process count (pids.max), memory including tmpfs and shared memory, the default CPU share (so that a spinning
 *   bot gets one share of the machine, never the others' shares), and CPU time read from the group's
 *   cpuacct.usage, which nothing in the jail can change. The bot's process joins the group before it executes
 *   anything; when the bot ends, or is stopped, the group is frozen, every process in it killed, and the group
 *   removed (also when the start fails half-way). With --in-bot-group the group is made below the bot's group
 *   (arena.launch.sandbox.make_bot_group), which holds the limits of all the bot's processes at a table;
 * - forks the bot with its resource limits set (address space, open files, largest file, no core dumps) and
 *   /dev/null as its standard input; without cgroups it stays as the bot's parent (a child subreaper), so every
 *   process the bot starts is still a descendant that it kills when the bot ends;
 * - as root with --drop-uid, gives the bot's child a mount namespace of its own where the jail's non-system
 *   folders are bound into a stage any uid may cross, makes the bot's socket the bot's uid's, and drops the child
 *   to a host uid of its own (HOST_UID_BASE + the supervisor's pid, no groups) before bubblewrap starts;
 * - counts the CPU time of the bot per match ("renew" on its standard input starts a new match) and kills the bot
 *   when it spends more than its allowance (exit status CPU_EXIT_CODE); "freeze" and "thaw" freeze a warm bot;
 * - stops the bot when its standard input closes (the arena asks it to, or the arena itself is gone, even by
 *   kill -9) or it gets SIGTERM, SIGINT or SIGHUP: SIGTERM, then SIGKILL STOP_GRACE later, then the whole group.
 *
 * Exit statuses: the bot's own (128 + N for a signal N), CPU_EXIT_CODE, START_FAILED_EXIT_CODE (its cgroup or stage
 * could not be made: a "[arena sandbox]" line says why), RUN_FAILED_EXIT_CODE (its command could not be run),
 * USAGE_EXIT_CODE (a bad command line). The values it shares with the arena are in supervisor.h, generated from
 * arena/launch/supervisor_constants.py (scripts/gen_supervisor_h.py); tests/test_sandbox.py is its specification,
 * and CI also runs it against a build with -fsanitize=address,undefined.
 *
 * It runs as the arena's user, root included: every call's result is checked, every buffer is bounded, and the
 * signals it waits for arrive through a signalfd read in one poll loop (they are blocked otherwise).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "supervisor.h"

#define MAX_CGROUPS 16
#define PATH_SIZE 4096

struct options {
    long long memory, cpu, nofile, fsize, pids;
    const char *cgroup[MAX_CGROUPS]; /* CONTROLLER=FOLDER, as given */
    int ncgroups;
    bool in_bot_group, drop_uid;
    const char *seccomp;
    char **command;
};

/* The bot's cgroups (v1): one folder per controller; controllers mounted together share a folder. */
struct botgroup {
    char controller[MAX_CGROUPS][64];
    int folder_of[MAX_CGROUPS]; /* index into folders */
    int ncontrollers;
    char folders[MAX_CGROUPS][PATH_SIZE]; /* the distinct folders made */
    int nfolders;
    char cpu_folder[PATH_SIZE];
};

static struct options opt;
static struct botgroup grp;
static bool have_group;
static char stage[PATH_SIZE];
static pid_t child;
static int child_status = -1; /* -1: the bot has not ended */
static double stop_at = -1, kill_at = -1, cpu_base;
static bool killed_for_cpu;

/* ------------------------------------------------------------------------------------------- small helpers */

static void say(const char *format, ...) {
    char line[1024];
    size_t room = sizeof line - 1; /* one byte kept for the newline */
    int n = snprintf(line, room, "[arena sandbox] ");
    va_list args;
    va_start(args, format);
    int m = vsnprintf(line + n, room - (size_t)n, format, args);
    va_end(args);
    size_t len = (size_t)n + (m < 0 ? 0 : (size_t)m < room - (size_t)n ? (size_t)m : room - (size_t)n - 1);
    line[len++] = '\n';
    for (size_t done = 0; done < len;) { /* best effort: stderr may be gone */
        ssize_t w = write(2, line + done, len - done);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) break;
        done += (size_t)w;
    }
}

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void nap(double seconds) {
    struct timespec t = {(time_t)seconds, (long)((seconds - (double)(time_t)seconds) * 1e9)};
    while (nanosleep(&t, &t) != 0 && errno == EINTR) {}
}

/* Format into buf, or fail (ENAMETOOLONG) rather than cut a path short. */
static int path(char *buf, size_t size, const char *format, ...) {
    va_list args;
    va_start(args, format);
    int n = vsnprintf(buf, size, format, args);
    va_end(args);
    if (n < 0 || (size_t)n >= size) {
        errno = ENAMETOOLONG;
        return -1;
    }
    return 0;
}

static int write_file(const char *file, const char *value) {
    int fd;
    do fd = open(file, O_WRONLY | O_TRUNC | O_CLOEXEC); while (fd < 0 && errno == EINTR);
    if (fd < 0) return -1;
    size_t len = strlen(value);
    ssize_t w;
    do w = write(fd, value, len); while (w < 0 && errno == EINTR);
    int saved = errno;
    close(fd);
    errno = saved;
    return w == (ssize_t)len ? 0 : -1;
}

/* Read a small file whole into buf (NUL-terminated); return its length or -1. */
static ssize_t read_file(const char *file, char *buf, size_t size) {
    int fd;
    do fd = open(file, O_RDONLY | O_CLOEXEC); while (fd < 0 && errno == EINTR);
    if (fd < 0) return -1;
    size_t len = 0;
    while (len < size - 1) {
        ssize_t r = read(fd, buf + len, size - 1 - len);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) break;
        len += (size_t)r;
    }
    close(fd);
    buf[len] = '\0';
    return (ssize_t)len;
}

static int write_in(const char *folder, const char *name, const char *value) {
    char file[PATH_SIZE];
    if (path(file, sizeof file, "%s/%s", folder, name) != 0) return -1;
    return write_file(file, value);
}

/* --------------------------------------------------------------------------------------- process lists */

/* The pids listed in a cgroup's cgroup.procs (at most max); return how many. */
static size_t group_pids(const char *folder, pid_t *pids, size_t max) {
    char file[PATH_SIZE];
    static char buf[1 << 16];
    if (path(file, sizeof file, "%s/cgroup.procs", folder) != 0 || read_file(file, buf, sizeof buf) < 0) return 0;
    size_t n = 0;
    for (char *p = buf; *p && n < max;) {
        char *end;
        long pid = strtol(p, &end, 10);
        if (end == p) break;
        if (pid > 0) pids[n++] = (pid_t)pid;
        p = end;
        while (*p == '\n' || *p == ' ') p++;
    }
    return n;
}

/* The fields of /proc/PID/stat after the command's closing parenthesis, or NULL. */
static char *stat_fields(pid_t pid, char *buf, size_t size) {
    char file[64];
    if (path(file, sizeof file, "/proc/%d/stat", (int)pid) != 0 || read_file(file, buf, size) < 0) return NULL;
    char *close = strrchr(buf, ')');
    return close ? close + 1 : NULL;
}

/* Every live process below root (scanning /proc), into a malloc'd array; return how many (0 on failure). */
static size_t descendants(pid_t root, pid_t **out) {
    size_t n = 0, cap = 256;
    pid_t *pid = malloc(cap * sizeof *pid), *ppid = malloc(cap * sizeof *ppid);
    *out = NULL;
    DIR *proc = opendir("/proc");
    if (!pid || !ppid || !proc) goto done;
    struct dirent *entry;
    while ((entry = readdir(proc)) != NULL) {
        char *end, buf[1024];
        long p = strtol(entry->d_name, &end, 10);
        char *fields = *end == '\0' && p > 0 ? stat_fields((pid_t)p, buf, sizeof buf) : NULL;
        int state_ppid;
        char state;
        if (!fields || sscanf(fields, " %c %d", &state, &state_ppid) != 2) continue;
        if (n == cap) {
            cap *= 2;
            pid_t *a = realloc(pid, cap * sizeof *pid);
            if (a) pid = a;
            pid_t *b = realloc(ppid, cap * sizeof *ppid);
            if (b) ppid = b;
            if (!a || !b) break;
        }
        pid[n] = (pid_t)p;
        ppid[n++] = state_ppid;
    }
    /* breadth first: found[] is both the answer and the queue */
    pid_t *found = malloc((n + 1) * sizeof *found);
    size_t count = 0;
    if (found) {
        pid_t parent = root;
        for (size_t head = 0;; parent = found[head++]) {
            for (size_t i = 0; i < n && count < n; i++) /* bounded: a reused pid may look like a cycle */
                if (ppid[i] == parent) found[count++] = pid[i];
            if (head == count) break;
        }
    }
    *out = found;
    n = count;
done:
    if (proc) closedir(proc);
    free(pid);
    free(ppid);
    return *out ? n : 0;
}

static void kill_descendants(void) {
    pid_t *pids;
    size_t n = descendants(getpid(), &pids);
    for (size_t i = 0; i < n; i++) kill(pids[i], SIGKILL);
    free(pids);
}

/* ----------------------------------------------------------------------------------------------- cgroups */

static void kill_group_procs(const char *folder) {
    static pid_t pids[8192];
    for (int tries = 0; tries < 50; tries++) {
        size_t n = group_pids(folder, pids, sizeof pids / sizeof *pids);
        if (n == 0) return;
        for (size_t i = 0; i < n; i++) kill(pids[i], SIGKILL);
        nap(0.01);
    }
}

/* Remove a cgroup folder and the groups below it, killing what is still in them. */
static void remove_tree(const char *folder, int depth) {
    DIR *dir = depth < 32 ? opendir(folder) : NULL;
    if (dir) {
        struct dirent *entry;
        while ((entry = readdir(dir)) != NULL) {
            char below[PATH_SIZE];
            if (entry->d_type == DT_DIR && strcmp(entry->d_name, ".") != 0 && strcmp(entry->d_name, "..") != 0
                && path(below, sizeof below, "%s/%s", folder, entry->d_name) == 0)
                remove_tree(below, depth + 1);
        }
        closedir(dir);
    }
    for (int tries = 0; tries < 100; tries++) {
        if (rmdir(folder) == 0 || errno == ENOENT) return;
        kill_group_procs(folder); /* a process that has been killed but is not gone yet */
        nap(0.01);
    }
}

static const char *group_folder(const char *controller) {
    for (int i = 0; i < grp.ncontrollers; i++)
        if (strcmp(grp.controller[i], controller) == 0) return grp.folders[grp.folder_of[i]];
    return NULL;
}

static void group_remove(void) {
    for (int i = 0; i < grp.nfolders; i++) remove_tree(grp.folders[i], 0);
    grp.nfolders = grp.ncontrollers = 0;
}

/* The bot's limits: processes, memory (and swap where counted), the default CPU share (as
 * arena.launch.sandbox.make_bot_group writes them for a bot's group). */
static int write_limits(void) {
    const char *pids = group_folder("pids"), *memory = group_folder("memory"), *cpu = group_folder("cpu");
    char value[32];
    if (!pids || !memory || !cpu) {
        errno = EINVAL;
        return -1;
    }
    write_in(memory, "memory.use_hierarchy", "1"); /* newer kernels always count the hierarchy */
    snprintf(value, sizeof value, "%lld", opt.pids);
    if (write_in(pids, "pids.max", value) != 0) return -1;
    snprintf(value, sizeof value, "%lld", opt.memory + opt.fsize);
    if (write_in(memory, "memory.limit_in_bytes", value) != 0) return -1;
    write_in(memory, "memory.memsw.limit_in_bytes", value); /* only where swap is accounted */
    return write_in(cpu, "cpu.shares", "1024");
}

/* Make the bot's group below each --cgroup parent (with its limits unless --in-bot-group); 0 or -1. */
static int group_make(const char **what) {
    const char *cpuacct_parent = NULL;
    char name[64];
    snprintf(name, sizeof name, "%s%d", CGROUP_PREFIX, (int)getpid());
    char real[MAX_CGROUPS][PATH_MAX];
    have_group = true;
    for (int i = 0; i < opt.ncgroups; i++) {
        const char *item = opt.cgroup[i], *eq = strchr(item, '=');
        size_t len = eq ? (size_t)(eq - item) : 0;
        if (!eq || len == 0 || len >= sizeof grp.controller[0]) {
            *what = "bad --cgroup";
            errno = EINVAL;
            return -1;
        }
        const char *parent = eq + 1;
        memcpy(grp.controller[i], item, len);
        grp.controller[i][len] = '\0';
        if (strcmp(grp.controller[i], "cpuacct") == 0) cpuacct_parent = parent;
        *what = parent;
        if (!realpath(parent, real[grp.nfolders])) return -1;
        int f = 0;
        while (f < grp.nfolders && strcmp(real[f], real[grp.nfolders]) != 0) f++;
        if (f == grp.nfolders) {
            if (path(grp.folders[f], sizeof grp.folders[f], "%s/%s", parent, name) != 0) return -1;
            if (mkdir(grp.folders[f], 0700) != 0) return -1;
            grp.nfolders++;
        }
        grp.folder_of[i] = f;
        grp.ncontrollers++;
    }
    const char *cpu = opt.in_bot_group ? cpuacct_parent : group_folder("cpuacct");
    *what = "no cpuacct controller";
    if (!cpu || path(grp.cpu_folder, sizeof grp.cpu_folder, "%s", cpu) != 0) {
        errno = EINVAL;
        return -1;
    }
    *what = "limits";
    return opt.in_bot_group ? 0 : write_limits();
}

/* Move the calling process into every folder of the group (in the bot's process, before exec). */
static int group_join(void) {
    char pid[32];
    snprintf(pid, sizeof pid, "%d", (int)getpid());
    for (int i = 0; i < grp.nfolders; i++)
        if (write_in(grp.folders[i], "cgroup.procs", pid) != 0) return -1;
    return 0;
}

static void group_freeze(bool frozen) {
    const char *freezer = have_group ? group_folder("freezer") : NULL;
    if (freezer) write_in(freezer, "freezer.state", frozen ? "FROZEN" : "THAWED");
}

/* Freeze the group, kill every process in it, thaw it: nothing in it can fork away meanwhile. */
static void group_kill(void) {
    static pid_t pids[8192];
    const char *procs = group_folder("pids");
    for (int tries = 0; procs && tries < 200; tries++) {
        size_t n = group_pids(procs, pids, sizeof pids / sizeof *pids);
        if (n == 0) return;
        group_freeze(true);
        for (size_t i = 0; i < n; i++) kill(pids[i], SIGKILL);
        group_freeze(false);
        nap(0.005);
    }
}

/* ------------------------------------------------------------------------------------------- CPU time */

/* CPU seconds of the bot: of its cgroup, or of the reaped children and live descendants. */
static double cpu_used(void) {
    char buf[512];
    if (have_group) {
        char file[PATH_SIZE];
        if (path(file, sizeof file, "%s/cpuacct.usage", grp.cpu_folder) != 0 || read_file(file, buf, sizeof buf) < 1)
            return 0.0;
        return (double)strtoull(buf, NULL, 10) / 1e9;
    }
    struct rusage usage;
    double total = 0.0, tick = (double)sysconf(_SC_CLK_TCK);
    if (getrusage(RUSAGE_CHILDREN, &usage) == 0)
        total = (double)usage.ru_utime.tv_sec + (double)usage.ru_utime.tv_usec / 1e6
              + (double)usage.ru_stime.tv_sec + (double)usage.ru_stime.tv_usec / 1e6;
    pid_t *pids;
    size_t n = descendants(getpid(), &pids);
    for (size_t i = 0; i < n; i++) {
        char *fields = stat_fields(pids[i], buf, sizeof buf);
        unsigned long long t[4];
        /* state (field 3) ... utime, stime, cutime, cstime are fields 14-17 */
        if (fields && sscanf(fields, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu %llu %llu",
                             &t[0], &t[1], &t[2], &t[3]) == 4)
            total += (double)(t[0] + t[1] + t[2] + t[3]) / tick;
    }
    free(pids);
    return total;
}

/* ----------------------------------------------------------------------------------------- the bot's child */

static void child_fail(const char *what) {
    say("cannot run '%s': %s: %s", opt.command[0], what, strerror(errno));
    _exit(RUN_FAILED_EXIT_CODE);
}

static void child_refuse(const char *why, const char *option) {
    say("cannot run '%s': %s '%s'", opt.command[0], why, option);
    _exit(RUN_FAILED_EXIT_CODE);
}

/* How many values a bubblewrap option takes (BWRAP_OPTIONS), 0 for a word that is no option, -1 for an option
 * the arena never writes: its values could not be told from the next option. */
static int bwrap_values(const char *option) {
    for (size_t i = 0; i < BWRAP_OPTIONS_COUNT; i++)
        if (strcmp(option, BWRAP_OPTIONS[i].name) == 0) return BWRAP_OPTIONS[i].values;
    return strncmp(option, "--", 2) == 0 ? -1 : 0;
}

static bool is_system(const char *source) {
    for (size_t i = 0; i < SYSTEM_FOLDERS_COUNT; i++)
        if (strncmp(source, SYSTEM_FOLDERS[i], strlen(SYSTEM_FOLDERS[i])) == 0) return true;
    return false;
}

/* Bind source (a folder or a file) at target, made for it in the stage. */
static void bind(const char *source, const char *target) {
    struct stat st;
    if (stat(source, &st) == 0 && S_ISDIR(st.st_mode)) {
        if (mkdir(target, 0777) != 0) child_fail(target);
    } else {
        int fd = open(target, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
        if (fd < 0) child_fail(target);
        close(fd);
    }
    if (mount(source, target, NULL, MS_BIND | MS_REC, NULL) != 0) child_fail("bind");
}

/* The bwrap command with the seccomp filter open (--seccomp FD) and, for a bot that will run as host uid,
 * each non-system --ro-bind SOURCE bound into the stage (a tmpfs in a mount namespace of this process's own),
 * so that bubblewrap's unprivileged uid can reach it (an interpreter below a home folder of mode 0700, the bot's
 * socket in the arena's private folder), read-only and with their own permissions; the bot's socket becomes
 * uid's, so that it may connect (no one else reaches it). */
static char **jail_command(char **command, long uid) {
    size_t argc = 0;
    while (command[argc]) argc++;
    char **out = calloc(argc + 3, sizeof *out);
    if (!out) child_fail("memory");
    size_t n = 0, staged = 0;
    if (uid >= 0) {
        if (unshare(CLONE_NEWNS) != 0) child_fail("unshare(CLONE_NEWNS)");
        if (mount("none", "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0) child_fail("mount --make-rprivate /");
        if (mount("arena-stage", stage, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755,size=1m") != 0)
            child_fail("mount tmpfs");
    }
    out[n++] = command[0];
    if (opt.seccomp) {
        int fd = open(opt.seccomp, O_RDONLY); /* inheritable: bwrap reads it */
        if (fd < 0) child_fail(opt.seccomp);
        char *number = malloc(16);
        if (!number) child_fail("memory");
        snprintf(number, 16, "%d", fd);
        out[n++] = "--seccomp";
        out[n++] = number;
    }
    size_t i = 1;
    while (i < argc && strcmp(command[i], "--") != 0) {
        int count = bwrap_values(command[i]);
        if (count < 0) child_refuse("unexpected bubblewrap option", command[i]);
        if (i + (size_t)count >= argc) child_refuse("bubblewrap option without its values", command[i]);
        if (strcmp(command[i], "--ro-bind") == 0 && uid >= 0 && !is_system(command[i + 1])) {
            char *target = malloc(PATH_SIZE);
            if (!target) child_fail("memory");
            if (strcmp(command[i + 2], JAIL_SOCKET) == 0 && chown(command[i + 1], (uid_t)uid, (gid_t)uid) != 0)
                child_fail("chown of the bot's socket");
            if (path(target, PATH_SIZE, "%s/%zu", stage, ++staged) != 0) child_fail("stage");
            bind(command[i + 1], target);
            out[n++] = command[i];
            out[n++] = target;
            out[n++] = command[i + 2];
        } else {
            for (int k = 0; k <= count; k++) out[n++] = command[i + (size_t)k];
        }
        i += 1 + (size_t)count;
    }
    while (i < argc) out[n++] = command[i++];
    out[n] = NULL;
    return out;
}

/* Become host uid (and gid) for good, with no supplementary groups. */
static void drop_to(long id) {
    uid_t uid = (uid_t)id, r, e, s;
    gid_t gid = (gid_t)id, rg, eg, sg;
    if (chdir("/") != 0 || setgroups(0, NULL) != 0 || setresgid(gid, gid, gid) != 0 || setresuid(uid, uid, uid) != 0)
        child_fail("drop to the bot's uid");
    if (getresuid(&r, &e, &s) != 0 || getresgid(&rg, &eg, &sg) != 0 || r != uid || e != uid || s != uid
        || rg != gid || eg != gid || sg != gid || getgroups(0, NULL) != 0) {
        errno = EPERM;
        child_fail("could not drop to the bot's uid");
    }
}

static void set_limit(int which, long long value) {
    struct rlimit limit;
    if (getrlimit(which, &limit) != 0) child_fail("getrlimit");
    rlim_t v = (rlim_t)value;
    if (limit.rlim_max != RLIM_INFINITY && v > limit.rlim_max) v = limit.rlim_max;
    limit.rlim_cur = limit.rlim_max = v;
    if (setrlimit(which, &limit) != 0) child_fail("setrlimit");
}

/* In the forked child: join the group, /dev/null as input, no other descriptors, jail, uid, limits, exec. */
static void run_bot(const sigset_t *mask) {
    static const int defaults[] = {SIGPIPE, SIGXFSZ, SIGXCPU, SIGCHLD, SIGTERM, SIGINT, SIGHUP};
    for (size_t i = 0; i < sizeof defaults / sizeof *defaults; i++) signal(defaults[i], SIG_DFL);
    if (sigprocmask(SIG_UNBLOCK, mask, NULL) != 0) child_fail("sigprocmask");
    if (have_group && group_join() != 0) child_fail("join the bot's cgroup");
    int null = open("/dev/null", O_RDONLY);
    if (null < 0 || dup2(null, 0) != 0) child_fail("/dev/null");
    if (null != 0) close(null);
#ifdef SYS_close_range
    if (syscall(SYS_close_range, 3U, ~0U, 0U) != 0)
#endif
        for (int fd = 3; fd < (1 << 16); fd++) close(fd);
    char **command = opt.command;
    long uid = opt.drop_uid ? HOST_UID_BASE + (long)getppid() : -1;
    if (opt.seccomp || uid >= 0) command = jail_command(command, uid);
    if (uid >= 0) drop_to(uid);
    set_limit(RLIMIT_CORE, 0);
    set_limit(RLIMIT_AS, opt.memory);
    set_limit(RLIMIT_NOFILE, opt.nofile);
    set_limit(RLIMIT_FSIZE, opt.fsize);
    execvp(command[0], command);
    child_fail("exec");
}

/* ----------------------------------------------------------------------------------------- the supervisor */

static void request_stop(void) {
    group_freeze(false); /* a frozen bot could neither leave nor die */
    if (stop_at < 0 && child > 0) {
        stop_at = now();
        kill_at = stop_at + STOP_GRACE;
        kill(child, SIGTERM);
    }
}

/* Reap the children that have ended (noting the bot's status); return whether any child is left. */
static bool reap(void) {
    for (;;) {
        int status;
        pid_t pid = waitpid(-1, &status, WNOHANG);
        if (pid < 0 && errno == EINTR) continue;
        if (pid < 0) return false;
        if (pid == 0) return true;
        if (pid == child) child_status = status;
    }
}

static void kill_all(void) {
    kill(child, SIGKILL);
    if (have_group) group_kill();
    if (reap()) kill_descendants();
}

/* Kill and reap every descendant: orphans of the bot, and every process of its cgroup. */
static void reap_all(void) {
    if (have_group) group_kill();
    double deadline = now() + 5.0;
    while (reap() && now() < deadline) {
        kill_descendants();
        nap(0.002);
    }
}

/* ``renew`` (a match starts: thaw, the CPU allowance starts again), ``freeze``, ``thaw``. */
static void control(char *data) {
    char *save = NULL;
    for (char *word = strtok_r(data, " \t\n\r\f\v", &save); word; word = strtok_r(NULL, " \t\n\r\f\v", &save)) {
        if (strcmp(word, "renew") == 0) {
            group_freeze(false);
            cpu_base = cpu_used();
        } else if (strcmp(word, "freeze") == 0 || strcmp(word, "thaw") == 0) {
            group_freeze(word[0] == 'f');
        }
    }
}

static int supervise(int signals) {
    bool control_open = true;
    double next_cpu = now() + CPU_POLL;
    while (child_status < 0) {
        double wake_at = kill_at >= 0 && kill_at < next_cpu ? kill_at : next_cpu;
        double wait = wake_at - now();
        struct pollfd fds[2] = {{signals, POLLIN, 0}, {control_open ? 0 : -1, POLLIN, 0}};
        int ready = poll(fds, 2, wait > 0 ? (int)(wait * 1000) + 1 : 0);
        if (ready < 0 && errno != EINTR) {
            say("poll: %s", strerror(errno));
            request_stop();
            control_open = false;
        }
        if (ready > 0 && fds[0].revents) {
            struct signalfd_siginfo info;
            while (read(signals, &info, sizeof info) == (ssize_t)sizeof info)
                if (info.ssi_signo != SIGCHLD) request_stop();
        }
        if (ready > 0 && fds[1].revents) {
            char data[513];
            ssize_t r = read(0, data, sizeof data - 1);
            if (r < 0 && (errno == EINTR || errno == EAGAIN)) {
            } else if (r <= 0) { /* the arena closed our input, or is gone: stop the bot */
                control_open = false;
                request_stop();
            } else {
                data[r] = '\0';
                control(data);
            }
        }
        reap();
        double t = now();
        if (child_status < 0 && kill_at >= 0 && t >= kill_at) {
            kill_all();
            kill_at = -1;
        }
        if (child_status < 0 && t >= next_cpu) {
            next_cpu = t + CPU_POLL;
            double spent = cpu_used() - cpu_base;
            if (spent > (double)opt.cpu) {
                killed_for_cpu = true;
                say("the bot used %.1f s of CPU in this match, over its limit of %lld s: killed", spent, opt.cpu);
                kill_all();
            }
        }
    }
    reap_all();
    if (killed_for_cpu) return CPU_EXIT_CODE;
    return WIFEXITED(child_status) ? WEXITSTATUS(child_status) : 128 + WTERMSIG(child_status);
}

static void clean_up(void) {
    if (have_group) {
        group_kill();
        group_remove();
    }
    if (stage[0]) rmdir(stage);
}

/* Make the group and the stage, fork the bot; return 0, or START_FAILED_EXIT_CODE after saying why. */
static int start(const sigset_t *mask) {
    const char *what = "";
    if (opt.ncgroups > 0) {
        if (group_make(&what) != 0) {
            say("cannot make the bot's cgroup: %s: %s", what, strerror(errno));
            return START_FAILED_EXIT_CODE;
        }
        cpu_base = cpu_used(); /* the bot's other processes at the table spent the rest */
    }
    if (opt.drop_uid) { /* a name no other live supervisor has (its pid), made here, empty */
        struct timespec t;
        clock_gettime(CLOCK_MONOTONIC, &t);
        if (path(stage, sizeof stage, "/tmp/%s%d-%lld", STAGE_PREFIX, (int)getpid(),
                 (long long)t.tv_sec * 1000000000LL + t.tv_nsec) != 0 || mkdir(stage, 0700) != 0) {
            say("cannot make the bot's stage: %s: %s", stage, strerror(errno));
            stage[0] = '\0';
            return START_FAILED_EXIT_CODE;
        }
    }
    child = fork();
    if (child < 0) {
        say("cannot fork the bot: %s", strerror(errno));
        return START_FAILED_EXIT_CODE;
    }
    if (child == 0) run_bot(mask);
    return 0;
}

/* --------------------------------------------------------------------------------------- the command line */

static void usage(FILE *to) {
    fprintf(to,
            "usage: arena-supervisor [--memory BYTES] [--cpu SECONDS] [--nofile N] [--fsize BYTES] [--pids N]\n"
            "                        [--cgroup CONTROLLER=FOLDER] [--in-bot-group] [--seccomp FILE] [--drop-uid]\n"
            "                        -- COMMAND...\n");
}

static void help(void) {
    usage(stdout);
    printf("\nRun COMMAND as a bot under resource limits, supervised (arena/launch/supervisor.c says how).\n\n"
           "  --memory BYTES      address space per process (RLIMIT_AS); with cgroups, plus --fsize, the bot's memory\n"
           "  --cpu SECONDS       CPU seconds per match for the whole bot; 'renew' on stdin starts a match\n"
           "  --nofile N          open files per process (RLIMIT_NOFILE)\n"
           "  --fsize BYTES       largest file written (RLIMIT_FSIZE)\n"
           "  --pids N            processes and threads of the bot (cgroup pids.max)\n"
           "  --cgroup CONTROLLER=FOLDER\n"
           "                      make the bot's cgroup below FOLDER in CONTROLLER's v1 hierarchy (repeat for each)\n"
           "  --in-bot-group      the --cgroup folders are the bot's group, which holds the limits of all its\n"
           "                      processes (and counts their CPU time)\n"
           "  --seccomp FILE      the seccomp filter (BPF) for bwrap --seccomp\n"
           "  --drop-uid          run the command (bwrap) as host uid %d + this supervisor's pid\n",
           HOST_UID_BASE);
}

static void bad_usage(const char *format, const char *value) {
    usage(stderr);
    fprintf(stderr, "arena-supervisor: error: ");
    fprintf(stderr, format, value);
    fprintf(stderr, "\n");
    exit(USAGE_EXIT_CODE);
}

static long long number(const char *option, const char *value) {
    char *end;
    errno = 0;
    long long n = strtoll(value, &end, 10);
    while (*end == ' ') end++;
    if (errno != 0 || end == value || *end != '\0') bad_usage("invalid number for %s", option);
    return n;
}

/* Parse the options (``--name VALUE`` or ``--name=VALUE``, as argparse reads them); exit USAGE_EXIT_CODE if bad. */
static void parse(int argc, char **argv) {
    opt.memory = (long long)DEFAULT_MEMORY_MB * MIB;
    opt.cpu = DEFAULT_CPU_SECONDS;
    opt.nofile = DEFAULT_OPEN_FILES;
    opt.fsize = (long long)DEFAULT_DISK_MB * MIB;
    opt.pids = DEFAULT_PROCESSES;
    static const char *valued[] = {"--memory", "--cpu", "--nofile", "--fsize", "--pids", "--cgroup", "--seccomp"};
    int i = 1;
    for (; i < argc; i++) {
        char *arg = argv[i], *value = NULL;
        if (strcmp(arg, "--") == 0) {
            i++;
            break;
        }
        if (strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0) {
            help();
            exit(0);
        }
        if (strcmp(arg, "--in-bot-group") == 0) {
            opt.in_bot_group = true;
            continue;
        }
        if (strcmp(arg, "--drop-uid") == 0) {
            opt.drop_uid = true;
            continue;
        }
        if (arg[0] != '-') break; /* the command, without -- */
        size_t k = 0, count = sizeof valued / sizeof *valued;
        for (; k < count; k++) {
            size_t len = strlen(valued[k]);
            if (strncmp(arg, valued[k], len) == 0 && (arg[len] == '\0' || arg[len] == '=')) {
                value = arg[len] == '=' ? arg + len + 1 : (i + 1 < argc ? argv[++i] : NULL);
                break;
            }
        }
        if (k == count) bad_usage("unrecognized argument: %s", arg);
        if (!value) bad_usage("%s expects a value", arg);
        switch (k) {
        case 0: opt.memory = number(arg, value); break;
        case 1: opt.cpu = number(arg, value); break;
        case 2: opt.nofile = number(arg, value); break;
        case 3: opt.fsize = number(arg, value); break;
        case 4: opt.pids = number(arg, value); break;
        case 5:
            if (opt.ncgroups == MAX_CGROUPS) bad_usage("%s given too often", "--cgroup");
            opt.cgroup[opt.ncgroups++] = value;
            break;
        default: opt.seccomp = value; break;
        }
    }
    if (i >= argc) bad_usage("%s", "the following arguments are required: command");
    opt.command = argv + i;
}

int main(int argc, char **argv) {
    parse(argc, argv);
    /* without cgroups, orphans of the bot come to us instead of init (best effort) */
    if (opt.ncgroups == 0 && prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0) {}
    /* a closed pipe or a big file is an error to handle, not a signal that ends us */
    signal(SIGPIPE, SIG_IGN);
    signal(SIGXFSZ, SIG_IGN);
    sigset_t mask;
    sigemptyset(&mask);
    sigaddset(&mask, SIGTERM);
    sigaddset(&mask, SIGINT);
    sigaddset(&mask, SIGHUP);
    sigaddset(&mask, SIGCHLD);
    int signals = -1;
    if (sigprocmask(SIG_BLOCK, &mask, NULL) != 0
        || (signals = signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC)) < 0) {
        say("cannot wait for signals: %s", strerror(errno));
        return START_FAILED_EXIT_CODE;
    }
    int status = start(&mask);
    if (status == 0) status = supervise(signals);
    clean_up(); /* also after a failed start: no group made before it failed is left */
    return status;
}
