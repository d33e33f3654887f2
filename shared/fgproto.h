/* SPDX-License-Identifier: MIT */
/*
 * fgproto.h - the wire format between libfgagent.so (in the JVM) and fgcollect (on the host).
 *
 * Pure encode/decode on byte arrays: no nng, no JVMTI, no allocation, no I/O. Both binaries
 * compile this file; the decoder is the collector's first line of defence against a rogue or
 * buggy peer, so it never reads out of bounds on any input and validates every field.
 *
 * One nng message = message header + zero or more records, all integers little-endian:
 *
 *   message header (8 bytes):  u8 magic[4] = "FGCP" | u16 version = 1 | u16 header size = 8
 *   record header  (8 bytes):  u16 type | u16 flags | u32 size (whole record, header included)
 *
 * A reader skips records of unknown type by their size, so new record types do not break old
 * collectors. A record whose size is sane but whose body is invalid is skipped and reported
 * (-EBADMSG) while the reader stays in sync; a record whose size runs past the message ends it.
 *
 * Strings are u16 length + bytes, no terminator, at most FGP_MAX_STR bytes, and never contain a
 * byte < 0x20 or 0x7f (so a name can never break a line of a perf map). Encoders replace such
 * bytes with '?' and truncate to FGP_MAX_STR; decoders refuse them.
 *
 * Timestamps are CLOCK_MONOTONIC nanoseconds, the clock perf_event_open stamps samples with
 * (attr.use_clockid), so samples and code events order exactly.
 *
 * Record bodies: each record's fields, in wire order, are its FGP_<TYPE>_FIELDS table below,
 * from which both sides put, size and decode it; what follows the fields of a record that goes
 * on (a string table, a pc table, tags) is said beside its table.
 *
 * Tables on demand (FGP_HELLO_TABLES_ON_DEMAND): an agent that says so in its HELLO sends a
 * compiled method's inline table, CODE_FRAME and CODE_LINES only while its collector asks for
 * them (fgsocket.h: the want file, which names the agent by the HELLO's token); otherwise its
 * CODE_LOADs carry no inline table (n_methods 0, n_pcs 0) and neither record follows. When
 * asked, the agent turns its tables on and announces every live compiled method again, with
 * its tables, as a CODE_LOAD flagged FGP_REC_AGAIN (with its CODE_FRAME and CODE_LINES keyed
 * by that load's ts): a collector that has a live blob of the same range and name takes the
 * tables for that blob, which keeps its load time (older collectors take it as a load at a
 * reused address); then it sends TABLES with on = 1: from that record on, every
 * compiled method the collector knows has its tables and every later one will. TABLES with
 * on = 0 says later loads come without them again (tables already sent stay valid). A new
 * connection starts with the tables off: a TABLES with on = 1 follows if and when its
 * collector asks. An agent without the flag always sends every table; the token is 0 when the
 * agent has none.
 * CODE_LINES: source lines of the code announced by the CODE_LOAD (or CODE_LOAD_IDS) with the
 * same addr, size and ts (the load's timestamp: lines never attach to another blob that reused
 * the address), computed by the agent at compile time from each pc's (method, bci) chain and the
 * methods' line number tables. An agent sends it right after that load (after its CODE_FRAME),
 * and again with every replay of it; a collector attaches it to the blob at addr loaded at ts and
 * ignores it when there is none. Its line table is
 *
 *   n_pcs x { u32 pc_off | u16 depth | depth x u16 line }
 *
 * with the pc semantics of the inline table below (entry i covers (pc_off[i-1], pc_off[i]]),
 * pc_off strictly increasing and <= size, depth 1..FGP_MAX_INLINE_DEPTH, lines innermost first
 * (line[0] the line in the method whose code is at that pc, line[depth-1] the call site in the
 * outermost method), 0 where the method has no line for that bci. Its depth equals the inline
 * chain's at the same pc, whose entries it refines (an agent folds entries only where chain and
 * lines both repeat). n_pcs is 1..FGP_MAX_INLINE_PCS. FGP_REC_INLINE_TRUNCATED: the agent cut
 * chains deeper than FGP_MAX_INLINE_DEPTH (innermost kept, as in the inline table).
 *
 * CODE_FRAME: how to unwind through the code announced by the CODE_LOAD (or CODE_LOAD_IDS) or
 * DYNAMIC_CODE record
 * at the same addr, read by the agent from the HotSpot CodeBlob that contains it (VMStructs).
 * An agent sends it right after that record, and again with every replay of it; a collector
 * attaches it to the live blob starting at addr and ignores it when there is none. All
 * addresses are absolute; offsets are in bytes:
 *   kind           enum fgp_cf_kind (the CodeBlob's kind; FGP_CF_UNKNOWN when the JVM does not
 *                  say it);
 *   frame_size     the blob's frame, return address included (CodeBlob::_frame_size words x 8),
 *                  0 for code without a frame of its own;
 *   code_begin/size  the CodeBlob's whole code [code_begin, code_begin + code_size), which holds
 *                  addr and may be larger than the record's range (an nmethod's stub section,
 *                  the BufferBlob of a stub);
 *   frame_complete offset from code_begin of the first instruction after the prologue
 *                  (CodeBlob::_frame_complete_offset), -1 when the JVM does not say;
 *   deopt/deopt_mh the nmethod's deoptimisation handlers (0: none); a return address equal to
 *                  one of them means the frame was deoptimised, and its real pc is the word at
 *                  sp + orig_pc_offset (nmethod::_orig_pc_offset) of that frame.
 * The decoder checks addr lies in the code, frame_size is a multiple of 8 up to
 * FGP_CF_MAX_FRAME, frame_complete <= code_size, the handlers lie in the code, and
 * orig_pc_offset is a multiple of 8 inside the frame when a handler is given.
 *
 * Events on demand (FGP_HELLO_EVENTS; fgsocket.h: the want file's "events" lines): an agent that
 * says so in its HELLO samples allocations, tracks the sampled objects that stay live and times
 * contended monitor entries only while its collector asks, and says what it does in EVENTS
 * records: one whenever the set turns (on = 0 when all are off), and one at most every second
 * while any is on and its drop counters moved. The counters are cumulative since the agent
 * started: dropped_queue counts events lost to a full queue, dropped_other events lost for any
 * other cause (no stack, no name, the live set full); lock_short and lock_short_ns count the
 * contended entries shorter than the lock threshold and the time they waited.
 * STACK_EVENT: one event on one Java thread, at ts. tid is the thread's id as the agent sees it
 * (gettid() inside the JVM's PID namespace: a collector maps it to the host's tid itself, by the
 * NSpid lines of the kernel-verified JVM's tasks). kind is enum fgp_ev_kind:
 *   FGP_EV_ALLOC  one object sampled by JVMTI SampledObjectAlloc: value = its size in bytes,
 *                 interval = the mean sampling interval in bytes it was sampled with (> 0; the
 *                 reader weighs the sample: it stands for value / p bytes and 1 / p objects,
 *                 p = 1 - exp(-value / interval)), tag = non-zero when the agent tracks the
 *                 object for the live profile (unique for the agent's life; an OBJECT_FREE
 *                 names it when the JVM frees it), class = the allocated class as Java writes
 *                 it ("byte[]", "java.lang.String", "java.util.HashMap$Node[]");
 *   FGP_EV_LOCK   one contended monitor entry (MonitorContendedEnter to ...Entered): value = the
 *                 nanoseconds waited (>= the lock threshold), interval = that threshold in ns
 *                 (waits below it are not sent, only counted in EVENTS' lock_short and
 *                 lock_short_ns), tag = 0, class = the monitor object's class.
 *   FGP_EV_VWAIT  one wait of a virtual thread (JDK 21+), from its unmount to its next mount
 *                 (HotSpot's VirtualThreadUnmount/Mount extension events), at ts = the mount,
 *                 with the stack it unmounted at: value = the nanoseconds unmounted (> 0),
 *                 interval in units of FGP_VWAIT_ONE (>= FGP_VWAIT_ONE): the event stands for
 *                 value * interval / FGP_VWAIT_ONE ns, its own wait and the waits of its
 *                 thread's name group (the name with its digits folded) the agent counted
 *                 since that group's last event without taking their stacks (the events'
 *                 weights add up to the agent's exact total); depth 0: a group's time counted
 *                 whose stack could not be taken (value = that time; class = the name of one
 *                 of the group's threads, "java.lang.VirtualThread" for the unnamed ones'),
 *                 tag = the agent's counts
 *                 since the kind went on, as of
 *                 this event: bits 0..39 the mounts, bits 40..63 the virtual threads seen
 *                 (saturating), class = the virtual thread's name (its first 64 bytes;
 *                 "java.lang.VirtualThread" when it has none; with
 *                 FGP_EVM_VTID asked, "#ID" when it has none and depth > 0, ID its
 *                 Thread.threadId() in decimal); tid = the carrier's.
 *   FGP_EV_VMOUNT one mount of a virtual thread on its carrier (JDK 21+), sent at its unmount
 *                 (ts): value = the nanoseconds it was mounted (> 0: mounted from ts - value to
 *                 ts), tid = the carrier's, tag = the virtual thread's id (Thread.threadId(),
 *                 0 when unknown), interval = the nanoseconds of it the carrier was off the
 *                 CPU (<= value; pinned, or preempted; 0 when unknown), depth = 0, class = the
 *                 virtual thread's name
 *                 (its first 64 bytes; "java.lang.VirtualThread" when it has none). Sent only
 *                 to a collector that asks for FGP_EVM_VMOUNT (an older one's decoder refuses
 *                 the kind), and only with FGP_EVM_VTHREAD on; with FGP_EVM_VCPU on too, its
 *                 interval is 0 and no FGP_EV_VWAIT is sent.
 * frames are innermost first (frame 0 the allocating method, or the one entering the monitor),
 * method ids are NAME ids of this connection (the same names as CODE_LOAD_IDS'), line is the
 * frame's source line, 0 when unknown; depth 0..FGP_MAX_EVENT_DEPTH; FGP_REC_STACK_TRUNCATED:
 * the thread's stack was deeper than the agent's depth cap (the outermost frames are missing).
 * OBJECT_FREE: tags of tracked objects the JVM freed (ObjectFree), 1..FGP_MAX_FREE_TAGS of them.
 * ALLOC_COST: what allocation sampling cost the JVM since alloc went on at its present ask (a
 * new ask starts the counts over), sent about once a second while alloc is on: samples = the
 * SampledObjectAlloc callbacks, cost_ns = their own CPU time (each thread's CPU clock, timed on
 * a fixed share of the callbacks and scaled to all), cpu_ns = the JVM's CPU time over the same
 * span (the process's CPU clock). A collector that does not know the type skips it.
 * Events are never replayed (FGP_REC_REPLAY is not set on them: the decoder refuses any header
 * flag on OBJECT_FREE and EVENTS, and any but FGP_REC_STACK_TRUNCATED on STACK_EVENT); after a
 * reconnection the agent's tags of the earlier connection may still be freed: a reader ignores
 * tags it does not know.
 *
 * Interned names (NAME, CODE_LOAD_IDS): a method name is sent once per connection as a NAME
 * record giving it an id (non-zero, chosen by the agent), then referenced by id. A connection
 * starts with no ids: after a reconnection every id is defined again before its first use.
 * A CODE_LOAD_IDS is a CODE_LOAD whose name and inline method names are ids; its inline table is
 *
 *   u16 n_methods | n_methods x u32 id     | u32 n_pcs | pcs exactly as in CODE_LOAD
 *
 * The decoder checks the shape (ids non-zero, chains in range); resolving the ids, and refusing a
 * record that names an id not defined on its connection, is the reader's job (the collector caps
 * the ids it keeps per connection at FGP_MAX_NAMES). An agent sends interned records only to a
 * collector that says it reads them (fgsocket.h: the features file beside the socket); a reader
 * that does not know these types skips them by size, as with any unknown type.
 *
 * VM_LAYOUT tells the collector how to read this JVM's metadata from outside (HotSpot's
 * VMStructs, plus what VMStructs does not export, e.g. interpreter frame slots). Keys are
 * enum fgp_vml_key; a decoder ignores keys it does not know (so later agents can add keys) and
 * refuses a key given twice; a key the agent could not find is simply absent, and caps says
 * which features the agent trusts. The agent sends it right after HELLO on every connection.
 *
 * HELLO alone may grow at its end: optional trailing fields, each added by a later agent. A
 * decoder reads the optional fields it knows (FGP_HELLO_OPTIONAL) when they are present (a
 * string when any byte is left, an integer when all its bytes are; an older agent sends none:
 * they decode as empty) and ignores any bytes after them (fields of a newer agent). Every other
 * known record must be exactly as long as its body. (Decoders before the service field refused
 * any trailing byte in HELLO too.)
 *
 * Inline table of a CODE_LOAD (from JVMTI_CMLR_INLINE_INFO):
 *
 *   u16 n_methods | n_methods x str        method names referenced by index below
 *   u32 n_pcs     | n_pcs x { u32 pc_off | u16 depth | depth x u16 method index }
 *
 * pc_off is relative to addr, <= size, non-decreasing. Entry i describes the addresses in
 * (addr + pc_off[i-1], addr + pc_off[i]] (HotSpot's pc_desc_containing: a return address equals
 * a pc_off exactly). Its chain lists method indexes innermost first: chain[0] is the method whose
 * code is at that pc, chain[depth-1] the outermost (normally the compiled method itself).
 * depth is 1..FGP_MAX_INLINE_DEPTH.
 */
