// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agenteventexporter

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/pipeline"

	"github.com/agentotel/agentotel/internal/agents"
	// The agents whose folders are refused, and their names.
	_ "github.com/agentotel/agentotel/internal/vendors/all"
)

// Format is the schema the exporter writes.
type Format string

const (
	// FormatAgtraceV1 writes one agtrace AgentEventV1 object per event (seed 000).
	FormatAgtraceV1 Format = "agtrace_v1"
	// FormatUniversal writes the sandbox-agent UniversalEvent stream (seeds 002, 004).
	FormatUniversal Format = "universal"
	// FormatAgentManager writes the agent-manager run events (seed 001).
	FormatAgentManager Format = "agent_manager"
	// FormatCanonicalTask writes one CanonicalEvent per agent turn (seed 003).
	FormatCanonicalTask Format = "canonical_task"
)

// formats lists every format with the signal it reads.
var formats = map[Format]pipeline.Signal{
	FormatAgtraceV1:     pipeline.SignalLogs,
	FormatUniversal:     pipeline.SignalLogs,
	FormatAgentManager:  pipeline.SignalLogs,
	FormatCanonicalTask: pipeline.SignalTraces,
}

// UnmarshalText rejects unknown formats when the configuration is loaded.
func (f *Format) UnmarshalText(text []byte) error {
	v := Format(text)
	if _, ok := formats[v]; !ok {
		return fmt.Errorf("unknown format %q: use agtrace_v1, universal or agent_manager (logs) or canonical_task (traces)", text)
	}
	*f = v
	return nil
}

// signal is the signal a format reads.
func (f Format) signal() pipeline.Signal { return formats[f] }

const (
	// defaultMaxOpenFiles bounds the session files held open at once; the
	// least recently written is closed (and reopened for append when needed).
	defaultMaxOpenFiles = 64
	// defaultDirectoryPermissions are file_storage's: the owner writes, the
	// group reads, others see nothing (sessions hold prompts and paths).
	defaultDirectoryPermissions = "0750"
	// defaultSessionIdleTimeout ends a session (session.ended in the
	// universal format, status complete in agent_manager) once nothing has
	// happened in it for this long. Agents have no session end of their own,
	// and a user may come back to a session after a break; half an hour
	// keeps a lunch break inside one session.
	defaultSessionIdleTimeout = 30 * time.Minute
)

// Config is the configuration of the agent_event exporter.
type Config struct {
	// Format is the schema to write; required. agtrace_v1, universal and
	// agent_manager read logs (agent events), canonical_task reads traces
	// (the agent_span connector's turn roots).
	Format Format `mapstructure:"format"`
	// Directory receives one file per session:
	// <directory>/<agent>/<session id>.jsonl. Exactly one of Directory and
	// Stdout must be set.
	Directory string `mapstructure:"directory"`
	// CreateDirectory creates Directory (and its parents) at start when it
	// does not exist, with DirectoryPermissions; without it a missing
	// directory fails the start.
	CreateDirectory bool `mapstructure:"create_directory"`
	// DirectoryPermissions are the permissions (octal, as file_storage's)
	// of the directories the exporter creates: Directory and its per-agent
	// folders.
	DirectoryPermissions string `mapstructure:"directory_permissions"`
	// Fsync has every commit wait until the session file and its commit
	// record are on disk, so that what was acknowledged survives a power
	// cut too, not only a crash of the collector.
	Fsync bool `mapstructure:"fsync"`
	// Stdout writes every line to the collector's standard output instead.
	Stdout bool `mapstructure:"stdout"`
	// MaxOpenFiles bounds the session files held open at once.
	MaxOpenFiles int `mapstructure:"max_open_files"`
	// IncludeContent writes the content events carry (prompts, responses,
	// reasoning, tool arguments and output). Off by default, like every
	// agentotel component; the receiver (and, for canonical_task, the
	// agent_span connector) must keep content as well.
	IncludeContent bool `mapstructure:"include_content"`
	// IncludeRaw writes the agent's original record (agtrace_v1 raw,
	// universal raw) when the event carries it (agent_log include_raw).
	IncludeRaw bool `mapstructure:"include_raw"`
	// SessionIdleTimeout ends a session once its newest event is this old
	// and nothing has arrived for it for as long (wall clock).
	SessionIdleTimeout time.Duration `mapstructure:"session_idle_timeout"`

	// prevent unkeyed literal initialization
	_ struct{}
}

