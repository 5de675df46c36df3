/* lx-sqlite: SQLite (the amalgamation from the crate libsqlite3-sys, built
   static with musl-gcc) run by the Linux personality. Each check runs SQL
   and compares the first column of the last row it returns with the
   expected text. The checks use an in-memory database and a file on the
   file server (through the personality's open, pread, pwrite, fsync,
   ftruncate, unlink), reopened to see that what was committed stays and
   what was rolled back does not.

   `lx-sqlite` runs the checks; `lx-sqlite -e SQL` runs SQL on an
   in-memory database and prints each row (for the Oxok prompt);
   `lx-sqlite --bench [quick]` prints `bench: sqlite_insert CYCLES cycles`:
   10,000 inserts in one transaction into a fresh in-memory table, the
   median over rounds (`cargo xtask bench` runs the same program in the
   Linux benchmark guest and on Oxok, where the benchmark boots with no
   file server). */
#include <stdio.h>
#include <string.h>
#include "../timing.h"
#include <unistd.h>
#include "sqlite3.h"

#define DB_FILE "lx-sqlite.db"

static char last[4096];
static int rows;

static int keep_last(void *print, int n, char **values, char **names) {
    (void)names;
    rows++;
    snprintf(last, sizeof last, "%s", n > 0 && values[0] ? values[0] : "NULL");
    if (print) {
        for (int i = 0; i < n; i++) printf("%s%s", i ? "|" : "", values[i] ? values[i] : "NULL");
        printf("\n");
    }
    return 0;
}

/* Runs `sql` on `db`; the last row's first column, or the error, in `last`. */
static int run(sqlite3 *db, const char *sql, int print) {
    char *err = NULL;
    rows = 0;
    snprintf(last, sizeof last, "(no rows)");
    int rc = sqlite3_exec(db, sql, keep_last, print ? (void *)1 : NULL, &err);
    if (rc != SQLITE_OK) {
        snprintf(last, sizeof last, "error: %s", err ? err : sqlite3_errstr(rc));
        sqlite3_free(err);
    }
    return rc;
}

static int failed, total;

static void check(sqlite3 *db, const char *name, const char *sql, const char *want) {
    total++;
    int rc = run(db, sql, 0);
    if (rc == SQLITE_OK && strcmp(last, want) == 0) {
        printf("ok %s\n", name);
    } else {
        failed++;
        printf("FAIL %s (got \"%s\", want \"%s\")\n", name, last, want);
    }
}

/* Opens the file database without file locks ("unix-none": one process). */
static sqlite3 *open_file(void) {
    sqlite3 *db = NULL;
    int rc = sqlite3_open_v2(DB_FILE, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, "unix-none");
    if (rc != SQLITE_OK) {
        printf("FAIL open %s (%s)\n", DB_FILE, db ? sqlite3_errmsg(db) : sqlite3_errstr(rc));
        failed++;
        sqlite3_close(db);
        return NULL;
    }
    return db;
}

static const char *INSERTS =
    "drop table if exists b; create table b(i integer, sq integer, s text);"
    "begin;"
    "with recursive c(x) as (select 1 union all select x + 1 from c where x < 10000)"
    " insert into b select x, x * x, printf('%05d', x) from c;"
    "commit;"
    "select count(*) from b";

/* Prints the median cycles of `rounds` runs of INSERTS on `db` as `name`
   (0 cycles if a run fails). */
static void bench(sqlite3 *db, const char *name, int rounds) {
    uint64_t t[16];
    for (int i = 0; i < rounds; i++) {
        uint64_t t0 = rdtsc();
        if (!db || run(db, INSERTS, 0) != SQLITE_OK || strcmp(last, "10000") != 0) {
            printf("bench: %s 0 cycles\n", name);
            return;
        }
        t[i] = rdtsc() - t0;
    }
    printf("bench: %s %llu cycles\n", name, (unsigned long long)median(t, rounds));
}

