/* Inside the store: shared between store.c (writes) and store_query.c. */
#ifndef FLAKY_STORE_INT_H
#define FLAKY_STORE_INT_H

#include <sqlite3.h>

#include "store.h"

sqlite3	*store_db(struct flaky_store *);
int	 store_sql_error(struct flaky_store *, char *, size_t, const char *);
void	 store_query_finalize(struct flaky_store *);

#endif