#ifndef FG_PROTO_H
#define FG_PROTO_H

#include <stddef.h>
#include <stdint.h>

#include "fgle.h"

#define FGP_VERSION 1
#define FGP_MSG_HEADER_SIZE 8
#define FGP_REC_HEADER_SIZE 8

/* Limits every decoder enforces; the collector also caps whole messages at FGP_MAX_MSG. */
#define FGP_MAX_MSG (1u << 20)
#define FGP_MAX_RECORD (512u << 10)
#define FGP_MAX_STR 4096u
#define FGP_MAX_INLINE_METHODS 4096u
#define FGP_MAX_INLINE_PCS 65536u
#define FGP_MAX_INLINE_DEPTH 64u
#define FGP_MAX_NAMES (1u << 20) /* interned names a collector keeps per connection */

enum fgp_type {
	FGP_HELLO = 1,
	FGP_CODE_LOAD = 2,
	FGP_CODE_UNLOAD = 3,
	FGP_DYNAMIC_CODE = 4,
	FGP_SNAPSHOT_BEGIN = 5,
	FGP_SNAPSHOT_END = 6,
	FGP_DROPPED = 7,
	FGP_NAME = 8,
	FGP_VM_LAYOUT = 9,
	FGP_CODE_LINES = 10,
	FGP_CODE_FRAME = 15,
	FGP_CODE_LOAD_IDS = 11,
	FGP_TABLES = 12,
	FGP_STACK_EVENT = 16,
	FGP_OBJECT_FREE = 17,
	FGP_EVENTS = 18,
	FGP_ALLOC_COST = 19,
};

