/* SPDX-License-Identifier: MIT */
/*
 * lockwit.so - a lock witness for diagnosing hangs on the GPU machine (which
 * has no gdb, strace or perf; cuda-gdb gives stacks but not lock owners).
 *
 *   LD_PRELOAD=lockwit.so LOCKWIT_DIR=/tmp/lw python3 prog.py
 *   python3 tests/gpu/lockwit/lockwit_dump.py /tmp/lw/<pid>.lw   # while it hangs
 *
 * It interposes the pthread mutex, rwlock and condition-variable calls that
 * libcuda, libcupti and the program make through their PLT, and keeps, per
 * thread, the locks it holds and the one it waits for, each with the return
 * address of the caller (which library took it). The table lives in a
 * MAP_SHARED file, so another process can read it at any moment without
 * stopping or signalling the hung one; lockwit_dump.py turns it into a
 * wait-for graph and prints the cycle.
 *
 * Diagnostic tool only: it is never loaded by gaptrace itself. The real
 * functions are glibc's exported __pthread_* aliases (no dlsym on the lock
 * path, so no recursion while resolving them).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define LW_SLOTS 1024
#define LW_HELD 24
#define LW_MAGIC 0x3157544b434f4cull /* "LOCKTW1" */

enum { LW_NONE, LW_RD, LW_WR, LW_MUTEX, LW_COND, LW_SEM };

struct lw_lock {
	uint64_t addr, ra;
	uint32_t kind, pad;
};

struct lw_slot {
	int32_t tid;
	uint32_t nheld;
	struct lw_lock wait;	/* what it waits for now (kind 0: nothing) */
	uint64_t wait_aux;	/* cond: the mutex it gave up */
	uint64_t wait_since_ns; /* CLOCK_MONOTONIC */
	uint64_t ops;		/* lock operations so far */
	struct lw_lock held[LW_HELD];
};

struct lw_table {
	uint64_t magic;
	uint32_t nslots, slot_size, held_max, pid;
	_Atomic uint32_t used;
	uint32_t pad;
	struct lw_slot slot[LW_SLOTS];
};

int __pthread_mutex_lock(pthread_mutex_t *);
int __pthread_mutex_trylock(pthread_mutex_t *);
int __pthread_mutex_unlock(pthread_mutex_t *);
int __pthread_rwlock_rdlock(pthread_rwlock_t *);
int __pthread_rwlock_wrlock(pthread_rwlock_t *);
int __pthread_rwlock_tryrdlock(pthread_rwlock_t *);
int __pthread_rwlock_trywrlock(pthread_rwlock_t *);
int __pthread_rwlock_unlock(pthread_rwlock_t *);

static struct lw_table *T;
static _Atomic int T_state; /* 0 none, 1 opening, 2 ready, 3 failed */
static _Atomic pid_t T_pid;
static __thread struct lw_slot *me;
static __thread pid_t me_pid;
static __thread int in_lw;

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void open_table(void)
{
	pid_t pid = getpid();
	const char *dir = getenv("LOCKWIT_DIR");
	char path[512];
	snprintf(path, sizeof(path), "%s/%d.lw", dir && *dir ? dir : "/tmp", (int)pid);
	if (dir && *dir)
		mkdir(dir, 0755);
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0 || ftruncate(fd, sizeof(struct lw_table)) < 0) {
		if (fd >= 0)
			close(fd);
		atomic_store(&T_state, 3);
		return;
	}
	void *m = mmap(NULL, sizeof(struct lw_table), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (m == MAP_FAILED) {
		atomic_store(&T_state, 3);
		return;
	}
	T = m;
	T->nslots = LW_SLOTS;
	T->slot_size = sizeof(struct lw_slot);
	T->held_max = LW_HELD;
	T->pid = (uint32_t)pid;
	T->magic = LW_MAGIC;
	atomic_store(&T_pid, pid);
	atomic_store(&T_state, 2);
}

/* The calling thread's slot, or NULL (table not usable, or full). */
static struct lw_slot *slot(void)
{
	pid_t pid = atomic_load(&T_pid);
	if (me && me_pid == pid && pid == getpid())
		return me;
	if (pid && pid != getpid()) {
		/* A fork child: start a table of its own. */
		atomic_store(&T_state, 0);
		atomic_store(&T_pid, 0);
		me = NULL;
	}
	int st = 0;
	if (atomic_compare_exchange_strong(&T_state, &st, 1))
		open_table();
	if (atomic_load(&T_state) != 2)
		return NULL;
	uint32_t i = atomic_fetch_add(&T->used, 1);
	if (i >= LW_SLOTS)
		return NULL;
	me = &T->slot[i];
	me_pid = getpid();
	me->tid = (int32_t)syscall(SYS_gettid);
	return me;
}

static void wait_begin(struct lw_slot *s, const void *addr, uint32_t kind, void *ra,
		       const void *aux)
{
	if (!s)
		return;
	s->wait_since_ns = now_ns();
	s->wait_aux = (uint64_t)(uintptr_t)aux;
	s->wait.addr = (uint64_t)(uintptr_t)addr;
	s->wait.ra = (uint64_t)(uintptr_t)ra;
	atomic_signal_fence(memory_order_seq_cst);
	s->wait.kind = kind;
}

static void wait_end(struct lw_slot *s)
{
	if (s)
		s->wait.kind = LW_NONE;
}

static void held_add(struct lw_slot *s, const void *addr, uint32_t kind, void *ra)
{
	if (!s)
		return;
	s->ops++;
	if (s->nheld < LW_HELD) {
		s->held[s->nheld] = (struct lw_lock){(uint64_t)(uintptr_t)addr,
						     (uint64_t)(uintptr_t)ra, kind, 0};
		atomic_signal_fence(memory_order_seq_cst);
		s->nheld++;
	}
}

