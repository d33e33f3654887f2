// SPDX-License-Identifier: MIT
/*
 * options.c - exact key=value parsing of the agent's option string.
 *
 * Invariant: either the whole string is valid and *o is written, or nothing is written and err
 * names the first item at fault.
 */
#include "options.h"
#include "service.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#define VALID_KEYS "socket, signatures, maxmem, log, service, events, depth, allocstack"

enum {
	KEY_SOCKET,
	KEY_SIGNATURES,
	KEY_MAXMEM,
	KEY_LOG,
	KEY_SERVICE,
	KEY_EVENTS,
	KEY_DEPTH,
	KEY_ALLOCSTACK,
	KEY_COUNT,
};

static const char *const key_names[KEY_COUNT] = { "socket",  "signatures", "maxmem", "log",
						  "service", "events",	   "depth",  "allocstack" };

void options_defaults(struct options *o)
{
	memset(o, 0, sizeof(*o));
	strcpy(o->socket, FG_DEFAULT_SOCKET);
	o->signatures = false;
	o->maxmem = OPTIONS_MAXMEM_DEFAULT;
	o->log = OPTIONS_LOG_WARN;
	o->events = true;
	o->depth = OPTIONS_DEPTH_DEFAULT;
	o->alloc_copy = false;
	o->alloc_auto = true;
}

/* A whole decimal number in [1, OPTIONS_DEPTH_MAX]. */
static int parse_depth(const char *v, size_t len, unsigned *out)
{
	unsigned n = 0;

	if (len == 0 || len > 4)
		return -EINVAL;
	for (size_t i = 0; i < len; i++) {
		if (v[i] < '0' || v[i] > '9')
			return -EINVAL;
		n = n * 10 + (unsigned)(v[i] - '0');
	}
	if (n < 1 || n > OPTIONS_DEPTH_MAX)
		return -ERANGE;
	*out = n;
	return 0;
}

/* A whole decimal number with an optional k/m/g suffix, in [MIN, MAX]. */
static int parse_size(const char *v, size_t len, unsigned long long *out)
{
	unsigned long long n = 0;
	size_t i = 0;
	unsigned shift = 0;

	if (len == 0)
		return -EINVAL;
	for (; i < len && v[i] >= '0' && v[i] <= '9'; i++) {
		n = n * 10 + (unsigned)(v[i] - '0');
		if (n > OPTIONS_MAXMEM_MAX) /* also keeps n * 10 from overflowing */
			return -ERANGE;
	}
	if (i == 0)
		return -EINVAL;
	if (i < len) {
		switch (v[i]) {
		case 'k':
		case 'K':
			shift = 10;
			break;
		case 'm':
		case 'M':
			shift = 20;
			break;
		case 'g':
		case 'G':
			shift = 30;
			break;
		default:
			return -EINVAL;
		}
		if (i + 1 != len)
			return -EINVAL;
	}
	if (n > (OPTIONS_MAXMEM_MAX >> shift))
		return -ERANGE;
	n <<= shift;
	if (n < OPTIONS_MAXMEM_MIN)
		return -ERANGE;
	*out = n;
	return 0;
}

static bool service_ok(const char *v, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (!service_char_ok(v[i]))
			return false;
	return true;
}

static bool value_is(const char *v, size_t len, const char *word)
{
	return strlen(word) == len && memcmp(v, word, len) == 0;
}

/*
 * Split item[0..ilen) of the option string s into a known key and its value. 0, or -EINVAL
 * with err saying why (shown: how much of the item a message echoes).
 */
static int split_item(const char *s, const char *item, size_t ilen, int shown, int *key,
		      const char **v, size_t *vlen, char *err, size_t errlen)
{
	const char *eq = memchr(item, '=', ilen);
	size_t klen;

	if (ilen == 0) {
		snprintf(err, errlen, "empty option in '%s' (expected key=value,...; valid: %s)", s,
			 VALID_KEYS);
		return -EINVAL;
	}
	if (eq == NULL) {
		snprintf(err, errlen, "option '%.*s' has no '=' (expected key=value; valid: %s)",
			 shown, item, VALID_KEYS);
		return -EINVAL;
	}
	klen = (size_t)(eq - item);
	*v = eq + 1;
	*vlen = ilen - klen - 1;
	*key = -1;
	for (int k = 0; k < KEY_COUNT; k++)
		if (value_is(item, klen, key_names[k]))
			*key = k;
	if (*key < 0) {
		snprintf(err, errlen, "unknown option '%.*s' in '%.*s' (valid: %s)",
			 klen > 100 ? 100 : (int)klen, item, shown, item, VALID_KEYS);
		return -EINVAL;
	}
	return 0;
}

/* v[0..vlen), 1 to max bytes, copied into dst as a string; false when it does not fit. */
static bool put_str(char *dst, size_t max, const char *v, size_t vlen)
{
	if (vlen == 0 || vlen > max)
		return false;
	memcpy(dst, v, vlen);
	dst[vlen] = '\0';
	return true;
}