/*
 * ---- the records' fields ----------------------------------------------------------------
 *
 * FGP_<TYPE>_FIELDS(X) lists one record body's fields in wire order as X(kind, member), member
 * naming the field of the record's structs below (encoder input and decoded record alike):
 *   U16, U32, U64  an unsigned integer, little-endian
 *   I32            an int32_t, two's complement in a u32
 *   STR            a struct fgp_str: u16 length + that many bytes (see Strings above)
 *   PAD32          a reserved u32: written 0, ignored when read
 *   ZERO32         a reserved u32: written 0, and the record refused when it is not
 * FGP_FIELDS_BYTES(FIELDS) is the size of a body made of fixed-size fields only.
 */

/* The agent's hello; then FGP_HELLO_OPTIONAL, then any fields of later versions. */
#define FGP_HELLO_FIELDS(X)                                                                        \
	X(U32, proto_version)                                                                      \
	X(U32, pid)   /* as the agent sees it */                                                   \
	X(U32, flags) /* FGP_HELLO_* */                                                            \
	X(PAD32, reserved)                                                                         \
	X(U64, ts)                                                                                 \
	X(STR, jvm_version)                                                                        \
	X(STR, agent_version)
/* HELLO's optional trailing fields, each read only when the record holds it (see below). */
#define FGP_HELLO_OPTIONAL(X)                                                                      \
	X(STR, service)                                                                            \
	X(U64, token)

/* CODE_LOAD: then its inline table (below). */
#define FGP_CODE_LOAD_FIELDS(X)                                                                    \
	X(U64, addr)                                                                               \
	X(U32, size)                                                                               \
	X(PAD32, reserved)                                                                         \
	X(U64, ts)                                                                                 \
	X(STR, name)

/* CODE_LOAD_IDS: then its interned inline table (below). */
#define FGP_CODE_LOAD_IDS_FIELDS(X)                                                                \
	X(U64, addr)                                                                               \
	X(U32, size)                                                                               \
	X(U32, name_id)                                                                            \
	X(U64, ts)

#define FGP_CODE_UNLOAD_FIELDS(X)                                                                  \
	X(U64, addr)                                                                               \
	X(U64, ts)

#define FGP_DYNAMIC_CODE_FIELDS(X)                                                                 \
	X(U64, addr)                                                                               \
	X(U32, size)                                                                               \
	X(PAD32, reserved)                                                                         \
	X(U64, ts)                                                                                 \
	X(STR, name)

/* SNAPSHOT_BEGIN and SNAPSHOT_END. */
#define FGP_SNAPSHOT_FIELDS(X)                                                                     \
	X(U64, ts)                                                                                 \
	X(U32, count)                                                                              \
	X(PAD32, reserved)

/* Counts cumulative since the agent started. */
#define FGP_DROPPED_FIELDS(X)                                                                      \
	X(U64, ts)                                                                                 \
	X(U64, queue_full)                                                                         \
	X(U64, table_full)

/* VM_LAYOUT: then u32 n | n x { u16 key | u16 0 | u32 value }. */
#define FGP_VM_LAYOUT_FIELDS(X) X(U32, caps) /* FGP_VML_CAP_* */

#define FGP_NAME_FIELDS(X)                                                                         \
	X(U32, id)                                                                                 \
	X(PAD32, reserved)                                                                         \
	X(STR, name)

#define FGP_CODE_FRAME_FIELDS(X)                                                                   \
	X(U64, addr)                                                                               \
	X(U16, kind)                                                                               \
	X(U16, flags)                                                                              \
	X(U32, frame_size)                                                                         \
	X(U64, code_begin)                                                                         \
	X(U32, code_size)                                                                          \
	X(I32, frame_complete)                                                                     \
	X(U64, deopt)                                                                              \
	X(U64, deopt_mh)                                                                           \
	X(I32, orig_pc_offset)                                                                     \
	X(ZERO32, reserved)

/* CODE_LINES: then its line table (below). */
#define FGP_CODE_LINES_FIELDS(X)                                                                   \
	X(U64, addr)                                                                               \
	X(U32, size)                                                                               \
	X(U32, n_pcs)                                                                              \
	X(U64, ts)

#define FGP_TABLES_FIELDS(X)                                                                       \
	X(U64, ts)                                                                                 \
	X(U32, on)                                                                                 \
	X(PAD32, reserved)

/* STACK_EVENT: then depth x { u32 method id | i32 line }. */
#define FGP_STACK_EVENT_FIELDS(X)                                                                  \
	X(U64, ts)                                                                                 \
	X(U32, tid)                                                                                \
	X(U16, kind)                                                                               \
	X(U16, depth)                                                                              \
	X(U64, value)                                                                              \
	X(U64, interval)                                                                           \
	X(U64, tag)                                                                                \
	X(STR, cls)

/* OBJECT_FREE: then n x u64 tag. */
#define FGP_OBJECT_FREE_FIELDS(X)                                                                  \
	X(U32, n)                                                                                  \
	X(PAD32, reserved)

