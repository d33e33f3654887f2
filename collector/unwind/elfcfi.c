// SPDX-License-Identifier: MIT
/*
 * elfcfi.c - .eh_frame unwinding steps through libdw (see elfcfi.h).
 *
 * libdw gives the CFA rule as one DW_OP_bregx (register + offset) or an expression, and each
 * register's rule as: undefined (no ops), same value (ops without operations), or an
 * expression built from DW_OP_call_frame_cfa / DW_OP_plus_uconst / DW_OP_stack_value, or any
 * expression of the CFI itself (e.g. the PLT's CFA: rsp + 8 + ((rip & 15) >= 11) << 3).
 */
#include "elfcfi.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdint.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "arch_x86_64.h"

#define REG_RBP ARCH_DWARF_REG_BP
#define REG_RSP ARCH_DWARF_REG_SP
#define REG_RIP ARCH_DWARF_REG_RA
#define STACK_MAX 16
#define RULES 1024 /* direct-mapped cache of simple rules, per file */

/*
 * The rules at one address when they have the shape compilers emit almost everywhere: CFA =
 * rsp or rbp + offset; return address and caller's rbp saved at CFA + offset (or rbp kept).
 * Cached by address so a hot pc costs no libdw lookup (which parses its FDE and runs its CIE
 * and FDE programs every time).
 */
struct rule {
	uint64_t vaddr; /* + 1; 0 = empty */
	int32_t cfa_off, ra_off, fp_off;
	uint8_t cfa_reg;  /* REG_RSP or REG_RBP */
	uint8_t fp_saved; /* rbp at CFA + fp_off, else unchanged */
};

struct elfcfi {
	int fd; /* -1 for an in-memory image */
	void *image;
	Elf *elf;
	Dwarf_CFI *cfi;
	struct rule rules[RULES];
};

/* ---- .eh_frame check before libdw sees it ---------------------------------------------- */

/*
 * libdw sizes a frame's register table by the largest register number a CIE or FDE program
 * names (or the CIE's return address column) and clears it: one DW_CFA_offset_extended with a
 * register number near 2^32 in a hostile file costs gigabytes and a minute. So every entry of
 * .eh_frame is decoded once at load, and the file's CFI refused if any register number passes
 * CFI_REG_MAX (arch_x86_64.h), an instruction is unknown or runs past its entry, or the
 * .eh_frame_hdr search table points at an entry that does not pass the same check. .eh_frame is
 * found by its section header only, so a file without section headers gets no CFI (real shared
 * objects, executables and the vDSO all have them); a PT_GNU_EH_FRAME segment, which libdw
 * reads instead of the sections, must lead to the same bytes (check_phdrs).
 */
#define CFI_REG_MAX ARCH_CFI_REG_MAX

struct cur {
	const uint8_t *p, *end;
};

static bool get_bytes(struct cur *k, size_t n, const uint8_t **out)
{
	if ((size_t)(k->end - k->p) < n)
		return false;
	if (out)
		*out = k->p;
	k->p += n;
	return true;
}

static bool get_u8(struct cur *k, uint8_t *v)
{
	const uint8_t *b;

	if (!get_bytes(k, 1, &b))
		return false;
	*v = *b;
	return true;
}

static bool get_u32(struct cur *k, uint32_t *v)
{
	const uint8_t *b;

	if (!get_bytes(k, 4, &b))
		return false;
	memcpy(v, b, 4);
	return true;
}

/* An unsigned or signed LEB128 of at most 10 bytes; *v gets the unsigned value. */
static bool get_leb(struct cur *k, uint64_t *v)
{
	uint64_t r = 0;

	for (unsigned int i = 0; i < 10; i++) {
		uint8_t b;

		if (!get_u8(k, &b))
			return false;
		r |= (uint64_t)(b & 0x7f) << (7 * i);
		if (!(b & 0x80)) {
			if (v)
				*v = r;
			return true;
		}
	}
	return false;
}

