/* SPDX-License-Identifier: MIT */
/*
 * fgsocket.h - where agents and the collector meet by default (contract): a host directory
 * mounted into containers. The agent's socket= option and the collector's --socket override it.
 */
#ifndef FG_SOCKET_H
#define FG_SOCKET_H

#define FG_DEFAULT_SOCKET "/var/run/fgcollect/fgcollect.sock"

#endif