#define FGP_EVENTS_FIELDS(X)                                                                       \
	X(U64, ts)                                                                                 \
	X(U32, on) /* FGP_EVM_* */                                                                 \
	X(PAD32, reserved)                                                                         \
	X(U64, alloc_interval)                                                                     \
	X(U64, lock_threshold_ns)                                                                  \
	X(U64, dropped_queue)                                                                      \
	X(U64, dropped_other)                                                                      \
	X(U64, lock_short)                                                                         \
	X(U64, lock_short_ns)

#define FGP_ALLOC_COST_FIELDS(X)                                                                   \
	X(U64, ts)                                                                                 \
	X(U64, samples)                                                                            \
	X(U64, cost_ns)                                                                            \
	X(U64, cpu_ns)

#define FGP_BYTES_U16 2
#define FGP_BYTES_U32 4
#define FGP_BYTES_U64 8
#define FGP_BYTES_I32 4
#define FGP_BYTES_PAD32 4
#define FGP_BYTES_ZERO32 4
#define FGP_FIELD_BYTES(kind, member) FGP_BYTES_##kind +
#define FGP_FIELDS_BYTES(FIELDS) (FIELDS(FGP_FIELD_BYTES) 0)

/*
 * Every record type, and its name for logs: X(type, name). A type here has a FIELDS table
 * above; a record of any other type is skipped by its size.
 */
#define FGP_TYPES(X)                                                                               \
	X(FGP_HELLO, "hello")                                                                      \
	X(FGP_CODE_LOAD, "code-load")                                                              \
	X(FGP_CODE_UNLOAD, "code-unload")                                                          \
	X(FGP_DYNAMIC_CODE, "dynamic-code")                                                        \
	X(FGP_SNAPSHOT_BEGIN, "snapshot-begin")                                                    \
	X(FGP_SNAPSHOT_END, "snapshot-end")                                                        \
	X(FGP_TABLES, "tables")                                                                    \
	X(FGP_DROPPED, "dropped")                                                                  \
	X(FGP_VM_LAYOUT, "vm-layout")                                                              \
	X(FGP_CODE_FRAME, "code-frame")                                                            \
	X(FGP_CODE_LINES, "code-lines")                                                            \
	X(FGP_NAME, "name")                                                                        \
	X(FGP_CODE_LOAD_IDS, "code-load-ids")                                                      \
	X(FGP_STACK_EVENT, "stack-event")                                                          \
	X(FGP_OBJECT_FREE, "object-free")                                                          \
	X(FGP_EVENTS, "events")                                                                    \
	X(FGP_ALLOC_COST, "alloc-cost")

/* STACK_EVENT kinds. */
enum fgp_ev_kind {
	FGP_EV_ALLOC = 1,
	FGP_EV_LOCK = 2,
	FGP_EV_VWAIT = 3,
	FGP_EV_VMOUNT = 4,
};

/* EVENTS' on: what the agent does from that record on. */
#define FGP_EVM_ALLOC (1u << 0)	  /* STACK_EVENT FGP_EV_ALLOC */
#define FGP_EVM_LIVE (1u << 1)	  /* tags on allocation samples, OBJECT_FREE */
#define FGP_EVM_LOCK (1u << 2)	  /* STACK_EVENT FGP_EV_LOCK */
#define FGP_EVM_VTHREAD (1u << 3) /* STACK_EVENT FGP_EV_VWAIT */
#define FGP_EVM_VMOUNT (1u << 4)  /* STACK_EVENT FGP_EV_VMOUNT (with FGP_EVM_VTHREAD) */
/* FGP_EV_VWAIT names an unnamed virtual thread "#ID" (its Thread.threadId()), not
 * "java.lang.VirtualThread" (with FGP_EVM_VTHREAD; asked by a collector that splits them). */
#define FGP_EVM_VTID (1u << 5)
/* The collector reads the agent's ring of allocation stack copies (shared/allocring.h): an agent
 * at allocstack=auto copies its allocation samples' stacks there (with FGP_EVM_ALLOC). */
#define FGP_EVM_RING (1u << 6)
/* The mounts alone, for a CPU profile (with FGP_EVM_VTHREAD and FGP_EVM_VMOUNT): no
 * FGP_EV_VWAIT, and FGP_EV_VMOUNT's interval 0 (the carrier's time off the CPU not counted).
 * An agent without the bit sends both; a collector that merges wants keeps it only when every
 * want of virtual threads has it. */
#define FGP_EVM_VCPU (1u << 7)
/* Allocation samples weighed by their thread's own bytes since its previous sample (with
 * FGP_EVM_ALLOC): STACK_EVENT FGP_REC_ALLOC_GAP, ring slots ALLOCRING_F_GAP. */
#define FGP_EVM_EXACT (1u << 8)
#define FGP_EVM_ALL                                                                                \
	(FGP_EVM_ALLOC | FGP_EVM_LIVE | FGP_EVM_LOCK | FGP_EVM_VTHREAD | FGP_EVM_VMOUNT |          \
	 FGP_EVM_VTID | FGP_EVM_RING | FGP_EVM_VCPU | FGP_EVM_EXACT)
/* FGP_EV_VWAIT's interval: 1 / the chance its wait was taken with, in these units. */
#define FGP_VWAIT_ONE 1000000u

#define FGP_MAX_EVENT_DEPTH 2048u
#define FGP_MAX_FREE_TAGS 4096u

/* CODE_FRAME kinds: HotSpot's CodeBlobKind (JDK 23+), named the same way. */
enum fgp_cf_kind {
	FGP_CF_UNKNOWN = 0,
	FGP_CF_NMETHOD = 1,
	FGP_CF_BUFFER = 2, /* BufferBlob: interpreter, StubRoutines, ... */
	FGP_CF_ADAPTER = 3,
	FGP_CF_VTABLE = 4,
	FGP_CF_MH_ADAPTER = 5,
	FGP_CF_RUNTIME_STUB = 6,
	FGP_CF_DEOPTIMIZATION = 7,
	FGP_CF_SAFEPOINT = 8,
	FGP_CF_EXCEPTION = 9,
	FGP_CF_UNCOMMON_TRAP = 10,
	FGP_CF_UPCALL = 11,
	FGP_CF_NKINDS = 12,
};

#define FGP_CF_MAX_FRAME (1u << 20) /* bytes; HotSpot refuses far smaller frames */
#define FGP_CODE_FRAME_SIZE (FGP_REC_HEADER_SIZE + FGP_FIELDS_BYTES(FGP_CODE_FRAME_FIELDS))

