/* SPDX-License-Identifier: MIT */
/*
 * The CUPTI buffer pool and the completed-buffer queue: the only structures
 * application threads touch.
 *
 * Pool: nbuf equal buffers carved from one anonymous mapping made at init
 * (MAP_NORESERVE: pages cost memory only once CUPTI writes them). A free
 * bitmap of atomic 64-bit words; taking a buffer is a CAS that clears one
 * bit, giving it back an atomic OR. No lock, no allocation, no syscall.
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

int inj_pool_init(inj_pool *p, uint32_t nbuf, uint32_t size)
{
	memset(p, 0, sizeof(*p));
	if (nbuf < 1 || nbuf > INJ_MAX_BUFFERS || size < 1024 || size % 8) {
		errno = EINVAL;
		return -1;
	}
	size_t len = (size_t)nbuf * size;
	void *m = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (m == MAP_FAILED)
		return -1;
	uint32_t qcap = 1;
	while (qcap < nbuf)
		qcap <<= 1;
	p->slots = calloc(qcap, sizeof(*p->slots));
	if (!p->slots) {
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

int inj_pool_get(inj_pool *p)
{
	for (uint32_t w = 0; w < p->nwords; w++) {
		uint64_t cur = atomic_load_explicit(&p->freemask[w], memory_order_relaxed);
		while (cur) {
			int bit = __builtin_ctzll(cur);
			uint64_t want = cur & ~(1ull << bit);
			if (atomic_compare_exchange_weak_explicit(&p->freemask[w], &cur, want,
								  memory_order_acquire,
								  memory_order_relaxed))
				return (int)(w * 64 + (uint32_t)bit);
		}
	}
	return -1;
}

void inj_pool_put(inj_pool *p, uint32_t index)
{
	if (index >= p->nbuf)
		return;
	atomic_fetch_or_explicit(&p->freemask[index / 64], 1ull << (index % 64),
				 memory_order_release);
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
