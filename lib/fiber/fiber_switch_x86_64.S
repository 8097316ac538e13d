/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * x86-64 System V context switch: the six callee-saved registers, MXCSR
 * and the x87 control word go on the stack being left; nothing else is
 * needed between two function calls, and no signal mask is touched (no
 * system call, unlike swapcontext).
 */
	.text

/* void fiber_switch(void **save, void *load) */
	.globl	fiber_switch
	.type	fiber_switch, @function
fiber_switch:
	.cfi_startproc
	pushq	%rbp
	pushq	%rbx
	pushq	%r12
	pushq	%r13
	pushq	%r14
	pushq	%r15
	subq	$8, %rsp
	stmxcsr	(%rsp)
	fnstcw	4(%rsp)
	movq	%rsp, (%rdi)
	movq	%rsi, %rsp
	ldmxcsr	(%rsp)
	fldcw	4(%rsp)
	addq	$8, %rsp
	popq	%r15
	popq	%r14
	popq	%r13
	popq	%r12
	popq	%rbx
	popq	%rbp
	ret
	.cfi_endproc
	.size	fiber_switch, .-fiber_switch

/* A new fiber's first return lands here with the fiber in %r12 and the
 * stack 16-byte aligned, as a call needs it. */
	.globl	fiber_entry
	.type	fiber_entry, @function
fiber_entry:
	.cfi_startproc
	.cfi_undefined rip	/* the bottom of the fiber's call chain */
	movq	%r12, %rdi
	call	ewyk_fiber_main
	ud2
	.cfi_endproc
	.size	fiber_entry, .-fiber_entry

	.section .note.GNU-stack,"",@progbits