/* VM_LAYOUT: features the agent vouches for (every key they need is present and checked). */
#define FGP_VML_CAP_NAMES (1u << 0)	   /* Method* -> holder and method names */
#define FGP_VML_CAP_INTERP_FRAME (1u << 1) /* Method* and bcp slots of interpreter frames */
#define FGP_VML_CAP_LINES (1u << 2)	   /* compressed line number tables */
#define FGP_VML_CAP_GC_CLOCK (1u << 3)	   /* the agent's GC clock (see FGP_VML_GC_CLOCK_LO) */
#define FGP_VML_CAP_UNLOAD_EPOCH (1u << 4) /* the unloading count's slot (FGP_VML_UNLOAD_*) */
#define FGP_VML_CAP_ALLOC_RING (1u << 5)   /* allocation samples' stack copies (ALLOC_RING_*) */

/*
 * VM_LAYOUT keys. Offsets and sizes in bytes; slots in words relative to the frame pointer,
 * as int32 (two's complement) in the u32 value.
 */
enum fgp_vml_key {
	FGP_VML_JDK_MAJOR = 1,		   /* feature release, e.g. 17 */
	FGP_VML_METHOD_CONSTMETHOD = 2,	   /* Method::_constMethod */
	FGP_VML_CONSTMETHOD_CONSTANTS = 3, /* ConstMethod::_constants */
	FGP_VML_CONSTMETHOD_NAME_INDEX = 4,
	FGP_VML_CONSTMETHOD_SIGNATURE_INDEX = 5,
	FGP_VML_CONSTMETHOD_CODE_SIZE = 6,
	FGP_VML_CONSTMETHOD_IDNUM = 7,	     /* ConstMethod::_method_idnum */
	FGP_VML_CONSTMETHOD_SIZE = 8,	     /* sizeof(ConstMethod): bytecodes follow */
	FGP_VML_CONSTMETHOD_FLAGS = 9,	     /* ConstMethod::_flags (u2 or u4) */
	FGP_VML_CONSTMETHOD_FLAGS_SIZE = 10, /* 2 or 4 */
	FGP_VML_CONSTMETHOD_HAS_LINES = 11,  /* _flags bit: has a line number table */
	FGP_VML_CONSTPOOL_HOLDER = 12,	     /* ConstantPool::_pool_holder */
	FGP_VML_CONSTPOOL_SIZE = 13,	     /* sizeof(ConstantPool): the slots follow */
	FGP_VML_KLASS_NAME = 14,	     /* Klass::_name */
	FGP_VML_SYMBOL_LENGTH = 15,	     /* Symbol::_length (u2) */
	FGP_VML_SYMBOL_BODY = 16,	     /* Symbol::_body */
	FGP_VML_LINES_UNSIGNED5_X = 17,	     /* excluded low bytes of the line table code */
	FGP_VML_INTERP_METHOD_SLOT = 18,     /* Method* of an interpreter frame, fp + slot */
	FGP_VML_INTERP_BCP_SLOT = 19,	     /* bcp saved by an interpreter frame, fp + slot */
	/* Address (low and high 32 bits) in the JVM of the agent's GC clock: two u64
	 * CLOCK_MONOTONIC ns, when the last stop-the-world GC started and when it ended, updated
	 * by the agent's GarbageCollectionStart/Finish callbacks. Metadata read after a GC that
	 * started after a sample may have been unloaded and reused since that sample. */
	FGP_VML_GC_CLOCK_LO = 20,
	FGP_VML_GC_CLOCK_HI = 21,
	/* Address (low and high 32 bits) in the JVM of a u64 slot that holds 0 until the agent
	 * found the JVM's count of unloaded classes (PerfData java.cls.unloadedClasses), then that
	 * count's address (a jlong, 8-byte aligned). The count grows before class unloading frees
	 * any metadata and never otherwise: metadata read while it stayed what it was at a sample
	 * is what the sample saw. A collector without these keys, or a slot that stays 0, falls
	 * back on the GC clock. */
	FGP_VML_UNLOAD_SLOT_LO = 22,
	FGP_VML_UNLOAD_SLOT_HI = 23,
	/* The proof of an interpreter frame's slots: the ConstantPoolCache* it keeps (fp + slot)
	 * is its Method*'s ConstMethod::_constants->_cache. A collector with both keys names a
	 * frame only when the two agree; without them it trusts the slots as they are. */
	FGP_VML_CONSTPOOL_CACHE = 24,	/* ConstantPool::_cache */
	FGP_VML_INTERP_CACHE_SLOT = 25, /* ConstantPoolCache* of an interpreter frame, fp + slot */
	/* Address (low and high 32 bits) in the JVM and size in bytes of the agent's ring of
	 * allocation samples' stack copies (shared/allocring.h; agent option allocstack=copy).
	 * Nothing in it is trusted: its head and every slot are checked as allocring.h says. */
	FGP_VML_ALLOC_RING_LO = 26,
	FGP_VML_ALLOC_RING_HI = 27,
	FGP_VML_ALLOC_RING_SIZE = 28,
	FGP_VML_NKEYS = 29, /* keys below this are decoded */
};

#define FGP_VML_MAX_ENTRIES 1024u

/* HELLO flags: the JVM flags that decide what a profile can show. */
#define FGP_HELLO_PRESERVE_FRAME_POINTER (1u << 0)
#define FGP_HELLO_DEBUG_NON_SAFEPOINTS (1u << 1)
#define FGP_HELLO_SIGNATURES (1u << 2)	     /* names carry JVM signatures */
#define FGP_HELLO_TABLES_ON_DEMAND (1u << 3) /* tables only when asked (see TABLES above) */
#define FGP_HELLO_EVENTS (1u << 4)	     /* alloc, live and lock events when asked */
/* With FGP_HELLO_EVENTS, what this JVM does not offer (an agent without them says nothing):
 * no allocation samples (JVMTI SampledObjectAlloc, JDK 11+), so alloc and live stay off; no
 * monitor contention events, so lock stays off. */
#define FGP_HELLO_NO_ALLOC (1u << 5)
#define FGP_HELLO_NO_LOCK (1u << 6)

/* Record header flags. */
#define FGP_REC_REPLAY (1u << 0)	   /* part of a snapshot replay, not a new event */
#define FGP_REC_INLINE_TRUNCATED (1u << 1) /* the agent dropped inline info to fit limits */
/* CODE_LOAD, CODE_LINES: live code announced again (tables on demand, see TABLES above). */
#define FGP_REC_AGAIN (1u << 2)
/* STACK_EVENT: the stack was cut at the agent's depth cap (outermost frames missing). */
#define FGP_REC_STACK_TRUNCATED (1u << 3)
/*
 * STACK_EVENT FGP_EV_ALLOC (sent only to a collector that asks for FGP_EVM_EXACT): a u64 weight
 * follows the frames, the bytes the sample stands for: what its thread allocated since its
 * previous sample (HotSpot's own count), within allocring_gap_ok() of value and interval.
 */
