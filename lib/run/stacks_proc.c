/* The process group of a hung run as /proc shows it (issue 33): its
 * members and what runtime each is, whether a signal is caught, and which
 * native threads wait for a mutex another thread holds (the two halves
 * of a deadlock). Read by the capture's thread; every read is bounded. */
#include "buildconf.h"

#include <ctype.h>
#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/futex.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "stacks_int.h"

#define MEMBERS_MAX	256	/* of a group, read */
#define COMMAND_MAX	512	/* bytes of a command line kept */

/* Read a small /proc file into buf (NUL-terminated); its length or -1. */
static ssize_t
read_small(const char *path, char *buf, size_t size)
{
	ssize_t	 n;
	int	 fd;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return -1;
	n = read(fd, buf, size - 1);
	close(fd);
	if (n < 0)
		return -1;
	buf[n] = '\0';
	return n;
}

/* The fields of /proc/PID/stat after the command's closing parenthesis
 * (the name may hold anything). 0, or -1 when gone. */
static int
read_stat(pid_t pid, char *comm, size_t commlen, char *state, pid_t *ppid,
    pid_t *pgrp, int *threads)
{
	char	 path[64], buf[1024], *open_p, *close_p;
	long	 f[18];
	int	 n;

	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	if (read_small(path, buf, sizeof buf) <= 0)
		return -1;
	if ((open_p = strchr(buf, '(')) == NULL ||
	    (close_p = strrchr(buf, ')')) == NULL || close_p < open_p)
		return -1;
	n = (int)(close_p - open_p - 1);
	snprintf(comm, commlen, "%.*s", n, open_p + 1);
	/* state ppid pgrp session tty tpgid flags minflt cminflt majflt
	 * cmajflt utime stime cutime cstime priority nice num_threads */
	if (sscanf(close_p + 1, " %c %ld %ld %ld %ld %ld %ld %ld %ld %ld %ld "
	    "%ld %ld %ld %ld %ld %ld %ld", state, &f[0], &f[1], &f[2], &f[3],
	    &f[4], &f[5], &f[6], &f[7], &f[8], &f[9], &f[10], &f[11], &f[12],
	    &f[13], &f[14], &f[15], &f[16]) != 18)
		return -1;
	*ppid = (pid_t)f[0];
	*pgrp = (pid_t)f[1];
	*threads = (int)f[16];
	return 0;
}

/* The state letter of pid now ('X' when gone). */
char
stacks_state(pid_t pid)
{
	char	 comm[32], state = 'X';
	pid_t	 ppid, pgrp;
	int	 threads;

	if (read_stat(pid, comm, sizeof comm, &state, &ppid, &pgrp,
	    &threads) < 0)
		return 'X';
	return state;
}

/* Is sig caught by pid (its SigCgt mask)? */
int
stacks_caught(pid_t pid, int sig)
{
	char		 path[64], buf[4096], *p;
	unsigned long long mask;

	snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
	if (read_small(path, buf, sizeof buf) <= 0 ||
	    (p = strstr(buf, "\nSigCgt:")) == NULL ||
	    sscanf(p + 8, "%llx", &mask) != 1)
		return 0;
	return sig >= 1 && sig <= 64 && (mask >> (sig - 1)) & 1;
}

/* The command line of pid, arguments apart by spaces, cut (malloc'd). */
static char *
read_command(pid_t pid)
{
	char	 path[64], buf[COMMAND_MAX + 1];
	ssize_t	 n;

	snprintf(path, sizeof path, "/proc/%d/cmdline", (int)pid);
	if ((n = read_small(path, buf, sizeof buf)) <= 0)
		return NULL;
	while (n > 0 && buf[n - 1] == '\0')
		n--;
	for (ssize_t i = 0; i < n; i++)
		if (buf[i] == '\0' || (unsigned char)buf[i] < 0x20)
			buf[i] = ' ';
	return flaky_strndup(buf, (size_t)n);
}

