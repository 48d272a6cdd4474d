/* SPDX-License-Identifier: MIT */
/*
 * The CUPTI buffer pool and the completed-buffer queue: the only structures
 * application threads touch.
 *
 * Pool: up to nbuf equal buffers carved from one anonymous mapping reserved
 * at init with MAP_NORESERVE, so the pool is elastic: CUPTI gives every
 * thread that records activity a buffer of its own (per-thread activity
 * buffers), and a program with many launching threads (JAX/XLA: ~20 seen on
 * the H200) or a burst CUPTI's worker has not delivered yet simply uses more
 * of the range; memory is committed only where CUPTI writes. The cap (nbuf x
 * size) is GAPTRACE_BUFFER_LIMIT_MB; past it a request is refused and
 * counted, never blocked.
 *
 * A free bitmap of atomic 64-bit words: taking a buffer is a CAS that
 * clears one bit, giving it back an atomic OR. No lock, no allocation, no
 * syscall on an application thread. The encoder clears what CUPTI wrote
 * before a buffer goes back (CUPTI is told that our buffers come zeroed, so
 * it no longer clears 4 MB on the application thread per buffer), or, when
 * enough warm buffers are free already, returns the pages (MADV_DONTNEED
 * leaves zero pages behind).
 *
 * Queue: Dmitry Vyukov's bounded MPMC ring with per-slot sequence numbers,
 * used with one consumer (the encoder). Its capacity is the next power of
 * two >= nbuf, and a buffer is in the queue at most once and only while it
 * is not free, so a push never finds the ring full and never spins on the
 * consumer.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "inj.h"

static void *reserve(uint32_t *nbuf, uint32_t size, size_t *len)
{
	for (;;) {
		*len = (size_t)*nbuf * size;
		void *m = mmap(NULL, *len, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (m != MAP_FAILED)
			return m;
		if (errno != ENOMEM || *nbuf <= 2)
			return NULL;
		*nbuf /= 2; /* strict overcommit counts the whole range: ask less */
	}
}

int inj_pool_init(inj_pool *p, uint32_t nbuf, uint32_t size)
{
	memset(p, 0, sizeof(*p));
	if (nbuf < 2 || nbuf > INJ_MAX_BUFFERS || size < 1024 || size % 8) {
		errno = EINVAL;
		return -1;
	}
	size_t len;
	void *m = reserve(&nbuf, size, &len);
	if (!m)
		return -1;
	uint32_t qcap = 1;
	while (qcap < nbuf)
		qcap <<= 1;
	p->slots = calloc(qcap, sizeof(*p->slots));
	p->warm = calloc(nbuf, 1);
	p->handed_ns = calloc(nbuf, sizeof(*p->handed_ns));
	if (!p->slots || !p->warm || !p->handed_ns) {
		free(p->slots);
		free(p->warm);
		free((void *)p->handed_ns);
		munmap(m, len);
		errno = ENOMEM;
		return -1;
	}
	for (uint32_t i = 0; i < qcap; i++)
		atomic_init(&p->slots[i].seq, i);
	p->qmask = qcap - 1;
	atomic_init(&p->qhead, 0);
	p->qtail = 0;
	p->base = m;
	p->map_len = len;
	p->nbuf = nbuf;
	p->buf_size = size;
	p->nwords = (nbuf + 63) / 64;
	for (uint32_t w = 0; w < p->nwords; w++) {
		uint32_t bits = nbuf - w * 64 >= 64 ? 64 : nbuf - w * 64;
		atomic_init(&p->freemask[w], bits == 64 ? ~0ull : (1ull << bits) - 1);
	}
	return 0;
}

static void note_taken(inj_pool *p, uint32_t i)
{
	if (p->warm[i])
		atomic_fetch_sub_explicit(&p->warm_free, 1, memory_order_relaxed);
	uint32_t n = atomic_fetch_add_explicit(&p->in_use, 1, memory_order_relaxed) + 1;
	uint32_t pk = atomic_load_explicit(&p->peak_in_use, memory_order_relaxed);
	while (n > pk &&
	       !atomic_compare_exchange_weak_explicit(&p->peak_in_use, &pk, n, memory_order_relaxed,
						      memory_order_relaxed))
		;
}