#define FGP_REC_ALLOC_GAP (1u << 4)

/* A borrowed string: points into the decoded buffer (or the encoder's input), no terminator. */
struct fgp_str {
	const char *ptr;
	uint16_t len;
};

struct fgp_hello {
	uint32_t proto_version;
	uint32_t pid;
	uint32_t flags;
	uint64_t ts;
	struct fgp_str jvm_version;
	struct fgp_str agent_version;
	/* Optional (empty when absent): the service the JVM runs, for profile labels. */
	struct fgp_str service;
	/* Optional (0 when absent): the agent's random name in the want file (fgsocket.h). */
	uint64_t token;
};

/*
 * Inline info as an encoder takes it. methods[] are the names; pcs[i].chain holds depth method
 * indexes, innermost first. The encoder sorts nothing: pcs[] must be in non-decreasing pc_off.
 */
struct fgp_pc_in {
	uint32_t pc_off;
	uint16_t depth;
	const uint16_t *chain;
};

struct fgp_code_load_in {
	uint64_t addr;
	uint32_t size;
	uint64_t ts;
	uint16_t flags; /* FGP_REC_* */
	struct fgp_str name;
	uint16_t n_methods;
	const struct fgp_str *methods;
	uint32_t n_pcs;
	const struct fgp_pc_in *pcs;
};

/* A decoded CODE_LOAD: the inline table stays raw, already validated; walk it with the iterators.
 */
struct fgp_code_load {
	uint64_t addr;
	uint32_t size;
	uint64_t ts;
	struct fgp_str name; /* CODE_LOAD_IDS: empty until resolved */
	uint16_t n_methods;
	uint32_t n_pcs;
	const uint8_t *methods_raw; /* n_methods strings (CODE_LOAD) or u32 ids (CODE_LOAD_IDS) */
	const uint8_t *pcs_raw;	    /* n_pcs entries */
	size_t pcs_len;		    /* bytes of pcs_raw */
	uint32_t name_id;	    /* CODE_LOAD_IDS: the name's id; 0 for CODE_LOAD */
	/*
	 * Set by a reader that resolved a CODE_LOAD_IDS: n_methods names, walked by
	 * fgp_methods_next instead of methods_raw. NULL otherwise.
	 */
	const struct fgp_str *methods;
};

/* A NAME record: id defined as name on this connection. */
struct fgp_name {
	uint32_t id;
	struct fgp_str name;
};

/* A CODE_LOAD_IDS as an encoder takes it: the same as a CODE_LOAD with ids for names. */
struct fgp_code_load_ids_in {
	uint64_t addr;
	uint32_t size;
	uint64_t ts;
	uint16_t flags;
	uint32_t name_id;
	uint16_t n_methods;
	const uint32_t *method_ids;
	uint32_t n_pcs;
	const struct fgp_pc_in *pcs;
};

struct fgp_code_unload {
	uint64_t addr;
	uint64_t ts;
};

struct fgp_dynamic_code {
	uint64_t addr;
	uint32_t size;
	uint64_t ts;
	struct fgp_str name;
};

struct fgp_snapshot {
	uint64_t ts;
	uint32_t count;
};

/* TABLES: on = 1, every known compiled method has its tables from here on; 0, no more. */
struct fgp_tables {
	uint64_t ts;
	uint32_t on;
};

struct fgp_dropped {
	uint64_t ts;
	uint64_t queue_full;
	uint64_t table_full;
};

/*
 * A VM layout: val[k] is meaningful only when present has bit k. Encoders take the same struct
 * (keys present, in increasing order, are written).
 */
struct fgp_vm_layout {
	uint32_t caps;
	uint64_t present;
	uint32_t val[FGP_VML_NKEYS];
};

struct fgp_code_frame {
	uint64_t addr;
	uint16_t kind;	/* enum fgp_cf_kind */
	uint16_t flags; /* none defined: 0 */
	uint32_t frame_size;
	uint64_t code_begin;
	uint32_t code_size;
	int32_t frame_complete;
	uint64_t deopt, deopt_mh;
	int32_t orig_pc_offset;
};

/*
 * CODE_LINES as an encoder takes it: pcs[i].chain holds depth line numbers, innermost first,
 * pcs[] in strictly increasing pc_off.
 */
struct fgp_code_lines_in {
	uint64_t addr;
	uint32_t size;
	uint64_t ts;
	uint16_t flags; /* FGP_REC_* */
	uint32_t n_pcs;
	const struct fgp_pc_in *pcs;
};

/* A decoded CODE_LINES: the table stays raw, already validated; walk it with fgp_lines_begin. */
struct fgp_code_lines {
	uint64_t addr;
	uint32_t size;
	uint64_t ts;
	uint32_t n_pcs;
	const uint8_t *pcs_raw;
	size_t pcs_len;
};

/* A STACK_EVENT frame as an encoder takes it. */
struct fgp_frame_in {
	uint32_t method_id; /* a NAME id of the connection, non-zero */
	int32_t line;	    /* >= 0; 0 when unknown */
};

struct fgp_stack_event_in {
	uint64_t ts;
	uint32_t tid;
	uint16_t kind;	/* enum fgp_ev_kind */
	uint16_t flags; /* FGP_REC_STACK_TRUNCATED, FGP_REC_ALLOC_GAP or 0 */
	uint64_t value, interval, tag;
	struct fgp_str cls;
	uint16_t depth;
	const struct fgp_frame_in *frames; /* depth of them, innermost first */
	uint64_t weight;		   /* with FGP_REC_ALLOC_GAP */
};

/*
 * A decoded STACK_EVENT, validated: a known kind, ALLOC with value and interval > 0, LOCK with
 * value >= interval and tag 0, a non-empty class, depth <= FGP_MAX_EVENT_DEPTH, method ids
 * non-zero, lines >= 0. Its frames stay raw: read them with fgp_event_frame().
 */
struct fgp_stack_event {
	uint64_t ts;
	uint32_t tid;
	uint16_t kind;
	uint16_t depth;
	uint64_t value, interval, tag;
	struct fgp_str cls;
	const uint8_t *frames_raw; /* depth x 8 bytes */
	uint64_t weight;	   /* FGP_REC_ALLOC_GAP's bytes; 0: none (weighed by interval) */
};

static inline void fgp_event_frame(const struct fgp_stack_event *e, uint16_t i, uint32_t *id,
				   int32_t *line)
{
	*id = fgle_get32(e->frames_raw + 8 * (size_t)i);
	*line = (int32_t)fgle_get32(e->frames_raw + 8 * (size_t)i + 4);
}

