# SPDX-License-Identifier: GPL-2.0
#
# nvme-latency: a latency iopolicy for NVMe native multipath.
#
#   make modules [KVER=<release>] [KSRC=<tree or tarball>]  build into out/KVER/
#   make demo                 show the latency policy at work in the VM lab
#   make check                unit tests, then build tests on each lab
#                             root (bookworm, trixie, sid and the two
#                             backports kernels), VM tests on bookworm
#                             and trixie-backports (6.1 and 7.3), package
#                             tests on bookworm (installs what it needs);
#                             SUITES="trixie" for one of them;
#                             KERNEL=debug: the VM scenarios on the lab's
#                             lockdep/KASAN/kmemleak kernel; KERNEL=kcsan:
#                             the I/O scenarios on its KCSAN kernel (a data
#                             race reported in our code fails);
#                             KERNEL=fault: the fault-injection scenarios
#                             (FAULT=1) on the lab's debug kernel plus
#                             fault injection, bookworm's unless SUITES=
#                             says otherwise
#   make check-long           what check leaves out for CI's 90 minutes:
#                             (LONG=1) the switch storms, the stress and
#                             more sequenced seeds (nvme/017, 019, 030,
#                             050, 052), the package tests marked LONG
#                             (pkg/010, 013-017, 019-021); the other roots'
#                             VM scenarios and package tests
#   make bench                policy comparison table in the VM lab
#   make bench-scale          switch time, memory per path and IOPS with
#                             thousands of paths (tests/bench/scale)
#   make bench-cost           the policy's own cost, CPU-bound over nvme-loop
#                             (tests/bench/cost)
#   make bench-profile        where the cost bench's instructions per I/O go,
#                             by kernel function (tests/bench/profile)
#   make bench-field          the field's randrw workload over 4 paths and
#                             its per-path in-flight plots (tests/bench/field)
#   make sim                  the policy simulator's grid (tests/sim)
#   make blktests             upstream blktests' nvme group, stock nvme-core
#                             against ours with "latency", on each series
#                             (SUITES=...; KERNEL=debug adds nvme-loop);
#                             not part of check (about 30 min per series)
#   make lint                 checkpatch and sparse on our kernel code,
#                             lintian and rpmlint on the packages
#   make deb | rpm | dist     packages (see scripts/packaging.mk)

KVER	?= $(shell uname -r)
KSRC	?=
SUITE	?= bookworm
# empty: each runner's own default (tests/run: all three series, VM
# scenarios on bookworm and sid, package tests on bookworm)
SUITES	?=
KERNEL	?= distro

.PHONY: all modules demo check check-long unit sim bench bench-scale bench-cost bench-profile bench-field blktests lint lint-kernel clean

all: modules

modules:
	scripts/build-modules $(KVER) $(KSRC)

demo:
	tests/vm/demo $(SUITE)

check:
	NLAT_SUITES="$(SUITES)" NLAT_KERNEL="$(KERNEL)" tests/run $(TESTS)

check-long:
	NLAT_SUITES="$(SUITES)" NLAT_LONG=1 tests/run $(TESTS)

unit:
	$(MAKE) -C tests/unit

sim:
	$(MAKE) -C tests/sim run

bench:
	tests/bench/run $(SUITE)

bench-scale:
	tests/bench/scale $(SUITE)

bench-cost:
	tests/bench/cost $(SUITE)

bench-profile:
	tests/bench/profile $(SUITE)

bench-field:
	tests/bench/field $(SUITE)

blktests:
	NLAT_KERNEL="$(KERNEL)" tests/blktests/run $(SUITES)

lint: lint-kernel

lint-kernel:
	tests/vm/lint $(SUITE)

clean:
	rm -rf out
	$(MAKE) -C tests/unit clean
	$(MAKE) -C tests/sim clean

-include scripts/packaging.mk
