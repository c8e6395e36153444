/* mkimage OUT.c: the empty database of this schema version as C source,
 * linked into flakyctl and flakyd so that a new database is written out
 * instead of built by the migrations (lib/store/open.c, store_create).
 *
 * The database is built by flaky_store_build, the very code that builds
 * one where no image is linked (this program), so the two cannot differ;
 * test_store.c checks that they do not. Only the non-zero parts of the
 * pages are kept: a 100 kB database is 10 kB of image. */
#include "buildconf.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "store/store.h"
#include "util/util.h"

/* A run of zeros this long ends a segment (a segment costs 6 bytes). */
#define GAP	16

static int
emit_byte(FILE *f, unsigned int b, size_t *col)
{
	if (fprintf(f, "%s0x%02x,", *col == 0 ? "\t" : " ", b) < 0)
		return -1;
	if (++*col == 12) {
		*col = 0;
		return fputc('\n', f) == EOF ? -1 : 0;
	}
	return 0;
}

int
main(int argc, char **argv)
{
	char		 dir[] = "/tmp/flaky-mkimage-XXXXXX", path[64];
	char		 err[1024];
	unsigned char	*img = NULL;
	size_t		 size = 0, i, j, z, len, col = 0, total = 0;
	long		 n;
	FILE		*f = NULL, *out = NULL;
	int		 r = 1;

	if (argc != 2) {
		fprintf(stderr, "usage: mkimage OUT.c\n");
		return 2;
	}
	if (flaky_store_image_linked()) {
		fprintf(stderr, "mkimage: linked with an image already\n");
		return 1;
	}
	if (mkdtemp(dir) == NULL) {
		fprintf(stderr, "mkimage: %s: %s\n", dir, strerror(errno));
		return 1;
	}
	snprintf(path, sizeof path, "%s/new.db", dir);
	if (flaky_store_build(path, err, sizeof err) < 0) {
		fprintf(stderr, "mkimage: %s\n", err);
		goto out;
	}
	if ((f = fopen(path, "rb")) == NULL || fseek(f, 0, SEEK_END) != 0 ||
	    (n = ftell(f)) <= 0 || fseek(f, 0, SEEK_SET) != 0 ||
	    (img = malloc((size_t)n)) == NULL ||
	    fread(img, 1, (size_t)n, f) != (size_t)n) {
		fprintf(stderr, "mkimage: %s: cannot read\n", path);
		goto out;
	}
	size = (size_t)n;
	if ((out = fopen(argv[1], "w")) == NULL) {
		fprintf(stderr, "mkimage: %s: %s\n", argv[1], strerror(errno));
		goto out;
	}
	fprintf(out, "/* Made by schema/mkimage: the empty database of "
	    "schema version %d. */\n#include <stddef.h>\n\n"
	    "const size_t flaky_schema_image_size = %zu;\n"
	    "const unsigned char flaky_schema_image[] = {\n",
	    flaky_store_schema_version(), size);
	for (i = 0; i < size; i = j) {
		/* the next non-zero byte starts a segment ... */
		while (i < size && img[i] == 0)
			i++;
		if (i == size)
			break;
		/* ... that ends at GAP zeros, the end, or 65535 bytes */
		for (j = i, z = 0; j < size && z < GAP && j - i < 65535; j++)
			z = img[j] == 0 ? z + 1 : 0;
		len = j - i - z;
		j = i + len;
		if (emit_byte(out, i & 0xff, &col) < 0 ||
		    emit_byte(out, (i >> 8) & 0xff, &col) < 0 ||
		    emit_byte(out, (i >> 16) & 0xff, &col) < 0 ||
		    emit_byte(out, (i >> 24) & 0xff, &col) < 0 ||
		    emit_byte(out, len & 0xff, &col) < 0 ||
		    emit_byte(out, len >> 8, &col) < 0)
			goto out;
		for (size_t k = i; k < j; k++)
			if (emit_byte(out, img[k], &col) < 0)
				goto out;
		total += 6 + len;
	}
	fprintf(out, "%s};\nconst size_t flaky_schema_image_len = %zu;\n",
	    col ? "\n" : "", total);
	if (fclose(out) != 0) {
		out = NULL;
		fprintf(stderr, "mkimage: %s: cannot write\n", argv[1]);
		goto out;
	}
	out = NULL;
	r = 0;
out:
	if (out != NULL)
		fclose(out);
	if (f != NULL)
		fclose(f);
	free(img);
	unlink(path);
	rmdir(dir);
	return r;
}
