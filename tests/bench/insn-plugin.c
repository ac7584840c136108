// SPDX-License-Identifier: GPL-2.0
/*
 * insn-plugin.so: a QEMU TCG plugin for tests/bench/profile.  It counts
 * the executions of each translated block of guest kernel text (inline
 * adds, no callback per block) and, when the guest asks, writes what it
 * has counted so far: the guest creates DIR/snap.NAME on the 9p share,
 * the plugin writes DIR/NAME.tb ("address instructions executions" per
 * block, addresses in hex) and removes the request.  Two snapshots
 * around a run give the instructions each kernel function executed in
 * it (tests/bench/profile-report).  A block left early (an interrupt, an
 * exception) is counted whole: a bound, not an exact count.
 *
 *	qemu-system-x86_64 ... -plugin insn-plugin.so,dir=DIR
 *
 * The few declarations of QEMU's plugin API it uses are written out
 * here (API version 1, QEMU 7.2): Debian ships no header for it.
 */
#include <dirent.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef uint64_t qemu_plugin_id_t;
struct qemu_plugin_tb;
enum qemu_plugin_op { QEMU_PLUGIN_INLINE_ADD_U64 };
typedef void (*tb_trans_cb_t)(qemu_plugin_id_t id, struct qemu_plugin_tb *tb);
typedef void (*udata_cb_t)(qemu_plugin_id_t id, void *userdata);

void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id,
					   tb_trans_cb_t cb);
void qemu_plugin_register_vcpu_tb_exec_inline(struct qemu_plugin_tb *tb,
					      enum qemu_plugin_op op,
					      void *ptr, uint64_t imm);
void qemu_plugin_register_atexit_cb(qemu_plugin_id_t id, udata_cb_t cb,
				    void *userdata);
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb);
uint64_t qemu_plugin_tb_vaddr(const struct qemu_plugin_tb *tb);

__attribute__((visibility("default"))) int qemu_plugin_version = 1;

/* guest kernel text: the upper half of the address space */
#define KERNEL_BASE	0xffff800000000000ULL

struct block {
	uint64_t	addr;
	uint64_t	insns;
	uint64_t	execs;		/* added to inline by the vCPUs */
};

/* Blocks never move once made: the inline adds point into them. */
static struct block **blocks;
static size_t nr_blocks, max_blocks;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static char *dir;
static volatile int stopping;
static pthread_t watcher;

static void tb_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	uint64_t addr = qemu_plugin_tb_vaddr(tb);
	struct block *b;

	if (addr < KERNEL_BASE)
		return;
	b = calloc(1, sizeof(*b));
	if (!b)
		return;
	b->addr = addr;
	b->insns = qemu_plugin_tb_n_insns(tb);
	pthread_mutex_lock(&lock);
	if (nr_blocks == max_blocks) {
		size_t n = max_blocks ? 2 * max_blocks : 65536;
		struct block **p = realloc(blocks, n * sizeof(*p));

		if (!p) {
			pthread_mutex_unlock(&lock);
			free(b);
			return;
		}
		blocks = p;
		max_blocks = n;
	}
	blocks[nr_blocks++] = b;
	pthread_mutex_unlock(&lock);
	qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64,
						 &b->execs, 1);
}

/* DIR/NAME.tb: every block executed so far (a retranslated block twice). */
static void snapshot(const char *name)
{
	char path[4096], tmp[4200];
	size_t i;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s.tb", dir, name);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "w");
	if (!f)
		return;
	pthread_mutex_lock(&lock);
	for (i = 0; i < nr_blocks; i++)
		if (blocks[i]->execs)
			fprintf(f, "%llx %llu %llu\n",
				(unsigned long long)blocks[i]->addr,
				(unsigned long long)blocks[i]->insns,
				(unsigned long long)
				__atomic_load_n(&blocks[i]->execs,
						__ATOMIC_RELAXED));
	pthread_mutex_unlock(&lock);
	fclose(f);
	rename(tmp, path);
}

/* Polls DIR for snap.NAME requests every 20 ms. */
static void *watch(void *arg)
{
	char path[4096];
	struct dirent *e;
	DIR *d;

	(void)arg;
	while (!stopping) {
		d = opendir(dir);
		while (d && (e = readdir(d))) {
			if (strncmp(e->d_name, "snap.", 5) || !e->d_name[5] ||
			    strchr(e->d_name + 5, '/'))
				continue;
			snapshot(e->d_name + 5);
			snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
			unlink(path);
		}
		if (d)
			closedir(d);
		usleep(20000);
	}
	return NULL;
}

static void at_exit(qemu_plugin_id_t id, void *userdata)
{
	stopping = 1;
	pthread_join(watcher, NULL);
}

int qemu_plugin_install(qemu_plugin_id_t id, const void *info, int argc,
			char **argv)
{
	int i;

	(void)info;
	for (i = 0; i < argc; i++)
		if (!strncmp(argv[i], "dir=", 4))
			dir = strdup(argv[i] + 4);
	if (!dir) {
		fprintf(stderr, "insn-plugin: dir=DIR is required\n");
		return -1;
	}
	if (pthread_create(&watcher, NULL, watch, NULL))
		return -1;
	qemu_plugin_register_vcpu_tb_trans_cb(id, tb_trans);
	qemu_plugin_register_atexit_cb(id, at_exit, NULL);
	return 0;
}