static bool get_reg(struct cur *k)
{
	uint64_t r;

	return get_leb(k, &r) && r <= CFI_REG_MAX;
}

/* Skips one pointer of DW_EH_PE encoding enc (aligned and indirect-less forms only). */
static bool skip_ptr(struct cur *k, uint8_t enc)
{
	static const uint8_t size[16] = { 8, 0, 2, 4, 8, 0, 0, 0, 0, 0, 2, 4, 8, 0, 0, 0 };

	if (enc == DW_EH_PE_omit)
		return true;
	if ((enc & 0x70) == DW_EH_PE_aligned)
		return false;
	if ((enc & 0x0f) == DW_EH_PE_uleb128 || (enc & 0x0f) == DW_EH_PE_sleb128)
		return get_leb(k, NULL);
	return size[enc & 0x0f] && get_bytes(k, size[enc & 0x0f], NULL);
}

/* One CFA program, [p, end): every instruction known, in bounds, with small registers. */
static bool check_program(struct cur k, uint8_t fde_enc)
{
	while (k.p < k.end) {
		uint8_t op = *k.p++;
		uint64_t n;

		switch (op >> 6) {
		case 1: /* DW_CFA_advance_loc */
		case 3: /* DW_CFA_restore */
			continue;
		case 2: /* DW_CFA_offset */
			if (!get_leb(&k, NULL))
				return false;
			continue;
		}
		switch (op) {
		case DW_CFA_nop:
		case DW_CFA_remember_state:
		case DW_CFA_restore_state:
		case DW_CFA_GNU_window_save:
			break;
		case DW_CFA_set_loc:
			if (!skip_ptr(&k, fde_enc))
				return false;
			break;
		case DW_CFA_advance_loc1:
		case DW_CFA_advance_loc2:
		case DW_CFA_advance_loc4: /* a delta of 1, 2 or 4 bytes: 0x02, 0x03, 0x04 */
			if (!get_bytes(&k, (size_t)1 << (op - DW_CFA_advance_loc1), NULL))
				return false;
			break;
		case DW_CFA_def_cfa_offset:
		case DW_CFA_def_cfa_offset_sf:
		case DW_CFA_GNU_args_size:
			if (!get_leb(&k, NULL))
				return false;
			break;
		case DW_CFA_restore_extended:
		case DW_CFA_undefined:
		case DW_CFA_same_value:
		case DW_CFA_def_cfa_register:
			if (!get_reg(&k))
				return false;
			break;
		case DW_CFA_offset_extended:
		case DW_CFA_offset_extended_sf:
		case DW_CFA_def_cfa:
		case DW_CFA_def_cfa_sf:
		case DW_CFA_val_offset:
		case DW_CFA_val_offset_sf:
		case DW_CFA_GNU_negative_offset_extended:
			if (!get_reg(&k) || !get_leb(&k, NULL))
				return false;
			break;
		case DW_CFA_register:
			if (!get_reg(&k) || !get_reg(&k))
				return false;
			break;
		case DW_CFA_expression:
		case DW_CFA_val_expression:
			if (!get_reg(&k))
				return false;
			/* fall through */
		case DW_CFA_def_cfa_expression:
			if (!get_leb(&k, &n) || n > (uint64_t)(k.end - k.p))
				return false;
			k.p += n;
			break;
		default:
			return false;
		}
	}
	return true;
}

/* The entry at offset off of sec: its body in *body (after the length), false when bad. */
static bool entry_at(const uint8_t *sec, size_t size, uint64_t off, struct cur *body)
{
	struct cur k;
	uint32_t len;

	if (off > size)
		return false;
	k = (struct cur){ sec + off, sec + size };
	if (!get_u32(&k, &len) || len == 0xffffffff || len > (size_t)(k.end - k.p))
		return false;
	*body = (struct cur){ k.p, k.p + len };
	return true;
}