int main(int argc, char **argv) {
    sqlite3 *mem = NULL;
    if (sqlite3_open(":memory:", &mem) != SQLITE_OK) {
        printf("lx-sqlite: cannot open an in-memory database\n");
        return 1;
    }
    if (argc >= 2 && strcmp(argv[1], "--bench") == 0) {
        int rounds = argc > 2 && strcmp(argv[2], "quick") == 0 ? 1 : 5;
        bench(mem, "sqlite_insert", rounds);
        sqlite3_close(mem);
        return 0;
    }
    if (argc == 3 && strcmp(argv[1], "-e") == 0) {
        int rc = run(mem, argv[2], 1);
        if (rc != SQLITE_OK) printf("%s\n", last);
        sqlite3_close(mem);
        return rc != SQLITE_OK;
    }
    check(mem, "version", "select sqlite_version() like '3.%'", "1");
    check(mem, "create-insert",
          "create table t(id integer primary key, name text, score real);"
          "insert into t(name, score) values ('ann', 3.5), ('bob', 2.25), ('cy', 9);"
          "select count(*) || ' ' || sum(score) || ' ' || max(name) from t",
          "3 14.75 cy");
    check(mem, "10000-inserts",
          "create table n(i integer, sq integer, s text);"
          "begin;"
          "with recursive c(x) as (select 1 union all select x + 1 from c where x < 10000)"
          " insert into n select x, x * x, printf('%05d', x) from c;"
          "commit;"
          "select count(*) || ' ' || sum(i) || ' ' || max(s) from n",
          "10000 50005000 10000");
    check(mem, "index",
          "create index n_s on n(s);"
          "select (select name from sqlite_master where type = 'index') || ' ' || i from n where s = '00042'",
          "n_s 42");
    check(mem, "group-order",
          "select group_concat(k || ':' || c, ' ') from "
          "(select i % 3 as k, count(*) as c from n group by k order by k desc)",
          "2:3333 1:3334 0:3333");
    check(mem, "join",
          "create table owner(id integer, t_id integer);"
          "insert into owner values (1, 1), (2, 3), (3, 3);"
          "select group_concat(name, ',') from (select t.name from owner join t on t.id = owner.t_id order by owner.id)",
          "ann,cy,cy");
    check(mem, "update-delete",
          "update n set sq = -sq where i % 2 = 0; delete from n where i > 5000;"
          "select count(*) || ' ' || sum(sq) from n",
          "5000 -12502500");
    check(mem, "functions",
          "select upper('oxok') || ' ' || length('héllo') || ' ' || substr('exokernel', 1, 3) || ' ' || "
          "printf('%.3f', 22.0 / 7) || ' ' || abs(-7) || ' ' || typeof(1.5) || ' ' || hex('ok')",
          "OXOK 5 exo 3.143 7 real 6F6B");
    check(mem, "json", "select json_extract('{\"a\": [1, 2, {\"b\": \"x\"}]}', '$.a[2].b')", "x");
    check(mem, "constraint",
          "create table u(k text unique); insert into u values ('a');"
          "insert or ignore into u values ('a'); select count(*) from u",
          "1");
    sqlite3_close(mem);

    unlink(DB_FILE);
    sqlite3 *db = open_file();
    if (db) {
        check(db, "file-create",
              "create table kv(k integer primary key, v text);"
              "begin; with recursive c(x) as (select 1 union all select x + 1 from c where x < 2000)"
              " insert into kv select x, hex(randomblob(16)) from c; commit;"
              "select count(*) from kv",
              "2000");
        check(db, "file-rollback",
              "begin; delete from kv; insert into kv values (99999, 'gone'); rollback;"
              "select count(*) || ' ' || (select count(*) from kv where k = 99999) from kv",
              "2000 0");
        sqlite3_close(db);
    }
    db = open_file();
    if (db) {
        check(db, "file-reopen", "select count(*) || ' ' || length(min(v)) from kv", "2000 32");
        check(db, "integrity", "pragma integrity_check", "ok");
        sqlite3_close(db);
    }
    unlink(DB_FILE);
    printf("lx-sqlite: SQLite %s, %d checks, %d failed\n", sqlite3_libversion(), total, failed);
    return failed != 0;
}
