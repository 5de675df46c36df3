/* Threads through the personality (musl's pthreads over clone and futex):
   several threads increment a counter under a mutex, yielding inside the
   critical section so the others contend; a condition variable hands
   items from a producer to consumers; each thread has its own TLS and tid;
   a timed lock times out; join returns each thread's value; a thread
   spinning without calls is preempted at the end of its time slot. */
#define _GNU_SOURCE
#include "check.h"
#include <stdlib.h>
#include <unistd.h>
#include <pthread.h>
#include <sched.h>
#include <time.h>
#include <sys/syscall.h>

#define THREADS 4
#define ROUNDS 500

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static long counter;
static __thread long mine = 100;
static long tids[THREADS];

static void *adder(void *arg) {
    long id = (long)arg;
    tids[id] = syscall(SYS_gettid);
    for (int i = 0; i < ROUNDS; i++) {
        pthread_mutex_lock(&lock);
        long seen = counter;
        if (i % 50 == 0) sched_yield(); /* let the others find the mutex taken */
        counter = seen + 1;
        mine++;
        pthread_mutex_unlock(&lock);
    }
    return (void *)(mine + id);
}

static pthread_mutex_t qlock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t qcond = PTHREAD_COND_INITIALIZER;
static int queue[64], qhead, qtail, done;
static long consumed_sum;

static void *consumer(void *arg) {
    (void)arg;
    long got = 0;
    pthread_mutex_lock(&qlock);
    for (;;) {
        while (qhead == qtail && !done) pthread_cond_wait(&qcond, &qlock);
        if (qhead == qtail && done) break;
        consumed_sum += queue[qhead++ % 64];
        got++;
    }
    pthread_mutex_unlock(&qlock);
    return (void *)got;
}

static int pfd[2];
static void *reader(void *arg) {
    (void)arg;
    char buf[16];
    return (void *)read(pfd[0], buf, sizeof buf);
}

/* Spins without a single call until main says stop: main runs again only
   because the spinner is preempted at the end of its time slot. */
static volatile int stop_spinning;
/* Set by the spinner once it has turned at least once. */
static volatile int spinner_started;
static void *spinner(void *arg) {
    (void)arg;
    long turns = 0;
    do {
        turns++;
        spinner_started = 1;
    } while (!stop_spinning);
    return (void *)turns;
}

/* Sleeps, then sets the flag main spins on: its sleep ends while main
   spins, and the end of main's time slot lets it run. */
static volatile int woke;
static void *sleeper(void *arg) {
    (void)arg;
    struct timespec t = {0, 20 * 1000 * 1000};
    nanosleep(&t, NULL);
    woke = 1;
    return NULL;
}

static void *holder(void *arg) {
    pthread_mutex_t *m = arg;
    pthread_mutex_lock(m);
    struct timespec t = {0, 200 * 1000 * 1000};
    nanosleep(&t, NULL); /* the main thread's timed lock runs out meanwhile */
    pthread_mutex_unlock(m);
    return NULL;
}