/* The CIE at off: checks its program, gives its FDEs' pointer encoding and 'z' flag. */
static bool check_cie(const uint8_t *sec, size_t size, uint64_t off, uint8_t *fde_enc, bool *z)
{
	struct cur k, aug;
	uint32_t id;
	uint8_t ver, b;
	uint64_t n, ra;
	const char *s;
	size_t slen;

	if (!entry_at(sec, size, off, &k) || !get_u32(&k, &id) || id != 0 || !get_u8(&k, &ver) ||
	    (ver != 1 && ver != 3 && ver != 4))
		return false;
	s = (const char *)k.p;
	slen = strnlen(s, (size_t)(k.end - k.p));
	if (!get_bytes(&k, slen + 1, NULL)) /* no NUL within the entry */
		return false;
	if (ver == 4 && !get_bytes(&k, 2, NULL)) /* address and segment selector sizes */
		return false;
	if (!get_leb(&k, NULL) || !get_leb(&k, NULL)) /* code and data alignment */
		return false;
	if (ver == 1) {
		if (!get_u8(&k, &b))
			return false;
		ra = b;
	} else if (!get_leb(&k, &ra)) {
		return false;
	}
	if (ra > CFI_REG_MAX)
		return false;
	*fde_enc = DW_EH_PE_absptr;
	*z = slen > 0 && s[0] == 'z';
	if (slen > 0) {
		/* only 'z' augmentations say where the program starts */
		if (!*z || !get_leb(&k, &n) || n > (uint64_t)(k.end - k.p))
			return false;
		aug = (struct cur){ k.p, k.p + n };
		k.p += n;
		for (size_t i = 1; i < slen; i++) {
			switch (s[i]) {
			case 'R':
				if (!get_u8(&aug, fde_enc))
					return false;
				break;
			case 'L':
				if (!get_u8(&aug, &b))
					return false;
				break;
			case 'P':
				if (!get_u8(&aug, &b) || !skip_ptr(&aug, b & 0x7f))
					return false;
				break;
			case 'S':
			case 'B':
				break;
			default:
				return false;
			}
		}
	}
	return check_program(k, *fde_enc);
}

/* The FDE at off (its CIE too); *next gets the following entry's offset. */
static bool check_fde(const uint8_t *sec, size_t size, uint64_t off, uint64_t *next)
{
	struct cur k;
	const uint8_t *at;
	uint32_t ptr;
	uint64_t n, cie;
	uint8_t enc;
	bool z;

	if (!entry_at(sec, size, off, &k))
		return false;
	if (next)
		*next = (uint64_t)(k.end - sec);
	at = k.p;
	if (!get_u32(&k, &ptr) || ptr == 0)
		return false;
	cie = (uint64_t)(at - sec);
	if (ptr > cie)
		return false;
	cie -= ptr;
	if (!check_cie(sec, size, cie, &enc, &z) || !skip_ptr(&k, enc) || !skip_ptr(&k, enc & 0x0f))
		return false;
	if (z && (!get_leb(&k, &n) || n > (uint64_t)(k.end - k.p)))
		return false;
	if (z)
		k.p += n;
	return check_program(k, enc);
}

/* The next section after scn (NULL: the first) named name, or NULL. */
static Elf_Scn *next_named(Elf *elf, size_t shstrndx, Elf_Scn *scn, const char *name, GElf_Shdr *sh)
{
	while ((scn = elf_nextscn(elf, scn))) {
		const char *n;

		if (!gelf_getshdr(scn, sh))
			continue;
		n = elf_strptr(elf, shstrndx, sh->sh_name);
		if (n && strcmp(n, name) == 0)
			return scn;
	}
	return NULL;
}

static Elf_Scn *section(Elf *elf, size_t shstrndx, const char *name, GElf_Shdr *sh)
{
	return next_named(elf, shstrndx, NULL, name, sh);
}

