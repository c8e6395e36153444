/* A JSON string into an evbuffer: quotes, backslashes and control
 * characters escaped, other bytes as they are (names are ASCII, messages
 * UTF-8). */
#include "buildconf.h"

#include <event2/buffer.h>

#include "flakyd.h"

/* Append s as a JSON string (NULL as null). */
void
json_add_string(struct evbuffer *b, const char *s)
{
	if (s == NULL) {
		evbuffer_add(b, "null", 4);
		return;
	}
	evbuffer_add(b, "\"", 1);
	for (; *s != '\0'; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			evbuffer_add_printf(b, "\\%c", c);
		else if (c == '\n')
			evbuffer_add(b, "\\n", 2);
		else if (c < 0x20 || c == 0x7f)
			evbuffer_add_printf(b, "\\u%04x", c);
		else
			evbuffer_add(b, s, 1);
	}
	evbuffer_add(b, "\"", 1);
}
