/* The test ids and message ids a store has looked up: an open-addressing
 * hash table per kind, cleared on rollback (and when it grows too big). */
#include "buildconf.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "store_int.h"

#define IDCACHE_MAX	(1 << 20)

void
store_idcache_clear(struct idcache *c)
{
	for (size_t i = 0; i < c->cap; i++)
		free(c->v[i].name);
	free(c->v);
	memset(c, 0, sizeof *c);
}

static struct idcache_ent *
idcache_slot(struct idcache *c, uint64_t hash, int64_t key, const char *name)
{
	size_t	 mask = c->cap - 1, i;

	for (i = hash & mask;; i = (i + 1) & mask) {
		struct idcache_ent *e = &c->v[i];

		if (e->id == 0)
			return e;
		if (e->hash == hash && e->key == key && (name == NULL ||
		    (e->name != NULL && strcmp(e->name, name) == 0)))
			return e;
	}
}

int64_t
store_idcache_get(struct idcache *c, uint64_t hash, int64_t key,
    const char *name)
{
	if (c->cap == 0)
		return 0;
	return idcache_slot(c, hash, key, name)->id;
}

int
store_idcache_put(struct idcache *c, uint64_t hash, int64_t key,
    const char *name, int64_t id)
{
	struct idcache_ent *e;

	if (c->n >= IDCACHE_MAX)
		store_idcache_clear(c);
	if ((c->n + 1) * 2 > c->cap) {
		struct idcache old = *c;
		size_t	 cap = c->cap ? c->cap * 2 : 1024;

		if ((c->v = calloc(cap, sizeof *c->v)) == NULL) {
			*c = old;
			return -ENOMEM;
		}
		c->cap = cap;
		c->n = 0;
		for (size_t i = 0; i < old.cap; i++) {
			if (old.v[i].id == 0)
				continue;
			*idcache_slot(c, old.v[i].hash, old.v[i].key,
			    old.v[i].name) = old.v[i];
			c->n++;
		}
		free(old.v);
	}
	e = idcache_slot(c, hash, key, name);
	if (e->id == 0) {
		if (name != NULL && (e->name = strdup(name)) == NULL)
			return -ENOMEM;
		e->hash = hash;
		e->key = key;
		c->n++;
	}
	e->id = id;
	return 0;
}
