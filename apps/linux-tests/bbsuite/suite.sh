#!/bin/sh
# Runs Debian's busybox test suite (testsuite/runtest as Debian ships
# it, its applet links to /bb/busybox) on the applets listed in
# /bb/applets, the same way on Oxok and in the Linux guest, and counts:
#   sh /bb/suite.sh SIDE [long]     (SIDE: oxok or linux)
# prints every PASS/FAIL/SKIPPED/UNTESTED line runtest prints, then
#   bbsuite: SIDE pass P fail F skip S
# and `bbsuite: floor N met` when at least /bb/floor.SIDE tests passed.
# `long` runs the applets of /bb/applets.long instead, with the tests too
# long for the usual run (BBSUITE_LONG, read by the staged bc.tests), and
# holds them to /bb/floor.SIDE.long.
side=$1
list=/bb/applets
if [ "$2" = long ]; then
	export BBSUITE_LONG=1
	side="$side.long"
	list=/bb/applets.long
fi
floor=$(cat /bb/floor.$side) || exit 1
mkdir -p /tmp
cd /bb/testsuite || exit 1
sh ./runtest $(cat $list) </dev/null 2>&1 | tee /tmp/bbsuite.out | grep -E '^(PASS|FAIL|SKIPPED|UNTESTED):'
p=$(grep -c '^PASS:' /tmp/bbsuite.out)
f=$(grep -c '^FAIL:' /tmp/bbsuite.out)
s=$(grep -cE '^(SKIPPED|UNTESTED):' /tmp/bbsuite.out)
echo "bbsuite: $side pass $p fail $f skip $s"
if [ "$p" -ge "$floor" ]; then
	echo "bbsuite: floor $floor met"
else
	echo "bbsuite: below the floor of $floor"
fi
