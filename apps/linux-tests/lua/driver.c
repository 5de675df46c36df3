/* lx-lua: Lua 5.4 (the C sources of the crate lua-src, built static with
   musl-gcc) run by the Linux personality. Each check runs one Lua chunk
   that returns a string and compares it with the expected text; the
   chunks exercise the interpreter's core (arithmetic, strings, tables,
   closures, coroutines, errors through setjmp/longjmp, the collector) and
   the C library under it (malloc/realloc/free, stdio files, time, locale
   formatting of floats).

   `lx-lua` runs the checks; `lx-lua -e CHUNK` runs one chunk and prints
   what it returns (for trying things at the Oxok prompt); `lx-lua --bench
   [quick]` prints the benchmark line `bench: lua_sort CYCLES cycles`, the
   median over rounds of the "sort" check's chunk (the same program in the
   Linux benchmark guest and on Oxok, `cargo xtask bench`). */
#include <stdio.h>
#include <string.h>
#include "../timing.h"
#include "lua.h"
#include "lauxlib.h"
#include "lualib.h"

struct check {
    const char *name;
    const char *chunk;
    const char *want;
};

static const struct check CHECKS[] = {
    {"arithmetic", "return tostring(7 // 2) .. ' ' .. tostring(7 / 2) .. ' ' .. tostring(2 ^ 10) .. ' ' .. "
                   "math.type(1) .. ' ' .. math.type(1.0) .. ' ' .. tostring(math.maxinteger + 1 == math.mininteger)",
     "3 3.5 1024.0 integer float true"},
    {"format", "return string.format('%5.2f|%d|%x|%s|%g|%e', math.pi, 42, 255, 'hi', 1e20, 12345.678)",
     " 3.14|42|ff|hi|1e+20|1.234568e+04"},
    {"tonumber", "return tostring(tonumber('0x1p4')) .. ' ' .. tostring(tonumber('  12  ')) .. ' ' .. "
                 "tostring(tonumber('1e2')) .. ' ' .. tostring(tonumber('z', 36)) .. ' ' .. tostring(tonumber('x'))",
     "16.0 12 100.0 35 nil"},
    {"sort", "local t, x = {}, 12345\n"
             "for i = 1, 20000 do x = (x * 1103515245 + 12345) % 2147483648; t[i] = x end\n"
             "table.sort(t)\n"
             "for i = 2, #t do if t[i - 1] > t[i] then return 'unsorted at ' .. i end end\n"
             "return #t .. ' sorted'",
     "20000 sorted"},
    {"closures", "local function counter() local n = 0 return function() n = n + 1 return n end end\n"
                 "local a, b = counter(), counter()\n"
                 "a() a() b()\n"
                 "return a() .. ',' .. b()",
     "3,2"},
    {"coroutines", "local gen = coroutine.wrap(function() for i = 1, 5 do coroutine.yield(i * i) end end)\n"
                   "local out = {}\n"
                   "for _ = 1, 5 do out[#out + 1] = gen() end\n"
                   "return table.concat(out, ' ')",
     "1 4 9 16 25"},
    {"errors", "local ok, e = pcall(function() error({code = 7}) end)\n"
               "local ok2, e2 = pcall(function() local x = nil; return x.field end)\n"
               "return tostring(ok) .. ' ' .. e.code .. ' ' .. tostring(ok2) .. ' ' .. "
               "tostring(e2:find('attempt to index') ~= nil)",
     "false 7 false true"},
    {"deep-recursion", "local function f(n) if n == 0 then return 0 end return 1 + f(n - 1) end\n"
                       "local ok, e = pcall(function() local function g() return 1 + g() end return g() end)\n"
                       "return f(10000) .. ' ' .. tostring(ok) .. ' ' .. tostring(e:find('stack overflow') ~= nil)",
     "10000 false true"},
    {"patterns", "local s = 'the quick brown fox'\n"
                 "local words = {}\n"
                 "for w in s:gmatch('%a+') do words[#words + 1] = w:upper() end\n"
                 "local r, n = s:gsub('(%w+)', '<%1>')\n"
                 "return table.concat(words, '-') .. ' ' .. n .. ' ' .. r:sub(1, 11)",
     "THE-QUICK-BROWN-FOX 4 <the> <quic"},
    {"strings", "local big = string.rep('ab', 1000000)\n"
                "return #big .. ' ' .. big:sub(-3) .. ' ' .. ('héllo'):len() .. ' ' .. utf8.len('héllo') .. ' ' .. "
                "utf8.char(72, 228, 8364)",
     "2000000 bab 6 5 H\xc3\xa4\xe2\x82\xac"},
    {"garbage", "local before = collectgarbage('count')\n"
                "do local t = {} for i = 1, 200000 do t[i] = {i} end end\n"
                "collectgarbage('collect')\n"
                "local after = collectgarbage('count')\n"
                "return tostring(after < before + 1024)",
     "true"},
    {"files", "local f = assert(io.open('lx-lua.tmp', 'w'))\n"
              "for i = 1, 100 do f:write(i, '\\n') end\n"
              "f:close()\n"
              "local sum, lines = 0, 0\n"
              "for l in io.lines('lx-lua.tmp') do sum = sum + tonumber(l); lines = lines + 1 end\n"
              "local g = assert(io.open('lx-lua.tmp', 'r'))\n"
              "local size = g:seek('end')\n"
              "g:close()\n"
              "assert(os.remove('lx-lua.tmp'))\n"
              "return lines .. ' ' .. sum .. ' ' .. size .. ' ' .. tostring(io.open('lx-lua.tmp') == nil)",
     "100 5050 292 true"},
    {"time", "local t = os.time()\n"
             "return tostring(t > 1600000000) .. ' ' .. os.date('!%Y-%m-%d %H:%M:%S', 86400 * 365) .. ' ' .. "
             "tostring(os.clock() >= 0) .. ' ' .. tostring(os.getenv('NO_SUCH_VARIABLE'))",
     "true 1971-01-01 00:00:00 true nil"},
    {"metatables", "local V = {}\n"
                   "V.__index = V\n"
                   "V.__add = function(a, b) return setmetatable({x = a.x + b.x}, V) end\n"
                   "V.__tostring = function(v) return 'V(' .. v.x .. ')' end\n"
                   "local v = setmetatable({x = 1}, V) + setmetatable({x = 41}, V)\n"
                   "return tostring(v)",
     "V(42)"},
};