/* The basename of exe, or "". */
static const char *
base_of(const char *exe)
{
	const char *s;

	if (exe == NULL)
		return "";
	s = strrchr(exe, '/');
	return s != NULL ? s + 1 : exe;
}

/* Does the ELF file at fd have a section of that name? Bounded reads of
 * the section headers and their names only. */
static int
elf_has_section(int fd, const char *const *names)
{
	unsigned char	 id[EI_NIDENT];
	uint64_t	 shoff, stroff = 0, strsize = 0;
	unsigned	 shnum, shentsize, shstrndx;
	char		*strtab = NULL;
	int		 found = 0, is64;

	if (pread(fd, id, sizeof id, 0) != (ssize_t)sizeof id ||
	    memcmp(id, ELFMAG, SELFMAG) != 0)
		return 0;
	is64 = id[EI_CLASS] == ELFCLASS64;
	/* the section names' table, by the class's own structs */
#define SHSTRTAB(Ehdr, Shdr) do {					\
		Ehdr	 eh;						\
		Shdr	 sh;						\
									\
		if (pread(fd, &eh, sizeof eh, 0) != (ssize_t)sizeof eh)	\
			return 0;					\
		shoff = eh.e_shoff;					\
		shnum = eh.e_shnum;					\
		shentsize = eh.e_shentsize;				\
		shstrndx = eh.e_shstrndx;				\
		if (shentsize != sizeof sh || shnum == 0 ||		\
		    shnum > 4096 || shstrndx >= shnum || pread(fd, &sh,	\
		    sizeof sh, (off_t)(shoff + (uint64_t)shstrndx *	\
		    shentsize)) != sizeof sh)				\
			return 0;					\
		stroff = sh.sh_offset;					\
		strsize = sh.sh_size;					\
	} while (0)
	if (is64)
		SHSTRTAB(Elf64_Ehdr, Elf64_Shdr);
	else
		SHSTRTAB(Elf32_Ehdr, Elf32_Shdr);
#undef SHSTRTAB
	if (strsize == 0 || strsize > 65536 ||
	    (strtab = malloc((size_t)strsize + 1)) == NULL)
		return 0;
	if (pread(fd, strtab, (size_t)strsize, (off_t)stroff) !=
	    (ssize_t)strsize)
		goto out;
	strtab[strsize] = '\0';
	for (unsigned i = 0; i < shnum && !found; i++) {
		uint32_t name;
		off_t	 at = (off_t)(shoff + (uint64_t)i * shentsize);

		if (is64) {
			Elf64_Shdr sh;

			if (pread(fd, &sh, sizeof sh, at) != sizeof sh)
				break;
			name = sh.sh_name;
		} else {
			Elf32_Shdr sh;

			if (pread(fd, &sh, sizeof sh, at) != sizeof sh)
				break;
			name = sh.sh_name;
		}
		if (name >= strsize)
			continue;
		for (size_t k = 0; names[k] != NULL; k++)
			if (strcmp(strtab + name, names[k]) == 0)
				found = 1;
	}
out:
	free(strtab);
	return found;
}

/* Is the program of pid built by Go (its runtime dumps every goroutine
 * on SIGQUIT)? Told by the sections the Go linker writes. */
int
stacks_is_go(const char *exe)
{
	static const char *const go[] = { ".go.buildinfo",
	    ".note.go.buildid", ".gopclntab", NULL };
	int	 fd, r;

	if (exe == NULL || (fd = open(exe, O_RDONLY | O_CLOEXEC)) == -1)
		return 0;
	r = elf_has_section(fd, go);
	close(fd);
	return r;
}

/* Does pid's one thread wait for a child (a shell, make, npm)? Its
 * stacks would only say so. */
static int
waits_for_child(pid_t pid)
{
	char	 path[64], buf[64];

	snprintf(path, sizeof path, "/proc/%d/wchan", (int)pid);
	return read_small(path, buf, sizeof buf) > 0 &&
	    strcmp(buf, "do_wait") == 0;
}