static void held_del(struct lw_slot *s, const void *addr)
{
	if (!s)
		return;
	for (uint32_t i = s->nheld; i-- > 0;)
		if (s->held[i].addr == (uint64_t)(uintptr_t)addr) {
			for (uint32_t j = i; j + 1 < s->nheld; j++)
				s->held[j] = s->held[j + 1];
			s->nheld--;
			return;
		}
}

/* Run a lock call with bookkeeping around it; 'in_lw' keeps our own use of
 * libc (snprintf, open, mmap) from recording itself. */
#define LOCKED_CALL(addr, kind, ra, call, is_try)            \
	do {                                                 \
		if (in_lw)                                   \
			return call;                         \
		in_lw = 1;                                   \
		struct lw_slot *s = slot();                  \
		if (!(is_try))                               \
			wait_begin(s, addr, kind, ra, NULL); \
		in_lw = 0;                                   \
		int rc = call;                               \
		in_lw = 1;                                   \
		wait_end(s);                                 \
		if (rc == 0)                                 \
			held_add(s, addr, kind, ra);         \
		in_lw = 0;                                   \
		return rc;                                   \
	} while (0)

#define UNLOCK_CALL(addr, call)                 \
	do {                                    \
		if (!in_lw) {                   \
			in_lw = 1;              \
			held_del(slot(), addr); \
			in_lw = 0;              \
		}                               \
		return call;                    \
	} while (0)

#define EXPORT __attribute__((visibility("default")))

EXPORT int pthread_mutex_lock(pthread_mutex_t *m)
{
	LOCKED_CALL(m, LW_MUTEX, __builtin_return_address(0), __pthread_mutex_lock(m), 0);
}

EXPORT int pthread_mutex_trylock(pthread_mutex_t *m)
{
	LOCKED_CALL(m, LW_MUTEX, __builtin_return_address(0), __pthread_mutex_trylock(m), 1);
}

EXPORT int pthread_mutex_unlock(pthread_mutex_t *m)
{
	UNLOCK_CALL(m, __pthread_mutex_unlock(m));
}

EXPORT int pthread_rwlock_rdlock(pthread_rwlock_t *l)
{
	LOCKED_CALL(l, LW_RD, __builtin_return_address(0), __pthread_rwlock_rdlock(l), 0);
}

EXPORT int pthread_rwlock_wrlock(pthread_rwlock_t *l)
{
	LOCKED_CALL(l, LW_WR, __builtin_return_address(0), __pthread_rwlock_wrlock(l), 0);
}

EXPORT int pthread_rwlock_tryrdlock(pthread_rwlock_t *l)
{
	LOCKED_CALL(l, LW_RD, __builtin_return_address(0), __pthread_rwlock_tryrdlock(l), 1);
}

EXPORT int pthread_rwlock_trywrlock(pthread_rwlock_t *l)
{
	LOCKED_CALL(l, LW_WR, __builtin_return_address(0), __pthread_rwlock_trywrlock(l), 1);
}

EXPORT int pthread_rwlock_unlock(pthread_rwlock_t *l)
{
	UNLOCK_CALL(l, __pthread_rwlock_unlock(l));
}

typedef int (*cond_wait_fn)(pthread_cond_t *, pthread_mutex_t *);
typedef int (*cond_timedwait_fn)(pthread_cond_t *, pthread_mutex_t *, const struct timespec *);
typedef int (*sem_wait_fn)(sem_t *);

static void *real(const char *name, const char *ver)
{
	in_lw = 1;
	void *p = ver ? dlvsym(RTLD_NEXT, name, ver) : NULL;
	if (!p)
		p = dlsym(RTLD_NEXT, name);
	in_lw = 0;
	return p;
}

/* A condition wait gives the mutex up while it sleeps: show that. */
#define COND_CALL(c, m, ra, call)                         \
	do {                                              \
		struct lw_slot *s = NULL;                 \
		if (!in_lw) {                             \
			in_lw = 1;                        \
			s = slot();                       \
			held_del(s, m);                   \
			wait_begin(s, c, LW_COND, ra, m); \
			in_lw = 0;                        \
		}                                         \
		int rc = call;                            \
		if (s) {                                  \
			in_lw = 1;                        \
			wait_end(s);                      \
			held_add(s, m, LW_MUTEX, ra);     \
			in_lw = 0;                        \
		}                                         \
		return rc;                                \
	} while (0)

EXPORT int pthread_cond_wait(pthread_cond_t *c, pthread_mutex_t *m)
{
	static cond_wait_fn fn;
	if (!fn)
		fn = (cond_wait_fn)real("pthread_cond_wait", "GLIBC_2.3.2");
	COND_CALL(c, m, __builtin_return_address(0), fn(c, m));
}

EXPORT int pthread_cond_timedwait(pthread_cond_t *c, pthread_mutex_t *m, const struct timespec *t)
{
	static cond_timedwait_fn fn;
	if (!fn)
		fn = (cond_timedwait_fn)real("pthread_cond_timedwait", "GLIBC_2.3.2");
	COND_CALL(c, m, __builtin_return_address(0), fn(c, m, t));
}

EXPORT int sem_wait(sem_t *sem)
{
	static sem_wait_fn fn;
	if (!fn)
		fn = (sem_wait_fn)real("sem_wait", "GLIBC_2.34");
	struct lw_slot *s = NULL;
	if (!in_lw) {
		in_lw = 1;
		s = slot();
		wait_begin(s, sem, LW_SEM, __builtin_return_address(0), NULL);
		in_lw = 0;
	}
	int rc = fn(sem);
	if (s)
		wait_end(s);
	return rc;
}
