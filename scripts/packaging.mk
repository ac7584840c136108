# SPDX-License-Identifier: GPL-2.0
#
# Release and distribution packages; included by the top-level Makefile.
#
#   make dist      out/nvme-latency-$(VERSION).tar.gz: the sources dkms
#                  builds from, dkms.conf filled in, the RPM spec
#   make deb       out/nvme-latency-dkms_$(VERSION)_all.deb
#                  (needs debhelper, dh-dkms)
#   make rpm       out/nvme-latency-dkms-$(VERSION)-1.noarch.rpm (needs rpm)
#   make pkg-lint  lintian --pedantic -I (binary and source package) and
#                  rpmlint on both (needs lintian, rpmlint); also run by
#                  make lint
#   make pkg-check tests/pkg/run: install tests in a Debian 12 root
#   make check-upgrade  tests/pkg/run --long in each of SUITES: two kernel
#                  releases and package upgrades N -> N+1 -> N+2 (about
#                  8 minutes a suite)
#
# The version is the VERSION file, and only that; the kernel series are
# the directories of src/patches/.  Both go into dkms.conf and the spec
# here, when the tarball is made; debian/changelog must agree.

PKG_TOP := $(abspath $(dir $(lastword $(MAKEFILE_LIST)))/..)
PKG_OUT := $(PKG_TOP)/out
PKG_VERSION := $(shell cat $(PKG_TOP)/VERSION)
PKG_DIST := nvme-latency-$(PKG_VERSION)
PKG_TARBALL := $(PKG_OUT)/$(PKG_DIST).tar.gz
PKG_DEB := $(PKG_OUT)/nvme-latency-dkms_$(PKG_VERSION)_all.deb
PKG_RPM_RELEASE := 1
PKG_RPM := $(PKG_OUT)/nvme-latency-dkms-$(PKG_VERSION)-$(PKG_RPM_RELEASE).noarch.rpm

# What the tarball holds; build products are left out.
PKG_FILES := Makefile VERSION dkms.conf scripts src etc docs debian tools
PKG_EXCLUDE := --exclude-vcs --exclude='*.o' --exclude='*.ko' \
	--exclude='*.mod' --exclude='*.mod.c' --exclude='.*.cmd' \
	--exclude=modules.order --exclude=Module.symvers --exclude='*~' \
	--exclude=.keep --exclude=.gitignore

PKG_PRESENT = $(notdir $(wildcard $(addprefix $(PKG_TOP)/,$(PKG_FILES) \
	COPYING LICENSE* README*)))

# 6\.1|6\.12|7\.0 from src/patches/6.1, 6.12, 7.0
PKG_EMPTY :=
PKG_SERIES = $(subst $(PKG_EMPTY) $(PKG_EMPTY),|,$(subst .,\\.,$(sort \
	$(notdir $(wildcard $(PKG_TOP)/src/patches/*)))))

# Same bytes for the same sources: times from the newest commit.
PKG_EPOCH := $(or $(SOURCE_DATE_EPOCH),$(shell git -C $(PKG_TOP) \
	log -1 --format=%ct 2> /dev/null),$(shell stat -c %Y $(PKG_TOP)/VERSION))

.PHONY: dist deb rpm lint pkg-lint pkg-check check-upgrade

dist:
	@test -n '$(PKG_SERIES)' || \
		{ echo "dist: no kernel series in src/patches/" >&2; exit 1; }
	rm -rf $(PKG_OUT)/dist
	mkdir -p $(PKG_OUT)/dist/$(PKG_DIST)
	cd $(PKG_TOP) && tar -cf - $(PKG_EXCLUDE) $(PKG_PRESENT) | \
		tar -C $(PKG_OUT)/dist/$(PKG_DIST) -xf -
	sed -i -e 's/^\(PACKAGE_VERSION=\)"#MODULE_VERSION#"$$/\1"$(PKG_VERSION)"/' \
		-e 's/^\(BUILD_EXCLUSIVE_KERNEL=.*\)#KERNEL_SERIES#/\1$(PKG_SERIES)/' \
		$(PKG_OUT)/dist/$(PKG_DIST)/dkms.conf
	! grep -n '#MODULE_VERSION#\|#KERNEL_SERIES#' $(PKG_OUT)/dist/$(PKG_DIST)/dkms.conf
	sed 's/@VERSION@/$(PKG_VERSION)/' $(PKG_TOP)/rpm/nvme-latency-dkms.spec.in \
		> $(PKG_OUT)/dist/$(PKG_DIST)/nvme-latency-dkms.spec
	tar -C $(PKG_OUT)/dist --sort=name --owner=0 --group=0 --numeric-owner \
		--mtime=@$(PKG_EPOCH) -cf - $(PKG_DIST) | gzip -9n > $(PKG_TARBALL)
	@echo "dist: $(PKG_TARBALL)"

deb: dist
	@v=$$(cd $(PKG_TOP) && dpkg-parsechangelog -SVersion); \
	test "$$v" = '$(PKG_VERSION)' || { echo "deb: debian/changelog is at" \
		"$$v, VERSION at $(PKG_VERSION): add an entry (dch -v $(PKG_VERSION))" >&2; \
		exit 1; }
	rm -rf $(PKG_OUT)/deb
	mkdir -p $(PKG_OUT)/deb
	tar -C $(PKG_OUT)/deb -xzf $(PKG_TARBALL)
	cd $(PKG_OUT)/deb/$(PKG_DIST) && dpkg-buildpackage -b -us -uc
	mv $(PKG_OUT)/deb/nvme-latency-dkms_$(PKG_VERSION)_all.deb $(PKG_DEB)
	@echo "deb: $(PKG_DEB)"

rpm: dist
	rm -rf $(PKG_OUT)/rpmbuild
	rpmbuild --define '_topdir $(PKG_OUT)/rpmbuild' \
		--define '_sourcedir $(PKG_OUT)' \
		--define 'dist %{nil}' \
		-bb $(PKG_OUT)/dist/$(PKG_DIST)/nvme-latency-dkms.spec
	mv $(PKG_OUT)/rpmbuild/RPMS/noarch/$(notdir $(PKG_RPM)) $(PKG_RPM)
	@echo "rpm: $(PKG_RPM)"

# Any tag fails, pedantic ones too; the overrides each say why.  The
# source package is made from the release tarball, as a clean tree.  A
# prerequisite of the top-level lint, which keeps its own recipe.
lint: pkg-lint

pkg-lint: deb rpm
	rm -rf $(PKG_OUT)/src
	mkdir -p $(PKG_OUT)/src
	tar -C $(PKG_OUT)/src -xzf $(PKG_TARBALL)
	cd $(PKG_OUT)/src && dpkg-source -b $(PKG_DIST) > /dev/null
	lintian --pedantic -I --fail-on error,warning,info,pedantic \
		$(PKG_DEB) $(PKG_OUT)/src/nvme-latency_$(PKG_VERSION).dsc
	rpmlint -c $(PKG_TOP)/rpm/rpmlint.toml \
		-r $(PKG_TOP)/rpm/nvme-latency-dkms.rpmlintrc \
		$(PKG_OUT)/dist/$(PKG_DIST)/nvme-latency-dkms.spec $(PKG_RPM)

pkg-check:
	$(PKG_TOP)/tests/pkg/run

check-upgrade: deb
	@rc=0; for s in $(or $(SUITES),bookworm trixie sid); do \
		echo "== $$s: package upgrades"; \
		NLAT_SUITE=$$s $(PKG_TOP)/tests/pkg/run --long || rc=1; \
	done; exit $$rc
