/*
 * cxltrace_preload.c — the pthread wrappers of the cxltrace tool, loaded
 * into the traced program as vgpreload_cxltrace-amd64-linux.so (Valgrind
 * preloads the library of that name from VALGRIND_LIB for the tool).
 *
 * Each wrapper tells the tool what the call means (client requests of
 * include/cxlsim/cxltrace.h) and runs the real function between
 * SYNC_ENTER and SYNC_LEAVE, so that nothing the library does inside is
 * recorded. Where the request goes relative to the real call is the
 * semantics:
 *
 *   mutex / spin / rwlock lock, trylock   real call; on success LOCK(obj)
 *   ... unlock                            UNLOCK(obj); real call
 *   barrier_init(b, attr, n)              real call; BARRIER_INIT(b, n)
 *   barrier_wait(b)                       BARRIER(b); real call
 *   cond_wait / timedwait(c, m)           UNLOCK(m); real call; LOCK(m)
 *   cond_signal / broadcast, init, destroy  real call only (not recorded)
 *   pthread_create(t, ...)                CREATE (may start the ROI); real call
 *                                         (the tool sees the clone and posts the
 *                                         child's start event); CREATED(*t)
 *   pthread_join(t, ...)                  real call; JOINED(t) (waits for t's
 *                                         exit event)
 *
 * rwlocks are taken as exclusive locks (readers serialise in the replay).
 *
 * One wrapper is about running at all: Valgrind keeps file descriptors of
 * its own at the top of the range and refuses any setrlimit(RLIMIT_NOFILE)
 * that moves the hard limit, so a program that sets both limits to what it
 * wants (memcached) would stop. setrlimit of RLIMIT_NOFILE is therefore
 * clamped to the hard limit the program sees (getrlimit, resolved from the
 * program's libc at run time).
 * Since glibc 2.34 the pthread functions live in libc.so.6; programs built
 * against older glibc reach them through libpthread.so.0, so every wrapper
 * exists for both sonames (Valgrind's Z-encoding: libcZdsoZa is libc.so*,
 * libpthreadZdsoZd0 is libpthread.so.0; ZAZa is "@*", for the functions
 * glibc exports in several symbol versions). This file is compiled without
 * libc, like Valgrind's own preload libraries.
 */
#include <pthread.h>
#include <sys/resource.h>
#include <time.h>

#include "cxlsim/cxltrace.h"

/* Valgrind's wrapping macros (its pub_tool_redir.h Z-encoding, by hand). */
#define REQ(r, a, b) VALGRIND_DO_CLIENT_REQUEST_STMT((r), (a), (b), 0, 0, 0)
#define ENTER() REQ(CXLTRACE_REQ_SYNC_ENTER, 0, 0)
#define LEAVE() REQ(CXLTRACE_REQ_SYNC_LEAVE, 0, 0)

/* Declares and defines wrapper NAME(ARGS) for both sonames, BODY using fn. */
#define WRAP2(so, ret, zname, params, body)                                              \
	ret I_WRAP_SONAME_FNNAME_ZZ(so, zname) params;                                   \
	ret I_WRAP_SONAME_FNNAME_ZZ(so, zname) params                                    \
	{                                                                                \
		OrigFn fn;                                                               \
		VALGRIND_GET_ORIG_FN(fn);                                                \
		body                                                                     \
	}
#define WRAP(ret, zname, params, body)                                                   \
	WRAP2(libcZdsoZa, ret, zname, params, body)                                      \
	WRAP2(libpthreadZdsoZd0, ret, zname, params, body)

/* lock-like: real call; LOCK on success (ret 0) */
#define LOCK1(zname, type)                                                               \
	WRAP(int, zname, (type * o), {                                                   \
		int ret;                                                                 \
		ENTER();                                                                 \
		CALL_FN_W_W(ret, fn, o);                                                 \
		if (ret == 0)                                                            \
			REQ(CXLTRACE_REQ_LOCK, o, 0);                                    \
		LEAVE();                                                                 \
		return ret;                                                              \
	})
#define LOCK2(zname, type)                                                               \
	WRAP(int, zname, (type * o, const struct timespec *ts), {                       \
		int ret;                                                                 \
		ENTER();                                                                 \
		CALL_FN_W_WW(ret, fn, o, ts);                                            \
		if (ret == 0)                                                            \
			REQ(CXLTRACE_REQ_LOCK, o, 0);                                    \
		LEAVE();                                                                 \
		return ret;                                                              \
	})
#define UNLOCK1(zname, type)                                                             \
	WRAP(int, zname, (type * o), {                                                   \
		int ret;                                                                 \
		ENTER();                                                                 \
		REQ(CXLTRACE_REQ_UNLOCK, o, 0);                                          \
		CALL_FN_W_W(ret, fn, o);                                                 \
		LEAVE();                                                                 \
		return ret;                                                              \
	})
/* hidden: the real call only */
#define HIDE1(zname, type)                                                               \
	WRAP(int, zname, (type * o), {                                                   \
		int ret;                                                                 \
		ENTER();                                                                 \
		CALL_FN_W_W(ret, fn, o);                                                 \
		LEAVE();                                                                 \
		return ret;                                                              \
	})
#define HIDE2(zname, type, type2)                                                        \
	WRAP(int, zname, (type * o, type2 a), {                                          \
		int ret;                                                                 \
		ENTER();                                                                 \
		CALL_FN_W_WW(ret, fn, o, a);                                             \
		LEAVE();                                                                 \
		return ret;                                                              \
	})

