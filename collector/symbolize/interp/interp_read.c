// SPDX-License-Identifier: MIT
/*
 * interp_read.c - reads of the target JVM's memory for the interpreted-frame namer: every read
 * call charged to the sample's budget, and a Method* resolved from scratch (see interp.h).
 *
 * A resolution takes about six dependent reads: the method's ConstMethod pointer, the
 * ConstMethod header, the pool holder, method-name slot and (with proof) the pool's cache, the
 * holder's name Symbol, and both Symbols' bytes.
 *
 * Invariant: no pointer read from the target is followed before interp_ptr_ok accepts it, and
 * no name byte is kept before name_ok accepts the whole name.
 */
#include "interp_namer.h"

#include <errno.h>
#include <string.h>

static uint64_t get64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return v;
}

/* The ConstMethod flags (little-endian, 2 or 4 bytes), when the layout has line tables. */
static uint32_t get_flags(const struct interp_layout *l, const uint8_t *hdr)
{
	uint32_t v = 0;

	if (!l->lines)
		return 0;
	memcpy(&v, hdr + l->cm_flags, l->cm_flags_size);
	return v;
}

int interp_read_ranges(struct interp_namer *n, uint32_t pid, struct iovec *local,
		       struct iovec *remote, unsigned cnt, size_t *got)
{
	ssize_t r;

	if (n->budget == 0) {
		n->st.over_budget++;
		return -EDQUOT;
	}
	n->budget--;
	n->st.reads++;
	r = n->mem.readv(n->mem.ctx, (pid_t)pid, local, cnt, remote, cnt);
	if (r < 0)
		return r == -ESRCH ? -ESRCH : -EFAULT;
	n->st.read_bytes += (uint64_t)r;
	*got = (size_t)r;
	return 0;
}

int interp_read_all(struct interp_namer *n, uint32_t pid, struct iovec *local, struct iovec *remote,
		    unsigned cnt)
{
	size_t want = 0, got;
	int rv;

	for (unsigned i = 0; i < cnt; i++)
		want += remote[i].iov_len;
	if ((rv = interp_read_ranges(n, pid, local, remote, cnt, &got)) != 0)
		return rv;
	return got == want ? 0 : -EFAULT;
}

/* Modified UTF-8 of a believable name: no NUL, no control bytes, well-formed sequences. */
static bool name_ok(const uint8_t *p, size_t len)
{
	if (len == 0)
		return false;
	for (size_t i = 0; i < len;) {
		uint8_t c = p[i];
		size_t k;

		if (c < 0x20 || c == 0x7f)
			return false;
		if (c < 0x80) {
			i++;
			continue;
		}
		if ((c & 0xe0) == 0xc0)
			k = 1;
		else if ((c & 0xf0) == 0xe0)
			k = 2;
		else
			return false;
		for (size_t j = 1; j <= k; j++)
			if (i + j >= len || (p[i + j] & 0xc0) != 0x80)
				return false;
		i += k + 1;
	}
	return true;
}

int interp_read_header(const struct interp_layout *l, const uint8_t *hdr,
		       struct interp_const_method *out)
{
	out->pool = get64(hdr + l->cm_cp);
	out->code_size = interp_get16(hdr + l->cm_code_size);
	out->name_index = interp_get16(hdr + l->cm_name);
	out->sig_index = interp_get16(hdr + l->cm_sig);
	out->idnum = interp_get16(hdr + l->cm_idnum);
	out->flags = get_flags(l, hdr);
	return interp_ptr_ok(out->pool) && out->name_index > 0 ? 0 : -EBADMSG;
}

/* Read a Symbol at sym: its length, and its body into body (cap bytes at most). */
static int read_symbol(struct interp_namer *n, uint32_t pid, const struct interp_layout *l,
		       uint64_t sym, uint8_t *body, size_t cap, uint16_t *len)
{
	uint8_t peek[INTERP_SYM_PEEK + 64];
	struct iovec local[1], remote[1];
	size_t got, have;
	uint16_t slen;
	int rv;

	if (!interp_ptr_ok(sym))
		return -EBADMSG;
	interp_iov(local, remote, 0, sym, peek, l->sym_body + INTERP_SYM_PEEK);
	/* A Symbol near the end of a mapping reads partially: enough if it covers the body. */
	if ((rv = interp_read_ranges(n, pid, local, remote, 1, &got)) != 0)
		return rv;
	if (got < l->sym_body)
		return -EFAULT;
	slen = interp_get16(peek + l->sym_len);
	if (slen == 0 || slen > cap)
		return -EBADMSG;
	have = got - l->sym_body;
	if (have >= slen) {
		memcpy(body, peek + l->sym_body, slen);
	} else {
		memcpy(body, peek + l->sym_body, have);
		interp_iov(local, remote, 0, sym + l->sym_body + have, body + have, slen - have);
		if ((rv = interp_read_all(n, pid, local, remote, 1)) != 0)
			return rv;
	}
	if (!name_ok(body, slen))
		return -EBADMSG;
	*len = slen;
	return 0;
}

