// The copy pool (copy.h). A copy wakes its workers with one futex call, all at once: Go's
// scheduler wakes a goroutine's thread one after the other (each woken thread wakes the
// next), and on the H100 machine 8 goroutines started after an idle period took a 4 MiB
// copy out of mapped memory 224 µs where 8 threads already running took 64.
//
// Each copy is split into pieces that the caller and the woken workers take by moving the
// copy's ticket on, so a worker that wakes late finds them taken and sleeps again; the
// caller returns once every piece is copied.
#define _GNU_SOURCE
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "copy.h"

#define GW_COPY_WORKERS 8

static struct {
    pthread_mutex_t job; // one copy at a time
    pthread_once_t once;
    int workers;
    _Atomic uint32_t wake; // bumped for every copy; idle workers sleep on it
    // The copy's ticket: its number (from bit 40), its count of pieces (bits 32-39) and the
    // next piece to take (bits 0-31). A piece is taken by moving the ticket on from the
    // value read, so a worker that read an earlier copy's ticket takes nothing of a later
    // one, and the fields below stay as they are while a copy has pieces left.
    _Atomic uint64_t ticket;
    _Atomic int done; // pieces of the current copy copied
    _Atomic uint64_t prewakes;
    _Atomic uint64_t spin_until; // gw_copy_prewake: workers watch for copies until then (now_ns)
    char *dst;
    const char *src;
    size_t n, piece;
} pool = {.job = PTHREAD_MUTEX_INITIALIZER, .once = PTHREAD_ONCE_INIT};

static void futex_wait(_Atomic uint32_t *w, uint32_t seen) {
    syscall(SYS_futex, (uint32_t *)w, FUTEX_WAIT_PRIVATE, seen, NULL, NULL, 0);
}

static void futex_wake(_Atomic uint32_t *w, int count) {
    syscall(SYS_futex, (uint32_t *)w, FUTEX_WAKE_PRIVATE, count, NULL, NULL, 0);
}

// take_pieces copies pieces of the current copy until none is left. The copy cannot end
// (nor its fields change) while a piece of it is untaken or uncopied.
static void take_pieces(void) {
    uint64_t v = atomic_load(&pool.ticket);
    for (;;) {
        uint32_t k = (uint32_t)v, parts = (uint32_t)(v >> 32) & 0xff;
        if (k >= parts) return;
        if (!atomic_compare_exchange_weak(&pool.ticket, &v, v + 1)) continue; // v reloaded
        size_t lo = (size_t)k * pool.piece;
        size_t len = pool.n - lo < pool.piece ? pool.n - lo : pool.piece;
        memcpy(pool.dst + lo, pool.src + lo, len);
        atomic_fetch_add(&pool.done, 1);
        v = atomic_load(&pool.ticket);
    }
}

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void relax(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

// A worker sleeps on pool.wake; woken, it takes what pieces are left, then watches for
// copies until pool.spin_until (a prewake) before it sleeps again.
static void *worker(void *arg) {
    (void)arg;
    uint32_t seen = atomic_load(&pool.wake);
    for (;;) {
        uint32_t w = atomic_load(&pool.wake);
        if (w != seen) {
            seen = w;
            take_pieces();
        } else if (now_ns() < atomic_load(&pool.spin_until)) {
            relax();
            take_pieces();
        } else {
            futex_wait(&pool.wake, seen);
        }
    }
    return NULL;
}

// start creates the workers with every signal blocked, so that signals meant for the
// host (and for the Go runtime's own threads) never land on them.
static void start(void) {
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    cpu_set_t allowed; // the CPUs this process may run on (taskset, a container's cpuset)
    if (sched_getaffinity(0, sizeof allowed, &allowed) == 0 && CPU_COUNT(&allowed) < cpus) cpus = CPU_COUNT(&allowed);
    int want = cpus > 1 ? (int)(cpus - 1) : 0;
    if (want > GW_COPY_WORKERS) want = GW_COPY_WORKERS;
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    pthread_attr_t attr;
    if (pthread_attr_init(&attr) == 0) {
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        pthread_attr_setstacksize(&attr, 64 << 10);
        for (int i = 0; i < want; i++) {
            pthread_t t;
            if (pthread_create(&t, &attr, worker, NULL) != 0) break;
            pool.workers++;
        }
        pthread_attr_destroy(&attr);
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
}

void gw_copy_prewake(uint64_t spin_ns) {
    if (gw_copy_threads() == 0) return;
    atomic_fetch_add(&pool.prewakes, 1);
    atomic_store(&pool.spin_until, now_ns() + spin_ns);
    atomic_fetch_add(&pool.wake, 1);
    futex_wake(&pool.wake, INT_MAX);
}

uint64_t gw_copy_prewakes(void) { return atomic_load(&pool.prewakes); }

int gw_copy_threads(void) {
    pthread_once(&pool.once, start);
    return pool.workers;
}

void gw_copy(void *dst, const void *src, size_t n, int parts, size_t min_piece) {
    if (min_piece == 0) min_piece = 1;
    if (parts > 1 + GW_COPY_WORKERS) parts = 1 + GW_COPY_WORKERS;
    if ((size_t)parts > n / min_piece) parts = (int)(n / min_piece);
    if (parts > 1 && gw_copy_threads() + 1 < parts) parts = pool.workers + 1;
    if (parts <= 1) {
        memcpy(dst, src, n);
        return;
    }
    pthread_mutex_lock(&pool.job);
    pool.dst = dst;
    pool.src = src;
    pool.n = n;
    pool.piece = ((n + (size_t)parts - 1) / (size_t)parts + 63) & ~(size_t)63;
    uint64_t pieces = (n + pool.piece - 1) / pool.piece;
    atomic_store(&pool.done, 0);
    uint64_t number = (atomic_load(&pool.ticket) >> 40) + 1;
    atomic_store(&pool.ticket, number << 40 | pieces << 32); // after the fields
    atomic_fetch_add(&pool.wake, 1);
    futex_wake(&pool.wake, (int)pieces - 1);
    take_pieces();
    while ((uint64_t)atomic_load(&pool.done) < pieces) relax();
    atomic_store(&pool.spin_until, 0); // the copy a prewake expected came: the workers sleep
    pthread_mutex_unlock(&pool.job);
}