/* The four encoding bytes that open an .eh_frame_hdr (version, eh_frame_ptr, count, table). */
struct hdr_head {
	uint8_t ver, ptr_enc, cnt_enc, tab_enc;
};

static bool get_hdr_head(struct cur *k, struct hdr_head *h)
{
	return get_u8(k, &h->ver) && get_u8(k, &h->ptr_enc) && get_u8(k, &h->cnt_enc) &&
	       get_u8(k, &h->tab_enc);
}

/* The walk of .eh_frame (FDE starts marked in fdes), then the .eh_frame_hdr table. */
static int check_entries(Elf *elf, size_t shstrndx, const GElf_Shdr *sh, const uint8_t *sec,
			 size_t size, uint8_t *fdes)
{
	GElf_Shdr hsh;
	Elf_Scn *scn = NULL;
	Elf_Data *d;
	uint64_t off = 0;

	while (off < size) {
		struct cur k;
		uint32_t cid;
		uint8_t enc;
		bool z;

		if (!entry_at(sec, size, off, &k))
			return -EBADMSG;
		if (k.end == k.p) /* the zero terminator */
			break;
		if (!get_u32(&k, &cid))
			return -EBADMSG;
		if (cid == 0) {
			if (!check_cie(sec, size, off, &enc, &z))
				return -EBADMSG;
			off = (uint64_t)(k.end - sec);
		} else {
			fdes[off / 8] |= (uint8_t)(1u << (off % 8));
			if (!check_fde(sec, size, off, &off))
				return -EBADMSG;
		}
	}
	/*
	 * libdw looks FDEs up through the table of the .eh_frame_hdr section named before
	 * .eh_frame, whatever that section's type: every section of that name is checked.
	 */
	while ((scn = next_named(elf, shstrndx, scn, ".eh_frame_hdr", &hsh))) {
		struct cur k;
		struct hdr_head h;
		uint32_t cnt;

		d = elf_rawdata(scn, NULL);
		if (!d || !d->d_buf)
			return -EBADMSG;
		k = (struct cur){ d->d_buf, (const uint8_t *)d->d_buf + d->d_size };
		if (!get_hdr_head(&k, &h))
			return -EBADMSG;
		if (h.tab_enc != (DW_EH_PE_datarel | DW_EH_PE_sdata4))
			continue; /* libdw searches .eh_frame itself, as checked above */
		if (h.ver != 1 || h.cnt_enc != DW_EH_PE_udata4 || !skip_ptr(&k, h.ptr_enc) ||
		    !get_u32(&k, &cnt) || (uint64_t)cnt * 8 > (uint64_t)(k.end - k.p))
			return -EBADMSG;
		for (uint32_t i = 0; i < cnt; i++) {
			int32_t fde;

			memcpy(&fde, k.p + 8 * (size_t)i + 4, 4);
			/* datarel: from the start of .eh_frame_hdr; an FDE the walk checked */
			off = hsh.sh_addr + (uint64_t)(int64_t)fde - sh->sh_addr;
			if (off >= size || !(fdes[off / 8] & (1u << (off % 8))))
				return -EBADMSG;
		}
	}
	return 0;
}

/*
 * libdw takes a file's CFI from its first PT_GNU_EH_FRAME segment when it has one (not from
 * the sections): the header at that segment's file offset, and .eh_frame at the address its
 * eh_frame_ptr gives, read at that address's offset under the same segment's delta. Every such
 * segment must then be exactly the .eh_frame_hdr section checked here, with the search table
 * (libdw would otherwise walk .eh_frame with no end), pointing at the .eh_frame checked here.
 */
