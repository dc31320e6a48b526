// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agents

import "github.com/agentotel/agentotel/internal/agentevent"

// Ccusage is how ccusage 20.0.24 reads an agent: the fidelity check's
// oracle.
type Ccusage struct {
	// Command is the agent's ccusage command (`ccusage <Command> session`).
	Command string
	// Env are ccusage's own variables for the agent's locations, cleared in
	// a staged home so that ccusage reads only that home.
	Env []string
	// DataDirEnv, when set, is the ccusage variable that names one more
	// data directory; the check runs ccusage once more with it for each
	// extra data directory a staged corpus has (Fixtures.Stage's DataDir).
	DataDirEnv string
	// SessionKey is the name ccusage gives the session an event of logFile
	// belongs to; nil: the session id.
	SessionKey func(logFile, sessionID string) string
	// ReasoningOutsideOutput: ccusage's outputTokens leave reasoning out
	// (its totalTokens has it).
	ReasoningOutsideOutput bool
}

// Native maps an agent's own OTLP telemetry (agent_native).
type Native struct {
	// NewMapper makes the mapper of the agent's log records (nil: they
	// pass untouched).
	NewMapper func() NativeMapper
	// Normalize is the agent's span normalization (nil: spans pass
	// untouched); ok is false for a span outside its model.
	Normalize func(sp *agentevent.NativeSpan) (patch agentevent.SpanPatch, ok bool)
	// Services are service.name values (compared case-insensitively),
	// ServicePrefixes prefixes of it (lower case).
	Services        []string
	ServicePrefixes []string
	// ScopePrefixes are prefixes of the instrumentation scope name.
	ScopePrefixes []string
	// SpansByScopeOnly: the agent's spans are recognized by scope only (its
	// service.name is also the one agent_span gives the spans it builds).
	SpansByScopeOnly bool
}

// NativeMapper turns one native log record into agent events: (nil, nil)
// for a record the agent's model ignores, an error wrapping
// agentevent.ErrNativeUnmapped for one it cannot map. It keeps per-session
// state; it is called from one goroutine at a time.
type NativeMapper interface {
	Map(rec *agentevent.NativeRecord) ([]agentevent.Event, error)
}
