// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

//go:generate mdatagen metadata.yaml

// Package agentmetricsconnector implements the agent_metrics connector: from
// agent events (the agent_log receiver's log records) it keeps the GenAI
// semantic-convention client metrics gen_ai.client.token.usage and
// gen_ai.client.operation.duration, and a cost counter, per agent, provider
// and model, and emits them as cumulative metrics.
package agentmetricsconnector
