#!/bin/bash
# dracut module of nvme-latency-dkms: where the image holds our nvme-core,
# add blk-nodelat (ours takes the tracker with symbol_request(), which no
# module dependency shows), or, under Secure Boot without the dkms key
# enrolled, put the in-tree nvme-core there instead.  99: after the
# modules that install the NVMe drivers (90kernel-modules, 95nvmf).

check()
{
	return 0
}

depends()
{
	return 0
}

installkernel()
{
	local ours intree

	# dkms's place: updates/ (Debian, SUSE), extra/ (Fedora, RHEL)
	ours=$(find "$initdir/" \( -path '*/updates/*' -o -path '*/extra/*' \) \
		-name 'nvme-core.ko*' 2> /dev/null | head -1)
	[[ -n $ours ]] || return 0
	if ! /usr/lib/nvme-latency-dkms/secure-boot-check --explain; then
		intree=$(ls /lib/modules/"$kernel"/kernel/drivers/nvme/host/nvme-core.ko* \
			 /var/lib/dkms/nvme-latency/original_module/"$kernel"/*/nvme-core.ko* \
			 2> /dev/null | head -1)
		[[ -n $intree ]] || { dwarn "nvme-latency: no in-tree nvme-core for $kernel"; return 0; }
		# and no module signed with the unenrolled key (the softdep
		# pulls blk-nodelat in)
		rm -f "$ours"
		find "$initdir/" \( -path '*/updates/*' -o -path '*/extra/*' \) \
			-name 'blk-nodelat.ko*' -exec rm -f {} +
		inst_simple "$intree" "/lib/modules/$kernel/kernel/drivers/nvme/host/${intree##*/}"
		return 0
	fi
	hostonly='' instmods blk-nodelat
}
