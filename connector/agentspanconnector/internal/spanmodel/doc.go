// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

// Package spanmodel is the agent_span connector's pure span model: a
// complete group of agent events (a turn with the subagent runs it
// spawned) in, spans out, with ids hashed from the session, thread and
// event ids. No clock, no I/O, no state: the same group always maps to the
// same spans.
package spanmodel