static int check_phdrs(Elf *elf, size_t shstrndx, const GElf_Shdr *eh)
{
	GElf_Shdr hsh;
	Elf_Scn *hscn = NULL;
	Elf_Data *d = NULL;
	size_t n;

	if (elf_getphdrnum(elf, &n) != 0)
		return -EBADMSG;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;
		struct cur k;
		struct hdr_head h;
		uint64_t ptr;

		if (!gelf_getphdr(elf, (int)i, &ph))
			return -EBADMSG;
		if (ph.p_type != PT_GNU_EH_FRAME)
			continue;
		if (!hscn) {
			hscn = section(elf, shstrndx, ".eh_frame_hdr", &hsh);
			if (!hscn || hsh.sh_type != SHT_PROGBITS ||
			    !(d = elf_rawdata(hscn, NULL)) || !d->d_buf || d->d_size != hsh.sh_size)
				return -EBADMSG;
		}
		if (ph.p_offset != hsh.sh_offset || ph.p_vaddr != hsh.sh_addr ||
		    ph.p_filesz != hsh.sh_size ||
		    eh->sh_addr - eh->sh_offset != hsh.sh_addr - hsh.sh_offset)
			return -EBADMSG;
		k = (struct cur){ d->d_buf, (const uint8_t *)d->d_buf + d->d_size };
		if (!get_hdr_head(&k, &h) || h.ver != 1 ||
		    h.tab_enc != (DW_EH_PE_datarel | DW_EH_PE_sdata4))
			return -EBADMSG;
		if (h.ptr_enc == (DW_EH_PE_pcrel | DW_EH_PE_sdata4)) {
			uint32_t v;

			if (!get_u32(&k, &v))
				return -EBADMSG;
			ptr = hsh.sh_addr + 4 + (uint64_t)(int64_t)(int32_t)v;
		} else if (h.ptr_enc == DW_EH_PE_absptr || h.ptr_enc == DW_EH_PE_udata8) {
			const uint8_t *b;

			if (!get_bytes(&k, 8, &b))
				return -EBADMSG;
			memcpy(&ptr, b, 8);
		} else {
			return -EBADMSG;
		}
		if (ptr != eh->sh_addr)
			return -EBADMSG;
	}
	return 0;
}

/* 0 when libdw may run this file's CFI, else -EBADMSG (or -ENOENT: no .eh_frame). */
static int check_eh_frame(Elf *elf)
{
	GElf_Shdr sh;
	Elf_Scn *scn;
	Elf_Data *d;
	const uint8_t *sec;
	const char *id;
	size_t shstrndx, size, idlen;
	uint8_t *fdes; /* a bit per byte of .eh_frame: an FDE checked starts there */
	int rv;

	id = elf_getident(elf, &idlen);
	if (!id || idlen < EI_NIDENT || id[EI_CLASS] != ELFCLASS64 || id[EI_DATA] != ELFDATA2LSB)
		return -EBADMSG;
	if (elf_getshdrstrndx(elf, &shstrndx) != 0)
		return -ENOENT;
	scn = section(elf, shstrndx, ".eh_frame", &sh);
	if (!scn || sh.sh_type != SHT_PROGBITS)
		return -ENOENT;
	d = elf_rawdata(scn, NULL);
	if (!d || !d->d_buf || d->d_size != sh.sh_size)
		return -EBADMSG;
	sec = d->d_buf;
	size = d->d_size;
	fdes = calloc(size / 8 + 1, 1);
	if (!fdes)
		return -ENOMEM;
	rv = check_entries(elf, shstrndx, &sh, sec, size, fdes);
	free(fdes);
	return rv ? rv : check_phdrs(elf, shstrndx, &sh);
}

static int finish(struct elfcfi *c, struct elfcfi **out)
{
	int rv;

	if (!c->elf || elf_kind(c->elf) != ELF_K_ELF) {
		elfcfi_free(c);
		return -ENOEXEC;
	}
	rv = check_eh_frame(c->elf);
	if (rv != 0) {
		elfcfi_free(c);
		return rv;
	}
	c->cfi = dwarf_getcfi_elf(c->elf);
	if (!c->cfi) {
		elfcfi_free(c);
		return -ENOENT;
	}
	*out = c;
	return 0;
}