/* v[0..vlen) is true or false: *out set to it. */
static bool put_bool(bool *out, const char *v, size_t vlen)
{
	if (!value_is(v, vlen, "true") && !value_is(v, vlen, "false"))
		return false;
	*out = value_is(v, vlen, "true");
	return true;
}

/* v[0..vlen) is quiet, warn or info: *out set to it. */
static bool put_log(enum options_log *out, const char *v, size_t vlen)
{
	if (value_is(v, vlen, "quiet"))
		*out = OPTIONS_LOG_QUIET;
	else if (value_is(v, vlen, "warn"))
		*out = OPTIONS_LOG_WARN;
	else if (value_is(v, vlen, "info"))
		*out = OPTIONS_LOG_INFO;
	else
		return false;
	return true;
}

/* Set key's value v[0..vlen) in o; false when the key does not take it. */
static bool set_value(struct options *o, int key, const char *v, size_t vlen)
{
	switch (key) {
	case KEY_SOCKET:
		return vlen > 0 && v[0] == '/' && !memchr(v, '\0', vlen) &&
		       put_str(o->socket, OPTIONS_SOCKET_MAX, v, vlen);
	case KEY_SIGNATURES:
		return put_bool(&o->signatures, v, vlen);
	case KEY_MAXMEM:
		return parse_size(v, vlen, &o->maxmem) == 0;
	case KEY_LOG:
		return put_log(&o->log, v, vlen);
	case KEY_SERVICE:
		return service_ok(v, vlen) && put_str(o->service, OPTIONS_SERVICE_MAX, v, vlen);
	case KEY_EVENTS:
		return put_bool(&o->events, v, vlen);
	case KEY_DEPTH:
		return parse_depth(v, vlen, &o->depth) == 0;
	case KEY_ALLOCSTACK:
		if (!value_is(v, vlen, "jvmti") && !value_is(v, vlen, "copy") &&
		    !value_is(v, vlen, "auto"))
			return false;
		o->alloc_copy = value_is(v, vlen, "copy");
		o->alloc_auto = value_is(v, vlen, "auto");
		return true;
	}
	return false;
}

/* Set key's value v[0..vlen) in o. 0, or -EINVAL with err naming the item and what it takes. */
static int apply_value(struct options *o, int key, const char *v, size_t vlen, const char *item,
		       int shown, char *err, size_t errlen)
{
	if (set_value(o, key, v, vlen))
		return 0;
	switch (key) {
	case KEY_SOCKET:
		snprintf(err, errlen,
			 "bad value in '%.*s': socket= needs an absolute path of at most %d bytes",
			 shown, item, OPTIONS_SOCKET_MAX);
		break;
	case KEY_SIGNATURES:
	case KEY_EVENTS:
		snprintf(err, errlen, "bad value in '%.*s': %s= takes true or false", shown, item,
			 key_names[key]);
		break;
	case KEY_MAXMEM:
		snprintf(err, errlen,
			 "bad value in '%.*s': maxmem= takes a byte count with optional k, m or g "
			 "suffix between 1m and 1g",
			 shown, item);
		break;
	case KEY_LOG:
		snprintf(err, errlen, "bad value in '%.*s': log= takes quiet, warn or info", shown,
			 item);
		break;
	case KEY_DEPTH:
		snprintf(err, errlen,
			 "bad value in '%.*s': depth= takes a whole number from 1 to %u", shown,
			 item, OPTIONS_DEPTH_MAX);
		break;
	case KEY_ALLOCSTACK:
		snprintf(err, errlen, "bad value in '%.*s': allocstack= takes auto, copy or jvmti",
			 shown, item);
		break;
	default:
		snprintf(err, errlen,
			 "bad value in '%.*s': service= takes 1 to %d characters of A-Z a-z 0-9 . "
			 "_ - : /",
			 shown, item, OPTIONS_SERVICE_MAX);
		break;
	}
	return -EINVAL;
}

int options_parse(const char *s, struct options *out, char *err, size_t errlen)
{
	struct options o;
	bool seen[KEY_COUNT] = { false };
	const char *item = s;

	options_defaults(&o);
	if (s == NULL || *s == '\0') {
		*out = o;
		return 0;
	}
	for (;;) {
		const char *end = strchr(item, ',');
		size_t ilen = end ? (size_t)(end - item) : strlen(item), vlen;
		/* Items are echoed with %.*s: bound them so one message stays one short line. */
		int shown = ilen > 200 ? 200 : (int)ilen, key;
		const char *v;

		if (split_item(s, item, ilen, shown, &key, &v, &vlen, err, errlen) != 0)
			return -EINVAL;
		if (seen[key]) {
			snprintf(err, errlen, "option '%s' given twice", key_names[key]);
			return -EINVAL;
		}
		seen[key] = true;
		if (apply_value(&o, key, v, vlen, item, shown, err, errlen) != 0)
			return -EINVAL;
		if (end == NULL)
			break;
		item = end + 1;
	}
	*out = o;
	return 0;
}

void options_budget(const struct options *o, struct options_budget *out)
{
	size_t all = (size_t)o->maxmem;

	out->queue = all / 4;
	out->names = all / 8;
	out->lines = all / 16;
	out->livecode = all - out->queue - out->names - out->lines;
}
