/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Model of the conflating executor's mark, run and park protocol, as coded in
 * lib/conflate/conflate.c (mark_segment, wake_one, slot_run, top_bit_run,
 * conflate_wait). Every shared access there is seq_cst, so interleaving
 * semantics is exact; each `atomic` below is one read-modify-write and every
 * other statement touches one shared variable once.
 *
 * Geometry: slots 0 and 1 share segment 0, slot 2 is in segment 1. With
 * depth 2 both segments are bits of child word 0 and the top word has one
 * bit per child word; with depth 1 the segment bits are the top word.
 * A value is its key's offer count, so a key's values rise in exchange order.
 *
 * init picks, nondeterministically, the depth (1 or 2) and the processes:
 * 2 producers (keys 0,1 and 0,2) with 1 consumer, or 1 producer (keys
 * 0,2,0) with 2 consumers: about 2.5 million states, a few seconds. With
 * -DFULL also 2 producers with 2 consumers: 79 million states, 8.7 GB,
 * 100 s; run it by hand:
 *   spin -a -DFULL conflate_marks.pml && cc -O2 -DSAFETY -o pan pan.c &&
 *   ./pan -m300000
 *
 * Checked over every interleaving:
 *  - a key never runs on two consumers at once, and never an older value
 *    after a newer one (nor a value twice: values rise strictly);
 *  - once producers are done and every consumer sleeps on the futex, no
 *    value is pending, no mark is left and every key's last value ran:
 *    no mark and no wake-up was lost;
 *  - no deadlock (pan's invalid end states).
 *
 * Variants that must fail (run_spin.sh checks that each is caught):
 *  BUG_CHILD_FIRST       consumer clears the child word before the top bit
 *  BUG_TAKE_FIRST        consumer takes slots before clearing their mark
 *  BUG_TEST_BEFORE_XCHG  producer decides from the mark before its exchange
 *                        (HotSpot's conditional card mark race)
 *  BUG_NO_RUN_FLAG       no per-key run flag
 *  BUG_NO_RECHECK        the run flag owner does not re-check on release
 *  BUG_PARK_NO_RECHECK   consumer parks without re-reading the top word
 *  BUG_WAKE_FIRST        producer reads nwaiters before setting the top bit
 *  BUG_SPIN_LATE         consumer stops counting itself as spinning only
 *                        after its last look at the top word
 * Variant that must pass:
 *  MARK_ALWAYS           mark after every offer, not only on empty ->
 *                        pending. Safe, only slower (every offer writes the
 *                        mark lines): the transition rule is a cost rule;
 *                        the orderings above are the correctness rules.
 */

#define NSLOT 3
#define NCONS 2
#define KEY(i) (i == 1 -> 1 : (i == 3 -> 2 : 0))

byte val[NSLOT];	/* 0 = empty, else the pending value */
bit busy[NSLOT];	/* run flag: a consumer holds the key */
byte seqno[NSLOT];	/* values offered so far, per key */
byte lastrun[NSLOT];	/* last value run, per key */
bit inrun[NSLOT];	/* a consumer is inside the consumer function */
byte child;		/* depth 2: child word 0, one bit per segment */
byte top;
byte nwaiters;		/* consumers about to park or parked, unclaimed */
byte nclaimed;		/* of those, already claimed by a wake */
byte nspinning;
bit stale[NCONS];	/* futex word changed since the consumer read it */
bit asleep[NCONS];
byte nparked;
byte pdone;
byte depth;
byte nprod;
byte ncons;

inline seg_of(k, s)
{
	s = (k == 2 -> 1 : 0)
}

/*
 * The futex word is a counter; a consumer reads it before announcing itself
 * and sleeps only if it is unchanged. Only "changed since read" matters, so
 * it is one stale bit per consumer (a smaller state space, same behaviour).
 */
inline futex_bump()
{
	atomic { stale[0] = 1; stale[1] = 1 }
}

inline futex_wake_one()
{
	atomic {
		if
		:: asleep[0] -> asleep[0] = 0; nparked--
		:: asleep[1] -> asleep[1] = 0; nparked--
		:: else -> skip
		fi
	}
}

/*
 * No wake while a consumer spins: it will see the mark itself. A wake
 * claims one waiter (nwaiters -> nclaimed, one word in C), so a waiter is
 * woken once however many marks arrive before it runs again.
 */
inline wake_one()
{
	if
	:: nspinning != 0 -> skip
	:: else ->
		atomic {
			if
			:: nwaiters > 0 -> nwaiters--; nclaimed++; need = 1
			:: else -> skip
			fi
		};
		if
		:: need -> futex_bump(); futex_wake_one()
		:: else -> skip
		fi
	fi
}

inline mark_top(tb)
{
#ifdef BUG_WAKE_FIRST
	need = (nwaiters > 0 && nspinning == 0);
#endif
	if
	:: (top & tb) != 0 -> skip
	:: else ->
		atomic { old = top; top = old | tb };
		if
		:: old == 0 ->
#ifdef BUG_WAKE_FIRST
			if
			:: need ->
				atomic {
					if
					:: nwaiters > 0 -> nwaiters--; nclaimed++
					:: else -> need = 0
					fi
				};
				if
				:: need -> futex_bump(); futex_wake_one()
				:: else -> skip
				fi
			:: else -> skip
			fi
#else
			wake_one()
#endif
		:: else -> skip
		fi
	fi;
	old = 0; need = 0
}

/* mark_segment(): test, then read-modify-write, each level */
inline mark(s)
{
	if
	:: depth == 2 ->
		if
		:: (child & (1 << s)) != 0 -> skip
		:: else ->
			atomic { old = child; child = old | (1 << s) };
			if
			:: old == 0 -> mark_top(1)
			:: else -> old = 0
			fi
		fi
	:: else -> mark_top(1 << s)
	fi
}

proctype producer(byte first; byte n)
{
	byte i, k, s, v, old;
	bit need, skipmark;

	/* offer i is of key KEY(i): scripts 0 1 | 0 2 | 0 2 0 */
	for (i : first .. first + n - 1) {
		k = KEY(i);
		seg_of(k, s);
#ifdef BUG_TEST_BEFORE_XCHG
		skipmark = ((depth == 2 && (child & (1 << s)) != 0) ||
			(depth == 1 && (top & (1 << s)) != 0));
#endif
		atomic { seqno[k]++; v = val[k]; val[k] = seqno[k] };
#ifdef MARK_ALWAYS
		mark(s);
#else
		if
		:: v == 0 && !skipmark -> mark(s)
		:: else -> skip
		fi;
#endif
		v = 0; skipmark = 0; k = 0; s = 0
	}
	pdone++
}

/* slot_run() */
inline slot_run(k, s)
{
	if
	:: val[k] == 0 -> skip
	:: else ->
#ifdef BUG_NO_RUN_FLAG
		got = 1;
#else
		atomic {
			if
			:: busy[k] == 0 -> busy[k] = 1; got = 1
			:: else -> got = 0
			fi
		};
#endif
		if
		:: got ->
			atomic { v = val[k]; val[k] = 0 };
			if
			:: v != 0 ->
				atomic {
					assert(inrun[k] == 0);
					assert(v > lastrun[k]);
					inrun[k] = 1;
					lastrun[k] = v
				};
				inrun[k] = 0
			:: else -> skip
			fi;
#ifndef BUG_NO_RUN_FLAG
			busy[k] = 0;
#endif
#ifndef BUG_NO_RECHECK
			if
			:: val[k] != 0 -> mark(s)
			:: else -> skip
			fi;
#endif
			v = 0; got = 0
		:: else -> skip
		fi
	fi
}

/* segment_run(): the slots of segment sg, in order */
inline segment_run(sg)
{
	k = (sg == 0 -> 0 : 2);
	do
	:: slot_run(k, sg);
		if
		:: k == 0 -> k = 1
		:: else -> break
		fi
	od;
	k = 0
}

/*
 * top_bit_run() for top bit b: claim it, then (depth 2) the child word;
 * w gets the segment bits this consumer now owns.
 */
inline claim(b)
{
	if
	:: depth == 2 ->
#ifdef BUG_CHILD_FIRST
		atomic { w = child; child = 0 };
		atomic { got = ((top & 1) != 0); top = top & ~1 };
#elif defined(BUG_TAKE_FIRST)
		atomic { got = ((top & 1) != 0); top = top & ~1 };
		w = (got -> child : 0);
#else
		atomic { got = ((top & 1) != 0); top = top & ~1 };
		if
		:: got -> atomic { w = child; child = 0 }
		:: else -> skip
		fi;
#endif
	:: else ->
#ifdef BUG_TAKE_FIRST
		w = (1 << b);
#else
		atomic { got = ((top & (1 << b)) != 0); top = top & ~(1 << b) };
		w = (got -> (1 << b) : 0);
#endif
	fi;
	got = 0
}

/* the late clear of BUG_TAKE_FIRST */
inline unclaim(b)
{
#ifdef BUG_TAKE_FIRST
	if
	:: depth == 2 -> atomic { child = child & ~w }
	:: else -> atomic { top = top & ~(1 << b) }
	fi;
#endif
	w = 0
}

proctype consumer(byte me)
{
	byte t, w, b, sg, k, v, old;
	bit got, need;

	do
	:: t = top;	/* conflate_poll(): snapshot, then claim bit by bit */
		for (b : 0 .. 1) {
			if
			:: (t & (1 << b)) != 0 ->
				claim(b);
				for (sg : 0 .. 1) {
					if
					:: (w & (1 << sg)) != 0 -> segment_run(sg)
					:: else -> skip
					fi
				};
				unclaim(b)
			:: else -> skip
			fi
		};
		b = 0; sg = 0;
		t = 0;
		/* conflate_wait(): spin (one look here), then park */
		nspinning++;
		if
		:: top != 0 -> nspinning--
		:: else ->
			stale[me] = 0;		/* read the futex word */
			nwaiters++;
#ifndef BUG_SPIN_LATE
			nspinning--;
#endif
#ifdef BUG_PARK_NO_RECHECK
			if
			:: true ->
#else
			if
			:: top != 0 ->
#ifdef BUG_SPIN_LATE
				nspinning--
#else
				skip
#endif
			:: else ->
#endif
#ifdef BUG_SPIN_LATE
				nspinning--;
#endif
				atomic {	/* futex_wait: check and sleep */
					if
					:: !stale[me] -> asleep[me] = 1; nparked++
					:: else -> skip
					fi
				};
end_wait:			!asleep[me]
			fi;
			atomic {	/* leave: take a claim if there is one */
				if
				:: nclaimed > 0 -> nclaimed--
				:: else -> nwaiters--
				fi
			}
		fi
	od
}

proctype checker()
{
	byte k;

	atomic {
		(pdone == nprod && nparked == ncons) ->
		assert(top == 0 && child == 0);
		for (k : 0 .. NSLOT - 1) {
			assert(val[k] == 0);
			assert(lastrun[k] == seqno[k])
		}
	}
}

init
{
	atomic {
		if
		:: depth = 1
		:: depth = 2
		fi;
		if
		:: nprod = 2; ncons = 1;
			run producer(0, 2); run producer(2, 2)
		:: nprod = 1; ncons = 2;
			run producer(2, 3)	/* keys 0, 2, 0 */
#ifdef FULL
		:: nprod = 2; ncons = 2;
			run producer(0, 2); run producer(2, 2)
#endif
		fi;
		run consumer(0);
		if
		:: ncons == 2 -> run consumer(1)
		:: else -> skip
		fi;
		run checker()
	}
}
