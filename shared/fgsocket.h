/* SPDX-License-Identifier: MIT */
/*
 * fgsocket.h - where agents and the collector meet by default (contract): a host directory
 * mounted into containers. The agent's socket= option and the collector's --socket override it.
 */
#ifndef FG_SOCKET_H
#define FG_SOCKET_H

#define FG_DEFAULT_SOCKET "/var/run/fgcollect/fgcollect.sock"

/*
 * What a collector reads, for agents that could send it in more than one way (the transport is
 * one-way: an agent cannot ask). A collector listening on PATH puts PATH FG_FEATURES_SUFFIX
 * beside it, one feature word per line, and removes it when it stops; an agent reads it at every
 * (re)connection. No file: an older collector, which gets only what every version reads.
 */
#define FG_FEATURES_SUFFIX ".features"
#define FG_FEATURE_INTERN "intern" /* NAME + CODE_LOAD_IDS records (fgproto.h) */

#endif