int interp_read_method(struct interp_namer *n, uint32_t pid, const struct interp_layout *l,
		       uint64_t method, struct interp_method_read *out)
{
	uint8_t hdr[INTERP_HDR_MAX];
	uint64_t words[3] = { 0 };
	struct iovec local[3], remote[3];
	int rv;

	interp_iov(local, remote, 0, method + l->m_cm, &out->src.const_method, 8);
	if ((rv = interp_read_all(n, pid, local, remote, 1)) != 0)
		return rv;
	if (!interp_ptr_ok(out->src.const_method))
		return -EBADMSG;
	interp_iov(local, remote, 0, out->src.const_method, hdr, l->cm_size);
	if ((rv = interp_read_all(n, pid, local, remote, 1)) != 0)
		return rv;
	if ((rv = interp_read_header(l, hdr, &out->src.header)) != 0)
		return rv;
	interp_iov(local, remote, 0, out->src.header.pool + l->cp_holder, &words[0], 8);
	interp_iov(local, remote, 1,
		   out->src.header.pool + l->cp_size + 8ull * out->src.header.name_index, &words[1],
		   8);
	if (l->proof)
		interp_iov(local, remote, 2, out->src.header.pool + l->cp_cache, &words[2], 8);
	if ((rv = interp_read_all(n, pid, local, remote, l->proof ? 3 : 2)) != 0)
		return rv;
	out->src.holder = words[0];
	out->src.name_sym = words[1];
	out->src.cache = words[2];
	if (!interp_ptr_ok(out->src.holder))
		return -EBADMSG;
	interp_iov(local, remote, 0, out->src.holder + l->k_name, &out->src.holder_sym, 8);
	if ((rv = interp_read_all(n, pid, local, remote, 1)) != 0)
		return rv;
	if ((rv = read_symbol(n, pid, l, out->src.holder_sym, out->holder_name,
			      INTERP_MAX_CLASS_NAME, &out->src.holder_len)))
		return rv;
	return read_symbol(n, pid, l, out->src.name_sym, out->method_name, INTERP_MAX_METHOD_NAME,
			   &out->src.name_len);
}

/* One unbudgeted read of 8 bytes at addr. */
static int read_word(struct interp_namer *n, uint32_t pid, uint64_t addr, uint64_t *v)
{
	struct iovec local[1], remote[1];
	ssize_t r;

	interp_iov(local, remote, 0, addr, v, sizeof(*v));
	n->st.reads++;
	r = n->mem.readv(n->mem.ctx, (pid_t)pid, local, 1, remote, 1);
	if (r != (ssize_t)sizeof(*v))
		return r < 0 ? (int)r : -EFAULT;
	n->st.read_bytes += sizeof(*v);
	return 0;
}

int interp_unload_count(struct interp_namer *n, uint32_t pid, const struct interp_layout *l,
			uint64_t *addr, uint64_t *v)
{
	int rv;

	if (!l->unload_slot)
		return -ENOENT;
	if (*addr == 0) {
		uint64_t a;

		if ((rv = read_word(n, pid, l->unload_slot, &a)) != 0)
			return rv;
		if (!interp_ptr_ok(a))
			return -ENOENT; /* not found (yet): the GC clock rule */
		*addr = a;
	}
	return read_word(n, pid, *addr, v);
}

int interp_gc_clock(struct interp_namer *n, uint32_t pid, const struct interp_layout *l,
		    uint64_t *start_ns, uint64_t *end_ns)
{
	uint64_t v[2];
	struct iovec local[1], remote[1];
	ssize_t r;

	if (!l->gc_clock)
		return -ENOENT;
	interp_iov(local, remote, 0, l->gc_clock, v, sizeof(v));
	n->st.reads++;
	r = n->mem.readv(n->mem.ctx, (pid_t)pid, local, 1, remote, 1);
	if (r != (ssize_t)sizeof(v))
		return r < 0 ? (int)r : -EFAULT;
	n->st.read_bytes += sizeof(v);
	*start_ns = v[0];
	*end_ns = v[1];
	return 0;
}
