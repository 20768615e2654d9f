// SPDX-License-Identifier: GPL-2.0
/*
 * cumask.c - which CUs a shrunk queue keeps.
 *
 * Masks are in the user's bit space, the one AMDKFD_IOC_SET_CU_MASK takes:
 * KFD's mqd_symmetrically_map_cu_mask() deals user bit i to shader engine
 * i % num_se (then shader array, then XCC on multi-XCC parts: gfx 9.4.3
 * gives XCC x the bits x, x + num_xcc, ...), and clamps the count to the
 * active CUs.  So the first k set bits of a mask are spread over the
 * engines as evenly as k allows: keeping a prefix of the owner's own mask
 * never starves one engine and never enables a CU the owner did not.
 *
 * Pure C, no allocation: the caller owns every array.
 */
#include "backends/cumask.h"

static u32 gp_popcount32(u32 w)
{
	u32 n = 0;

	for (; w; w &= w - 1)
		n++;
	return n;
}

/**
 * gp_cu_weight() - CUs a mask enables
 * @mask: the mask, (@bits + 31) / 32 words
 * @bits: its length in bits (at most GP_CU_MASK_BITS)
 *
 * Return: the set bits below @bits.
 */
u32 gp_cu_weight(const u32 *mask, u32 bits)
{
	u32 i, n = 0;

	for (i = 0; i < bits / 32; i++)
		n += gp_popcount32(mask[i]);
	if (bits % 32)
		n += gp_popcount32(mask[i] & ((1U << (bits % 32)) - 1));
	return n;
}

/**
 * gp_cu_fill() - the mask ROCr sets on a new queue: the first @ncu bits
 * @mask: GP_CU_MASK_WORDS words, written
 * @ncu: CUs (at most GP_CU_MASK_BITS)
 */
void gp_cu_fill(u32 *mask, u32 ncu)
{
	u32 i;

	for (i = 0; i < GP_CU_MASK_WORDS; i++)
		mask[i] = ncu >= (i + 1) * 32 ? 0xffffffff :
			  ncu > i * 32 ? (1U << (ncu % 32)) - 1 : 0;
}

/**
 * gp_cu_shrink_mask() - the CUs a queue keeps while higher levels have work
 * @base: the queue's own mask (what its owner set, or every CU)
 * @bits: @base's length in bits, a multiple of 32, at most GP_CU_MASK_BITS
 * @avoid: NULL, or the union of the masks of the busy queues above it (all
 *	   of them masked): the CUs they may use
 * @pct: share of @base's CUs to keep when @avoid leaves none, 1..99
 * @out: GP_CU_MASK_WORDS words, written; bits past @bits are zero
 *
 * With @avoid, the queue keeps exactly the CUs of its own that the levels
 * above cannot use, if there are any.  Otherwise it keeps the first
 * ceil(@pct% of its CUs) of its own, at least one.
 *
 * Return: the CUs kept (0 only for an empty @base).
 */
u32 gp_cu_shrink_mask(const u32 *base, u32 bits, const u32 *avoid, u32 pct, u32 *out)
{
	u32 words = bits / 32, i, n = 0, keep;

	for (i = 0; i < GP_CU_MASK_WORDS; i++)
		out[i] = 0;
	if (avoid) {
		for (i = 0; i < words; i++) {
			out[i] = base[i] & ~avoid[i];
			n += gp_popcount32(out[i]);
		}
		if (n)
			return n;
	}
	keep = (gp_cu_weight(base, bits) * pct + 99) / 100;
	if (!keep && gp_cu_weight(base, bits))
		keep = 1;
	for (i = 0, n = 0; i < bits && n < keep; i++) {
		if (base[i / 32] & (1U << (i % 32))) {
			out[i / 32] |= 1U << (i % 32);
			n++;
		}
	}
	return n;
}