/* Is m a runner or a shell that only waits for the processes that run
 * the tests (ctest, make, sh)? Taking its stacks would cost time (gdb
 * reads ctest's symbols for most of a second) and say so. */
static int
is_wrapper(const struct stacks_member *m)
{
	static const char *const names[] = { "ctest", "make", "gmake",
	    "ninja", "sh", "bash", "dash", "zsh", "env", "timeout", "xargs",
	    "prove", "script", "setsid", "nice", "ionice", "stdbuf", NULL };
	const char	*b = base_of(m->exe);

	for (size_t i = 0; names[i] != NULL; i++)
		if (strcmp(b, names[i]) == 0 || strcmp(m->comm, names[i]) == 0)
			return 1;
	return 0;
}

/* What runtime m runs, from its program and the signals it catches:
 * Python is one whose sitecustomize opened its file in dir and caught the
 * signal (Go catches every signal). */
static void
member_runtime(struct stacks_member *m, const char *dir)
{
	char		 path[4096];
	const char	*b = base_of(m->exe);

	snprintf(path, sizeof path, "%s/py-%d", dir, (int)m->pid);
	if (access(path, F_OK) == 0 &&
	    stacks_caught(m->pid, STACKS_PY_SIGNAL)) {
		m->runtime = RT_PYTHON;
		return;
	}
	snprintf(path, sizeof path, "/proc/%d/exe", (int)m->pid);
	if (strcmp(b, "node") == 0 || strcmp(b, "nodejs") == 0)
		m->runtime = RT_NODE;
	else if (strcmp(b, "java") == 0 && stacks_caught(m->pid, SIGQUIT))
		m->runtime = RT_JAVA;
	else if (stacks_is_go(path)) {
		m->runtime = RT_GO;
		/* The go command: its test binary is the one to ask, and
		 * a SIGQUIT would end the command that relays its output. */
		m->skip = strcmp(b, "go") == 0;
	} else
		m->runtime = RT_NATIVE;
}

/* The members of process group pgid (at most MEMBERS_MAX; *ret_all how
 * many there were), zombies left out, each with its depth under root and
 * its runtime (dir: the run's stacks directory). 0 or -ENOMEM. */
int
stacks_members(pid_t pgid, pid_t root, const char *dir,
    struct stacks_member **ret, size_t *ret_n, int *ret_all)
{
	struct stacks_member *v;
	struct dirent	*de;
	DIR		*proc;
	size_t		 n = 0;
	int		 all = 0;

	*ret = NULL;
	*ret_n = 0;
	*ret_all = 0;
	if ((v = calloc(MEMBERS_MAX, sizeof *v)) == NULL)
		return -ENOMEM;
	if ((proc = opendir("/proc")) == NULL) {
		free(v);
		return 0;
	}
	while ((de = readdir(proc)) != NULL) {
		struct stacks_member m;
		char	 path[64], exe[4096];
		pid_t	 pgrp;
		ssize_t	 k;

		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		memset(&m, 0, sizeof m);
		m.pid = (pid_t)strtol(de->d_name, NULL, 10);
		if (read_stat(m.pid, m.comm, sizeof m.comm, &m.state, &m.ppid,
		    &pgrp, &m.threads) < 0 || pgrp != pgid || m.state == 'Z' ||
		    m.state == 'X')
			continue;
		all++;
		if (n == MEMBERS_MAX)
			continue;
		snprintf(path, sizeof path, "/proc/%d/exe", (int)m.pid);
		if ((k = readlink(path, exe, sizeof exe - 1)) > 0) {
			exe[k] = '\0';
			m.exe = strdup(exe);
		}
		m.command = read_command(m.pid);
		m.waits_child = m.threads == 1 && waits_for_child(m.pid);
		member_runtime(&m, dir);
		v[n++] = m;
	}
	closedir(proc);
	/* A wrapper with a child in the group only waits for it. */
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < n && !v[i].waits_child; j++)
			if (v[j].ppid == v[i].pid && v[i].runtime ==
			    RT_NATIVE && is_wrapper(&v[i]))
				v[i].waits_child = 1;
	/* Depth: steps up the parents within the group to root. */
	for (size_t i = 0; i < n; i++) {
		pid_t	 p = v[i].pid;
		int	 d = 0;

		while (p != root && d < (int)n) {
			size_t	 j;

			for (j = 0; j < n && v[j].pid != p; j++)
				;
			if (j == n)
				break;
			p = v[j].ppid;
			d++;
		}
		v[i].depth = d;
	}
	*ret = v;
	*ret_n = n;
	*ret_all = all;
	return 0;
}

