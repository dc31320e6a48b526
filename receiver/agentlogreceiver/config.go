// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agentlogreceiver

import (
	"fmt"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/stanza/fileconsumer/matcher"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/stanza/operator/helper"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/config/configretry"
)

// StartAt says where reading starts in a file the receiver has no read
// position for.
type StartAt string

const (
	// StartAtBeginning reads a file's whole history (the default: agents
	// delete old transcripts, so history matters).
	StartAtBeginning StartAt = "beginning"
	// StartAtEnd reads only what is appended after the receiver starts.
	StartAtEnd StartAt = "end"
)

// UnmarshalText rejects unknown values when the configuration is loaded.
func (s *StartAt) UnmarshalText(text []byte) error {
	v := StartAt(text)
	if err := v.validate(); err != nil {
		return err
	}
	*s = v
	return nil
}

func (s StartAt) validate() error {
	switch s {
	case StartAtBeginning, StartAtEnd:
		return nil
	}
	return fmt.Errorf("`start_at`: unknown value %q, want %q or %q", string(s), StartAtBeginning, StartAtEnd)
}

// Config is the configuration of the agent_log receiver. The tailing settings
// apply to every agent; which files are read is configured per agent.
type Config struct {
	// Storage is the storage extension that keeps read positions and parser
	// state across restarts. Unset: positions live in memory only and a
	// restart reads according to start_at again.
	Storage *component.ID `mapstructure:"storage"`

	// StartAt is where reading starts in a file without a stored position.
	StartAt StartAt `mapstructure:"start_at"`
	// PollInterval is how often the include patterns are matched and files
	// are checked for new lines.
	PollInterval time.Duration `mapstructure:"poll_interval"`
	// Watch wakes the reading of an agent's files when the system reports
	// a change in their directories (inotify, FSEvents/kqueue,
	// ReadDirectoryChangesW), so that a line is read as it is written rather
	// than at the next poll. Polling goes on in any case. false: poll only.
	Watch bool `mapstructure:"watch"`
	// MaxLogSize is the longest line read; a line of this size or more is
	// reported as a bad record (reason line_too_long) and skipped.
	MaxLogSize helper.ByteSize `mapstructure:"max_log_size"`
	// MaxConcurrentFiles caps the files open at once (per agent).
	MaxConcurrentFiles int `mapstructure:"max_concurrent_files"`
	// FingerprintSize is how many leading bytes, with the first line,
	// identify a JSONL file moved or copied to another path.
	FingerprintSize helper.ByteSize `mapstructure:"fingerprint_size"`

	// IncludeContent keeps prompts, responses, reasoning and tool
	// arguments/results (Event.Text) in the emitted records.
	IncludeContent bool `mapstructure:"include_content"`
	// IncludeRaw keeps the vendor record (Event.Raw, attribute agent.raw).
	IncludeRaw bool `mapstructure:"include_raw"`
	// EmitUnparsed also emits the records that could not be mapped, as
	// events of type log with agent.unparsed.reason (they are always counted
	// and logged). Formats such as the universal schema's agent.unparsed
	// want them; everything else ignores them.
	EmitUnparsed bool `mapstructure:"emit_unparsed"`
	// Redact replaces well-known credential shapes (authorization headers,
	// secret-named assignments and flags, passwords in URLs, common token
	// prefixes; see internal/redact) in what can carry them before the
	// events leave the receiver: commands, file paths and URLs, every other
	// vendor fact, and, with include_content, tool call arguments (MCP
	// arguments included). On by default.
	Redact bool `mapstructure:"redact"`

	// RetryOnFailure is how a refusal by the next consumer is retried: the
	// read position is held (the refused records are not read past) and the
	// delivery tried again with exponential back-off. A permanent error
	// (consumererror.IsPermanent) drops the records at once.
	RetryOnFailure configretry.BackOffConfig `mapstructure:"retry_on_failure"`

	// MaxTrackedSessions caps the sessions each agent's reader keeps in
	// memory; the least recently active is evicted (its state stays in the
	// storage) and reloaded when it is read again.
	MaxTrackedSessions int `mapstructure:"max_tracked_sessions"`
	// ForgetAfter: a session whose files (or rows) are gone is forgotten —
	// its memory and its stored state deleted — once it has been idle this
	// long.
	ForgetAfter time.Duration `mapstructure:"forget_after"`

	// ClaudeCode configures Claude Code's session transcripts.
	ClaudeCode AgentConfig `mapstructure:"claude_code"`
	// OpenCode configures OpenCode's data directories (JSON storage tree of
	// ≤1.1.x). Its include patterns match data directories, not files.
	OpenCode AgentConfig `mapstructure:"opencode"`
	// Codex configures Codex CLI's rollout files.
	Codex AgentConfig `mapstructure:"codex"`
	// Pi configures the Pi coding agent's session files.
	Pi AgentConfig `mapstructure:"pi"`
	// Gemini configures Gemini CLI's chat files and logs.json (rewritten in
	// place: re-read whole on change, emitted once by message).
	Gemini AgentConfig `mapstructure:"gemini"`
	// CopilotCLI configures GitHub Copilot CLI's session files: events.jsonl
	// (folder per session) and flat <id>.jsonl files are tailed; patterns of
	// *.json files (the older history-session-state/) are read as files
	// rewritten in place.
	CopilotCLI AgentConfig `mapstructure:"copilot_cli"`
	// Amp configures Amp's thread files (rewritten in place: re-read whole
	// on change, emitted once by message).
	Amp AgentConfig `mapstructure:"amp"`
	// Kilo configures Kilo CLI's data directories (OpenCode's layout, its
	// database kilo.db). Its include patterns match data directories, not
	// files.
	Kilo AgentConfig `mapstructure:"kilo"`
	// OpenClaw configures OpenClaw's transcripts (Pi's format, appended),
	// with the ones a reset or a deletion archived.
	OpenClaw AgentConfig `mapstructure:"openclaw"`

	// prevent unkeyed literal initialization
	_ struct{}
}

// AgentConfig selects one agent's session files.
type AgentConfig struct {
	// Enabled turns reading this agent's files on or off.
	Enabled bool `mapstructure:"enabled"`
	// Include lists glob patterns (doublestar `**` allowed) of the files to
	// read. Empty: the agent's standard location under the user's home,
	// resolved at Start. A leading `~` stands for the home directory.
	Include []string `mapstructure:"include"`
	// Exclude lists glob patterns of files not to read.
	Exclude []string `mapstructure:"exclude"`
	// ExcludeOlderThan skips files not modified within this duration (0: off).
	ExcludeOlderThan time.Duration `mapstructure:"exclude_older_than"`

	// prevent unkeyed literal initialization
	_ struct{}
}

func (ac *AgentConfig) validate(key string) []error {
	var errs []error
	// matcher.New checks glob syntax; it needs one include pattern to accept
	// an exclude list, hence the placeholder.
	if len(ac.Include) > 0 {
		if _, err := matcher.New(matcher.Criteria{Include: ac.Include}); err != nil {
			errs = append(errs, fmt.Errorf("`%s.include`: %w", key, err))
		}
	}
	if len(ac.Exclude) > 0 {
		if _, err := matcher.New(matcher.Criteria{Include: []string{"placeholder"}, Exclude: ac.Exclude}); err != nil {
			errs = append(errs, fmt.Errorf("`%s.exclude`: %w", key, err))
		}
	}
	if ac.ExcludeOlderThan < 0 {
		errs = append(errs, fmt.Errorf("`%s.exclude_older_than` must not be negative, got %s", key, ac.ExcludeOlderThan))
	}
	return errs
}
