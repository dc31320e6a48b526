// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agentlogreceiver

// agents is every agent the receiver reads, each declared in its own file
// (agent_<name>.go), in the order their sources start and their settings
// are validated.
var agents = []agent{
	claudeCodeAgent,
	opencodeAgent,
	codexAgent,
	piAgent,
	geminiAgent,
	copilotAgent,
	ampAgent,
}