/* pthread_mutex_{lock,trylock,timedlock,unlock,init,destroy} */
LOCK1(pthreadZumutexZulock, pthread_mutex_t)
LOCK1(pthreadZumutexZutrylock, pthread_mutex_t)
LOCK2(pthreadZumutexZutimedlock, pthread_mutex_t)
UNLOCK1(pthreadZumutexZuunlock, pthread_mutex_t)
HIDE2(pthreadZumutexZuinit, pthread_mutex_t, const pthread_mutexattr_t *)
HIDE1(pthreadZumutexZudestroy, pthread_mutex_t)

/* pthread_spin_{lock,trylock,unlock} */
WRAP(int, pthreadZuspinZulock, (pthread_spinlock_t * o), {
	int ret;
	ENTER();
	CALL_FN_W_W(ret, fn, o);
	if (ret == 0)
		REQ(CXLTRACE_REQ_LOCK, o, 0);
	LEAVE();
	return ret;
})
WRAP(int, pthreadZuspinZutrylock, (pthread_spinlock_t * o), {
	int ret;
	ENTER();
	CALL_FN_W_W(ret, fn, o);
	if (ret == 0)
		REQ(CXLTRACE_REQ_LOCK, o, 0);
	LEAVE();
	return ret;
})
WRAP(int, pthreadZuspinZuunlock, (pthread_spinlock_t * o), {
	int ret;
	ENTER();
	REQ(CXLTRACE_REQ_UNLOCK, o, 0);
	CALL_FN_W_W(ret, fn, o);
	LEAVE();
	return ret;
})

/* pthread_rwlock_*: exclusive in the replay */
LOCK1(pthreadZurwlockZurdlock, pthread_rwlock_t)
LOCK1(pthreadZurwlockZuwrlock, pthread_rwlock_t)
LOCK1(pthreadZurwlockZutryrdlock, pthread_rwlock_t)
LOCK1(pthreadZurwlockZutrywrlock, pthread_rwlock_t)
LOCK2(pthreadZurwlockZutimedrdlock, pthread_rwlock_t)
LOCK2(pthreadZurwlockZutimedwrlock, pthread_rwlock_t)
UNLOCK1(pthreadZurwlockZuunlock, pthread_rwlock_t)

/* pthread_barrier_{init,wait,destroy} */
WRAP(int, pthreadZubarrierZuinit,
     (pthread_barrier_t * b, const pthread_barrierattr_t *attr, unsigned count), {
	     int ret;
	     ENTER();
	     CALL_FN_W_WWW(ret, fn, b, attr, count);
	     if (ret == 0)
		     REQ(CXLTRACE_REQ_BARRIER_INIT, b, count);
	     LEAVE();
	     return ret;
     })
WRAP(int, pthreadZubarrierZuwait, (pthread_barrier_t * b), {
	int ret;
	ENTER();
	REQ(CXLTRACE_REQ_BARRIER, b, 0);
	CALL_FN_W_W(ret, fn, b);
	LEAVE();
	return ret;
})
HIDE1(pthreadZubarrierZudestroy, pthread_barrier_t)

/* condition variables: a wait releases and re-acquires its mutex */
WRAP(int, pthreadZucondZuwaitZAZa, (pthread_cond_t * c, pthread_mutex_t *m), {
	int ret;
	ENTER();
	REQ(CXLTRACE_REQ_UNLOCK, m, 0);
	CALL_FN_W_WW(ret, fn, c, m);
	REQ(CXLTRACE_REQ_LOCK, m, 0);
	LEAVE();
	return ret;
})
WRAP(int, pthreadZucondZutimedwaitZAZa,
     (pthread_cond_t * c, pthread_mutex_t *m, const struct timespec *ts), {
	     int ret;
	     ENTER();
	     REQ(CXLTRACE_REQ_UNLOCK, m, 0);
	     CALL_FN_W_WWW(ret, fn, c, m, ts);
	     REQ(CXLTRACE_REQ_LOCK, m, 0);
	     LEAVE();
	     return ret;
     })
HIDE1(pthreadZucondZusignalZAZa, pthread_cond_t)
HIDE1(pthreadZucondZubroadcastZAZa, pthread_cond_t)
HIDE2(pthreadZucondZuinitZAZa, pthread_cond_t, const pthread_condattr_t *)
HIDE1(pthreadZucondZudestroyZAZa, pthread_cond_t)

/* threads */
WRAP(int, pthreadZucreateZAZa,
     (pthread_t * t, const pthread_attr_t *attr, void *(*start)(void *), void *arg), {
	     int ret;
	     REQ(CXLTRACE_REQ_CREATE, 0, 0);
	     ENTER();
	     CALL_FN_W_WWWW(ret, fn, t, attr, start, arg);
	     LEAVE();
	     if (ret == 0)
		     REQ(CXLTRACE_REQ_CREATED, *t, 0);
	     return ret;
     })
WRAP(int, pthreadZujoin, (pthread_t t, void **retval), {
	int ret;
	ENTER();
	CALL_FN_W_WW(ret, fn, t, retval);
	LEAVE();
	if (ret == 0)
		REQ(CXLTRACE_REQ_JOINED, t, 0);
	return ret;
})

/* setrlimit(RLIMIT_NOFILE): keep the hard limit, cap the soft one by it */
WRAP(int, setrlimit, (int resource, const struct rlimit *r), {
	int ret;
	struct rlimit now;
	struct rlimit want;
	if (resource == RLIMIT_NOFILE && r != NULL && getrlimit(RLIMIT_NOFILE, &now) == 0) {
		want.rlim_max = now.rlim_max;
		want.rlim_cur = r->rlim_cur < now.rlim_max ? r->rlim_cur : now.rlim_max;
		CALL_FN_W_WW(ret, fn, resource, &want);
		return ret;
	}
	CALL_FN_W_WW(ret, fn, resource, r);
	return ret;
})
