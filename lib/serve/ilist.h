/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * An intrusive list whose entries leave it in O(1), without a search:
 * each link points at the pointer that points at it (the head, or the
 * entry before's next). The entry embeds a struct ilink and is found
 * again from it with container_of().
 */
#ifndef EWYK_ILIST_H
#define EWYK_ILIST_H

#include <stdbool.h>
#include <stddef.h>

struct ilink {
	struct ilink *next;
	struct ilink **pprev;	/* NULL: on no list */
};

/* Puts l first on the list at *head. */
static inline void
ilist_push(struct ilink **head, struct ilink *l)
{
	l->next = *head;
	if (l->next != NULL)
		l->next->pprev = &l->next;
	l->pprev = head;
	*head = l;
}

static inline bool
ilist_linked(const struct ilink *l)
{
	return l->pprev != NULL;
}

/* Takes l off its list; nothing if it is on none. */
static inline void
ilist_remove(struct ilink *l)
{
	if (!ilist_linked(l))
		return;
	*l->pprev = l->next;
	if (l->next != NULL)
		l->next->pprev = l->pprev;
	l->pprev = NULL;
	l->next = NULL;
}

#endif /* EWYK_ILIST_H */