/* A decoded OBJECT_FREE: n (1..FGP_MAX_FREE_TAGS) tags, read with fgp_free_tag(). */
struct fgp_object_free {
	uint32_t n;
	const uint8_t *tags_raw;
};

static inline uint64_t fgp_free_tag(const struct fgp_object_free *f, uint32_t i)
{
	return fgle_get64(f->tags_raw + 8 * (size_t)i);
}

/* EVENTS: the decoder refuses bits of on outside FGP_EVM_*, and ALLOC or LIVE on with an
 * alloc_interval of 0. */
struct fgp_events {
	uint64_t ts;
	uint32_t on; /* FGP_EVM_* */
	uint64_t alloc_interval, lock_threshold_ns;
	uint64_t dropped_queue, dropped_other;
	uint64_t lock_short, lock_short_ns;
};

/* ALLOC_COST (above): counts since alloc went on at its present ask. */
struct fgp_alloc_cost {
	uint64_t ts;
	uint64_t samples, cost_ns, cpu_ns;
};

struct fgp_record {
	uint16_t type;	/* enum fgp_type, or an unknown type (body not decoded) */
	uint16_t flags; /* FGP_REC_* */
	uint32_t size;	/* whole record, header included */
	union {
		struct fgp_hello hello;
		struct fgp_code_load load;
		struct fgp_code_unload unload;
		struct fgp_dynamic_code dyn;
		struct fgp_snapshot snap;
		struct fgp_dropped dropped;
		struct fgp_vm_layout layout;
		struct fgp_code_frame frame;
		struct fgp_name name;
		struct fgp_code_lines lines;
		struct fgp_tables tables;
		struct fgp_stack_event ev;
		struct fgp_object_free freed;
		struct fgp_events events;
		struct fgp_alloc_cost cost;
	} u;
};

/* ---- encoding -------------------------------------------------------------------------- */

/*
 * Each fgp_encode_* writes one record at dst (cap bytes available) and returns the number of
 * bytes written, or -ENOSPC if it does not fit (dst's bytes are then unspecified;
 * nothing past dst + cap is written), or -EINVAL for input
 * that cannot be encoded (a pc chain index >= n_methods, pcs out of order, depth 0 or too deep,
 * a record over FGP_MAX_RECORD). Strings are sanitised and truncated as described above.
 * fgp_*_size() returns the exact size the matching encode will write.
 */
size_t fgp_msg_header_size(void);
int fgp_encode_msg_header(uint8_t *dst, size_t cap);

size_t fgp_hello_size(const struct fgp_hello *h);
int fgp_encode_hello(uint8_t *dst, size_t cap, const struct fgp_hello *h);

size_t fgp_code_load_size(const struct fgp_code_load_in *c);
int fgp_encode_code_load(uint8_t *dst, size_t cap, const struct fgp_code_load_in *c);

int fgp_encode_code_unload(uint8_t *dst, size_t cap, const struct fgp_code_unload *u);

size_t fgp_dynamic_code_size(const struct fgp_dynamic_code *d);
int fgp_encode_dynamic_code(uint8_t *dst, size_t cap, const struct fgp_dynamic_code *d);

/* type is FGP_SNAPSHOT_BEGIN or FGP_SNAPSHOT_END. */
int fgp_encode_snapshot(uint8_t *dst, size_t cap, uint16_t type, const struct fgp_snapshot *s);

int fgp_encode_dropped(uint8_t *dst, size_t cap, const struct fgp_dropped *d);

/* TABLES: -EINVAL for on other than 0 or 1. */
int fgp_encode_tables(uint8_t *dst, size_t cap, const struct fgp_tables *t);

/* STACK_EVENT: -EINVAL for an event the decoder would refuse (see struct fgp_stack_event). */
size_t fgp_stack_event_size(const struct fgp_stack_event_in *e);
int fgp_encode_stack_event(uint8_t *dst, size_t cap, const struct fgp_stack_event_in *e);

/* OBJECT_FREE: -EINVAL for n of 0 or over FGP_MAX_FREE_TAGS. */
size_t fgp_object_free_size(uint32_t n);
int fgp_encode_object_free(uint8_t *dst, size_t cap, const uint64_t *tags, uint32_t n);

/* EVENTS: -EINVAL for one the decoder would refuse. */
int fgp_encode_events(uint8_t *dst, size_t cap, const struct fgp_events *e);
/* An ALLOC_COST record: FGP_ALLOC_COST_SIZE bytes, or -ENOSPC. */
int fgp_encode_alloc_cost(uint8_t *dst, size_t cap, const struct fgp_alloc_cost *e);

/* NAME: -EINVAL for id 0. */
size_t fgp_name_size(struct fgp_str name);
int fgp_encode_name(uint8_t *dst, size_t cap, uint32_t id, struct fgp_str name);

/* CODE_LOAD_IDS: -EINVAL also for a name id or method id 0. */
size_t fgp_code_load_ids_size(const struct fgp_code_load_ids_in *c);
int fgp_encode_code_load_ids(uint8_t *dst, size_t cap, const struct fgp_code_load_ids_in *c);

/*
 * A decoded load as a CODE_LOAD record with the given flags: a CODE_LOAD as it came, or a
 * CODE_LOAD_IDS whose reader resolved its name and methods (l->methods), for readers that pass
 * records on to tools that do not know the connection's ids. Bytes written, -ENOSPC, or -EINVAL
 * (an unresolved CODE_LOAD_IDS, or a record over FGP_MAX_RECORD).
 */
int fgp_encode_code_load_resolved(uint8_t *dst, size_t cap, const struct fgp_code_load *l,
				  uint16_t flags);

size_t fgp_vm_layout_size(const struct fgp_vm_layout *l);
int fgp_encode_vm_layout(uint8_t *dst, size_t cap, const struct fgp_vm_layout *l);

/* -EINVAL for a frame the decoder would refuse (see CODE_FRAME above). */
int fgp_encode_code_frame(uint8_t *dst, size_t cap, const struct fgp_code_frame *f);

/*
 * CODE_LINES: -EINVAL for a table the decoder would refuse (no pcs, pcs out of order or past
 * size, a depth of 0 or over FGP_MAX_INLINE_DEPTH, a record over FGP_MAX_RECORD).
 */
size_t fgp_code_lines_size(const struct fgp_code_lines_in *l);
int fgp_encode_code_lines(uint8_t *dst, size_t cap, const struct fgp_code_lines_in *l);

/* 0 when f is a CODE_FRAME the decoder accepts, else -EBADMSG. */
int fgp_code_frame_check(const struct fgp_code_frame *f);