var _ component.Config = (*Config)(nil)

// Validate checks every setting and reports all problems at once.
func (c *Config) Validate() error {
	var errs []error
	if c.Format == "" {
		errs = append(errs, errors.New("`format` must be set: agtrace_v1, universal or agent_manager (logs) or canonical_task (traces)"))
	}
	switch {
	case c.Directory == "" && !c.Stdout:
		errs = append(errs, errors.New("one of `directory` and `stdout` must be set"))
	case c.Directory != "" && c.Stdout:
		errs = append(errs, errors.New("`directory` and `stdout` cannot both be set"))
	case c.Directory != "":
		if err := checkNotAgentFolder(c.Directory); err != nil {
			errs = append(errs, err)
		}
	}
	if _, err := parsePermissions(c.DirectoryPermissions); err != nil {
		errs = append(errs, err)
	}
	if c.MaxOpenFiles < 1 {
		errs = append(errs, fmt.Errorf("`max_open_files` must be at least 1, got %d", c.MaxOpenFiles))
	}
	if c.SessionIdleTimeout <= 0 {
		errs = append(errs, fmt.Errorf("`session_idle_timeout` must be positive, got %s", c.SessionIdleTimeout))
	}
	return errors.Join(errs...)
}

// parsePermissions reads directory_permissions: octal permission bits
// (unset: the default).
func parsePermissions(s string) (os.FileMode, error) {
	if s == "" {
		s = defaultDirectoryPermissions
	}
	p, err := strconv.ParseUint(s, 8, 32)
	if err != nil {
		return 0, fmt.Errorf("`directory_permissions` %q must be octal permission bits, e.g. \"0750\"", s)
	}
	if os.FileMode(p)&^os.ModePerm != 0 {
		return 0, fmt.Errorf("`directory_permissions` %q has bits other than permissions (at most 0777)", s)
	}
	return os.FileMode(p), nil
}

// directoryPermissions is directory_permissions once validated.
func (c *Config) directoryPermissions() os.FileMode {
	p, err := parsePermissions(c.DirectoryPermissions)
	if err != nil {
		return 0o750
	}
	return p
}

// ensureDirectory creates dir when it is missing and create is set; an
// existing dir is left as it is.
func ensureDirectory(dir string, create bool, perm os.FileMode) error {
	info, err := os.Stat(dir)
	switch {
	case err == nil && !info.IsDir():
		return fmt.Errorf("`directory` %q is not a directory", dir)
	case err == nil:
		return nil
	case !errors.Is(err, os.ErrNotExist):
		return fmt.Errorf("`directory`: %w", err)
	case !create:
		return fmt.Errorf("`directory` %q does not exist: create it, or set `create_directory: true`", dir)
	}
	if err := os.MkdirAll(dir, perm); err != nil {
		return fmt.Errorf("`directory`: %w", err)
	}
	return nil
}

// expandHome resolves a leading ~ to the home directory.
func expandHome(p string) (string, error) {
	if p != "~" && !strings.HasPrefix(p, "~/") {
		return p, nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("`directory` %q: %w", p, err)
	}
	return filepath.Join(home, strings.TrimPrefix(p, "~")), nil
}

// agentFolders are the folders the registered agents keep their own files
// in, by default and wherever the environment relocates them. Writing there
// would put our files among the agent's (and the agent_log receiver would
// read them back as transcripts).
func agentFolders() []string {
	env := agents.ProcessEnv()
	var dirs []string
	for _, d := range agents.All() {
		dirs = append(dirs, d.KnownFolders(env)...)
	}
	return dirs
}

func checkNotAgentFolder(dir string) error {
	p, err := expandHome(dir)
	if err != nil {
		return err
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		return fmt.Errorf("`directory` %q: %w", dir, err)
	}
	for _, agentDir := range agentFolders() {
		a, err := filepath.Abs(agentDir)
		if err != nil {
			continue
		}
		if rel, err := filepath.Rel(a, abs); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return fmt.Errorf("`directory` %q is inside %s, an agent's own folder: nothing is written there", dir, a)
		}
	}
	return nil
}
