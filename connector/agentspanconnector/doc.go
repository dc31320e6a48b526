// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

//go:generate mdatagen metadata.yaml

// Package agentspanconnector implements the agent_span connector: it reads
// agent events (log records written by agentevent.Encode) and turns every
// user turn of a coding-agent session into a trace: an invoke_agent root,
// chat spans for model calls, execute_tool spans for tool calls, and
// subagents nested under the tool call that spawned them.
package agentspanconnector
