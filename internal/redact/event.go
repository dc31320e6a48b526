// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package redact

import (
	"strings"

	"github.com/agentotel/agentotel/internal/agentevent"
)

// Event replaces the credentials String recognizes in what an event
// carries that can hold one and is emitted: the command line
// (agent.tool.command, from which the connector builds the turn's command
// list), the file path (a URL or a path with a query string), every other
// string fact (a pull request URL, an error text, …), and the tool call's
// arguments when content is kept (MCP arguments among them). Prompts,
// responses, reasoning and tool results (content, off by default) and the
// raw vendor record are left as they are. agent_log and agent_native both
// call it, so events from files and from an agent's own telemetry are
// redacted alike.
func Event(ev *agentevent.Event) {
	ev.FilePath = String(ev.FilePath)
	for k, v := range ev.Attributes {
		s, ok := v.(string)
		if !ok || strings.HasPrefix(k, agentevent.ContentAttrPrefix) {
			continue
		}
		if r := String(s); r != s {
			ev.Attributes[k] = r
		}
	}
	if ev.Type == agentevent.TypeToolCall && ev.Text != "" {
		ev.Text = String(ev.Text)
	}
}