void
stacks_members_free(struct stacks_member *v, size_t n)
{
	if (v == NULL)
		return;
	for (size_t i = 0; i < n; i++) {
		free(v[i].exe);
		free(v[i].command);
	}
	free(v);
}

/* The lock word, count and owner of a glibc mutex at addr in pid (its
 * first three ints, on every architecture glibc has), through
 * /proc/PID/mem: the permission is ptrace's, which a parent has. */
static int
read_mutex(int memfd, uint64_t addr, int32_t w[3])
{
	return pread(memfd, w, 3 * sizeof *w, (off_t)addr) ==
	    (ssize_t)(3 * sizeof *w) ? 0 : -1;
}

/* Does pid have a thread tid? */
static int
has_thread(pid_t pid, pid_t tid)
{
	char	 path[64];

	snprintf(path, sizeof path, "/proc/%d/task/%d", (int)pid, (int)tid);
	return tid > 0 && access(path, F_OK) == 0;
}

/* The threads of pid blocked on a mutex another of its threads holds:
 * from each thread's system call (/proc/PID/task/TID/syscall: a futex
 * wait on an address) and the mutex there (its owner's thread id, which
 * glibc records on every lock). At most max into w; how many. */
int
stacks_lockwaits(pid_t pid, struct stacks_lockwait *w, size_t max)
{
	struct dirent	*de;
	DIR		*dir;
	char		 path[128], buf[256];
	size_t		 n = 0;
	int		 memfd;

	snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
	if ((dir = opendir(path)) == NULL)
		return 0;
	snprintf(path, sizeof path, "/proc/%d/mem", (int)pid);
	memfd = open(path, O_RDONLY | O_CLOEXEC);
	while (memfd != -1 && n < max && (de = readdir(dir)) != NULL) {
		unsigned long long addr, op;
		long	 nr;
		int32_t	 m[3];
		pid_t	 tid, owner = 0;

		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		tid = (pid_t)strtol(de->d_name, NULL, 10);
		snprintf(path, sizeof path, "/proc/%d/task/%d/syscall",
		    (int)pid, (int)tid);
		if (read_small(path, buf, sizeof buf) <= 0 ||
		    sscanf(buf, "%ld %llx %llx", &nr, &addr, &op) != 3 ||
		    nr != SYS_futex || read_mutex(memfd, addr, m) < 0)
			continue;
		switch (op & FUTEX_CMD_MASK) {
		case FUTEX_WAIT:
		case FUTEX_WAIT_BITSET:
			/* locked (1) or locked with waiters (2) */
			if (m[0] == 1 || m[0] == 2)
				owner = m[2];
			break;
		case FUTEX_LOCK_PI:
#ifdef FUTEX_LOCK_PI2
		case FUTEX_LOCK_PI2:
#endif
			owner = m[0] & FUTEX_TID_MASK;
			break;
		}
		if (owner <= 0 || owner == tid || !has_thread(pid, owner))
			continue;
		w[n].tid = tid;
		w[n].owner = owner;
		w[n].addr = addr;
		n++;
	}
	if (memfd != -1)
		close(memfd);
	closedir(dir);
	return (int)n;
}
