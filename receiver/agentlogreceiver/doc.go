// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

//go:generate mdatagen metadata.yaml

// Package agentlogreceiver implements the agent_log receiver: it discovers
// and reads the session data of the coding agents in its table (agents.go:
// appended JSONL files, files rewritten in place, OpenCode's data
// directories), normalizes every record into an agentevent.Event and emits
// one OTel log record (event) per Event. How it is split into internal
// packages is in docs/design/receiver-packages.md.
package agentlogreceiver
