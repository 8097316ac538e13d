/* SPDX-License-Identifier: BSD-3-Clause */
#include <stdint.h>

#include "fiber_switch.h"

void fiber_entry(void);

/*
 * The frame fiber_switch() pops, built by hand: from the new stack
 * pointer up, the control words (MXCSR at its default 0x1f80, x87 at
 * 0x37f), r15, r14, r13, r12 (the fiber), rbx, rbp, then the address it
 * returns to, fiber_entry, at the very top: once it is popped the stack
 * pointer is the 16-byte aligned top, as a call instruction needs it.
 */
void *
fiber_stack_init(void *top, struct ewyk_fiber *f)
{
	uint64_t *sp = (uint64_t *)((uintptr_t)top & ~(uintptr_t)15);

	*--sp = (uint64_t)(uintptr_t)fiber_entry;	/* popped: sp = top */
	*--sp = 0;				/* rbp */
	*--sp = 0;				/* rbx */
	*--sp = (uint64_t)(uintptr_t)f;		/* r12 */
	*--sp = 0;				/* r13 */
	*--sp = 0;				/* r14 */
	*--sp = 0;				/* r15 */
	*--sp = (uint64_t)0x037f << 32 | 0x1f80;	/* x87 cw, mxcsr */
	return sp;
}
