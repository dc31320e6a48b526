// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

//go:generate mdatagen metadata.yaml

// Package agentlogreceiver implements the agent_log receiver: it discovers
// and tails coding-agent session files (Claude Code today; further agents
// plug into the same table), normalizes every record into an
// agentevent.Event and emits one OTel log record (event) per Event.
package agentlogreceiver // import "github.com/agentotel/agentotel/receiver/agentlogreceiver"
