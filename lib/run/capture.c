/* The kept part of a run's output: the head of each stream and a ring for
 * its tail, allocated on first use; what falls between is counted. */
#include "buildconf.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "spawn_int.h"

/* Keep the head until it is full, then the last tail_cap bytes. */
static int
capture_add(struct capture *c, const char *s, size_t n)
{
	size_t	 k;

	c->total += n;
	if (c->head_len < c->head_cap) {
		k = c->head_cap - c->head_len;
		if (k > n)
			k = n;
		memcpy(c->head + c->head_len, s, k);
		c->head_len += k;
		s += k;
		n -= k;
	}
	if (n == 0 || c->tail_cap == 0)
		return 0;
	if (n >= c->tail_cap) {
		memcpy(c->tail, s + n - c->tail_cap, c->tail_cap);
		c->tail_pos = 0;
		c->tail_len = c->tail_cap;
		return 0;
	}
	while (n > 0) {
		k = c->tail_cap - c->tail_pos;
		if (k > n)
			k = n;
		memcpy(c->tail + c->tail_pos, s, k);
		c->tail_pos = (c->tail_pos + k) % c->tail_cap;
		if (c->tail_len < c->tail_cap)
			c->tail_len = c->tail_len + k > c->tail_cap ?
			    c->tail_cap : c->tail_len + k;
		s += k;
		n -= k;
	}
	return 0;
}

int
capture_init(struct capture *c, size_t max)
{
	memset(c, 0, sizeof *c);
	c->head_cap = max / 2;
	c->tail_cap = max - c->head_cap;
	/* The buffers grow on demand: most runs print little. */
	return 0;
}

/* Grow lazily: allocate the head and tail on first use. A part that
 * cannot be allocated keeps nothing for the rest of the run (a head that
 * came later would put bytes after the gap before the marker); its bytes
 * are counted as produced and not kept, so output_bytes and output_dropped
 * stay true, and the marker names the cause. -ENOMEM the first time. */
int
capture_feed(struct capture *c, const char *s, size_t n)
{
	int	 was = c->oom;

	if (c->head == NULL && c->head_cap > 0 &&
	    (c->head = malloc(c->head_cap)) == NULL) {
		c->head_cap = 0;
		c->oom = 1;
	}
	if (c->tail == NULL && c->tail_cap > 0 && c->total + n > c->head_cap &&
	    (c->tail = malloc(c->tail_cap)) == NULL) {
		c->tail_cap = 0;
		c->oom = 1;
	}
	capture_add(c, s, n);
	return c->oom && !was ? -ENOMEM : 0;
}

void
capture_free(struct capture *c)
{
	free(c->head);
	free(c->tail);
	memset(c, 0, sizeof *c);
}

/* The head, a marker naming the bytes not kept (and why, when it was
 * memory), the tail; appended to out. */
int
capture_output(const struct capture *c, struct flaky_buf *out)
{
	uint64_t	 dropped = c->total - c->head_len - c->tail_len;
	size_t		 start;

	flaky_buf_add(out, c->head, c->head_len);
	if (dropped > 0)
		flaky_buf_printf(out, "\n[... %llu bytes not kept%s ...]\n",
		    (unsigned long long)dropped,
		    c->oom ? " (out of memory)" : "");
	if (c->tail_len > 0) {
		start = (c->tail_pos + c->tail_cap - c->tail_len) % c->tail_cap;
		if (start + c->tail_len <= c->tail_cap)
			flaky_buf_add(out, c->tail + start, c->tail_len);
		else {
			flaky_buf_add(out, c->tail + start, c->tail_cap - start);
			flaky_buf_add(out, c->tail,
			    c->tail_len - (c->tail_cap - start));
		}
	}
	return out->oom ? -ENOMEM : 0;
}

int
flaky_proc_output(const struct flaky_proc *p, int stream,
    struct flaky_buf *out)
{
	return capture_output(&p->cap[stream], out);
}
