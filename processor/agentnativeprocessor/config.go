// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agentnativeprocessor

import (
	"errors"
	"fmt"

	"go.opentelemetry.io/collector/component"
)

// SessionOwner says which source keeps a session that both the agent's own
// telemetry and its session files speak for.
type SessionOwner string

const (
	// OwnerFirst: the first source seen for a session owns it for good.
	OwnerFirst SessionOwner = "first"
	// OwnerFiles: the session files own a session from its first file
	// event on.
	OwnerFiles SessionOwner = "files"
)

// UnmarshalText rejects an unknown value when the configuration is loaded.
func (o *SessionOwner) UnmarshalText(b []byte) error {
	switch v := SessionOwner(b); v {
	case OwnerFirst, OwnerFiles:
		*o = v
		return nil
	}
	return fmt.Errorf("unknown session owner %q: want %q or %q", string(b), OwnerFirst, OwnerFiles)
}

// defaultMaxSessions bounds the sessions whose owner is kept in memory, as
// the agent_span connector's max_cached_sessions bounds its sessions.
const defaultMaxSessions = 256

// Config is the configuration of the agent_native processor.
type Config struct {
	// IncludeContent keeps prompts, responses and tool arguments/results:
	// the events' Text and agent.content.* attributes, and the content
	// attributes of native spans. Off by default, as in agent_log.
	IncludeContent bool `mapstructure:"include_content"`
	// Storage is the id of a storage extension (e.g. file_storage) that
	// keeps the session owner table across restarts. Unset: the table is
	// in memory only.
	Storage *component.ID `mapstructure:"storage"`
	// SessionOwner is the one-session-one-source rule: first or files.
	SessionOwner SessionOwner `mapstructure:"session_owner"`
	// MaxSessions is how many sessions' owners are kept in memory; with
	// storage the others are read back when needed, without they are
	// forgotten.
	MaxSessions int `mapstructure:"max_sessions"`
	// Redact replaces well-known credential shapes (internal/redact) in
	// what leaves, exactly as agent_log's redact does for file events: the
	// events' file paths, every string fact and tool call arguments, and
	// every string attribute of native spans but content. On by default.
	Redact bool `mapstructure:"redact"`

	// prevent unkeyed literal initialization
	_ struct{}
}

var _ component.Config = (*Config)(nil)

// Validate checks every setting and reports all problems at once.
func (c *Config) Validate() error {
	var errs []error
	switch c.SessionOwner {
	case OwnerFirst, OwnerFiles:
	default:
		errs = append(errs, fmt.Errorf("`session_owner` must be %q or %q, got %q", OwnerFirst, OwnerFiles, c.SessionOwner))
	}
	if c.MaxSessions <= 0 {
		errs = append(errs, fmt.Errorf("`max_sessions` must be a positive number of sessions, got %d", c.MaxSessions))
	}
	return errors.Join(errs...)
}