/* Runs `chunk`; its result (or the error) as text in `out`. */
static int run(lua_State *L, const char *chunk, char *out, size_t size) {
    int status = luaL_loadstring(L, chunk);
    if (status == LUA_OK) status = lua_pcall(L, 0, 1, 0);
    const char *s = luaL_tolstring(L, -1, NULL);
    snprintf(out, size, "%s", s ? s : "(nothing)");
    lua_settop(L, 0);
    return status;
}

/* The median cycles of `rounds` runs of CHECKS[3] ("sort"). */
static int bench(lua_State *L, int rounds) {
    static char got[256];
    uint64_t t[16];
    for (int i = 0; i < rounds; i++) {
        uint64_t t0 = rdtsc();
        if (run(L, CHECKS[3].chunk, got, sizeof got) != LUA_OK || strcmp(got, CHECKS[3].want) != 0) {
            printf("bench: lua_sort 0 cycles\n");
            return 1;
        }
        t[i] = rdtsc() - t0;
    }
    printf("bench: lua_sort %llu cycles\n", (unsigned long long)median(t, rounds));
    return 0;
}

int main(int argc, char **argv) {
    lua_State *L = luaL_newstate();
    if (!L) {
        printf("lx-lua: cannot create a Lua state\n");
        return 1;
    }
    luaL_openlibs(L);
    static char got[4096];
    if (argc >= 2 && strcmp(argv[1], "--bench") == 0) {
        int status = bench(L, argc > 2 && strcmp(argv[2], "quick") == 0 ? 1 : 5);
        lua_close(L);
        return status;
    }
    if (argc == 3 && strcmp(argv[1], "-e") == 0) {
        int status = run(L, argv[2], got, sizeof got);
        printf("%s\n", got);
        lua_close(L);
        return status != LUA_OK;
    }
    int failed = 0, n = (int)(sizeof CHECKS / sizeof CHECKS[0]);
    for (int i = 0; i < n; i++) {
        int status = run(L, CHECKS[i].chunk, got, sizeof got);
        if (status == LUA_OK && strcmp(got, CHECKS[i].want) == 0) {
            printf("ok %s\n", CHECKS[i].name);
        } else {
            failed++;
            printf("FAIL %s (got \"%s\", want \"%s\")\n", CHECKS[i].name, got, CHECKS[i].want);
        }
    }
    lua_close(L);
    printf("lx-lua: %s, %d checks, %d failed\n", LUA_RELEASE, n, failed);
    return failed != 0;
}
