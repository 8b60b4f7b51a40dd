// SPDX-License-Identifier: GPL-2.0
/*
 * devmemctl: JSON output. A streaming writer that keeps track of commas
 * and indentation, and the one string escaper: device names may hold any
 * byte but '/', ':' and white space, so quotes, backslashes, control
 * characters and bytes that are not UTF-8 all have to come out as valid
 * JSON.
 */
#include <inttypes.h>
#include <stdio.h>

#include "devmemctl.h"

/*
 * The UTF-8 sequence at @s, whose first byte is >= 0x80: its length when
 * it is valid, else minus the length of its maximal subpart (the longest
 * start of a valid sequence, at least 1 byte), which becomes one U+FFFD,
 * as Unicode recommends and as Python's "replace" decoding does.
 */
static int utf8_seq(const unsigned char *s)
{
	unsigned char c = s[0];
	unsigned char lo = 0x80, hi = 0xbf;
	int n, i;

	if (c >= 0xc2 && c <= 0xdf) {
		n = 2;
	} else if (c >= 0xe0 && c <= 0xef) {
		n = 3;
		if (c == 0xe0)
			lo = 0xa0;	/* no overlong forms */
		else if (c == 0xed)
			hi = 0x9f;	/* no surrogates */
	} else if (c >= 0xf0 && c <= 0xf4) {
		n = 4;
		if (c == 0xf0)
			lo = 0x90;
		else if (c == 0xf4)
			hi = 0x8f;	/* nothing above U+10FFFF */
	} else {
		return -1;
	}
	/* the second byte has the narrowed range, the others 80-bf; the
	 * string's NUL stops it like any other bad byte
	 */
	if (s[1] < lo || s[1] > hi)
		return -1;
	for (i = 2; i < n; i++)
		if (s[i] < 0x80 || s[i] > 0xbf)
			return -i;
	return n;
}

void json_put_string(FILE *f, const char *str)
{
	const unsigned char *s = (const unsigned char *)str;
	int n;

	putc('"', f);
	while (*s) {
		switch (*s) {
		case '"':  fputs("\\\"", f); break;
		case '\\': fputs("\\\\", f); break;
		case '\b': fputs("\\b", f); break;
		case '\f': fputs("\\f", f); break;
		case '\n': fputs("\\n", f); break;
		case '\r': fputs("\\r", f); break;
		case '\t': fputs("\\t", f); break;
		default:
			if (*s < 0x20 || *s == 0x7f) {
				fprintf(f, "\\u%04x", *s);
			} else if (*s < 0x80) {
				putc(*s, f);
			} else if ((n = utf8_seq(s)) > 0) {
				fwrite(s, 1, (size_t)n, f);
				s += n;
				continue;
			} else {
				fputs("\\ufffd", f);
				s += -n;
				continue;
			}
		}
		s++;
	}
	putc('"', f);
}

void jw_init(struct jw *w, FILE *f, int pretty)
{
	w->f = f;
	w->pretty = pretty;
	w->depth = 0;
	w->count[0] = 0;
}

static void indent(struct jw *w)
{
	int i;

	putc('\n', w->f);
	for (i = 0; i < w->depth; i++)
		fputs("    ", w->f);
}

/* Before a value: the comma, the line break, the member's name. */
static void member(struct jw *w, const char *key)
{
	if (w->count[w->depth]++)
		putc(',', w->f);
	if (w->pretty && w->depth)
		indent(w);
	if (key) {
		json_put_string(w->f, key);
		fputs(w->pretty ? ": " : ":", w->f);
	}
}

static void open_nested(struct jw *w, const char *key, char c)
{
	member(w, key);
	putc(c, w->f);
	if (w->depth + 1 < JW_MAX_DEPTH)
		w->depth++;
	w->count[w->depth] = 0;
}

static void close_nested(struct jw *w, char c)
{
	int empty = !w->count[w->depth];

	if (w->depth)
		w->depth--;
	if (w->pretty && !empty)
		indent(w);
	putc(c, w->f);
}

void jw_obj_open(struct jw *w, const char *key) { open_nested(w, key, '{'); }
void jw_obj_close(struct jw *w) { close_nested(w, '}'); }
void jw_arr_open(struct jw *w, const char *key) { open_nested(w, key, '['); }
void jw_arr_close(struct jw *w) { close_nested(w, ']'); }

void jw_str(struct jw *w, const char *key, const char *v)
{
	member(w, key);
	json_put_string(w->f, v);
}

void jw_uint(struct jw *w, const char *key, uint64_t v)
{
	member(w, key);
	fprintf(w->f, "%" PRIu64, v);
}

void jw_int(struct jw *w, const char *key, int64_t v)
{
	member(w, key);
	fprintf(w->f, "%" PRId64, v);
}

void jw_bool(struct jw *w, const char *key, int v)
{
	member(w, key);
	fputs(v ? "true" : "false", w->f);
}

void jw_null(struct jw *w, const char *key)
{
	member(w, key);
	fputs("null", w->f);
}

void jw_finish(struct jw *w)
{
	putc('\n', w->f);
}
