// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package spanmodel

// CloseReason says why a unit was closed; it feeds agent.turn.status.
type CloseReason int

const (
	ClosedByNextPrompt CloseReason = iota
	ClosedByIdle
	ClosedByShutdown
	// closedByEnd: the vendor's end-of-turn marker arrived and the reader
	// had nothing more of the session.
	ClosedByEnd
)

// String names the reason in the connector's debug log.
func (r CloseReason) String() string {
	switch r {
	case ClosedByNextPrompt:
		return "next_prompt"
	case ClosedByIdle:
		return "idle"
	case ClosedByShutdown:
		return "shutdown"
	case ClosedByEnd:
		return "end_marker"
	}
	return "unknown"
}
