/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Two counters packed for one atomic each, kept free of kernel structures:
 * tests/unit runs this file with threads.
 *
 * The per-CPU sample counter of one (submitting CPU, class): a latency sum
 * and a sample count packed into one u64, so that one atomic add records a
 * sample and one exchange takes a fold's worth with no torn pair.
 *
 * The slot is the submitter's (its node is the sample's), written by
 * whichever CPU completes: atomic, but rarely shared.  The sum is kept in
 * 16 ns units (error < 8 ns a sample, unbiased) in the low 42 bits, the
 * count above: a fold's worth fits while the count is below 2^22 and the
 * sum below 2^46 ns.  A done that sees either half past its top bit asks
 * for the fold at once: 2^21 samples, or 2^41 units (2048 of the largest,
 * clamped, samples), of headroom for the fold to run.
 */
#ifndef _NLAT_ACC_H
#define _NLAT_ACC_H

#define NLAT_ACC_UNIT_SHIFT	4
#define NLAT_ACC_SUM_BITS	42
#define NLAT_ACC_SUM_MASK	((1ULL << NLAT_ACC_SUM_BITS) - 1)
#define NLAT_ACC_ONE		(1ULL << NLAT_ACC_SUM_BITS)

/* What a sample of @lat_ns adds; @lat_ns <= NLAT_LAT_MAX_NS. */
static inline u64 nlat_acc_sample(u64 lat_ns)
{
	return NLAT_ACC_ONE +
	       ((lat_ns + (1 << (NLAT_ACC_UNIT_SHIFT - 1))) >> NLAT_ACC_UNIT_SHIFT);
}

/* @v, the slot after an add, wants folding now. */
static inline bool nlat_acc_full(u64 v)
{
	return (v >> 63) || ((v >> (NLAT_ACC_SUM_BITS - 1)) & 1);
}

/*
 * Thinning: a slot that already holds NLAT_ACC_THIN_NR samples of a fold
 * takes one completion in 2^NLAT_ACC_THIN_SHIFT, picked by its start
 * clock (nlat_acc_thin_keep()), and counts that sample as many
 * (nlat_acc_sample() shifted left by NLAT_ACC_THIN_SHIFT): the sum and
 * the count stay those of every completion in expectation, so do the
 * mean and the load (nbar), and a completion not taken reads no clock.
 * A weighted add of the largest sample is 2^33 units: the sum's headroom
 * above still holds 256 of them.
 */
#define NLAT_ACC_THIN_NR	64
#define NLAT_ACC_THIN_SHIFT	3

/* The slot @v holds enough samples to thin the rest. */
static inline bool nlat_acc_thin(u64 v)
{
	return (v >> NLAT_ACC_SUM_BITS) >= NLAT_ACC_THIN_NR;
}

/* One start clock in 2^NLAT_ACC_THIN_SHIFT, by a multiplicative hash. */
static inline bool nlat_acc_thin_keep(u64 start)
{
	return !((start * 0x61c8864680b583ebULL) >>
		 (64 - NLAT_ACC_THIN_SHIFT));
}

static inline void nlat_acc_split(u64 v, u64 *sum_ns, u64 *nr)
{
	*sum_ns = (v & NLAT_ACC_SUM_MASK) << NLAT_ACC_UNIT_SHIFT;
	*nr = v >> NLAT_ACC_SUM_BITS;
}

/*
 * A group's load in flight: requests in the low half, their size units
 * (nlat_size_units()) in the high half, so that one atomic add counts a
 * request and one subtract uncounts it.  Either half reads right through
 * a transient negative value of the other.
 */
static inline s64 nlat_infl_delta(unsigned int units)
{
	return ((s64)units << 32) | 1;
}

static inline s32 nlat_infl_nr(s64 v)
{
	return (s32)v;
}

static inline s64 nlat_infl_units(s64 v)
{
	return (v - (s32)v) >> 32;
}

#endif /* _NLAT_ACC_H */