int inj_pool_get(inj_pool *p)
{
	for (uint32_t w = 0; w < p->nwords; w++) {
		uint64_t cur = atomic_load_explicit(&p->freemask[w], memory_order_relaxed);
		while (cur) {
			int bit = __builtin_ctzll(cur);
			uint64_t want = cur & ~(1ull << bit);
			if (atomic_compare_exchange_weak_explicit(&p->freemask[w], &cur, want,
								  memory_order_acquire,
								  memory_order_relaxed)) {
				uint32_t i = w * 64 + (uint32_t)bit;
				note_taken(p, i);
				return (int)i;
			}
		}
	}
	return -1;
}

void inj_pool_put(inj_pool *p, uint32_t index)
{
	if (index >= p->nbuf)
		return;
	if (p->warm[index])
		atomic_fetch_add_explicit(&p->warm_free, 1, memory_order_relaxed);
	atomic_fetch_sub_explicit(&p->in_use, 1, memory_order_relaxed);
	atomic_fetch_or_explicit(&p->freemask[index / 64], 1ull << (index % 64),
				 memory_order_release);
}

void inj_pool_recycle(inj_pool *p, uint32_t index, size_t used)
{
	if (index >= p->nbuf)
		return;
	uint8_t *b = inj_pool_addr(p, index);
	if (atomic_load_explicit(&p->warm_free, memory_order_relaxed) < INJ_POOL_WARM) {
		/* CUPTI writes records from the start; a little slack covers a
		 * record it began past the valid end. */
		size_t n = used + 4096 < p->buf_size ? used + 4096 : p->buf_size;
		memset(b, 0, n);
		p->warm[index] = 1;
	} else if (madvise(b, p->buf_size, MADV_DONTNEED) == 0) {
		p->warm[index] = 0; /* anonymous private pages read back as zeros */
	} else {
		memset(b, 0, p->buf_size);
		p->warm[index] = 1;
	}
	inj_pool_put(p, index);
}

int inj_pool_index(const inj_pool *p, const uint8_t *addr)
{
	if (!p->base || addr < p->base || addr >= p->base + p->map_len)
		return -1;
	size_t off = (size_t)(addr - p->base);
	if (off % p->buf_size)
		return -1;
	return (int)(off / p->buf_size);
}

uint32_t inj_pool_free_count(inj_pool *p)
{
	uint32_t n = 0;
	for (uint32_t w = 0; w < p->nwords; w++)
		n += (uint32_t)__builtin_popcountll(atomic_load(&p->freemask[w]));
	return n;
}

int inj_pool_is_free(inj_pool *p, uint32_t i)
{
	if (i >= p->nbuf)
		return 1;
	return (int)((atomic_load(&p->freemask[i / 64]) >> (i % 64)) & 1);
}

void inj_queue_push(inj_pool *p, const inj_done *d)
{
	uint64_t pos = atomic_load_explicit(&p->qhead, memory_order_relaxed);
	for (;;) {
		struct inj_qslot *s = &p->slots[pos & p->qmask];
		uint64_t seq = atomic_load_explicit(&s->seq, memory_order_acquire);
		int64_t dif = (int64_t)(seq - pos);
		if (dif == 0) {
			if (atomic_compare_exchange_weak_explicit(&p->qhead, &pos, pos + 1,
								  memory_order_relaxed,
								  memory_order_relaxed)) {
				s->d = *d;
				atomic_store_explicit(&s->seq, pos + 1, memory_order_release);
				return;
			}
		} else if (dif < 0) {
			/* Full: cannot happen (one slot per buffer). Never block an
			 * application thread: the buffer is simply lost (and leaks out
			 * of the pool), which the pool accounting makes visible. */
			return;
		} else {
			pos = atomic_load_explicit(&p->qhead, memory_order_relaxed);
		}
	}
}

int inj_queue_pop(inj_pool *p, inj_done *d)
{
	struct inj_qslot *s = &p->slots[p->qtail & p->qmask];
	uint64_t seq = atomic_load_explicit(&s->seq, memory_order_acquire);
	if ((int64_t)(seq - (p->qtail + 1)) < 0)
		return 0;
	*d = s->d;
	atomic_store_explicit(&s->seq, p->qtail + p->qmask + 1, memory_order_release);
	p->qtail++;
	return 1;
}
