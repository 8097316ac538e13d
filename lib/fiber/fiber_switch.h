/* SPDX-License-Identifier: BSD-3-Clause */
/* The context switch under the fibers: private to lib/fiber. */
#ifndef EWYK_FIBER_SWITCH_H
#define EWYK_FIBER_SWITCH_H

struct ewyk_fiber;

/* Saves the callee-saved registers and the floating-point control words
 * on the current stack, stores the stack pointer in *save, and continues
 * on the stack saved at load (fiber_switch.S). */
void fiber_switch(void **save, void *load);
/* Lays out a new stack (top: one past its highest byte) so that switching
 * to it enters ewyk_fiber_main(f); returns the stack pointer to load. */
void *fiber_stack_init(void *top, struct ewyk_fiber *f);
/* Where a new fiber starts. */
void ewyk_fiber_main(struct ewyk_fiber *f);

#endif /* EWYK_FIBER_SWITCH_H */