/* Set key k of l to v (k < FGP_VML_NKEYS); has/get read it back (get gives 0 when absent). */
void fgp_vml_set(struct fgp_vm_layout *l, enum fgp_vml_key k, uint32_t v);
int fgp_vml_has(const struct fgp_vm_layout *l, enum fgp_vml_key k);
uint32_t fgp_vml_get(const struct fgp_vm_layout *l, enum fgp_vml_key k);

/* Sizes of the fixed-size records. */
#define FGP_CODE_UNLOAD_SIZE (FGP_REC_HEADER_SIZE + FGP_FIELDS_BYTES(FGP_CODE_UNLOAD_FIELDS))
#define FGP_SNAPSHOT_SIZE (FGP_REC_HEADER_SIZE + FGP_FIELDS_BYTES(FGP_SNAPSHOT_FIELDS))
#define FGP_TABLES_SIZE (FGP_REC_HEADER_SIZE + FGP_FIELDS_BYTES(FGP_TABLES_FIELDS))
#define FGP_DROPPED_SIZE (FGP_REC_HEADER_SIZE + FGP_FIELDS_BYTES(FGP_DROPPED_FIELDS))
#define FGP_EVENTS_SIZE (FGP_REC_HEADER_SIZE + FGP_FIELDS_BYTES(FGP_EVENTS_FIELDS))
#define FGP_ALLOC_COST_SIZE (FGP_REC_HEADER_SIZE + FGP_FIELDS_BYTES(FGP_ALLOC_COST_FIELDS))

/* ---- fields of an encoded record (ours: already valid) ----------------------------------- */

/*
 * For a producer that keeps encoded records (the agent's queue and replay table): header fields
 * of the record at rec, which must hold at least FGP_REC_HEADER_SIZE bytes. No validation: use
 * fgp_next() for anything received.
 */
static inline uint16_t fgp_rec_type(const uint8_t *rec)
{
	return fgle_get16(rec);
}

static inline uint16_t fgp_rec_flags(const uint8_t *rec)
{
	return fgle_get16(rec + 2);
}

static inline uint32_t fgp_rec_size(const uint8_t *rec)
{
	return fgle_get32(rec + 4);
}

static inline void fgp_rec_add_flags(uint8_t *rec, uint16_t flags)
{
	fgle_put16(rec + 2, (uint16_t)(fgle_get16(rec + 2) | flags));
}

/*
 * The code range a CODE_LOAD, CODE_LOAD_IDS or DYNAMIC_CODE record of len bytes announces: 1 and
 * *addr, *size; for a CODE_UNLOAD: 2 and *addr; else (other types, or too short) 0.
 */
int fgp_rec_code_range(const uint8_t *rec, size_t len, uint64_t *addr, uint32_t *size);

/*
 * The load timestamp a CODE_LOAD, CODE_LOAD_IDS or CODE_LINES record of len bytes carries: 1 and
 * *ts; else (other types, or too short) 0.
 */
int fgp_rec_code_ts(const uint8_t *rec, size_t len, uint64_t *ts);

/*
 * Decode the single record rec[0..len) (no message header), as fgp_next would: 1, or -EBADMSG
 * (also when len is not the record's size). out points into rec.
 */
int fgp_decode_record(const uint8_t *rec, size_t len, struct fgp_record *out);

/* ---- decoding -------------------------------------------------------------------------- */

/* Reads the records of one message. Borrowed: buf must outlive the reader and its records. */
struct fgp_reader {
	const uint8_t *buf;
	size_t len;
	size_t off;
	int done;
};

/*
 * Check the message header of buf[0..len) and position r at the first record.
 * Returns 0, -EPROTO (too short or bad magic or header size) or -EPROTONOSUPPORT (version).
 */
int fgp_reader_init(struct fgp_reader *r, const uint8_t *buf, size_t len);

/*
 * Decode the next record into *rec. Returns 1 for a record (possibly of an unknown type, with
 * only type/flags/size set), 0 at the end of the message, -EBADMSG for an invalid record. After
 * -EBADMSG the caller may call again: the reader has skipped the bad record if its size was
 * sane, or has stopped (returns 0 from then on) if not. rec points into r's buffer.
 */
int fgp_next(struct fgp_reader *r, struct fgp_record *rec);

/* ---- walking a decoded inline table (cannot fail: fgp_next validated it) --------------- */

struct fgp_inline_iter {
	const uint8_t *p;
	uint32_t left;
	const struct fgp_str *names; /* resolved names of a CODE_LOAD_IDS, or NULL */
};

/* One pc entry; its chain values (method indexes or lines) are read with fgp_pc_at(). */
struct fgp_pc {
	uint32_t pc_off;
	uint16_t depth;
	const uint8_t *chain_raw;
};

void fgp_methods_begin(const struct fgp_code_load *c, struct fgp_inline_iter *it);
/* 1 and the next method name in *out, or 0 after the last. */
int fgp_methods_next(struct fgp_inline_iter *it, struct fgp_str *out);

void fgp_pcs_begin(const struct fgp_code_load *c, struct fgp_inline_iter *it);
/* 1 and the next pc entry in *out, or 0 after the last. */
int fgp_pcs_next(struct fgp_inline_iter *it, struct fgp_pc *out);

/*
 * The values (method indexes, or lines) all n_pcs entries of a decoded table of pcs_len bytes
 * hold together: each entry is 6 bytes and 2 per value. Counts them without walking the table.
 */
static inline size_t fgp_pcs_values(size_t pcs_len, uint32_t n_pcs)
{
	return (pcs_len - 6 * (size_t)n_pcs) / 2;
}

/*
 * Value i (0 = innermost) of a pc entry's chain; i < pc->depth. In an inline table (CODE_LOAD,
 * CODE_LOAD_IDS) it is a method index (< n_methods); in a CODE_LINES it is a line (0: no line
 * known). Both tables share one entry layout, so one reader serves both.
 */
uint16_t fgp_pc_at(const struct fgp_pc *pc, unsigned i);

/* fgp_pc_at, named for what an inline table's chain holds. */
static inline uint16_t fgp_pc_method(const struct fgp_pc *pc, unsigned i)
{
	return fgp_pc_at(pc, i);
}

/* The pc entries of a CODE_LINES, walked with fgp_pcs_next; lines read with fgp_pc_line(). */
void fgp_lines_begin(const struct fgp_code_lines *l, struct fgp_inline_iter *it);

/* fgp_pc_at, named for what a CODE_LINES chain holds. */
static inline uint16_t fgp_pc_line(const struct fgp_pc *pc, unsigned i)
{
	return fgp_pc_at(pc, i);
}

/* Method id i of a decoded CODE_LOAD_IDS (i < n_methods; never 0). */
uint32_t fgp_load_method_id(const struct fgp_code_load *c, unsigned i);

/* A name for a record type, for logs: "hello", "code-load", ..., or "unknown". */
const char *fgp_type_name(uint16_t type);

#endif