int main(void) {
    pthread_t th[THREADS];
    int created = 0;
    for (long i = 0; i < THREADS; i++) created += pthread_create(&th[i], NULL, adder, (void *)i) == 0;
    CHECK("create", created == THREADS);
    int joined = 1;
    for (long i = 0; i < THREADS; i++) {
        void *ret;
        joined &= pthread_join(th[i], &ret) == 0 && (long)ret == 100 + ROUNDS + i;
    }
    CHECK("join-values-tls", joined);
    CHECK("mutex-counter", counter == THREADS * ROUNDS);
    CHECK("main-tls-untouched", mine == 100);
    int distinct = 1;
    for (int i = 0; i < THREADS; i++) {
        distinct &= tids[i] > 0 && tids[i] != getpid();
        for (int j = 0; j < i; j++) distinct &= tids[i] != tids[j];
    }
    CHECK("tids-distinct", distinct && syscall(SYS_gettid) == getpid());

    pthread_t c[3];
    for (int i = 0; i < 3; i++) pthread_create(&c[i], NULL, consumer, NULL);
    long expect = 0;
    for (int i = 1; i <= 60; i++) {
        pthread_mutex_lock(&qlock);
        queue[qtail++ % 64] = i;
        expect += i;
        pthread_cond_signal(&qcond);
        pthread_mutex_unlock(&qlock);
        if (i % 7 == 0) sched_yield();
    }
    pthread_mutex_lock(&qlock);
    done = 1;
    pthread_cond_broadcast(&qcond);
    pthread_mutex_unlock(&qlock);
    long total = 0;
    for (int i = 0; i < 3; i++) {
        void *got;
        pthread_join(c[i], &got);
        total += (long)got;
    }
    CHECK("condvar", total == 60 && consumed_sum == expect);

    pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
    pthread_t h;
    pthread_create(&h, NULL, holder, &m);
    sched_yield(); /* the holder takes the mutex and sleeps */
    struct timespec dl;
    clock_gettime(CLOCK_REALTIME, &dl);
    dl.tv_nsec += 20 * 1000 * 1000;
    if (dl.tv_nsec >= 1000000000) {
        dl.tv_sec++;
        dl.tv_nsec -= 1000000000;
    }
    CHECK("timedlock-timeout", pthread_mutex_timedlock(&m, &dl) == ETIMEDOUT);
    CHECK("join-holder", pthread_join(h, NULL) == 0);
    CHECK("lock-after", pthread_mutex_trylock(&m) == 0 && pthread_mutex_unlock(&m) == 0);

    /* A thread blocked reading an empty pipe lets the others run; the
       write of another thread lets its read go ahead. */
    pthread_t rt;
    void *nread = NULL;
    CHECK("pipe", pipe(pfd) == 0 && pthread_create(&rt, NULL, reader, NULL) == 0);
    sched_yield(); /* the reader finds the pipe empty */
    CHECK("write-to-reader", write(pfd[1], "hello", 5) == 5);
    CHECK("reader-thread-read", pthread_join(rt, &nread) == 0 && (long)nread == 5);

    pthread_t sp;
    void *turns = NULL;
    CHECK("spinner-created", pthread_create(&sp, NULL, spinner, NULL) == 0);
    /* The spinner runs and never calls: main runs again only because the
       spinner is preempted at its slot's end. (A yield alone could come
       back before the new thread ever ran.) */
    while (!spinner_started) sched_yield();
    stop_spinning = 1;
    CHECK("spinning-thread-preempted", pthread_join(sp, &turns) == 0 && (long)turns > 0);
    pthread_t sl;
    CHECK("sleeper-created", pthread_create(&sl, NULL, sleeper, NULL) == 0);
    while (!woke) {
    }
    CHECK("sleeper-wakes-while-main-spins", pthread_join(sl, NULL) == 0 && woke);

    CHECK("futex-efault", syscall(SYS_futex, (void *)8, 0 /*WAIT*/, 0, NULL, NULL, 0) == -1 && errno == EFAULT);
    CHECK("futex-eagain", syscall(SYS_futex, &counter, 0, 12345, NULL, NULL, 0) == -1 && errno == EAGAIN);
    struct timespec shortwait = {0, 10 * 1000 * 1000};
    int word = 0;
    CHECK("futex-timeout", syscall(SYS_futex, &word, 128 /*WAIT|PRIVATE*/, 0, &shortwait, NULL, 0) == -1 &&
                               errno == ETIMEDOUT);
    /* CLONE_THREAD|CLONE_SIGHAND without CLONE_VM. */
    CHECK("clone-thread-needs-vm", syscall(SYS_clone, 0x10800, (void *)0x1000, NULL, NULL, 0) == -1 && errno == EINVAL);
    return summary("lx-pthread");
}