int elfcfi_load_fd(int fd, struct elfcfi **out)
{
	struct elfcfi *c = calloc(1, sizeof(*c));

	if (!c)
		return -ENOMEM;
	elf_version(EV_CURRENT);
	c->fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (c->fd < 0) {
		int e = -errno;

		free(c);
		return e;
	}
	c->elf = elf_begin(c->fd, ELF_C_READ_MMAP, NULL);
	return finish(c, out);
}

int elfcfi_load_mem(const void *image, size_t size, struct elfcfi **out)
{
	struct elfcfi *c = calloc(1, sizeof(*c));

	if (!c)
		return -ENOMEM;
	elf_version(EV_CURRENT);
	c->fd = -1;
	c->image = malloc(size);
	if (!c->image) {
		free(c);
		return -ENOMEM;
	}
	memcpy(c->image, image, size);
	c->elf = elf_memory(c->image, size);
	return finish(c, out);
}

void elfcfi_free(struct elfcfi *c)
{
	if (!c)
		return;
	if (c->cfi)
		dwarf_cfi_end(c->cfi);
	if (c->elf)
		elf_end(c->elf);
	if (c->fd >= 0)
		close(c->fd);
	free(c->image);
	free(c);
}

struct eval {
	const struct elfcfi_regs *r;
	elfcfi_read_fn read;
	void *arg;
	uint64_t cfa;
	bool has_cfa;
};

static bool reg_value(const struct eval *e, uint64_t reg, uint64_t *v)
{
	switch (reg) {
	case REG_RSP:
		*v = e->r->sp;
		return true;
	case REG_RBP:
		*v = e->r->fp;
		return true;
	case REG_RIP:
		*v = e->r->pc;
		return true;
	default:
		return false;
	}
}

/* A binary operator of the DWARF stack machine: a (pushed first) op b. */
static uint64_t binop(uint8_t at, uint64_t a, uint64_t b)
{
	switch (at) {
	case DW_OP_plus:
		return a + b;
	case DW_OP_minus:
		return a - b;
	case DW_OP_and:
		return a & b;
	case DW_OP_or:
		return a | b;
	case DW_OP_shl:
		return b < 64 ? a << b : 0;
	case DW_OP_shr:
		return b < 64 ? a >> b : 0;
	case DW_OP_ge:
		return (int64_t)a >= (int64_t)b;
	case DW_OP_gt:
		return (int64_t)a > (int64_t)b;
	case DW_OP_le:
		return (int64_t)a <= (int64_t)b;
	case DW_OP_lt:
		return (int64_t)a < (int64_t)b;
	case DW_OP_eq:
		return a == b;
	default: /* DW_OP_ne */
		return a != b;
	}
}

/* step()'s stack: st[0..*sp), at most STACK_MAX deep; over- and underflow are -ENOTSUP. */
#define PUSH(v)                                                                                    \
	do {                                                                                       \
		if (*sp == STACK_MAX)                                                              \
			return -ENOTSUP;                                                           \
		st[(*sp)++] = (v);                                                                 \
	} while (0)
#define POP(v)                                                                                     \
	do {                                                                                       \
		if (*sp == 0)                                                                      \
			return -ENOTSUP;                                                           \
		(v) = st[--(*sp)];                                                                 \
	} while (0)

