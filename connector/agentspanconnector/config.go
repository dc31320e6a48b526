// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agentspanconnector

import (
	"errors"
	"fmt"
	"time"

	"go.opentelemetry.io/collector/component"
)

const (
	// defaultTurnIdleTimeout closes a turn whose last event is this old. Five
	// minutes is longer than almost every model call or tool run, and short
	// enough that a finished live turn shows up in the backend soon.
	defaultTurnIdleTimeout = 5 * time.Minute
	// defaultMaxContentLength bounds each content attribute (bytes).
	defaultMaxContentLength = 4096
	// defaultMaxOpenToolDuration is how long a turn with a tool call still
	// running waits: long builds, test suites and subagents take minutes to
	// hours; a call still open after four is taken as lost.
	defaultMaxOpenToolDuration = 4 * time.Hour
	// defaultMaxCachedSessions bounds the finished sessions kept in memory.
	// A session's marker is a few KB; past this many, the least recently
	// used are read back from storage when needed.
	defaultMaxCachedSessions = 256
)

// Config is the configuration of the agent_span connector.
type Config struct {
	// TurnIdleTimeout closes a turn once its last event's own timestamp is
	// older than this, relative to now. History therefore closes at once;
	// live turns wait. It also bounds how long (in wall-clock time since its
	// last event arrived) a subagent's events wait for the tool call that
	// spawned them before they are emitted as a trace of their own.
	TurnIdleTimeout time.Duration `mapstructure:"turn_idle_timeout"`
	// MaxOpenToolDuration replaces TurnIdleTimeout for a turn with a tool
	// call that has no result yet (a long build, a subagent): such a turn
	// is idle-closed only after this long. Must be at least TurnIdleTimeout.
	MaxOpenToolDuration time.Duration `mapstructure:"max_open_tool_duration"`
	// MaxCachedSessions is how many sessions the connector keeps in memory
	// beyond those with open turns: the least recently used of the others
	// are dropped from memory (with storage they are read back when an
	// event of theirs comes; without, they are forgotten).
	MaxCachedSessions int `mapstructure:"max_cached_sessions"`
	// Storage is the id of a storage extension (e.g. file_storage). When set,
	// open turns and the link and emitted-span maps are saved there at
	// shutdown and restored at start; when unset, shutdown flushes open turns
	// with agent.turn.status in_progress.
	Storage *component.ID `mapstructure:"storage"`
	// IncludeContent adds prompts, model output and tool arguments/results to
	// the spans (gen_ai.input.messages, gen_ai.output.messages,
	// gen_ai.tool.call.arguments, gen_ai.tool.call.result). Off by default.
	IncludeContent bool `mapstructure:"include_content"`
	// MaxContentLength is the most bytes of content one attribute carries
	// when IncludeContent is on; longer text is cut at a UTF-8 boundary.
	MaxContentLength int `mapstructure:"max_content_length"`

	// prevent unkeyed literal initialization
	_ struct{}
}

var _ component.Config = (*Config)(nil)

// Validate checks every setting and reports all problems at once.
func (c *Config) Validate() error {
	var errs []error
	if c.TurnIdleTimeout <= 0 {
		errs = append(errs, fmt.Errorf("`turn_idle_timeout` must be positive, got %s", c.TurnIdleTimeout))
	}
	if c.MaxOpenToolDuration < c.TurnIdleTimeout {
		errs = append(errs, fmt.Errorf("`max_open_tool_duration` must be at least `turn_idle_timeout` (%s), got %s", c.TurnIdleTimeout, c.MaxOpenToolDuration))
	}
	if c.MaxCachedSessions <= 0 {
		errs = append(errs, fmt.Errorf("`max_cached_sessions` must be a positive number of sessions, got %d", c.MaxCachedSessions))
	}
	if c.MaxContentLength <= 0 {
		errs = append(errs, fmt.Errorf("`max_content_length` must be a positive number of bytes, got %d", c.MaxContentLength))
	}
	return errors.Join(errs...)
}
