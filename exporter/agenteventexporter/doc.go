// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

//go:generate mdatagen metadata.yaml

// Package agenteventexporter implements the agent_event exporter: it writes
// agent events (the agent_log receiver's log records) and agent turns (the
// agent_span connector's turn-root spans) as JSON Lines files, one file per
// session, in one of the seed schemas: agtrace_v1, universal, agent_manager
// (logs) or canonical_task (traces).
package agenteventexporter