/* One operation of the DWARF stack machine on st[0..*sp). 0 or -ENOTSUP/-EFAULT. */
static int step(const struct eval *e, const Dwarf_Op *op, uint64_t *st, size_t *sp, bool *is_value)
{
	uint8_t at = op->atom;
	uint64_t a, b;

	if (at >= DW_OP_lit0 && at <= DW_OP_lit31) {
		PUSH((uint64_t)(at - DW_OP_lit0));
	} else if (at >= DW_OP_breg0 && at <= DW_OP_breg31) {
		if (!reg_value(e, (uint64_t)(at - DW_OP_breg0), &a))
			return -ENOTSUP;
		PUSH(a + op->number);
	} else {
		switch (at) {
		case DW_OP_bregx:
			if (!reg_value(e, op->number, &a))
				return -ENOTSUP;
			PUSH(a + op->number2);
			break;
		case DW_OP_call_frame_cfa:
			if (!e->has_cfa)
				return -ENOTSUP;
			PUSH(e->cfa);
			break;
		case DW_OP_const1u:
		case DW_OP_const2u:
		case DW_OP_const4u:
		case DW_OP_const8u:
		case DW_OP_constu:
		case DW_OP_const1s:
		case DW_OP_const2s:
		case DW_OP_const4s:
		case DW_OP_const8s:
		case DW_OP_consts:
			PUSH(op->number);
			break;
		case DW_OP_plus_uconst:
			POP(a);
			PUSH(a + op->number);
			break;
		case DW_OP_deref:
			POP(a);
			if (!e->read(e->arg, a, &b))
				return -EFAULT;
			PUSH(b);
			break;
		case DW_OP_stack_value:
			*is_value = true;
			break;
		case DW_OP_plus:
		case DW_OP_minus:
		case DW_OP_and:
		case DW_OP_or:
		case DW_OP_shl:
		case DW_OP_shr:
		case DW_OP_ge:
		case DW_OP_gt:
		case DW_OP_le:
		case DW_OP_lt:
		case DW_OP_eq:
		case DW_OP_ne:
			POP(b);
			POP(a);
			PUSH(binop(at, a, b));
			break;
		default:
			return -ENOTSUP;
		}
	}
#undef PUSH
#undef POP
	return 0;
}

/* Evaluate ops; *is_value says DW_OP_stack_value ended it (else the result is a location). */
static int run(const struct eval *e, const Dwarf_Op *ops, size_t n, uint64_t *res, bool *is_value)
{
	uint64_t st[STACK_MAX];
	size_t sp = 0;
	int rv;

	*is_value = false;
	for (size_t i = 0; i < n; i++)
		if ((rv = step(e, &ops[i], st, &sp, is_value)) != 0)
			return rv;
	if (sp == 0)
		return -ENOTSUP;
	*res = st[sp - 1];
	return 0;
}

/* Register regno of the caller: its value, kept (same value), or -ENODATA when undefined. */
static int caller_reg(Dwarf_Frame *fr, const struct eval *e, int regno, uint64_t same,
		      uint64_t *out)
{
	Dwarf_Op mem[3], *ops = NULL;
	size_t n = 0;
	uint64_t v;
	bool is_value;
	int rv;

	if (dwarf_frame_register(fr, regno, mem, &ops, &n) != 0)
		return -ENOTSUP;
	if (n == 0) {
		if (ops == NULL)
			return -ENODATA; /* undefined */
		*out = same;
		return 0;
	}
	if ((rv = run(e, ops, n, &v, &is_value)) != 0)
		return rv;
	if (is_value) {
		*out = v;
		return 0;
	}
	return e->read(e->arg, v, out) ? 0 : -EFAULT;
}

/* An offset(N) rule as libdw writes it: DW_OP_call_frame_cfa [DW_OP_plus_uconst N]. */
static bool cfa_offset(const Dwarf_Op *ops, size_t n, int32_t *off)
{
	if (n == 1 && ops[0].atom == DW_OP_call_frame_cfa) {
		*off = 0;
		return true;
	}
	if (n == 2 && ops[0].atom == DW_OP_call_frame_cfa && ops[1].atom == DW_OP_plus_uconst &&
	    (int64_t)ops[1].number >= INT32_MIN && (int64_t)ops[1].number <= INT32_MAX) {
		*off = (int32_t)(int64_t)ops[1].number;
		return true;
	}
	return false;
}

/* Remember the rules of fr at vaddr when they have the simple shape. */
static void remember(struct elfcfi *c, Dwarf_Frame *fr, int ra, uint64_t vaddr)
{
	struct rule r = { .vaddr = vaddr + 1 };
	Dwarf_Op mem[3], *ops = NULL, *cops;
	size_t n = 0, cn;

	if (dwarf_frame_cfa(fr, &cops, &cn) != 0 || cn != 1 || cops[0].atom != DW_OP_bregx ||
	    (cops[0].number != REG_RSP && cops[0].number != REG_RBP) ||
	    (int64_t)cops[0].number2 < INT32_MIN || (int64_t)cops[0].number2 > INT32_MAX)
		return;
	r.cfa_reg = (uint8_t)cops[0].number;
	r.cfa_off = (int32_t)(int64_t)cops[0].number2;
	if (dwarf_frame_register(fr, ra, mem, &ops, &n) != 0 || !cfa_offset(ops, n, &r.ra_off))
		return;
	ops = NULL;
	n = 0;
	if (dwarf_frame_register(fr, REG_RBP, mem, &ops, &n) != 0)
		return;
	if (n != 0) {
		if (!cfa_offset(ops, n, &r.fp_off))
			return;
		r.fp_saved = 1;
	}
	c->rules[vaddr % RULES] = r;
}

/* A step by a cached rule: 0, -EFAULT, -ENODATA, or 1 when vaddr has none cached. */
static int cached_step(const struct elfcfi *c, uint64_t vaddr, const struct elfcfi_regs *in,
		       elfcfi_read_fn read, void *arg, struct elfcfi_regs *out)
{
	const struct rule *r = &c->rules[vaddr % RULES];
	uint64_t cfa;

	if (r->vaddr != vaddr + 1)
		return 1;
	cfa = (r->cfa_reg == REG_RSP ? in->sp : in->fp) + (uint64_t)(int64_t)r->cfa_off;
	if (!read(arg, cfa + (uint64_t)(int64_t)r->ra_off, &out->pc))
		return -EFAULT;
	if (out->pc == 0)
		return -ENODATA;
	out->fp = in->fp;
	if (r->fp_saved && !read(arg, cfa + (uint64_t)(int64_t)r->fp_off, &out->fp))
		return -EFAULT;
	out->sp = cfa;
	return 0;
}

int elfcfi_step(struct elfcfi *c, uint64_t vaddr, const struct elfcfi_regs *in, elfcfi_read_fn read,
		void *arg, struct elfcfi_regs *out)
{
	struct eval e = { in, read, arg, 0, false };
	Dwarf_Frame *fr = NULL;
	Dwarf_Op *ops;
	size_t n;
	bool is_value;
	int ra, rv;

	if ((rv = cached_step(c, vaddr, in, read, arg, out)) <= 0)
		return rv;
	if (dwarf_cfi_addrframe(c->cfi, vaddr, &fr) != 0)
		return -ENOENT;
	ra = dwarf_frame_info(fr, NULL, NULL, NULL);
	if (ra < 0 || dwarf_frame_cfa(fr, &ops, &n) != 0 || n == 0) {
		rv = -ENOTSUP;
		goto out;
	}
	if ((rv = run(&e, ops, n, &e.cfa, &is_value)) != 0)
		goto out;
	e.has_cfa = true;
	/* A return address that is undefined, or "the same value" (glibc's clone3 child marks
	 * rip so), means there is no caller. */
	if ((rv = caller_reg(fr, &e, ra, 0, &out->pc)) != 0)
		goto out;
	if (out->pc == 0) {
		rv = -ENODATA;
		goto out;
	}
	/* rbp is callee-saved (SysV ABI): a rule libdw reports as undefined is, in .eh_frame,
	 * one the compiler did not write because the function leaves rbp alone. */
	if ((rv = caller_reg(fr, &e, REG_RBP, in->fp, &out->fp)) == -ENODATA) {
		out->fp = in->fp;
		rv = 0;
	}
	out->sp = e.cfa;
	if (ra == REG_RIP)
		remember(c, fr, ra, vaddr);
out:
	free(fr);
	return rv;
}
